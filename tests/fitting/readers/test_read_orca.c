/* ORCA .hess reader on hessfit's own ORCA-layout files (tests/data/orca, written once by
 * make_orca_hess.py from the Psi4 CH3F and SN2-TS data of examples/data/sn2): the Hessian against
 * the .npy it came from, the geometry against the .xyz, the frequencies in the file and those
 * rebuilt from the Hessian against the reference frequency lists, the normal modes as
 * eigenvectors of the mass-weighted Hessian, gzip copies, and bad input of every kind written to
 * a mkdtemp directory. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_molecule.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* ---- checks ----------------------------------------------------------------------------------- */

static void expect_fail(const char *path, hessfit_status want, int line, const char *part, const char *what)
{
    test_expect_read_failure(hessfit_orca_hess_read, path, want, line, part, NULL, what);
}

static void write_and_expect(const char *name, const char *text, hessfit_status want, int line, const char *part,
                             const char *what)
{
    expect_fail(test_write_text(name, text), want, line, part, what);
}

typedef struct reference {
    hessfit_xyz xyz;
    double *hessian; /* .npy */
    double *freqs;   /* .txt, the 3N - 6 vibrations */
    size_t n_freqs;
} reference;

static void load_reference(const char *stem, reference *ref)
{
    char rel[128];
    size_t n;
    snprintf(rel, sizeof rel, "examples/data/sn2/%s-optimized.xyz", stem);
    HF_CALL(hessfit_xyz_read(test_source_path(rel), &ref->xyz));
    snprintf(rel, sizeof rel, "examples/data/sn2/%s-hessian.npy", stem);
    HF_CALL(hessfit_npy_read_square(test_source_path(rel), 3 * (size_t)ref->xyz.n_atoms, &ref->hessian, &n));
    snprintf(rel, sizeof rel, "examples/data/sn2/%s-frequencies.txt", stem);
    HF_CALL(hessfit_text_read_values(test_source_path(rel), &ref->freqs, &ref->n_freqs));
    CHECK(ref->n_freqs == 3 * (size_t)ref->xyz.n_atoms - 6, "%s: %zu reference frequencies", stem, ref->n_freqs);
}

static void free_reference(reference *ref)
{
    hessfit_xyz_free(&ref->xyz);
    free(ref->hessian);
    free(ref->freqs);
}

/*
 * One .hess file against its sources. hess_tol: the print precision of its Hessian values;
 * freq_tol: the bound on the frequencies rebuilt from that Hessian; mode_tol: the bound on the
 * modes' deviation from unit norm and on their eigenvector residual (from their print precision).
 */
