#include "HessianForceConverter.h"
#include "HessianForceException.h"
#include "openmm/CMMotionRemover.h"
#include "openmm/HarmonicAngleForce.h"
#include "openmm/HarmonicBondForce.h"
#include "openmm/NonbondedForce.h"
#include "openmm/PeriodicTorsionForce.h"
#include "openmm/RBTorsionForce.h"
#include <memory>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>
#if defined(__GNUG__)
#include <cxxabi.h>
#include <cstdlib>
#endif

using namespace OpenMM;
using std::string;
using std::vector;

namespace HessFit {

namespace {

/** The class name of a force without the "OpenMM::" prefix ("CustomBondForce"). */
string forceClassName(const Force& force) {
    const char* mangled = typeid(force).name();
    string name = mangled;
#if defined(__GNUG__)
    int status = 0;
    char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    if (status == 0 && demangled != nullptr)
        name = demangled;
    std::free(demangled);
#endif
    const string prefix = "OpenMM::";
    if (name.compare(0, prefix.size(), prefix) == 0)
        name = name.substr(prefix.size());
    return name;
}

const char* nonbondedMethodName(NonbondedForce::NonbondedMethod method) {
    switch (method) {
    case NonbondedForce::NoCutoff: return "NoCutoff";
    case NonbondedForce::CutoffNonPeriodic: return "CutoffNonPeriodic";
    case NonbondedForce::CutoffPeriodic: return "CutoffPeriodic";
    case NonbondedForce::Ewald: return "Ewald";
    case NonbondedForce::PME: return "PME";
    case NonbondedForce::LJPME: return "LJPME";
    }
    return "an unknown method";
}

string forceLabel(int index, const Force& force) {
    std::ostringstream s;
    s << "force " << index << " (" << forceClassName(force) << ")";
    return s.str();
}

/** Collects the problems of pass 1. */
struct Problems {
    vector<string> list;
    void add(int index, const Force& force, const string& what) {
        list.push_back(forceLabel(index, force) + " " + what);
    }
};

/** Runs one conversion step; a HessianForceException it throws gets the term's label prefixed. */
template <class F>
void withContext(const string& label, F step) {
    try {
        step();
    } catch (const HessianForceException& e) {
        throw HessianForceException(e.getCode(), "createHessianForceFromSystem: " + label + ": " + e.what());
    }
}

} // namespace

HessianForce* createHessianForceFromSystem(const System& system) {
    // ---- pass 1: find everything that cannot be represented ----------------------------------
    Problems problems;
    int numVirtualSites = 0, firstVirtualSite = -1;
    for (int i = 0; i < system.getNumParticles(); i++)
        if (system.isVirtualSite(i)) {
            if (numVirtualSites++ == 0)
                firstVirtualSite = i;
        }
    if (numVirtualSites > 0) {
        std::ostringstream m;
        m << "the System has " << numVirtualSites << " virtual site(s) (first: particle " << firstVirtualSite
          << "); virtual sites are not supported";
        problems.list.push_back(m.str());
    }
    int nonbondedIndex = -1;
    for (int f = 0; f < system.getNumForces(); f++) {
        const Force& force = system.getForce(f);
        if (dynamic_cast<const CMMotionRemover*>(&force) != nullptr)
            continue;
        bool bonded = dynamic_cast<const HarmonicBondForce*>(&force) != nullptr ||
                      dynamic_cast<const HarmonicAngleForce*>(&force) != nullptr ||
                      dynamic_cast<const PeriodicTorsionForce*>(&force) != nullptr ||
                      dynamic_cast<const RBTorsionForce*>(&force) != nullptr;
        if (bonded) {
            if (force.usesPeriodicBoundaryConditions())
                problems.add(f, force, "uses periodic boundary conditions (only isolated molecules are supported)");
            if (const auto* torsions = dynamic_cast<const PeriodicTorsionForce*>(&force)) {
                for (int t = 0; t < torsions->getNumTorsions(); t++) {
                    int p1, p2, p3, p4, n;
                    double phase, k;
                    torsions->getTorsionParameters(t, p1, p2, p3, p4, n, phase, k);
                    if (n < 1) {
                        std::ostringstream m;
                        m << "torsion " << t << " has periodicity " << n << " (HessianForce needs >= 1)";
                        problems.add(f, force, m.str());
                    }
                }
            }
            continue;
        }
        if (const auto* nb = dynamic_cast<const NonbondedForce*>(&force)) {
            if (nonbondedIndex >= 0) {
                std::ostringstream m;
                m << "is a second NonbondedForce (force " << nonbondedIndex << " is the first; at most one is supported)";
                problems.add(f, force, m.str());
            } else
                nonbondedIndex = f;
            if (nb->getNonbondedMethod() != NonbondedForce::NoCutoff)
                problems.add(f, force, string("uses nonbonded method ") + nonbondedMethodName(nb->getNonbondedMethod()) +
                                       " (only NoCutoff is supported)");
            if (!nb->getIncludeDirectSpace())
                problems.add(f, force, "excludes direct space (includeDirectSpace is false)");
            if (nb->getNumGlobalParameters() > 0)
                problems.add(f, force, "has global parameters (not supported)");
            if (nb->getNumParticleParameterOffsets() > 0)
                problems.add(f, force, "has particle parameter offsets (not supported)");
            if (nb->getNumExceptionParameterOffsets() > 0)
                problems.add(f, force, "has exception parameter offsets (not supported)");
            if (nb->getNumParticles() != system.getNumParticles()) {
                std::ostringstream m;
                m << "has " << nb->getNumParticles() << " particles but the System has " << system.getNumParticles();
                problems.add(f, force, m.str());
            }
            continue;
        }
        problems.add(f, force, "is not supported");
    }
    if (!problems.list.empty()) {
        std::ostringstream m;
        m << "createHessianForceFromSystem: the System cannot be represented by a HessianForce: ";
        for (size_t i = 0; i < problems.list.size(); i++)
            m << (i > 0 ? "; " : "") << problems.list[i];
        throw HessianForceException(HessianForceException::Unsupported, m.str());
    }

    // ---- pass 2: build ----------------------------------------------------------------------
    std::unique_ptr<HessianForce> result(new HessianForce());
    HessianForce& hf = *result;
    if (nonbondedIndex >= 0) {
        const NonbondedForce& nb = dynamic_cast<const NonbondedForce&>(system.getForce(nonbondedIndex));
        hf.setCombiningRule(HessianForce::LorentzBerthelot);
        for (int i = 0; i < nb.getNumParticles(); i++) {
            std::ostringstream label;
            label << forceLabel(nonbondedIndex, nb) << " particle " << i;
            withContext(label.str(), [&]() {
                double charge, sigma, epsilon;
                nb.getParticleParameters(i, charge, sigma, epsilon);
                int q = hf.addParameter(charge);
                int s = hf.addParameter(sigma);
                int e = hf.addParameter(epsilon);
                hf.addParticle(q, s, e);
            });
        }
    } else {
        for (int i = 0; i < system.getNumParticles(); i++)
            hf.addParticle(HessianForce::NoSlot, HessianForce::NoSlot, HessianForce::NoSlot);
    }

    for (int f = 0; f < system.getNumForces(); f++) {
        const Force& force = system.getForce(f);
        if (const auto* bonds = dynamic_cast<const HarmonicBondForce*>(&force)) {
            for (int b = 0; b < bonds->getNumBonds(); b++) {
                std::ostringstream label;
                label << forceLabel(f, force) << " bond " << b;
                withContext(label.str(), [&]() {
                    int p1, p2;
                    double r0, k;
                    bonds->getBondParameters(b, p1, p2, r0, k);
                    int kSlot = hf.addParameter(0.5 * k);
                    int r0Slot = hf.addParameter(r0);
                    hf.addBond(p1, p2, kSlot, r0Slot);
                });
            }
        } else if (const auto* angles = dynamic_cast<const HarmonicAngleForce*>(&force)) {
            for (int a = 0; a < angles->getNumAngles(); a++) {
                std::ostringstream label;
                label << forceLabel(f, force) << " angle " << a;
                withContext(label.str(), [&]() {
                    int p1, p2, p3;
                    double theta0, k;
                    angles->getAngleParameters(a, p1, p2, p3, theta0, k);
                    int kSlot = hf.addParameter(0.5 * k);
                    int t0Slot = hf.addParameter(theta0);
                    hf.addAngle(p1, p2, p3, kSlot, t0Slot);
                });
            }
        } else if (const auto* torsions = dynamic_cast<const PeriodicTorsionForce*>(&force)) {
            for (int t = 0; t < torsions->getNumTorsions(); t++) {
                std::ostringstream label;
                label << forceLabel(f, force) << " torsion " << t;
                withContext(label.str(), [&]() {
                    int p1, p2, p3, p4, n;
                    double phase, k;
                    torsions->getTorsionParameters(t, p1, p2, p3, p4, n, phase, k);
                    int kSlot = hf.addParameter(k);
                    int phaseSlot = hf.addParameter(phase);
                    hf.addPeriodicTorsion(p1, p2, p3, p4, n, kSlot, phaseSlot);
                });
            }
        } else if (const auto* rb = dynamic_cast<const RBTorsionForce*>(&force)) {
            for (int t = 0; t < rb->getNumTorsions(); t++) {
                std::ostringstream label;
                label << forceLabel(f, force) << " torsion " << t;
                withContext(label.str(), [&]() {
                    int p1, p2, p3, p4;
                    double c[6];
                    rb->getTorsionParameters(t, p1, p2, p3, p4, c[0], c[1], c[2], c[3], c[4], c[5]);
                    vector<int> slots(6);
                    for (int m = 0; m < 6; m++)
                        slots[m] = hf.addParameter(c[m]);
                    hf.addRBTorsion(p1, p2, p3, p4, slots);
                });
            }
        } else if (const auto* nb = dynamic_cast<const NonbondedForce*>(&force)) {
            for (int x = 0; x < nb->getNumExceptions(); x++) {
                std::ostringstream label;
                label << forceLabel(f, force) << " exception " << x;
                withContext(label.str(), [&]() {
                    int p1, p2;
                    double chargeProd, sigma, epsilon;
                    nb->getExceptionParameters(x, p1, p2, chargeProd, sigma, epsilon);
                    if (chargeProd != 0.0 || epsilon != 0.0) {
                        int q = hf.addParameter(chargeProd);
                        int s = hf.addParameter(sigma);
                        int e = hf.addParameter(epsilon);
                        hf.addExplicitPair(p1, p2, q, s, e);
                    } else
                        hf.addExclusion(p1, p2);
                });
            }
        }
    }
    return result.release();
}

} // namespace HessFit
