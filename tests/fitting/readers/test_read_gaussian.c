/* Gaussian readers (hessfit_fchk_read, hessfit_gaussian_log_read) on the ethane ground state of the q2mm
 * examples (tests/data/ethane: Gaussian 94, B3LYP/6-31G(d), NoSym, so the log has input
 * orientations only): values read from the files, cross-checks between the two files (the fchk
 * Hessian's frequencies and normal modes against those printed in the log, the archive Hessian
 * against the fchk one, interatomic distances), gzip copies, the log rewritten with a rotated
 * "Standard orientation" and an HPModes section, and bad input of every kind, written to a
 * mkdtemp directory. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_molecule.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_ATOMS 8
#define N3 (3 * N_ATOMS)
#define N_VIB (N3 - 6)

typedef hessfit_status (*reader_fn)(const char *path, hessfit_molecule *mol);

/* ---- files and checks ------------------------------------------------------------------------ */

/* text with every occurrence of from replaced by to (at least one must exist). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    char *cur = test_replace_first(text, 0, from, to, NULL);
    for (;;) {
        char *next;
        if (strstr(cur, from) == NULL)
            return cur;
        next = test_replace_first(cur, 0, from, to, NULL);
        free(cur);
        cur = next;
    }
}

/* Every cut at k/20 of the file (k = 1..19) and at the given extra offsets must fail. A cut right
 * after a newline is moved 3 bytes on, into the next line, so that every cut ends mid-line. */
static void check_truncations(reader_fn read, const char *stem, const char *data, size_t n, const size_t *extra,
                              int n_extra)
{
    for (int k = 1; k < 20 + n_extra; k++) {
        char name[64], what[96];
        size_t cut = k < 20 ? n * (size_t)k / 20 : extra[k - 20];
        const char *path;
        if (cut > 0 && data[cut - 1] == '\n')
            cut += 3;
        snprintf(name, sizeof name, "%s-cut%zu", stem, cut);
        snprintf(what, sizeof what, "%s cut at byte %zu of %zu", stem, cut, n);
        path = test_write_file(name, data, cut);
        test_expect_read_failure(read, path, HESSFIT_SUCCESS, 0, NULL, NULL, what);
    }
}

/* Two molecules hold the same values (gzip copies). */
static void check_identical(const hessfit_molecule *a, const hessfit_molecule *b, const char *what)
{
    const size_t n3 = 3 * (size_t)a->n_atoms;
    CHECK(a->n_atoms == b->n_atoms && a->n_modes == b->n_modes && a->has_energy == b->has_energy &&
              a->energy == b->energy && a->has_charge == b->has_charge && a->charge == b->charge &&
              a->multiplicity == b->multiplicity && strcmp(a->name, b->name) == 0,
          "%s: scalars differ", what);
    CHECK(memcmp(a->atomic_numbers, b->atomic_numbers, (size_t)a->n_atoms * sizeof(int)) == 0, "%s: elements", what);
    CHECK(memcmp(a->coords, b->coords, n3 * sizeof(double)) == 0, "%s: coordinates", what);
    CHECK((a->hessian == NULL) == (b->hessian == NULL), "%s: Hessian presence", what);
    CHECK(a->hessian == NULL || memcmp(a->hessian, b->hessian, n3 * n3 * sizeof(double)) == 0, "%s: Hessian", what);
    CHECK(a->n_modes == 0 || memcmp(a->frequencies, b->frequencies, (size_t)a->n_modes * sizeof(double)) == 0,
          "%s: frequencies", what);
    CHECK(a->n_modes == 0 || memcmp(a->modes, b->modes, (size_t)a->n_modes * n3 * sizeof(double)) == 0,
          "%s: modes", what);
}

/* Frequencies (18, ascending) and unit Cartesian normal modes (18 x 24) of a Hessian, with
 * monoisotopic masses and translations/rotations projected out. */
static void vibrations(const hessfit_molecule *m, double *freqs, double *cart_modes)
{
    double masses[N_ATOMS], all[N3], modes[N3 * N3];
    int n_ext = 0;
    HF_CALL(hessfit_element_masses(m->atomic_numbers, N_ATOMS, HESSFIT_MASS_MONOISOTOPIC, masses));
    HF_CALL(hessfit_vib_analyse(m->hessian, masses, m->coords, N_ATOMS, hessfit_frequency_factor_hartree_bohr2_amu(),
                           HESSFIT_VIB_PROJECT_EXTERNAL, all, modes, &n_ext));
    CHECK(n_ext == 6, "ethane: %d external modes", n_ext);
    CHECK(fabs(all[5]) < 1.0 && all[6] > 300.0, "ethane: external/vibration split %g %g", all[5], all[6]);
    for (int k = 0; k < N_VIB; k++) {
        double norm = 0.0;
        freqs[k] = all[6 + k];
        for (int i = 0; i < N3; i++) {
            cart_modes[k * N3 + i] = modes[(6 + k) * N3 + i] / sqrt(masses[i / 3]);
            norm += cart_modes[k * N3 + i] * cart_modes[k * N3 + i];
        }
        for (int i = 0; i < N3; i++)
            cart_modes[k * N3 + i] /= sqrt(norm);
    }
}

