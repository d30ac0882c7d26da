// The CUDA platform's HessianForce kernels: the common implementation on a CudaContext. Called by
// the loader plugin (lib/plugins/libHessFitPluginCUDA.so) once OpenMM has registered the CUDA
// platform, which means libOpenMMCUDA and the CUDA driver loaded. The objective's frequency matrices
// go to cuSOLVER (CudaBatchedEigensolver.h).
#include "CommonHessianKernelFactory.h"
#include "CudaBatchedEigensolver.h"
#include "openmm/cuda/CudaContext.h"
#include "openmm/cuda/CudaPlatform.h"

using namespace HessFit;
using namespace OpenMM;

extern "C" __attribute__((visibility("default"))) void hessfitRegisterCUDAKernels() {
    Platform::getPlatformByName("CUDA").registerKernelFactory(
        CalcHessianForceKernel::Name(), new CommonHessianKernelFactory<CudaPlatform::PlatformData>(makeCudaBatchedEigensolver));
}
