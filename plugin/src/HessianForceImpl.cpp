#include "internal/HessianForceImpl.h"
#include "HessianForceException.h"
#include "HessianKernels.h"
#include "openmm/internal/ContextImpl.h"
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

HessianForceImpl::HessianForceImpl(const HessianForce& owner)
    : owner(owner), kernelCombiningRule(-1), hasObjective(false), objectiveResiduals(0), objectiveFrequencyTargets(0) {
}

vector<std::string> HessianForceImpl::getKernelNames() {
    return {CalcHessianForceKernel::Name()};
}

vector<std::pair<int, int> > HessianForceImpl::getBondedParticles() const {
    vector<std::pair<int, int> > bonds;
    for (const HessianForceInternals::Term& t : HessianForceInternals::getTerms(owner, HessianForce::Bond))
        bonds.emplace_back(t.particles[0], t.particles[1]);
    return bonds;
}

static void fail(HessianForceException::Code code, const std::string& message) {
    throw HessianForceException(code, "HessianForce: " + message);
}

void HessianForceImpl::validate(const HessianForce& force, int numSystemParticles) {
    int n = force.getNumParticles();
    if (numSystemParticles >= 0 && n != numSystemParticles) {
        std::ostringstream m;
        m << "the force has " << n << " particles but the System has " << numSystemParticles
          << " (call addParticle once per System particle)";
        fail(HessianForceException::Size, m.str());
    }
    // Molecule of every particle.
    vector<int> moleculeOf(n, force.hasExplicitMolecules() ? -1 : 0);
    const vector<vector<int> >& molecules = HessianForceInternals::getExplicitMolecules(force);
    for (int m = 0; m < (int) molecules.size(); m++)
        for (int p : molecules[m]) {
            std::ostringstream msg;
            if (p < 0 || p >= n) {
                msg << "molecule " << m << " lists particle " << p << " but the force has " << n << " particles";
                fail(HessianForceException::Index, msg.str());
            }
            if (moleculeOf[p] != -1) {
                msg << "particle " << p << " is in molecule " << moleculeOf[p] << " and in molecule " << m;
                fail(HessianForceException::Topology, msg.str());
            }
            moleculeOf[p] = m;
        }
    for (int p = 0; p < n; p++)
        if (moleculeOf[p] == -1) {
            std::ostringstream msg;
            msg << "particle " << p << " belongs to no molecule (every particle needs one once molecules are declared)";
            fail(HessianForceException::Topology, msg.str());
        }
    // Every term inside one molecule; every nonbonded pair defined once.
    int numSlots = force.getNumParameters();
    std::unordered_map<long long, std::pair<int, int> > pairOwner;  // (kind, index) of the pair's definition
    for (int k = 0; k < HessianForce::NumTermKinds; k++) {
        HessianForce::TermKind kind = (HessianForce::TermKind) k;
        const vector<HessianForceInternals::Term>& list = HessianForceInternals::getTerms(force, kind);
        for (int i = 0; i < (int) list.size(); i++) {
            const HessianForceInternals::Term& t = list[i];
            for (int a = 0; a < HessianForce::MaxTermParticles && t.particles[a] >= 0; a++) {
                std::ostringstream msg;
                if (t.particles[a] >= n) {
                    msg << HessianForce::termKindName(kind) << " " << i << " uses particle " << t.particles[a]
                        << " but the force has " << n << " particles";
                    fail(HessianForceException::Index, msg.str());
                }
                if (moleculeOf[t.particles[a]] != moleculeOf[t.particles[0]]) {
                    msg << HessianForce::termKindName(kind) << " " << i << " joins particle " << t.particles[0]
                        << " (molecule " << moleculeOf[t.particles[0]] << ") and particle " << t.particles[a]
                        << " (molecule " << moleculeOf[t.particles[a]] << ")";
                    fail(HessianForceException::Topology, msg.str());
                }
            }
            for (int s = 0; s < 6; s++)
                if (t.slots[s] >= numSlots) {
                    std::ostringstream msg;
                    msg << HessianForce::termKindName(kind) << " " << i << " uses slot " << t.slots[s]
                        << " but the table has " << numSlots << " slots";
                    fail(HessianForceException::Index, msg.str());
                }
            if (HessianForceInternals::isPairKind(kind)) {
                int a = std::min(t.particles[0], t.particles[1]), b = std::max(t.particles[0], t.particles[1]);
                auto inserted = pairOwner.emplace((long long) a * n + b, std::make_pair(k, i));
                if (!inserted.second) {
                    std::ostringstream msg;
                    msg << "the pair (" << a << ", " << b << ") is both "
                        << HessianForce::termKindName((HessianForce::TermKind) inserted.first->second.first) << " "
                        << inserted.first->second.second << " and " << HessianForce::termKindName(kind) << " " << i;
                    fail(HessianForceException::Topology, msg.str());
                }
            }
        }
    }
    validateReducedParticles(force, moleculeOf);
}