/* max over modes of min over the sign of max_i |s a_i - b_i|; a is flipped to b's sign in place. */
static double align_modes(double *a, const double *b, int n_modes)
{
    double worst = 0.0;
    for (int k = 0; k < n_modes; k++) {
        double dot = 0.0, d = 0.0;
        for (int i = 0; i < N3; i++)
            dot += a[k * N3 + i] * b[k * N3 + i];
        for (int i = 0; i < N3; i++) {
            if (dot < 0)
                a[k * N3 + i] = -a[k * N3 + i];
            d = fmax(d, fabs(a[k * N3 + i] - b[k * N3 + i]));
        }
        worst = fmax(worst, d);
    }
    return worst;
}

/* R (row-major) applied to every 3 x 3 block: R H R^T. */
static void rotate_hessian(const double R[9], const double *h, double *out)
{
    for (int a = 0; a < N_ATOMS; a++)
        for (int b = 0; b < N_ATOMS; b++)
            for (int u = 0; u < 3; u++)
                for (int v = 0; v < 3; v++) {
                    double s = 0.0;
                    for (int p = 0; p < 3; p++)
                        for (int q = 0; q < 3; q++)
                            s += R[3 * u + p] * h[(3 * a + p) * N3 + 3 * b + q] * R[3 * v + q];
                    out[(3 * a + u) * N3 + 3 * b + v] = s;
                }
}

/* ---- the real files ----------------------------------------------------------------------------- */

static const int ethane_z[N_ATOMS] = {1, 6, 1, 6, 1, 1, 1, 1};

static void test_fchk(hessfit_molecule *fchk)
{
    const char *path = test_source_path("tests/data/ethane/GS.fchk");
    const double bohr = HESSFIT_BOHR_TO_ANGSTROM;
    HF_CALL(hessfit_fchk_read(path, fchk));
    HF_CALL(hessfit_molecule_check(fchk, "GS.fchk"));
    CHECK(fchk->n_atoms == N_ATOMS, "fchk atoms %d", fchk->n_atoms);
    CHECK(memcmp(fchk->atomic_numbers, ethane_z, sizeof ethane_z) == 0, "fchk elements");
    CHECK(strcmp(fchk->name, "Basic Ethane minimum") == 0, "fchk title '%s'", fchk->name);
    CHECK(strstr(fchk->source, "GS.fchk") != NULL, "fchk source '%s'", fchk->source);
    CHECK(fchk->has_charge && fchk->charge == 0 && fchk->multiplicity == 1, "fchk charge %d multiplicity %d",
          fchk->charge, fchk->multiplicity);
    CHECK(fchk->has_energy && fchk->energy == -7.983041689192832E+01, "fchk energy %.17g", fchk->energy);
    /* first and last coordinates of "Current cartesian coordinates" (Bohr) */
    CHECK(fchk->coords[0] == 3.38072221E-02 * bohr && fchk->coords[1] == 5.85043133E-02 * bohr &&
              fchk->coords[23] == 5.09438078E+00 * bohr,
          "fchk coordinates %.17g %.17g %.17g", fchk->coords[0], fchk->coords[1], fchk->coords[23]);
    /* "Cartesian Force Constants": H(1,1), H(2,1), H(2,2), H(3,1), the last H(24,24), and
     * element 17 of the triangle = H(6,2) (row 6 starts at 15 = 5*6/2) */
    CHECK(fchk->hessian[0] == 4.96990292E-02 && fchk->hessian[1 * N3 + 0] == 2.16464405E-03 &&
              fchk->hessian[0 * N3 + 1] == 2.16464405E-03 && fchk->hessian[1 * N3 + 1] == 5.21338590E-02 &&
              fchk->hessian[2 * N3 + 0] == -3.34199599E-03 && fchk->hessian[N3 * N3 - 1] == 3.38276497E-01 &&
              fchk->hessian[5 * N3 + 1] == 3.09212254E-03 && fchk->hessian[1 * N3 + 5] == 3.09212254E-03,
          "fchk Hessian elements");
    for (int i = 0; i < N3; i++)
        for (int j = 0; j < N3; j++)
            CHECK(fchk->hessian[i * N3 + j] == fchk->hessian[j * N3 + i], "fchk Hessian not symmetric at %d,%d", i, j);
    CHECK(fchk->n_modes == 0 && fchk->frequencies == NULL, "fchk has no frequencies");
    printf("GS.fchk: 8 atoms, E = %.14f Hartree, H(1,1) = %.8e\n", fchk->energy, fchk->hessian[0]);
}

/* The 18 frequencies and, of mode 1 and mode 18, a few displacements as GS.log prints them. */
static const double log_freqs[N_VIB] = {312.9189,  831.7378,  832.4266,  1010.0217, 1235.4014, 1235.5487,
                                        1433.0238, 1454.2083, 1531.7465, 1532.1621, 1537.4225, 1537.8152,
                                        3047.0774, 3047.9938, 3098.3069, 3098.5764, 3122.6553, 3122.9498};

