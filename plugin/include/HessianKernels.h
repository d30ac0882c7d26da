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
    /**
     * Get the name under which platforms register this kernel.
     */
    static std::string Name() { return "CalcHessianForce"; }
    /**
     * Create the kernel (called by a platform's KernelFactory).
     *
     * @param name      the kernel's name (Name())
     * @param platform  the platform that creates it
     */
    CalcHessianForceKernel(std::string name, const OpenMM::Platform& platform) : OpenMM::KernelImpl(name, platform) {}
    /**
     * Take the force's definition, validated against the System by the caller.
     *
     * @param system  the System the Context was created for
     * @param force   the HessianForce this kernel computes
     */
    virtual void initialize(const OpenMM::System& system, const HessianForce& force) = 0;
    /**
     * Compute the energy and, when includeForces, add the forces to the Context's force array.
     *
     * @param context        the Context's implementation
     * @param includeForces  whether to add the forces (kJ/mol/nm)
     * @param includeEnergy  whether the energy is wanted
     * @return the energy (kJ/mol) when includeEnergy, otherwise anything
     */
    virtual double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy) = 0;
    /**
     * Copy the (validated) parameter table and terms; the particle and molecule layout is unchanged.
     *
     * @param context  the Context's implementation
     * @param force    the HessianForce this kernel computes
     */
    virtual void copyParametersToContext(OpenMM::ContextImpl& context, const HessianForce& force) = 0;
    /**
     * Copy only the parameter table (same length; the terms did not change): a fit's hot path.
     *
     * @param context  the Context's implementation
     * @param table    the value of every slot
     */
    virtual void copyParameterTableToContext(OpenMM::ContextImpl& context, const std::vector<double>& table) = 0;
    /**
     * Compute the concatenated per-molecule Hessian blocks.
     *
     * @param context      the Context's implementation
     * @param[out] blocks  kJ/mol/nm^2, in the layout of HessianForce::getHessianBlocks
     */
    virtual void computeHessianBlocks(OpenMM::ContextImpl& context, std::vector<double>& blocks) = 0;
    /**
     * Compute dE/dslot for every slot.
     *
     * @param context           the Context's implementation
     * @param[out] derivatives  kJ/mol per slot unit, one per slot
     */
    virtual void computeParameterDerivatives(OpenMM::ContextImpl& context, std::vector<double>& derivatives) = 0;
    /**
     * Compute derivatives[s] = tr(G^T dH/dslot_s) = sum over molecules and block entries of
     * G_ij dH_ij/dslot_s, for every slot.
     *
     * @param context           the Context's implementation
     * @param adjoint           G in the layout of computeHessianBlocks (the caller has checked its
     *                          size and that it is finite)
     * @param[out] derivatives  kJ/mol/nm^2 times G's units, per slot unit, one per slot
     */
    virtual void computeHessianContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& adjoint,
                                                      std::vector<double>& derivatives) = 0;
    /**
     * Compute derivatives[s] = y . d(grad E)/dslot_s for every slot.
     *
     * @param context           the Context's implementation
     * @param y                 3 entries per particle (x, y, z in System order; checked by the caller)
     * @param[out] derivatives  kJ/mol/nm times y's units, per slot unit, one per slot
     */
    virtual void computeGradientContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& y,
                                                       std::vector<double>& derivatives) = 0;
    /**
     * Compute the energy of each molecule alone (its terms and its nonbonded pairs; molecules
     * never interact, so they sum to execute()'s energy).
     *
     * @param context        the Context's implementation
     * @param[out] energies  kJ/mol, resized to the molecule count
     */
    virtual void computeMoleculeEnergies(OpenMM::ContextImpl& context, std::vector<double>& energies) = 0;
    /**
     * Compute derivatives[s] = sum_m weights[m] dE_m/dslot_s for every slot: the adjoint route to
     * the gradient of any loss of the per-molecule energies (weights[m] = dL/dE_m).
     *
     * @param context           the Context's implementation
     * @param weights           one finite weight per molecule (checked by the caller)
     * @param[out] derivatives  kJ/mol times the weights' units, per slot unit, one per slot
     */
    virtual void computeMoleculeEnergyDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& weights,
                                                  std::vector<double>& derivatives) = 0;
    /**
     * Take a Hessian-space objective (HessianObjective.h). Replaces any earlier one and forgets
     * its position-paired selection.
     *
     * @param context  the Context's implementation
     * @param spec     the objective, validated by the caller against the force's molecules (one
     *                 Molecule per molecule, sizes, finite values, positive masses, orthonormal
     *                 vectors)
     */
    virtual void setHessianObjective(OpenMM::ContextImpl& context, const HessianObjectiveSpec& spec) = 0;
    /**
     * Evaluate the objective at the Context's positions and parameters, for all molecules in this
     * one call (the adjoint route: one G per molecule, then one tr(G^T dH/dslot) contraction).
     * Requires a set objective (checked by the caller).
     *
     * @param context         the Context's implementation
     * @param[out] dLdslot    when not null, dL/dslot for every slot
     * @param[out] residuals  when not null, the r_i in the spec's layout
     * @return the loss L = sum r_i^2
     */
    virtual double computeHessianObjective(OpenMM::ContextImpl& context, std::vector<double>* dLdslot,
                                           std::vector<double>* residuals) = 0;
    /**
     * Say which slots' dL/dslot computeHessianObjective must give exactly from now on (a fit's
     * free values move only those); the others may then come out 0 or partial. This default
     * keeps computing every slot; the Reference platform skips the terms none of whose slots is
     * listed. Kept across setHessianObjective.
     *
     * @param context  the Context's implementation
     * @param slots    distinct slots in range (checked by the caller); empty: every slot
     */
    virtual void setHessianObjectiveGradientSlots(OpenMM::ContextImpl& context, const std::vector<int>& slots) {
        (void) context;
        (void) slots;
    }
    /**
     * Get which MM mode each frequency target was compared with in the last evaluation.
     *
     * @param context     the Context's implementation
     * @param[out] modes  for every frequency target (molecule by molecule), the mode's index in
     *                    ascending eigenvalue order of the mode list; -1 if unpaired or not
     *                    evaluated yet
     */
    virtual void getHessianObjectivePairing(OpenMM::ContextImpl& context, std::vector<int>& modes) = 0;
    /**
     * Compute the residual Jacobian of the listed molecules' objective at the Context's positions
     * and parameters, in one call (the rows d r_i / d slot of their residuals, exact: bilinear
     * forms u^T dH/dslot w, hf_objective_jacobian, the molecules in threads; the GPU platforms form
     * the bilinear forms on the device, docs/design.md). Frequency targets
     * keep the pairing of the last evaluation (an evaluation at the same parameters pairs them
     * so). Requires a set objective and a valid list (checked by the caller).
     *
     * @param context         the Context's implementation
     * @param molecules       the molecules, distinct and in range (checked by the caller), in any order
     * @param slots           the slots wanted, distinct and in range (checked by the caller); empty: all
     * @param[out] residuals  the listed molecules' residuals (Molecule::numResiduals each, as
     *                        computeHessianObjective's), concatenated in list order
     * @param[out] jacobian   each listed molecule's block in list order, concatenated; a block is
     *                        slot-major, block[k * n_m + i] = d r_i / d slot_{slots[k]} (slots.size() x
     *                        n_m for its n_m residuals; all slots: k = s)
     */
    virtual void computeHessianObjectiveJacobian(OpenMM::ContextImpl& context, const std::vector<int>& molecules,
                                                 const std::vector<int>& slots, std::vector<double>& residuals,
                                                 std::vector<double>& jacobian) = 0;
};

} // namespace HessFit

#endif
