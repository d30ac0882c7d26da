#include "CommonTermLists.h"
#include "HessianForceException.h"
#include <algorithm>
#include <climits>
#include <sstream>

using namespace HessFit;
using std::vector;

namespace {

/** A count or offset as the kernels' int, or an Unsupported error naming what overflowed. */
int toIndex(long long value, const char* what) {
    if (value > INT_MAX) {
        std::ostringstream msg;
        msg << "HessianForce: the GPU kernels index " << what << " with 32-bit integers, this force needs " << value;
        throw HessianForceException(HessianForceException::Unsupported, msg.str());
    }
    return (int) value;
}

/** Compressed rows from (row, value) pairs in the order given: start (rows + 1) and entries. */
void compress(int rows, const vector<int>& row, const vector<int>& value, vector<int>& start, vector<int>& entries) {
    start.assign(rows + 1, 0);
    for (int r : row)
        start[r + 1]++;
    for (int r = 0; r < rows; r++)
        start[r + 1] += start[r];
    entries.assign(value.size(), 0);
    vector<int> next(start.begin(), start.end() - 1);
    for (size_t k = 0; k < row.size(); k++)
        entries[next[row[k]]++] = value[k];
}

} // namespace

void CommonTermLists::build(const hf_model& model) {
    // ---- the one term list: listed terms, then the plain pairs (molecule by molecule, a < b)
    vector<hf_term> terms(model.terms, model.terms + model.n_terms);
    numListed = model.n_terms;
    for (int m = 0; m < model.n_molecules; m++) {
        const int* molAtoms = model.mol_atoms + model.mol_offset[m];
        const int nm = model.mol_offset[m + 1] - model.mol_offset[m];
        const unsigned char* excl = model.excluded != nullptr ? model.excluded + model.excl_offset[m] : nullptr;
        for (int a = 0; a < nm; a++)
            for (int b = a + 1; b < nm; b++) {
                hf_term pair;
                if ((excl != nullptr && excl[(long long) a * nm + b]) || !hf_plain_pair_term(&model, molAtoms[a], molAtoms[b], &pair))
                    continue;
                pair.kind = PlainPairKind;
                terms.push_back(pair);
            }
    }
    const int numTerms = toIndex((long long) terms.size(), "the terms (listed terms plus nonbonded pairs)");
    toIndex((long long) ForceStride * numTerms, "the per-term force values");

    // ---- molecules
    blockOffset.assign(model.block_offset, model.block_offset + model.n_molecules + 1);
    moleculeDim.resize(model.n_molecules);
    long long numPairs = 0;
    vector<long long> pairBase(model.n_molecules);
    for (int m = 0; m < model.n_molecules; m++) {
        const long long nm = model.mol_offset[m + 1] - model.mol_offset[m];
        moleculeDim[m] = toIndex(3 * nm, "a molecule's Hessian dimension");
        pairBase[m] = numPairs;
        numPairs += nm * (nm + 1) / 2;
    }
    toIndex(3 * numPairs, "the Hessian's 3x3 block pairs");

    // ---- per-term arrays
    info.assign(2 * numTerms, 0);
    atoms.assign(AtomsPerTerm * numTerms, -1);
    slots.assign(SlotsPerTerm * numTerms, HF_NO_SLOT);
    scalars.assign(ScalarsPerTerm * numTerms, 0.0);
    localRow.assign(AtomsPerTerm * numTerms, 0);
    molecule.assign(numTerms, 0);
    hessianOffset.assign(numTerms, 0);
    long long scratch = 0;
    vector<int> atomRow, atomValue, pairRow, pairValue, slotRow, slotValue, molRow, molValue;
    for (int t = 0; t < numTerms; t++) {
        const hf_term& term = terms[t];
        const int n = hf_term_atom_entries(term.kind == PlainPairKind ? HF_TERM_PAIR_COMBINED : term.kind);
        const int m = model.atom_mol[term.atoms[0]];
        info[2 * t] = term.kind;
        info[2 * t + 1] = term.periodicity;
        for (int s = 0; s < SlotsPerTerm; s++) {
            slots[SlotsPerTerm * t + s] = term.slots[s];
            if (term.slots[s] != HF_NO_SLOT) {
                slotRow.push_back(term.slots[s]);
                slotValue.push_back(SlotsPerTerm * t + s);
            }
        }
        const double constants[ScalarsPerTerm] = {term.scale, term.phase, term.scale_coulomb, term.scale_lj,
                                                  term.r_scale[0], term.r_scale[1]};
        std::copy(constants, constants + ScalarsPerTerm, scalars.begin() + (size_t) ScalarsPerTerm * t);
        molecule[t] = m;
        molRow.push_back(m);
        molValue.push_back(t);
        int local[AtomsPerTerm];
        for (int a = 0; a < n; a++) {
            atoms[AtomsPerTerm * t + a] = term.atoms[a];
            local[a] = model.atom_local[term.atoms[a]];
            localRow[AtomsPerTerm * t + a] = 3 * local[a];
            atomRow.push_back(term.atoms[a]);
            atomValue.push_back(ForceStride * t + 3 * a);
        }
        // Hessian blocks (a, b), a <= b in the kernel's order; two atoms: K only, H = [[K, -K], [-K, K]].
        hessianOffset[t] = toIndex(scratch, "the per-term Hessian values");
        const int nm = model.mol_offset[m + 1] - model.mol_offset[m];
        auto addEntry = [&](int blockIndex, int a, int b, int flags) {
            const int lo = local[a] < local[b] ? local[a] : local[b], hi = local[a] < local[b] ? local[b] : local[a];
            if (local[a] > local[b])
                flags |= Transposed;
            pairRow.push_back((int) (pairBase[m] + (long long) lo * nm - (long long) lo * (lo - 1) / 2 + (hi - lo)));
            pairValue.push_back(toIndex(scratch + 9LL * blockIndex, "the per-term Hessian values"));
            pairValue.push_back(flags);
        };
        if (n == 2) {
            addEntry(0, 0, 0, 0);
            addEntry(0, 1, 1, 0);
            addEntry(0, 0, 1, Negated);
            scratch += 9;
        } else {
            int block = 0;
            for (int a = 0; a < n; a++)
                for (int b = a; b < n; b++, block++) {
                    addEntry(block, a, b, 0);
                    if (a < b && term.atoms[a] == term.atoms[b]) // one particle twice: X + X^T
                        addEntry(block, a, b, Transposed);
                }
            scratch += 9LL * block;
        }
    }
    hessianScratchSize = scratch;
    toIndex(scratch, "the per-term Hessian values");

    // ---- compressed rows (pair entries carry two ints each: compress their indices, then expand)
    compress(model.n_particles, atomRow, atomValue, atomStart, atomEntries);
    compress(model.n_slots, slotRow, slotValue, slotStart, slotEntries);
    compress(model.n_molecules, molRow, molValue, moleculeStart, moleculeEntries);
    vector<int> entryIndex(pairRow.size()), order;
    for (size_t k = 0; k < entryIndex.size(); k++)
        entryIndex[k] = (int) k;
    compress((int) numPairs, pairRow, entryIndex, pairStart, order);
    pairEntries.resize(2 * order.size());
    for (size_t k = 0; k < order.size(); k++) {
        pairEntries[2 * k] = pairValue[2 * order[k]];
        pairEntries[2 * k + 1] = pairValue[2 * order[k] + 1];
    }
    pairInfo.resize(3 * numPairs);
    for (int m = 0; m < model.n_molecules; m++) {
        const int nm = model.mol_offset[m + 1] - model.mol_offset[m];
        long long p = pairBase[m];
        for (int a = 0; a < nm; a++)
            for (int b = a; b < nm; b++, p++) {
                pairInfo[3 * p] = m;
                pairInfo[3 * p + 1] = a;
                pairInfo[3 * p + 2] = b;
            }
    }
}
