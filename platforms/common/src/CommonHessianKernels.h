#ifndef HESSFIT_COMMON_HESSIAN_KERNELS_H_
#define HESSFIT_COMMON_HESSIAN_KERNELS_H_
/*
 * HessianForce on OpenMM's GPU platforms, written once against the common compute layer
 * (ComputeContext, ComputeArray, ComputeKernel): the OpenCL and the CUDA library both compile this
 * with their own context type (CommonHessianKernelFactory.h).
 *
 * The force is flattened on the host (CommonTermLists: listed terms and plain nonbonded pairs in
 * one term list). Every computation is one launch of a per-term kernel over all terms of all
 * molecules, writing per-term scratch values, then gather kernels that sum them in double over
 * fixed lists (no atomics except the one fixed-point add per force component). The parameter
 * table lives on the device in double; copyParameterTableToContext uploads only the table.
 *
 * Precision (the platform's Precision property): the term math (q, dq/dx, d2q/dx2, f, f', f''
 * and their slot derivatives) runs in `real` (float in single and mixed, double in double);
 * positions enter in `mixed` (mixed precision adds OpenMM's position correction, so the
 * difference vectors of a term are formed in double before rounding); every sum over terms, the
 * Hessian blocks, the derivatives and the contractions are double.
 */
#include "CommonBatchedEigensolver.h"
#include "CommonLaunch.h"
#include "CommonReduction.h"
#include "CommonTermLists.h"
#include "internal/FlatHessianModel.h"
#include "internal/FlatHessianObjective.h"
#include "HessianKernels.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeKernel.h"
#include <memory>
#include <vector>

namespace HessFit {

class CommonHessianObjective;

class CommonCalcHessianForceKernel : public CalcHessianForceKernel {
public:
    /** makeEigensolver: the platform's library eigensolver for the objective (null: the Jacobi kernel). */
    CommonCalcHessianForceKernel(std::string name, const OpenMM::Platform& platform, OpenMM::ComputeContext& cc,
                                 CommonBatchedEigensolverFactory makeEigensolver = nullptr);
    ~CommonCalcHessianForceKernel() override;
    void initialize(const OpenMM::System& system, const HessianForce& force) override;
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy) override;
    void copyParametersToContext(OpenMM::ContextImpl& context, const HessianForce& force) override;
    void copyParameterTableToContext(OpenMM::ContextImpl& context, const std::vector<double>& table) override;
    void computeHessianBlocks(OpenMM::ContextImpl& context, std::vector<double>& blocks) override;
    void computeParameterDerivatives(OpenMM::ContextImpl& context, std::vector<double>& derivatives) override;
    void computeHessianContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& adjoint,
                                              std::vector<double>& derivatives) override;
    void computeGradientContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& y,
                                               std::vector<double>& derivatives) override;
    void computeMoleculeEnergies(OpenMM::ContextImpl& context, std::vector<double>& energies) override;
    void computeMoleculeEnergyDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& weights,
                                          std::vector<double>& derivatives) override;
    void setHessianObjective(OpenMM::ContextImpl& context, const HessianObjectiveSpec& spec) override;
    double computeHessianObjective(OpenMM::ContextImpl& context, std::vector<double>* dLdslot,
                                   std::vector<double>* residuals) override;
    void getHessianObjectivePairing(OpenMM::ContextImpl& context, std::vector<int>& modes) override;
    /** The rows' ingredients on the host (one call of the math core's hf_objective_jacobian_pairs
     *  for all listed molecules on the table and positions downloaded once, with the device
     *  evaluation's pairing: residuals, eigenvectors, pairs and factors), the bilinear forms
     *  u^T dH/dslot w on the device (bilinearRows). HESSFIT_GPU_JACOBIAN = host: the whole Jacobian
     *  on the host (hf_objective_jacobian), for comparison. */
    void computeHessianObjectiveJacobian(OpenMM::ContextImpl& context, const std::vector<int>& molecules,
                                         const std::vector<int>& slots, std::vector<double>& residuals,
                                         std::vector<double>& jacobian) override;

