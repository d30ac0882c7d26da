// The CUDA platform's HessianForce kernels: the common implementation on a CudaContext. Called by
// the loader plugin (lib/plugins/libHessFitPluginCUDA.so) once OpenMM has registered the CUDA
// platform, which means libOpenMMCUDA and the CUDA driver loaded.
#include "CommonHessianKernelFactory.h"
#include "openmm/cuda/CudaContext.h"
#include "openmm/cuda/CudaPlatform.h"

using namespace HessFit;
using namespace OpenMM;

extern "C" __attribute__((visibility("default"))) void hessfitRegisterCUDAKernels() {
    Platform::getPlatformByName("CUDA").registerKernelFactory(
        CalcHessianForceKernel::Name(), new CommonHessianKernelFactory<CudaPlatform::PlatformData>());
}
