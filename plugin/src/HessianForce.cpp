#include "HessianForce.h"
#include "HessianForceException.h"
#include "internal/HessianForceImpl.h"
#include "openmm/internal/ContextImpl.h"
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

namespace {

/** Arity of each term kind: particles, slots and distance scales; whether its slots may be NoSlot (= zero). */
struct KindShape {
    int numParticles, numSlots;
    bool slotsOptional;
    int numScales;
};
const KindShape kindShapes[HessianForce::NumTermKinds] = {
    {2, 2, false, 0},  // Bond: k, r0
    {2, 2, false, 0},  // UreyBradley: k, r0
    {3, 2, false, 0},  // Angle: k, theta0
    {4, 2, false, 0},  // PeriodicTorsion: k, phase
    {4, 4, true, 0},   // OPLSTorsion: V1..V4
    {4, 6, true, 0},   // RBTorsion: C0..C5
    {4, 2, false, 0},  // PeriodicImproper: k, phase
    {4, 2, false, 0},  // HarmonicImproper: k, phi0
    {2, 0, true, 0},   // Exclusion
    {2, 0, true, 0},   // Pair14
    {2, 3, true, 0},   // ExplicitPair: chargeProd, sigma, epsilon
    {2, 2, false, 1},  // MM3Bond: k, r0; s
    {3, 2, false, 0},  // MM3Angle: k, theta0
    {2, 3, false, 0},  // MM3Pair: R, epsilon, chargeProd
    {3, 4, false, 2},  // MM3StretchBend: k, r0a, r0b, theta0; sa, sb
    {5, 3, false, 0},  // MM3BendBend: k, theta01, theta02
    {4, 2, false, 1},  // MM3TorsionStretch: k, r0; s
    {4, 3, false, 2},  // MM3SwitchedPair: R, epsilon, chargeProd; s1, s2 (particles p1, p2, anchor1, anchor2)
    {2, 2, false, 0},  // HydrogenBond: C, D
};

[[noreturn]] void fail(HessianForceException::Code code, const std::string& message) {
    throw HessianForceException(code, "HessianForce: " + message);
}

void checkFinite(double value, const char* what) {
    if (!std::isfinite(value)) {
        std::ostringstream m;
        m << what << " is " << value << " (parameters must be finite)";
        fail(HessianForceException::Value, m.str());
    }
}

} // namespace

HessianForce::HessianForce() : combiningRule(Geometric), coulomb14Scale(0.5), lj14Scale(0.5) {
}

const char* HessianForce::termKindName(TermKind kind) {
    static const char* names[NumTermKinds] = {"bond", "Urey-Bradley term", "angle", "periodic torsion",
        "OPLS torsion", "RB torsion", "periodic improper", "harmonic improper", "exclusion", "1-4 pair",
        "explicit pair", "MM3* bond", "MM3* angle", "MM3* pair", "MM3* stretch-bend", "MM3* bend-bend",
        "MM3* torsion-stretch", "MM3* switched pair", "hydrogen bond"};
    return (kind >= 0 && kind < NumTermKinds) ? names[kind] : "unknown term";
}

int HessianForce::getTermNumParticles(TermKind kind) {
    return (kind >= 0 && kind < NumTermKinds) ? kindShapes[kind].numParticles : 0;
}

int HessianForce::getTermNumDistanceScales(TermKind kind) {
    return (kind >= 0 && kind < NumTermKinds) ? kindShapes[kind].numScales : 0;
}

int HessianForce::getTermNumSlots(TermKind kind) {
    return (kind >= 0 && kind < NumTermKinds) ? kindShapes[kind].numSlots : 0;
}

bool HessianForce::termHasPeriodicity(TermKind kind) {
    return kind == PeriodicTorsion || kind == PeriodicImproper;
}

// ---- parameter table --------------------------------------------------------------------------

int HessianForce::addParameter(double value) {
    std::ostringstream what;
    what << "parameter slot " << parameters.size();
    checkFinite(value, what.str().c_str());
    parameters.push_back(value);
    return (int) parameters.size() - 1;
}

int HessianForce::getNumParameters() const {
    return (int) parameters.size();
}

static void checkSlotIndex(int slot, int numSlots, const std::string& what = "") {
    if (slot < 0 || slot >= numSlots) {
        std::ostringstream m;
        m << what << (what.empty() ? "" : ": ") << "parameter slot " << slot << " is out of range (the table has " << numSlots << " slots)";
        fail(HessianForceException::Index, m.str());
    }
}

double HessianForce::getParameter(int slot) const {
    checkSlotIndex(slot, getNumParameters());
    return parameters[slot];
}

void HessianForce::setParameter(int slot, double value) {
    checkSlotIndex(slot, getNumParameters());
    std::ostringstream what;
    what << "parameter slot " << slot;
    checkFinite(value, what.str().c_str());
    parameters[slot] = value;
}

