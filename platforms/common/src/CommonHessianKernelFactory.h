#ifndef HESSFIT_COMMON_HESSIAN_KERNEL_FACTORY_H_
#define HESSFIT_COMMON_HESSIAN_KERNEL_FACTORY_H_
/*
 * The kernel factory of a GPU platform: the one platform-specific step is finding the platform's
 * ComputeContext in the ContextImpl (PlatformData: OpenCLPlatform::PlatformData,
 * CudaPlatform::PlatformData, each holding a vector `contexts` of its context type), and the
 * platform's library eigensolver where it has one (CUDA: cuSOLVER).
 */
#include "CommonHessianKernels.h"
#include "HessianForceException.h"
#include "openmm/KernelFactory.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include <sstream>

namespace HessFit {

template <class PlatformData>
class CommonHessianKernelFactory : public OpenMM::KernelFactory {
public:
    /** makeEigensolver: the platform's library eigensolver for the objective (null: the Jacobi kernel). */
    explicit CommonHessianKernelFactory(CommonBatchedEigensolverFactory makeEigensolver = nullptr)
        : makeEigensolver(makeEigensolver) {}
    OpenMM::KernelImpl* createKernelImpl(std::string name, const OpenMM::Platform& platform,
                                         OpenMM::ContextImpl& context) const override {
        if (name != CalcHessianForceKernel::Name())
            throw OpenMM::OpenMMException("hessfit " + platform.getName() + " plugin: no kernel named '" + name + "'");
        PlatformData& data = *static_cast<PlatformData*>(context.getPlatformData());
        if (data.contexts.size() != 1) {
            std::ostringstream msg;
            msg << "HessianForce: the " << platform.getName() << " platform runs it on one device per Context, "
                << "this Context uses " << data.contexts.size() << " (set the DeviceIndex property to one device)";
            throw HessianForceException(HessianForceException::Unsupported, msg.str());
        }
        return new CommonCalcHessianForceKernel(name, platform, *data.contexts[0], makeEigensolver);
    }
private:
    CommonBatchedEigensolverFactory makeEigensolver;
};

} // namespace HessFit

#endif
