/*
 * The device a rank takes (fitting/parallel/hf_devices.h): local ranks onto a node's devices, round
 * robin, and the device counts through the drivers (OpenCL: PoCL's devices here).
 */
#include "hf_devices.h"
#include "test_util.h"

#include <stdio.h>

int main(void)
{
    /* local rank r of a node with n devices takes device r mod n */
    static const struct {
        int local_rank, n_devices, device;
    } cases[] = {{0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {0, 4, 0}, {3, 4, 3}, {4, 4, 0}, {5, 4, 1},
                 {7, 2, 1}, {6, 3, 0}, {0, 0, -1}, {1, 0, -1}, {-1, 2, -1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int d = hf_device_for_local_rank(cases[i].local_rank, cases[i].n_devices);
        CHECK(d == cases[i].device, "local rank %d of %d devices: device %d, expected %d", cases[i].local_rank,
              cases[i].n_devices, d, cases[i].device);
    }
    /* four ranks per node on two devices: two ranks each */
    int per_device[2] = {0, 0};
    for (int r = 0; r < 4; r++)
        per_device[hf_device_for_local_rank(r, 2)]++;
    CHECK(per_device[0] == 2 && per_device[1] == 2, "4 ranks on 2 devices: %d and %d", per_device[0], per_device[1]);

    CHECK(hf_platform_has_devices("CUDA") && hf_platform_has_devices("OpenCL") && !hf_platform_has_devices("Reference") &&
              !hf_platform_has_devices("CPU") && !hf_platform_has_devices(NULL),
          "which platforms have devices");
    int n = -1;
    HF_CALL(hf_device_count("Reference", &n));
    CHECK(n == 0, "Reference: %d devices", n);
#ifdef HESSFIT_TEST_HAVE_OPENCL
    hessfit_status st = hf_device_count("OpenCL", &n);
    CHECK(st == HESSFIT_SUCCESS && n >= 1, "OpenCL: %d devices (%s)", n, st == HESSFIT_SUCCESS ? "" : hessfit_last_error());
    printf("OpenCL: %d device%s\n", n, n == 1 ? "" : "s");
#endif
    printf("hf_device_for_local_rank: %zu cases\n", sizeof cases / sizeof cases[0]);
    return 0;
}
