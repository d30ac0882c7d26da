#include "internal/FlatHessianModel.h"
#include "internal/HessianForceInternals.h"
#include <cmath>
#include <sstream>

using namespace HessFit;
using std::vector;

static_assert(HessianForce::MaxTermParticles == HF_MAX_TERM_ATOMS, "a term's particles are the core's atom entries");
static_assert(sizeof(HessianForceInternals::Term) ==
                  (HessianForce::MaxTermParticles + 6 + 1) * sizeof(int) + 2 * sizeof(double),
              "HessianForce::Term has padding, which its memcmp comparison would read");

static hf_term makeTerm(int kind, const HessianForceInternals::Term& t) {
    hf_term term;
    term.kind = kind;
    for (int i = 0; i < HF_MAX_TERM_ATOMS; i++)
        term.atoms[i] = t.particles[i];
    for (int i = 0; i < HF_MAX_TERM_SLOTS; i++)
        term.slots[i] = t.slots[i];
    term.periodicity = t.periodicity;
    term.scale = 1.0;
    term.phase = 0.0;
    term.scale_coulomb = 1.0;
    term.scale_lj = 1.0;
    term.r_scale[0] = t.distanceScales[0];
    term.r_scale[1] = t.distanceScales[1];
    return term;
}

void FlatHessianModel::build(const HessianForce& force) {
    terms.clear();
    origins.clear();
    int n = force.getNumParticles();
    particleSlots = HessianForceInternals::getParticleSlots(force);

    // Molecules (the implicit one holds every particle in order).
    int numMolecules = force.getNumMolecules();
    molOffset.assign(1, 0);
    molAtoms.clear();
    atomMol.assign(n, 0);
    atomLocal.assign(n, 0);
    exclOffset.assign(numMolecules, 0);
    blockOffset.assign(numMolecules + 1, 0);
    long long exclSize = 0;
    for (int m = 0; m < numMolecules; m++) {
        vector<int> particles = force.getMoleculeParticles(m);
        for (int local = 0; local < (int) particles.size(); local++) {
            atomMol[particles[local]] = m;
            atomLocal[particles[local]] = local;
        }
        molAtoms.insert(molAtoms.end(), particles.begin(), particles.end());
        molOffset.push_back((int) molAtoms.size());
        long long nm = (long long) particles.size();
        exclOffset[m] = exclSize;
        exclSize += nm * nm;
        blockOffset[m + 1] = blockOffset[m] + 9 * nm * nm;
    }
    excluded.assign(exclSize, 0);

    for (int k = 0; k < HessianForce::NumTermKinds; k++) {
        HessianForce::TermKind kind = (HessianForce::TermKind) k;
        const vector<HessianForceInternals::Term>& list = HessianForceInternals::getTerms(force, kind);
        for (int i = 0; i < (int) list.size(); i++) {
            const HessianForceInternals::Term& t = list[i];
            Origin origin = {k, i};
            if (HessianForceInternals::isPairKind(kind)) {
                int a = t.particles[0], b = t.particles[1], m = atomMol[a];
                long long nm = molOffset[m + 1] - molOffset[m];
                excluded[exclOffset[m] + atomLocal[a] * nm + atomLocal[b]] = 1;
                excluded[exclOffset[m] + atomLocal[b] * nm + atomLocal[a]] = 1;
            }
            switch (kind) {
            case HessianForce::Bond:
            case HessianForce::UreyBradley:
                terms.push_back(makeTerm(HF_TERM_BOND, t));
                break;
            case HessianForce::Angle:
                terms.push_back(makeTerm(HF_TERM_ANGLE, t));
                break;
            case HessianForce::MM3Bond:
                terms.push_back(makeTerm(HF_TERM_MM3_BOND, t));
                break;
            case HessianForce::MM3Angle:
                terms.push_back(makeTerm(HF_TERM_MM3_ANGLE, t));
                break;
            case HessianForce::PeriodicTorsion:
            case HessianForce::PeriodicImproper:
                terms.push_back(makeTerm(HF_TERM_PERIODIC, t));
                break;
            case HessianForce::OPLSTorsion:
                // V_m/2 (1 + (-1)^(m+1) cos(m phi)) = 0.5 V_m (1 + cos(m phi - phase_m)), phase_m = 0 (m odd), pi (m even).
                for (int m = 1; m <= 4; m++) {
                    if (t.slots[m - 1] == HessianForce::NoSlot)
                        continue;
                    hf_term term = makeTerm(HF_TERM_PERIODIC, t);
                    term.slots[0] = t.slots[m - 1];
                    for (int s = 1; s < HF_MAX_TERM_SLOTS; s++)
                        term.slots[s] = HF_NO_SLOT;
                    term.periodicity = m;
                    term.scale = 0.5;
                    term.phase = (m % 2 == 1) ? 0.0 : M_PI;
                    terms.push_back(term);
                    origins.push_back(origin);
                }
                continue;
            case HessianForce::RBTorsion:
                terms.push_back(makeTerm(HF_TERM_RB, t));
                break;
            case HessianForce::HarmonicImproper:
                terms.push_back(makeTerm(HF_TERM_HARMONIC_DIHEDRAL, t));
                break;
            case HessianForce::Exclusion:
                continue;
            case HessianForce::Pair14: {
                hf_term term = makeTerm(HF_TERM_PAIR_COMBINED, t);
                int a = t.particles[0], b = t.particles[1];
                for (int p = 0; p < 3; p++) {
                    term.slots[2 * p] = particleSlots[3 * a + p];
                    term.slots[2 * p + 1] = particleSlots[3 * b + p];
                }
                term.scale_coulomb = force.getCoulomb14Scale();
                term.scale_lj = force.getLJ14Scale();
                terms.push_back(term);
                break;
            }
            case HessianForce::ExplicitPair:
                terms.push_back(makeTerm(HF_TERM_PAIR, t));
                break;
            case HessianForce::MM3Pair:
                terms.push_back(makeTerm(HF_TERM_MM3_PAIR, t));
                break;
            case HessianForce::MM3StretchBend:
                terms.push_back(makeTerm(HF_TERM_MM3_STRETCH_BEND, t));
                break;
            case HessianForce::MM3BendBend:
                terms.push_back(makeTerm(HF_TERM_MM3_BEND_BEND, t));
                break;
            case HessianForce::MM3TorsionStretch:
                terms.push_back(makeTerm(HF_TERM_MM3_TORSION_STRETCH, t));
                break;
            case HessianForce::MM3SwitchedPair:
                terms.push_back(makeTerm(HF_TERM_MM3_PAIR_SWITCHED, t));
                break;
            case HessianForce::HydrogenBond:
                terms.push_back(makeTerm(HF_TERM_HBOND_10_12, t));
                break;
            default:
                continue;
            }
            origins.push_back(origin);
        }
    }

    flat.n_particles = n;
    flat.n_slots = force.getNumParameters();
    flat.combining = force.getCombiningRule() == HessianForce::Geometric ? HF_COMBINE_GEOMETRIC : HF_COMBINE_LORENTZ_BERTHELOT;
    flat.particle_slots = particleSlots.data();
    flat.n_molecules = numMolecules;
    flat.mol_offset = molOffset.data();
    flat.mol_atoms = molAtoms.data();
    flat.atom_mol = atomMol.data();
    flat.atom_local = atomLocal.data();
    flat.excluded = excluded.data();
    flat.excl_offset = exclOffset.data();
    flat.block_offset = blockOffset.data();
    flat.n_terms = (int) terms.size();
    flat.terms = terms.data();
    flattenReducedParticles(force);
}

