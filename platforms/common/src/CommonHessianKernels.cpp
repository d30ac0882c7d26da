#include "CommonHessianKernels.h"
#include "CommonHessianProgram.h"
#include "CommonHessianObjective.h"
#include "HessianForceException.h"
#include "openmm/common/ComputeForceInfo.h"
#include "openmm/common/ContextSelector.h"
#include "openmm/internal/ContextImpl.h"
#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

using namespace HessFit;
using namespace OpenMM;
using std::vector;

/**
 * What OpenMM may know of the force: its particle groups are the listed terms' atoms, and no two
 * distinct particles are interchangeable, so OpenMM never reorders or swaps the molecules. (The
 * kernels still read positions through the inverse of the context's atom order.)
 */
class CommonCalcHessianForceKernel::ForceInfo : public ComputeForceInfo {
public:
    void setGroups(const CommonTermLists& lists) {
        groups.assign(lists.numListed, vector<int>());
        for (int t = 0; t < lists.numListed; t++)
            for (int a = 0; a < CommonTermLists::AtomsPerTerm && lists.atoms[CommonTermLists::AtomsPerTerm * t + a] >= 0; a++) {
                const int p = lists.atoms[CommonTermLists::AtomsPerTerm * t + a];
                if (std::find(groups[t].begin(), groups[t].end(), p) == groups[t].end()) // a bend-bend may list one twice
                    groups[t].push_back(p);
            }
    }
    bool areParticlesIdentical(int particle1, int particle2) override {
        return particle1 == particle2;
    }
    int getNumParticleGroups() override {
        return (int) groups.size();
    }
    void getParticlesInGroup(int index, vector<int>& particles) override {
        particles = groups[index];
    }
    bool areGroupsIdentical(int group1, int group2) override {
        return group1 == group2;
    }
private:
    vector<vector<int> > groups;
};

/** Keeps atomPos (particle -> row of posq) current if OpenMM ever reorders the atoms. */
class CommonCalcHessianForceKernel::AtomOrderListener : public ComputeContext::ReorderListener {
public:
    explicit AtomOrderListener(CommonCalcHessianForceKernel& owner) : owner(owner) {}
    void execute() override {
        owner.uploadAtomOrder();
    }
private:
    CommonCalcHessianForceKernel& owner;
};

CommonCalcHessianForceKernel::CommonCalcHessianForceKernel(std::string name, const Platform& platform, ComputeContext& cc,
                                                           CommonBatchedEigensolverFactory makeEigensolver)
    : CalcHessianForceKernel(name, platform), cc(cc), makeEigensolver(makeEigensolver), reduction(cc) {
}

CommonCalcHessianForceKernel::~CommonCalcHessianForceKernel() {
}

int CommonCalcHessianForceKernel::realSize() const {
    return cc.getUseDoublePrecision() ? (int) sizeof(double) : (int) sizeof(float);
}

void CommonCalcHessianForceKernel::sizeArray(ComputeArray& array, size_t count, int elementSize, const char* name,
                                             bool growOnly) {
    // An array keeps its element size for the Context's life (the precision does not change).
    const size_t n = std::max<size_t>(count, 1);
    if (!array.isInitialized())
        array.initialize(cc, n, elementSize, name);
    else if (growOnly ? array.getSize() < n : array.getSize() != n)
        array.resize(n);
}

template <class T>
void CommonCalcHessianForceKernel::uploadArray(ComputeArray& array, const vector<T>& values, const char* name) {
    sizeArray(array, values.size(), sizeof(T), name);
    if (!values.empty())
        array.upload(values.data(), true);
}

template <class T>
void CommonCalcHessianForceKernel::growAndUpload(ComputeArray& array, const T* values, size_t count, const char* name) {
    sizeArray(array, count, sizeof(T), name, true);
    if (count > 0)
        array.uploadSubArray(values, 0, (int) count, true);
}