void HessianForce::setParameters(const vector<double>& values) {
    if (values.size() != parameters.size()) {
        std::ostringstream m;
        m << "setParameters got " << values.size() << " values for a table of " << parameters.size() << " slots";
        fail(HessianForceException::Size, m.str());
    }
    for (size_t i = 0; i < values.size(); i++)
        if (!std::isfinite(values[i])) { // the message only on failure: a stream per slot cost a third of an evaluation
            std::ostringstream what;
            what << "parameter slot " << i;
            checkFinite(values[i], what.str().c_str());
        }
    parameters = values;
}

const vector<double>& HessianForce::getParameters() const {
    return parameters;
}

// ---- particles and molecules --------------------------------------------------------------------

static void checkOptionalSlot(int slot, int numSlots, const std::string& what) {
    if (slot < HessianForce::NoSlot || slot >= numSlots) {
        std::ostringstream m;
        m << what << ": parameter slot " << slot << " is out of range (the table has " << numSlots << " slots)";
        fail(HessianForceException::Index, m.str());
    }
}

int HessianForce::addParticle(int chargeSlot, int sigmaSlot, int epsilonSlot) {
    int index = getNumParticles();
    particleSlots.insert(particleSlots.end(), {NoSlot, NoSlot, NoSlot});
    try {
        setParticleParameters(index, chargeSlot, sigmaSlot, epsilonSlot);
    } catch (...) {
        particleSlots.resize(3 * index);
        throw;
    }
    return index;
}

int HessianForce::getNumParticles() const {
    return (int) particleSlots.size() / 3;
}

static void checkParticleIndex(int index, int numParticles, const char* what) {
    if (index < 0 || index >= numParticles) {
        std::ostringstream m;
        m << what << " " << index << " is out of range (the force has " << numParticles << " particles)";
        fail(HessianForceException::Index, m.str());
    }
}

void HessianForce::getParticleParameters(int index, int& chargeSlot, int& sigmaSlot, int& epsilonSlot) const {
    checkParticleIndex(index, getNumParticles(), "particle");
    chargeSlot = particleSlots[3 * index];
    sigmaSlot = particleSlots[3 * index + 1];
    epsilonSlot = particleSlots[3 * index + 2];
}

void HessianForce::setParticleParameters(int index, int chargeSlot, int sigmaSlot, int epsilonSlot) {
    checkParticleIndex(index, getNumParticles(), "particle");
    std::ostringstream what;
    what << "particle " << index;
    int slots[3] = {chargeSlot, sigmaSlot, epsilonSlot};
    for (int s : slots)
        checkOptionalSlot(s, getNumParameters(), what.str());
    std::copy(slots, slots + 3, particleSlots.begin() + 3 * index);
}

int HessianForce::addMolecule(const vector<int>& particles) {
    if (particles.empty())
        fail(HessianForceException::Size, "addMolecule got an empty particle list");
    for (int p : particles)
        if (p < 0) {
            std::ostringstream m;
            m << "molecule " << molecules.size() << " lists particle " << p;
            fail(HessianForceException::Index, m.str());
        }
    molecules.push_back(particles);
    return (int) molecules.size() - 1;
}

int HessianForce::getNumMolecules() const {
    if (!molecules.empty())
        return (int) molecules.size();
    return getNumParticles() > 0 ? 1 : 0;
}

vector<int> HessianForce::getMoleculeParticles(int index) const {
    if (index < 0 || index >= getNumMolecules()) {
        std::ostringstream m;
        m << "molecule " << index << " is out of range (the force has " << getNumMolecules() << " molecules)";
        fail(HessianForceException::Index, m.str());
    }
    if (!molecules.empty())
        return molecules[index];
    vector<int> all(getNumParticles());
    for (int i = 0; i < (int) all.size(); i++)
        all[i] = i;
    return all;
}

bool HessianForce::hasExplicitMolecules() const {
    return !molecules.empty();
}

// ---- terms: one storage, one checker for every kind ---------------------------------------------

/**
 * Whether particle entries i > j of a term of this kind may name one particle: a bend-bend's
 * second angle may reuse one outer particle of the first (entries 3, 4 against 0, 2), once; a
 * switched pair's anchors (entries 2, 3) may be any of its particles.
 */
static bool mayRepeat(HessianForce::TermKind kind, int i, int j, int repeatsSoFar) {
    if (kind == HessianForce::MM3SwitchedPair)
        return i >= 2;
    return kind == HessianForce::MM3BendBend && (i == 3 || i == 4) && (j == 0 || j == 2) && repeatsSoFar == 0;
}