static void test_log(hessfit_molecule *log)
{
    const char *path = test_source_path("tests/data/ethane/GS.log");
    HF_CALL(hessfit_gaussian_log_read(path, log));
    HF_CALL(hessfit_molecule_check(log, "GS.log"));
    CHECK(log->n_atoms == N_ATOMS, "log atoms %d", log->n_atoms);
    CHECK(memcmp(log->atomic_numbers, ethane_z, sizeof ethane_z) == 0, "log elements");
    CHECK(strcmp(log->name, "Basic Ethane minimum") == 0, "log title (archive) '%s'", log->name);
    CHECK(log->has_charge && log->charge == 0 && log->multiplicity == 1, "log charge/multiplicity");
    CHECK(log->has_energy && log->energy == -79.8304168919, "log energy (last SCF Done) %.12f", log->energy);
    /* the last input orientation (line 864): atom 1 and atom 8 */
    CHECK(log->coords[0] == 0.017890 && log->coords[1] == 0.030959 && log->coords[2] == -0.005497 &&
              log->coords[21] == -0.739611 && log->coords[22] == -1.281015 && log->coords[23] == 2.695830,
          "log coordinates");
    CHECK(log->n_modes == N_VIB, "log modes %d", log->n_modes);
    for (int k = 0; k < N_VIB; k++)
        CHECK(log->frequencies[k] == log_freqs[k], "log frequency %d: %.4f", k + 1, log->frequencies[k]);
    /* mode 1: atom 1 (0.35, -0.20, 0.00), atom 3 (-0.12, 0.20, 0.33); mode 18: atom 8 (0.00, 0.02, -0.42) */
    CHECK(log->modes[0] == 0.35 && log->modes[1] == -0.20 && log->modes[2] == 0.0 && log->modes[6] == -0.12 &&
              log->modes[8] == 0.33 && log->modes[17 * N3 + 21] == 0.0 && log->modes[17 * N3 + 22] == 0.02 &&
              log->modes[17 * N3 + 23] == -0.42,
          "log normal-mode displacements");
    /* mode 2, atom 2 (C): -0.03 0.00 -0.03 (a block's second column) */
    CHECK(log->modes[1 * N3 + 3] == -0.03 && log->modes[1 * N3 + 5] == -0.03, "log mode 2 atom 2");
    /* archive Hessian: first values 0.04969903,0.00216464,0.05213386 and the last 0.33827650 */
    CHECK(log->hessian != NULL && log->hessian[0] == 0.04969903 && log->hessian[N3] == 0.00216464 &&
              log->hessian[N3 + 1] == 0.05213386 && log->hessian[N3 * N3 - 1] == 0.33827650,
          "log archive Hessian elements");
    printf("GS.log: 8 atoms, E = %.10f, %d frequencies %.4f .. %.4f\n", log->energy, log->n_modes,
           log->frequencies[0], log->frequencies[N_VIB - 1]);
}

static void test_cross_checks(const hessfit_molecule *fchk, const hessfit_molecule *log)
{
    double freqs[N_VIB], cart[N_VIB * N3], dmax = 0.0, hmax = 0.0, rmax = 0.0, mode_dev;
    /* frequencies of the fchk Hessian against those printed in the log (4 decimals) */
    vibrations(fchk, freqs, cart);
    for (int k = 0; k < N_VIB; k++)
        dmax = fmax(dmax, fabs(freqs[k] - log->frequencies[k]));
    printf("fchk Hessian -> frequencies vs GS.log: max |diff| = %.2e cm^-1\n", dmax);
    CHECK(dmax <= 1e-4, "frequencies of the fchk Hessian differ from the log by %.3g cm^-1", dmax);
    /* normal modes of the fchk Hessian against the log's 2-decimal displacements */
    mode_dev = align_modes(cart, log->modes, N_VIB);
    printf("fchk Hessian -> unit Cartesian normal modes vs GS.log (2 decimals): max |diff| = %.2e\n", mode_dev);
    CHECK(mode_dev <= 0.0051, "normal modes differ from the log by %.3g", mode_dev);
    /* archive Hessian (8 decimals) against the fchk Hessian (9 significant digits) */
    for (int k = 0; k < N3 * N3; k++)
        hmax = fmax(hmax, fabs(fchk->hessian[k] - log->hessian[k]));
    printf("GS.log archive Hessian vs GS.fchk: max |diff| = %.2e Hartree/Bohr^2\n", hmax);
    CHECK(hmax <= 5.5e-9, "archive Hessian differs from the fchk one by %.3g", hmax);
    /* interatomic distances */
    for (int i = 0; i < N_ATOMS; i++)
        for (int j = 0; j < i; j++)
            rmax = fmax(rmax, fabs(test_distance(fchk->coords, i, j) - test_distance(log->coords, i, j)));
    printf("GS.log orientation vs GS.fchk coordinates: max |distance diff| = %.2e A\n", rmax);
    CHECK(rmax <= 1e-5, "interatomic distances differ by %.3g A", rmax);
}

