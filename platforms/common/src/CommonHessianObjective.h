#ifndef HESSFIT_COMMON_HESSIAN_OBJECTIVE_H_
#define HESSFIT_COMMON_HESSIAN_OBJECTIVE_H_
/*
 * The batched Hessian-space objective on a GPU platform (OpenMM's common compute layer, one kernel
 * source for CUDA and OpenCL): for all molecules at once, from the Hessian blocks already on the
 * device, the loss L = sum r_i^2 of HessianObjective.h (frequencies paired by position or by
 * overlap, eigenmatrix, Hessian elements), the adjoint G = dL/dH per molecule (left on the device
 * for the kernel's tr(G^T dH/dslot) contraction) and, on request, the residuals and pairing.
 * Semantics are exactly those of the Reference platform's hf_objective.c; only the loss (and the
 * residuals when asked) leave the device.
 *
 * Precision: the Hessian blocks and G are always double arrays. The Hessian-space arithmetic
 * (mass weighting, projection, eigensolver, overlaps) runs in double in the double and mixed
 * precision modes and in float in single precision.
 */
#include "CommonBatchedEigensolver.h"
#include "HessianObjective.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeKernel.h"
#include <vector>

namespace HessFit {

/** Where each molecule's atoms and Hessian block are (the force's molecule grouping). */
struct CommonMoleculeLayout {
    std::vector<int> moleculeOffset;      /* n_molecules + 1 offsets into moleculeAtoms */
    std::vector<int> moleculeAtoms;       /* System particle indices, molecule by molecule, block order */
    std::vector<long long> blockOffset;   /* n_molecules + 1: molecule m's (3 n_m)^2 block, row-major */
};

class CommonHessianObjective {
public:
    /**
     * Uploads the spec (validated by the caller against the layout) and compiles the kernels.
     * makeEigensolver: the platform's library eigensolver, if it has one; which eigensolver the
     * frequency matrices get is chooseBatchedEigensolver's choice (CommonBatchedEigensolver.h).
     */
    CommonHessianObjective(OpenMM::ComputeContext& cc, const CommonMoleculeLayout& layout, const HessianObjectiveSpec& spec,
                           CommonBatchedEigensolverFactory makeEigensolver = nullptr);
    ~CommonHessianObjective();
    /**
     * One evaluation. blocks: the device array (double) of all Hessian blocks at the Context's
     * current positions (read from cc.getPosq(), used by the rigid-body projection). Returns L.
     * When adjoint is not null it must be a double device array of blocks' size and receives G
     * (every molecule's block; zero where a molecule has no objective). When residuals is not null
     * it receives the residuals in the spec's layout. Throws HessianForceException (Value, naming
     * the molecule) when a block is not finite or the eigensolver does not converge.
     */
    double evaluate(OpenMM::ComputeArray& blocks, OpenMM::ComputeArray* adjoint, std::vector<double>* residuals);
    /** The MM mode each frequency target was compared with in the last evaluation (-1: none). */
    void getPairing(std::vector<int>& modes);
private:
    struct Impl;
    Impl* impl;
};

} // namespace HessFit

#endif