void HessianForce::setTerm(TermKind kind, int index, const int* particles, int numParticles, const int* slots,
                           int numSlots, int periodicity, const double* distanceScales) {
    const KindShape& shape = kindShapes[kind];
    std::ostringstream what;
    what << termKindName(kind) << " " << index;
    if (numParticles != shape.numParticles || numSlots != shape.numSlots) {
        std::ostringstream m;
        m << what.str() << " needs " << shape.numParticles << " particles and " << shape.numSlots << " slots, got "
          << numParticles << " and " << numSlots;
        fail(HessianForceException::Size, m.str());
    }
    Term term;
    std::fill(term.particles, term.particles + MaxTermParticles, -1);
    std::fill(term.slots, term.slots + 6, NoSlot);
    std::fill(term.distanceScales, term.distanceScales + 2, 1.0);
    int repeats = 0;
    for (int i = 0; i < numParticles; i++) {
        if (particles[i] < 0) {
            std::ostringstream m;
            m << what.str() << " uses particle " << particles[i];
            fail(HessianForceException::Index, m.str());
        }
        for (int j = 0; j < i; j++)
            if (particles[i] == particles[j]) {
                if (mayRepeat(kind, i, j, repeats)) {
                    repeats++;
                    continue;
                }
                std::ostringstream m;
                m << what.str() << " uses particle " << particles[i] << " twice";
                if (kind == MM3BendBend)
                    m << " (its angles share the centre and at most one outer particle)";
                fail(HessianForceException::Index, m.str());
            }
        term.particles[i] = particles[i];
    }
    for (int i = 0; i < shape.numScales; i++) {
        const double scale = distanceScales != nullptr ? distanceScales[i] : 1.0;
        if (!std::isfinite(scale) || !(scale > 0.0)) {
            std::ostringstream m;
            m << what.str() << " has distance scale " << scale << " (must be finite and > 0)";
            fail(HessianForceException::Value, m.str());
        }
        term.distanceScales[i] = scale;
    }
    for (int i = 0; i < numSlots; i++) {
        if (shape.slotsOptional)
            checkOptionalSlot(slots[i], getNumParameters(), what.str());
        else
            checkSlotIndex(slots[i], getNumParameters(), what.str());
        term.slots[i] = slots[i];
    }
    bool periodic = termHasPeriodicity(kind);
    if (periodic && periodicity < 1) {
        std::ostringstream m;
        m << what.str() << " has periodicity " << periodicity << " (must be >= 1)";
        fail(HessianForceException::Value, m.str());
    }
    term.periodicity = periodic ? periodicity : 0;
    vector<Term>& list = terms[kind];
    if (index == (int) list.size())
        list.push_back(term);
    else
        list[index] = term;
}

int HessianForce::addTerm(TermKind kind, const int* particles, int numParticles, const int* slots, int numSlots,
                          int periodicity, const double* distanceScales) {
    int index = (int) terms[kind].size();
    setTerm(kind, index, particles, numParticles, slots, numSlots, periodicity, distanceScales);
    return index;
}

const HessianForce::Term& HessianForce::getTerm(TermKind kind, int index) const {
    if (index < 0 || index >= (int) terms[kind].size()) {
        std::ostringstream m;
        m << termKindName(kind) << " " << index << " is out of range (the force has " << terms[kind].size() << ")";
        fail(HessianForceException::Index, m.str());
    }
    return terms[kind][index];
}

static void checkTermIndex(int index, size_t size, HessianForce::TermKind kind) {
    if (index < 0 || index >= (int) size) {
        std::ostringstream m;
        m << HessianForce::termKindName(kind) << " " << index << " is out of range (the force has " << size << ")";
        fail(HessianForceException::Index, m.str());
    }
}

// Two-particle, two-slot terms.
#define HF_PAIR_TERM_METHODS(Name, Kind)                                                                   \
    int HessianForce::add##Name(int p1, int p2, int kSlot, int r0Slot) {                                  \
        int p[2] = {p1, p2}, s[2] = {kSlot, r0Slot};                                                      \
        return addTerm(Kind, p, 2, s, 2, 0);                                                              \
    }                                                                                                     \
    void HessianForce::get##Name##Parameters(int index, int& p1, int& p2, int& kSlot, int& r0Slot) const { \
        const Term& t = getTerm(Kind, index);                                                             \
        p1 = t.particles[0]; p2 = t.particles[1]; kSlot = t.slots[0]; r0Slot = t.slots[1];                \
    }                                                                                                     \
    void HessianForce::set##Name##Parameters(int index, int p1, int p2, int kSlot, int r0Slot) {          \
        checkTermIndex(index, terms[Kind].size(), Kind);                                                  \
        int p[2] = {p1, p2}, s[2] = {kSlot, r0Slot};                                                      \
        setTerm(Kind, index, p, 2, s, 2, 0);                                                              \
    }

