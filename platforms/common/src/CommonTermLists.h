#ifndef HESSFIT_COMMON_TERM_LISTS_H_
#define HESSFIT_COMMON_TERM_LISTS_H_
/*
 * What the GPU kernels see of a HessianForce, built on the host from the Reference platform's
 * flat model (FlatHessianModel, hf_core.h): ONE list of terms -- the listed terms, then every plain
 * nonbonded pair (hf_plain_pair_term) of every molecule in the order of the Reference platform's
 * pair loops -- as flat per-term arrays, and the compressed-row lists (start[i] .. start[i+1] into
 * entries) over which the gather kernels sum the per-term scratch values in a fixed order:
 *
 *   forces:    particle p    <- offsets ForceStride t + 3 k of the f' dq/dx values of its terms' entries
 *   Hessian:   block pair (molecule, A <= B) <- (offset of a 3x3 term block, flags); a block
 *              (a < b) of two entries naming one particle (a bend-bend sharing an outer atom) is
 *              listed twice, plain and transposed, so the diagonal block gets X + X^T
 *   slots:     slot s        <- 6 t + j for every term t whose slot j is s
 *   molecules: molecule m    <- its terms t
 *
 * Every index the kernels use is a 32-bit int; build() refuses (HessianForceException Unsupported)
 * a force whose lists would not fit.
 */
#include "hf_core.h"
#include <vector>

namespace HessFit {

struct CommonTermLists {
    /** Device kind of a plain nonbonded pair (hessianTermMath.cc): HF_TERM_PAIR_COMBINED that is
     *  skipped where it has no energy, as the Reference platform's fast pair path. */
    static constexpr int PlainPairKind = HF_NUM_TERM_KINDS;
    /** Per term: HF_MAX_TERM_ATOMS atom entries, the core's 6 slots, 3 force values f' dq/dx per
     *  entry, 6 constants (scale, phase, scale_coulomb, scale_lj, r_scale[0], r_scale[1])
     *  (hessianTermMath.cc's HF_ATOMS, HF_SLOTS, HF_FORCE_STRIDE, HF_SCALARS). */
    static constexpr int AtomsPerTerm = HF_MAX_TERM_ATOMS, SlotsPerTerm = HF_MAX_TERM_SLOTS,
                         ForceStride = 3 * AtomsPerTerm, ScalarsPerTerm = 6;
    /** Pair-entry flags of the Hessian gather. */
    static constexpr int Transposed = 1, Negated = 2;

    int numListed = 0;              /* the model's listed terms; terms numListed.. are plain pairs */
    std::vector<int> info;          /* 2 per term: kind, periodicity */
    std::vector<int> atoms;         /* AtomsPerTerm per term: System particles (-1 unused) */
    std::vector<int> slots;         /* 6 per term */
    std::vector<double> scalars;    /* ScalarsPerTerm per term */
    std::vector<int> localRow;      /* AtomsPerTerm per term: 3 x the atom's index within its molecule */
    std::vector<int> molecule;      /* per term */
    std::vector<int> hessianOffset; /* per term: its 3x3 blocks in the Hessian scratch */
    long long hessianScratchSize = 0;

    std::vector<long long> blockOffset; /* per molecule (+1): its Hessian block in the concatenation */
    std::vector<int> moleculeDim;       /* per molecule: 3 n_m */

    std::vector<int> atomStart, atomEntries;
    std::vector<int> pairInfo, pairStart, pairEntries; /* pairInfo: 3 per pair (molecule, A, B); entries: 2 each */
    std::vector<int> slotStart, slotEntries;
    std::vector<int> moleculeStart, moleculeEntries;

    int numTerms() const { return (int) molecule.size(); }
    int numPairs() const { return (int) pairStart.size() - 1; }
    /** Fill everything from the flat model (which must describe a validated force). */
    void build(const hf_model& model);
};

} // namespace HessFit

#endif
