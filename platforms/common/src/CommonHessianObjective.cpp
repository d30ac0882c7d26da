/*
 * CommonHessianObjective (CommonHessianObjective.h): the batched Hessian-space objective on the
 * device, one kernel source (kernels/objective*.cc) for CUDA and OpenCL.
 *
 * Per evaluation, each kernel launched once for all molecules (one work-group per molecule of a
 * list): gather the positions of projecting molecules (posq through the atom order), mass weighting
 * and the finiteness check, the eigenmatrix, the frequency matrix and its eigendecomposition (the Jacobi
 * kernel, LAPACK on the host or the platform's library: CommonBatchedEigensolver.h),
 * the pairing with frequency residuals and coefficients, the Hessian-element residuals with the
 * adjoint G, and the loss with the first failure. One download of {loss, failure} per evaluation;
 * the residuals only when asked. The spec is uploaded here, once.
 */
#include "CommonHessianObjective.h"
#include "CommonHessFitKernelSources.h"
#include "CommonHessianProgram.h"
#include "hf_core.h"
#include "HessianForceException.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

namespace {

/* The per-molecule records (ints and offsets) and a failed molecule's status; the kernels get these
 * (and the core's rigid-body tolerance) as defines (kernelDefines), so this is their only definition. */
enum { MiDim, MiAtoms, MiFirstAtom, MiPairing, MiProject, MiNumFreq, MiFirstFreq, MiNumEig, MiHessian, MolInt };
enum { MlBlock, MlResidual, MlFreqVectors, MlEigVectors, MlEigTargets, MlHessTargets, MlScratch, MlIntScratch, MolLong };
enum { StatusNonFinite = 1, StatusNotConverged = 2, StatusAssignment = 3 };

std::map<std::string, std::string> kernelDefines() {
    const std::pair<const char*, int> values[] = {
        {"MI_DIM", MiDim}, {"MI_ATOMS", MiAtoms}, {"MI_FIRST_ATOM", MiFirstAtom}, {"MI_PAIRING", MiPairing},
        {"MI_PROJECT", MiProject}, {"MI_NFREQ", MiNumFreq}, {"MI_FIRST_FREQ", MiFirstFreq}, {"MI_NEIG", MiNumEig},
        {"MI_HESSIAN", MiHessian}, {"MOL_INT", MolInt}, {"ML_BLOCK", MlBlock}, {"ML_RESIDUAL", MlResidual},
        {"ML_FREQ_VECTORS", MlFreqVectors}, {"ML_EIG_VECTORS", MlEigVectors}, {"ML_EIG_TARGETS", MlEigTargets},
        {"ML_HESS_TARGETS", MlHessTargets}, {"ML_SCRATCH", MlScratch}, {"ML_INT_SCRATCH", MlIntScratch},
        {"MOL_LONG", MolLong}, {"STATUS_NONFINITE", StatusNonFinite}, {"STATUS_NOT_CONVERGED", StatusNotConverged},
        {"STATUS_ASSIGNMENT", StatusAssignment}, {"PAIR_BY_POSITION", HessianObjectiveSpec::PairByPosition},
        {"PAIR_BY_OVERLAP", HessianObjectiveSpec::PairByOverlap}};
    std::map<std::string, std::string> defines;
    for (const auto& v : values)
        defines[v.first] = defineText(v.second);
    defines["HF_RIGID_ROTATION_TOLERANCE"] = defineText(HF_RIGID_ROTATION_TOLERANCE);
    return defines;
}

/* Scratch of one molecule: objectiveCommon.cc's SCR_FREQ_SIZE (the layout is the kernels'), then
 * V A and L of the eigenmatrix. */
long long realScratchSize(long long dim, long long k) {
    return 2 * dim * dim + 26 * dim + 39 + k * dim + k * k;
}
long long intScratchSize(long long dim) {
    return 3 * dim + 4 * (dim + 1);
}

const int JacobiMaxSweeps = 40;

/* Appends v to all and returns where it starts. */
long long append(vector<double>& all, const vector<double>& v) {
    const long long at = (long long) all.size();
    all.insert(all.end(), v.begin(), v.end());
    return at;
}

template <class T>
void uploadArray(ComputeContext& cc, ComputeArray& array, const vector<T>& data, const char* name) {
    array.initialize<T>(cc, std::max<size_t>(data.size(), 1), name);
    if (!data.empty())
        array.upload(data.data());
}

} // namespace