static void test_gzip(const hessfit_molecule *fchk, const hessfit_molecule *log)
{
    size_t n;
    char *data;
    hessfit_molecule m;
    data = test_load_file(test_source_path("tests/data/ethane/GS.fchk"), &n);
    HF_CALL(hessfit_fchk_read(test_write_gz("GS.fchk.gz", data, n), &m));
    check_identical(fchk, &m, "GS.fchk.gz");
    hessfit_molecule_free(&m);
    free(data);
    data = test_load_file(test_source_path("tests/data/ethane/GS.log"), &n);
    HF_CALL(hessfit_gaussian_log_read(test_write_gz("GS.log.gz", data, n), &m));
    check_identical(log, &m, "GS.log.gz");
    hessfit_molecule_free(&m);
    free(data);
    printf("gzip copies of GS.fchk and GS.log read identically\n");
}

/* The first job of GS.log alone (an optimisation, up to its "Normal termination"): its last
 * orientation and SCF energy, no frequencies, and no Hessian (its archive has no NImag). */
static void test_log_first_job(void)
{
    size_t n;
    char *data = test_load_file(test_source_path("tests/data/ethane/GS.log"), &n);
    int end = test_find_line(data, 1, "Normal termination of Gaussian", 0);
    size_t cut = test_line_offset(data, end + 1);
    hessfit_molecule m;
    HF_CALL(hessfit_gaussian_log_read(test_write_file("first-job.log", data, cut), &m));
    CHECK(m.n_atoms == N_ATOMS && m.hessian == NULL && m.n_modes == 0 && m.has_energy &&
              m.energy == -79.8304168919 && m.coords[2] == -0.005497,
          "first job: atoms %d, Hessian %p, modes %d, energy %.10f", m.n_atoms, (void *)m.hessian, m.n_modes,
          m.energy);
    printf("GS.log up to line %d (the optimisation job): no Hessian, no modes, E = %.10f\n", end, m.energy);
    hessfit_molecule_free(&m);
    free(data);
}

/* GS.log rewritten as a newer Gaussian with symmetry would print it: a "Standard orientation"
 * (the input orientation rotated and shifted) after the last input orientation, and an HPModes
 * section (5 decimals, from the fchk Hessian) before the default frequency section. */
