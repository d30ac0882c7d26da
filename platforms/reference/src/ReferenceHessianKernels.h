#ifndef HESSFIT_REFERENCE_HESSIAN_KERNELS_H_
#define HESSFIT_REFERENCE_HESSIAN_KERNELS_H_

#include "HessianKernels.h"
#include "FlatHessianModel.h"
#include <vector>

namespace HessFit {

/** The Reference platform's HessianForce kernel: OpenMM glue around the C math core (hf_core.h). */
class ReferenceCalcHessianForceKernel : public CalcHessianForceKernel {
public:
    ReferenceCalcHessianForceKernel(std::string name, const OpenMM::Platform& platform) : CalcHessianForceKernel(name, platform) {}
    void initialize(const OpenMM::System& system, const HessianForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    void copyParametersToContext(OpenMM::ContextImpl& context, const HessianForce& force);
    void copyParameterTableToContext(OpenMM::ContextImpl& context, const std::vector<double>& table);
    void computeHessianBlocks(OpenMM::ContextImpl& context, std::vector<double>& blocks);
    void computeParameterDerivatives(OpenMM::ContextImpl& context, std::vector<double>& derivatives);
    void computeHessianContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& adjoint,
                                              std::vector<double>& derivatives);
    void computeGradientContractionDerivatives(OpenMM::ContextImpl& context, const std::vector<double>& y,
                                               std::vector<double>& derivatives);
private:
    /** Throws HessianForceException(Geometry) naming the term when the core returned an error. */
    void check(int status, int badTerm) const;
    /** Throws HessianForceException(Size) unless an input array has the size the kernel holds. */
    void checkSize(size_t given, size_t expected, const char* what) const;
    FlatHessianModel model;
    std::vector<double> table;
};

} // namespace HessFit

#endif
