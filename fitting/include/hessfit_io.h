#ifndef HESSFIT_IO_H_
#define HESSFIT_IO_H_
/*
 * Readers for the reference data of a fit: NumPy .npy arrays (QM Hessians), .xyz geometries and
 * plain columns of numbers (reference frequencies).
 *
 * All readers are strict: they never over-read, never crash on malformed input, and report the
 * first problem with a status (hessfit_status.h) and a message naming the file and the line
 * (text files) or the element (arrays). Results are malloc'ed; free them with the matching
 * *_free function (safe on a zeroed or already freed struct). On failure the output struct is
 * zeroed and nothing needs freeing.
 */
#include <stddef.h>

#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- .npy --------------------------------------------------------------------------------- */
#define HESSFIT_NPY_MAX_DIMS 32
/* Largest header the reader accepts (NumPy writes a few hundred bytes). */
#define HESSFIT_NPY_MAX_HEADER_BYTES (1u << 20)
/* Largest (decompressed) file the reader accepts: 16 GiB, a 15000-atom Hessian. */
#define HESSFIT_NPY_MAX_FILE_BYTES ((size_t)1 << 34)

typedef struct hessfit_array {
    double *data;                 /* size values in C (row-major) order; NULL if size == 0 */
    size_t size;                  /* product of the shape (1 for a 0-d array) */
    int ndim;
    size_t shape[HESSFIT_NPY_MAX_DIMS];
} hessfit_array;

/**
 * Read a .npy file (format versions 1.0, 2.0 and 3.0), plain or gzip-compressed (.npy.gz).
 * Only dtype '<f8' (little-endian float64)
 * is accepted (HESSFIT_ERROR_UNSUPPORTED names the dtype otherwise); fortran_order True data are
 * transposed to C order. Errors: HESSFIT_ERROR_IO (open/read), HESSFIT_ERROR_FORMAT (magic, version,
 * header syntax, keys, trailing bytes), HESSFIT_ERROR_TRUNCATED (header or data shorter than
 * announced), HESSFIT_ERROR_OVERFLOW (a shape whose element or byte count overflows size_t, or a
 * header longer than HESSFIT_NPY_MAX_HEADER_BYTES, a file over HESSFIT_NPY_MAX_FILE_BYTES),
 * HESSFIT_ERROR_NONFINITE (NaN/Inf: the message names the element's flat index and its index tuple).
 * The file is read whole (memory grows with the bytes actually present) and its size is checked
 * against the shape before anything the header asks for is allocated.
 */
hessfit_status hessfit_npy_read(const char *path, hessfit_array *array);
void hessfit_array_free(hessfit_array *array);

/** Read a 2-D square .npy matrix (HESSFIT_ERROR_SHAPE otherwise); if expected_n > 0 the matrix must be
 * expected_n x expected_n. *matrix is malloc'ed (row-major, n * n values); free() it. */
hessfit_status hessfit_npy_read_square(const char *path, size_t expected_n, double **matrix, size_t *n);

/** ---- .xyz --------------------------------------------------------------------------------- */
typedef struct hessfit_xyz {
    int n_atoms;
    int *atomic_numbers;       /* n_atoms */
    double *coords_angstrom;   /* 3 n_atoms, x y z per atom, Angstrom as in the file */
    char *comment;             /* the comment line without its newline ("" if empty) */
} hessfit_xyz;

/* Largest atom count the reader accepts. */
#define HESSFIT_XYZ_MAX_ATOMS 10000000
/* Longest line the reader accepts (bytes, without the newline). */
#define HESSFIT_XYZ_MAX_LINE 65536 /* = HF_LINES_MAX_LINE of every text reader */

/**
 * Read a single-frame .xyz file: line 1 the atom count (a positive integer alone on its line),
 * line 2 a comment, then exactly n_atoms lines "Symbol x y z" (Angstrom; the symbol may also be
 * an atomic number; case-insensitive; exactly four fields). Trailing blank lines are allowed;
 * anything else after the atoms is an error (a second frame is not supported). CRLF line ends
 * are accepted. Errors, each naming file:line: HESSFIT_ERROR_IO, HESSFIT_ERROR_PARSE (count line, numbers,
 * field count, NUL bytes, over-long lines), HESSFIT_ERROR_COUNT (fewer or more atom lines than
 * announced), HESSFIT_ERROR_NONFINITE (NaN/Inf coordinate), HESSFIT_ERROR_UNKNOWN_ELEMENT,
 * HESSFIT_ERROR_OVERFLOW (count above HESSFIT_XYZ_MAX_ATOMS).
 */
hessfit_status hessfit_xyz_read(const char *path, hessfit_xyz *xyz);
void hessfit_xyz_free(hessfit_xyz *xyz);

/* ---- plain numbers -------------------------------------------------------------------------- */
/**
 * Read whitespace-separated numbers; '#' starts a comment to the end of the line. *values is
 * malloc'ed (free() it; NULL when *n == 0). Errors name file:line: HESSFIT_ERROR_IO, HESSFIT_ERROR_PARSE,
 * HESSFIT_ERROR_NONFINITE.
 */
hessfit_status hessfit_text_read_values(const char *path, double **values, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