struct CommonHessianObjective::Impl {
    ComputeContext& cc;
    int numMolecules = 0, numFreqTargets = 0, groupSize = 0;
    long long numResiduals = 0, blockSize = 0;
    double frequencyFactor = 0.0;
    vector<int> activeList, eigenList, frequencyList, hessianList, allList;
    bool anyProjection = false;
    ComputeArray molInt, molLong, invSqrtMass, masses, freqTargets, freqWeights, freqThresholds, freqVectors;
    ComputeArray eigVectors, eigTargets, eigWeights, hessTargets, hessWeights, slotOfParticle, positions;
    ComputeArray scratch, intScratch, status, nModes, selectionDone, selected, paired, residuals, result;
    ComputeArray active, eigen, frequency, hessian, all;
    ComputeKernel gatherKernel, massWeightKernel, eigenmatrixKernel, projectModesKernel, jacobiModesKernel;
    ComputeKernel frequenciesKernel, adjointKernel, lossKernel;
    ComputeProgram program;
    bool anyOverlapPairing = false;
    vector<CommonBatchedEigensolver::Matrix> frequencyMatrices;
    std::unique_ptr<CommonBatchedEigensolver> eigensolver; /* null: the Jacobi kernel */

    const bool doubleArithmetic; /* the Hessian-space arithmetic (hsreal): double in double and mixed precision */

    Impl(ComputeContext& cc) : cc(cc), doubleArithmetic(cc.getUseDoublePrecision() || cc.getUseMixedPrecision()) {}
    void upload(const CommonMoleculeLayout& layout, const HessianObjectiveSpec& spec);
    void compile();
    [[noreturn]] void fail(int molecule, int code) const;
};

