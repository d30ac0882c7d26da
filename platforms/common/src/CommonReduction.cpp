#include "CommonReduction.h"
#include <algorithm>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

void CommonReduction::createKernels(ComputeProgram& program) {
    reducePositions.kernel = program->createKernel("reducePositions");
    addReducedForces.kernel = program->createKernel("addReducedForces");
    mapBlockColumns.kernel = program->createKernel("mapBlockColumns");
    mapBlockRows.kernel = program->createKernel("mapBlockRows");
    symmetrizeBlocks.kernel = program->createKernel("symmetrizeReducedBlocks");
}

template <class T>
void CommonReduction::uploadArray(ComputeArray& array, const vector<T>& values, const char* name) {
    const size_t n = std::max<size_t>(values.size(), 1);
    if (!array.isInitialized())
        array.initialize(cc, n, sizeof(T), name);
    else if (array.getSize() != n)
        array.resize(n);
    if (!values.empty())
        array.upload(values.data(), true);
}

void CommonReduction::upload(const hf_model& model) {
    lists.build(model);
    numParticles = model.n_particles;
    if (!active())
        return;
    uploadArray(particle, lists.particle, "hessfitReducedParticle");
    uploadArray(partner, lists.partner, "hessfitReducedPartner");
    uploadArray(localParticle, lists.localParticle, "hessfitReducedLocalParticle");
    uploadArray(localPartner, lists.localPartner, "hessfitReducedLocalPartner");
    uploadArray(factor, lists.factor, "hessfitReducedFactor");
    uploadArray(moleculeStart, lists.moleculeStart, "hessfitReducedMoleculeStart");
    uploadArray(atomReduced, lists.atomReduced, "hessfitAtomReduced");
    uploadArray(partnerStart, lists.partnerStart, "hessfitPartnerStart");
    uploadArray(partnerEntries, lists.partnerEntries, "hessfitPartnerEntries");
    uploadArray(atomMolecule, lists.atomMolecule, "hessfitAtomMolecule");
    uploadArray(atomLocalRow, lists.atomLocalRow, "hessfitAtomLocalRow");
    uploadArray(atomTouched, lists.atomTouched, "hessfitAtomTouched");
    ArrayInterface& source = cc.getPosq();
    if (!posq.isInitialized()) {
        posq.initialize(cc, source.getSize(), source.getElementSize(), "hessfitReducedPosq");
        if (cc.getUseMixedPrecision())
            posqCorrection.initialize(cc, source.getSize(), source.getElementSize(), "hessfitReducedPosqCorrection");
        forces.initialize(cc, 3 * (size_t) cc.getPaddedNumAtoms(), sizeof(long long), "hessfitReducedForces");
    }
}

void CommonReduction::mapPositions(ArrayInterface& atomPos) {
    if (!active())
        return;
    cc.getPosq().copyTo(posq);
    if (cc.getUseMixedPrecision())
        cc.getPosqCorrection().copyTo(posqCorrection);
    ArrayInterface& correctionIn = cc.getUseMixedPrecision() ? cc.getPosqCorrection() : cc.getPosq();
    CommonArguments{reducePositions}(lists.numReduced)(particle)(partner)(factor)(atomPos)(cc.getPosq())(correctionIn)
        (posq)(positionCorrection());
    reducePositions.kernel->execute(lists.numReduced);
}

ArrayInterface& CommonReduction::positions() {
    return active() ? (ArrayInterface&) posq : cc.getPosq();
}

ArrayInterface& CommonReduction::positionCorrection() {
    if (!cc.getUseMixedPrecision())
        return positions();
    return active() ? (ArrayInterface&) posqCorrection : cc.getPosqCorrection();
}

ArrayInterface& CommonReduction::beginForces() {
    if (!active())
        return cc.getLongForceBuffer();
    cc.clearBuffer(forces);
    return forces;
}

void CommonReduction::endForces(ArrayInterface& atomPos) {
    if (!active())
        return;
    CommonArguments{addReducedForces}(numParticles)(atomReduced)(partnerStart)(partnerEntries)(particle)(factor)(atomPos)
        (cc.getPaddedNumAtoms())(forces)(cc.getLongForceBuffer());
    addReducedForces.kernel->execute(numParticles);
}

void CommonReduction::mapBlocks(ArrayInterface& blocks, ArrayInterface& molBlockOffset, ArrayInterface& molDim,
                                int transpose) {
    const int rows = 3 * numParticles;
    CommonArguments{mapBlockColumns}(rows)(transpose)(atomMolecule)(atomLocalRow)(moleculeStart)(localParticle)
        (localPartner)(factor)(molBlockOffset)(molDim)(blocks);
    mapBlockColumns.kernel->execute(rows);
    CommonArguments{mapBlockRows}(rows)(transpose)(atomMolecule)(atomLocalRow)(moleculeStart)(localParticle)
        (localPartner)(factor)(molBlockOffset)(molDim)(blocks);
    mapBlockRows.kernel->execute(rows);
}

void CommonReduction::mapHessianBlocks(ArrayInterface& blocks, ArrayInterface& molBlockOffset, ArrayInterface& molDim) {
    if (!active())
        return;
    mapBlocks(blocks, molBlockOffset, molDim, 1);
    const int rows = 3 * numParticles;
    CommonArguments{symmetrizeBlocks}(rows)(atomMolecule)(atomLocalRow)(atomTouched)(moleculeStart)(localParticle)
        (localPartner)(molBlockOffset)(molDim)(blocks);
    symmetrizeBlocks.kernel->execute(rows);
}

void CommonReduction::mapAdjoint(ArrayInterface& adjoint, ArrayInterface& molBlockOffset, ArrayInterface& molDim) {
    if (active())
        mapBlocks(adjoint, molBlockOffset, molDim, 0);
}

const vector<double>& CommonReduction::mapVector(const vector<double>& y) {
    if (!active())
        return y;
    mappedVector = y;
    for (int r = 0; r < lists.numReduced; r++) /* y_h <- f y_h + (1 - f) y_p */
        for (int c = 0; c < 3; c++) {
            double& yh = mappedVector[3 * (size_t) lists.particle[r] + c];
            yh = lists.factor[r] * yh + (1.0 - lists.factor[r]) * mappedVector[3 * (size_t) lists.partner[r] + c];
        }
    return mappedVector;
}
