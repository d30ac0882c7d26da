#ifndef HESSFIT_COMMON_REDUCTION_H_
#define HESSFIT_COMMON_REDUCTION_H_
/*
 * The reduced particles on the GPU platforms (MacroModel's reduced hydrogens; the math is
 * core/src/hf_reduction.c's): the same exact chain rule through x' = M x around the unchanged term
 * and gather kernels. Positions are mapped into a private copy of posq before the term kernels,
 * forces gathered into a private fixed-point buffer and mapped (M^T F') into OpenMM's, Hessian
 * blocks mapped (M^T H' M) after their gather, adjoints (M G M^T) before the contraction and y
 * (M y) on the host. Without reduced particles every method returns OpenMM's own arrays or does
 * nothing: no copy, no launch.
 */
#include "CommonLaunch.h"
#include "CommonReductionLists.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeProgram.h"
#include <vector>

namespace HessFit {

class CommonReduction {
public:
    explicit CommonReduction(OpenMM::ComputeContext& cc) : cc(cc) {}
    /** Create the kernels (hessianReductionKernels.cc) from the force's compiled program. */
    void createKernels(OpenMM::ComputeProgram& program);
    /** Take the flat model's reduced particles (initialize, copyParametersToContext). */
    void upload(const hf_model& model);
    /** Whether the force has reduced particles. */
    bool active() const { return lists.numReduced > 0; }
    /** Map the positions (atomPos: particle -> row of posq) for the term kernels that follow. */
    void mapPositions(OpenMM::ArrayInterface& atomPos);
    /** The positions the term kernels read: the mapped copy, or posq. */
    OpenMM::ArrayInterface& positions();
    /** Their mixed-precision correction (the positions themselves outside mixed precision). */
    OpenMM::ArrayInterface& positionCorrection();
    /** The fixed-point buffer the force gather adds into: OpenMM's, or a private one cleared here. */
    OpenMM::ArrayInterface& beginForces();
    /** After the force gather: M^T F' from the private buffer into OpenMM's. */
    void endForces(OpenMM::ArrayInterface& atomPos);
    /** Hessian blocks (double, the block layout) in place: M^T H M, exactly symmetric. */
    void mapHessianBlocks(OpenMM::ArrayInterface& blocks, OpenMM::ArrayInterface& molBlockOffset,
                          OpenMM::ArrayInterface& molDim);
    /** An adjoint in the block layout in place: M G M^T. */
    void mapAdjoint(OpenMM::ArrayInterface& adjoint, OpenMM::ArrayInterface& molBlockOffset,
                    OpenMM::ArrayInterface& molDim);
    /** M y for y of 3 entries per particle: y itself, or a mapped copy (valid until the next call). */
    const std::vector<double>& mapVector(const std::vector<double>& y);

private:
    void mapBlocks(OpenMM::ArrayInterface& blocks, OpenMM::ArrayInterface& molBlockOffset,
                   OpenMM::ArrayInterface& molDim, int transpose);
    template <class T>
    void uploadArray(OpenMM::ComputeArray& array, const std::vector<T>& values, const char* name);

    OpenMM::ComputeContext& cc;
    CommonReductionLists lists;
    int numParticles = 0;
    OpenMM::ComputeArray particle, partner, localParticle, localPartner, factor, moleculeStart;
    OpenMM::ComputeArray atomReduced, partnerStart, partnerEntries, atomMolecule, atomLocalRow, atomTouched;
    OpenMM::ComputeArray posq, posqCorrection, forces;
    CommonLaunch reducePositions, addReducedForces, mapBlockColumns, mapBlockRows, symmetrizeBlocks;
    std::vector<double> mappedVector;
};

} // namespace HessFit

#endif
