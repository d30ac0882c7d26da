/*
 * The plugin OpenMM loads from lib/plugins for one GPU platform (compiled once per platform with
 * HESSFIT_LOADER_PLATFORM, HESSFIT_LOADER_LIBRARY and HESSFIT_LOADER_ENTRY). It has no dependency
 * on the GPU runtime, so Platform::loadPluginsFromDirectory never reports it as a failure on a
 * machine without a CUDA driver or OpenCL loader. When OpenMM has registered the platform (its own
 * plugin loaded, so the runtime exists) it loads the kernel library, ../HESSFIT_LOADER_LIBRARY
 * relative to this file, and calls its registration function.
 *
 * OpenMM calls registerKernelFactories without catching exceptions, so nothing may escape it: if
 * the kernel library cannot be loaded, a factory is registered instead whose every kernel creation
 * throws an OpenMMException that says why, and Context creation reports it.
 */
#include "HessianKernels.h"
#include "internal/windowsExportHessFit.h"
#include "openmm/KernelFactory.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include <dlfcn.h>
#include <string>

using namespace OpenMM;

namespace {

/** Stands in for the kernels when their library could not be loaded. */
class UnavailableKernelFactory : public KernelFactory {
public:
    explicit UnavailableKernelFactory(const std::string& why) : why(why) {}
    KernelImpl* createKernelImpl(std::string, const Platform&, ContextImpl&) const override {
        throw OpenMMException(why);
    }
private:
    std::string why;
};

Platform* findPlatform(const std::string& name) {
    for (int i = 0; i < Platform::getNumPlatforms(); i++)
        if (Platform::getPlatform(i).getName() == name)
            return &Platform::getPlatform(i);
    return nullptr;
}

/** The kernel library's path: beside lib/plugins, in lib/ (the build and the install layout). */
std::string kernelLibraryPath() {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&findPlatform), &info) == 0 || info.dli_fname == nullptr)
        return HESSFIT_LOADER_LIBRARY;
    std::string self(info.dli_fname);
    size_t slash = self.find_last_of('/');
    std::string dir = slash == std::string::npos ? std::string(".") : self.substr(0, slash);
    return dir + "/../" + HESSFIT_LOADER_LIBRARY;
}

} // namespace

extern "C" OPENMM_EXPORT_HESSFIT void registerPlatforms() {
}

extern "C" OPENMM_EXPORT_HESSFIT void registerKernelFactories() {
    Platform* platform = findPlatform(HESSFIT_LOADER_PLATFORM);
    if (platform == nullptr)
        return;  // OpenMM has no such platform here: nothing to register
    const std::string path = kernelLibraryPath();
    std::string why;
    try {
        void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) {
            const char* error = dlerror();
            why = std::string("cannot load ") + path + ": " + (error != nullptr ? error : "unknown error");
        } else {
            void* entry = dlsym(library, HESSFIT_LOADER_ENTRY);
            if (entry == nullptr)
                why = path + " lacks " + HESSFIT_LOADER_ENTRY;
            else
                reinterpret_cast<void (*)()>(entry)();
        }
    } catch (const std::exception& e) {
        why = std::string(HESSFIT_LOADER_ENTRY) + " failed: " + e.what();
    }
    if (!why.empty()) {
        try {
            platform->registerKernelFactory(HessFit::CalcHessianForceKernel::Name(), new UnavailableKernelFactory(
                "hessfit: the " HESSFIT_LOADER_PLATFORM " kernels of HessianForce are unavailable: " + why));
        } catch (...) {
        }
    }
}
