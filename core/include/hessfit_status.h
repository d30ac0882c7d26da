#ifndef HESSFIT_STATUS_H_
#define HESSFIT_STATUS_H_
/*
 * The status codes and error messages of every hessfit C interface: the C API (hessfit.h) and the
 * fitting layer (fitting/include/hessfit_*.h) return one hessfit_status, and the message of the
 * last failure is one thread-local text, whichever library set it (libhessfit_core holds it).
 *
 * Convention: every fallible function returns a hessfit_status. HESSFIT_SUCCESS is 0; on failure,
 * hessfit_last_error() returns a message that names the offending item -- "function: ..." for the
 * C API, "file:line: ..." for text files, "file: element 17 (index [1, 2]) ..." for arrays,
 * "hessian element (3, 4) ..." for in-memory data. It stays valid until the next failing call on
 * the same thread; a successful call does not clear it. hessfit_status_string() gives a fixed text
 * for a code. Output arguments are left untouched (or zeroed where documented) on failure, and
 * nothing needs freeing then.
 */
#ifdef __cplusplus
extern "C" {
#endif

/** The result of every hessfit call that can fail. The first twelve values are also those of
 *  HessianForceException::Category (plugin/include/HessianForceException.h). */
typedef enum hessfit_status {
    HESSFIT_SUCCESS = 0,             /**< the call succeeded */
    HESSFIT_ERROR_NULL_ARGUMENT,     /**< a required pointer was NULL */
    HESSFIT_ERROR_INDEX,             /**< a particle, slot, term or molecule index out of range */
    HESSFIT_ERROR_VALUE,             /**< NaN or infinite parameter, bad periodicity or scale */
    HESSFIT_ERROR_SIZE,              /**< an array size does not match what is required */
    HESSFIT_ERROR_TOPOLOGY,          /**< a term spans two molecules, a particle in no or two molecules */
    HESSFIT_ERROR_GEOMETRY,          /**< a coordinate is undefined (coincident or collinear atoms) */
    HESSFIT_ERROR_NOT_IN_CONTEXT,    /**< the force is not part of the given Context */
    HESSFIT_ERROR_UNSUPPORTED,       /**< a valid but unsupported variant: a stock force or setting the
                                          converter cannot represent, a serialization version this build
                                          cannot read, an npy dtype other than '<f8' */
    HESSFIT_ERROR_OWNERSHIP,         /**< the force already belongs to a System */
    HESSFIT_ERROR_OPENMM,            /**< any other error reported by OpenMM (plugins, platforms, Contexts) */
    HESSFIT_ERROR_OUT_OF_MEMORY,     /**< an allocation failed */
    HESSFIT_ERROR_INVALID_ARGUMENT,  /**< an argument out of its range (count, flag, unit factor, mass) */
    HESSFIT_ERROR_IO,                /**< a file could not be opened, read or written */
    HESSFIT_ERROR_FORMAT,            /**< malformed file structure (bad magic, header, missing key) */
    HESSFIT_ERROR_PARSE,             /**< a field that is not the number or symbol it must be */
    HESSFIT_ERROR_TRUNCATED,         /**< the file ends before the data it announces */
    HESSFIT_ERROR_COUNT,             /**< a count does not match the data (xyz atom count, extra data) */
    HESSFIT_ERROR_OVERFLOW,          /**< a size whose byte count overflows, or beyond the reader's limits */
    HESSFIT_ERROR_NONFINITE,         /**< a NaN or infinite value */
    HESSFIT_ERROR_UNKNOWN_ELEMENT,   /**< an element symbol or atomic number without data */
    HESSFIT_ERROR_SHAPE,             /**< an array of the wrong rank or shape (e.g. a Hessian not 3N x 3N) */
    HESSFIT_ERROR_LAPACK,            /**< a LAPACK routine reported an error or did not converge */
    HESSFIT_ERROR_NLOPT,             /**< NLopt reported an error */
    HESSFIT_NUM_STATUS               /**< the number of status codes (not a status) */
} hessfit_status;

/**
 * Get a fixed text for a status code.
 *
 * @param status  a status code
 * @return "success", "index out of range", "file truncated", ...; "unknown status" for a value
 *         outside hessfit_status (never NULL)
 */
const char *hessfit_status_string(hessfit_status status);

/**
 * Get the detailed message of the last failure on this thread.
 *
 * @return the message naming the offending item, "" if no call failed yet on this thread; valid
 *         until the next failing call on the same thread
 */
const char *hessfit_last_error(void);

/** The longest message kept, with its terminating NUL; longer ones are truncated. */
#define HESSFIT_ERROR_MESSAGE_SIZE 1024

/**
 * Set this thread's message (printf style; its arguments may point into the current message) and
 * return status, so that a failure reads
 *     return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: bad number '%s'", path, line, token);
 * A NULL format clears the message.
 *
 * @param status  the status to return
 * @param format  printf format of the message, or NULL
 * @return status
 */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
hessfit_status hessfit_error(hessfit_status status, const char *format, ...);

/** Forget this thread's message (hessfit_last_error() returns "" afterwards). */
void hessfit_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
