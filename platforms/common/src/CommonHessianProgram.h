#ifndef HESSFIT_COMMON_HESSIAN_PROGRAM_H_
#define HESSFIT_COMMON_HESSIAN_PROGRAM_H_
/*
 * The one device program of HessianForce's kernels (hessianTermMath.cc, hessianTermKernels.cc,
 * hessianGatherKernels.cc) and the defines it is compiled with; used by
 * CommonCalcHessianForceKernel and by the CUDA kernels' NVRTC compile check.
 */
#include <map>
#include <string>

namespace HessFit {

/** The source, in OpenMM's common kernel dialect. */
std::string hessianProgramSource();
/** HF_ONE_4PI_EPS0, HF_REDUCE_BLOCK (a power of two) and, in mixed precision, HF_POSITION_CORRECTION. */
std::map<std::string, std::string> hessianProgramDefines(bool mixedPrecision, int reduceBlock);

} // namespace HessFit

#endif