void CommonCalcHessianForceKernel::initialize(const System&, const HessianForce& force) {
    ContextSelector selector(cc);
    if (!cc.getSupportsDoublePrecision())
        throw HessianForceException(HessianForceException::Unsupported,
                                    "HessianForce: this device has no double precision, which the GPU kernels need for "
                                    "the parameter table and every sum");
    if (!cc.getSupports64BitGlobalAtomics())
        throw HessianForceException(HessianForceException::Unsupported,
                                    "HessianForce: this device has no 64-bit atomic addition, which OpenMM's fixed-point "
                                    "force buffer needs");
    numParticles = force.getNumParticles();
    reduceBlock = 1;
    while (2 * reduceBlock <= std::min(128, cc.getMaxThreadBlockSize()))
        reduceBlock *= 2;

    ComputeProgram program = cc.compileProgram(hessianProgramSource(),
                                               hessianProgramDefines(cc.getUseMixedPrecision(), reduceBlock));
    termEnergyForces.kernel = program->createKernel("computeTermEnergyForces");
    termHessians.kernel = program->createKernel("computeTermHessians");
    termSlotValues.kernel = program->createKernel("computeTermSlotValues");
    gatherForces.kernel = program->createKernel("gatherForces");
    gatherHessianBlocks.kernel = program->createKernel("gatherHessianBlocks");
    reduceSegments.kernel = program->createKernel("reduceSegments");
    addTotalEnergy.kernel = program->createKernel("addTotalEnergy");
    termBilinearValues.kernel = program->createKernel("computeTermBilinearValues");
    reduceBilinearRows.kernel = program->createKernel("reduceBilinearRows");
    reduction.createKernels(program);
    const char* jacobianRoute = std::getenv("HESSFIT_GPU_JACOBIAN");
    const std::string route = jacobianRoute != nullptr && jacobianRoute[0] != '\0' ? jacobianRoute : "device";
    if (route != "device" && route != "host")
        throw HessianForceException(HessianForceException::Unsupported, "HessianForce: HESSFIT_GPU_JACOBIAN = '" +
                                                                            route + "': use device (the default) or host");
    jacobianOnHost = route == "host";

    uploadModel(force);
    uploadArray(table, force.getParameters(), "hessfitTable");
    uploadAtomOrder();
    sizeArray(geometryFlag, 1, sizeof(int), "hessfitGeometryFlag");
    info = new ForceInfo();
    info->setGroups(lists);
    cc.addForce(info);
    cc.addReorderListener(new AtomOrderListener(*this));
}

void CommonCalcHessianForceKernel::uploadModel(const HessianForce& force) {
    flat.build(force);
    const hf_model& m = flat.model();
    lists.build(m);
    reduction.upload(m);
    numSlots = m.n_slots;
    numMolecules = m.n_molecules;
    hessianSize = m.block_offset[m.n_molecules];
    const int terms = lists.numTerms();
    uploadArray(termInfo, lists.info, "hessfitTermInfo");
    uploadArray(termAtoms, lists.atoms, "hessfitTermAtoms");
    uploadArray(termSlots, lists.slots, "hessfitTermSlots");
    uploadArray(termScalars, lists.scalars, "hessfitTermScalars");
    uploadArray(termLocal, lists.localRow, "hessfitTermLocal");
    uploadArray(termMolecule, lists.molecule, "hessfitTermMolecule");
    uploadArray(termHessianOffset, lists.hessianOffset, "hessfitTermHessianOffset");
    uploadArray(molBlockOffset, lists.blockOffset, "hessfitMoleculeBlockOffset");
    uploadArray(molDim, lists.moleculeDim, "hessfitMoleculeDim");
    uploadArray(atomStart, lists.atomStart, "hessfitAtomStart");
    uploadArray(atomEntries, lists.atomEntries, "hessfitAtomEntries");
    uploadArray(pairInfo, lists.pairInfo, "hessfitPairInfo");
    uploadArray(pairStart, lists.pairStart, "hessfitPairStart");
    uploadArray(pairEntries, lists.pairEntries, "hessfitPairEntries");
    uploadArray(slotStart, lists.slotStart, "hessfitSlotStart");
    uploadArray(slotEntries, lists.slotEntries, "hessfitSlotEntries");
    uploadArray(moleculeStart, lists.moleculeStart, "hessfitMoleculeStart");
    uploadArray(moleculeEntries, lists.moleculeEntries, "hessfitMoleculeEntries");
    sizeArray(termEnergy, terms, realSize(), "hessfitTermEnergy");
    sizeArray(termForce, (size_t) CommonTermLists::ForceStride * terms, realSize(), "hessfitTermForce");
    sizeArray(slotValues, (size_t) CommonTermLists::SlotsPerTerm * terms, realSize(), "hessfitSlotValues");
    sizeArray(slotSums, numSlots, sizeof(double), "hessfitSlotSums");
    sizeArray(moleculeSums, numMolecules, sizeof(double), "hessfitMoleculeSums");
    // The Hessian's arrays (the largest) are sized when first needed.
    if (termHessian.isInitialized())
        sizeArray(termHessian, lists.hessianScratchSize, realSize(), "hessfitTermHessian");
}

