#include "HessianForceProxy.h"
#include "HessianForce.h"
#include "HessianForceException.h"
#include "internal/HessianForceInternals.h"
#include "hessfit_version.h"
#include "openmm/serialization/SerializationNode.h"
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace OpenMM;
using std::string;
using std::vector;

namespace HessFit {

namespace {

/** XML layout of one term kind: list node, item node, slot attribute names, the first format
 * version that has its list, and its distance scales' attribute names (written since version 5;
 * an older file's terms get 1). */
struct KindLayout {
    HessianForce::TermKind kind;
    const char* listName;
    const char* itemName;
    const char* slotNames[6];
    int sinceVersion;
    const char* scaleNames[2];
};

const KindLayout kindLayouts[] = {
    {HessianForce::Bond, "Bonds", "Bond", {"k", "r0"}, 1, {}},
    {HessianForce::UreyBradley, "UreyBradleys", "UreyBradley", {"k", "r0"}, 1, {}},
    {HessianForce::Angle, "Angles", "Angle", {"k", "theta0"}, 1, {}},
    {HessianForce::PeriodicTorsion, "PeriodicTorsions", "Torsion", {"k", "phase"}, 1, {}},
    {HessianForce::OPLSTorsion, "OPLSTorsions", "Torsion", {"v1", "v2", "v3", "v4"}, 1, {}},
    {HessianForce::RBTorsion, "RBTorsions", "Torsion", {"c0", "c1", "c2", "c3", "c4", "c5"}, 1, {}},
    {HessianForce::PeriodicImproper, "PeriodicImpropers", "Improper", {"k", "phase"}, 1, {}},
    {HessianForce::HarmonicImproper, "HarmonicImpropers", "Improper", {"k", "phi0"}, 1, {}},
    {HessianForce::Exclusion, "Exclusions", "Exclusion", {}, 1, {}},
    {HessianForce::Pair14, "Pairs14", "Pair", {}, 1, {}},
    {HessianForce::ExplicitPair, "ExplicitPairs", "Pair", {"chargeProd", "sigma", "epsilon"}, 1, {}},
    {HessianForce::MM3Bond, "MM3Bonds", "Bond", {"k", "r0"}, 2, {"s"}},
    {HessianForce::MM3Angle, "MM3Angles", "Angle", {"k", "theta0"}, 2, {}},
    {HessianForce::MM3Pair, "MM3Pairs", "Pair", {"radius", "epsilon", "chargeProd"}, 3, {}},
    {HessianForce::MM3StretchBend, "MM3StretchBends", "StretchBend", {"k", "r0a", "r0b", "theta0"}, 5, {"sa", "sb"}},
    {HessianForce::MM3BendBend, "MM3BendBends", "BendBend", {"k", "theta01", "theta02"}, 5, {}},
    {HessianForce::MM3TorsionStretch, "MM3TorsionStretches", "TorsionStretch", {"k", "r0"}, 5, {"s"}},
    {HessianForce::MM3SwitchedPair, "MM3SwitchedPairs", "Pair", {"radius", "epsilon", "chargeProd"}, 6, {"s1", "s2"}},
    {HessianForce::HydrogenBond, "HydrogenBonds", "HydrogenBond", {"c", "d"}, 7, {}},
};
static_assert(sizeof(kindLayouts) / sizeof(kindLayouts[0]) == HessianForce::NumTermKinds,
              "HessianForceProxy: a term kind has no XML layout");

const char* particleAttribute[HessianForce::MaxTermParticles] = {"p1", "p2", "p3", "p4", "p5"};

/** Adds one term through the public API (which validates it); d: its distance scales. */
void addTerm(HessianForce& force, HessianForce::TermKind kind, const int* p, const int* s, int periodicity,
             const double* d) {
    switch (kind) {
    case HessianForce::Bond: force.addBond(p[0], p[1], s[0], s[1]); break;
    case HessianForce::UreyBradley: force.addUreyBradley(p[0], p[1], s[0], s[1]); break;
    case HessianForce::Angle: force.addAngle(p[0], p[1], p[2], s[0], s[1]); break;
    case HessianForce::PeriodicTorsion: force.addPeriodicTorsion(p[0], p[1], p[2], p[3], periodicity, s[0], s[1]); break;
    case HessianForce::OPLSTorsion: force.addOPLSTorsion(p[0], p[1], p[2], p[3], vector<int>(s, s + 4)); break;
    case HessianForce::RBTorsion: force.addRBTorsion(p[0], p[1], p[2], p[3], vector<int>(s, s + 6)); break;
    case HessianForce::PeriodicImproper: force.addPeriodicImproper(p[0], p[1], p[2], p[3], periodicity, s[0], s[1]); break;
    case HessianForce::HarmonicImproper: force.addHarmonicImproper(p[0], p[1], p[2], p[3], s[0], s[1]); break;
    case HessianForce::Exclusion: force.addExclusion(p[0], p[1]); break;
    case HessianForce::Pair14: force.addPair14(p[0], p[1]); break;
    case HessianForce::ExplicitPair: force.addExplicitPair(p[0], p[1], s[0], s[1], s[2]); break;
    case HessianForce::MM3Bond: force.addMM3Bond(p[0], p[1], s[0], s[1], d[0]); break;
    case HessianForce::MM3Angle: force.addMM3Angle(p[0], p[1], p[2], s[0], s[1]); break;
    case HessianForce::MM3Pair: force.addMM3Pair(p[0], p[1], s[0], s[1], s[2]); break;
    case HessianForce::MM3StretchBend: force.addMM3StretchBend(p[0], p[1], p[2], s[0], s[1], s[2], s[3], d[0], d[1]); break;
    case HessianForce::MM3BendBend: force.addMM3BendBend(p[0], p[1], p[2], p[3], p[4], s[0], s[1], s[2]); break;
    case HessianForce::MM3TorsionStretch: force.addMM3TorsionStretch(p[0], p[1], p[2], p[3], s[0], s[1], d[0]); break;
    case HessianForce::MM3SwitchedPair:
        force.addMM3SwitchedPair(p[0], p[1], p[2], p[3], s[0], s[1], s[2], d[0], d[1]);
        break;
    case HessianForce::HydrogenBond: force.addHydrogenBond(p[0], p[1], s[0], s[1]); break;
    case HessianForce::NumTermKinds: break;
    }
}

/**
 * Versions 1 to 7: the force's settings as attributes, then the nodes Parameters (Slot v),
 * Particles (Particle q sig eps), Molecules (Molecule of Particle p), one list per term kind
 * (kindLayouts) with particles p1..p5, the slot attributes, for periodic kinds periodicity and,
 * since version 5, the distance scales, and since version 4 ReducedParticles (Reduced particle,
 * partner, factor). Version 1 (hessfit 0.1.0) has the lists of the kinds up to ExplicitPair;
 * version 2 adds MM3Bonds and MM3Angles; version 3 adds MM3Pairs; version 4 the reduced particles;
 * version 5 MM3StretchBends, MM3BendBends, MM3TorsionStretches and the MM3* bonds' distance scale s;
 * version 6 MM3SwitchedPairs (p1 p2, switch anchors p3 p4, scales s1 s2); version 7 HydrogenBonds
 * (p1 p2, slots c d).
 */
HessianForce* readTerms(const SerializationNode& node, int version) {
    std::unique_ptr<HessianForce> force(new HessianForce());
    force->setForceGroup(node.getIntProperty("forceGroup", 0));
    if (node.hasProperty("name"))
        force->setName(node.getStringProperty("name"));
    force->setCombiningRule((HessianForce::CombiningRule) node.getIntProperty("combiningRule"));
    force->setCoulomb14Scale(node.getDoubleProperty("coulomb14Scale"));
    force->setLJ14Scale(node.getDoubleProperty("lj14Scale"));

    // The table first: terms and particles check their slots against it.
    for (const SerializationNode& slot : node.getChildNode("Parameters").getChildren())
        force->addParameter(slot.getDoubleProperty("v"));
    for (const SerializationNode& p : node.getChildNode("Particles").getChildren())
        force->addParticle(p.getIntProperty("q"), p.getIntProperty("sig"), p.getIntProperty("eps"));
    for (const SerializationNode& m : node.getChildNode("Molecules").getChildren()) {
        vector<int> particles;
        for (const SerializationNode& p : m.getChildren())
            particles.push_back(p.getIntProperty("p"));
        force->addMolecule(particles);
    }
    for (const KindLayout& layout : kindLayouts) {
        if (layout.sinceVersion > version)
            continue;
        for (const SerializationNode& item : node.getChildNode(layout.listName).getChildren()) {
            int p[HessianForce::MaxTermParticles] = {-1, -1, -1, -1, -1};
            int s[6] = {HessianForce::NoSlot, HessianForce::NoSlot, HessianForce::NoSlot,
                        HessianForce::NoSlot, HessianForce::NoSlot, HessianForce::NoSlot};
            double d[2] = {1.0, 1.0};
            for (int i = 0; i < HessianForce::getTermNumParticles(layout.kind); i++)
                p[i] = item.getIntProperty(particleAttribute[i]);
            for (int i = 0; i < HessianForce::getTermNumSlots(layout.kind); i++)
                s[i] = item.getIntProperty(layout.slotNames[i]);
            if (version >= 5)
                for (int i = 0; i < HessianForce::getTermNumDistanceScales(layout.kind); i++)
                    d[i] = item.getDoubleProperty(layout.scaleNames[i]);
            int periodicity = HessianForce::termHasPeriodicity(layout.kind) ? item.getIntProperty("periodicity") : 0;
            addTerm(*force, layout.kind, p, s, periodicity, d);
        }
    }
    if (version >= 4)
        for (const SerializationNode& r : node.getChildNode("ReducedParticles").getChildren())
            force->addReducedParticle(r.getIntProperty("particle"), r.getIntProperty("partner"),
                                      r.getDoubleProperty("factor"));
    return force.release();
}

HessianForce* readVersion1(const SerializationNode& node) { return readTerms(node, 1); }
HessianForce* readVersion2(const SerializationNode& node) { return readTerms(node, 2); }
HessianForce* readVersion3(const SerializationNode& node) { return readTerms(node, 3); }
HessianForce* readVersion4(const SerializationNode& node) { return readTerms(node, 4); }
HessianForce* readVersion5(const SerializationNode& node) { return readTerms(node, 5); }
HessianForce* readVersion6(const SerializationNode& node) { return readTerms(node, 6); }
HessianForce* readVersion7(const SerializationNode& node) { return readTerms(node, 7); }

/**
 * The reader of every format version, oldest first: readers[v - 1] reads version v, and
 * serialize() writes the last. A format change appends a reader for the new version and keeps the
 * older ones (an old reader may stay as it is: the force it returns gets the new fields'
 * defaults).
 */
using Reader = HessianForce* (*)(const SerializationNode& node);
const Reader readers[] = {readVersion1, readVersion2, readVersion3, readVersion4, readVersion5, readVersion6,
                          readVersion7};
const int currentVersion = (int) (sizeof(readers) / sizeof(readers[0]));

} // namespace

HessianForceProxy::HessianForceProxy() : SerializationProxy("HessianForce") {
}

void HessianForceProxy::serialize(const void* object, SerializationNode& node) const {
    const HessianForce& force = *reinterpret_cast<const HessianForce*>(object);
    node.setIntProperty("version", currentVersion);
    node.setIntProperty("forceGroup", force.getForceGroup());
    node.setStringProperty("name", force.getName());
    node.setIntProperty("combiningRule", (int) force.getCombiningRule());
    node.setDoubleProperty("coulomb14Scale", force.getCoulomb14Scale());
    node.setDoubleProperty("lj14Scale", force.getLJ14Scale());

    SerializationNode& parameters = node.createChildNode("Parameters");
    for (double value : force.getParameters())
        parameters.createChildNode("Slot").setDoubleProperty("v", value);

    SerializationNode& particles = node.createChildNode("Particles");
    for (int i = 0; i < force.getNumParticles(); i++) {
        int q, s, e;
        force.getParticleParameters(i, q, s, e);
        particles.createChildNode("Particle").setIntProperty("q", q).setIntProperty("sig", s).setIntProperty("eps", e);
    }

    SerializationNode& molecules = node.createChildNode("Molecules");
    for (const vector<int>& molecule : HessianForceInternals::getExplicitMolecules(force)) {
        SerializationNode& m = molecules.createChildNode("Molecule");
        for (int p : molecule)
            m.createChildNode("Particle").setIntProperty("p", p);
    }

    for (const KindLayout& layout : kindLayouts) {
        SerializationNode& list = node.createChildNode(layout.listName);
        for (const HessianForceInternals::Term& term : HessianForceInternals::getTerms(force, layout.kind)) {
            SerializationNode& item = list.createChildNode(layout.itemName);
            for (int i = 0; i < HessianForce::getTermNumParticles(layout.kind); i++)
                item.setIntProperty(particleAttribute[i], term.particles[i]);
            for (int i = 0; i < HessianForce::getTermNumSlots(layout.kind); i++)
                item.setIntProperty(layout.slotNames[i], term.slots[i]);
            if (HessianForce::termHasPeriodicity(layout.kind))
                item.setIntProperty("periodicity", term.periodicity);
            for (int i = 0; i < HessianForce::getTermNumDistanceScales(layout.kind); i++)
                item.setDoubleProperty(layout.scaleNames[i], term.distanceScales[i]);
        }
    }

    SerializationNode& reduced = node.createChildNode("ReducedParticles");
    for (const HessianForceInternals::ReducedParticle& r : HessianForceInternals::getReducedParticles(force))
        reduced.createChildNode("Reduced")
            .setIntProperty("particle", r.particle)
            .setIntProperty("partner", r.partner)
            .setDoubleProperty("factor", r.factor);
}

void* HessianForceProxy::deserialize(const SerializationNode& node) const {
    int version = node.getIntProperty("version");
    if (version < 1 || version > currentVersion) {
        std::ostringstream m;
        m << "HessianForceProxy: cannot read HessianForce serialization version " << version << " (";
        if (version > currentVersion)
            m << "written by a newer hessfit; ";
        m << "hessfit " << HESSFIT_VERSION_STRING << " reads versions 1 to " << currentVersion << ")";
        throw HessianForceException(HessianForceException::Unsupported, m.str());
    }
    return readers[version - 1](node);
}

} // namespace HessFit
