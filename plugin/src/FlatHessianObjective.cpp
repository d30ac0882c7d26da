/*
 * FlatHessianObjective: a HessianObjectiveSpec as the C core's hf_objective_spec with its state
 * (internal/FlatHessianObjective.h).
 */
#include "internal/FlatHessianObjective.h"
#include "HessianForceException.h"
#include <new>
#include <sstream>
#include <string>

using namespace HessFit;
using std::vector;

template <class T>
static const T* dataOrNull(const vector<T>& v) {
    return v.empty() ? nullptr : v.data();
}

void FlatHessianObjective::set(const FlatHessianModel& model, const HessianObjectiveSpec& spec) {
    const hf_model& m = model.model();
    state.reset();
    objective = spec;
    molecules.assign(objective.molecules.size(), hf_objective_molecule());
    for (size_t i = 0; i < objective.molecules.size(); i++) {
        const HessianObjectiveSpec::Molecule& src = objective.molecules[i];
        hf_objective_molecule& dst = molecules[i];
        const int dim = 3 * (m.mol_offset[i + 1] - m.mol_offset[i]);
        dst.masses = dataOrNull(src.masses);
        dst.pairing = (int) src.frequencyPairing;
        dst.project = src.projectExternal ? 1 : 0;
        dst.n_freq = (int) src.frequencyTargets.size();
        dst.freq_target = dataOrNull(src.frequencyTargets);
        dst.freq_weight = dataOrNull(src.frequencyWeights);
        dst.freq_threshold = src.frequencyThreshold;
        dst.freq_vectors = dataOrNull(src.frequencyVectors);
        dst.n_eig = src.numEigenVectors(dim);
        dst.eig_vectors = dataOrNull(src.eigenVectors);
        dst.eig_target = dataOrNull(src.eigenTargets);
        dst.eig_weight = dataOrNull(src.eigenWeights);
        dst.hess_target = dataOrNull(src.hessianTargets);
        dst.hess_weight = dataOrNull(src.hessianWeights);
    }
    flat.n_molecules = (int) molecules.size();
    flat.molecules = molecules.data();
    flat.frequency_factor = objective.frequencyFactor;
    flat.gradient_slots = dataOrNull(gradientSlots);
    flat.n_gradient_slots = (int) gradientSlots.size();
    state.reset(hf_objective_state_create(&m, &flat));
    if (!state)
        throw std::bad_alloc();
}

void FlatHessianObjective::check(const FlatHessianModel& model, int status, const hf_objective_error& error) const {
    if (status == 0)
        return;
    if (status == HF_OBJECTIVE_MEMORY || (status == HF_OBJECTIVE_GEOMETRY && error.bad_term == HF_BAD_OUT_OF_MEMORY))
        throw std::bad_alloc();
    if (status == HF_OBJECTIVE_GEOMETRY)
        throw HessianForceException(HessianForceException::Geometry, model.undefinedGeometryMessage(error.bad_term));
    if (status == HF_OBJECTIVE_LIST)
        throw HessianForceException(HessianForceException::Value, "HessianForce: Hessian objective's Jacobian: entry " +
                                                                      std::to_string(error.molecule) +
                                                                      " of the molecule list is out of range or repeated");
    std::ostringstream msg;
    msg << "HessianForce: Hessian objective, molecule " << error.molecule << ": ";
    if (status == HF_OBJECTIVE_NONFINITE)
        msg << "the Hessian block or its modes are not finite at these parameters";
    else
        msg << "LAPACKE_dsyevd failed (info = " << error.info << ")";
    throw HessianForceException(HessianForceException::Value, msg.str());
}

double FlatHessianObjective::compute(const FlatHessianModel& model, const vector<double>& table, const double* positions,
                                     vector<double>* dLdslot, vector<double>* residuals) {
    if (!state)
        throw HessianForceException(HessianForceException::Value, "HessianForce: no Hessian objective is set in this Context");
    if (residuals != nullptr)
        residuals->assign((size_t) objective.numResiduals(), 0.0);
    if (dLdslot != nullptr)
        dLdslot->assign(table.size(), 0.0);
    double loss = 0.0;
    hf_objective_error error = {0, 0, 0};
    const int status = hf_objective_compute(&model.model(), table.data(), positions, &flat, state.get(), &loss,
                                            dLdslot != nullptr && !table.empty() ? dLdslot->data() : nullptr,
                                            residuals != nullptr ? residuals->data() : nullptr, &error);
    check(model, status, error);
    return loss;
}

long long FlatHessianObjective::listResiduals(const vector<int>& molecules, vector<double>& residuals) const {
    if (!state)
        throw HessianForceException(HessianForceException::Value, "HessianForce: no Hessian objective is set in this Context");
    long long n = 0;
    for (int m : molecules)
        n += hf_objective_state_molecule_residuals(state.get(), m, nullptr);
    residuals.assign((size_t) n, 0.0);
    return n;
}

void FlatHessianObjective::jacobian(const FlatHessianModel& model, const vector<double>& table, const double* positions,
                                    const vector<int>& molecules, const int* paired, const vector<int>& slots,
                                    vector<double>& residuals, vector<double>& jacobian) {
    const long long n = listResiduals(molecules, residuals);
    jacobian.assign((size_t) n * (slots.empty() ? table.size() : slots.size()), 0.0);
    hf_objective_error error = {0, 0, 0};
    const int status = hf_objective_jacobian(&model.model(), table.data(), positions, &flat, state.get(),
                                             molecules.data(), (int) molecules.size(), paired,
                                             slots.empty() ? nullptr : slots.data(), (int) slots.size(),
                                             residuals.data(), jacobian.data(), &error);
    check(model, status, error);
}

void FlatHessianObjective::jacobianPairs(const FlatHessianModel& model, const vector<double>& table,
                                         const double* positions, const vector<int>& molecules, const int* paired,
                                         vector<double>& residuals, Pairs& pairs) {
    listResiduals(molecules, residuals);
    hf_jacobian_pairs_free(pairs.molecules.data(), (int) pairs.molecules.size());
    pairs.molecules.assign(molecules.size(), hf_jacobian_pairs{});
    hf_objective_error error = {0, 0, 0};
    const int status = hf_objective_jacobian_pairs(&model.model(), table.data(), positions, &flat, state.get(),
                                                   molecules.data(), (int) molecules.size(), paired,
                                                   residuals.data(), pairs.molecules.data(), &error);
    check(model, status, error);
}

void FlatHessianObjective::setGradientSlots(const vector<int>& slots, int numSlots) {
    gradientSlots.clear();
    if (!slots.empty()) {
        gradientSlots.assign((size_t) numSlots, 0);
        for (int s : slots)
            gradientSlots[(size_t) s] = 1;
    }
    flat.gradient_slots = dataOrNull(gradientSlots);
    flat.n_gradient_slots = (int) gradientSlots.size();
}

void FlatHessianObjective::pairing(vector<int>& modes) const {
    modes.assign((size_t) objective.numFrequencyTargets(), -1);
    if (state && !modes.empty())
        hf_objective_state_pairing(state.get(), modes.data(), (int) modes.size());
}
