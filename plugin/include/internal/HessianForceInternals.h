#ifndef HESSFIT_HESSIAN_FORCE_INTERNALS_H_
#define HESSFIT_HESSIAN_FORCE_INTERNALS_H_

#include "HessianForce.h"
#include <vector>

namespace HessFit {

/**
 * Read access to HessianForce's term storage for the code that implements the force: its
 * ForceImpl, the platforms' kernels (FlatHessianModel) and the serialization proxy. It is not
 * part of the public API (the public accessors are HessianForce's get...Parameters methods);
 * the layout may change between versions.
 */
class HessianForceInternals {
public:
    /**
     * One stored term: the kind's particles (then -1), its slots (then NoSlot), its periodicity
     * (0 for kinds without one) and its distance scales (1 for kinds without them). Plain data
     * without padding, compared with memcmp by the ForceImpl.
     */
    using Term = HessianForce::Term;
    /**
     * The terms of one kind, in index order.
     *
     * @param force  the force
     * @param kind   the term kind (Bond ... HydrogenBond)
     * @return the force's list of that kind
     */
    static const std::vector<Term>& getTerms(const HessianForce& force, HessianForce::TermKind kind) {
        return force.terms[kind];
    }
    /**
     * Whether a kind defines a nonbonded pair: the pair is then excluded from the plain sum and
     * may be defined only once (Exclusion, Pair14, ExplicitPair, MM3Pair, MM3SwitchedPair: its p1, p2).
     *
     * @param kind  the term kind
     * @return true for the pair kinds
     */
    static bool isPairKind(HessianForce::TermKind kind) {
        return kind == HessianForce::Exclusion || kind == HessianForce::Pair14 || kind == HessianForce::ExplicitPair ||
               kind == HessianForce::MM3Pair || kind == HessianForce::MM3SwitchedPair;
    }
    /**
     * The particles' charge, sigma and epsilon slots: three entries per particle, in that order.
     *
     * @param force  the force
     * @return the slot list
     */
    static const std::vector<int>& getParticleSlots(const HessianForce& force) {
        return force.particleSlots;
    }
    /**
     * The molecules declared with addMolecule (empty when none was: all particles form one).
     *
     * @param force  the force
     * @return the particles of each declared molecule, in Hessian-block order
     */
    static const std::vector<std::vector<int> >& getExplicitMolecules(const HessianForce& force) {
        return force.molecules;
    }
    /** One reduced particle: particle, partner, factor (HessianForce::addReducedParticle). */
    using ReducedParticle = HessianForce::ReducedParticle;
    /**
     * The reduced particles, in index order.
     *
     * @param force  the force
     * @return the force's list of reduced particles
     */
    static const std::vector<ReducedParticle>& getReducedParticles(const HessianForce& force) {
        return force.reducedParticles;
    }
};

} // namespace HessFit

#endif