HF_PAIR_TERM_METHODS(Bond, Bond)
HF_PAIR_TERM_METHODS(UreyBradley, UreyBradley)
HF_PAIR_TERM_METHODS(HydrogenBond, HydrogenBond) // slots C, D in place of k, r0
int HessianForce::getNumHydrogenBonds() const { return (int) terms[HydrogenBond].size(); }

int HessianForce::addMM3Bond(int p1, int p2, int kSlot, int r0Slot, double distanceScale) {
    int p[2] = {p1, p2}, s[2] = {kSlot, r0Slot};
    return addTerm(MM3Bond, p, 2, s, 2, 0, &distanceScale);
}
void HessianForce::getMM3BondParameters(int index, int& p1, int& p2, int& kSlot, int& r0Slot) const {
    double distanceScale;
    getMM3BondParameters(index, p1, p2, kSlot, r0Slot, distanceScale);
}
void HessianForce::getMM3BondParameters(int index, int& p1, int& p2, int& kSlot, int& r0Slot, double& distanceScale) const {
    const Term& t = getTerm(MM3Bond, index);
    p1 = t.particles[0]; p2 = t.particles[1]; kSlot = t.slots[0]; r0Slot = t.slots[1];
    distanceScale = t.distanceScales[0];
}
void HessianForce::setMM3BondParameters(int index, int p1, int p2, int kSlot, int r0Slot, double distanceScale) {
    checkTermIndex(index, terms[MM3Bond].size(), MM3Bond);
    int p[2] = {p1, p2}, s[2] = {kSlot, r0Slot};
    setTerm(MM3Bond, index, p, 2, s, 2, 0, &distanceScale);
}

int HessianForce::getNumBonds() const { return (int) terms[Bond].size(); }
int HessianForce::getNumUreyBradleys() const { return (int) terms[UreyBradley].size(); }
int HessianForce::getNumMM3Bonds() const { return (int) terms[MM3Bond].size(); }

// Three-particle, two-slot terms.
#define HF_ANGLE_TERM_METHODS(Name, Kind)                                                                  \
    int HessianForce::add##Name(int p1, int p2, int p3, int kSlot, int theta0Slot) {                       \
        int p[3] = {p1, p2, p3}, s[2] = {kSlot, theta0Slot};                                              \
        return addTerm(Kind, p, 3, s, 2, 0);                                                              \
    }                                                                                                     \
    void HessianForce::get##Name##Parameters(int index, int& p1, int& p2, int& p3, int& kSlot,             \
                                             int& theta0Slot) const {                                     \
        const Term& t = getTerm(Kind, index);                                                             \
        p1 = t.particles[0]; p2 = t.particles[1]; p3 = t.particles[2];                                    \
        kSlot = t.slots[0]; theta0Slot = t.slots[1];                                                      \
    }                                                                                                     \
    void HessianForce::set##Name##Parameters(int index, int p1, int p2, int p3, int kSlot, int theta0Slot) { \
        checkTermIndex(index, terms[Kind].size(), Kind);                                                  \
        int p[3] = {p1, p2, p3}, s[2] = {kSlot, theta0Slot};                                              \
        setTerm(Kind, index, p, 3, s, 2, 0);                                                              \
    }

HF_ANGLE_TERM_METHODS(Angle, Angle)
HF_ANGLE_TERM_METHODS(MM3Angle, MM3Angle)

int HessianForce::getNumAngles() const { return (int) terms[Angle].size(); }
int HessianForce::getNumMM3Angles() const { return (int) terms[MM3Angle].size(); }

// The MM3* cross terms.
int HessianForce::addMM3StretchBend(int p1, int p2, int p3, int kSlot, int r0aSlot, int r0bSlot, int theta0Slot,
                                    double scaleA, double scaleB) {
    int p[3] = {p1, p2, p3}, s[4] = {kSlot, r0aSlot, r0bSlot, theta0Slot};
    double scales[2] = {scaleA, scaleB};
    return addTerm(MM3StretchBend, p, 3, s, 4, 0, scales);
}
void HessianForce::getMM3StretchBendParameters(int index, int& p1, int& p2, int& p3, int& kSlot, int& r0aSlot,
                                               int& r0bSlot, int& theta0Slot, double& scaleA, double& scaleB) const {
    const Term& t = getTerm(MM3StretchBend, index);
    p1 = t.particles[0]; p2 = t.particles[1]; p3 = t.particles[2];
    kSlot = t.slots[0]; r0aSlot = t.slots[1]; r0bSlot = t.slots[2]; theta0Slot = t.slots[3];
    scaleA = t.distanceScales[0]; scaleB = t.distanceScales[1];
}
void HessianForce::setMM3StretchBendParameters(int index, int p1, int p2, int p3, int kSlot, int r0aSlot, int r0bSlot,
                                               int theta0Slot, double scaleA, double scaleB) {
    checkTermIndex(index, terms[MM3StretchBend].size(), MM3StretchBend);
    int p[3] = {p1, p2, p3}, s[4] = {kSlot, r0aSlot, r0bSlot, theta0Slot};
    double scales[2] = {scaleA, scaleB};
    setTerm(MM3StretchBend, index, p, 3, s, 4, 0, scales);
}
int HessianForce::getNumMM3StretchBends() const { return (int) terms[MM3StretchBend].size(); }

