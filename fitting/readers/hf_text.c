/* Text readers: .xyz geometries and plain columns of numbers (plain or gzip). */
#include "hessfit_elements.h"
#include "hessfit_io.h"
#include "hf_lines.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- .xyz ------------------------------------------------------------------------------------------- */

void hessfit_xyz_free(hessfit_xyz *xyz)
{
    if (xyz == NULL)
        return;
    free(xyz->atomic_numbers);
    free(xyz->coords_angstrom);
    free(xyz->comment);
    memset(xyz, 0, sizeof *xyz);
}

static hessfit_status parse_count(const char *text, const char *path, int *count)
{
    const char *s = text;
    long long value = 0;
    int digits = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '+')
        s++;
    while (*s >= '0' && *s <= '9') {
        if (value <= HESSFIT_XYZ_MAX_ATOMS)
            value = value * 10 + (*s - '0');
        digits++;
        s++;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (digits == 0 || *s != '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:1: the atom count '%.40s' is not a non-negative integer", path, text);
    if (value > HESSFIT_XYZ_MAX_ATOMS)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s:1: the atom count '%.40s' exceeds the reader's limit of %d atoms",
                        path, text, HESSFIT_XYZ_MAX_ATOMS);
    if (value == 0)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:1: the atom count is 0", path);
    *count = (int)value;
    return HESSFIT_SUCCESS;
}

static hessfit_status parse_element(const char *token, const char *path, int line, int *z)
{
    const char *s = token;
    int all_digits = 1;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            all_digits = 0;
    if (all_digits && strlen(token) <= 3) {
        int value = atoi(token);
        if (hessfit_element_symbol(value) == NULL)
            return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: no element data for atomic number %s", path, line, token);
        *z = value;
        return HESSFIT_SUCCESS;
    }
    *z = hessfit_element_atomic_number(token);
    if (*z == 0)
        return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: unknown element symbol '%.16s'", path, line, token);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_xyz_read(const char *path, hessfit_xyz *xyz)
{
    hf_lines r;
    hessfit_xyz out = {0, NULL, NULL, NULL};
    int count = 0, cap = 0, eof;
    hessfit_status st;

    if (xyz != NULL)
        memset(xyz, 0, sizeof *xyz);
    if (path == NULL || xyz == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_xyz_read: %s is NULL", path == NULL ? "path" : "xyz");
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;

    if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS)
        goto fail;
    if (eof) {
        st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:1: empty file (the atom count is missing)", path);
        goto fail;
    }
    if ((st = parse_count(r.buf, path, &count)) != HESSFIT_SUCCESS)
        goto fail;

    if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS)
        goto fail;
    if (eof) {
        st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:2: end of file before the comment line (%d atoms announced on line 1)",
                      path, count);
        goto fail;
    }
    out.comment = malloc(strlen(r.buf) + 1);
    if (out.comment == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:2: no memory for the comment", path);
        goto fail;
    }
    strcpy(out.comment, r.buf);

    while (out.n_atoms < count) {
        char *tok[4];
        int ntok, z;
        double x[3];
        static const char *const axis_name[3] = {"x coordinate", "y coordinate", "z coordinate"};
        if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS)
            goto fail;
        if (eof || hf_is_blank(r.buf)) {
            st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %s where atom %d of the %d announced on line 1 should be",
                          path, r.line, eof ? "end of file" : "blank line", out.n_atoms + 1, count);
            goto fail;
        }
        ntok = hf_split(r.buf, tok, 4);
        if (ntok != 4) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: expected 4 fields 'Symbol x y z', found %d", path, r.line, ntok);
            goto fail;
        }
        if ((st = parse_element(tok[0], path, r.line, &z)) != HESSFIT_SUCCESS)
            goto fail;
        for (int k = 0; k < 3; k++)
            if ((st = hf_parse_double(tok[k + 1], path, r.line, axis_name[k], &x[k])) != HESSFIT_SUCCESS)
                goto fail;
        if (out.n_atoms == cap) {
            /* grow with the lines actually read, never to the announced count up front */
            int new_cap = cap ? (cap > count / 2 ? count : 2 * cap) : (count < 64 ? count : 64);
            int *zs = realloc(out.atomic_numbers, (size_t)new_cap * sizeof *zs);
            double *cs;
            if (zs == NULL) {
                st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for %d atoms", path, r.line, new_cap);
                goto fail;
            }
            out.atomic_numbers = zs;
            cs = realloc(out.coords_angstrom, (size_t)new_cap * 3 * sizeof *cs);
            if (cs == NULL) {
                st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for %d atoms", path, r.line, new_cap);
                goto fail;
            }
            out.coords_angstrom = cs;
            cap = new_cap;
        }
        out.atomic_numbers[out.n_atoms] = z;
        for (int k = 0; k < 3; k++)
            out.coords_angstrom[3 * out.n_atoms + k] = x[k];
        out.n_atoms++;
    }

    for (;;) {
        if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS)
            goto fail;
        if (eof)
            break;
        if (!hf_is_blank(r.buf)) {
            st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: data after the %d atoms announced on line 1 (more atoms than "
                          "the count, or a second frame, which is not supported)", path, r.line, count);
            goto fail;
        }
    }

    hf_lines_close(&r);
    *xyz = out;
    return HESSFIT_SUCCESS;

fail:
    hf_lines_close(&r);
    hessfit_xyz_free(&out);
    return st;
}

/* ---- plain numbers -------------------------------------------------------------------------------- */

hessfit_status hessfit_text_read_values(const char *path, double **values, size_t *n)
{
    hf_lines r;
    double *v = NULL;
    size_t count = 0, cap = 0;
    int eof;
    hessfit_status st = HESSFIT_SUCCESS;

    if (values == NULL || n == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_text_read_values: %s is NULL",
                        path == NULL ? "path" : values == NULL ? "values" : "n");
    *values = NULL;
    *n = 0;
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    for (;;) {
        char *s, *hash;
        if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS)
            break;
        if (eof)
            break;
        hash = strchr(r.buf, '#');
        if (hash != NULL)
            *hash = '\0';
        s = r.buf;
        for (;;) {
            char *tok[1];
            char *next;
            double x;
            while (*s && isspace((unsigned char)*s))
                s++;
            if (!*s)
                break;
            next = s;
            while (*next && !isspace((unsigned char)*next))
                next++;
            if (*next)
                *next++ = '\0';
            tok[0] = s;
            s = next;
            if ((st = hf_parse_double(tok[0], path, r.line, "value", &x)) != HESSFIT_SUCCESS)
                goto done;
            if (count == cap) {
                size_t new_cap = cap ? 2 * cap : 64;
                double *b = realloc(v, new_cap * sizeof *b);
                if (b == NULL) {
                    st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for %zu values", path, r.line, new_cap);
                    goto done;
                }
                v = b;
                cap = new_cap;
            }
            v[count++] = x;
        }
    }
done:
    hf_lines_close(&r);
    if (st != HESSFIT_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *n = count;
    return HESSFIT_SUCCESS;
}