static void check_file(const char *stem, double energy, double hess_tol, double freq_tol, double mode_tol)
{
    char rel[128];
    reference ref;
    hessfit_molecule m, gz;
    const double factor = hessfit_frequency_factor_hartree_bohr2_amu();
    double xyz_dev = 0.0, h_dev = 0.0, file_dev = 0.0, rebuilt_dev = 0.0, resid = 0.0, norm_dev = 0.0, hmax = 0.0;
    double *masses, *all, *mw, *vib;
    int n, n3, n_ext = 0;
    size_t size;
    char *data;

    memset(&ref, 0, sizeof ref);
    load_reference(stem, &ref);
    snprintf(rel, sizeof rel, "tests/data/orca/%s.hess", stem);
    HF_CALL(hessfit_orca_hess_read(test_source_path(rel), &m));
    HF_CALL(hessfit_molecule_check(&m, rel));
    n = m.n_atoms;
    n3 = 3 * n;
    CHECK(n == ref.xyz.n_atoms, "%s: %d atoms, the .xyz has %d", stem, n, ref.xyz.n_atoms);
    CHECK(memcmp(m.atomic_numbers, ref.xyz.atomic_numbers, (size_t)n * sizeof(int)) == 0, "%s: elements", stem);
    CHECK(strcmp(m.name, "") == 0 && strstr(m.source, rel) != NULL, "%s: name '%s' source '%s'", stem, m.name,
          m.source);
    CHECK(m.has_energy && m.energy == energy, "%s: energy %.12f", stem, m.energy);
    CHECK(!m.has_charge && m.multiplicity == 1, "%s: charge %d/%d multiplicity %d", stem, m.has_charge, m.charge,
          m.multiplicity);
    /* geometry: Bohr with 12 decimals in the file */
    for (int k = 0; k < n3; k++)
        xyz_dev = fmax(xyz_dev, fabs(m.coords[k] - ref.xyz.coords_angstrom[k]));
    CHECK(xyz_dev <= 1e-11, "%s: coordinates differ from the .xyz by %.3g A", stem, xyz_dev);
    /* Hessian against the .npy */
    for (int k = 0; k < n3 * n3; k++) {
        h_dev = fmax(h_dev, fabs(m.hessian[k] - ref.hessian[k]));
        hmax = fmax(hmax, fabs(ref.hessian[k]));
    }
    CHECK(h_dev <= hess_tol, "%s: Hessian differs from the .npy by %.3g (print precision %.3g)", stem, h_dev, hess_tol);
    /* frequencies as printed: 6 zeros, then the vibrations */
    CHECK(m.n_modes == n3 && m.modes != NULL, "%s: %d modes", stem, m.n_modes);
    for (int k = 0; k < 6; k++)
        CHECK(m.frequencies[k] == 0.0, "%s: frequency %d is %g", stem, k, m.frequencies[k]);
    for (int k = 6; k < n3; k++)
        file_dev = fmax(file_dev, fabs(m.frequencies[k] - ref.freqs[k - 6]));
    CHECK(file_dev <= 1e-5, "%s: frequencies in the file differ from the reference by %.3g cm^-1", stem, file_dev);
    /* frequencies rebuilt from the file's Hessian */
    masses = malloc((size_t)n * sizeof *masses);
    all = malloc((size_t)n3 * sizeof *all);
    mw = malloc((size_t)n3 * (size_t)n3 * sizeof *mw);
    vib = malloc((size_t)n3 * sizeof *vib);
    CHECK(masses && all && mw && vib, "out of memory");
    HF_CALL(hessfit_element_masses(m.atomic_numbers, n, HESSFIT_MASS_MONOISOTOPIC, masses));
    HF_CALL(hessfit_vib_analyse(m.hessian, masses, m.coords, n, factor, HESSFIT_VIB_PROJECT_EXTERNAL, all, NULL, &n_ext));
    CHECK(n_ext == 6, "%s: %d external modes", stem, n_ext);
    HF_CALL(hessfit_vib_select(all, n3, n3 - 6, vib));
    for (int k = 0; k < n3 - 6; k++)
        rebuilt_dev = fmax(rebuilt_dev, fabs(vib[k] - ref.freqs[k]));
    CHECK(rebuilt_dev <= freq_tol, "%s: frequencies of the file's Hessian differ by %.3g cm^-1", stem, rebuilt_dev);
    /* the modes (rows of mol->modes = columns of the file): unit Cartesian vectors whose
     * mass-weighted forms are eigenvectors of the mass-weighted Hessian (translations and
     * rotations projected out) with eigenvalue (nu / factor)^2 sign(nu) */
    HF_CALL(hessfit_vib_mass_weight(m.hessian, masses, n, mw));
    {
        double *basis = malloc(6 * (size_t)n3 * sizeof *basis);
        int n_basis = 0;
        CHECK(basis != NULL, "out of memory");
        HF_CALL(hessfit_vib_external_basis(masses, m.coords, n, basis, &n_basis));
        HF_CALL(hessfit_vib_project(mw, basis, n_basis, n));
        free(basis);
    }
    for (int k = 0; k < n3; k++) {
        const double *l = m.modes + (size_t)k * (size_t)n3;
        double norm = 0.0, vnorm = 0.0, lambda = hessfit_cm1_to_eigenvalue(m.frequencies[k], factor);
        double *v = all; /* reuse: mass-weighted vector */
        for (int i = 0; i < n3; i++)
            norm += l[i] * l[i];
        if (k < 6) {
            CHECK(norm == 0.0, "%s: translation/rotation column %d is not zero", stem, k);
            continue;
        }
        norm_dev = fmax(norm_dev, fabs(sqrt(norm) - 1.0));
        for (int i = 0; i < n3; i++) {
            v[i] = l[i] * sqrt(masses[i / 3]);
            vnorm += v[i] * v[i];
        }
        for (int i = 0; i < n3; i++)
            v[i] /= sqrt(vnorm);
        for (int i = 0; i < n3; i++) {
            double hv = 0.0;
            for (int j = 0; j < n3; j++)
                hv += mw[i * n3 + j] * v[j];
            resid = fmax(resid, fabs(hv - lambda * v[i]));
        }
    }
    CHECK(norm_dev <= mode_tol, "%s: mode norms differ from 1 by %.3g", stem, norm_dev);
    CHECK(resid <= mode_tol, "%s: modes are not eigenvectors: residual %.3g", stem, resid);
    printf("%s.hess: Hessian vs .npy max |diff| %.2e (max |H| %.3f); frequencies in the file vs reference %.2e cm^-1, "
           "rebuilt from the file's Hessian %.2e cm^-1; mode norms |1 - |l|| %.1e, eigen-residual %.1e\n",
           stem, h_dev, hmax, file_dev, rebuilt_dev, norm_dev, resid);

    /* a gzip copy reads identically */
    data = test_load_file(test_source_path(rel), &size);
    snprintf(rel, sizeof rel, "%s.hess.gz", stem);
    HF_CALL(hessfit_orca_hess_read(test_write_gz(rel, data, size), &gz));
    CHECK(gz.n_atoms == n && gz.n_modes == m.n_modes && gz.energy == m.energy && gz.multiplicity == m.multiplicity &&
              memcmp(gz.atomic_numbers, m.atomic_numbers, (size_t)n * sizeof(int)) == 0 &&
              memcmp(gz.coords, m.coords, (size_t)n3 * sizeof(double)) == 0 &&
              memcmp(gz.hessian, m.hessian, (size_t)n3 * (size_t)n3 * sizeof(double)) == 0 &&
              memcmp(gz.frequencies, m.frequencies, (size_t)n3 * sizeof(double)) == 0 &&
              memcmp(gz.modes, m.modes, (size_t)n3 * (size_t)n3 * sizeof(double)) == 0,
          "%s: the gzip copy reads differently", stem);
    printf("%s.hess.gz reads identically\n", stem);
    hessfit_molecule_free(&gz);
    free(data);
    free(masses);
    free(all);
    free(mw);
    free(vib);
    hessfit_molecule_free(&m);
    free_reference(&ref);
}

