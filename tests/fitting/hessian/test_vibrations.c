/* Vibrational analysis: the QM reference frequencies of CH3F and the SN2 transition state are
 * rebuilt from the repository's Hessians (examples/data/sn2, q2mm examples, MIT), a diatomic
 * matches its analytic frequency, and the translation/rotation projection does what it says. */
#include "hessfit_fitting.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    hessfit_xyz xyz;
    double *masses;
    double *hessian; /* Hartree/Bohr^2 */
    size_t dim;
    double *reference; /* cm^-1 from the .txt */
    size_t n_reference;
} qm_data;

static void load_qm(const char *stem, qm_data *q)
{
    char rel[256], *path;
    memset(q, 0, sizeof *q);
    snprintf(rel, sizeof rel, "examples/data/sn2/%s-optimized.xyz", stem);
    path = test_source_path_dup(rel);
    HF_CALL(hessfit_xyz_read(path, &q->xyz));
    free(path);
    q->masses = malloc((size_t)q->xyz.n_atoms * sizeof *q->masses);
    CHECK(q->masses != NULL, "out of memory");
    HF_CALL(hessfit_element_masses(q->xyz.atomic_numbers, q->xyz.n_atoms, HESSFIT_MASS_MONOISOTOPIC, q->masses));
    snprintf(rel, sizeof rel, "examples/data/sn2/%s-hessian.npy", stem);
    path = test_source_path_dup(rel);
    HF_CALL(hessfit_npy_read_square(path, 3 * (size_t)q->xyz.n_atoms, &q->hessian, &q->dim));
    free(path);
    snprintf(rel, sizeof rel, "examples/data/sn2/%s-frequencies.txt", stem);
    path = test_source_path_dup(rel);
    HF_CALL(hessfit_text_read_values(path, &q->reference, &q->n_reference));
    free(path);
}

static void free_qm(qm_data *q)
{
    hessfit_xyz_free(&q->xyz);
    free(q->masses);
    free(q->hessian);
    free(q->reference);
}

static int count_below(const double *f, size_t n, double limit)
{
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += f[i] < limit;
    return c;
}

static void test_ch3f(void)
{
    qm_data q;
    double freqs[15], proj[15], kj[15], sel[9], modes[225], *h_kj;
    const double k_au = hessfit_frequency_factor_hartree_bohr2_amu();
    int n_ext = -1;
    double dev, dev_q2mm, dev_proj;

    load_qm("ch3f", &q);
    CHECK(q.xyz.n_atoms == 5 && q.dim == 15 && q.n_reference == 9, "CH3F data sizes %d %zu %zu",
          q.xyz.n_atoms, q.dim, q.n_reference);

    /* unprojected, CODATA factor: the 9 values of largest magnitude are the vibrations */
    HF_CALL(hessfit_vib_analyse(q.hessian, q.masses, NULL, 5, k_au, 0, freqs, modes, &n_ext));
    CHECK(n_ext == 0, "no projection requested, n_external %d", n_ext);
    for (int i = 1; i < 15; i++)
        CHECK(freqs[i] >= freqs[i - 1], "frequencies ascend");
    for (int i = 0; i < 6; i++)
        CHECK(fabs(freqs[i]) < 10.0, "unprojected external mode %d at %g cm^-1", i, freqs[i]);
    HF_CALL(hessfit_vib_select(freqs, 15, 9, sel));
    dev = test_max_abs_diff(sel, q.reference, 9);
    /* the same with q2mm's rounded factor 5140.4871 */
    for (int i = 0; i < 9; i++)
        sel[i] *= HESSFIT_Q2MM_FREQUENCY_FACTOR / k_au;
    dev_q2mm = test_max_abs_diff(sel, q.reference, 9);

    /* modes: orthonormal rows */
    for (int i = 0; i < 15; i++)
        for (int j = 0; j < 15; j++) {
            double dot = 0.0;
            for (int k = 0; k < 15; k++)
                dot += modes[i * 15 + k] * modes[j * 15 + k];
            CHECK_CLOSE(dot, i == j ? 1.0 : 0.0, 1e-12, 1.0, "mode orthonormality");
        }

    /* projected: the external modes drop to round-off, the vibrations stay */
    HF_CALL(hessfit_vib_analyse(q.hessian, q.masses, q.xyz.coords_angstrom, 5, k_au, HESSFIT_VIB_PROJECT_EXTERNAL, proj,
                           NULL, &n_ext));
    CHECK(n_ext == 6, "CH3F has 6 external coordinates, got %d", n_ext);
    for (int i = 0; i < 15; i++)
        if (fabs(proj[i]) < 100.0)
            CHECK(fabs(proj[i]) < 1e-2, "projected external mode at %g cm^-1", proj[i]);
    CHECK(count_below(proj, 15, -1e-2) == 0, "no imaginary mode after projection");
    HF_CALL(hessfit_vib_select(proj, 15, 9, sel));
    dev_proj = test_max_abs_diff(sel, q.reference, 9);

    /* the same routine on the Hessian in OpenMM units gives the same frequencies */
    h_kj = malloc(225 * sizeof *h_kj);
    CHECK(h_kj != NULL, "out of memory");
    for (int i = 0; i < 225; i++)
        h_kj[i] = q.hessian[i] * HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2;
    HF_CALL(hessfit_vib_analyse(h_kj, q.masses, NULL, 5, hessfit_frequency_factor_kj_mol_nm2_amu(), 0, kj, NULL, NULL));
    for (int i = 6; i < 15; i++)
        CHECK_CLOSE(kj[i], freqs[i], 1e-10, 3000.0, "kJ/mol/nm^2 route equals Hartree/Bohr^2 route");
    free(h_kj);

    printf("CH3F max |dev| vs ch3f-frequencies.txt: unprojected %.3g cm^-1 (q2mm factor 5140.4871: %.3g), "
           "projected %.3g cm^-1\n", dev, dev_q2mm, dev_proj);
    CHECK(dev <= 1e-3, "CH3F unprojected frequencies deviate by %g cm^-1", dev);
    CHECK(dev_q2mm <= 1e-3, "CH3F frequencies with q2mm's factor deviate by %g cm^-1", dev_q2mm);
    CHECK(dev_proj <= 1e-3, "CH3F projected frequencies deviate by %g cm^-1", dev_proj);
    free_qm(&q);
}

