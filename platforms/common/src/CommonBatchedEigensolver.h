#ifndef HESSFIT_COMMON_BATCHED_EIGENSOLVER_H_
#define HESSFIT_COMMON_BATCHED_EIGENSOLVER_H_
/*
 * A library eigensolver a GPU platform may put in place of the objective's own Jacobi kernel
 * (objectiveJacobi.cc) for the frequency matrices: CUDA uses cuSOLVER's batched symmetric solver
 * (platforms/cuda, CudaBatchedEigensolver.cpp); OpenCL has none and keeps the Jacobi kernel.
 *
 * The frequency matrices stay in the objective's scratch (objectiveCommon.cc's layout); the solver
 * copies them into its own batches with the objective kernels objectiveBatchGather and
 * objectiveBatchScatter, which also turn a failed solve into the molecule's status.
 */
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeKernel.h"
#include <string>
#include <vector>

namespace HessFit {

class CommonBatchedEigensolver {
public:
    /** One frequency matrix: its molecule, dimension and where the molecule's scratch starts (elements). */
    struct Matrix {
        int molecule;
        int dim;
        long long offset;
    };
    /** The objective's program, arrays and launch settings the solver's copies need. */
    struct Setup {
        OpenMM::ComputeProgram program;  /* has objectiveBatchGather and objectiveBatchScatter */
        OpenMM::ComputeArray* scratch;   /* hsreal elements: double, or float in single precision */
        OpenMM::ComputeArray* status;    /* int per molecule */
        bool doubleArithmetic;
        std::vector<Matrix> matrices;
    };
    virtual ~CommonBatchedEigensolver() {}
    /** The name in messages ("cuSOLVER's batched syev"). */
    virtual std::string name() const = 0;
    /** Allocates the batches and the library's workspace (the ComputeContext is current). */
    virtual void initialize(const Setup& setup) = 0;
    /**
     * Diagonalises every matrix in place, asynchronously on the context's stream: with vectors the
     * unit eigenvectors as rows of A in ascending order of the eigenvalues, always the eigenvalues
     * ascending into W (objectiveCommon.cc's SCR_W). A molecule whose solve failed gets
     * STATUS_NOT_CONVERGED unless its status already says why it failed.
     */
    virtual void solve(bool vectors) = 0;
};

/** Makes the platform's batched eigensolver for a context, or returns null to keep the Jacobi kernel. */
typedef CommonBatchedEigensolver* (*CommonBatchedEigensolverFactory)(OpenMM::ComputeContext& cc);

} // namespace HessFit

#endif