void HessianForceImpl::validateReducedParticles(const HessianForce& force, const vector<int>& moleculeOf) {
    const int n = (int) moleculeOf.size();
    const vector<HessianForceInternals::ReducedParticle>& reduced = HessianForceInternals::getReducedParticles(force);
    vector<int> reducedBy(n, -1);  // the reduced particle that moves each particle
    for (int r = 0; r < (int) reduced.size(); r++) {
        const int h = reduced[r].particle, p = reduced[r].partner;
        std::ostringstream msg;
        msg << "reduced particle " << r << " (particle " << h << ", partner " << p << ")";
        if (h >= n || p >= n) {
            msg << " uses a particle out of range (the force has " << n << " particles)";
            fail(HessianForceException::Index, msg.str());
        }
        if (moleculeOf[h] != moleculeOf[p]) {
            msg << " joins molecules " << moleculeOf[h] << " and " << moleculeOf[p];
            fail(HessianForceException::Topology, msg.str());
        }
        if (reducedBy[h] != -1) {
            msg << " reduces particle " << h << " again (reduced particle " << reducedBy[h] << " does already)";
            fail(HessianForceException::Topology, msg.str());
        }
        reducedBy[h] = r;
    }
    for (int r = 0; r < (int) reduced.size(); r++)
        if (reducedBy[reduced[r].partner] != -1) {
            std::ostringstream msg;
            msg << "reduced particle " << r << " (particle " << reduced[r].particle << ") has partner "
                << reduced[r].partner << ", which is itself reduced (reduced particle " << reducedBy[reduced[r].partner]
                << "); a partner must not move";
            fail(HessianForceException::Topology, msg.str());
        }
}

void HessianForceImpl::initialize(ContextImpl& context) {
    const System& system = context.getSystem();
    validate(owner, system.getNumParticles());
    kernel = context.getPlatform().createKernel(CalcHessianForceKernel::Name(), context);
    kernel.getAs<CalcHessianForceKernel>().initialize(system, owner);
    rememberDefinition();
}

double HessianForceImpl::calcForcesAndEnergy(ContextImpl& context, bool includeForces, bool includeEnergy, int groups) {
    if ((groups & (1 << owner.getForceGroup())) != 0)
        return kernel.getAs<CalcHessianForceKernel>().execute(context, includeForces, includeEnergy);
    return 0.0;
}

bool HessianForceImpl::sameDefinitionAsKernel() const {
    for (int k = 0; k < HessianForce::NumTermKinds; k++) {
        const vector<HessianForceInternals::Term>& now = HessianForceInternals::getTerms(owner, (HessianForce::TermKind) k);
        if (now.size() != kernelTerms[k].size() ||
            (!now.empty() &&
             std::memcmp(now.data(), kernelTerms[k].data(), now.size() * sizeof(HessianForceInternals::Term)) != 0))
            return false;
    }
    return HessianForceInternals::getParticleSlots(owner) == kernelParticleSlots &&
           HessianForceInternals::getExplicitMolecules(owner) == kernelMolecules &&
           HessianForceInternals::getReducedParticles(owner) == kernelReducedParticles &&
           (int) owner.getCombiningRule() == kernelCombiningRule && owner.getCoulomb14Scale() == kernel14Scales[0] &&
           owner.getLJ14Scale() == kernel14Scales[1];
}

void HessianForceImpl::rememberDefinition() {
    for (int k = 0; k < HessianForce::NumTermKinds; k++)
        kernelTerms[k] = HessianForceInternals::getTerms(owner, (HessianForce::TermKind) k);
    kernelParticleSlots = HessianForceInternals::getParticleSlots(owner);
    kernelMolecules = HessianForceInternals::getExplicitMolecules(owner);
    kernelReducedParticles = HessianForceInternals::getReducedParticles(owner);
    kernelCombiningRule = (int) owner.getCombiningRule();
    kernel14Scales[0] = owner.getCoulomb14Scale();
    kernel14Scales[1] = owner.getLJ14Scale();
}

void HessianForceImpl::updateParametersInContext(ContextImpl& context) {
    CalcHessianForceKernel& k = kernel.getAs<CalcHessianForceKernel>();
    if (sameDefinitionAsKernel()) {
        k.copyParameterTableToContext(context, owner.getParameters());
    } else {
        validate(owner, context.getSystem().getNumParticles());
        if (HessianForceInternals::getExplicitMolecules(owner) != kernelMolecules)
            fail(HessianForceException::Topology, "updateParametersInContext cannot change the molecules; "
                                                  "create a new Context instead");
        k.copyParametersToContext(context, owner);
        rememberDefinition();
    }
    context.systemChanged();
}

