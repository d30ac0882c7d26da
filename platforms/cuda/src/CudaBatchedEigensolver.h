#ifndef HESSFIT_CUDA_BATCHED_EIGENSOLVER_H_
#define HESSFIT_CUDA_BATCHED_EIGENSOLVER_H_
/*
 * The CUDA platform's library eigensolver for the objective's frequency matrices: cuSOLVER's
 * batched symmetric solver (cusolverDnXsyevBatched), one call per distinct dimension, in place of
 * the Jacobi kernel. Measured on an H200 (docs/benchmarks.md, "CUDA on an H200").
 */
#include "CommonBatchedEigensolver.h"

namespace HessFit {

/**
 * The CommonBatchedEigensolverFactory of the CUDA platform. HESSFIT_CUDA_EIGENSOLVER picks the
 * eigensolver: "cusolver" (or unset) cuSOLVER, "jacobi" the Jacobi kernel (returns null); any
 * other value is an error (HessianForceException, Unsupported).
 */
CommonBatchedEigensolver* makeCudaBatchedEigensolver(OpenMM::ComputeContext& cc);

} // namespace HessFit

#endif