private:
    class ForceInfo;
    class AtomOrderListener;
    using Launch = CommonLaunch;
    using Arguments = CommonArguments;

    /** Flatten the force and upload the term arrays and lists (initialize, copyParametersToContext). */
    void uploadModel(const HessianForce& force);
    /** The inverse of the context's atom order: atomPos[particle] = its row in posq. */
    void uploadAtomOrder();
    /** Size (and create) a device array of count elements of elementSize bytes (count 0: 1 element);
     *  growOnly: at least count elements, a larger array kept (its contents then undefined). */
    void sizeArray(OpenMM::ComputeArray& array, size_t count, int elementSize, const char* name, bool growOnly = false);
    template <class T>
    void uploadArray(OpenMM::ComputeArray& array, const std::vector<T>& values, const char* name);
    /** sizeArray growing only, then count values into its first elements. */
    template <class T>
    void growAndUpload(OpenMM::ComputeArray& array, const T* values, size_t count, const char* name);
    int realSize() const;

    // launches (all terms of all molecules in one launch each)
    void runTermEnergyForces(bool wantForces);
    void runTermSlotValues(int mode);
    void runHessianBlocks();
    void runReduceSegments(OpenMM::ComputeArray& start, OpenMM::ComputeArray& entries, OpenMM::ComputeArray& values,
                           int numSegments, OpenMM::ComputeArray& out);
    /** Slot values of the given mode summed per slot, downloaded into derivatives (checks geometry). */
    void slotDerivatives(int mode, std::vector<double>& derivatives);
    /** One molecule's Jacobian block (slot-major, rowOf[slot] its row, -1 not wanted; nRows rows x
     *  the molecule's residuals, zero on entry) from its pairs: computeTermBilinearValues over its
     *  terms with a wanted slot and chunks of its pairs, reduceBilinearRows per wanted slot. */
    void bilinearRows(int molecule, const hf_jacobian_pairs& pairs, const std::vector<int>& rowOf, double* block);
    /** Clear the undefined-geometry flag before a computation; after it, throw naming the term. */
    void clearGeometryFlag();
    void checkGeometryFlag();
    void checkSize(size_t given, size_t expected, const char* what) const;

    OpenMM::ComputeContext& cc;
    CommonBatchedEigensolverFactory makeEigensolver;
    FlatHessianModel flat;
    CommonTermLists lists;
    CommonReduction reduction;  // the reduced particles' map (no work without any)
    int numParticles = 0, numSlots = 0, numMolecules = 0, reduceBlock = 0;
    long long hessianSize = 0;
    ForceInfo* info = nullptr;  // owned by the ComputeContext
    // the model
    OpenMM::ComputeArray table, termInfo, termAtoms, termSlots, termScalars, termLocal, termMolecule, termHessianOffset;
    OpenMM::ComputeArray molBlockOffset, molDim, atomPos;
    OpenMM::ComputeArray atomStart, atomEntries, pairInfo, pairStart, pairEntries, slotStart, slotEntries;
    OpenMM::ComputeArray moleculeStart, moleculeEntries;
    // scratch and results
    OpenMM::ComputeArray termEnergy, termForce, termHessian, slotValues, hessianBlocks, adjoint, yVector, molWeights;
    OpenMM::ComputeArray slotSums, moleculeSums, geometryFlag;
    Launch termEnergyForces, termHessians, termSlotValues, gatherForces, gatherHessianBlocks, reduceSegments, addTotalEnergy;
    // the Jacobian's rows (bilinearRows)
    OpenMM::ComputeArray jacTermList, jacSegmentStart, jacSegmentEntries, jacVectors, jacPairs, jacValues, jacRows;
    Launch termBilinearValues, reduceBilinearRows;
    bool jacobianOnHost = false;  // HESSFIT_GPU_JACOBIAN = host
    // the Hessian-space objective
    std::unique_ptr<CommonHessianObjective> objective;
    FlatHessianObjective hostObjective;  // the same spec for the host route to the Jacobian
    int objectiveFrequencyTargets = 0;
};

} // namespace HessFit

#endif
