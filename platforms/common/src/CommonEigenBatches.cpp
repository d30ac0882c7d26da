/* CommonEigenBatches (CommonEigenBatches.h). */
#include "CommonEigenBatches.h"
#include <map>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

void CommonEigenBatches::initialize(ComputeContext& cc, const CommonBatchedEigensolver::Setup& setup) {
    const int real = setup.doubleArithmetic ? (int) sizeof(double) : (int) sizeof(float);
    std::map<int, vector<CommonBatchedEigensolver::Matrix>> byDim;
    for (const CommonBatchedEigensolver::Matrix& m : setup.matrices)
        byDim[m.dim].push_back(m);
    for (const auto& group : byDim) {
        std::unique_ptr<Batch> b(new Batch());
        b->dim = group.first;
        b->count = (int) group.second.size();
        vector<long long> offsets;
        vector<int> molecules;
        for (const CommonBatchedEigensolver::Matrix& m : group.second) {
            offsets.push_back(m.offset);
            molecules.push_back(m.molecule);
        }
        const size_t dim = (size_t) b->dim, count = (size_t) b->count;
        b->offsets.initialize<long long>(cc, count, "hfEigOffsets");
        b->offsets.upload(offsets);
        b->molecules.initialize<int>(cc, count, "hfEigMolecules");
        b->molecules.upload(molecules);
        b->matrices.initialize(cc, dim * dim * count, real, "hfEigMatrices");
        b->values.initialize(cc, dim * count, real, "hfEigValues");
        b->info.initialize<int>(cc, count, "hfEigInfo");
        b->gather = setup.program->createKernel("objectiveBatchGather");
        b->gather->addArg(b->offsets);
        b->gather->addArg(b->count);
        b->gather->addArg(b->dim);
        b->gather->addArg(*setup.scratch);
        b->gather->addArg(b->matrices);
        b->scatter = setup.program->createKernel("objectiveBatchScatter");
        b->scatter->addArg(b->offsets);
        b->scatter->addArg(b->molecules);
        b->scatter->addArg(b->count);
        b->scatter->addArg(b->dim);
        for (ArrayInterface* a : {&b->matrices, &b->values, &b->info, setup.scratch, setup.status})
            b->scatter->addArg(*a);
        b->scatter->addArg(1); /* 9: vectors */
        batches.push_back(std::move(b));
    }
}

void CommonEigenBatches::gather(Batch& b) {
    b.gather->execute(b.dim * b.dim * b.count);
}

void CommonEigenBatches::scatter(Batch& b, bool vectors) {
    b.scatter->setArg(9, vectors ? 1 : 0);
    b.scatter->execute(b.dim * b.dim * b.count);
}
