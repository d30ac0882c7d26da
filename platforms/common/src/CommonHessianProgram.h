#ifndef HESSFIT_COMMON_HESSIAN_PROGRAM_H_
#define HESSFIT_COMMON_HESSIAN_PROGRAM_H_
/*
 * The one device program of HessianForce's kernels (hessianTermMath.cc, hessianTermKernels.cc,
 * hessianGatherKernels.cc) and the defines it is compiled with; used by
 * CommonCalcHessianForceKernel and by the CUDA kernels' NVRTC compile check. The constants the
 * kernels share with the host (the math core's hf_core.h, the term layout of CommonTermLists, the
 * slot-value modes below) reach them only as defines, so the host's definitions are the only ones.
 */
#include <map>
#include <string>

namespace HessFit {

/** The modes of computeTermSlotValues (hessianTermKernels.cc: HF_MODE_*): what it writes per slot. */
enum SlotValueMode { ModeEnergyDerivatives = 0, ModeMoleculeWeights = 1, ModeHessianContraction = 2,
                     ModeGradientContraction = 3 };

/** Pairs per work-item of computeTermBilinearValues (HF_BILINEAR_RUN): each term is evaluated once
 *  per run of this many bilinear pairs of the Jacobian's rows. */
constexpr int BilinearRun = 32;

/** The source, in OpenMM's common kernel dialect. */
std::string hessianProgramSource();
/**
 * The program's defines: from hf_core.h the term kinds HF_TERM_*, HF_NO_SLOT, the combining rule
 * HF_COMBINE_LORENTZ_BERTHELOT, HF_MIN_SINE, HF_PI, HF_TWO_PI and HF_ONE_4PI_EPS0; the device kind of a
 * plain nonbonded pair HF_TERM_PLAIN_PAIR; the per-term layout HF_ATOMS, HF_SLOTS, HF_FORCE_STRIDE;
 * the modes HF_MODE_*; HF_BILINEAR_RUN; HF_REDUCE_BLOCK (a power of two) and, in mixed precision,
 * HF_POSITION_CORRECTION.
 */
std::map<std::string, std::string> hessianProgramDefines(bool mixedPrecision, int reduceBlock);

/** A host constant as the text of a define: a double with every digit (%.17g), an int (negative
 *  ones in parentheses). */
std::string defineText(double value);
std::string defineText(int value);

} // namespace HessFit

#endif
