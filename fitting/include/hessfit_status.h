#ifndef HESSFIT_STATUS_H_
#define HESSFIT_STATUS_H_
/*
 * Status codes and error messages of the hessfit fitting layer (libhessfit_fitting).
 *
 * Convention (the same as the plugin's C API, hessfit.h): every fallible function returns an
 * hf_status. HF_SUCCESS is 0; on failure, hf_last_error() returns a message that names the
 * offending item -- "file:line: ..." for text files, "file: element 17 (index [1, 2]) ..." for
 * arrays, "hessian element (3, 4) ..." for in-memory data. The message is thread-local and stays
 * valid until the next failing call on the same thread; a successful call does not clear it.
 * hf_status_string() gives a fixed text for a code. Output arguments are left untouched (or
 * zeroed where documented) on failure, and nothing needs freeing then.
 */
#ifdef __cplusplus
extern "C" {
#endif

typedef enum hf_status {
    HF_SUCCESS = 0,
    HF_ERROR_NULL_ARGUMENT,    /* a required pointer was NULL */
    HF_ERROR_INVALID_ARGUMENT, /* an argument out of its range (count, flag, unit factor, mass) */
    HF_ERROR_OUT_OF_MEMORY,
    HF_ERROR_IO,               /* a file could not be opened or read */
    HF_ERROR_FORMAT,           /* malformed file structure (bad magic, header, missing key) */
    HF_ERROR_PARSE,            /* a field that is not the number or symbol it must be */
    HF_ERROR_TRUNCATED,        /* the file ends before the data it announces */
    HF_ERROR_COUNT,            /* a count does not match the data (xyz atom count, extra data) */
    HF_ERROR_UNSUPPORTED,      /* a valid but unsupported variant (npy dtype other than '<f8') */
    HF_ERROR_OVERFLOW,         /* a size whose byte count overflows, or beyond the reader's limits */
    HF_ERROR_NONFINITE,        /* a NaN or infinite value */
    HF_ERROR_UNKNOWN_ELEMENT,  /* an element symbol or atomic number without data */
    HF_ERROR_SHAPE,            /* an array of the wrong rank or shape (e.g. a Hessian not 3N x 3N) */
    HF_ERROR_LAPACK,           /* a LAPACK routine reported an error or did not converge */
    HF_ERROR_HESSFIT,          /* the hessfit C API (hessfit.h) reported an error */
    HF_ERROR_NLOPT,            /* NLopt reported an error */
    HF_NUM_STATUS
} hf_status;

/* A fixed, non-NULL text for a status code ("success", "file truncated", ...); codes outside the
 * enum give "unknown status". */
const char *hf_status_string(hf_status status);

/* The detailed message of the last failure on this thread ("" if none yet). */
const char *hf_last_error(void);

/* For the fitting layer's own code: format the thread-local message (printf style, truncated at
 * HF_ERROR_MESSAGE_SIZE - 1 characters) and return status, so that a failure reads
 *     return hf_error(HF_ERROR_PARSE, "%s:%d: bad number '%s'", path, line, token);           */
#define HF_ERROR_MESSAGE_SIZE 1024
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
hf_status hf_error(hf_status status, const char *format, ...);

/* Forget the thread-local message (hf_last_error() returns "" afterwards). */
void hf_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
