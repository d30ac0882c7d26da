#include "HessianKernels.h"
#include "ReferenceHessianKernels.h"
#include "internal/windowsExportHessFit.h"
#include "openmm/KernelFactory.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/internal/ContextImpl.h"

using namespace HessFit;
using namespace OpenMM;

namespace {

/** Creates the HessianForce kernels of the Reference platform. */
class ReferenceHessianKernelFactory : public KernelFactory {
public:
    KernelImpl* createKernelImpl(std::string name, const Platform& platform, ContextImpl&) const override {
        if (name == CalcHessianForceKernel::Name())
            return new ReferenceCalcHessianForceKernel(name, platform);
        throw OpenMMException("hessfit Reference plugin: no kernel named '" + name + "'");
    }
};

} // namespace

// Entry points called by Platform::loadPluginsFromDirectory.
extern "C" OPENMM_EXPORT_HESSFIT void registerPlatforms() {
}

/*
 * The Reference kernels serve the Reference and the CPU platform. OpenMM's CPU platform keeps a
 * Context's positions and forces in the Reference platform's data (CpuPlatform::contextCreated
 * calls ReferencePlatform::contextCreated and holds its own data apart), which is how OpenMM runs
 * its own Reference kernels for the forces the CPU platform does not accelerate. The CPU platform
 * must be registered (its plugin, libOpenMMCPU, loaded) before this function runs: load OpenMM's
 * plugin directory before hessfit's.
 */
extern "C" OPENMM_EXPORT_HESSFIT void registerKernelFactories() {
    for (int i = 0; i < Platform::getNumPlatforms(); i++) {
        Platform& platform = Platform::getPlatform(i);
        if (platform.getName() == "Reference" || platform.getName() == "CPU")
            platform.registerKernelFactory(CalcHessianForceKernel::Name(), new ReferenceHessianKernelFactory());
    }
}

// Lets a program that links this library directly register the kernels without a plugin directory.
extern "C" OPENMM_EXPORT_HESSFIT void registerHessFitReferenceKernelFactories() {
    registerKernelFactories();
}
