#ifndef HESSFIT_COMMON_BATCHED_EIGENSOLVER_H_
#define HESSFIT_COMMON_BATCHED_EIGENSOLVER_H_
/*
 * The eigensolver of the objective's frequency matrices on a GPU platform. Three exist:
 *   jacobi    the objective's own kernel (kernels/objectiveJacobi.cc): one work-group per molecule;
 *   host      CommonHostEigensolver: the matrices downloaded, LAPACK in threads, uploaded;
 *   library   the platform's device library where it has one (CUDA: cuSOLVER's batched syev,
 *             platforms/cuda/src/CudaBatchedEigensolver.cpp); OpenCL has none.
 * chooseBatchedEigensolver picks one: HESSFIT_GPU_EIGENSOLVER = auto (or unset), host, jacobi or
 * library. auto is the fastest measured (docs/benchmarks.md, "Measured on an NVIDIA H200"): the
 * library for more than HostEigensolverMaxMatrices matrices, else the host. Any other value is an
 * error. The solvers other than Jacobi copy the matrices into batches of one dimension
 * (CommonEigenBatches.h) with the objective kernels objectiveBatchGather and objectiveBatchScatter,
 * which also turn a failed solve into the molecule's status.
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
    /** The name in messages ("cuSOLVER's batched syev", "LAPACK ?syevd on the host"). */
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

/** Makes the platform's library eigensolver for a context. */
typedef CommonBatchedEigensolver* (*CommonBatchedEigensolverFactory)(OpenMM::ComputeContext& cc);

/**
 * auto takes the library above this many frequency matrices, else the host. Measured on an H200
 * (rh-enamide, objective + gradient, host / cuSOLVER): 9 matrices 34.2 / 47.3 ms, 100 matrices
 * 94.1 / 49.5 ms, 1000 matrices 721 / 212 ms; the crossover lies between 9 and 100.
 */
const int HostEigensolverMaxMatrices = 32;

/**
 * The eigensolver for numMatrices frequency matrices as HESSFIT_GPU_EIGENSOLVER says (above);
 * makeLibrary: the platform's library solver, or null where it has none. Returns null for the
 * Jacobi kernel. Throws HessianForceException (Unsupported) for an unknown value, or for library
 * on a platform without one.
 */
CommonBatchedEigensolver* chooseBatchedEigensolver(OpenMM::ComputeContext& cc, int numMatrices,
                                                   CommonBatchedEigensolverFactory makeLibrary);

} // namespace HessFit

#endif