void HessianForceImpl::getHessianBlocks(ContextImpl& context, vector<double>& blocks) {
    kernel.getAs<CalcHessianForceKernel>().computeHessianBlocks(context, blocks);
}

void HessianForceImpl::getParameterDerivatives(ContextImpl& context, vector<double>& derivatives) {
    kernel.getAs<CalcHessianForceKernel>().computeParameterDerivatives(context, derivatives);
}

/** Index of the first NaN or infinite entry of v[0..n), or -1. Chunks are tested first with a
 *  branch-free comparison the compiler vectorises: G can hold millions of entries. */
static long long firstNonFinite(const double* v, long long n) {
    const long long chunk = 4096;
    for (long long start = 0; start < n; start += chunk) {
        const long long end = std::min(n, start + chunk);
        bool bad = false;
        for (long long k = start; k < end; k++)
            bad |= !(std::fabs(v[k]) <= DBL_MAX);
        if (bad)
            for (long long k = start; k < end; k++)
                if (!std::isfinite(v[k]))
                    return k;
    }
    return -1;
}

vector<vector<int> > HessianForceImpl::kernelMoleculeParticles(const ContextImpl& context) const {
    if (!kernelMolecules.empty())
        return kernelMolecules;
    vector<int> all(context.getSystem().getNumParticles());
    for (int i = 0; i < (int) all.size(); i++)
        all[i] = i;
    return vector<vector<int> >(1, all);
}

void HessianForceImpl::getHessianContractionDerivatives(ContextImpl& context, const vector<double>& adjoint,
                                                        vector<double>& derivatives) {
    const vector<vector<int> > molecules = kernelMoleculeParticles(context);
    long long expected = 0;
    for (const vector<int>& m : molecules)
        expected += 9LL * (long long) m.size() * (long long) m.size();
    if ((long long) adjoint.size() != expected) {
        std::ostringstream msg;
        msg << "the adjoint matrix G has " << adjoint.size() << " entries but the Hessian blocks of this Context have "
            << expected << " (sum over molecules of (3 n_m)^2, the layout of getHessianBlocks)";
        fail(HessianForceException::Size, msg.str());
    }
    const long long bad = firstNonFinite(adjoint.data(), expected);
    if (bad >= 0) {
        long long offset = 0;
        int m = 0;
        while (offset + 9LL * (long long) molecules[m].size() * (long long) molecules[m].size() <= bad) {
            offset += 9LL * (long long) molecules[m].size() * (long long) molecules[m].size();
            m++;
        }
        const long long dim = 3LL * (long long) molecules[m].size(), row = (bad - offset) / dim, col = (bad - offset) % dim;
        static const char xyz[] = "xyz";
        std::ostringstream msg;
        msg << "the adjoint matrix G is " << adjoint[bad] << " at entry " << bad << ": molecule " << m << ", row "
            << row << " (particle " << molecules[m][row / 3] << " " << xyz[row % 3] << "), column " << col
            << " (particle " << molecules[m][col / 3] << " " << xyz[col % 3] << ") of its block; G must be finite";
        fail(HessianForceException::Value, msg.str());
    }
    kernel.getAs<CalcHessianForceKernel>().computeHessianContractionDerivatives(context, adjoint, derivatives);
}

void HessianForceImpl::getGradientContractionDerivatives(ContextImpl& context, const vector<double>& y,
                                                         vector<double>& derivatives) {
    const long long expected = 3LL * context.getSystem().getNumParticles();
    if ((long long) y.size() != expected) {
        std::ostringstream msg;
        msg << "the vector y has " << y.size() << " entries but must have " << expected
            << " (x, y, z of each of the System's " << expected / 3 << " particles)";
        fail(HessianForceException::Size, msg.str());
    }
    const long long k = firstNonFinite(y.data(), expected);
    if (k >= 0) {
        static const char xyz[] = "xyz";
        std::ostringstream msg;
        msg << "the vector y is " << y[k] << " at entry " << k << " (particle " << k / 3 << " " << xyz[k % 3]
            << "); y must be finite";
        fail(HessianForceException::Value, msg.str());
    }
    kernel.getAs<CalcHessianForceKernel>().computeGradientContractionDerivatives(context, y, derivatives);
}

void HessianForceImpl::getMoleculeEnergies(ContextImpl& context, vector<double>& energies) {
    kernel.getAs<CalcHessianForceKernel>().computeMoleculeEnergies(context, energies);
}

