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
#define HF_NPY_MAX_DIMS 32
/* Largest header the reader accepts (NumPy writes a few hundred bytes). */
#define HF_NPY_MAX_HEADER_BYTES (1u << 20)
/* Largest (decompressed) file the reader accepts: 16 GiB, a 15000-atom Hessian. */
#define HF_NPY_MAX_FILE_BYTES ((size_t)1 << 34)

typedef struct hf_array {
    double *data;                 /* size values in C (row-major) order; NULL if size == 0 */
    size_t size;                  /* product of the shape (1 for a 0-d array) */
    int ndim;
    size_t shape[HF_NPY_MAX_DIMS];
} hf_array;

/*
 * Read a .npy file (format versions 1.0, 2.0 and 3.0), plain or gzip-compressed (.npy.gz).
 * Only dtype '<f8' (little-endian float64)
 * is accepted (HF_ERROR_UNSUPPORTED names the dtype otherwise); fortran_order True data are
 * transposed to C order. Errors: HF_ERROR_IO (open/read), HF_ERROR_FORMAT (magic, version,
 * header syntax, keys, trailing bytes), HF_ERROR_TRUNCATED (header or data shorter than
 * announced), HF_ERROR_OVERFLOW (a shape whose element or byte count overflows size_t, or a
 * header longer than HF_NPY_MAX_HEADER_BYTES, a file over HF_NPY_MAX_FILE_BYTES),
 * HF_ERROR_NONFINITE (NaN/Inf: the message names the element's flat index and its index tuple).
 * The file is read whole (memory grows with the bytes actually present) and its size is checked
 * against the shape before anything the header asks for is allocated.
 */
hf_status hf_npy_read(const char *path, hf_array *array);
void hf_array_free(hf_array *array);

/* Read a 2-D square .npy matrix (HF_ERROR_SHAPE otherwise); if expected_n > 0 the matrix must be
 * expected_n x expected_n. *matrix is malloc'ed (row-major, n * n values); free() it. */
hf_status hf_npy_read_square(const char *path, size_t expected_n, double **matrix, size_t *n);

/* ---- .xyz --------------------------------------------------------------------------------- */
typedef struct hf_xyz {
    int n_atoms;
    int *atomic_numbers;       /* n_atoms */
    double *coords_angstrom;   /* 3 n_atoms, x y z per atom, Angstrom as in the file */
    char *comment;             /* the comment line without its newline ("" if empty) */
} hf_xyz;

/* Largest atom count the reader accepts. */
#define HF_XYZ_MAX_ATOMS 10000000
/* Longest line the reader accepts (bytes, without the newline). */
#define HF_XYZ_MAX_LINE 65536 /* = HF_LINES_MAX_LINE of every text reader */

/*
 * Read a single-frame .xyz file: line 1 the atom count (a positive integer alone on its line),
 * line 2 a comment, then exactly n_atoms lines "Symbol x y z" (Angstrom; the symbol may also be
 * an atomic number; case-insensitive; exactly four fields). Trailing blank lines are allowed;
 * anything else after the atoms is an error (a second frame is not supported). CRLF line ends
 * are accepted. Errors, each naming file:line: HF_ERROR_IO, HF_ERROR_PARSE (count line, numbers,
 * field count, NUL bytes, over-long lines), HF_ERROR_COUNT (fewer or more atom lines than
 * announced), HF_ERROR_NONFINITE (NaN/Inf coordinate), HF_ERROR_UNKNOWN_ELEMENT,
 * HF_ERROR_OVERFLOW (count above HF_XYZ_MAX_ATOMS).
 */
hf_status hf_xyz_read(const char *path, hf_xyz *xyz);
void hf_xyz_free(hf_xyz *xyz);

/* ---- plain numbers -------------------------------------------------------------------------- */
/*
 * Read whitespace-separated numbers; '#' starts a comment to the end of the line. *values is
 * malloc'ed (free() it; NULL when *n == 0). Errors name file:line: HF_ERROR_IO, HF_ERROR_PARSE,
 * HF_ERROR_NONFINITE.
 */
hf_status hf_text_read_values(const char *path, double **values, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
