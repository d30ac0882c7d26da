#ifndef HESSFIT_HESSIAN_KERNELS_H_
#define HESSFIT_HESSIAN_KERNELS_H_

#include "HessianForce.h"
#include "HessianObjective.h"
#include "openmm/KernelImpl.h"
#include "openmm/System.h"
#include "openmm/Platform.h"
#include <string>
#include <vector>

namespace HessFit {

/**
 * The kernel interface every platform implements for HessianForce. OpenMM units throughout
 * (nm, rad, kJ/mol). Platforms get the positions from the ContextImpl themselves.
 *
 * Hessian-space objectives (projections V^T H V, mass-weighted eigenvalues) get their parameter
 * gradients by the adjoint route: every such gradient is tr(G^T dH/dslot) for one adjoint matrix G
 * per molecule, and implicit differentiation of an optimised geometry needs y . d(grad E)/dslot.
 * Both contractions are kernel methods, so that every platform computes them where the Hessians
 * live (on the device for GPU platforms), from the per-term quantities (f', f'' and their slot
 * derivatives, dq/dx, d2q/dx2) and without forming dH/dslot.
 */
class CalcHessianForceKernel : public OpenMM::KernelImpl {
public:
    static std::string Name() { return "CalcHessianForce"; }
    CalcHessianForceKernel(std::string name, const OpenMM::Platform& platform) : OpenMM::KernelImpl(name, platform) {}
    /** Take the force's validated definition. */
    virtual void initialize(const OpenMM::System& system, const HessianForce& force) = 0;
    /** Energy (kJ/mol); adds forces (kJ/mol/nm) to the context's force array when includeForces. */
    virtual double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy) = 0;
    /** Copy the (validated) table and terms; the particle and molecule layout is unchanged. */
    virtual void copyParametersToContext(OpenMM::ContextImpl& context, const HessianForce& force) = 0;
    /** Copy only the parameter table (same length; the terms did not change): a fit's hot path. */
    virtual void copyParameterTableToContext(OpenMM::ContextImpl& context, const std::vector<double>& table) = 0;
    /** Concatenated per-molecule Hessian blocks, kJ/mol/nm^2 (layout: HessianForce::getHessianBlocks). */
    virtual void computeHessianBlocks(OpenMM::ContextImpl& context, std::vector<double>& blocks) = 0;
    /** dE/dslot for every slot, kJ/mol per slot unit. */
    virtual void computeParameterDerivatives(OpenMM::ContextImpl& context, std::vector<double>& derivatives) = 0;
    /** derivatives[s] = tr(G^T dH/dslot_s) = sum over molecules and block entries of G_ij dH_ij/dslot_s,
     *  for every slot. adjoint: G in the layout of computeHessianBlocks (the caller has checked
     *  its size and that it is finite). Units: kJ/mol/nm^2 times G's units, per slot unit. */
    virtual void computeHessianContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& adjoint,
                                                      std::vector<double>& derivatives) = 0;
    /** derivatives[s] = y . d(grad E)/dslot_s for every slot; y has 3 entries per particle (x, y, z
     *  in System order; checked by the caller). Units: kJ/mol/nm times y's units, per slot unit. */
    virtual void computeGradientContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& y,
                                                       std::vector<double>& derivatives) = 0;
    /** energies[m] = the energy (kJ/mol) of molecule m alone (its terms and its nonbonded pairs;
     *  molecules never interact, so they sum to execute()'s energy); resized to the molecule count. */
    virtual void computeMoleculeEnergies(OpenMM::ContextImpl& context, std::vector<double>& energies) = 0;
    /** derivatives[s] = sum_m weights[m] dE_m/dslot_s for every slot: the adjoint route to the
     *  gradient of any loss of the per-molecule energies (weights[m] = dL/dE_m; one weight per
     *  molecule, finite: checked by the caller). Units: kJ/mol times the weights' units, per slot unit. */
    virtual void computeMoleculeEnergyDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& weights,
                                                  std::vector<double>& derivatives) = 0;
    /** Take a Hessian-space objective (HessianObjective.h), validated by the caller against the
     *  force's molecules (one Molecule per molecule, sizes, finite values, positive masses,
     *  orthonormal vectors). Replaces any earlier one and forgets its position-paired selection. */
    virtual void setHessianObjective(OpenMM::ContextImpl& context, const HessianObjectiveSpec& spec) = 0;
    /** The objective's loss L = sum r_i^2 at the Context's positions and parameters, for all
     *  molecules in this one call; when dLdslot is not null, dL/dslot for every slot (the adjoint
     *  route: one G per molecule, then one tr(G^T dH/dslot) contraction); when residuals is not
     *  null, the r_i in the spec's layout. Requires a set objective (checked by the caller). */
    virtual double computeHessianObjective(OpenMM::ContextImpl& context, std::vector<double>* dLdslot,
                                           std::vector<double>* residuals) = 0;
    /** For every frequency target (molecule by molecule), the MM mode it was compared with in the
     *  last evaluation (index in ascending eigenvalue order of the mode list), -1 if unpaired or
     *  not evaluated yet. */
    virtual void getHessianObjectivePairing(OpenMM::ContextImpl& context, std::vector<int>& modes) = 0;
};

} // namespace HessFit

#endif