void HessianForceImpl::getMoleculeEnergyDerivatives(ContextImpl& context, const vector<double>& weights,
                                                    vector<double>& derivatives) {
    const long long expected = (long long) kernelMoleculeParticles(context).size();
    if ((long long) weights.size() != expected) {
        std::ostringstream msg;
        msg << "the molecule weights have " << weights.size() << " entries but this Context's force has " << expected
            << " molecules (one weight dL/dE_m per molecule)";
        fail(HessianForceException::Size, msg.str());
    }
    const long long m = firstNonFinite(weights.data(), expected);
    if (m >= 0) {
        std::ostringstream msg;
        msg << "the weight of molecule " << m << " is " << weights[m] << "; molecule weights must be finite";
        fail(HessianForceException::Value, msg.str());
    }
    kernel.getAs<CalcHessianForceKernel>().computeMoleculeEnergyDerivatives(context, weights, derivatives);
}

// ---- Hessian-space objectives ------------------------------------------------------------------

void HessianForceImpl::setHessianObjective(ContextImpl& context, const HessianObjectiveSpec& spec) {
    validateObjective(spec, kernelMoleculeParticles(context));
    kernel.getAs<CalcHessianForceKernel>().setHessianObjective(context, spec);
    hasObjective = true;
    objectiveResiduals = spec.numResiduals();
    objectiveFrequencyTargets = spec.numFrequencyTargets();
}

double HessianForceImpl::computeHessianObjective(ContextImpl& context, vector<double>* dLdslot, vector<double>* residuals) {
    if (!hasObjective)
        fail(HessianForceException::Value, "no Hessian objective is set in this Context (call setHessianObjective first)");
    const double loss = kernel.getAs<CalcHessianForceKernel>().computeHessianObjective(context, dLdslot, residuals);
    if (dLdslot != nullptr) /* the slots not listed: 0, whatever the platform left there */
        for (size_t s = 0; s < objectiveGradientSlots.size() && s < dLdslot->size(); s++)
            if (!objectiveGradientSlots[s])
                (*dLdslot)[s] = 0.0;
    return loss;
}

void HessianForceImpl::getHessianObjectivePairing(ContextImpl& context, vector<int>& modes) {
    if (!hasObjective)
        fail(HessianForceException::Value, "no Hessian objective is set in this Context (call setHessianObjective first)");
    kernel.getAs<CalcHessianForceKernel>().getHessianObjectivePairing(context, modes);
}

/** Throws (Size, Value) unless slots are distinct and in 0..numSlots-1; what names the caller. */
static void checkSlotList(const vector<int>& slots, int numSlots, const char* what) {
    vector<char> seen((size_t) numSlots, 0);
    for (size_t k = 0; k < slots.size(); k++) {
        if (slots[k] < 0 || slots[k] >= numSlots)
            fail(HessianForceException::Size, std::string(what) + ": slot " + std::to_string(slots[k]) + " (entry " +
                                                  std::to_string(k) + ") is outside 0.." + std::to_string(numSlots - 1));
        if (seen[(size_t) slots[k]]++)
            fail(HessianForceException::Value, std::string(what) + ": slot " + std::to_string(slots[k]) +
                                                   " is listed twice (entry " + std::to_string(k) + ")");
    }
}

void HessianForceImpl::setHessianObjectiveGradientSlots(ContextImpl& context, const vector<int>& slots) {
    checkSlotList(slots, owner.getNumParameters(), "the Hessian objective's gradient slots");
    kernel.getAs<CalcHessianForceKernel>().setHessianObjectiveGradientSlots(context, slots);
    objectiveGradientSlots.assign(slots.empty() ? 0 : (size_t) owner.getNumParameters(), 0);
    for (int s : slots)
        objectiveGradientSlots[(size_t) s] = 1;
}

void HessianForceImpl::computeHessianObjectiveJacobian(ContextImpl& context, const vector<int>& molecules,
                                                       const vector<int>& slots, vector<double>& residuals,
                                                       vector<double>& jacobian) {
    if (!hasObjective)
        fail(HessianForceException::Value, "no Hessian objective is set in this Context (call setHessianObjective first)");
    const int n = (int) kernelMoleculeParticles(context).size();
    if (molecules.empty())
        fail(HessianForceException::Size, "the Hessian objective's Jacobian: the molecule list is empty");
    vector<char> listed((size_t) n, 0);
    for (size_t k = 0; k < molecules.size(); k++) {
        const int m = molecules[k];
        if (m < 0 || m >= n)
            fail(HessianForceException::Size, "the Hessian objective's Jacobian: molecule " + std::to_string(m) +
                                                  " (entry " + std::to_string(k) + ") is outside 0.." +
                                                  std::to_string(n - 1));
        if (listed[(size_t) m]++)
            fail(HessianForceException::Value, "the Hessian objective's Jacobian: molecule " + std::to_string(m) +
                                                   " is listed twice (entry " + std::to_string(k) + ")");
    }
    checkSlotList(slots, owner.getNumParameters(), "the Hessian objective's Jacobian");
    kernel.getAs<CalcHessianForceKernel>().computeHessianObjectiveJacobian(context, molecules, slots, residuals, jacobian);
}