void CommonHessianObjective::Impl::upload(const CommonMoleculeLayout& layout, const HessianObjectiveSpec& spec) {
    numMolecules = (int) spec.molecules.size();
    if (layout.moleculeOffset.size() != (size_t) numMolecules + 1 || layout.blockOffset.size() != (size_t) numMolecules + 1)
        throw HessianForceException(HessianForceException::Size,
                                    "HessianForce: the device objective's molecule layout does not match the spec");
    frequencyFactor = spec.frequencyFactor;
    vector<int> mi(MolInt * (size_t) numMolecules, 0), slots;
    vector<long long> ml(MolLong * (size_t) numMolecules, 0);
    vector<double> sMass, mass, fTarget, fWeight, fThreshold(numMolecules, 0.0), fVectors, eVectors, eTargets, eWeights;
    vector<double> hTargets, hWeights;
    long long realAt = 0, intAt = 0;
    int numParticles = 0;
    for (int p : layout.moleculeAtoms)
        numParticles = std::max(numParticles, p + 1);
    slots.assign(std::max(numParticles, cc.getNumAtoms()), -1);
    mass.assign(layout.moleculeAtoms.size(), 0.0);
    sMass.assign(3 * layout.moleculeAtoms.size(), 0.0);
    blockSize = layout.blockOffset.back();
    for (int m = 0; m < numMolecules; m++) {
        const HessianObjectiveSpec::Molecule& mol = spec.molecules[m];
        const int first = layout.moleculeOffset[m], n = layout.moleculeOffset[m + 1] - first, dim = 3 * n;
        const bool freq = mol.frequencyPairing != HessianObjectiveSpec::NoFrequencies && !mol.frequencyTargets.empty();
        const int nf = freq ? (int) mol.frequencyTargets.size() : 0, k = mol.numEigenVectors(dim);
        const bool hess = !mol.hessianTargets.empty();
        int* r = &mi[MolInt * (size_t) m];
        long long* l = &ml[MolLong * (size_t) m];
        r[MiDim] = dim;
        r[MiAtoms] = n;
        r[MiFirstAtom] = first;
        r[MiPairing] = freq ? (int) mol.frequencyPairing : 0;
        r[MiProject] = freq && mol.projectExternal ? 1 : 0;
        r[MiNumFreq] = nf;
        r[MiFirstFreq] = numFreqTargets;
        r[MiNumEig] = k;
        r[MiHessian] = hess ? 1 : 0;
        l[MlBlock] = layout.blockOffset[m];
        l[MlResidual] = numResiduals;
        numResiduals += mol.numResiduals();
        numFreqTargets += (int) mol.frequencyTargets.size();
        /* per-atom masses and per-coordinate M^-1/2, at the layout's atom positions */
        for (int a = 0; a < (int) mol.masses.size() && a < n; a++) {
            mass[first + a] = mol.masses[a];
            for (int c = 0; c < 3; c++)
                sMass[3 * (size_t) (first + a) + c] = 1.0 / std::sqrt(mol.masses[a]);
        }
        if (freq) {
            frequencyList.push_back(m);
            fThreshold[m] = mol.frequencyThreshold;
            fTarget.insert(fTarget.end(), mol.frequencyTargets.begin(), mol.frequencyTargets.end());
            fWeight.insert(fWeight.end(), mol.frequencyWeights.begin(), mol.frequencyWeights.end());
            l[MlFreqVectors] = append(fVectors, mol.frequencyVectors);
            if (mol.projectExternal) {
                anyProjection = true;
                for (int a = 0; a < n; a++)
                    slots[layout.moleculeAtoms[first + a]] = first + a;
            }
        }
        if (k > 0) {
            eigenList.push_back(m);
            l[MlEigVectors] = append(eVectors, mol.eigenVectors);
            l[MlEigTargets] = append(eTargets, mol.eigenTargets);
            append(eWeights, mol.eigenWeights);
        }
        if (hess) {
            hessianList.push_back(m);
            l[MlHessTargets] = append(hTargets, mol.hessianTargets);
            append(hWeights, mol.hessianWeights);
        }
        if (freq || k > 0 || hess)
            activeList.push_back(m);
        if (freq)
            anyOverlapPairing = anyOverlapPairing || mol.frequencyPairing == HessianObjectiveSpec::PairByOverlap;
        if (freq || k > 0) {
            if (freq)
                frequencyMatrices.push_back({m, dim, realAt});
            l[MlScratch] = realAt;
            l[MlIntScratch] = intAt;
            realAt += realScratchSize(dim, k);
            intAt += intScratchSize(dim);
        }
        allList.push_back(m);
    }
    if (numResiduals > INT_MAX || intAt > INT_MAX)
        throw HessianForceException(HessianForceException::Size,
                                    "HessianForce: the Hessian objective is too large for the device objective (" +
                                        std::to_string(numResiduals) + " residuals)");
    const int realSize = doubleArithmetic ? sizeof(double) : sizeof(float);
    uploadArray(cc, molInt, mi, "hfObjMolInt");
    uploadArray(cc, molLong, ml, "hfObjMolLong");
    uploadArray(cc, invSqrtMass, sMass, "hfObjInvSqrtMass");
    uploadArray(cc, masses, mass, "hfObjMasses");
    uploadArray(cc, freqTargets, fTarget, "hfObjFreqTargets");
    uploadArray(cc, freqWeights, fWeight, "hfObjFreqWeights");
    uploadArray(cc, freqThresholds, fThreshold, "hfObjFreqThresholds");
    uploadArray(cc, freqVectors, fVectors, "hfObjFreqVectors");
    uploadArray(cc, eigVectors, eVectors, "hfObjEigVectors");
    uploadArray(cc, eigTargets, eTargets, "hfObjEigTargets");
    uploadArray(cc, eigWeights, eWeights, "hfObjEigWeights");
    uploadArray(cc, hessTargets, hTargets, "hfObjHessTargets");
    uploadArray(cc, hessWeights, hWeights, "hfObjHessWeights");
    uploadArray(cc, slotOfParticle, slots, "hfObjSlotOfParticle");
    uploadArray(cc, active, activeList, "hfObjActive");
    uploadArray(cc, eigen, eigenList, "hfObjEigen");
    uploadArray(cc, frequency, frequencyList, "hfObjFrequency");
    uploadArray(cc, hessian, hessianList, "hfObjHessian");
    uploadArray(cc, all, allList, "hfObjAll");
    const vector<int> zeros(std::max(numMolecules, 1), 0), none(std::max(numFreqTargets, 1), -1);
    uploadArray(cc, status, zeros, "hfObjStatus");
    uploadArray(cc, nModes, zeros, "hfObjModes");
    uploadArray(cc, selectionDone, zeros, "hfObjSelectionDone");
    uploadArray(cc, selected, none, "hfObjSelected");
    uploadArray(cc, paired, none, "hfObjPaired");
    positions.initialize<double>(cc, std::max<size_t>(3 * layout.moleculeAtoms.size(), 1), "hfObjPositions");
    scratch.initialize(cc, (size_t) std::max(realAt, 1LL), realSize, "hfObjScratch");
    cc.clearBuffer(scratch); /* a batched eigensolver also reads the matrices of failed molecules */
    intScratch.initialize<int>(cc, (size_t) std::max(intAt, 1LL), "hfObjIntScratch");
    residuals.initialize<double>(cc, (size_t) std::max(numResiduals, 1LL), "hfObjResiduals");
    cc.clearBuffer(residuals);
    result.initialize<double>(cc, 3, "hfObjResult");
}