void CommonCalcHessianForceKernel::uploadAtomOrder() {
    const vector<int>& order = cc.getAtomIndex();
    vector<int> position(numParticles, 0);
    for (int row = 0; row < (int) order.size(); row++)
        if (order[row] >= 0 && order[row] < numParticles)
            position[order[row]] = row;
    uploadArray(atomPos, position, "hessfitAtomPosition");
}

// ---- launches ------------------------------------------------------------------------------------

void CommonCalcHessianForceKernel::runTermEnergyForces(bool wantForces) {
    const int terms = lists.numTerms();
    if (terms == 0)
        return;
    reduction.mapPositions(atomPos);
    ArrayInterface& posq = reduction.positions();
    ArrayInterface& correction = reduction.positionCorrection();
    Arguments{termEnergyForces}(terms)(wantForces ? 1 : 0)(termInfo)(termAtoms)(termSlots)(termScalars)(table)(flat.model().combining)
        (posq)(correction)(atomPos)(termEnergy)(termForce)(geometryFlag);
    termEnergyForces.kernel->execute(terms);
}

void CommonCalcHessianForceKernel::runTermSlotValues(int mode) {
    const int terms = lists.numTerms();
    if (terms == 0)
        return;
    reduction.mapPositions(atomPos);
    ArrayInterface& posq = reduction.positions();
    ArrayInterface& correction = reduction.positionCorrection();
    // Arrays a mode does not read are bound to a small array of the right type.
    ComputeArray& g = mode == ModeHessianContraction ? adjoint : slotSums;
    ComputeArray& y = mode == ModeGradientContraction ? yVector : slotSums;
    ComputeArray& w = mode == ModeMoleculeWeights ? molWeights : slotSums;
    Arguments{termSlotValues}(terms)(mode)(termInfo)(termAtoms)(termSlots)(termScalars)(table)(flat.model().combining)
        (posq)(correction)(atomPos)(termLocal)(termMolecule)(molBlockOffset)(molDim)(g)(y)(w)(slotValues)(geometryFlag);
    termSlotValues.kernel->execute(terms);
}

void CommonCalcHessianForceKernel::runHessianBlocks() {
    const int terms = lists.numTerms();
    sizeArray(hessianBlocks, hessianSize, sizeof(double), "hessfitHessianBlocks");
    sizeArray(termHessian, lists.hessianScratchSize, realSize(), "hessfitTermHessian");
    if (reduction.active())  // the map writes entries outside the gather's pairs
        cc.clearBuffer(hessianBlocks);
    if (terms > 0) {
        reduction.mapPositions(atomPos);
        ArrayInterface& posq = reduction.positions();
        ArrayInterface& correction = reduction.positionCorrection();
        Arguments{termHessians}(terms)(termInfo)(termAtoms)(termSlots)(termScalars)(table)(flat.model().combining)
            (posq)(correction)(atomPos)(termHessianOffset)(termHessian)(geometryFlag);
        termHessians.kernel->execute(terms);
    }
    const int pairs = lists.numPairs();
    if (pairs > 0) {
        Arguments{gatherHessianBlocks}(pairs)(pairInfo)(pairStart)(pairEntries)(termHessian)(molBlockOffset)(molDim)
            (hessianBlocks);
        gatherHessianBlocks.kernel->execute(pairs);
    }
    reduction.mapHessianBlocks(hessianBlocks, molBlockOffset, molDim);
}