int HessianForce::addMM3BendBend(int p1, int centre, int p3, int p4, int p5, int kSlot, int theta01Slot, int theta02Slot) {
    int p[5] = {p1, centre, p3, p4, p5}, s[3] = {kSlot, theta01Slot, theta02Slot};
    return addTerm(MM3BendBend, p, 5, s, 3, 0);
}
void HessianForce::getMM3BendBendParameters(int index, int& p1, int& centre, int& p3, int& p4, int& p5, int& kSlot,
                                            int& theta01Slot, int& theta02Slot) const {
    const Term& t = getTerm(MM3BendBend, index);
    p1 = t.particles[0]; centre = t.particles[1]; p3 = t.particles[2]; p4 = t.particles[3]; p5 = t.particles[4];
    kSlot = t.slots[0]; theta01Slot = t.slots[1]; theta02Slot = t.slots[2];
}
void HessianForce::setMM3BendBendParameters(int index, int p1, int centre, int p3, int p4, int p5, int kSlot,
                                            int theta01Slot, int theta02Slot) {
    checkTermIndex(index, terms[MM3BendBend].size(), MM3BendBend);
    int p[5] = {p1, centre, p3, p4, p5}, s[3] = {kSlot, theta01Slot, theta02Slot};
    setTerm(MM3BendBend, index, p, 5, s, 3, 0);
}
int HessianForce::getNumMM3BendBends() const { return (int) terms[MM3BendBend].size(); }

int HessianForce::addMM3TorsionStretch(int p1, int p2, int p3, int p4, int kSlot, int r0Slot, double distanceScale) {
    int p[4] = {p1, p2, p3, p4}, s[2] = {kSlot, r0Slot};
    return addTerm(MM3TorsionStretch, p, 4, s, 2, 0, &distanceScale);
}
void HessianForce::getMM3TorsionStretchParameters(int index, int& p1, int& p2, int& p3, int& p4, int& kSlot,
                                                  int& r0Slot, double& distanceScale) const {
    const Term& t = getTerm(MM3TorsionStretch, index);
    p1 = t.particles[0]; p2 = t.particles[1]; p3 = t.particles[2]; p4 = t.particles[3];
    kSlot = t.slots[0]; r0Slot = t.slots[1]; distanceScale = t.distanceScales[0];
}
void HessianForce::setMM3TorsionStretchParameters(int index, int p1, int p2, int p3, int p4, int kSlot, int r0Slot,
                                                  double distanceScale) {
    checkTermIndex(index, terms[MM3TorsionStretch].size(), MM3TorsionStretch);
    int p[4] = {p1, p2, p3, p4}, s[2] = {kSlot, r0Slot};
    setTerm(MM3TorsionStretch, index, p, 4, s, 2, 0, &distanceScale);
}
int HessianForce::getNumMM3TorsionStretches() const { return (int) terms[MM3TorsionStretch].size(); }

int HessianForce::addMM3SwitchedPair(int p1, int p2, int anchor1, int anchor2, int radiusSlot, int epsilonSlot,
                                     int chargeProdSlot, double switchScale1, double switchScale2) {
    int p[4] = {p1, p2, anchor1, anchor2}, s[3] = {radiusSlot, epsilonSlot, chargeProdSlot};
    double scales[2] = {switchScale1, switchScale2};
    return addTerm(MM3SwitchedPair, p, 4, s, 3, 0, scales);
}
void HessianForce::getMM3SwitchedPairParameters(int index, int& p1, int& p2, int& anchor1, int& anchor2,
                                                int& radiusSlot, int& epsilonSlot, int& chargeProdSlot,
                                                double& switchScale1, double& switchScale2) const {
    const Term& t = getTerm(MM3SwitchedPair, index);
    p1 = t.particles[0]; p2 = t.particles[1]; anchor1 = t.particles[2]; anchor2 = t.particles[3];
    radiusSlot = t.slots[0]; epsilonSlot = t.slots[1]; chargeProdSlot = t.slots[2];
    switchScale1 = t.distanceScales[0]; switchScale2 = t.distanceScales[1];
}
void HessianForce::setMM3SwitchedPairParameters(int index, int p1, int p2, int anchor1, int anchor2, int radiusSlot,
                                                int epsilonSlot, int chargeProdSlot, double switchScale1,
                                                double switchScale2) {
    checkTermIndex(index, terms[MM3SwitchedPair].size(), MM3SwitchedPair);
    int p[4] = {p1, p2, anchor1, anchor2}, s[3] = {radiusSlot, epsilonSlot, chargeProdSlot};
    double scales[2] = {switchScale1, switchScale2};
    setTerm(MM3SwitchedPair, index, p, 4, s, 3, 0, scales);
}
int HessianForce::getNumMM3SwitchedPairs() const { return (int) terms[MM3SwitchedPair].size(); }

