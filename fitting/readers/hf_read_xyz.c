/* Molecules from an .xyz geometry, optionally with a Psi4/NumPy .npy Hessian beside it. */
#include "hessfit_io.h"
#include "hessfit_molecule.h"
#include "hf_lines.h"

#include <string.h>

hf_status hf_read_xyz_molecule(const char *path, hf_molecule *mol)
{
    hf_xyz xyz;
    hf_status st;
    if (mol == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_read_xyz_molecule: mol is NULL");
    memset(mol, 0, sizeof *mol);
    if ((st = hf_xyz_read(path, &xyz)) != HF_SUCCESS)
        return st;
    mol->n_atoms = xyz.n_atoms;
    mol->atomic_numbers = xyz.atomic_numbers;
    mol->coords = xyz.coords_angstrom;
    mol->name = xyz.comment;
    mol->source = hf_strdup(path);
    if (mol->source == NULL) {
        hf_molecule_free(mol);
        return hf_error(HF_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    }
    return HF_SUCCESS;
}

hf_status hf_read_npy_xyz(const char *xyz_path, const char *npy_path, hf_molecule *mol)
{
    hf_status st;
    size_t n = 0;
    if (mol == NULL || npy_path == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_read_npy_xyz: %s is NULL", mol == NULL ? "mol" : "npy_path");
    if ((st = hf_read_xyz_molecule(xyz_path, mol)) != HF_SUCCESS)
        return st;
    if ((st = hf_npy_read_square(npy_path, 3 * (size_t)mol->n_atoms, &mol->hessian, &n)) != HF_SUCCESS) {
        hf_molecule_free(mol);
        return st;
    }
    if ((st = hf_molecule_check(mol, npy_path)) != HF_SUCCESS) {
        hf_molecule_free(mol);
        return st;
    }
    return HF_SUCCESS;
}