void CommonCalcHessianForceKernel::runReduceSegments(ComputeArray& start, ComputeArray& entries, ComputeArray& values,
                                                     int numSegments, ComputeArray& out) {
    if (numSegments == 0)
        return;
    const int groups = std::min(numSegments, 4096);
    Arguments{reduceSegments}(numSegments)(start)(entries)(values)(out);
    reduceSegments.kernel->execute(groups * reduceBlock, reduceBlock);
}

// ---- errors --------------------------------------------------------------------------------------

void CommonCalcHessianForceKernel::clearGeometryFlag() {
    cc.clearBuffer(geometryFlag);
}

void CommonCalcHessianForceKernel::checkGeometryFlag() {
    int flag = 0;
    geometryFlag.download(&flag, true);
    if (flag == 0)
        return;
    const int term = lists.numTerms() - flag;
    throw HessianForceException(HessianForceException::Geometry,
                                flat.undefinedGeometryMessage(term < lists.numListed ? term : HF_BAD_NONBONDED_PAIR));
}

void CommonCalcHessianForceKernel::checkSize(size_t given, size_t expected, const char* what) const {
    if (given != expected) {
        std::ostringstream m;
        m << "HessianForce: " << what << " has " << given << " entries but the Context's force needs " << expected;
        throw HessianForceException(HessianForceException::Size, m.str());
    }
}

// ---- the kernel interface ------------------------------------------------------------------------

double CommonCalcHessianForceKernel::execute(ContextImpl&, bool includeForces, bool includeEnergy) {
    if (lists.numTerms() == 0 || (!includeForces && !includeEnergy))
        return 0.0;
    ContextSelector selector(cc);
    if (includeEnergy)
        clearGeometryFlag();
    runTermEnergyForces(includeForces);
    if (includeForces) {
        Arguments{gatherForces}(numParticles)(atomStart)(atomEntries)(termForce)(atomPos)(cc.getPaddedNumAtoms())
            (reduction.beginForces());
        gatherForces.kernel->execute(numParticles);
        reduction.endForces(atomPos);
    }
    if (includeEnergy) {
        runReduceSegments(moleculeStart, moleculeEntries, termEnergy, numMolecules, moleculeSums);
        Arguments{addTotalEnergy}(numMolecules)(moleculeSums)(cc.getEnergyBuffer());
        addTotalEnergy.kernel->execute(reduceBlock, reduceBlock);
        // A geometry error surfaces where the energy is read (a State or an energy call, which
        // synchronise anyway); force-only evaluations (MD steps) do not wait for the device.
        checkGeometryFlag();
    }
    return 0.0;
}

void CommonCalcHessianForceKernel::copyParametersToContext(ContextImpl&, const HessianForce& force) {
    ContextSelector selector(cc);
    uploadModel(force);
    uploadArray(table, force.getParameters(), "hessfitTable");
    info->setGroups(lists);
    cc.invalidateMolecules(info);
}

void CommonCalcHessianForceKernel::copyParameterTableToContext(ContextImpl&, const vector<double>& newTable) {
    checkSize(newTable.size(), (size_t) numSlots, "the parameter table");
    if (newTable.empty())
        return;
    ContextSelector selector(cc);
    table.upload(newTable.data(), true);
}

