/* The force-field model (hessfit_forcefield.h): freeing, names, look-up by line (an MM3 .fld
 * continuation line through hf_fld_param_continued_at, hf_fld.c); and what the
 * force-field readers and writers share (hf_ff_internal.h): whole-file line splitting, the start
 * of a reader, the parameter list, parameter descriptions for messages and a text buffer. */
#define _POSIX_C_SOURCE 200809L

#include "hessfit_forcefield.h"
#include "hessfit_path.h"
#include "hf_ff_internal.h"
#include "hf_lines.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hf_forcefield_free(hf_forcefield *ff)
{
    if (ff == NULL)
        return;
    free(ff->path);
    free(ff->params);
    free(ff->substructures);
    free(ff->equivalences);
    if (ff->lines != NULL)
        for (int i = 0; i < ff->n_lines; i++)
            free(ff->lines[i]);
    free(ff->lines);
    memset(ff, 0, sizeof *ff);
}

const char *hf_param_kind_name(hf_param_kind kind)
{
    switch (kind) {
    case HF_PARAM_BOND: return "bond";
    case HF_PARAM_ANGLE: return "angle";
    case HF_PARAM_TORSION: return "torsion";
    case HF_PARAM_IMPROPER: return "improper";
    case HF_PARAM_VDW: return "vdw";
    case HF_PARAM_CHARGE: return "charge";
    default: return "unknown";
    }
}

int hf_forcefield_param_at_line(const hf_forcefield *ff, int line)
{
    if (ff == NULL || line <= 0 || (ff->n_params > 0 && ff->params == NULL))
        return -1;
    for (int i = 0; i < ff->n_params; i++)
        if (ff->params[i].line == line)
            return i;
    /* an MM3 .fld descriptor continuation line stands for the parameter it continues */
    return ff->format == HF_FF_MM3_FLD ? hf_fld_param_continued_at(ff, line) : -1;
}

/* ---- shared by the readers and writers ------------------------------------------------------- */