static void test_log_standard_orientation_and_hpmodes(const hessfit_molecule *fchk, const hessfit_molecule *log)
{
    const double axis[3] = {1.0, 2.0, 3.0}, angle = 0.7, shift[3] = {0.3, -0.2, 0.1};
    double R[9], std_xyz[N3], freqs[N_VIB], hp[N_VIB * N3], expect_h[N3 * N3], hmax = 0.0, fmax_dev = 0.0,
                                                                               hp_dev = 0.0, beyond_2dp = 0.0;
    size_t n, cap = 200000, len = 0;
    char *data = test_load_file(test_source_path("tests/data/ethane/GS.log"), &n), *with_std, *with_hp, *block, *bad;
    int title, dashes = 0, after, freq_title;
    hessfit_molecule m;

    /* R: rotation about axis by angle (Rodrigues) */
    {
        double u[3], c = cos(angle), s = sin(angle), norm = sqrt(14.0);
        for (int k = 0; k < 3; k++)
            u[k] = axis[k] / norm;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                R[3 * a + b] = (a == b ? c : 0.0) + (1 - c) * u[a] * u[b];
        R[1] -= s * u[2];
        R[2] += s * u[1];
        R[3] += s * u[2];
        R[5] -= s * u[0];
        R[6] -= s * u[1];
        R[7] += s * u[0];
    }
    block = malloc(cap);
    CHECK(block != NULL, "out of memory");

    /* the standard orientation table, after the last input orientation table */
    title = test_find_line(data, 1, "Input orientation:", TEST_LINE_LAST);
    for (after = title + 1; dashes < 3; after++)
        if (strstr(data + test_line_offset(data, after), " -----") == data + test_line_offset(data, after))
            dashes++;
    len += (size_t)snprintf(block + len, cap - len,
                            "                         Standard orientation:                         \n"
                            " ---------------------------------------------------------------------\n"
                            " Center     Atomic      Atomic             Coordinates (Angstroms)\n"
                            " Number     Number       Type             X           Y           Z\n"
                            " ---------------------------------------------------------------------\n");
    for (int i = 0; i < N_ATOMS; i++) {
        for (int a = 0; a < 3; a++) {
            char num[32];
            double v = shift[a];
            for (int b = 0; b < 3; b++)
                v += R[3 * a + b] * log->coords[3 * i + b];
            snprintf(num, sizeof num, "%.6f", v);
            std_xyz[3 * i + a] = atof(num);
        }
        len += (size_t)snprintf(block + len, cap - len, "%7d%11d%12d    %12.6f%12.6f%12.6f\n", i + 1, ethane_z[i], 0,
                                std_xyz[3 * i], std_xyz[3 * i + 1], std_xyz[3 * i + 2]);
    }
    len += (size_t)snprintf(block + len, cap - len,
                            " ---------------------------------------------------------------------\n");
    with_std = test_replace_lines(data, after, after - 1, block);

    /* the HPModes section before the default one */
    vibrations(fchk, freqs, hp);
    align_modes(hp, log->modes, N_VIB);
    len = 0;
    len += (size_t)snprintf(block + len, cap - len,
                            " Harmonic frequencies (cm**-1), IR intensities (KM/Mole), Raman scattering\n"
                            " activities (A**4/AMU), depolarization ratios for plane and unpolarized\n"
                            " incident light, reduced masses (AMU), force constants (mDyne/A),\n"
                            " and normal coordinates:\n");
    for (int k0 = 0; k0 < N_VIB; k0 += 5) {
        int k1 = k0 + 5 < N_VIB ? k0 + 5 : N_VIB;
        len += (size_t)snprintf(block + len, cap - len, "                 ");
        for (int k = k0; k < k1; k++)
            len += (size_t)snprintf(block + len, cap - len, "%10d", k + 1);
        len += (size_t)snprintf(block + len, cap - len, "\n                 ");
        for (int k = k0; k < k1; k++)
            len += (size_t)snprintf(block + len, cap - len, "%10s", k < 3 ? "AU" : "AG");
        len += (size_t)snprintf(block + len, cap - len, "\n     Frequencies --- ");
        for (int k = k0; k < k1; k++)
            len += (size_t)snprintf(block + len, cap - len, "%10.4f", log->frequencies[k]);
        len += (size_t)snprintf(block + len, cap - len, "\n  Reduced masses --- ");
        for (int k = k0; k < k1; k++)
            len += (size_t)snprintf(block + len, cap - len, "%10.4f", 1.0);
        len += (size_t)snprintf(block + len, cap - len, "\n  IR Intensities --- ");
        for (int k = k0; k < k1; k++)
            len += (size_t)snprintf(block + len, cap - len, "%10.4f", 0.0);
        len += (size_t)snprintf(block + len, cap - len, "\n Coord Atom Element:\n");
        for (int row = 0; row < N3; row++) {
            len += (size_t)snprintf(block + len, cap - len, "%4d%6d%6d       ", row % 3 + 1, row / 3 + 1,
                                    ethane_z[row / 3]);
            for (int k = k0; k < k1; k++)
                len += (size_t)snprintf(block + len, cap - len, "%10.5f", hp[k * N3 + row]);
            len += (size_t)snprintf(block + len, cap - len, "\n");
        }
    }
    freq_title = test_find_line(with_std, 1, "Harmonic frequencies (cm**-1)", 0);
    with_hp = test_replace_lines(with_std, freq_title, freq_title - 1, block);

    HF_CALL(hessfit_gaussian_log_read(test_write_text("GS-standard-hpmodes.log", with_hp), &m));
    HF_CALL(hessfit_molecule_check(&m, "GS-standard-hpmodes.log"));
    /* coordinates: the standard orientation */
    CHECK(memcmp(m.coords, std_xyz, sizeof std_xyz) == 0, "coordinates are not the standard orientation");
    /* Hessian: the archive's, rotated into the standard orientation */
    rotate_hessian(R, fchk->hessian, expect_h);
    for (int k = 0; k < N3 * N3; k++)
        hmax = fmax(hmax, fabs(m.hessian[k] - expect_h[k]));
    printf("rotated log: Hessian vs R H_fchk R^T: max |diff| = %.2e Hartree/Bohr^2\n", hmax);
    CHECK(hmax <= 2e-7, "rotated archive Hessian differs from R H R^T by %.3g", hmax);
    /* its frequencies in the new frame */
    {
        double f2[N_VIB], c2[N_VIB * N3];
        vibrations(&m, f2, c2);
        for (int k = 0; k < N_VIB; k++)
            fmax_dev = fmax(fmax_dev, fabs(f2[k] - log_freqs[k]));
        printf("rotated log: frequencies of the rotated Hessian vs GS.log: max |diff| = %.2e cm^-1\n", fmax_dev);
        CHECK(fmax_dev <= 1e-3, "frequencies of the rotated Hessian differ by %.3g", fmax_dev);
    }
    /* modes: the HPModes values, not the default 2-decimal ones that follow them */
    CHECK(m.n_modes == N_VIB, "HPModes log: %d modes", m.n_modes);
    for (int k = 0; k < N_VIB; k++)
        CHECK(m.frequencies[k] == log_freqs[k], "HPModes frequency %d", k + 1);
    for (int k = 0; k < N_VIB * N3; k++) {
        hp_dev = fmax(hp_dev, fabs(m.modes[k] - hp[k]));
        beyond_2dp = fmax(beyond_2dp, fabs(m.modes[k] - log->modes[k]));
    }
    printf("HPModes log: modes vs the values written (5 decimals): max |diff| = %.2e; vs the default "
           "2-decimal block: %.2e\n",
           hp_dev, beyond_2dp);
    CHECK(hp_dev <= 5.0001e-6, "HPModes values read wrongly (%.3g)", hp_dev);
    CHECK(beyond_2dp > 1e-3, "the default block was read instead of the HPModes one");
    hessfit_molecule_free(&m);

    /* a standard orientation that is not a rotation of the archive geometry: atom 8 moved 0.01 A */
    {
        char row[128], moved[128];
        snprintf(row, sizeof row, "%7d%11d%12d    %12.6f", 8, 1, 0, std_xyz[21]);
        snprintf(moved, sizeof moved, "%7d%11d%12d    %12.6f", 8, 1, 0, std_xyz[21] + 0.01);
        bad = test_replace_first(with_std, 0, row, moved, NULL);
        test_expect_read_failure(hessfit_gaussian_log_read, test_write_text("GS-not-a-rotation.log", bad), HESSFIT_ERROR_FORMAT,
                                 0, "not a rotation", NULL, "standard orientation of another geometry");
        free(bad);
    }
    free(block);
    free(with_std);
    free(with_hp);
    free(data);
}

