#include "ReferenceHessianKernels.h"
#include "HessianForceException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/reference/ReferencePlatform.h"
#include "openmm/Vec3.h"
#include <new>
#include <sstream>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be three packed doubles");

// Positions and forces of the Reference platform as flat xyz arrays (nm, kJ/mol/nm).
static const double* positionsOf(ContextImpl& context) {
    ReferencePlatform::PlatformData* data = reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData());
    return &(*data->positions)[0][0];
}

static double* forcesOf(ContextImpl& context) {
    ReferencePlatform::PlatformData* data = reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData());
    return &(*data->forces)[0][0];
}

void ReferenceCalcHessianForceKernel::initialize(const System&, const HessianForce& force) {
    model.build(force);
    table = force.getParameters();
}

void ReferenceCalcHessianForceKernel::check(int status, int badTerm) const {
    if (status != 0 && badTerm == HF_BAD_OUT_OF_MEMORY)
        throw std::bad_alloc();  // the reduced particles' work arrays (hf_reduction.c)
    if (status != 0)
        throw HessianForceException(HessianForceException::Geometry,
                                    "HessianForce: the geometry of " + model.describeTerm(badTerm) +
                                    " is undefined (coincident particles, a linear angle or collinear dihedral atoms)");
}

double ReferenceCalcHessianForceKernel::execute(ContextImpl& context, bool includeForces, bool) {
    if (model.model().n_particles == 0)
        return 0.0;
    double energy = 0.0;
    int bad = 0;
    int status = hf_energy_forces(&model.model(), table.data(), positionsOf(context), &energy,
                                  includeForces ? forcesOf(context) : nullptr, &bad);
    check(status, bad);
    return energy;
}

void ReferenceCalcHessianForceKernel::copyParametersToContext(ContextImpl&, const HessianForce& force) {
    model.build(force);
    table = force.getParameters();
}

void ReferenceCalcHessianForceKernel::copyParameterTableToContext(ContextImpl&, const vector<double>& newTable) {
    table = newTable;
}

void ReferenceCalcHessianForceKernel::computeHessianBlocks(ContextImpl& context, vector<double>& blocks) {
    const hf_model& m = model.model();
    blocks.resize(m.block_offset[m.n_molecules]);  // hf_hessian_blocks zeroes it; a reused vector is not refilled
    if (m.n_particles == 0)
        return;
    int bad = 0;
    int status = hf_hessian_blocks(&m, table.data(), positionsOf(context), blocks.data(), &bad);
    check(status, bad);
}

void ReferenceCalcHessianForceKernel::computeParameterDerivatives(ContextImpl& context, vector<double>& derivatives) {
    const hf_model& m = model.model();
    derivatives.assign(table.size(), 0.0);
    if (m.n_particles == 0 || table.empty())
        return;
    int bad = 0;
    int status = hf_parameter_derivatives(&m, table.data(), positionsOf(context), derivatives.data(), &bad);
    check(status, bad);
}

void ReferenceCalcHessianForceKernel::checkSize(size_t given, size_t expected, const char* what) const {
    if (given != expected) {
        std::ostringstream m;
        m << "HessianForce: " << what << " has " << given << " entries but the Context's force needs " << expected;
        throw HessianForceException(HessianForceException::Size, m.str());
    }
}

void ReferenceCalcHessianForceKernel::computeHessianContractionDerivatives(ContextImpl& context, const vector<double>& adjoint,
                                                                           vector<double>& derivatives) {
    const hf_model& m = model.model();
    checkSize(adjoint.size(), (size_t) m.block_offset[m.n_molecules], "the adjoint matrix G");
    derivatives.assign(table.size(), 0.0);
    if (m.n_particles == 0 || table.empty())
        return;
    int bad = 0;
    int status = hf_hessian_contraction_derivatives(&m, table.data(), positionsOf(context), adjoint.data(),
                                                    derivatives.data(), &bad);
    check(status, bad);
}

void ReferenceCalcHessianForceKernel::computeGradientContractionDerivatives(ContextImpl& context, const vector<double>& y,
                                                                            vector<double>& derivatives) {
    const hf_model& m = model.model();
    checkSize(y.size(), 3 * (size_t) m.n_particles, "the vector y");
    derivatives.assign(table.size(), 0.0);
    if (m.n_particles == 0 || table.empty())
        return;
    int bad = 0;
    int status = hf_gradient_contraction_derivatives(&m, table.data(), positionsOf(context), y.data(),
                                                     derivatives.data(), &bad);
    check(status, bad);
}

