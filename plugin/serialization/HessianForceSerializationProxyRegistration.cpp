/*
 * Registers the HessianForce serialization proxy when libHessFitPlugin is loaded, so that
 * linking (or dlopen-ing) the library is enough for OpenMM's XmlSerializer to read and write
 * Systems holding a HessianForce. As in OpenMM's example plugin, the registration function is
 * also exported, so that a static build or a program that wants to be explicit can call it;
 * calling it more than once is harmless.
 */
#include "HessianForce.h"
#include "HessianForceProxy.h"
#include "internal/windowsExportHessFit.h"
#include "openmm/serialization/SerializationProxy.h"
#include <typeinfo>

extern "C" OPENMM_EXPORT_HESSFIT void registerHessianForceSerializationProxies();

extern "C" OPENMM_EXPORT_HESSFIT void registerHessianForceSerializationProxies() {
    // One proxy for the life of the process: the registry keeps a raw pointer and never frees it,
    // and a heap object (deliberately never deleted) stays valid during static destruction too.
    static const HessFit::HessianForceProxy* proxy = new HessFit::HessianForceProxy();
    OpenMM::SerializationProxy::registerProxy(typeid(HessFit::HessianForce), proxy);
}

namespace {

struct HessianForceSerializationRegistrar {
    HessianForceSerializationRegistrar() {
        registerHessianForceSerializationProxies();
    }
};

// Runs when the shared library is loaded.
HessianForceSerializationRegistrar registrar;

} // namespace