void CommonHessianObjective::Impl::compile() {
    std::map<std::string, std::string> defines = kernelDefines();
    if (doubleArithmetic) {
        defines["HS_DOUBLE"] = "1";
        defines["JACOBI_TOLERANCE"] = "1e-15";
    }
    else
        defines["JACOBI_TOLERANCE"] = "1e-7f";
    defines["JACOBI_MAX_SWEEPS"] = std::to_string(JacobiMaxSweeps);
    const std::string source = CommonHessFitKernelSources::objectiveCommon + CommonHessFitKernelSources::objectiveRigidBody +
                               CommonHessFitKernelSources::objectiveJacobi +
                               CommonHessFitKernelSources::objectiveAssignment +
                               CommonHessFitKernelSources::objectiveKernels + CommonHessFitKernelSources::objectiveBatch;
    /* the per-molecule kernels use a power-of-two work-group (group sums); smaller if a kernel needs it */
    groupSize = 1;
    while (2 * groupSize <= std::min(256, cc.getMaxThreadBlockSize()))
        groupSize *= 2;
    for (;;) {
        defines["OBJ_GROUP_SIZE"] = std::to_string(groupSize);
        program = cc.compileProgram(source, defines);
        gatherKernel = program->createKernel("objectiveGatherPositions");
        massWeightKernel = program->createKernel("objectiveMassWeight");
        eigenmatrixKernel = program->createKernel("objectiveEigenmatrix");
        projectModesKernel = program->createKernel("objectiveProjectModes");
        jacobiModesKernel = program->createKernel("objectiveJacobiModes");
        frequenciesKernel = program->createKernel("objectiveFrequencies");
        adjointKernel = program->createKernel("objectiveAdjoint");
        lossKernel = program->createKernel("objectiveLoss");
        int fits = INT_MAX;
        for (ComputeKernel* k : {&massWeightKernel, &eigenmatrixKernel, &projectModesKernel, &jacobiModesKernel,
                                 &frequenciesKernel, &adjointKernel, &lossKernel})
            fits = std::min(fits, (*k)->getMaxBlockSize());
        if (fits >= groupSize)
            break;
        if (groupSize <= 32)
            throw HessianForceException(HessianForceException::Unsupported,
                                        "HessianForce: the device cannot run the objective kernels with 32 work-items per group");
        groupSize /= 2;
    }

    gatherKernel->addArg(cc.getNumAtoms());
    gatherKernel->addArg(cc.getPosq());
    /* read only in mixed precision (USE_MIXED_PRECISION) */
    gatherKernel->addArg(cc.getUseMixedPrecision() ? cc.getPosqCorrection() : cc.getPosq());
    gatherKernel->addArg(cc.getAtomIndexArray());
    gatherKernel->addArg(slotOfParticle);
    gatherKernel->addArg(positions);

    massWeightKernel->addArg(active);
    massWeightKernel->addArg(molInt);
    massWeightKernel->addArg(molLong);
    massWeightKernel->addArg(); /* 3: blocks */
    massWeightKernel->addArg(invSqrtMass);
    massWeightKernel->addArg(scratch);
    massWeightKernel->addArg(status);

    for (ArrayInterface* a : {&eigen, &molInt, &molLong, &eigVectors, &eigTargets, &eigWeights, &scratch, &status, &residuals})
        eigenmatrixKernel->addArg(*a);

    for (ArrayInterface* a : {&frequency, &molInt, &molLong, &masses, &positions, &scratch, &status, &nModes})
        projectModesKernel->addArg(*a);
    for (ArrayInterface* a : {&frequency, &molInt, &molLong, &scratch, &intScratch, &status})
        jacobiModesKernel->addArg(*a);
    jacobiModesKernel->addArg(0); /* 6: vectorsWanted */

    for (ArrayInterface* a : {&frequency, &molInt, &molLong, &freqTargets, &freqWeights, &freqThresholds, &freqVectors,
                              &scratch, &intScratch, &status, &nModes, &selectionDone, &selected, &paired, &residuals})
        frequenciesKernel->addArg(*a);
    frequenciesKernel->addArg(frequencyFactor);
    frequenciesKernel->addArg(0); /* 16: gradient */

    adjointKernel->addArg(all); /* 0: the list */
    adjointKernel->addArg(molInt);
    adjointKernel->addArg(molLong);
    adjointKernel->addArg(); /* 3: blocks */
    for (ArrayInterface* a : {&invSqrtMass, &eigVectors, &hessTargets, &hessWeights, &scratch, &status, &nModes, &residuals})
        adjointKernel->addArg(*a);
    adjointKernel->addArg(); /* 12: adjoint */
    adjointKernel->addArg(0); /* 13: writeAdjoint */
    /* the last argument of every per-molecule kernel: the start of the chunk of its list (launch) */
    for (ComputeKernel* k : {&massWeightKernel, &eigenmatrixKernel, &projectModesKernel, &jacobiModesKernel,
                             &frequenciesKernel, &adjointKernel})
        (*k)->addArg(0);

    lossKernel->addArg(residuals);
    lossKernel->addArg((int) numResiduals);
    lossKernel->addArg(status);
    lossKernel->addArg(numMolecules);
    lossKernel->addArg(result);
}

