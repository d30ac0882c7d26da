/* CommonHostEigensolver (CommonHostEigensolver.h). */
#include "CommonHostEigensolver.h"
#include "hf_core.h"

using namespace HessFit;
using namespace OpenMM;
using std::vector;

/* Every matrix of every batch, in batch order: where it and its eigenvalues lie in the host arrays. */
template <class Real>
static void listOf(const CommonEigenBatches& batches, const vector<long long>& matrixAt, const vector<long long>& valueAt,
                   vector<Real>& matrices, vector<Real>& values, vector<Real*>& matrixList, vector<Real*>& valueList) {
    for (size_t i = 0; i < batches.batches.size(); i++) {
        const CommonEigenBatches::Batch& b = *batches.batches[i];
        for (int k = 0; k < b.count; k++) {
            matrixList.push_back(matrices.data() + matrixAt[i] + (long long) b.dim * b.dim * k);
            valueList.push_back(values.data() + valueAt[i] + (long long) b.dim * k);
        }
    }
}

void CommonHostEigensolver::initialize(const Setup& setup) {
    doubleArithmetic = setup.doubleArithmetic;
    batches.initialize(cc, setup);
    long long matrixSize = 0, valueSize = 0;
    for (const auto& b : batches.batches) {
        matrixAt.push_back(matrixSize);
        valueAt.push_back(valueSize);
        matrixSize += (long long) b->dim * b->dim * b->count;
        valueSize += (long long) b->dim * b->count;
        dims.insert(dims.end(), b->count, b->dim);
    }
    info.assign(dims.size(), 0);
    if (doubleArithmetic) {
        matrices.resize((size_t) matrixSize);
        values.resize((size_t) valueSize);
        listOf(batches, matrixAt, valueAt, matrices, values, matrixList, valueList);
    }
    else {
        matricesFloat.resize((size_t) matrixSize);
        valuesFloat.resize((size_t) valueSize);
        listOf(batches, matrixAt, valueAt, matricesFloat, valuesFloat, matrixListFloat, valueListFloat);
    }
}

void CommonHostEigensolver::solve(bool vectors) {
    const size_t real = doubleArithmetic ? sizeof(double) : sizeof(float);
    char* hostMatrices = doubleArithmetic ? (char*) matrices.data() : (char*) matricesFloat.data();
    char* hostValues = doubleArithmetic ? (char*) values.data() : (char*) valuesFloat.data();
    for (size_t i = 0; i < batches.batches.size(); i++) {
        batches.gather(*batches.batches[i]);
        batches.batches[i]->matrices.download(hostMatrices + real * matrixAt[i]);
    }
    if (doubleArithmetic)
        hf_symmetric_eigen_list((int) dims.size(), dims.data(), matrixList.data(), valueList.data(), vectors ? 1 : 0,
                                info.data());
    else
        hf_symmetric_eigen_list_float((int) dims.size(), dims.data(), matrixListFloat.data(), valueListFloat.data(),
                                      vectors ? 1 : 0, info.data());
    int at = 0;
    for (size_t i = 0; i < batches.batches.size(); i++) {
        CommonEigenBatches::Batch& b = *batches.batches[i];
        if (vectors)
            b.matrices.upload(hostMatrices + real * matrixAt[i]);
        b.values.upload(hostValues + real * valueAt[i]);
        b.info.upload(info.data() + at);
        at += b.count;
        batches.scatter(b, vectors);
    }
}