// Four-particle periodic terms (torsions and impropers share the form).
#define HF_PERIODIC_TERM_METHODS(Name, Kind)                                                              \
    int HessianForce::add##Name(int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot) { \
        int p[4] = {p1, p2, p3, p4}, s[2] = {kSlot, phaseSlot};                                          \
        return addTerm(Kind, p, 4, s, 2, periodicity);                                                   \
    }                                                                                                    \
    void HessianForce::get##Name##Parameters(int index, int& p1, int& p2, int& p3, int& p4, int& periodicity, \
                                             int& kSlot, int& phaseSlot) const {                         \
        const Term& t = getTerm(Kind, index);                                                            \
        p1 = t.particles[0]; p2 = t.particles[1]; p3 = t.particles[2]; p4 = t.particles[3];              \
        periodicity = t.periodicity; kSlot = t.slots[0]; phaseSlot = t.slots[1];                         \
    }                                                                                                    \
    void HessianForce::set##Name##Parameters(int index, int p1, int p2, int p3, int p4, int periodicity,  \
                                             int kSlot, int phaseSlot) {                                 \
        checkTermIndex(index, terms[Kind].size(), Kind);                                                 \
        int p[4] = {p1, p2, p3, p4}, s[2] = {kSlot, phaseSlot};                                          \
        setTerm(Kind, index, p, 4, s, 2, periodicity);                                                   \
    }

HF_PERIODIC_TERM_METHODS(PeriodicTorsion, PeriodicTorsion)
HF_PERIODIC_TERM_METHODS(PeriodicImproper, PeriodicImproper)
int HessianForce::getNumPeriodicTorsions() const { return (int) terms[PeriodicTorsion].size(); }
int HessianForce::getNumPeriodicImpropers() const { return (int) terms[PeriodicImproper].size(); }

// Four-particle terms with a slot list (OPLS V1..V4, RB C0..C5).
#define HF_LIST_TERM_METHODS(Name, Kind)                                                                  \
    int HessianForce::add##Name(int p1, int p2, int p3, int p4, const vector<int>& slots) {              \
        int p[4] = {p1, p2, p3, p4};                                                                     \
        return addTerm(Kind, p, 4, slots.data(), (int) slots.size(), 0);                                 \
    }                                                                                                    \
    void HessianForce::get##Name##Parameters(int index, int& p1, int& p2, int& p3, int& p4,             \
                                             vector<int>& slots) const {                                 \
        const Term& t = getTerm(Kind, index);                                                            \
        p1 = t.particles[0]; p2 = t.particles[1]; p3 = t.particles[2]; p4 = t.particles[3];              \
        slots.assign(t.slots, t.slots + kindShapes[Kind].numSlots);                                      \
    }                                                                                                    \
    void HessianForce::set##Name##Parameters(int index, int p1, int p2, int p3, int p4,                 \
                                             const vector<int>& slots) {                                 \
        checkTermIndex(index, terms[Kind].size(), Kind);                                                 \
        int p[4] = {p1, p2, p3, p4};                                                                     \
        setTerm(Kind, index, p, 4, slots.data(), (int) slots.size(), 0);                                 \
    }

HF_LIST_TERM_METHODS(OPLSTorsion, OPLSTorsion)
HF_LIST_TERM_METHODS(RBTorsion, RBTorsion)
int HessianForce::getNumOPLSTorsions() const { return (int) terms[OPLSTorsion].size(); }
int HessianForce::getNumRBTorsions() const { return (int) terms[RBTorsion].size(); }

int HessianForce::addHarmonicImproper(int p1, int p2, int p3, int p4, int kSlot, int phi0Slot) {
    int p[4] = {p1, p2, p3, p4}, s[2] = {kSlot, phi0Slot};
    return addTerm(HarmonicImproper, p, 4, s, 2, 0);
}
void HessianForce::getHarmonicImproperParameters(int index, int& p1, int& p2, int& p3, int& p4, int& kSlot,
                                                 int& phi0Slot) const {
    const Term& t = getTerm(HarmonicImproper, index);
    p1 = t.particles[0]; p2 = t.particles[1]; p3 = t.particles[2]; p4 = t.particles[3];
    kSlot = t.slots[0]; phi0Slot = t.slots[1];
}
void HessianForce::setHarmonicImproperParameters(int index, int p1, int p2, int p3, int p4, int kSlot, int phi0Slot) {
    checkTermIndex(index, terms[HarmonicImproper].size(), HarmonicImproper);
    int p[4] = {p1, p2, p3, p4}, s[2] = {kSlot, phi0Slot};
    setTerm(HarmonicImproper, index, p, 4, s, 2, 0);
}
int HessianForce::getNumHarmonicImpropers() const { return (int) terms[HarmonicImproper].size(); }