void CommonHessianObjective::Impl::fail(int molecule, int code) const {
    std::ostringstream msg;
    msg << "HessianForce: Hessian objective, molecule " << molecule << ": ";
    if (code == StatusNotConverged && eigensolver)
        msg << "the eigensolver (" << eigensolver->name() << ") failed on its frequency matrix";
    else if (code == StatusNotConverged)
        msg << "the Jacobi eigensolver did not converge in " << JacobiMaxSweeps << " sweeps";
    else
        msg << "the Hessian block or its modes are not finite at these parameters";
    throw HessianForceException(HessianForceException::Value, msg.str());
}

CommonHessianObjective::CommonHessianObjective(ComputeContext& cc, const CommonMoleculeLayout& layout,
                                               const HessianObjectiveSpec& spec,
                                               CommonBatchedEigensolverFactory makeEigensolver)
    : impl(new Impl(cc)) {
    try {
        if (!cc.getSupportsDoublePrecision())
            throw HessianForceException(HessianForceException::Unsupported,
                                        "HessianForce: the device objective needs double precision support "
                                        "(the Hessian blocks and G are double arrays)");
        ContextSelector selector(cc);
        impl->upload(layout, spec);
        impl->compile();
        if (!impl->frequencyMatrices.empty())
            impl->eigensolver.reset(
                chooseBatchedEigensolver(cc, (int) impl->frequencyMatrices.size(), makeEigensolver));
        if (impl->eigensolver)
            impl->eigensolver->initialize({impl->program, &impl->scratch, &impl->status,
                                           impl->doubleArithmetic,
                                           impl->frequencyMatrices});
    }
    catch (...) {
        delete impl;
        throw;
    }
}

