/* .npy reader: NumPy format 1.0 / 2.0 / 3.0, dtype '<f8' only; plain or gzip-compressed. */
#include "hessfit_io.h"
#include "hf_lines.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- header dictionary parser --------------------------------------------------------------- */

typedef struct {
    const char *path;
    const char *text;
    size_t len;
    size_t pos;
} header_parser;

typedef struct {
    int have_descr, have_fortran, have_shape;
    char descr[64];
    int fortran_order;
    int ndim;
    size_t shape[HESSFIT_NPY_MAX_DIMS];
} header_info;

static void skip_space(header_parser *p)
{
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->pos++;
        else
            break;
    }
}

static int peek(header_parser *p)
{
    skip_space(p);
    return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

static hessfit_status expect_char(header_parser *p, char c, const char *context)
{
    if (peek(p) != (unsigned char)c)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: expected '%c' %s at byte %zu of the header dictionary",
                        p->path, c, context, p->pos);
    p->pos++;
    return HESSFIT_SUCCESS;
}

/* A quoted Python string without escapes; copied (truncated) into out[cap]. */
static hessfit_status parse_string(header_parser *p, char *out, size_t cap, const char *what)
{
    int q = peek(p);
    size_t start, n;
    if (q != '\'' && q != '"')
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: expected a quoted %s at byte %zu of the header dictionary",
                        p->path, what, p->pos);
    start = ++p->pos;
    while (p->pos < p->len && p->text[p->pos] != (char)q) {
        if (p->text[p->pos] == '\\' || p->text[p->pos] == '\0')
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: unsupported character in %s at byte %zu",
                            p->path, what, p->pos);
        p->pos++;
    }
    if (p->pos >= p->len)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: unterminated %s string", p->path, what);
    n = p->pos - start;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p->text + start, n);
    out[n] = '\0';
    p->pos++; /* closing quote */
    return HESSFIT_SUCCESS;
}

static hessfit_status parse_bool(header_parser *p, int *value)
{
    skip_space(p);
    if (p->len - p->pos >= 4 && strncmp(p->text + p->pos, "True", 4) == 0) {
        p->pos += 4;
        *value = 1;
        return HESSFIT_SUCCESS;
    }
    if (p->len - p->pos >= 5 && strncmp(p->text + p->pos, "False", 5) == 0) {
        p->pos += 5;
        *value = 0;
        return HESSFIT_SUCCESS;
    }
    return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: 'fortran_order' must be True or False (byte %zu)",
                    p->path, p->pos);
}

static hessfit_status parse_shape(header_parser *p, header_info *h)
{
    hessfit_status st = expect_char(p, '(', "to open 'shape'");
    if (st != HESSFIT_SUCCESS)
        return st;
    h->ndim = 0;
    for (;;) {
        int c = peek(p);
        size_t value = 0;
        if (c == ')') {
            p->pos++;
            return HESSFIT_SUCCESS;
        }
        if (c < '0' || c > '9')
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: 'shape' must be a tuple of non-negative integers "
                            "(byte %zu)", p->path, p->pos);
        if (h->ndim >= HESSFIT_NPY_MAX_DIMS)
            return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: header: more than %d dimensions in 'shape'",
                            p->path, HESSFIT_NPY_MAX_DIMS);
        while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
            size_t digit = (size_t)(p->text[p->pos] - '0');
            if (value > (SIZE_MAX - digit) / 10)
                return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: header: shape dimension %d does not fit in size_t",
                                p->path, h->ndim);
            value = value * 10 + digit;
            p->pos++;
        }
        if (p->pos < p->len && p->text[p->pos] == 'L') /* Python 2 long literal */
            p->pos++;
        h->shape[h->ndim++] = value;
        c = peek(p);
        if (c == ',') {
            p->pos++;
            continue;
        }
        if (c != ')')
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: expected ',' or ')' in 'shape' at byte %zu",
                            p->path, p->pos);
    }
}

