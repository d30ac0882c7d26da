#include "CommonReductionLists.h"

using namespace HessFit;

void CommonReductionLists::build(const hf_model& m) {
    numReduced = m.n_reduced;
    const int n = m.n_particles;
    particle.clear();
    partner.clear();
    localParticle.clear();
    localPartner.clear();
    factor.clear();
    atomReduced.assign(n, -1);
    atomTouched.assign(n, 0);
    atomMolecule.assign(m.atom_mol, m.atom_mol + n);
    atomLocalRow.resize(n);
    for (int p = 0; p < n; p++)
        atomLocalRow[p] = 3 * m.atom_local[p];
    partnerStart.assign(n + 1, 0);
    partnerEntries.assign(numReduced, 0);
    moleculeStart.assign(m.n_molecules + 1, 0);
    if (numReduced == 0)
        return;
    moleculeStart.assign(m.reduced_offset, m.reduced_offset + m.n_molecules + 1);
    for (int r = 0; r < numReduced; r++) {
        const hf_reduced_particle& rp = m.reduced[r];
        particle.push_back(rp.particle);
        partner.push_back(rp.partner);
        localParticle.push_back(3 * m.atom_local[rp.particle]);
        localPartner.push_back(3 * m.atom_local[rp.partner]);
        factor.push_back(rp.factor);
        atomReduced[rp.particle] = r;
        atomTouched[rp.particle] = atomTouched[rp.partner] = 1;
        partnerStart[rp.partner + 1]++;
    }
    for (int p = 0; p < n; p++)
        partnerStart[p + 1] += partnerStart[p];
    std::vector<int> next(partnerStart.begin(), partnerStart.end() - 1);
    for (int r = 0; r < numReduced; r++)
        partnerEntries[next[m.reduced[r].partner]++] = r;
}
