#ifndef HF_DEVICES_H_
#define HF_DEVICES_H_
/*
 * Which device of a GPU platform a process uses (docs/mpi.md, "Devices"): one rank per device, the
 * ranks of a node spread over the node's devices by their local rank. OpenMM has no call that
 * counts a platform's devices, so they are counted through the drivers OpenMM's CUDA and OpenCL
 * platforms use (loaded with dlopen: nothing to link, and a build without them still runs).
 */
#include "hessfit_status.h"

/** 1 for the platforms whose Contexts take a DeviceIndex (CUDA, OpenCL), 0 otherwise (Reference, CPU). */
int hf_platform_has_devices(const char *platform);

/**
 * The devices OpenMM's platform can take as DeviceIndex 0 .. *n - 1: CUDA the driver's visible
 * devices (cuDeviceGetCount; CUDA_VISIBLE_DEVICES applies), OpenCL the devices of the OpenCL
 * platform (an error with several OpenCL platforms, where OpenMM needs OpenCLPlatformIndex too);
 * 0 for a platform without devices. An error names the driver library that is missing or failed.
 */
hessfit_status hf_device_count(const char *platform, int *n);

/** The device of the rank with index local_rank among its node's ranks, on a node with n_devices
 * devices: local_rank modulo n_devices (round robin; ranks share a device when there are more
 * ranks than devices). -1 when n_devices < 1 or local_rank < 0. */
int hf_device_for_local_rank(int local_rank, int n_devices);

#endif