void CommonCalcHessianForceKernel::computeHessianBlocks(ContextImpl&, vector<double>& blocks) {
    blocks.resize((size_t) hessianSize);
    if (hessianSize == 0)
        return;
    ContextSelector selector(cc);
    clearGeometryFlag();
    runHessianBlocks();
    checkGeometryFlag();
    hessianBlocks.download(blocks.data(), true);
}

void CommonCalcHessianForceKernel::slotDerivatives(int mode, vector<double>& derivatives) {
    derivatives.assign((size_t) numSlots, 0.0);
    if (numSlots == 0 || lists.numTerms() == 0)
        return;
    clearGeometryFlag();
    if (mode == ModeHessianContraction)
        reduction.mapAdjoint(adjoint, molBlockOffset, molDim);
    runTermSlotValues(mode);
    runReduceSegments(slotStart, slotEntries, slotValues, numSlots, slotSums);
    checkGeometryFlag();
    slotSums.download(derivatives.data(), true);
}

void CommonCalcHessianForceKernel::computeParameterDerivatives(ContextImpl&, vector<double>& derivatives) {
    ContextSelector selector(cc);
    slotDerivatives(ModeEnergyDerivatives, derivatives);
}

void CommonCalcHessianForceKernel::computeHessianContractionDerivatives(ContextImpl&, const vector<double>& g,
                                                                        vector<double>& derivatives) {
    checkSize(g.size(), (size_t) hessianSize, "the adjoint matrix G");
    ContextSelector selector(cc);
    if (numSlots > 0 && lists.numTerms() > 0)
        uploadArray(adjoint, g, "hessfitAdjoint");
    slotDerivatives(ModeHessianContraction, derivatives);
}

void CommonCalcHessianForceKernel::computeGradientContractionDerivatives(ContextImpl&, const vector<double>& y,
                                                                         vector<double>& derivatives) {
    checkSize(y.size(), 3 * (size_t) numParticles, "the vector y");
    ContextSelector selector(cc);
    if (numSlots > 0 && lists.numTerms() > 0)
        uploadArray(yVector, reduction.mapVector(y), "hessfitGradientVector");
    slotDerivatives(ModeGradientContraction, derivatives);
}

void CommonCalcHessianForceKernel::computeMoleculeEnergies(ContextImpl&, vector<double>& energies) {
    energies.assign((size_t) numMolecules, 0.0);
    if (numMolecules == 0 || lists.numTerms() == 0)
        return;
    ContextSelector selector(cc);
    clearGeometryFlag();
    runTermEnergyForces(false);
    runReduceSegments(moleculeStart, moleculeEntries, termEnergy, numMolecules, moleculeSums);
    checkGeometryFlag();
    moleculeSums.download(energies.data(), true);
}

void CommonCalcHessianForceKernel::computeMoleculeEnergyDerivatives(ContextImpl&, const vector<double>& weights,
                                                                    vector<double>& derivatives) {
    checkSize(weights.size(), (size_t) numMolecules, "the molecule weights");
    ContextSelector selector(cc);
    if (numSlots > 0 && lists.numTerms() > 0)
        uploadArray(molWeights, weights, "hessfitMoleculeWeights");
    slotDerivatives(ModeMoleculeWeights, derivatives);
}

// ---- the Hessian-space objective -----------------------------------------------------------------

void CommonCalcHessianForceKernel::setHessianObjective(ContextImpl&, const HessianObjectiveSpec& spec) {
    ContextSelector selector(cc);
    const hf_model& m = flat.model();
    CommonMoleculeLayout layout;
    layout.moleculeOffset.assign(m.mol_offset, m.mol_offset + m.n_molecules + 1);
    layout.moleculeAtoms.assign(m.mol_atoms, m.mol_atoms + m.mol_offset[m.n_molecules]);
    layout.blockOffset.assign(m.block_offset, m.block_offset + m.n_molecules + 1);
    objective.reset();
    objective.reset(new CommonHessianObjective(cc, layout, spec, makeEigensolver));
    hostObjective.set(flat, spec);
    objectiveFrequencyTargets = spec.numFrequencyTargets();
}

