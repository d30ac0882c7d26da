#include "model_reference.h"

#include "hessfit_units.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

void test_write_model_reference(hessfit_model *model, const hessfit_molecule *mols, int n_mols, const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    for (int m = 0; m < n_mols; m++) {
        const hessfit_molecule *mol = &mols[m];
        double energy, *forces = malloc(3 * (size_t)mol->n_atoms * sizeof *forces);
        CHECK(forces != NULL, "no memory");
        HF_CALL(hessfit_model_energy(model, m, &energy));
        HF_CALL(hessfit_model_forces(model, m, forces));
        fprintf(f, "structure %d %d %.17g\n", m + 1, mol->n_atoms, energy * HESSFIT_KCAL_TO_KJ);
        for (int i = 0; i < 3 * mol->n_atoms; i += 3)
            fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g\n", mol->coords[i] * HESSFIT_ANGSTROM_TO_NM,
                    mol->coords[i + 1] * HESSFIT_ANGSTROM_TO_NM, mol->coords[i + 2] * HESSFIT_ANGSTROM_TO_NM,
                    forces[i] * HESSFIT_KCAL_TO_KJ / HESSFIT_ANGSTROM_TO_NM,
                    forces[i + 1] * HESSFIT_KCAL_TO_KJ / HESSFIT_ANGSTROM_TO_NM,
                    forces[i + 2] * HESSFIT_KCAL_TO_KJ / HESSFIT_ANGSTROM_TO_NM);
        free(forces);
    }
    CHECK(fclose(f) == 0, "cannot write %s", path);
}
