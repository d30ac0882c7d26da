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
        throw HessianForceException(HessianForceException::Geometry, model.undefinedGeometryMessage(badTerm));
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

void ReferenceCalcHessianForceKernel::setHessianObjective(ContextImpl&, const HessianObjectiveSpec& spec) {
    objective.set(model, spec);
}

double ReferenceCalcHessianForceKernel::computeHessianObjective(ContextImpl& context, vector<double>* dLdslot,
                                                                vector<double>* residuals) {
    return objective.compute(model, table, model.model().n_particles > 0 ? positionsOf(context) : nullptr, dLdslot,
                             residuals);
}

void ReferenceCalcHessianForceKernel::setHessianObjectiveGradientSlots(ContextImpl&, const vector<int>& slots) {
    objective.setGradientSlots(slots, (int) table.size());
}

void ReferenceCalcHessianForceKernel::getHessianObjectivePairing(ContextImpl&, vector<int>& modes) {
    objective.pairing(modes);
}

void ReferenceCalcHessianForceKernel::computeHessianObjectiveJacobian(ContextImpl& context, const vector<int>& molecules,
                                                                      const vector<int>& slots, vector<double>& residuals,
                                                                      vector<double>& jacobian) {
    objective.jacobian(model, table, model.model().n_particles > 0 ? positionsOf(context) : nullptr, molecules, nullptr,
                       slots, residuals, jacobian);
}
