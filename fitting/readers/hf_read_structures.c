/* What the multi-structure text readers share (hf_read_structures.h). */
#include "hf_read_structures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hf_lines_last_line(const hf_lines *r)
{
    return r->line > 1 ? r->line - 1 : 1;
}

hessfit_status hf_error_located(hessfit_status st, const char *path, int line)
{
    return hessfit_error(st, "%s:%d: %s", path, line, hessfit_last_error());
}

hessfit_status hf_structures_reserve(hessfit_molecule_list *out, size_t *cap, const char *what, const char *path, int line)
{
    hessfit_status st = hf_grow((void **)&out->items, cap, (size_t)out->n + 1, sizeof *out->items, what);
    return st == HESSFIT_SUCCESS ? HESSFIT_SUCCESS : hf_error_located(st, path, line);
}

hessfit_status hf_grow_atom_arrays(int **atomic_numbers, size_t *cap_atoms, size_t need, const hf_atom_array *arrays,
                              int n, const char *path, int line)
{
    size_t cap = *cap_atoms;
    hessfit_status st = hf_grow((void **)atomic_numbers, &cap, need, sizeof **atomic_numbers, "atoms");
    if (st != HESSFIT_SUCCESS)
        return hf_error_located(st, path, line);
    if (cap == *cap_atoms)
        return HESSFIT_SUCCESS;
    for (int k = 0; k < n; k++) {
        void *p = realloc(*arrays[k].data, (cap + arrays[k].extra) * arrays[k].atom_bytes);
        if (p == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for %zu atoms", path, line, cap);
        *arrays[k].data = p;
    }
    *cap_atoms = cap;
    return HESSFIT_SUCCESS;
}

char *hf_source_at_line(const char *path, int line)
{
    char where[32];
    size_t path_len = strlen(path);
    char *source;
    snprintf(where, sizeof where, ":%d", line);
    source = malloc(path_len + strlen(where) + 1);
    if (source != NULL) {
        memcpy(source, path, path_len);
        strcpy(source + path_len, where);
    }
    return source;
}

hessfit_status hf_read_structures(const char *reader, const char *path, hessfit_molecule_list *list, hf_structures_parser parse,
                             void *state, void (*free_state)(void *state))
{
    hf_lines r;
    hessfit_molecule_list out = {0, NULL};
    hessfit_status st;
    if (list == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: list is NULL", reader);
    list->n = 0;
    list->items = NULL;
    if (path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: path is NULL", reader);
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    st = parse(&r, &out, state);
    hf_lines_close(&r);
    free_state(state);
    if (st != HESSFIT_SUCCESS) {
        hessfit_molecule_list_free(&out);
        return st;
    }
    *list = out;
    return HESSFIT_SUCCESS;
}