void ReferenceCalcHessianForceKernel::computeMoleculeEnergies(ContextImpl& context, vector<double>& energies) {
    const hf_model& m = model.model();
    energies.assign((size_t) m.n_molecules, 0.0);
    if (m.n_particles == 0)
        return;
    int bad = 0;
    int status = hf_molecule_energies(&m, table.data(), positionsOf(context), energies.data(), &bad);
    check(status, bad);
}

void ReferenceCalcHessianForceKernel::computeMoleculeEnergyDerivatives(ContextImpl& context, const vector<double>& weights,
                                                                       vector<double>& derivatives) {
    const hf_model& m = model.model();
    checkSize(weights.size(), (size_t) m.n_molecules, "the molecule weights");
    derivatives.assign(table.size(), 0.0);
    if (m.n_particles == 0 || table.empty())
        return;
    int bad = 0;
    int status = hf_molecule_energy_derivatives(&m, table.data(), positionsOf(context), weights.data(),
                                                derivatives.data(), &bad);
    check(status, bad);
}

// ---- Hessian-space objectives ------------------------------------------------------------------

static const double* dataOrNull(const vector<double>& v) {
    return v.empty() ? nullptr : v.data();
}

void ReferenceCalcHessianForceKernel::setHessianObjective(ContextImpl&, const HessianObjectiveSpec& spec) {
    const hf_model& m = model.model();
    objectiveState.reset();
    objective = spec;
    objectiveMolecules.assign(objective.molecules.size(), hf_objective_molecule());
    for (size_t i = 0; i < objective.molecules.size(); i++) {
        const HessianObjectiveSpec::Molecule& src = objective.molecules[i];
        hf_objective_molecule& dst = objectiveMolecules[i];
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
    objectiveFlat.n_molecules = (int) objectiveMolecules.size();
    objectiveFlat.molecules = objectiveMolecules.data();
    objectiveFlat.frequency_factor = objective.frequencyFactor;
    objectiveState.reset(hf_objective_state_create(&m, &objectiveFlat));
    if (!objectiveState)
        throw std::bad_alloc();
}

double ReferenceCalcHessianForceKernel::computeHessianObjective(ContextImpl& context, vector<double>* dLdslot,
                                                                vector<double>* residuals) {
    const hf_model& m = model.model();
    if (!objectiveState)
        throw HessianForceException(HessianForceException::Value, "HessianForce: no Hessian objective is set in this Context");
    if (residuals != nullptr)
        residuals->assign((size_t) objective.numResiduals(), 0.0);
    if (dLdslot != nullptr)
        dLdslot->assign(table.size(), 0.0);
    double loss = 0.0;
    hf_objective_error error = {0, 0, 0};
    const int status = hf_objective_compute(&m, table.data(), m.n_particles > 0 ? positionsOf(context) : nullptr,
                                            &objectiveFlat, objectiveState.get(), &loss,
                                            dLdslot != nullptr && !table.empty() ? dLdslot->data() : nullptr,
                                            residuals != nullptr ? residuals->data() : nullptr, &error);
    if (status == HF_OBJECTIVE_GEOMETRY)
        check(-1, error.bad_term);
    if (status == HF_OBJECTIVE_EIGENSOLVER || status == HF_OBJECTIVE_NONFINITE) {
        std::ostringstream msg;
        msg << "HessianForce: Hessian objective, molecule " << error.molecule << ": ";
        if (status == HF_OBJECTIVE_NONFINITE)
            msg << "the Hessian block or its modes are not finite at these parameters";
        else
            msg << "LAPACKE_dsyevd failed (info = " << error.info << ")";
        throw HessianForceException(HessianForceException::Value, msg.str());
    }
    return loss;
}

void ReferenceCalcHessianForceKernel::getHessianObjectivePairing(ContextImpl&, vector<int>& modes) {
    modes.assign((size_t) objective.numFrequencyTargets(), -1);
    if (objectiveState && !modes.empty())
        hf_objective_state_pairing(objectiveState.get(), modes.data(), (int) modes.size());
}