void FlatHessianModel::flattenReducedParticles(const HessianForce& force) {
    const int numMolecules = (int) molOffset.size() - 1;
    const vector<HessianForceInternals::ReducedParticle>& list = HessianForceInternals::getReducedParticles(force);
    reducedOffset.assign(numMolecules + 1, 0);
    for (const HessianForceInternals::ReducedParticle& r : list)
        reducedOffset[atomMol[r.particle] + 1]++;
    for (int m = 0; m < numMolecules; m++)
        reducedOffset[m + 1] += reducedOffset[m];
    reduced.resize(list.size());
    vector<int> next(reducedOffset.begin(), reducedOffset.end() - 1);
    for (const HessianForceInternals::ReducedParticle& r : list)
        reduced[next[atomMol[r.particle]]++] = {r.particle, r.partner, r.factor};
    flat.n_reduced = (int) reduced.size();
    flat.reduced = reduced.empty() ? nullptr : reduced.data();
    flat.reduced_offset = reduced.empty() ? nullptr : reducedOffset.data();
}

std::string FlatHessianModel::describeTerm(int flatIndex) const {
    std::ostringstream s;
    if (flatIndex < 0 || flatIndex >= (int) terms.size()) {
        s << "a nonbonded pair (coincident particles)";
        return s.str();
    }
    const Origin& o = origins[flatIndex];
    s << HessianForce::termKindName((HessianForce::TermKind) o.kind) << " " << o.index << " (particles";
    for (int a = 0; a < HF_MAX_TERM_ATOMS && terms[flatIndex].atoms[a] >= 0; a++)
        s << (a ? ", " : " ") << terms[flatIndex].atoms[a];
    s << ")";
    return s.str();
}

std::string FlatHessianModel::undefinedGeometryMessage(int flatIndex) const {
    return "HessianForce: the geometry of " + describeTerm(flatIndex) +
           " is undefined (coincident particles, collinear dihedral atoms, or an exactly linear angle where the energy "
           "has a cusp: in a stretch-bend or bend-bend, or in an angle term whose theta0 is not 180 degrees)";
}