hf_status hf_ff_load_lines(const char *path, hf_forcefield *ff)
{
    unsigned char *data = NULL;
    size_t size = 0, cap = 0, start = 0;
    hf_status st;
    memset(ff, 0, sizeof *ff);
    st = hf_read_file(path, HF_FF_MAX_FILE_BYTES, &data, &size);
    if (st != HF_SUCCESS)
        return st;
    ff->path = hf_strdup(path);
    if (ff->path == NULL) {
        free(data);
        return HF_ERROR_OUT_OF_MEMORY;
    }
    while (start < size) {
        size_t end = start, n;
        char *line;
        while (end < size && data[end] != '\n') {
            if (data[end] == '\0') {
                st = hf_error(HF_ERROR_PARSE, "%s:%d: NUL byte in a text file", path, ff->n_lines + 1);
                goto fail;
            }
            end++;
        }
        n = end - start;
        if (n > HF_LINES_MAX_LINE) {
            st = hf_error(HF_ERROR_PARSE, "%s:%d: line longer than %d bytes", path, ff->n_lines + 1, HF_LINES_MAX_LINE);
            goto fail;
        }
        st = hf_grow((void **)&ff->lines, &cap, (size_t)ff->n_lines + 1, sizeof *ff->lines, "lines");
        if (st != HF_SUCCESS)
            goto fail;
        line = malloc(n + 1);
        if (line == NULL) {
            st = hf_error(HF_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for the line", path, ff->n_lines + 1);
            goto fail;
        }
        memcpy(line, data + start, n);
        line[n] = '\0';
        ff->lines[ff->n_lines++] = line;
        start = end + 1;
    }
    free(data);
    return HF_SUCCESS;
fail:
    free(data);
    hf_forcefield_free(ff);
    return st;
}

hf_status hf_ff_read_begin(const char *reader, const char *path, hf_forcefield *ff, hf_ff_format format,
                           const char *empty_note, hf_forcefield *tmp)
{
    hf_status st;
    if (path == NULL || ff == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "%s: %s is NULL", reader, path == NULL ? "path" : "ff");
    memset(ff, 0, sizeof *ff);
    st = hf_ff_load_lines(path, tmp);
    if (st != HF_SUCCESS)
        return st;
    tmp->format = format;
    if (tmp->n_lines == 0) {
        hf_forcefield_free(tmp);
        return hf_error(HF_ERROR_TRUNCATED, "%s:1: empty file%s", path, empty_note);
    }
    return HF_SUCCESS;
}

void hf_ff_describe_param(const hf_ff_param *p, int index, char *out, size_t size)
{
    int n = snprintf(out, size, "parameter %d (%s", index, hf_param_kind_name(p->kind));
    for (int k = 0; k < p->n_types && k < 4 && n > 0 && (size_t)n < size; k++)
        n += snprintf(out + n, size - (size_t)n, " %s", p->types[k]);
    if (n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, ", line %d)", p->line);
}

hf_status hf_ff_add_param(hf_forcefield *ff, size_t *cap, const hf_ff_param *param)
{
    hf_status st = hf_grow((void **)&ff->params, cap, (size_t)ff->n_params + 1, sizeof *ff->params, "parameters");
    if (st != HF_SUCCESS)
        return st;
    ff->params[ff->n_params++] = *param;
    return HF_SUCCESS;
}

void hf_ff_copy_trimmed(char *dst, size_t size, const char *s, size_t n)
{
    size_t a = 0, b = n, k;
    while (a < b && isspace((unsigned char)s[a]))
        a++;
    while (b > a && isspace((unsigned char)s[b - 1]))
        b--;
    k = b - a;
    if (k > size - 1)
        k = size - 1;
    memcpy(dst, s + a, k);
    dst[k] = '\0';
}

hf_status hf_ff_buf_append(hf_ff_buf *b, const char *s, size_t n)
{
    hf_status st;
    if (n == 0 && b->data != NULL)
        return HF_SUCCESS;
    st = hf_grow((void **)&b->data, &b->cap, b->len + n + 1, 1, "bytes of output text");
    if (st != HF_SUCCESS)
        return st;
    if (n > 0)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return HF_SUCCESS;
}

hf_status hf_ff_buf_printf(hf_ff_buf *b, const char *format, ...)
{
    va_list ap;
    int n;
    hf_status st;
    va_start(ap, format);
    n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    if (n < 0)
        return hf_error(HF_ERROR_INVALID_ARGUMENT, "output text: bad format '%s'", format);
    st = hf_grow((void **)&b->data, &b->cap, b->len + (size_t)n + 1, 1, "bytes of output text");
    if (st != HF_SUCCESS)
        return st;
    va_start(ap, format);
    vsnprintf(b->data + b->len, (size_t)n + 1, format, ap);
    va_end(ap);
    b->len += (size_t)n;
    return HF_SUCCESS;
}

void hf_ff_buf_free(hf_ff_buf *b)
{
    if (b == NULL)
        return;
    free(b->data);
    memset(b, 0, sizeof *b);
}

hf_status hf_forcefield_read(const char *path, hf_forcefield *ff)
{
    if (ff != NULL)
        memset(ff, 0, sizeof *ff);
    if (path == NULL || ff == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_forcefield_read: %s is NULL", path == NULL ? "path" : "ff");
    if (hf_path_has_extension(path, ".fld"))
        return hf_fld_read(path, ff);
    if (hf_path_has_extension(path, ".frcmod"))
        return hf_frcmod_read(path, ff);
    return hf_error(HF_ERROR_UNSUPPORTED, "%s: not a force-field file hessfit reads (.fld MM3*, .frcmod AMBER)", path);
}

hf_status hf_forcefield_write(const hf_forcefield *ff, const char *path)
{
    if (ff == NULL || path == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_forcefield_write: %s is NULL", path == NULL ? "path" : "ff");
    switch (ff->format) {
    case HF_FF_MM3_FLD:
        return hf_fld_write(ff, path);
    case HF_FF_FRCMOD:
        return hf_frcmod_write(ff, path);
    default:
        return hf_error(HF_ERROR_UNSUPPORTED, "%s: the force field has no file format to write it in", path);
    }
}
