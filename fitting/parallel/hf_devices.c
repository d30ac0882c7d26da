/* hf_devices.h: device counts through the CUDA driver and the OpenCL ICD loader, opened at run time. */
#define _POSIX_C_SOURCE 200809L
#include "hf_devices.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

int hf_platform_has_devices(const char *platform)
{
    return platform != NULL && (strcmp(platform, "CUDA") == 0 || strcmp(platform, "OpenCL") == 0);
}

int hf_device_for_local_rank(int local_rank, int n_devices)
{
    return n_devices >= 1 && local_rank >= 0 ? local_rank % n_devices : -1;
}

/* The symbol name of library handle h into *fn (a function pointer), NULL when absent. */
#define LOOKUP(h, fn, name) (*(void **)(&(fn)) = dlsym((h), (name)))

/* CUDA driver API: CUresult cuInit(unsigned), cuDeviceGetCount(int *); 0 is CUDA_SUCCESS. */
static hessfit_status cuda_count(int *n)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(unsigned) = NULL, (*count)(int *) = NULL, rc = -1;
    if (h == NULL)
        return hessfit_error(HESSFIT_ERROR_OPENMM, "CUDA: cannot count the devices: %s", dlerror());
    if (LOOKUP(h, init, "cuInit") == NULL || LOOKUP(h, count, "cuDeviceGetCount") == NULL ||
        (rc = init(0)) != 0 || (rc = count(n)) != 0) {
        dlclose(h);
        return hessfit_error(HESSFIT_ERROR_OPENMM, "CUDA: cannot count the devices: the driver (libcuda.so.1) %s%d",
                             rc == -1 ? "lacks cuInit or cuDeviceGetCount" : "returned CUresult ", rc == -1 ? 0 : rc);
    }
    dlclose(h);
    return HESSFIT_SUCCESS;
}

/* OpenCL 1.0: clGetPlatformIDs, clGetDeviceIDs(CL_DEVICE_TYPE_ALL), as OpenMM's OpenCL platform lists
 * them; -1001 (CL_PLATFORM_NOT_FOUND_KHR) is no platform at all. */
static hessfit_status opencl_count(int *n)
{
    typedef struct opaque *id;
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    int32_t (*platforms)(uint32_t, id *, uint32_t *) = NULL;
    int32_t (*devices)(id, uint64_t, uint32_t, id *, uint32_t *) = NULL;
    uint32_t n_platforms = 0, n_devices = 0;
    id platform = NULL;
    int32_t rc = 0;
    if (h == NULL)
        return hessfit_error(HESSFIT_ERROR_OPENMM, "OpenCL: cannot count the devices: %s", dlerror());
    if (LOOKUP(h, platforms, "clGetPlatformIDs") == NULL || LOOKUP(h, devices, "clGetDeviceIDs") == NULL) {
        dlclose(h);
        return hessfit_error(HESSFIT_ERROR_OPENMM, "OpenCL: cannot count the devices: libOpenCL.so.1 lacks clGetDeviceIDs");
    }
    rc = platforms(0, NULL, &n_platforms);
    if (rc == 0 && n_platforms == 1 && (rc = platforms(1, &platform, NULL)) == 0)
        rc = devices(platform, 0xFFFFFFFFu /* CL_DEVICE_TYPE_ALL */, 0, NULL, &n_devices);
    dlclose(h);
    if (rc == -1001 || (rc == 0 && n_platforms == 0))
        return hessfit_error(HESSFIT_ERROR_OPENMM, "OpenCL: no OpenCL platform (no ICD installed)");
    if (rc == 0 && n_platforms > 1)
        return hessfit_error(HESSFIT_ERROR_OPENMM,
                             "OpenCL: %u OpenCL platforms: a device index needs OpenMM's OpenCLPlatformIndex as well, "
                             "which hessfit fit does not set (use device = auto with one OpenCL platform, or CUDA)",
                             n_platforms);
    if (rc != 0)
        return hessfit_error(HESSFIT_ERROR_OPENMM, "OpenCL: cannot count the devices: error %d", (int)rc);
    *n = (int)n_devices;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_device_count(const char *platform, int *n)
{
    *n = 0;
    if (!hf_platform_has_devices(platform))
        return HESSFIT_SUCCESS;
    return strcmp(platform, "CUDA") == 0 ? cuda_count(n) : opencl_count(n);
}