static void test_sn2_ts(void)
{
    qm_data q;
    double freqs[18], proj[18], sel[12];
    const double k_au = hessfit_frequency_factor_hartree_bohr2_amu();
    int n_ext = -1;
    double dev, dev_proj;

    load_qm("sn2-ts", &q);
    CHECK(q.xyz.n_atoms == 6 && q.dim == 18 && q.n_reference == 12, "SN2 TS data sizes");

    /* unprojected: -461.7 and three spurious negative values (-35.7, -20.3, -20.3) */
    HF_CALL(hessfit_vib_analyse(q.hessian, q.masses, NULL, 6, k_au, 0, freqs, NULL, NULL));
    CHECK(count_below(freqs, 18, -1.0) == 4, "unprojected SN2 TS: %d negative values", count_below(freqs, 18, -1.0));
    CHECK_CLOSE(freqs[0], -461.7, 0.05, 1.0, "imaginary mode");
    CHECK_CLOSE(freqs[1], -35.7, 0.1, 1.0, "spurious mode 1");
    CHECK_CLOSE(freqs[2], -20.3, 0.1, 1.0, "spurious mode 2");
    CHECK_CLOSE(freqs[3], -20.3, 0.1, 1.0, "spurious mode 3");
    HF_CALL(hessfit_vib_select(freqs, 18, 12, sel));
    dev = test_max_abs_diff(sel, q.reference, 12);

    /* projected: exactly one imaginary mode, the spurious ones are gone */
    HF_CALL(hessfit_vib_analyse(q.hessian, q.masses, q.xyz.coords_angstrom, 6, k_au, HESSFIT_VIB_PROJECT_EXTERNAL, proj,
                           NULL, &n_ext));
    CHECK(n_ext == 6, "SN2 TS has 6 external coordinates, got %d", n_ext);
    CHECK(count_below(proj, 18, -1e-2) == 1, "projected SN2 TS: %d negative values", count_below(proj, 18, -1e-2));
    CHECK_CLOSE(proj[0], q.reference[0], 1e-3, 1.0, "imaginary mode after projection");
    CHECK(fabs(proj[0] + 461.7) < 0.05, "imaginary mode near -461.7: %g", proj[0]);
    for (int i = 1; i < 7; i++)
        CHECK(fabs(proj[i]) < 1e-2, "projected external mode %d at %g cm^-1", i, proj[i]);
    HF_CALL(hessfit_vib_select(proj, 18, 12, sel));
    dev_proj = test_max_abs_diff(sel, q.reference, 12);
    printf("SN2 TS imaginary mode %.6f cm^-1; max |dev| vs sn2-ts-frequencies.txt: unprojected %.3g, "
           "projected %.3g cm^-1\n", proj[0], dev, dev_proj);
    CHECK(dev <= 1e-3, "SN2 TS unprojected selection deviates by %g cm^-1", dev);
    CHECK(dev_proj <= 1e-3, "SN2 TS projected frequencies deviate by %g cm^-1", dev_proj);
    free_qm(&q);
}

