/* hf_molecules_read: one entry point for every structure format, chosen by name or extension. */
#include "hessfit_molecule.h"
#include "hessfit_path.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;       /* format name for the format argument */
    const char *extensions; /* space-separated, with the dot; a trailing .gz is stripped first */
    hf_status (*read_one)(const char *path, hf_molecule *mol);
    hf_status (*read_list)(const char *path, hf_molecule_list *list);
} format_entry;

static const format_entry formats[] = {
    {"fchk", ".fchk .fch", hf_read_fchk, NULL},
    {"gaussian-log", ".log", hf_read_gaussian_log, NULL},
    {"jaguar-in", ".in", hf_read_jaguar_in, NULL},
    {"jaguar-out", ".out", hf_read_jaguar_out, NULL},
    {"orca-hess", ".hess", hf_read_orca_hess, NULL},
    {"mmo", ".mmo", NULL, hf_read_mmo},
    {"mol2", ".mol2", NULL, hf_read_mol2},
    {"xyz", ".xyz", hf_read_xyz_molecule, NULL},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

const char *hf_molecule_formats(void)
{
    return "fchk, gaussian-log, jaguar-in, jaguar-out, orca-hess, mmo, mol2, xyz (and npy-xyz through "
           "hf_read_npy_xyz)";
}

/* Does the file name (minus a trailing .gz) end in one of the space-separated extensions? */
static int has_extension(const char *path, const char *extensions)
{
    char ext[16];
    for (const char *e = extensions; *e;) {
        size_t len = strcspn(e, " ");
        if (len > 0 && len < sizeof ext) {
            memcpy(ext, e, len);
            ext[len] = '\0';
            if (hf_path_has_extension(path, ext))
                return 1;
        }
        e += len;
        while (*e == ' ')
            e++;
    }
    return 0;
}

hf_status hf_molecules_read(const char *path, const char *format, hf_molecule_list *list)
{
    const format_entry *f = NULL;
    hf_status st;
    if (list != NULL)
        memset(list, 0, sizeof *list);
    if (path == NULL || list == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_molecules_read: %s is NULL", path == NULL ? "path" : "list");
    for (size_t i = 0; i < N_FORMATS && f == NULL; i++)
        if (format != NULL ? strcmp(format, formats[i].name) == 0 : has_extension(path, formats[i].extensions))
            f = &formats[i];
    if (f == NULL) {
        if (format != NULL)
            return hf_error(HF_ERROR_UNSUPPORTED, "%s: unknown format '%s' (known: %s)", path, format,
                            hf_molecule_formats());
        return hf_error(HF_ERROR_UNSUPPORTED, "%s: cannot tell the format from the file name; name it (known: %s)",
                        path, hf_molecule_formats());
    }
    if (f->read_list != NULL)
        return f->read_list(path, list);
    list->items = calloc(1, sizeof *list->items);
    if (list->items == NULL)
        return hf_error(HF_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    if ((st = f->read_one(path, &list->items[0])) != HF_SUCCESS) {
        free(list->items);
        list->items = NULL;
        return st;
    }
    list->n = 1;
    return HF_SUCCESS;
}

hf_status hf_molecule_read(const char *path, const char *format, hf_molecule *mol)
{
    hf_molecule_list list;
    hf_status st;
    if (mol == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_molecule_read: mol is NULL");
    memset(mol, 0, sizeof *mol);
    if ((st = hf_molecules_read(path, format, &list)) != HF_SUCCESS)
        return st;
    if (list.n != 1) {
        int n = list.n;
        hf_molecule_list_free(&list);
        return hf_error(HF_ERROR_COUNT, "%s: holds %d structures where one is expected", path, n);
    }
    *mol = list.items[0];
    free(list.items);
    return HF_SUCCESS;
}
