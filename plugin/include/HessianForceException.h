#ifndef HESSFIT_HESSIAN_FORCE_EXCEPTION_H_
#define HESSFIT_HESSIAN_FORCE_EXCEPTION_H_

#include "openmm/OpenMMException.h"
#include "internal/windowsExportHessFit.h"
#include <string>

namespace HessFit {

/** An OpenMMException with a machine-readable category; the C API maps it to hessfit_status
 *  (the numeric values are the same). The message names the offending item. */
class OPENMM_EXPORT_HESSFIT HessianForceException : public OpenMM::OpenMMException {
public:
    /** What went wrong (the C API's hessfit_status has the same numbers). */
    enum Code {
        NullArgument = 1,  /**< a required argument was null */
        Index,             /**< a particle, slot, term or molecule index out of range */
        Value,             /**< a non-finite parameter, bad periodicity, scale or rule */
        Size,              /**< an array size does not match what is required */
        Topology,          /**< a term spans two molecules, a particle in no or two molecules */
        Geometry,          /**< a coordinate is undefined (coincident or collinear particles) */
        NotInContext,      /**< the force is not part of the given Context */
        Unsupported,       /**< a stock force, setting or serialization version that cannot be read */
        Ownership          /**< the force already belongs to a System */
    };
    /**
     * Create an exception.
     *
     * @param code     what went wrong
     * @param message  the text returned by what(), naming the offending item
     */
    HessianForceException(Code code, const std::string& message) : OpenMM::OpenMMException(message), code(code) {}
    /**
     * Get what went wrong.
     */
    Code getCode() const { return code; }
private:
    Code code;
};

} // namespace HessFit

#endif
