#ifndef HESSFIT_HESSIAN_FORCE_IMPL_H_
#define HESSFIT_HESSIAN_FORCE_IMPL_H_

#include "HessianForce.h"
#include "HessianForceInternals.h"
#include "openmm/internal/ForceImpl.h"
#include "openmm/Kernel.h"
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace HessFit {

/** The ForceImpl of HessianForce: validates the force against the System and owns the kernel. */
class HessianForceImpl : public OpenMM::ForceImpl {
public:
    /** The impl of one force in one Context (created by HessianForce::createImpl). */
    explicit HessianForceImpl(const HessianForce& owner);
    /** Validate the force against the System and create and initialise the kernel. */
    void initialize(OpenMM::ContextImpl& context) override;
    /** The force this impl belongs to. */
    const HessianForce& getOwner() const override { return owner; }
    /** Nothing to update between steps. */
    void updateContextState(OpenMM::ContextImpl&, bool&) override {}
    /** Energy (kJ/mol) and forces of the force when its group is in groups. */
    double calcForcesAndEnergy(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy, int groups) override;
    /** No global Context parameters. */
    std::map<std::string, double> getDefaultParameters() override { return std::map<std::string, double>(); }
    /** CalcHessianForceKernel's name. */
    std::vector<std::string> getKernelNames() override;
    /** The bonds' particle pairs (OpenMM keeps bonded particles together when it reorders atoms). */
    std::vector<std::pair<int, int> > getBondedParticles() const override;
    /** Copy the parameter table (and, when they changed, the terms) to the kernel. */
    void updateParametersInContext(OpenMM::ContextImpl& context);
    /** Concatenated per-molecule Hessian blocks (HessianForce::getHessianBlocks). */
    void getHessianBlocks(OpenMM::ContextImpl& context, std::vector<double>& blocks);
    /** dE/dslot for every slot. */
    void getParameterDerivatives(OpenMM::ContextImpl& context, std::vector<double>& derivatives);
    /** tr(G^T dH/dslot) for every slot; throws HessianForceException (Size, Value) naming the problem
     *  unless G has the Hessian-block layout of the Context's force and is finite. */
    void getHessianContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& adjoint,
                                          std::vector<double>& derivatives);
    /** y . d(grad E)/dslot for every slot; y must be finite with 3 entries per System particle. */
    void getGradientContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& y,
                                           std::vector<double>& derivatives);
    /** Per-molecule energies (kJ/mol), one per molecule of the kernel. */
    void getMoleculeEnergies(OpenMM::ContextImpl& context, std::vector<double>& energies);
    /** sum_m weights[m] dE_m/dslot for every slot; weights must be finite, one per molecule. */
    void getMoleculeEnergyDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& weights,
                                      std::vector<double>& derivatives);
    /** Check indices, slots, finiteness and molecule membership; throws HessianForceException
     *  naming the first offending item. numSystemParticles < 0 skips the System size check. */
    static void validate(const HessianForce& force, int numSystemParticles);
    /** Check the reduced particles against the molecules (moleculeOf: each particle's molecule):
     *  in range, partner in the particle's molecule, reduced at most once, partner not reduced. */
    static void validateReducedParticles(const HessianForce& force, const std::vector<int>& moleculeOf);
    /** Check and take a Hessian-space objective for this Context (see HessianForce). */
    void setHessianObjective(OpenMM::ContextImpl& context, const HessianObjectiveSpec& spec);
    /** The objective's loss, with dL/dslot and the residuals where not null (see HessianForce). */
    double computeHessianObjective(OpenMM::ContextImpl& context, std::vector<double>* dLdslot,
                                   std::vector<double>* residuals);
    /** Residuals of the objective set on this Context (0 when none). */
    long long getHessianObjectiveNumResiduals() const { return objectiveResiduals; }
    /** Check the slots and hand them to the kernel (see HessianForce). */
    void setHessianObjectiveGradientSlots(OpenMM::ContextImpl& context, const std::vector<int>& slots);
    /** The MM mode each frequency target was paired with in the last evaluation (-1: none). */
    void getHessianObjectivePairing(OpenMM::ContextImpl& context, std::vector<int>& modes);
    /** The listed molecules' residuals and residual Jacobian blocks (slot-major each, in list order;
     *  see HessianForce), after checking the molecules (each in range, distinct, at least one) and
     *  the slots. */
    void computeHessianObjectiveJacobian(OpenMM::ContextImpl& context, const std::vector<int>& molecules,
                                         const std::vector<int>& slots, std::vector<double>& residuals,
                                         std::vector<double>& jacobian);
    /** Check a Hessian-space objective against the molecules (particles of each, block order):
     *  throws HessianForceException (Size, Value) naming the molecule, the field and the entry. */
    static void validateObjective(const HessianObjectiveSpec& spec, const std::vector<std::vector<int> >& molecules);
private:
    /** True if terms, particle slots and molecules equal those last given to the kernel. */
    bool sameDefinitionAsKernel() const;
    void rememberDefinition();
    /** Particles of each molecule as the kernel holds them (the implicit one: all, in order). */
    std::vector<std::vector<int> > kernelMoleculeParticles(const OpenMM::ContextImpl& context) const;
    const HessianForce& owner;
    /** setHessianObjectiveGradientSlots's list as flags per slot (empty: every slot): the other
     *  slots' entries of the objective's gradient are set to 0 on every platform. */
    std::vector<unsigned char> objectiveGradientSlots;
    std::vector<HessianForceInternals::Term> kernelTerms[HessianForce::NumTermKinds];
    std::vector<int> kernelParticleSlots;
    std::vector<std::vector<int> > kernelMolecules;
    std::vector<HessianForceInternals::ReducedParticle> kernelReducedParticles;
    int kernelCombiningRule;
    double kernel14Scales[2];
    bool hasObjective;
    long long objectiveResiduals;
    int objectiveFrequencyTargets;
    OpenMM::Kernel kernel;
};

} // namespace HessFit

#endif