/* ---- bad input ---------------------------------------------------------------------------------- */

static void write_and_expect(reader_fn read, const char *name, const char *text, hessfit_status want, int line,
                             const char *part, const char *what)
{
    test_expect_read_failure(read, test_write_text(name, text), want, line, part, NULL, what);
}

static void garbage(reader_fn read, const char *stem)
{
    unsigned char bytes[4096];
    char name[64];
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < sizeof bytes; k++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        bytes[k] = (unsigned char)((x * 0x2545f4914f6cdd1dull) >> 56);
    }
    snprintf(name, sizeof name, "%s-empty", stem);
    test_expect_read_failure(read, test_write_file(name, "", 0), HESSFIT_SUCCESS, 0, NULL, NULL, "empty file");
    snprintf(name, sizeof name, "%s-garbage", stem);
    test_expect_read_failure(read, test_write_file(name, (const char *)bytes, sizeof bytes), HESSFIT_SUCCESS, 0, NULL, NULL,
                             "binary garbage");
    for (size_t k = 0; k < sizeof bytes; k++) /* printable garbage, no NULs, some newlines */
        bytes[k] = (unsigned char)(bytes[k] % 7 == 0 ? '\n' : 33 + bytes[k] % 90);
    snprintf(name, sizeof name, "%s-text-garbage", stem);
    test_expect_read_failure(read, test_write_file(name, (const char *)bytes, sizeof bytes), HESSFIT_SUCCESS, 0, NULL, NULL,
                             "text garbage");
    test_expect_read_failure(read, test_source_path("tests/data/ethane/no-such-file"), HESSFIT_ERROR_IO, 0, NULL, NULL,
                             "missing file");
}