// ---- nonbonded ---------------------------------------------------------------------------------

void HessianForce::setCombiningRule(CombiningRule rule) {
    if (rule != Geometric && rule != LorentzBerthelot) {
        std::ostringstream m;
        m << "unknown combining rule " << (int) rule;
        fail(HessianForceException::Value, m.str());
    }
    combiningRule = rule;
}
HessianForce::CombiningRule HessianForce::getCombiningRule() const { return combiningRule; }

void HessianForce::setCoulomb14Scale(double scale) {
    checkFinite(scale, "coulomb14Scale");
    coulomb14Scale = scale;
}
double HessianForce::getCoulomb14Scale() const { return coulomb14Scale; }
void HessianForce::setLJ14Scale(double scale) {
    checkFinite(scale, "lj14Scale");
    lj14Scale = scale;
}
double HessianForce::getLJ14Scale() const { return lj14Scale; }

int HessianForce::addExclusion(int p1, int p2) {
    int p[2] = {p1, p2};
    return addTerm(Exclusion, p, 2, nullptr, 0, 0);
}
void HessianForce::getExclusionParticles(int index, int& p1, int& p2) const {
    const Term& t = getTerm(Exclusion, index);
    p1 = t.particles[0]; p2 = t.particles[1];
}
int HessianForce::getNumExclusions() const { return (int) terms[Exclusion].size(); }

int HessianForce::addPair14(int p1, int p2) {
    int p[2] = {p1, p2};
    return addTerm(Pair14, p, 2, nullptr, 0, 0);
}
void HessianForce::getPair14Particles(int index, int& p1, int& p2) const {
    const Term& t = getTerm(Pair14, index);
    p1 = t.particles[0]; p2 = t.particles[1];
}
int HessianForce::getNumPairs14() const { return (int) terms[Pair14].size(); }

// Two-particle, three-slot pairs (the slot names in the kind's order).
#define HF_THREE_SLOT_PAIR_METHODS(Name, Kind, S0, S1, S2)                                                     \
    int HessianForce::add##Name(int p1, int p2, int S0, int S1, int S2) {                                      \
        int p[2] = {p1, p2}, s[3] = {S0, S1, S2};                                                              \
        return addTerm(Kind, p, 2, s, 3, 0);                                                                   \
    }                                                                                                          \
    void HessianForce::get##Name##Parameters(int index, int& p1, int& p2, int& S0, int& S1, int& S2) const {  \
        const Term& t = getTerm(Kind, index);                                                                  \
        p1 = t.particles[0]; p2 = t.particles[1];                                                              \
        S0 = t.slots[0]; S1 = t.slots[1]; S2 = t.slots[2];                                                     \
    }                                                                                                          \
    void HessianForce::set##Name##Parameters(int index, int p1, int p2, int S0, int S1, int S2) {              \
        checkTermIndex(index, terms[Kind].size(), Kind);                                                       \
        int p[2] = {p1, p2}, s[3] = {S0, S1, S2};                                                              \
        setTerm(Kind, index, p, 2, s, 3, 0);                                                                   \
    }

HF_THREE_SLOT_PAIR_METHODS(ExplicitPair, ExplicitPair, chargeProdSlot, sigmaSlot, epsilonSlot)
HF_THREE_SLOT_PAIR_METHODS(MM3Pair, MM3Pair, radiusSlot, epsilonSlot, chargeProdSlot)

int HessianForce::getNumExplicitPairs() const { return (int) terms[ExplicitPair].size(); }
int HessianForce::getNumMM3Pairs() const { return (int) terms[MM3Pair].size(); }

void HessianForce::createExclusionsFromBonds(const vector<std::pair<int, int> >& bonds) {
    // Breadth-first search to depth 3 from every particle: distance 1-2 excluded, 3 a 1-4 pair.
    std::map<int, vector<int> > neighbours;
    for (const auto& b : bonds) {
        if (b.first < 0 || b.second < 0 || b.first == b.second) {
            std::ostringstream m;
            m << "createExclusionsFromBonds: bad bond (" << b.first << ", " << b.second << ")";
            fail(HessianForceException::Index, m.str());
        }
        neighbours[b.first].push_back(b.second);
        neighbours[b.second].push_back(b.first);
    }
    for (const auto& entry : neighbours) {
        int start = entry.first;
        std::map<int, int> distance = {{start, 0}};
        vector<int> frontier = {start};
        for (int depth = 1; depth <= 3; depth++) {
            vector<int> next;
            for (int a : frontier)
                for (int b : neighbours[a])
                    if (distance.emplace(b, depth).second)
                        next.push_back(b);
            frontier.swap(next);
        }
        for (const auto& d : distance) {
            if (d.first <= start)
                continue;
            if (d.second <= 2)
                addExclusion(start, d.first);
            else
                addPair14(start, d.first);
        }
    }
}

