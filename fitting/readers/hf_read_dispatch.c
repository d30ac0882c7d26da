/* hessfit_molecules_read: one entry point for every structure format, chosen by name or extension. */
#include "hessfit_molecule.h"
#include "hessfit_path.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;       /* format name for the format argument */
    const char *extensions; /* space-separated, with the dot; a trailing .gz is stripped first */
    hessfit_status (*read_one)(const char *path, hessfit_molecule *mol);
    hessfit_status (*read_list)(const char *path, hessfit_molecule_list *list);
} format_entry;

static const format_entry formats[] = {
    {"fchk", ".fchk .fch", hessfit_fchk_read, NULL},
    {"gaussian-log", ".log", hessfit_gaussian_log_read, NULL},
    {"jaguar-in", ".in", hessfit_jaguar_in_read, NULL},
    {"jaguar-out", ".out", hessfit_jaguar_out_read, NULL},
    {"orca-hess", ".hess", hessfit_orca_hess_read, NULL},
    {"mmo", ".mmo", NULL, hessfit_mmo_read},
    {"mol2", ".mol2", NULL, hessfit_mol2_read},
    {"xyz", ".xyz", hessfit_xyz_molecule_read, NULL},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

const char *hessfit_molecule_formats(void)
{
    return "fchk, gaussian-log, jaguar-in, jaguar-out, orca-hess, mmo, mol2, xyz (and npy-xyz through "
           "hessfit_npy_xyz_read)";
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
            if (hessfit_path_has_extension(path, ext))
                return 1;
        }
        e += len;
        while (*e == ' ')
            e++;
    }
    return 0;
}

hessfit_status hessfit_molecules_read(const char *path, const char *format, hessfit_molecule_list *list)
{
    const format_entry *f = NULL;
    hessfit_status st;
    if (list != NULL)
        memset(list, 0, sizeof *list);
    if (path == NULL || list == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_molecules_read: %s is NULL", path == NULL ? "path" : "list");
    for (size_t i = 0; i < N_FORMATS && f == NULL; i++)
        if (format != NULL ? strcmp(format, formats[i].name) == 0 : has_extension(path, formats[i].extensions))
            f = &formats[i];
    if (f == NULL) {
        if (format != NULL)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: unknown format '%s' (known: %s)", path, format,
                            hessfit_molecule_formats());
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: cannot tell the format from the file name; name it (known: %s)",
                        path, hessfit_molecule_formats());
    }
    if (f->read_list != NULL)
        return f->read_list(path, list);
    list->items = calloc(1, sizeof *list->items);
    if (list->items == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    if ((st = f->read_one(path, &list->items[0])) != HESSFIT_SUCCESS) {
        free(list->items);
        list->items = NULL;
        return st;
    }
    list->n = 1;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_molecule_read(const char *path, const char *format, hessfit_molecule *mol)
{
    hessfit_molecule_list list;
    hessfit_status st;
    if (mol == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_molecule_read: mol is NULL");
    memset(mol, 0, sizeof *mol);
    if ((st = hessfit_molecules_read(path, format, &list)) != HESSFIT_SUCCESS)
        return st;
    if (list.n != 1) {
        int n = list.n;
        hessfit_molecule_list_free(&list);
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s: holds %d structures where one is expected", path, n);
    }
    *mol = list.items[0];
    free(list.items);
    return HESSFIT_SUCCESS;
}