static void test_bad_fchk(void)
{
    size_t n;
    char *data = test_load_file(test_source_path("tests/data/ethane/GS.fchk"), &n), *t;
    const char *fc_header = strstr(data, "Cartesian Force Constants");
    size_t fc = (size_t)(fc_header - data), extra[6];
    int fc_line = test_line_of(data, fc), line;
    printf("fchk: bad input\n");
    /* truncations, also inside the force constants (mid-number, 6 places) */
    for (int k = 0; k < 6; k++)
        extra[k] = fc + 100 + (size_t)k * 700 + (size_t)k * 7;
    CHECK(extra[5] < (size_t)(strstr(data, "Dipole Moment") - data), "cuts inside the force constants");
    check_truncations(hessfit_fchk_read, "GS.fchk", data, n, extra, 6);

    /* NaN: a coordinate and a force constant; a word among the force constants */
    t = test_replace_first(data, 0, " 3.38072221E-02", "            NaN", &line);
    CHECK(line == 26, "first coordinate on line %d", line);
    write_and_expect(hessfit_fchk_read, "nan-coord.fchk", t, HESSFIT_ERROR_NONFINITE, line, NULL, "NaN coordinate");
    free(t);
    t = test_replace_first(data, 0, " 2.12620247E-03", "            nan", &line);
    CHECK(line == fc_line + 2, "force constant on line %d", line);
    write_and_expect(hessfit_fchk_read, "nan-fc.fchk", t, HESSFIT_ERROR_NONFINITE, line, NULL, "NaN force constant");
    free(t);
    t = test_replace_first(data, 0, " 2.16464405E-03", " 2.16464x05E-03", &line);
    write_and_expect(hessfit_fchk_read, "word-fc.fchk", t, HESSFIT_ERROR_PARSE, line, NULL, "non-number force constant");
    free(t);
    /* wrong N= counts */
    t = test_replace_first(data, 0, "Atomic numbers                             I   N=           8",
                           "Atomic numbers                             I   N=           7", &line);
    write_and_expect(hessfit_fchk_read, "n-atomic-numbers.fchk", t, HESSFIT_ERROR_COUNT, line, "N=7", "N= 7 atomic numbers");
    free(t);
    t = test_replace_first(data, 0, "Cartesian Force Constants                  R   N=         300",
                           "Cartesian Force Constants                  R   N=         299", &line);
    write_and_expect(hessfit_fchk_read, "n-fc.fchk", t, HESSFIT_ERROR_COUNT, line, "N=299", "N= 299 force constants");
    free(t);
    t = test_replace_first(data, 0, "Number of atoms                            I                8",
                           "Number of atoms                            I                7", &line);
    write_and_expect(hessfit_fchk_read, "n-atoms.fchk", t, HESSFIT_ERROR_COUNT, 19, "needs 7", "Number of atoms 7");
    free(t);
    /* an unused array with a wrong count: more values than N= / fewer */
    t = test_replace_first(data, 0, "Dipole Moment                              R   N=           3",
                           "Dipole Moment                              R   N=           2", &line);
    write_and_expect(hessfit_fchk_read, "n-dipole-small.fchk", t, HESSFIT_ERROR_COUNT, line + 1, "more values",
                     "unused array, N= too small");
    free(t);
    t = test_replace_first(data, 0, "Dipole Moment                              R   N=           3",
                           "Dipole Moment                              R   N=           4", &line);
    write_and_expect(hessfit_fchk_read, "n-dipole-large.fchk", t, HESSFIT_ERROR_TRUNCATED, line + 2, "ends after 3 of its N=4",
                     "unused array, N= too large");
    free(t);
    /* a short force-constant array: one line of values removed */
    t = test_replace_lines(data, fc_line + 3, fc_line + 3, "");
    write_and_expect(hessfit_fchk_read, "short-fc.fchk", t, HESSFIT_ERROR_TRUNCATED, fc_line + 60, "ends after 295 of its N=300",
                     "force constants one line short");
    free(t);
    /* missing sections */
    t = test_replace_lines(data, 19, 21, "");
    write_and_expect(hessfit_fchk_read, "no-atomic-numbers.fchk", t, HESSFIT_ERROR_FORMAT, 0, "no 'Atomic numbers'",
                     "no Atomic numbers");
    free(t);
    t = test_replace_lines(data, 25, 30, "");
    write_and_expect(hessfit_fchk_read, "no-coordinates.fchk", t, HESSFIT_ERROR_FORMAT, 0, "Current cartesian coordinates",
                     "no coordinates");
    free(t);
    t = test_replace_lines(data, 3, 3, "");
    write_and_expect(hessfit_fchk_read, "no-natoms.fchk", t, HESSFIT_ERROR_FORMAT, 18, "before 'Number of atoms'",
                     "no Number of atoms");
    free(t);
    /* absurd counts: refused, or never allocated */
    t = test_replace_first(data, 0, "Number of atoms                            I                8",
                           "Number of atoms                            I       2000000000", &line);
    write_and_expect(hessfit_fchk_read, "huge-natoms.fchk", t, HESSFIT_ERROR_PARSE, line, "outside", "2e9 atoms");
    free(t);
    t = test_replace_first(data, 0, "Cartesian Force Constants                  R   N=         300",
                           "Cartesian Force Constants                  R   N= 999999999999", &line);
    write_and_expect(hessfit_fchk_read, "huge-fc.fchk", t, HESSFIT_ERROR_COUNT, line, NULL, "N= 1e12 force constants");
    free(t);
    {
        char *t2 = test_replace_first(data, 0, "Number of atoms                            I                8",
                          "Number of atoms                            I          9000000", &line);
        t = test_replace_first(t2, 0, "Atomic numbers                             I   N=           8",
                               "Atomic numbers                             I   N=     9000000", &line);
        write_and_expect(hessfit_fchk_read, "huge-consistent.fchk", t, HESSFIT_ERROR_TRUNCATED, line + 3, "ends after 8 of its",
                         "9e6 atoms announced, 8 given");
        free(t2);
        free(t);
    }
    t = test_replace_first(data, 0, "Atomic numbers                             I   N=           8",
                           "Atomic numbers                             R   N=           8", &line);
    write_and_expect(hessfit_fchk_read, "type.fchk", t, HESSFIT_ERROR_FORMAT, line, "type I", "atomic numbers of type R");
    free(t);
    t = test_replace_first(data, 0, "           1           6           1           6           1           1",
                           "           1           6           1           6         200           1", &line);
    write_and_expect(hessfit_fchk_read, "element.fchk", t, HESSFIT_ERROR_PARSE, line, NULL, "atomic number 200");
    free(t);
    garbage(hessfit_fchk_read, "fchk");
    free(data);
}

