/* Molecules from an .xyz geometry, optionally with a Psi4/NumPy .npy Hessian beside it. */
#include "hessfit_io.h"
#include "hessfit_molecule.h"
#include "hf_lines.h"

#include <math.h>
#include <stdlib.h>
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

/*
 * A Cartesian Hessian has the translations as null vectors, and at a stationary point of the
 * energy also the rotations about any point of its own geometry (E invariant under a rotation
 * gives H (w x r) = -(w x g), 0 when the gradient g is 0). A .npy holds no atoms, so this is what
 * shows that it belongs to the .xyz beside it, atom for atom: residual ||H v|| / (||H||_F ||v||)
 * of each rigid motion v. Measured on examples/data/sn2 (translations 1e-16): rotations 1.0e-5
 * (CH3F) and 1.7e-4 (SN2 TS) in the files' order, 2.9e-2 or more for every other order of their
 * like atoms; a mass-weighted Hessian fails the translations.
 */
#define HF_NPY_RIGID_NULL_TOLERANCE 2e-3

static double rigid_residual(const double *h, int n3, const double *v)
{
    double hv2 = 0.0, v2 = 0.0, h2 = 0.0;
    for (int i = 0; i < n3; i++) {
        double s = 0.0;
        for (int j = 0; j < n3; j++) {
            s += h[(size_t)i * n3 + j] * v[j];
            h2 += h[(size_t)i * n3 + j] * h[(size_t)i * n3 + j];
        }
        hv2 += s * s;
        v2 += v[i] * v[i];
    }
    /* a zero Hessian, or a rotation about the axis of a linear molecule (v = 0): nothing to check */
    return h2 > 0.0 && v2 > 1e-20 ? sqrt(hv2 / (h2 * v2)) : 0.0;
}

static hessfit_status check_rigid_null(const hessfit_molecule *mol, const char *xyz_path, const char *npy_path)
{
    const int n = mol->n_atoms, n3 = 3 * n;
    double centre[3] = {0.0, 0.0, 0.0};
    double *v = malloc((size_t)n3 * sizeof *v);
    if (v == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", npy_path);
    for (int a = 0; a < n; a++)
        for (int c = 0; c < 3; c++)
            centre[c] += mol->coords[3 * a + c] / n;
    for (int motion = 0; motion < 6; motion++) {
        const int axis = motion % 3;
        for (int a = 0; a < n; a++) {
            const double *x = mol->coords + 3 * a;
            const double r[3] = {x[0] - centre[0], x[1] - centre[1], x[2] - centre[2]};
            for (int c = 0; c < 3; c++)
                v[3 * a + c] = motion < 3 ? (c == axis) : 0.0;
            if (motion >= 3) { /* e_axis x r */
                const int p = (axis + 1) % 3, q = (axis + 2) % 3;
                v[3 * a + q] = r[p];
                v[3 * a + p] = -r[q];
            }
        }
        const double res = rigid_residual(mol->hessian, n3, v);
        if (!(res <= HF_NPY_RIGID_NULL_TOLERANCE)) {
            free(v);
            static const char *const axis_name[3] = {"x", "y", "z"};
            if (motion < 3)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                     "%s: the translation along %s is not a null vector of this Hessian (residual %.2g, "
                                     "tolerance %g): not a Cartesian Hessian in Hartree/Bohr^2 (a mass-weighted one?)",
                                     npy_path, axis_name[axis], res, HF_NPY_RIGID_NULL_TOLERANCE);
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "%s: the rotation about %s of the geometry of %s is not a null vector of this Hessian "
                                 "(residual %.2g, tolerance %g): the .npy's atoms are in another order than the .xyz's, "
                                 "or the .xyz is not the stationary point the Hessian was computed at",
                                 npy_path, axis_name[axis], xyz_path, res, HF_NPY_RIGID_NULL_TOLERANCE);
        }
    }
    free(v);
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
    if ((st = hessfit_molecule_check(mol, npy_path)) != HESSFIT_SUCCESS ||
        (st = check_rigid_null(mol, xyz_path, npy_path)) != HESSFIT_SUCCESS) {
        hessfit_molecule_free(mol);
        return st;
    }
    return HESSFIT_SUCCESS;
}
