#ifndef HESSFIT_HESSIAN_FORCE_EXCEPTION_H_
#define HESSFIT_HESSIAN_FORCE_EXCEPTION_H_

#include "openmm/OpenMMException.h"
#include "internal/windowsExportHessFit.h"
#include <string>

namespace HessFit {

/** An OpenMMException with a machine-readable category; the C API maps it to HessFit_Status
 *  (the numeric values are the same). The message names the offending item. */
class OPENMM_EXPORT_HESSFIT HessianForceException : public OpenMM::OpenMMException {
public:
    enum Code {
        NullArgument = 1, Index, Value, Size, Topology, Geometry, NotInContext, Unsupported, Ownership
    };
    HessianForceException(Code code, const std::string& message) : OpenMM::OpenMMException(message), code(code) {}
    Code getCode() const { return code; }
private:
    Code code;
};

} // namespace HessFit

#endif
