#ifndef HESSFIT_HESSIAN_OBJECTIVE_H_
#define HESSFIT_HESSIAN_OBJECTIVE_H_

/*
 * HessianObjectiveSpec: plain data describing the Hessian-space objectives of every molecule of a
 * HessianForce, set once per Context (HessianForce::setHessianObjective) and then evaluated, for
 * all molecules in one kernel call, with the gradient with respect to every parameter slot
 * (HessianForce::computeHessianObjective). OpenMM units throughout: Hessians in kJ/mol/nm^2,
 * masses in amu, mass-weighted Hessians in kJ/mol/nm^2/amu, frequencies in cm^-1.
 *
 * Every objective is a weighted least-squares sum, L = sum_i r_i^2 with r_i = w_i (target_i - value_i).
 * Per molecule (any combination, each optional):
 *
 *   Frequencies. The MM Hessian block H is mass-weighted, A = M^-1/2 H M^-1/2 (M the masses of
 *   the molecule's particles, three entries each), optionally with translations and rotations
 *   projected out (P A P, P from the masses and the Context's positions), and diagonalised; the
 *   modes are listed in ascending eigenvalue order (with projection: only the 3n - 6 (3n - 5 for a
 *   linear molecule) vibrations). A mode's frequency is sign(l) F sqrt(|l|) cm^-1 with F =
 *   frequencyFactor. Each target is compared with one MM mode:
 *     PairByPosition  the modes whose frequency exceeds frequencyThreshold at the FIRST evaluation
 *                     after setHessianObjective are the candidates; target k is paired with
 *                     candidate k (both in the order given / ascending); targets beyond the
 *                     number of candidates are unpaired (residual 0). The selected mode indices
 *                     are kept for every later evaluation (q2mm's benchmark objective).
 *     PairByOverlap   each target has a reference vector q_k (mass-weighted, unit length,
 *                     mutually orthogonal); at EVERY evaluation targets are assigned to distinct
 *                     MM modes v_j maximising sum_k (q_k . v_j)^2 (an optimal assignment), so a
 *                     target follows its mode when frequencies reorder.
 *   Eigenmatrix. Fixed orthonormal mass-weighted vectors V (rows of eigenVectors, k x 3n), e.g.
 *     the QM normal modes; elements E = V A V^T (k x k, A unprojected); the lower triangle
 *     (a >= b) is compared with eigenTargets, weighted by eigenWeights (kJ/mol/nm^2/amu).
 *   Hessian elements. The lower triangle (i >= j) of the symmetrised block (H_ij + H_ji)/2 against
 *     hessianTargets (kJ/mol/nm^2), weighted by hessianWeights.
 *
 * Residuals come out molecule by molecule; within a molecule: the frequency targets in the order
 * given, then the eigenmatrix lower triangle row by row ((0,0), (1,0), (1,1), (2,0), ...), then
 * the Hessian lower triangle in the same order. Weights of 0 give residuals of exactly 0.
 *
 * Gradients use the adjoint route: dL/dslot = tr(G^T dH/dslot) with one G per molecule,
 *   frequencies   G = M^-1/2 (sum_j c_j v_j v_j^T) M^-1/2,  c_j = dL/dnu_j F / (2 sqrt|l_j|)
 *                 (|l_j| taken as at least the eigenvalue of 1 cm^-1: at l_j = 0 dnu/dl is infinite)
 *                 (d l_j / dA = v_j v_j^T for a simple eigenvalue; with projection P v_j = v_j),
 *   eigenmatrix   G = M^-1/2 V^T R V M^-1/2, R_ab = dL/dE_ab (symmetrised),
 *   Hessian       G_ij = dL/dH_ij,
 * then one contraction over all terms. An eigenvalue derivative exists only for a simple
 * eigenvalue: where a paired MM eigenvalue is degenerate (symmetry-equivalent modes), the loss is
 * differentiable only if the paired targets of the degenerate modes are equal.
 */

#include "internal/windowsExportHessFit.h"
#include <cstddef>
#include <vector>

namespace HessFit {

struct OPENMM_EXPORT_HESSFIT HessianObjectiveSpec {
    /** How frequency targets find their MM modes. */
    enum FrequencyPairing : int {  /* int-based: a foreign value can be held and is refused by the checks */
        NoFrequencies = 0,   /**< no frequency targets */
        PairByPosition = 1,  /**< candidates above a threshold, selected once, paired in order */
        PairByOverlap = 2    /**< maximum total eigenvector overlap, every evaluation */
    };

    /** The objectives of one molecule (an empty Molecule has none). */
    struct OPENMM_EXPORT_HESSFIT Molecule {
        /** Masses in amu, one per particle of the molecule in Hessian-block order
         *  (getMoleculeParticles); required for frequencies and the eigenmatrix. */
        std::vector<double> masses;

        FrequencyPairing frequencyPairing = NoFrequencies;
        /** Project translations and rotations out before diagonalising (frequencies only). */
        bool projectExternal = false;
        /** Target frequencies (cm^-1) and their weights (>= 0, per cm^-1). */
        std::vector<double> frequencyTargets;
        std::vector<double> frequencyWeights;
        /** PairByPosition: candidate modes are those above this frequency (cm^-1) at the first evaluation. */
        double frequencyThreshold = 50.0;
        /** PairByOverlap: one reference vector per target, row-major (targets x 3n), orthonormal. */
        std::vector<double> frequencyVectors;

        /** Eigenmatrix: k orthonormal mass-weighted vectors, row-major (k x 3n). */
        std::vector<double> eigenVectors;
        /** k x k row-major; only the lower triangle (a >= b) is read. kJ/mol/nm^2/amu. */
        std::vector<double> eigenTargets;
        std::vector<double> eigenWeights;

        /** Hessian elements: (3n)^2 row-major each (or both empty); only the lower triangle is read. */
        std::vector<double> hessianTargets;
        std::vector<double> hessianWeights;

        /**
         * Get the number of residuals this molecule contributes: its frequency targets, the lower
         * triangle of its eigenmatrix and the lower triangle of its Hessian targets.
         */
        long long numResiduals() const;
        /**
         * Get the number of rows of eigenVectors.
         *
         * @param dim  3n, the molecule's coordinate count
         * @return the rows (0 when there is no eigenmatrix or dim <= 0)
         */
        int numEigenVectors(int dim) const { return dim > 0 ? (int) (eigenVectors.size() / (std::size_t) dim) : 0; }
    };

    /** One entry per molecule of the force (HessianForce::getNumMolecules()), in molecule order. */
    std::vector<Molecule> molecules;
    /** F in nu = sign(l) F sqrt(|l|): cm^-1 per sqrt(kJ/mol/nm^2/amu) (the fitting layer's
     *  hf_frequency_factor_kj_mol_nm2_amu()). Required (> 0) when any molecule has frequencies. */
    double frequencyFactor = 0.0;

    /**
     * Get the total number of residuals, summed over the molecules.
     */
    long long numResiduals() const;
    /**
     * Get the total number of frequency targets (the length of
     * HessianForce::getHessianObjectivePairing's output).
     */
    int numFrequencyTargets() const;
};

} // namespace HessFit

#endif