/* H-Cl spring along a skew axis: E = k/2 (r - r0)^2 at r = r0 has the Hessian
 * k [[u u^T, -u u^T], [-u u^T, u u^T]]; nu = sqrt(k / mu) / (2 pi c). */
static void test_diatomic(void)
{
    const double u[3] = {1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0};
    const double k_kj = 310742.463216; /* 516 N/m = 5.16 mdyn/A in kJ/mol/nm^2 */
    const double expected = 2990.0399870270418; /* independently: sqrt(516 N/m / mu) / (2 pi c) */
    const int z[2] = {1, 17};
    double masses[2], coords[6], h[36], h_au[36], f[6], g[6];
    int n_ext = -1;
    HF_CALL(hessfit_element_masses(z, 2, HESSFIT_MASS_MONOISOTOPIC, masses));
    for (int k = 0; k < 3; k++) {
        coords[k] = 0.3;
        coords[3 + k] = 0.3 + 0.1275 * u[k]; /* nm */
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double sign = (i < 3) == (j < 3) ? 1.0 : -1.0;
            h[i * 6 + j] = sign * k_kj * u[i % 3] * u[j % 3];
            h_au[i * 6 + j] = h[i * 6 + j] * HESSFIT_KJ_PER_MOL_PER_NM2_TO_HARTREE_PER_BOHR2;
        }
    HF_CALL(hessfit_vib_analyse(h, masses, NULL, 2, hessfit_frequency_factor_kj_mol_nm2_amu(), 0, f, NULL, NULL));
    CHECK_CLOSE(f[5], expected, 1e-12, expected, "HCl frequency (kJ/mol/nm^2)");
    for (int i = 0; i < 5; i++)
        CHECK(fabs(f[i]) < 1e-3, "HCl zero mode %d at %g", i, f[i]);
    HF_CALL(hessfit_vib_analyse(h_au, masses, coords, 2, hessfit_frequency_factor_hartree_bohr2_amu(),
                           HESSFIT_VIB_PROJECT_EXTERNAL, g, NULL, &n_ext));
    CHECK(n_ext == 5, "a diatomic has 5 external coordinates, got %d", n_ext);
    CHECK_CLOSE(g[5], expected, 1e-12, expected, "HCl frequency (Hartree/Bohr^2, projected)");
    printf("HCl: %.10f cm^-1 (expected %.10f)\n", f[5], expected);
}

