#ifndef HESSFIT_HESSIAN_FORCE_PROXY_H_
#define HESSFIT_HESSIAN_FORCE_PROXY_H_

#include "internal/windowsExportHessFit.h"
#include "openmm/serialization/SerializationProxy.h"

namespace HessFit {

/**
 * XML serialization of HessianForce (type name "HessianForce", version 1). It stores the whole
 * force: the parameter table, the particles' slots, the explicitly declared molecules, every term
 * list, the combining rule, the 1-4 scales, the force group and the name. Doubles go through
 * OpenMM's SerializationNode, which writes them with enough digits to round-trip exactly.
 *
 * The proxy is registered when libHessFitPlugin is loaded
 * (HessianForceSerializationProxyRegistration.cpp), so linking the library is enough for
 * XmlSerializer to handle a System holding a HessianForce.
 */
class OPENMM_EXPORT_HESSFIT HessianForceProxy : public OpenMM::SerializationProxy {
public:
    HessianForceProxy();
    void serialize(const void* object, OpenMM::SerializationNode& node) const override;
    /** Throws HessianForceException(Unsupported) for a version other than 1. */
    void* deserialize(const OpenMM::SerializationNode& node) const override;
};

} // namespace HessFit

#endif
