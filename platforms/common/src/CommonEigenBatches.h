#ifndef HESSFIT_COMMON_EIGEN_BATCHES_H_
#define HESSFIT_COMMON_EIGEN_BATCHES_H_
/*
 * The frequency matrices of a batched eigensolver (CommonBatchedEigensolver.h), one batch per
 * distinct dimension: each batch's molecules, their scratch offsets, a contiguous column-major
 * array of the matrices, the eigenvalues and one info per matrix on the device, and the two copy
 * kernels (kernels/objectiveBatch.cc) between the molecules' scratch and the batch.
 */
#include "CommonBatchedEigensolver.h"
#include <memory>
#include <vector>

namespace HessFit {

class CommonEigenBatches {
public:
    struct Batch {
        int dim = 0, count = 0;
        OpenMM::ComputeArray offsets, molecules, matrices, values, info;
        OpenMM::ComputeKernel gather, scatter;
    };
    /** One batch per distinct dimension of setup.matrices, in ascending dimension (the context is current). */
    void initialize(OpenMM::ComputeContext& cc, const CommonBatchedEigensolver::Setup& setup);
    /** Copies the batch's frequency matrices from the scratch into b.matrices. */
    void gather(Batch& b);
    /** Copies b's eigenvalues (and with vectors its eigenvectors) back; a non-zero info fails its molecule. */
    void scatter(Batch& b, bool vectors);
    std::vector<std::unique_ptr<Batch>> batches;
};

} // namespace HessFit

#endif