double CommonCalcHessianForceKernel::computeHessianObjective(ContextImpl&, vector<double>* dLdslot,
                                                             vector<double>* residuals) {
    if (!objective)
        throw HessianForceException(HessianForceException::Value, "HessianForce: no Hessian objective is set in this Context");
    ContextSelector selector(cc);
    clearGeometryFlag();
    runHessianBlocks();
    checkGeometryFlag();
    const bool gradient = dLdslot != nullptr;
    if (gradient)
        sizeArray(adjoint, hessianSize, sizeof(double), "hessfitAdjoint");
    const double loss = objective->evaluate(hessianBlocks, gradient ? &adjoint : nullptr, residuals);
    if (gradient)
        slotDerivatives(ModeHessianContraction, *dLdslot);
    return loss;
}

void CommonCalcHessianForceKernel::getHessianObjectivePairing(ContextImpl&, vector<int>& modes) {
    if (!objective) {
        modes.assign((size_t) objectiveFrequencyTargets, -1);
        return;
    }
    ContextSelector selector(cc);
    objective->getPairing(modes);
}

void CommonCalcHessianForceKernel::computeHessianObjectiveJacobian(ContextImpl& context, const vector<int>& molecules,
                                                                   const vector<int>& slots, vector<double>& residuals,
                                                                   vector<double>& jacobian) {
    if (!objective)
        throw HessianForceException(HessianForceException::Value, "HessianForce: no Hessian objective is set in this Context");
    ContextSelector selector(cc);
    vector<Vec3> positions;
    context.getPositions(positions);
    vector<double> hostTable((size_t) numSlots);
    if (numSlots > 0)
        table.download(hostTable);
    vector<int> modes; /* every frequency target's mode; the core takes each molecule's at its offset */
    objective->getPairing(modes);
    vector<double> pos(3 * positions.size());
    for (size_t i = 0; i < positions.size(); i++)
        for (int c = 0; c < 3; c++)
            pos[3 * i + c] = positions[i][c];
    const int* paired = modes.empty() ? nullptr : modes.data();
    if (jacobianOnHost) {
        hostObjective.jacobian(flat, hostTable, pos.empty() ? nullptr : pos.data(), molecules, paired, slots, residuals,
                               jacobian);
        return;
    }
    FlatHessianObjective::Pairs pairs;
    hostObjective.jacobianPairs(flat, hostTable, pos.empty() ? nullptr : pos.data(), molecules, paired, residuals, pairs);
    const size_t nRows = slots.empty() ? (size_t) numSlots : slots.size();
    jacobian.assign(nRows * residuals.size(), 0.0);
    vector<int> rowOf((size_t) numSlots, -1);
    for (size_t k = 0; k < nRows; k++)
        rowOf[slots.empty() ? k : (size_t) slots[k]] = (int) k;
    clearGeometryFlag();
    reduction.mapPositions(atomPos);
    size_t first = 0; /* the molecule's first residual in the list's concatenation */
    for (size_t p = 0; p < molecules.size(); p++) {
        const hf_jacobian_pairs& jp = pairs.molecules[p];
        if (jp.n_vectors > 0)
            bilinearRows(molecules[p], jp, rowOf, jacobian.data() + nRows * first);
        first += (size_t) jp.n_pairs;
    }
    checkGeometryFlag();
}

