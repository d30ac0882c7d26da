#ifndef HESSFIT_REFERENCE_HESSIAN_KERNELS_H_
#define HESSFIT_REFERENCE_HESSIAN_KERNELS_H_

#include "HessianKernels.h"
#include "internal/FlatHessianModel.h"
#include "internal/FlatHessianObjective.h"
#include <memory>
#include <vector>

namespace HessFit {

/** The Reference platform's HessianForce kernel: OpenMM glue around the C math core (hf_core.h). */
class ReferenceCalcHessianForceKernel : public CalcHessianForceKernel {
public:
    ReferenceCalcHessianForceKernel(std::string name, const OpenMM::Platform& platform) : CalcHessianForceKernel(name, platform) {}
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
    void setHessianObjectiveGradientSlots(OpenMM::ContextImpl& context, const std::vector<int>& slots) override;
    void computeHessianObjectiveJacobian(OpenMM::ContextImpl& context, const std::vector<int>& molecules,
                                         const std::vector<int>& slots, std::vector<double>& residuals,
                                         std::vector<double>& jacobian) override;
private:
    /** Throws HessianForceException(Geometry) naming the term when the core returned an error. */
    void check(int status, int badTerm) const;
    /** Throws HessianForceException(Size) unless an input array has the size the kernel holds. */
    void checkSize(size_t given, size_t expected, const char* what) const;
    FlatHessianModel model;
    std::vector<double> table;
    /** The objective (a copy of the spec) and its state in the C core. */
    FlatHessianObjective objective;
};

} // namespace HessFit

#endif
