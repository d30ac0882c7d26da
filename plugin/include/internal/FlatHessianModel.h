#ifndef HESSFIT_FLAT_HESSIAN_MODEL_H_
#define HESSFIT_FLAT_HESSIAN_MODEL_H_

#include "HessianForce.h"
#include "hf_core.h"
#include "internal/windowsExportHessFit.h"
#include <string>
#include <vector>

namespace HessFit {

/**
 * A HessianForce flattened into the arrays of the C math core (hf_model): one hf_term per
 * energy term (an OPLS torsion becomes up to four periodic terms, a 1-4 pair a combined pair),
 * molecule tables, exclusion matrices, Hessian block offsets and the reduced particles. It owns the arrays; model()
 * points into them. The force must have been validated (HessianForceImpl::validate).
 */
class OPENMM_EXPORT_HESSFIT FlatHessianModel {
public:
    void build(const HessianForce& force);
    const hf_model& model() const { return flat; }
    /** "angle 3 (particles 4, 5, 6)" for a flattened term index, or a nonbonded-pair note. */
    std::string describeTerm(int flatIndex) const;
    /** The Geometry error's message for a flattened term index whose geometry is undefined
     *  (hf_core's -1), naming the term and the cases (an exactly linear angle is one only where the
     *  energy has a cusp: a stretch-bend, a bend-bend, an angle term whose theta0 is not 180 degrees). */
    std::string undefinedGeometryMessage(int flatIndex) const;
private:
    struct Origin { int kind, index; };
    std::vector<hf_term> terms;
    std::vector<Origin> origins;
    std::vector<int> particleSlots, molOffset, molAtoms, atomMol, atomLocal;
    std::vector<unsigned char> excluded;
    std::vector<long long> exclOffset, blockOffset;
    /** The reduced particles grouped by molecule (hf_model.reduced, reduced_offset). */
    void flattenReducedParticles(const HessianForce& force);
    std::vector<hf_reduced_particle> reduced;
    std::vector<int> reducedOffset;
    hf_model flat;
};

} // namespace HessFit

#endif
