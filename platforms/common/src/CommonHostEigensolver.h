#ifndef HESSFIT_COMMON_HOST_EIGENSOLVER_H_
#define HESSFIT_COMMON_HOST_EIGENSOLVER_H_
/*
 * The objective's frequency matrices diagonalised on the host: downloaded per batch, solved by
 * LAPACK in threads over the matrices (the math core's hf_symmetric_eigen_list, as the Reference
 * platform solves them), uploaded and scattered back. For few molecules this beats any device
 * solver measured (docs/benchmarks.md): each device solve is latency-bound at these sizes.
 */
#include "CommonEigenBatches.h"
#include <vector>

namespace HessFit {

class CommonHostEigensolver : public CommonBatchedEigensolver {
public:
    explicit CommonHostEigensolver(OpenMM::ComputeContext& cc) : cc(cc) {}
    std::string name() const override {
        return "LAPACK ?syevd on the host";
    }
    void initialize(const Setup& setup) override;
    void solve(bool vectors) override;

private:
    OpenMM::ComputeContext& cc;
    CommonEigenBatches batches;
    bool doubleArithmetic = true;
    std::vector<int> dims, info;
    std::vector<long long> matrixAt, valueAt; /* where each batch starts in the host arrays */
    std::vector<double> matrices, values;     /* double and mixed precision */
    std::vector<float> matricesFloat, valuesFloat;
    std::vector<double*> matrixList, valueList; /* per matrix, into the arrays above (made once) */
    std::vector<float*> matrixListFloat, valueListFloat;
};

} // namespace HessFit

#endif