CommonHessianObjective::~CommonHessianObjective() {
    delete impl;
}

double CommonHessianObjective::evaluate(ComputeArray& blocks, ComputeArray* adjoint, vector<double>* residuals) {
    Impl& d = *impl;
    ContextSelector selector(d.cc);
    for (ComputeArray* a : {&blocks, adjoint})
        if (a != nullptr && ((long long) a->getSize() < d.blockSize || a->getElementSize() != (int) sizeof(double)))
            throw HessianForceException(HessianForceException::Size,
                                        "HessianForce: the device objective's " + a->getName() + " array has " +
                                            std::to_string(a->getSize()) + " elements of " +
                                            std::to_string(a->getElementSize()) + " bytes; it needs " +
                                            std::to_string(d.blockSize) + " doubles");
    const int group = d.groupSize;
    const bool gradient = adjoint != nullptr;
    /* One work-group per listed molecule, in chunks of at most the groups OpenMM launches at once. */
    const int maxGroups = d.cc.getNumThreadBlocks();
    auto launch = [group, maxGroups](ComputeKernel& kernel, int offsetArg, const vector<int>& list) {
        for (int start = 0; start < (int) list.size(); start += maxGroups) {
            kernel->setArg(offsetArg, start);
            kernel->execute(std::min(maxGroups, (int) list.size() - start) * group, group);
        }
    };
    if (d.anyProjection)
        d.gatherKernel->execute(d.cc.getNumAtoms());
    d.massWeightKernel->setArg(3, blocks);
    launch(d.massWeightKernel, 7, d.activeList);
    launch(d.eigenmatrixKernel, 9, d.eigenList);
    launch(d.projectModesKernel, 8, d.frequencyList);
    if (d.eigensolver)
        d.eigensolver->solve(gradient || d.anyOverlapPairing);
    else {
        d.jacobiModesKernel->setArg(6, gradient ? 1 : 0);
        launch(d.jacobiModesKernel, 7, d.frequencyList);
    }
    d.frequenciesKernel->setArg(16, gradient ? 1 : 0);
    launch(d.frequenciesKernel, 17, d.frequencyList);
    d.adjointKernel->setArg(0, gradient ? d.all : d.hessian);
    d.adjointKernel->setArg(3, blocks);
    d.adjointKernel->setArg(12, gradient ? *adjoint : blocks); /* not written without the gradient */
    d.adjointKernel->setArg(13, gradient ? 1 : 0);
    launch(d.adjointKernel, 14, gradient ? d.allList : d.hessianList);
    d.lossKernel->execute(group, group);
    double result[3];
    d.result.download(result);
    if (result[1] >= 0)
        d.fail((int) result[1], (int) result[2]);
    if (residuals != nullptr) {
        residuals->resize((size_t) d.numResiduals);
        if (d.numResiduals > 0)
            d.residuals.download(residuals->data());
    }
    return result[0];
}

void CommonHessianObjective::getPairing(vector<int>& modes) {
    Impl& d = *impl;
    modes.assign((size_t) d.numFreqTargets, -1);
    if (d.numFreqTargets > 0) {
        ContextSelector selector(d.cc);
        d.paired.download(modes.data());
    }
}