/* ---- bad input ---------------------------------------------------------------------------------- */

static void test_bad_input(void)
{
    size_t n;
    char *data = test_load_file(test_source_path("tests/data/orca/ch3f.hess"), &n), *t;
    const int hess_line = test_find_line(data, 1, "$hessian", TEST_LINE_EXACT),
              freq_line = test_find_line(data, 1, "$vibrational_frequencies", TEST_LINE_EXACT),
              modes_line = test_find_line(data, 1, "$normal_modes", TEST_LINE_EXACT),
              atoms_line = test_find_line(data, 1, "$atoms", TEST_LINE_EXACT),
              end_line = test_find_line(data, 1, "$end", TEST_LINE_EXACT);
    size_t hess = test_line_offset(data, hess_line);
    unsigned char bytes[4096];
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    int line;

    printf("ORCA .hess: bad input\n");
    /* truncated at every twentieth of the file and at 6 places inside $hessian */
    for (int k = 1; k < 26; k++) {
        char name[64], what[96];
        size_t cut = k < 20 ? n * (size_t)k / 20 : hess + 30 + (size_t)(k - 20) * 550;
        snprintf(name, sizeof name, "cut%zu.hess", cut);
        snprintf(what, sizeof what, "cut at byte %zu of %zu", cut, n);
        expect_fail(test_write_file(name, data, cut), HESSFIT_SUCCESS, 0, NULL, what);
    }
    /* NaN in $hessian, in $vibrational_frequencies, in $normal_modes, in $atoms */
    t = test_replace_first(data, 0, "6.0126864879E-01", "NaN", &line);
    write_and_expect("nan-hessian.hess", t, HESSFIT_ERROR_NONFINITE, line, NULL, "NaN in $hessian");
    free(t);
    t = test_replace_first(data, 0, "1040.581386", "nan", &line);
    write_and_expect("nan-frequency.hess", t, HESSFIT_ERROR_NONFINITE, line, NULL, "NaN frequency");
    free(t);
    t = test_replace_first(data, test_line_offset(data, modes_line), "E-01", "E-0x", &line);
    write_and_expect("word-mode.hess", t, HESSFIT_ERROR_PARSE, line, NULL, "non-number in $normal_modes");
    free(t);
    t = test_replace_first(data, 0, "-1.417813852040", "inf", &line);
    write_and_expect("inf-atom.hess", t, HESSFIT_ERROR_NONFINITE, line, NULL, "Inf coordinate");
    free(t);
    /* wrong counts */
    t = test_replace_first(data, 0, "$hessian\n15\n", "$hessian\n14\n", &line);
    write_and_expect("n-hessian-14.hess", t, HESSFIT_ERROR_PARSE, hess_line + 17, "column index", "$hessian 14 for 15");
    free(t);
    t = test_replace_first(data, 0, "$hessian\n15\n", "$hessian\n16\n", &line);
    write_and_expect("n-hessian-16.hess", t, HESSFIT_ERROR_PARSE, hess_line + 18, "row index", "$hessian 16 for 15");
    free(t);
    t = test_replace_first(data, 0, "$atoms\n5\n", "$atoms\n4\n", &line);
    write_and_expect("n-atoms-4.hess", t, HESSFIT_ERROR_FORMAT, atoms_line + 6, "unexpected line", "$atoms 4 for 5");
    free(t);
    t = test_replace_first(data, 0, "$atoms\n5\n", "$atoms\n6\n", &line);
    write_and_expect("n-atoms-6.hess", t, HESSFIT_ERROR_TRUNCATED, atoms_line + 7, "ends early", "$atoms 6 for 5");
    free(t);
    t = test_replace_first(data, 0, "$vibrational_frequencies\n15\n", "$vibrational_frequencies\n14\n", &line);
    write_and_expect("n-freq-14.hess", t, HESSFIT_ERROR_FORMAT, freq_line + 16, "unexpected line", "14 frequencies for 15");
    free(t);
    t = test_replace_first(data, 0, "$normal_modes\n15 15\n", "$normal_modes\n15 14\n", &line);
    write_and_expect("n-modes-14.hess", t, HESSFIT_ERROR_COUNT, modes_line + 34, "beyond", "$normal_modes 15 x 14");
    free(t);
    t = test_replace_first(data, 0, "$normal_modes\n15 15\n", "$normal_modes\n15\n", &line);
    write_and_expect("n-modes-one.hess", t, HESSFIT_ERROR_PARSE, modes_line + 1, "2 integers", "$normal_modes one count");
    free(t);
    /* strict blocks: a column index out of sequence, a missing row, a missing value */
    t = test_replace_first(data, 0, "                         0                  1                  2",
                           "                         0                  2                  1", &line);
    write_and_expect("columns.hess", t, HESSFIT_ERROR_PARSE, hess_line + 2, "column index", "column indices 0 2 1");
    free(t);
    t = test_replace_lines(data, hess_line + 10, hess_line + 10, "");
    write_and_expect("row-missing.hess", t, HESSFIT_ERROR_PARSE, hess_line + 10, "row index", "$hessian row 7 missing");
    free(t);
    t = test_replace_first(data, 0,
                           "      3  -6.2596165243E-02   8.1585381858E-06   0.0000000000E+00   4.3799335198E-02"
                           "  -3.7302175948E-06",
                           "      3  -6.2596165243E-02   8.1585381858E-06   0.0000000000E+00   4.3799335198E-02",
                           &line);
    write_and_expect("value-missing.hess", t, HESSFIT_ERROR_COUNT, line, "4 values", "$hessian row with 4 of 5 values");
    free(t);
    t = test_replace_first(data, 0, "    7        1191.748144", "    8        1191.748144", &line);
    write_and_expect("freq-index.hess", t, HESSFIT_ERROR_PARSE, line, "frequency index", "frequency numbered 8 for 7");
    free(t);
    /* missing sections */
    t = test_replace_lines(data, atoms_line, atoms_line + 6, "");
    write_and_expect("no-atoms.hess", t, HESSFIT_ERROR_FORMAT, 0, "no $atoms", "no $atoms");
    free(t);
    t = test_replace_lines(data, hess_line, freq_line - 1, "");
    write_and_expect("no-hessian.hess", t, HESSFIT_ERROR_FORMAT, 0, "no $hessian", "no $hessian");
    free(t);
    t = test_replace_lines(data, freq_line, modes_line - 1, "");
    write_and_expect("no-frequencies.hess", t, HESSFIT_ERROR_FORMAT, test_find_line(t, 1, "$normal_modes", TEST_LINE_EXACT),
                     "without $vibrational_frequencies", "$normal_modes without frequencies");
    free(t);
    t = test_replace_lines(data, end_line, end_line, "");
    write_and_expect("no-end.hess", t, HESSFIT_ERROR_TRUNCATED, 0, "without $end", "no $end");
    free(t);
    t = test_replace_first(data, 0, "$orca_hessian_file", "$orca_hessian_fil", &line);
    write_and_expect("no-title.hess", t, HESSFIT_ERROR_FORMAT, line, "not an ORCA .hess file", "no $orca_hessian_file");
    free(t);
    /* absurd counts */
    t = test_replace_first(data, 0, "$hessian\n15\n", "$hessian\n999999999\n", &line);
    write_and_expect("huge-hessian.hess", t, HESSFIT_ERROR_PARSE, hess_line + 1, "outside", "$hessian 1e9");
    free(t);
    t = test_replace_first(data, 0, "$hessian\n15\n", "$hessian\n29999999\n", &line);
    write_and_expect("large-hessian.hess", t, HESSFIT_ERROR_PARSE, hess_line + 18, "row index", "$hessian 3e7, data for 15");
    free(t);
    t = test_replace_first(data, 0, "$atoms\n5\n", "$atoms\n9999999\n", &line);
    write_and_expect("huge-atoms.hess", t, HESSFIT_ERROR_TRUNCATED, atoms_line + 7, "ends early", "$atoms 1e7, 5 given");
    free(t);
    t = test_replace_first(data, 0, "$normal_modes\n15 15\n", "$normal_modes\n15 2000000000\n", &line);
    write_and_expect("huge-modes.hess", t, HESSFIT_ERROR_PARSE, modes_line + 1, "outside", "$normal_modes 15 x 2e9");
    free(t);
    /* other damage: a duplicated section, an unknown element, a stray line */
    t = test_replace_first(data, 0, "$multiplicity\n  1\n", "$multiplicity\n  1\n\n$act_energy\n  -1.0\n", &line);
    write_and_expect("duplicate.hess", t, HESSFIT_ERROR_FORMAT, line + 3, "second time", "$act_energy twice");
    free(t);
    t = test_replace_first(data, 0, "\n F   18.99", "\n Xx  18.99", &line);
    write_and_expect("element.hess", t, HESSFIT_ERROR_UNKNOWN_ELEMENT, line + 1, "Xx", "unknown element Xx");
    free(t);
    t = test_replace_first(data, 0, "$act_energy\n", "$act_energy\n    -1.0\n    -2.0\n", &line);
    write_and_expect("stray.hess", t, HESSFIT_ERROR_FORMAT, line + 2, "unexpected line", "two energies");
    free(t);
    /* asymmetry: H(1,0) = 9.89e-7 vs H(0,1) = 9.89e-7. Off by 1e-5 (1.7e-5 of max|H|, below the
     * 1e-4 tolerance for numerical Hessians) it reads, symmetrised; off by 0.1 it is an error */
    {
        hessfit_molecule m;
        const size_t n3 = 15;
        t = test_replace_first(data, 0, "      1   9.8944668732E-07", "      1   1.0989446687E-05", &line);
        HF_CALL(hessfit_orca_hess_read(test_write_text("slightly-asymmetric.hess", t), &m));
        CHECK(m.hessian[1 * n3 + 0] == m.hessian[0 * n3 + 1], "not symmetrised");
        CHECK_CLOSE(m.hessian[1 * n3 + 0], 0.5 * (9.8944668732E-07 + 1.0989446687E-05), 1e-15, 1e-5, "H(1,0)");
        hessfit_molecule_free(&m);
        free(t);
        t = test_replace_first(data, 0, "      1   9.8944668732E-07", "      1   1.0000000000E-01", &line);
        write_and_expect("asymmetric.hess", t, HESSFIT_ERROR_SHAPE, hess_line, "not symmetric", "H(1,0) != H(0,1)");
        free(t);
    }
    /* a long count line after $multiplicity makes the line buffer grow: the message must still
     * name the section (a fuzzer found it naming freed memory) */
    {
        char long_line[1200];
        size_t k = 0;
        while (k + 2 < sizeof long_line - 2) {
            long_line[k++] = '1';
            long_line[k++] = ' ';
        }
        long_line[k++] = '\n';
        long_line[k] = '\0';
        char replacement[1300];
        snprintf(replacement, sizeof replacement, "$multiplicity\n%s", long_line);
        t = test_replace_first(data, 0, "$multiplicity\n  1\n", replacement, &line);
        write_and_expect("long-count.hess", t, HESSFIT_ERROR_PARSE, line + 1, "$multiplicity", "long count line");
        free(t);
    }
    /* empty file, garbage, no file */
    expect_fail(test_write_file("empty.hess", "", 0), HESSFIT_ERROR_TRUNCATED, 0, "empty", "empty file");
    for (size_t k = 0; k < sizeof bytes; k++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        bytes[k] = (unsigned char)((x * 0x2545f4914f6cdd1dull) >> 56);
    }
    expect_fail(test_write_file("garbage.hess", (const char *)bytes, sizeof bytes), HESSFIT_SUCCESS, 0, NULL,
                "binary garbage");
    for (size_t k = 0; k < sizeof bytes; k++)
        bytes[k] = (unsigned char)(bytes[k] % 7 == 0 ? '\n' : 33 + bytes[k] % 90);
    expect_fail(test_write_file("text-garbage.hess", (const char *)bytes, sizeof bytes), HESSFIT_SUCCESS, 0, NULL,
                "text garbage");
    t = malloc(n);
    CHECK(t != NULL, "out of memory");
    memcpy(t, data, n);
    t[test_line_offset(t, hess_line + 5) + 12] = '\0'; /* a NUL byte inside $hessian */
    expect_fail(test_write_file("nul.hess", t, n), HESSFIT_ERROR_PARSE, hess_line + 5, "NUL", "NUL byte");
    free(t);
    expect_fail(test_source_path("tests/data/orca/no-such-file.hess"), HESSFIT_ERROR_IO, 0, NULL, "missing file");
    free(data);
}

int main(void)
{
    /* ch3f.hess: %.10E values (|H| < 1: 5e-11); sn2-ts.hess: %11.6f (5e-7) */
    check_file("ch3f", -139.751112913417, 5.0001e-11, 1e-5, 1e-9);
    check_file("sn2-ts", -239.617572855815, 5.0001e-7, 1e-2, 1e-5);
    test_bad_input();
    printf("test_read_orca: all checks passed\n");
    return 0;
}
