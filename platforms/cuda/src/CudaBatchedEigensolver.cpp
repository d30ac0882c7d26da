/*
 * cuSOLVER's batched symmetric eigensolver for the objective's frequency matrices
 * (CudaBatchedEigensolver.h). The matrices of one dimension form one batch: gathered from the
 * molecules' scratch into a contiguous column-major array (objectiveBatchGather), diagonalised by
 * cusolverDnXsyevBatched (eigenvalues ascending, eigenvectors as columns, so as rows of the
 * row-major A: the Jacobi kernel's layout), and scattered back (objectiveBatchScatter), which also
 * turns a non-zero info into the molecule's status. Everything runs on OpenMM's stream; nothing is
 * downloaded. Every cuSOLVER status is checked.
 */
#include "CudaBatchedEigensolver.h"
#include "HessianForceException.h"
#include "openmm/common/ContextSelector.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <cusolverDn.h>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

namespace {

void check(cusolverStatus_t status, const char* call) {
    if (status != CUSOLVER_STATUS_SUCCESS)
        throw HessianForceException(HessianForceException::Unsupported,
                                    std::string("HessianForce: CUDA eigensolver: ") + call + " failed (cusolverStatus " +
                                        std::to_string((int) status) + ")");
}

class CusolverEigensolver : public CommonBatchedEigensolver {
public:
    explicit CusolverEigensolver(CudaContext& cu) : cu(cu) {
        ContextSelector selector(cu);
        check(cusolverDnCreate(&handle), "cusolverDnCreate");
        check(cusolverDnCreateParams(&params), "cusolverDnCreateParams");
    }
    ~CusolverEigensolver() override {
        ContextSelector selector(cu);
        batches.clear();
        if (params != nullptr)
            cusolverDnDestroyParams(params);
        if (handle != nullptr)
            cusolverDnDestroy(handle);
    }
    std::string name() const override {
        return "cuSOLVER's batched syev";
    }
    void initialize(const Setup& setup) override;
    void solve(bool vectors) override;

private:
    struct Batch {
        int dim = 0, count = 0;
        ComputeArray offsets, molecules, matrices, values, info, workspace;
        vector<char> hostWorkspace;
        size_t deviceBytes = 0, hostBytes = 0;
        ComputeKernel gather, scatter;
    };
    void* pointer(ComputeArray& array) {
        return reinterpret_cast<void*>(cu.unwrap(array).getDevicePointer());
    }
    CudaContext& cu;
    cusolverDnHandle_t handle = nullptr;
    cusolverDnParams_t params = nullptr;
    cudaDataType type = CUDA_R_64F;
    vector<std::unique_ptr<Batch>> batches;
};

void CusolverEigensolver::initialize(const Setup& setup) {
    type = setup.doubleArithmetic ? CUDA_R_64F : CUDA_R_32F;
    const int real = setup.doubleArithmetic ? (int) sizeof(double) : (int) sizeof(float);
    std::map<int, vector<Matrix>> byDim;
    for (const Matrix& m : setup.matrices)
        byDim[m.dim].push_back(m);
    for (const auto& group : byDim) {
        std::unique_ptr<Batch> b(new Batch());
        b->dim = group.first;
        b->count = (int) group.second.size();
        vector<long long> offsets;
        vector<int> molecules;
        for (const Matrix& m : group.second) {
            offsets.push_back(m.offset);
            molecules.push_back(m.molecule);
        }
        const size_t dim = (size_t) b->dim, count = (size_t) b->count;
        b->offsets.initialize<long long>(cu, count, "hfEigOffsets");
        b->offsets.upload(offsets);
        b->molecules.initialize<int>(cu, count, "hfEigMolecules");
        b->molecules.upload(molecules);
        b->matrices.initialize(cu, dim * dim * count, real, "hfEigMatrices");
        b->values.initialize(cu, dim * count, real, "hfEigValues");
        b->info.initialize<int>(cu, count, "hfEigInfo");
        check(cusolverDnXsyevBatched_bufferSize(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                                b->dim, type, pointer(b->matrices), b->dim, type, pointer(b->values),
                                                type, &b->deviceBytes, &b->hostBytes, b->count),
              "cusolverDnXsyevBatched_bufferSize");
        b->workspace.initialize<double>(cu, std::max<size_t>(1, (b->deviceBytes + 7) / 8), "hfEigWorkspace");
        b->hostWorkspace.resize(std::max<size_t>(1, b->hostBytes));
        b->gather = setup.program->createKernel("objectiveBatchGather");
        b->gather->addArg(b->offsets);
        b->gather->addArg(b->count);
        b->gather->addArg(b->dim);
        b->gather->addArg(*setup.scratch);
        b->gather->addArg(b->matrices);
        b->scatter = setup.program->createKernel("objectiveBatchScatter");
        for (ArrayInterface* a : {&b->offsets, &b->molecules})
            b->scatter->addArg(*a);
        b->scatter->addArg(b->count);
        b->scatter->addArg(b->dim);
        for (ArrayInterface* a : {&b->matrices, &b->values, &b->info, setup.scratch, setup.status})
            b->scatter->addArg(*a);
        b->scatter->addArg(1); /* 9: vectors */
        batches.push_back(std::move(b));
    }
}

void CusolverEigensolver::solve(bool vectors) {
    check(cusolverDnSetStream(handle, reinterpret_cast<cudaStream_t>(cu.getCurrentStream())), "cusolverDnSetStream");
    for (const std::unique_ptr<Batch>& b : batches) {
        const int elements = b->dim * b->dim * b->count;
        b->gather->execute(elements);
        check(cusolverDnXsyevBatched(handle, params, vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR,
                                     CUBLAS_FILL_MODE_LOWER, b->dim, type, pointer(b->matrices), b->dim, type,
                                     pointer(b->values), type, pointer(b->workspace), b->deviceBytes,
                                     b->hostWorkspace.data(), b->hostBytes, reinterpret_cast<int*>(pointer(b->info)),
                                     b->count),
              "cusolverDnXsyevBatched");
        b->scatter->setArg(9, vectors ? 1 : 0);
        b->scatter->execute(elements);
    }
}

} // namespace

CommonBatchedEigensolver* HessFit::makeCudaBatchedEigensolver(ComputeContext& cc) {
    const char* choice = std::getenv("HESSFIT_CUDA_EIGENSOLVER");
    if (choice == nullptr || choice[0] == '\0' || std::strcmp(choice, "cusolver") == 0)
        return new CusolverEigensolver(dynamic_cast<CudaContext&>(cc));
    if (std::strcmp(choice, "jacobi") == 0)
        return nullptr;
    throw HessianForceException(HessianForceException::Unsupported,
                                std::string("HessianForce: HESSFIT_CUDA_EIGENSOLVER = '") + choice +
                                    "': use cusolver (the default) or jacobi");
}
