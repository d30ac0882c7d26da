/* What the force-field readers and writers share (hf_ff_internal.h): whole-file line splitting,
 * the start of a reader, the parameter list and parameter descriptions for messages. */
#define _POSIX_C_SOURCE 200809L

#include "hf_ff_internal.h"
#include "hf_lines.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hessfit_status hf_ff_load_lines(const char *path, hessfit_forcefield *ff)
{
    unsigned char *data = NULL;
    size_t size = 0, cap = 0, start = 0;
    hessfit_status st;
    memset(ff, 0, sizeof *ff);
    st = hf_read_file(path, HF_FF_MAX_FILE_BYTES, &data, &size);
    if (st != HESSFIT_SUCCESS)
        return st;
    ff->path = hf_strdup(path);
    if (ff->path == NULL) {
        free(data);
        return HESSFIT_ERROR_OUT_OF_MEMORY;
    }
    while (start < size) {
        size_t end = start, n;
        char *line;
        while (end < size && data[end] != '\n') {
            if (data[end] == '\0') {
                st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: NUL byte in a text file", path, ff->n_lines + 1);
                goto fail;
            }
            end++;
        }
        n = end - start;
        if (n > HF_LINES_MAX_LINE) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: line longer than %d bytes", path, ff->n_lines + 1, HF_LINES_MAX_LINE);
            goto fail;
        }
        st = hf_grow((void **)&ff->lines, &cap, (size_t)ff->n_lines + 1, sizeof *ff->lines, "lines");
        if (st != HESSFIT_SUCCESS)
            goto fail;
        line = malloc(n + 1);
        if (line == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for the line", path, ff->n_lines + 1);
            goto fail;
        }
        memcpy(line, data + start, n);
        line[n] = '\0';
        ff->lines[ff->n_lines++] = line;
        start = end + 1;
    }
    free(data);
    return HESSFIT_SUCCESS;
fail:
    free(data);
    hessfit_forcefield_free(ff);
    return st;
}

hessfit_status hf_ff_read_begin(const char *reader, const char *path, hessfit_forcefield *ff, hessfit_ff_format format,
                           const char *empty_note, hessfit_forcefield *tmp)
{
    hessfit_status st;
    if (path == NULL || ff == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: %s is NULL", reader, path == NULL ? "path" : "ff");
    memset(ff, 0, sizeof *ff);
    st = hf_ff_load_lines(path, tmp);
    if (st != HESSFIT_SUCCESS)
        return st;
    tmp->format = format;
    if (tmp->n_lines == 0) {
        hessfit_forcefield_free(tmp);
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:1: empty file%s", path, empty_note);
    }
    return HESSFIT_SUCCESS;
}

void hf_ff_describe_param(const hessfit_ff_param *p, int index, char *out, size_t size)
{
    int n = snprintf(out, size, "parameter %d (%s", index, hessfit_param_kind_name(p->kind));
    for (int k = 0; k < p->n_types && k < 4 && n > 0 && (size_t)n < size; k++)
        n += snprintf(out + n, size - (size_t)n, " %s", p->types[k]);
    if (n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, ", line %d)", p->line);
}

hessfit_status hf_ff_add_param(hessfit_forcefield *ff, size_t *cap, const hessfit_ff_param *param)
{
    hessfit_status st = hf_grow((void **)&ff->params, cap, (size_t)ff->n_params + 1, sizeof *ff->params, "parameters");
    if (st != HESSFIT_SUCCESS)
        return st;
    ff->params[ff->n_params++] = *param;
    return HESSFIT_SUCCESS;
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
