// The OpenCL platform's HessianForce kernels: the common implementation on an OpenCLContext.
// Called by the loader plugin (lib/plugins/libHessFitPluginOpenCL.so) once OpenMM has registered
// the OpenCL platform.
#include "CommonHessianKernelFactory.h"
#include "openmm/opencl/OpenCLContext.h"
#include "openmm/opencl/OpenCLPlatform.h"

using namespace HessFit;
using namespace OpenMM;

extern "C" __attribute__((visibility("default"))) void hessfitRegisterOpenCLKernels() {
    Platform::getPlatformByName("OpenCL").registerKernelFactory(
        CalcHessianForceKernel::Name(), new CommonHessianKernelFactory<OpenCLPlatform::PlatformData>());
}