void CommonCalcHessianForceKernel::bilinearRows(int molecule, const hf_jacobian_pairs& jp, const vector<int>& rowOf,
                                                double* block) {
    const int S = CommonTermLists::SlotsPerTerm;
    // the molecule's terms with a wanted slot, and per wanted row its entries i S + s into their values
    vector<int> termList;
    vector<std::pair<int, int>> entries; /* (row, entry) */
    for (int e = lists.moleculeStart[molecule]; e < lists.moleculeStart[molecule + 1]; e++) {
        const int t = lists.moleculeEntries[e];
        bool wanted = false;
        for (int s = 0; s < S; s++) {
            const int slot = lists.slots[(size_t) S * t + s];
            if (slot != HF_NO_SLOT && rowOf[slot] >= 0) {
                entries.push_back({rowOf[slot], (int) termList.size() * S + s});
                wanted = true;
            }
        }
        if (wanted)
            termList.push_back(t);
    }
    if (termList.empty())
        return;
    std::stable_sort(entries.begin(), entries.end(),
                     [](const std::pair<int, int>& a, const std::pair<int, int>& b) { return a.first < b.first; });
    vector<int> segmentRow, segmentStart(1, 0), segmentEntries;
    for (size_t k = 0; k < entries.size(); k++) {
        if (k == 0 || entries[k].first != entries[k - 1].first) {
            if (k > 0)
                segmentStart.push_back((int) k);
            segmentRow.push_back(entries[k].first);
        }
        segmentEntries.push_back(entries[k].second);
    }
    segmentStart.push_back((int) entries.size());
    const int numListed = (int) termList.size(), numSegments = (int) segmentRow.size(), dim = jp.dim;
    const long long n = jp.n_pairs;
    // the scratch arrays only grow (one Jacobian call visits molecules of every size): no reallocation
    // once the largest molecule has been seen
    growAndUpload(jacTermList, termList.data(), termList.size(), "hessfitJacobianTerms");
    growAndUpload(jacSegmentStart, segmentStart.data(), segmentStart.size(), "hessfitJacobianSegmentStart");
    growAndUpload(jacSegmentEntries, segmentEntries.data(), segmentEntries.size(), "hessfitJacobianSegmentEntries");
    growAndUpload(jacVectors, jp.vectors, (size_t) jp.n_vectors * dim, "hessfitJacobianVectors");
    growAndUpload(jacPairs, jp.pairs, 2 * (size_t) n, "hessfitJacobianPairs");
    // pairs in chunks whose values (numListed x S doubles per pair) stay within 64 MiB
    const long long perPair = (long long) numListed * S * (long long) sizeof(double);
    const int chunk = (int) std::max<long long>(1, std::min<long long>(n, (64LL << 20) / perPair));
    sizeArray(jacValues, (size_t) chunk * numListed * S, sizeof(double), "hessfitJacobianValues", true);
    sizeArray(jacRows, (size_t) chunk * numSegments, sizeof(double), "hessfitJacobianRows", true);
    vector<double> rows(jacRows.getSize()); /* download takes the whole array */
    ArrayInterface& posq = reduction.positions();
    ArrayInterface& correction = reduction.positionCorrection();
    for (long long r0 = 0; r0 < n; r0 += chunk) {
        const int count = (int) std::min<long long>(chunk, n - r0);
        Arguments{termBilinearValues}(numListed)(count)((int) r0)(lists.numTerms())(jacTermList)(jacPairs)(jacVectors)
            (dim)(termInfo)(termAtoms)(termSlots)(termScalars)(table)(flat.model().combining)(posq)(correction)(atomPos)
            (termLocal)(jacValues)(geometryFlag);
        const long long runs = (count + BilinearRun - 1) / BilinearRun;
        termBilinearValues.kernel->execute((int) std::min<long long>(numListed * runs, 1LL << 30));
        Arguments{reduceBilinearRows}(numSegments)(count)(jacSegmentStart)(jacSegmentEntries)(numListed * S)(jacValues)
            (jacRows);
        reduceBilinearRows.kernel->execute((int) std::min<long long>((long long) numSegments * count, 1LL << 30));
        jacRows.download(rows.data(), true); /* its first numSegments x count hold this chunk */
        for (int k = 0; k < numSegments; k++) {
            double* row = block + (size_t) segmentRow[k] * (size_t) n;
            for (int r = 0; r < count; r++) {
                const double c = jp.coef[r0 + r]; /* d r / dp = coef u^T dH/dp w; weight 0: exactly 0 */
                row[r0 + r] = c == 0.0 ? 0.0 : c * rows[(size_t) k * count + r];
            }
        }
    }
}