// ---- Context access ------------------------------------------------------------------------------

ForceImpl* HessianForce::createImpl() const {
    return new HessianForceImpl(*this);
}

HessianForceImpl& HessianForce::getImpl(Context& context) const {
    try {
        return dynamic_cast<HessianForceImpl&>(getImplInContext(context));
    } catch (const HessianForceException&) {
        throw;
    } catch (const OpenMMException& e) {
        fail(HessianForceException::NotInContext, std::string("the force is not part of this Context (") + e.what() + ")");
    }
}

void HessianForce::updateParametersInContext(Context& context) {
    getImpl(context).updateParametersInContext(getContextImpl(context));
}

long long HessianForce::getHessianSize() const {
    return getHessianBlockOffset(getNumMolecules());
}

long long HessianForce::getHessianBlockOffset(int molecule) const {
    if (molecule < 0 || molecule > getNumMolecules()) {
        std::ostringstream m;
        m << "molecule " << molecule << " is out of range (the force has " << getNumMolecules() << " molecules)";
        fail(HessianForceException::Index, m.str());
    }
    if (molecules.empty())
        return molecule == 0 ? 0 : 9LL * getNumParticles() * getNumParticles();
    long long offset = 0;
    for (int m = 0; m < molecule; m++)
        offset += 9LL * molecules[m].size() * molecules[m].size();
    return offset;
}

void HessianForce::getHessianBlocks(Context& context, vector<double>& blocks) const {
    getImpl(context).getHessianBlocks(getContextImpl(context), blocks);
}

void HessianForce::getParameterDerivatives(Context& context, vector<double>& derivatives) const {
    getImpl(context).getParameterDerivatives(getContextImpl(context), derivatives);
}

void HessianForce::getHessianContractionDerivatives(Context& context, const vector<double>& adjoint,
                                                    vector<double>& derivatives) const {
    getImpl(context).getHessianContractionDerivatives(getContextImpl(context), adjoint, derivatives);
}

void HessianForce::getGradientContractionDerivatives(Context& context, const vector<double>& y,
                                                     vector<double>& derivatives) const {
    getImpl(context).getGradientContractionDerivatives(getContextImpl(context), y, derivatives);
}

void HessianForce::getMoleculeEnergies(Context& context, vector<double>& energies) const {
    getImpl(context).getMoleculeEnergies(getContextImpl(context), energies);
}

void HessianForce::getMoleculeEnergyDerivatives(Context& context, const vector<double>& weights,
                                                vector<double>& derivatives) const {
    getImpl(context).getMoleculeEnergyDerivatives(getContextImpl(context), weights, derivatives);
}

void HessianForce::setHessianObjective(Context& context, const HessianObjectiveSpec& spec) const {
    getImpl(context).setHessianObjective(getContextImpl(context), spec);
}

double HessianForce::computeHessianObjective(Context& context, vector<double>& dLdslot, vector<double>* residuals) const {
    return getImpl(context).computeHessianObjective(getContextImpl(context), &dLdslot, residuals);
}

double HessianForce::computeHessianObjective(Context& context, vector<double>* residuals) const {
    return getImpl(context).computeHessianObjective(getContextImpl(context), nullptr, residuals);
}

long long HessianForce::getHessianObjectiveNumResiduals(Context& context) const {
    return getImpl(context).getHessianObjectiveNumResiduals();
}

void HessianForce::getHessianObjectivePairing(Context& context, vector<int>& modes) const {
    getImpl(context).getHessianObjectivePairing(getContextImpl(context), modes);
}

void HessianForce::setHessianObjectiveGradientSlots(Context& context, const vector<int>& slots) const {
    getImpl(context).setHessianObjectiveGradientSlots(getContextImpl(context), slots);
}

void HessianForce::computeHessianObjectiveJacobian(Context& context, int molecule, const vector<int>& slots,
                                                   vector<double>& residuals, vector<double>& jacobian) const {
    computeHessianObjectiveJacobian(context, vector<int>(1, molecule), slots, residuals, jacobian);
}

void HessianForce::computeHessianObjectiveJacobian(Context& context, const vector<int>& molecules,
                                                   const vector<int>& slots, vector<double>& residuals,
                                                   vector<double>& jacobian) const {
    getImpl(context).computeHessianObjectiveJacobian(getContextImpl(context), molecules, slots, residuals, jacobian);
}
