#ifndef HESSFIT_CUDA_BATCHED_EIGENSOLVER_H_
#define HESSFIT_CUDA_BATCHED_EIGENSOLVER_H_
/*
 * The CUDA platform's library eigensolver for the objective's frequency matrices: cuSOLVER's
 * batched symmetric solver (cusolverDnXsyevBatched), one call per distinct dimension. Measured on an
 * H200 (docs/benchmarks.md, "Measured on an NVIDIA H200").
 */
#include "CommonBatchedEigensolver.h"

namespace HessFit {

/** The CommonBatchedEigensolverFactory of the CUDA platform: cuSOLVER (chosen as CommonBatchedEigensolver.h says). */
CommonBatchedEigensolver* makeCudaBatchedEigensolver(OpenMM::ComputeContext& cc);

} // namespace HessFit

#endif
