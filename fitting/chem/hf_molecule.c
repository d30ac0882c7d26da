/* The molecule model: freeing, copying, consistency checks, element types. */
#include "hessfit_elements.h"
#include "hessfit_molecule.h"
#include "hf_lines.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *hessfit_term_kind_name(hessfit_term_kind kind)
{
    static const char *const names[HESSFIT_NUM_TERM_KINDS] = {"bond", "angle", "torsion", "improper"};
    return (unsigned)kind < HESSFIT_NUM_TERM_KINDS ? names[kind] : "unknown";
}

int hessfit_term_kind_atoms(hessfit_term_kind kind)
{
    static const int atoms[HESSFIT_NUM_TERM_KINDS] = {2, 3, 4, 4};
    return (unsigned)kind < HESSFIT_NUM_TERM_KINDS ? atoms[kind] : 0;
}

static void free_strings(char **s, int n)
{
    if (s == NULL)
        return;
    for (int i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

void hessfit_molecule_free(hessfit_molecule *mol)
{
    if (mol == NULL)
        return;
    free(mol->name);
    free(mol->source);
    free(mol->atomic_numbers);
    free(mol->coords);
    free_strings(mol->atom_types, mol->n_atoms);
    free_strings(mol->atom_names, mol->n_atoms);
    free(mol->partial_charges);
    free(mol->bonds);
    free(mol->bond_orders);
    free(mol->hessian);
    free(mol->frequencies);
    free(mol->modes);
    free(mol->reported_terms);
    memset(mol, 0, sizeof *mol);
}

void hessfit_molecule_list_free(hessfit_molecule_list *list)
{
    if (list == NULL)
        return;
    for (int i = 0; i < list->n; i++)
        hessfit_molecule_free(&list->items[i]);
    free(list->items);
    list->items = NULL;
    list->n = 0;
}

/* Duplicate n bytes (NULL stays NULL). */
static int dup_bytes(void **dst, const void *src, size_t n)
{
    *dst = NULL;
    if (src == NULL)
        return 1;
    *dst = malloc(n ? n : 1);
    if (*dst == NULL)
        return 0;
    memcpy(*dst, src, n);
    return 1;
}

static int dup_strings(char ***dst, char *const *src, int n)
{
    *dst = NULL;
    if (src == NULL)
        return 1;
    *dst = calloc((size_t)n, sizeof **dst);
    if (*dst == NULL)
        return 0;
    for (int i = 0; i < n; i++)
        if (src[i] != NULL && ((*dst)[i] = hf_strdup(src[i])) == NULL)
            return 0;
    return 1;
}

hessfit_status hessfit_molecule_copy(const hessfit_molecule *src, hessfit_molecule *dst)
{
    hessfit_molecule m;
    size_t n = src ? (size_t)src->n_atoms : 0, n3 = 3 * n;
    int ok;
    if (src == NULL || dst == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_molecule_copy: %s is NULL", src == NULL ? "src" : "dst");
    m = *src; /* scalars; every pointer below is replaced by a copy (or NULL) */
    m.name = m.source = NULL;
    m.atomic_numbers = NULL;
    m.coords = m.partial_charges = m.bond_orders = m.hessian = m.frequencies = m.modes = NULL;
    m.atom_types = m.atom_names = NULL;
    m.bonds = NULL;
    m.reported_terms = NULL;
    ok = dup_bytes((void **)&m.name, src->name, src->name ? strlen(src->name) + 1 : 0) &&
         dup_bytes((void **)&m.source, src->source, src->source ? strlen(src->source) + 1 : 0) &&
         dup_bytes((void **)&m.atomic_numbers, src->atomic_numbers, n * sizeof(int)) &&
         dup_bytes((void **)&m.coords, src->coords, n3 * sizeof(double)) &&
         dup_strings(&m.atom_types, src->atom_types, src->n_atoms) &&
         dup_strings(&m.atom_names, src->atom_names, src->n_atoms) &&
         dup_bytes((void **)&m.partial_charges, src->partial_charges, n * sizeof(double)) &&
         dup_bytes((void **)&m.bonds, src->bonds, 2 * (size_t)src->n_bonds * sizeof(int)) &&
         dup_bytes((void **)&m.bond_orders, src->bond_orders, (size_t)src->n_bonds * sizeof(double)) &&
         dup_bytes((void **)&m.hessian, src->hessian, n3 * n3 * sizeof(double)) &&
         dup_bytes((void **)&m.frequencies, src->frequencies, (size_t)src->n_modes * sizeof(double)) &&
         dup_bytes((void **)&m.modes, src->modes, (size_t)src->n_modes * n3 * sizeof(double)) &&
         dup_bytes((void **)&m.reported_terms, src->reported_terms,
                   (size_t)src->n_reported_terms * sizeof(hessfit_reported_term));
    if (!ok) {
        hessfit_molecule_free(&m); /* frees the copies made so far */
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory to copy molecule '%s'", src->name ? src->name : "");
    }
    *dst = m;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_molecule_check(const hessfit_molecule *mol, const char *what)
{
    size_t n3;
    if (mol == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: molecule is NULL", what);
    if (mol->n_atoms <= 0 || mol->atomic_numbers == NULL || mol->coords == NULL)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s: no atoms", what);
    n3 = 3 * (size_t)mol->n_atoms;
    for (int i = 0; i < mol->n_atoms; i++) {
        if (hessfit_element_symbol(mol->atomic_numbers[i]) == NULL)
            return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s: atom %d has atomic number %d, without element data", what,
                            i + 1, mol->atomic_numbers[i]);
        for (int k = 0; k < 3; k++)
            if (!isfinite(mol->coords[3 * i + k]))
                return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: atom %d has a non-finite coordinate", what, i + 1);
    }
    for (int b = 0; b < mol->n_bonds; b++) {
        int i = mol->bonds[2 * b], j = mol->bonds[2 * b + 1];
        if (i < 0 || j < 0 || i >= mol->n_atoms || j >= mol->n_atoms || i == j)
            return hessfit_error(HESSFIT_ERROR_COUNT, "%s: bond %d joins atoms %d and %d (of %d)", what, b + 1, i + 1, j + 1,
                            mol->n_atoms);
        for (int c = 0; c < b; c++) {
            int ci = mol->bonds[2 * c], cj = mol->bonds[2 * c + 1];
            if ((ci == i && cj == j) || (ci == j && cj == i))
                return hessfit_error(HESSFIT_ERROR_COUNT, "%s: bond %d-%d listed twice", what, i + 1, j + 1);
        }
    }
    if (mol->hessian != NULL) {
        double hmax = 0.0;
        for (size_t k = 0; k < n3 * n3; k++) {
            if (!isfinite(mol->hessian[k]))
                return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: Hessian element (%zu, %zu) is not finite", what, k / n3 + 1,
                                k % n3 + 1);
            if (fabs(mol->hessian[k]) > hmax)
                hmax = fabs(mol->hessian[k]);
        }
        for (size_t r = 0; r < n3; r++)
            for (size_t c = 0; c < r; c++)
                if (fabs(mol->hessian[r * n3 + c] - mol->hessian[c * n3 + r]) > 1e-8 * hmax)
                    return hessfit_error(HESSFIT_ERROR_SHAPE, "%s: Hessian not symmetric at (%zu, %zu): %.10g vs %.10g", what,
                                    r + 1, c + 1, mol->hessian[r * n3 + c], mol->hessian[c * n3 + r]);
    }
    if (mol->n_modes < 0 || (size_t)mol->n_modes > n3)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s: %d normal modes for %d atoms", what, mol->n_modes, mol->n_atoms);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_molecule_set_element_types(hessfit_molecule *mol)
{
    char **types;
    if (mol == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_molecule_set_element_types: mol is NULL");
    if (mol->atom_types != NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "molecule '%s' already has atom types", mol->name ? mol->name : "");
    types = calloc((size_t)(mol->n_atoms > 0 ? mol->n_atoms : 1), sizeof *types);
    if (types == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %d atom types", mol->n_atoms);
    for (int i = 0; i < mol->n_atoms; i++) {
        const char *symbol = hessfit_element_symbol(mol->atomic_numbers[i]);
        if (symbol == NULL || (types[i] = hf_strdup(symbol)) == NULL) {
            for (int k = 0; k < i; k++)
                free(types[k]);
            free(types);
            return symbol == NULL ? hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "atom %d: atomic number %d", i + 1,
                                             mol->atomic_numbers[i])
                                  : hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for atom types");
        }
    }
    mol->atom_types = types;
    return HESSFIT_SUCCESS;
}
