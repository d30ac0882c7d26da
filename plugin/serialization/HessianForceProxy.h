#ifndef HESSFIT_HESSIAN_FORCE_PROXY_H_
#define HESSFIT_HESSIAN_FORCE_PROXY_H_

#include "internal/windowsExportHessFit.h"
#include "openmm/serialization/SerializationProxy.h"

namespace HessFit {

/**
 * XML serialization of HessianForce (type name "HessianForce"; it writes the current format
 * version and reads every version up to it: so far there is one, version 1). It stores the whole
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
    /**
     * Create the proxy for the type name "HessianForce".
     */
    HessianForceProxy();
    /**
     * Write a HessianForce in the current format version.
     *
     * @param object     the HessianForce
     * @param[out] node  the node to fill
     */
    void serialize(const void* object, OpenMM::SerializationNode& node) const override;
    /**
     * Read a HessianForce written in any format version up to the current one. Throws
     * HessianForceException(Unsupported) naming the version for a newer (or invalid) one, and the
     * force's own HessianForceException for an invalid term or parameter.
     *
     * @param node  the node written by serialize() (of this or an earlier hessfit)
     * @return a new HessianForce, owned by the caller
     */
    void* deserialize(const OpenMM::SerializationNode& node) const override;
};

} // namespace HessFit

#endif
