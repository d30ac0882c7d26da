#ifndef HF_TEST_MODEL_REFERENCE_H_
#define HF_TEST_MODEL_REFERENCE_H_
/* The fit model's energies and forces of every structure as a reference file for the Python checks
 * of the OpenMM exports (check_ffxml_md.py, check_mm3_ffxml.py; read by model_reference.py). */
#include "hessfit_model.h"
#include "hessfit_molecule.h"

/* path: per structure a line "structure k n energy" and n rows "x y z fx fy fz", in OpenMM units
 * (nm, kJ/mol, kJ/mol/nm), 17 significant digits. Fails the test on any error. */
void test_write_model_reference(hessfit_model *model, const hessfit_molecule *mols, int n_mols, const char *path);

#endif
