#ifndef HESSFIT_FLAT_HESSIAN_OBJECTIVE_H_
#define HESSFIT_FLAT_HESSIAN_OBJECTIVE_H_

#include "HessianObjective.h"
#include "internal/FlatHessianModel.h"
#include "internal/windowsExportHessFit.h"
#include <memory>
#include <vector>

namespace HessFit {

/**
 * A HessianObjectiveSpec flattened for the C math core (hf_objective_spec, owning a copy of the
 * spec) with its evaluation state: the Reference kernel's objective, and the GPU platforms' host
 * route to the residual Jacobian. Errors are HessianForceExceptions naming the term or molecule.
 */
class OPENMM_EXPORT_HESSFIT FlatHessianObjective {
public:
    /** Take spec (validated by the caller) for model's molecules; forgets any earlier state. */
    void set(const FlatHessianModel& model, const HessianObjectiveSpec& spec);
    /** Whether set was called. */
    bool isSet() const { return state != nullptr; }
    /** The spec as given. */
    const HessianObjectiveSpec& spec() const { return objective; }
    /** hf_objective_compute: the loss; dLdslot and residuals when not null (resized). */
    double compute(const FlatHessianModel& model, const std::vector<double>& table, const double* positions,
                   std::vector<double>* dLdslot, std::vector<double>* residuals);
    /**
     * hf_objective_jacobian for a list of molecules (distinct, in range; in one core call, the
     * molecules in threads): their residuals and Jacobian blocks in list order, each block
     * slot-major (slots x n_m: block[k * n_m + i] = d r_i / d slot_{slots[k]}; slots empty: all,
     * k = s), concatenated; resized.
     *
     * @param paired  the mode of every frequency target of the objective (molecules concatenated,
     *                as pairing()); NULL: as an evaluation pairs them now
     */
    void jacobian(const FlatHessianModel& model, const std::vector<double>& table, const double* positions,
                  const std::vector<int>& molecules, const int* paired, const std::vector<int>& slots,
                  std::vector<double>& residuals, std::vector<double>& jacobian);
    /**
     * hf_objective_jacobian_pairs: the same list call up to the bilinear forms, for a device that forms
     * them (the GPU platforms' Jacobian kernel): the residuals as jacobian's, and per list position its
     * vectors, pairs and factors (owned by the result).
     */
    struct Pairs {
        std::vector<hf_jacobian_pairs> molecules;
        ~Pairs() { hf_jacobian_pairs_free(molecules.data(), (int) molecules.size()); }
    };
    void jacobianPairs(const FlatHessianModel& model, const std::vector<double>& table, const double* positions,
                       const std::vector<int>& molecules, const int* paired, std::vector<double>& residuals,
                       Pairs& pairs);
    /** The last evaluation's pairing of every frequency target (-1: none). */
    void pairing(std::vector<int>& modes) const;
    /** compute's dLdslot is exact for these slots (in range) only, of a table of numSlots (slots
     *  added later count as listed; hf_objective_spec's gradient_slots); empty: every slot. Kept across set. */
    void setGradientSlots(const std::vector<int>& slots, int numSlots);

private:
    /** The listed molecules' residual count, residuals sized to it (zeros); throws without a set objective. */
    long long listResiduals(const std::vector<int>& molecules, std::vector<double>& residuals) const;
    /** Throws for a non-zero hf_objective status. */
    void check(const FlatHessianModel& model, int status, const hf_objective_error& error) const;
    HessianObjectiveSpec objective;
    std::vector<hf_objective_molecule> molecules;
    hf_objective_spec flat{};
    std::vector<unsigned char> gradientSlots; /* per slot 0/1; empty: every slot */
    struct StateDeleter {
        void operator()(hf_objective_state* s) const { hf_objective_state_destroy(s); }
    };
    std::unique_ptr<hf_objective_state, StateDeleter> state;
};

} // namespace HessFit

#endif
