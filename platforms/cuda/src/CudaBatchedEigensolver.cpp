/*
 * cuSOLVER's batched symmetric eigensolver for the objective's frequency matrices
 * (CudaBatchedEigensolver.h). The matrices of one dimension form one batch (CommonEigenBatches):
 * gathered from the molecules' scratch into a contiguous column-major array, diagonalised by
 * cusolverDnXsyevBatched (eigenvalues ascending, eigenvectors as columns, so as rows of the
 * row-major A: the Jacobi kernel's layout), and scattered back, which also turns a non-zero info
 * into the molecule's status. Everything runs on OpenMM's stream; nothing is
 * downloaded. Every cuSOLVER status is checked.
 */
#include "CudaBatchedEigensolver.h"
#include "CommonEigenBatches.h"
#include "HessianForceException.h"
#include "openmm/common/ContextSelector.h"
#include "openmm/cuda/CudaArray.h"
#include "openmm/cuda/CudaContext.h"
#include <cusolverDn.h>
#include <algorithm>
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
    void* pointer(ComputeArray& array) {
        return reinterpret_cast<void*>(cu.unwrap(array).getDevicePointer());
    }
    CudaContext& cu;
    cusolverDnHandle_t handle = nullptr;
    cusolverDnParams_t params = nullptr;
    cudaDataType type = CUDA_R_64F;
    CommonEigenBatches batches;
    vector<std::unique_ptr<ComputeArray>> workspaces; /* per batch */
    vector<size_t> deviceBytes, hostBytes;
    vector<vector<char>> hostWorkspaces;
};

void CusolverEigensolver::initialize(const Setup& setup) {
    type = setup.doubleArithmetic ? CUDA_R_64F : CUDA_R_32F;
    batches.initialize(cu, setup);
    for (const auto& b : batches.batches) {
        size_t device = 0, host = 0;
        check(cusolverDnXsyevBatched_bufferSize(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, b->dim,
                                                type, pointer(b->matrices), b->dim, type, pointer(b->values), type,
                                                &device, &host, b->count),
              "cusolverDnXsyevBatched_bufferSize");
        workspaces.emplace_back(new ComputeArray());
        workspaces.back()->initialize<double>(cu, std::max<size_t>(1, (device + 7) / 8), "hfEigWorkspace");
        deviceBytes.push_back(device);
        hostBytes.push_back(host);
        hostWorkspaces.emplace_back(std::max<size_t>(1, host));
    }
}

void CusolverEigensolver::solve(bool vectors) {
    check(cusolverDnSetStream(handle, reinterpret_cast<cudaStream_t>(cu.getCurrentStream())), "cusolverDnSetStream");
    for (size_t i = 0; i < batches.batches.size(); i++) {
        CommonEigenBatches::Batch& b = *batches.batches[i];
        batches.gather(b);
        check(cusolverDnXsyevBatched(handle, params, vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR,
                                     CUBLAS_FILL_MODE_LOWER, b.dim, type, pointer(b.matrices), b.dim, type,
                                     pointer(b.values), type, pointer(*workspaces[i]), deviceBytes[i],
                                     hostWorkspaces[i].data(), hostBytes[i], reinterpret_cast<int*>(pointer(b.info)),
                                     b.count),
              "cusolverDnXsyevBatched");
        batches.scatter(b, vectors);
    }
}

} // namespace

CommonBatchedEigensolver* HessFit::makeCudaBatchedEigensolver(ComputeContext& cc) {
    return new CusolverEigensolver(dynamic_cast<CudaContext&>(cc));
}