static void test_bad_log(void)
{
    size_t n;
    char *data = test_load_file(test_source_path("tests/data/ethane/GS.log"), &n), *t;
    const char *nimag = strstr(data, "NImag=0");
    size_t hess = (size_t)(nimag - data), extra[5];
    int arch_line = test_line_of(data, hess), last_archive = test_find_line(data, 1, "0,1\\H", TEST_LINE_LAST), line,
        archive_start = test_find_line(data, 1, " 1\\1\\GINC", TEST_LINE_LAST);
    printf("log: bad input\n");
    for (int k = 0; k < 5; k++) /* inside the archive Hessian */
        extra[k] = hess + 20 + (size_t)k * 500 + (size_t)k * 3;
    check_truncations(hessfit_gaussian_log_read, "GS.log", data, n, extra, 5);

    /* NaN and a non-number in the archive Hessian, a NaN frequency */
    t = test_replace_first(data, 0, "\\\\0.04969903,", "\\\\NaN,", &line);
    CHECK(line == arch_line, "archive Hessian starts on line %d", line);
    write_and_expect(hessfit_gaussian_log_read, "nan-archive.log", t, HESSFIT_ERROR_NONFINITE, line, NULL,
                     "NaN in the archive Hessian");
    free(t);
    t = test_replace_first(data, 0, "6133,0.33827650,", "6133,0.3382765x,", &line);
    CHECK(line == arch_line + 1, "archive line %d", line);
    write_and_expect(hessfit_gaussian_log_read, "word-archive.log", t, HESSFIT_ERROR_PARSE, line, NULL,
                     "non-number in the archive Hessian");
    free(t);
    t = test_replace_first(data, 0, "Frequencies --   312.9189", "Frequencies --        NaN", &line);
    write_and_expect(hessfit_gaussian_log_read, "nan-freq.log", t, HESSFIT_ERROR_NONFINITE, line, NULL, "NaN frequency");
    free(t);
    /* wrong counts: a force constant missing, a mode row missing or short, atom numbering */
    t = test_replace_first(data, 0, ",0.05213386,", ",", &line);
    write_and_expect(hessfit_gaussian_log_read, "short-archive.log", t, HESSFIT_ERROR_COUNT, line, "has 299 values",
                     "archive Hessian one value short");
    free(t);
    {
        int row = test_find_line(data, 1, "   8   1     0.35  -0.20   0.00", TEST_LINE_LAST);
        t = test_replace_lines(data, row, row, "");
        write_and_expect(hessfit_gaussian_log_read, "short-modes.log", t, HESSFIT_ERROR_COUNT, row, NULL,
                         "mode table one row short");
        free(t);
    }
    t = test_replace_first(data, 0, "   1   1     0.35  -0.20   0.00     0.33   0.29  -0.02    -0.02  -0.37   0.01",
                           "   1   1     0.35  -0.20   0.00     0.33   0.29  -0.02    -0.02  -0.37", &line);
    write_and_expect(hessfit_gaussian_log_read, "fields.log", t, HESSFIT_ERROR_COUNT, line, "fields", "mode row with a value missing");
    free(t);
    t = test_replace_first(data, 0, "    7          1          -1.760520", "    9          1          -1.760520",
                           &line);
    write_and_expect(hessfit_gaussian_log_read, "center.log", t, HESSFIT_ERROR_PARSE, line, "center number",
                     "orientation row numbered 9 for 7");
    free(t);
    t = test_replace_first(data, 0, "   2   6     0.00   0.00   0.00    -0.03",
                           "   2   7     0.00   0.00   0.00    -0.03", &line);
    write_and_expect(hessfit_gaussian_log_read, "an.log", t, HESSFIT_ERROR_PARSE, line, "atomic number",
                     "mode table element differs from the orientation");
    free(t);
    /* missing sections: no orientation table; no normal termination */
    t = replace_all(data, "Input orientation:", "Input geometry:");
    write_and_expect(hessfit_gaussian_log_read, "no-orientation.log", t, HESSFIT_ERROR_FORMAT, 0, "orientation",
                     "no orientation table");
    free(t);
    t = replace_all(data, "Normal termination of Gaussian", "Error termination of Gaussian");
    write_and_expect(hessfit_gaussian_log_read, "error-termination.log", t, HESSFIT_ERROR_TRUNCATED, 0, "Normal termination",
                     "error termination");
    free(t);
    /* absurd numbers: a mode number, an atom number */
    t = test_replace_first(data, 0, "                     1                      2                      3",
                           "                     1             999999999                      3", &line);
    write_and_expect(hessfit_gaussian_log_read, "mode-number.log", t, HESSFIT_ERROR_PARSE, line, "mode number",
                     "mode number 999999999");
    free(t);
    t = test_replace_first(data, 0, "    1          1           0.017890", " 2147483648000   1         0.017890",
                           &line);
    write_and_expect(hessfit_gaussian_log_read, "atom-number.log", t, HESSFIT_ERROR_PARSE, line, "center number",
                     "atom number 2e12");
    free(t);
    /* the archive geometry disagrees with the orientation (atom 1 moved 0.1 A) */
    t = test_replace_first(data, test_line_offset(data, last_archive), ",0.0178900128,", ",0.1178900128,", &line);
    write_and_expect(hessfit_gaussian_log_read, "archive-geometry.log", t, HESSFIT_ERROR_FORMAT, archive_start,
                     "not a rotation", "archive geometry of another structure");
    free(t);
    /* the archive's charge/multiplicity disagrees with the log's */
    t = test_replace_first(data, test_line_offset(data, last_archive), "\\\\0,1\\H", "\\\\0,3\\H", &line);
    write_and_expect(hessfit_gaussian_log_read, "archive-multiplicity.log", t, HESSFIT_ERROR_FORMAT, 0, "multiplicity",
                     "archive multiplicity 3, log 1");
    free(t);
    /* an archive block that never ends */
    t = test_replace_first(data, 0, "\\\\\\@", "\\\\\\ ", &line);
    write_and_expect(hessfit_gaussian_log_read, "archive-open.log", t, HESSFIT_ERROR_TRUNCATED, 0, "archive block",
                     "archive without its terminator");
    free(t);
    garbage(hessfit_gaussian_log_read, "log");
    free(data);
}

int main(void)
{
    hessfit_molecule fchk, log;

    test_fchk(&fchk);
    test_log(&log);
    test_cross_checks(&fchk, &log);
    test_gzip(&fchk, &log);
    test_log_first_job();
    test_log_standard_orientation_and_hpmodes(&fchk, &log);
    test_bad_fchk();
    test_bad_log();
    hessfit_molecule_free(&fchk);
    hessfit_molecule_free(&log);
    printf("test_read_gaussian: all checks passed\n");
    return 0;
}