/* The external basis is orthonormal and spans every rigid translation and rotation. */
static void test_external_basis(void)
{
    qm_data q;
    double basis[6 * 15], v[15], com[3] = {0, 0, 0}, mtot = 0.0;
    const double omega[3] = {0.3, -0.5, 0.8}, t[3] = {-0.2, 0.7, 0.4};
    int n_ext = -1;
    load_qm("ch3f", &q);
    HF_CALL(hessfit_vib_external_basis(q.masses, q.xyz.coords_angstrom, 5, basis, &n_ext));
    CHECK(n_ext == 6, "6 external vectors");
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++) {
            double dot = 0.0;
            for (int i = 0; i < 15; i++)
                dot += basis[a * 15 + i] * basis[b * 15 + i];
            CHECK_CLOSE(dot, a == b ? 1.0 : 0.0, 1e-13, 1.0, "external basis orthonormal");
        }
    for (int a = 0; a < 5; a++) {
        for (int k = 0; k < 3; k++)
            com[k] += q.masses[a] * q.xyz.coords_angstrom[3 * a + k];
        mtot += q.masses[a];
    }
    for (int k = 0; k < 3; k++)
        com[k] /= mtot;
    /* a rigid motion t + omega x (x - com) in mass-weighted coordinates */
    for (int a = 0; a < 5; a++) {
        double r[3], s = sqrt(q.masses[a]);
        for (int k = 0; k < 3; k++)
            r[k] = q.xyz.coords_angstrom[3 * a + k] - com[k];
        v[3 * a + 0] = s * (t[0] + omega[1] * r[2] - omega[2] * r[1]);
        v[3 * a + 1] = s * (t[1] + omega[2] * r[0] - omega[0] * r[2]);
        v[3 * a + 2] = s * (t[2] + omega[0] * r[1] - omega[1] * r[0]);
    }
    {
        double norm = 0.0, rest = 0.0;
        for (int i = 0; i < 15; i++)
            norm += v[i] * v[i];
        for (int b = 0; b < 6; b++) {
            double dot = 0.0;
            for (int i = 0; i < 15; i++)
                dot += basis[b * 15 + i] * v[i];
            for (int i = 0; i < 15; i++)
                v[i] -= dot * basis[b * 15 + i];
        }
        for (int i = 0; i < 15; i++)
            rest += v[i] * v[i];
        CHECK(sqrt(rest) < 1e-12 * sqrt(norm), "rigid motion outside the external basis: %g of %g", sqrt(rest),
              sqrt(norm));
    }
    free_qm(&q);

    /* a linear triatomic off the axes has 5, one atom 3 */
    {
        const double lin[9] = {0, 0, 0, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2};
        const double m3[3] = {15.99491461957, 12.0, 15.99491461957};
        HF_CALL(hessfit_vib_external_basis(m3, lin, 3, NULL, &n_ext));
        CHECK(n_ext == 5, "linear: %d external", n_ext);
        HF_CALL(hessfit_vib_external_basis(m3, lin, 1, NULL, &n_ext));
        CHECK(n_ext == 3, "one atom: %d external", n_ext);
    }
}

static void test_errors(void)
{
    double h[36] = {0}, m[2] = {1.0, 1.0}, f[6];
    h[7] = NAN;
    CHECK(hessfit_vib_analyse(h, m, NULL, 2, 1.0, 0, f, NULL, NULL) == HESSFIT_ERROR_NONFINITE, "NaN Hessian");
    CHECK(strstr(hessfit_last_error(), "(1, 1)") != NULL, "message names the element: %s", hessfit_last_error());
    h[7] = 0.0;
    m[1] = 0.0;
    CHECK(hessfit_vib_analyse(h, m, NULL, 2, 1.0, 0, f, NULL, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT, "zero mass");
    CHECK(strstr(hessfit_last_error(), "atom 1") != NULL, "message names the atom: %s", hessfit_last_error());
    m[1] = 1.0;
    CHECK(hessfit_vib_analyse(h, m, NULL, 2, 1.0, HESSFIT_VIB_PROJECT_EXTERNAL, f, NULL, NULL) == HESSFIT_ERROR_NULL_ARGUMENT,
          "projection without coordinates");
    CHECK(hessfit_vib_analyse(h, m, NULL, 2, -1.0, 0, f, NULL, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT, "negative factor");
    CHECK(hessfit_vib_analyse(h, m, NULL, 0, 1.0, 0, f, NULL, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT, "no atoms");
    CHECK(hessfit_vib_analyse(h, m, NULL, 2, 1.0, 4u, f, NULL, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT, "unknown flag");
    {
        const double vals[5] = {-3.0, 0.1, 2.0, -0.2, 5.0};
        double out[3];
        HF_CALL(hessfit_vib_select(vals, 5, 3, out));
        CHECK(out[0] == -3.0 && out[1] == 2.0 && out[2] == 5.0, "select: %g %g %g", out[0], out[1], out[2]);
        CHECK(hessfit_vib_select(vals, 5, 6, out) == HESSFIT_ERROR_INVALID_ARGUMENT, "select too many");
    }
}

int main(void)
{
    test_ch3f();
    test_sn2_ts();
    test_diatomic();
    test_external_basis();
    test_errors();
    printf("test_vibrations: all checks passed\n");
    return 0;
}
