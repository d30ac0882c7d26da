/* Molecules from an .xyz geometry, optionally with a Psi4/NumPy .npy Hessian beside it. */
#include "hessfit_io.h"
#include "hessfit_molecule.h"
#include "hf_lines.h"

#include <string.h>

hessfit_status hessfit_xyz_molecule_read(const char *path, hessfit_molecule *mol)
{
    hessfit_xyz xyz;
    hessfit_status st;
    if (mol == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_xyz_molecule_read: mol is NULL");
    memset(mol, 0, sizeof *mol);
    if ((st = hessfit_xyz_read(path, &xyz)) != HESSFIT_SUCCESS)
        return st;
    mol->n_atoms = xyz.n_atoms;
    mol->atomic_numbers = xyz.atomic_numbers;
    mol->coords = xyz.coords_angstrom;
    mol->name = xyz.comment;
    mol->source = hf_strdup(path);
    if (mol->source == NULL) {
        hessfit_molecule_free(mol);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_npy_xyz_read(const char *xyz_path, const char *npy_path, hessfit_molecule *mol)
{
    hessfit_status st;
    size_t n = 0;
    if (mol == NULL || npy_path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_npy_xyz_read: %s is NULL", mol == NULL ? "mol" : "npy_path");
    if ((st = hessfit_xyz_molecule_read(xyz_path, mol)) != HESSFIT_SUCCESS)
        return st;
    if ((st = hessfit_npy_read_square(npy_path, 3 * (size_t)mol->n_atoms, &mol->hessian, &n)) != HESSFIT_SUCCESS) {
        hessfit_molecule_free(mol);
        return st;
    }
    if ((st = hessfit_molecule_check(mol, npy_path)) != HESSFIT_SUCCESS) {
        hessfit_molecule_free(mol);
        return st;
    }
    return HESSFIT_SUCCESS;
}
