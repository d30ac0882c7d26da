/* The one-residue PDB of the ForceField XML exports (hf_pdb.h). */
#include "hf_pdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One HETATM record: the name left-justified from column 14 (from column 13 for a 4-character name
 * or a two-letter element, as the PDB format puts them). */
static hessfit_status put_atom_record(hf_buf *b, int serial, const char *res, const hf_pdb_atom *a)
{
    char field[24];
    size_t symbol_len = strlen(a->element);
    snprintf(field, sizeof field, strlen(a->name) < 4 && symbol_len == 1 ? " %-3s" : "%-4s", a->name);
    return hf_buf_printf(b, "HETATM%5d %4s %-3.3s A   1    %8.3f%8.3f%8.3f  1.00  0.00          %2s\n", serial, field,
                         res, a->xyz[0], a->xyz[1], a->xyz[2], a->element);
}

hessfit_status hf_pdb_put(hf_buf *b, const char *res, const hf_pdb_atom *atoms, int n, const int *pairs, int n_pairs)
{
    hessfit_status st = HESSFIT_SUCCESS;
    int *others = malloc((size_t)(n_pairs > 0 ? n_pairs : 1) * sizeof *others);
    if (others == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "PDB: no memory for %d bonds", n_pairs);
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++)
        st = put_atom_record(b, i + 1, res, &atoms[i]);
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++) {
        int m = 0;
        for (int p = 0; p < n_pairs; p++)
            if (pairs[2 * p] == i || pairs[2 * p + 1] == i)
                others[m++] = pairs[2 * p] == i ? pairs[2 * p + 1] : pairs[2 * p];
        for (int k = 0; k < m && st == HESSFIT_SUCCESS; k++) {
            if (k % 4 == 0)
                st = hf_buf_printf(b, "CONECT%5d", i + 1);
            if (st == HESSFIT_SUCCESS)
                st = hf_buf_printf(b, "%5d%s", others[k] + 1, k % 4 == 3 || k + 1 == m ? "\n" : "");
        }
    }
    free(others);
    return st == HESSFIT_SUCCESS ? hf_buf_printf(b, "END\n") : st;
}