static hessfit_status parse_header(const char *path, const char *text, size_t len, header_info *h)
{
    header_parser p = {path, text, len, 0};
    hessfit_status st;
    memset(h, 0, sizeof *h);
    if ((st = expect_char(&p, '{', "to open the header dictionary")) != HESSFIT_SUCCESS)
        return st;
    for (;;) {
        char key[32];
        int c = peek(&p);
        if (c == '}') {
            p.pos++;
            break;
        }
        if ((st = parse_string(&p, key, sizeof key, "key")) != HESSFIT_SUCCESS)
            return st;
        if ((st = expect_char(&p, ':', "after a key")) != HESSFIT_SUCCESS)
            return st;
        if (strcmp(key, "descr") == 0) {
            if (h->have_descr)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: duplicate key 'descr'", path);
            if (peek(&p) == '[')
                return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: structured dtype (a list 'descr') is not supported; "
                                "only '<f8' (little-endian float64) is", path);
            if ((st = parse_string(&p, h->descr, sizeof h->descr, "'descr'")) != HESSFIT_SUCCESS)
                return st;
            h->have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (h->have_fortran)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: duplicate key 'fortran_order'", path);
            if ((st = parse_bool(&p, &h->fortran_order)) != HESSFIT_SUCCESS)
                return st;
            h->have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (h->have_shape)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: duplicate key 'shape'", path);
            if ((st = parse_shape(&p, h)) != HESSFIT_SUCCESS)
                return st;
            h->have_shape = 1;
        } else {
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: unexpected key '%s'", path, key);
        }
        c = peek(&p);
        if (c == ',') {
            p.pos++;
            continue;
        }
        if (c == '}') {
            p.pos++;
            break;
        }
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: expected ',' or '}' at byte %zu", path, p.pos);
    }
    if (peek(&p) != -1)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header: unexpected text after the dictionary (byte %zu)", path, p.pos);
    if (!h->have_descr)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header lacks the key 'descr'", path);
    if (!h->have_fortran)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header lacks the key 'fortran_order'", path);
    if (!h->have_shape)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header lacks the key 'shape'", path);
    return HESSFIT_SUCCESS;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static void format_index(char *buf, size_t cap, const size_t *index, int ndim)
{
    size_t used = 0;
    int n = snprintf(buf, cap, "[");
    used = n > 0 ? (size_t)n : 0;
    for (int d = 0; d < ndim && used < cap; d++) {
        n = snprintf(buf + used, cap - used, d == 0 ? "%zu" : ", %zu", index[d]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
}

static void format_shape(char *buf, size_t cap, const size_t *shape, int ndim)
{
    size_t used = 0;
    int n = snprintf(buf, cap, "(");
    used = n > 0 ? (size_t)n : 0;
    for (int d = 0; d < ndim && used < cap; d++) {
        n = snprintf(buf + used, cap - used, d == 0 ? "%zu" : ", %zu", shape[d]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used < cap)
        snprintf(buf + used, cap - used, ndim == 1 ? ",)" : ")");
}

/* C-order multi-index of a flat C-order position. */
static void c_index(size_t flat, const size_t *shape, int ndim, size_t *index)
{
    for (int d = ndim - 1; d >= 0; d--) {
        index[d] = shape[d] ? flat % shape[d] : 0;
        flat = shape[d] ? flat / shape[d] : 0;
    }
}

static double decode_le_f8(const unsigned char *b)
{
    uint64_t u = 0;
    double v;
    for (int k = 7; k >= 0; k--)
        u = (u << 8) | b[k];
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The file's bytes and a read position: the whole file (plain or gzip) is read first. */
typedef struct {
    const unsigned char *data;
    size_t size, pos;
} byte_cursor;

static hessfit_status read_exact(byte_cursor *c, const char *path, void *buf, size_t n, const char *what)
{
    size_t left = c->size - c->pos;
    if (left < n)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s: file ends inside the %s (%zu of %zu bytes)", path, what, left, n);
    memcpy(buf, c->data + c->pos, n);
    c->pos += n;
    return HESSFIT_SUCCESS;
}

/* ---- reader ------------------------------------------------------------------------------------ */

void hessfit_array_free(hessfit_array *array)
{
    if (array == NULL)
        return;
    free(array->data);
    memset(array, 0, sizeof *array);
}

hessfit_status hessfit_npy_read(const char *path, hessfit_array *array)
{
    unsigned char *file = NULL;
    byte_cursor cur = {NULL, 0, 0};
    unsigned char pre[8], lenbuf[4];
    char *header = NULL;
    unsigned char *raw = NULL;
    double *data = NULL;
    header_info h;
    size_t header_len, size = 1, bytes;
    unsigned long long remaining;
    size_t got;
    hessfit_status st = HESSFIT_SUCCESS;

    if (array != NULL)
        memset(array, 0, sizeof *array);
    if (path == NULL || array == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_npy_read: %s is NULL", path == NULL ? "path" : "array");

    if ((st = hf_read_file(path, HESSFIT_NPY_MAX_FILE_BYTES, &file, &cur.size)) != HESSFIT_SUCCESS)
        return st;
    cur.data = file;
    got = cur.size < sizeof pre ? cur.size : sizeof pre;
    memcpy(pre, file, got);
    cur.pos = got;
    if (memcmp(pre, npy_magic, got < 6 ? got : 6) != 0 || got == 0) {
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s: not a NumPy .npy file (the magic string \\x93NUMPY is missing)", path);
        goto done;
    }
    if (got < sizeof pre) {
        st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s: file ends inside the preamble (%zu of 8 bytes)", path, got);
        goto done;
    }
    if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0) {
        st = hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: .npy format version %u.%u is not supported (1.0, 2.0, 3.0 are)",
                      path, pre[6], pre[7]);
        goto done;
    }
    if (pre[6] == 1) {
        if ((st = read_exact(&cur, path, lenbuf, 2, "header length")) != HESSFIT_SUCCESS)
            goto done;
        header_len = (size_t)lenbuf[0] | (size_t)lenbuf[1] << 8;
    } else {
        if ((st = read_exact(&cur, path, lenbuf, 4, "header length")) != HESSFIT_SUCCESS)
            goto done;
        header_len = (size_t)lenbuf[0] | (size_t)lenbuf[1] << 8 | (size_t)lenbuf[2] << 16 | (size_t)lenbuf[3] << 24;
    }
    if (header_len > HESSFIT_NPY_MAX_HEADER_BYTES) {
        st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: header length %zu exceeds the reader's limit of %u bytes",
                      path, header_len, HESSFIT_NPY_MAX_HEADER_BYTES);
        goto done;
    }
    header = malloc(header_len + 1);
    if (header == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a %zu-byte header", path, header_len);
        goto done;
    }
    if ((st = read_exact(&cur, path, header, header_len, "header")) != HESSFIT_SUCCESS)
        goto done;
    header[header_len] = '\0';
    if (memchr(header, '\0', header_len) != NULL) {
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s: header contains a NUL byte", path);
        goto done;
    }
    if ((st = parse_header(path, header, header_len, &h)) != HESSFIT_SUCCESS)
        goto done;

    if (strcmp(h.descr, "<f8") != 0) {
        st = hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: dtype '%s' is not supported; only '<f8' (little-endian float64) is",
                      path, h.descr);
        goto done;
    }
    for (int d = 0; d < h.ndim; d++) {
        if (h.shape[d] != 0 && size > SIZE_MAX / h.shape[d]) {
            char shape_text[256];
            format_shape(shape_text, sizeof shape_text, h.shape, h.ndim);
            st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: shape %s has more elements than fit in size_t", path, shape_text);
            goto done;
        }
        size *= h.shape[d];
    }
    if (size > SIZE_MAX / 8) {
        char shape_text[256];
        format_shape(shape_text, sizeof shape_text, h.shape, h.ndim);
        st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: shape %s needs more bytes than fit in size_t", path, shape_text);
        goto done;
    }
    bytes = size * 8;

    /* compare with the file size before allocating anything the header asks for */
    remaining = (unsigned long long)(cur.size - cur.pos);
    if (remaining < (unsigned long long)bytes) {
        char shape_text[256];
        format_shape(shape_text, sizeof shape_text, h.shape, h.ndim);
        st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s: data truncated: shape %s needs %zu bytes, the file holds %llu",
                      path, shape_text, bytes, remaining);
        goto done;
    }
    if (remaining > (unsigned long long)bytes) {
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s: %llu unexpected bytes after the %zu data bytes",
                      path, remaining - (unsigned long long)bytes, bytes);
        goto done;
    }

    if (size > 0) {
        raw = malloc(bytes);
        if (raw == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu data bytes", path, bytes);
            goto done;
        }
        if ((st = read_exact(&cur, path, raw, bytes, "data")) != HESSFIT_SUCCESS)
            goto done;
        if (!h.fortran_order || h.ndim < 2) {
            /* decode in place: malloc'ed memory is suitably aligned for double */
            data = (double *)(void *)raw;
            raw = NULL;
            for (size_t i = 0; i < size; i++) {
                double v = decode_le_f8((const unsigned char *)data + 8 * i);
                memcpy((unsigned char *)data + 8 * i, &v, sizeof v);
            }
        } else {
            data = malloc(bytes);
            if (data == NULL) {
                st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu data bytes", path, bytes);
                goto done;
            }
            /* file position fpos runs with the first index fastest; place it at its C position */
            size_t index[HESSFIT_NPY_MAX_DIMS] = {0};
            for (size_t fpos = 0; fpos < size; fpos++) {
                size_t cpos = 0;
                for (int d = 0; d < h.ndim; d++)
                    cpos = cpos * h.shape[d] + index[d];
                data[cpos] = decode_le_f8(raw + 8 * fpos);
                for (int d = 0; d < h.ndim; d++) {
                    if (++index[d] < h.shape[d])
                        break;
                    index[d] = 0;
                }
            }
        }
        for (size_t i = 0; i < size; i++) {
            if (!isfinite(data[i])) {
                size_t index[HESSFIT_NPY_MAX_DIMS];
                char index_text[256];
                c_index(i, h.shape, h.ndim, index);
                format_index(index_text, sizeof index_text, index, h.ndim);
                st = hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: element %zu (index %s) is %s", path, i, index_text,
                              isnan(data[i]) ? "NaN" : (data[i] > 0 ? "+Inf" : "-Inf"));
                goto done;
            }
        }
    }

    array->data = data;
    data = NULL;
    array->size = size;
    array->ndim = h.ndim;
    for (int d = 0; d < h.ndim; d++)
        array->shape[d] = h.shape[d];

done:
    free(data);
    free(raw);
    free(header);
    free(file);
    return st;
}

hessfit_status hessfit_npy_read_square(const char *path, size_t expected_n, double **matrix, size_t *n)
{
    hessfit_array a;
    hessfit_status st;
    if (matrix == NULL || n == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_npy_read_square: %s is NULL", matrix == NULL ? "matrix" : "n");
    *matrix = NULL;
    *n = 0;
    st = hessfit_npy_read(path, &a);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (a.ndim != 2 || a.shape[0] != a.shape[1] || a.shape[0] == 0) {
        char shape_text[256];
        format_shape(shape_text, sizeof shape_text, a.shape, a.ndim);
        hessfit_array_free(&a);
        return hessfit_error(HESSFIT_ERROR_SHAPE, "%s: shape %s is not a non-empty square matrix", path, shape_text);
    }
    if (expected_n > 0 && a.shape[0] != expected_n) {
        size_t got = a.shape[0];
        hessfit_array_free(&a);
        return hessfit_error(HESSFIT_ERROR_SHAPE, "%s: a %zu x %zu matrix where %zu x %zu is expected", path, got, got,
                        expected_n, expected_n);
    }
    *matrix = a.data;
    *n = a.shape[0];
    return HESSFIT_SUCCESS;
}
