/* Jaguar readers on the nine rh-enamide structures (q2mm examples): the .in Hessian rebuilds
 * every frequency the matching .out prints (monoisotopic masses, translations and rotations
 * projected out), the .out geometry and normal modes agree with the .in, and truncated or mutated
 * copies (written to a mkdtemp directory) fail with a message that names file:line. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_molecule.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define JAGUAR_DIR "examples/data/rh-enamide/jaguar/"

typedef struct {
    const char *stem;
    int n_atoms;
    int n_c, n_h; /* every structure also has 2 N, 1 O, 2 P and 1 Rh */
} structure;

static const structure structures[9] = {
    {"1ZDMPfromJCTCSI_loner1", 36, 10, 20},
    {"2DMPEConformation1fromJCTCSI_isomer1", 38, 10, 22},
    {"3DMPEConformation2fromJCTCSI_isomer2", 38, 10, 22},
    {"4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", 62, 22, 34},
    {"5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4", 62, 22, 34},
    {"6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", 58, 18, 34},
    {"7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6", 58, 18, 34},
    {"8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", 58, 18, 34},
    {"9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8", 58, 18, 34},
};

/* Split s in place at blanks; up to max tokens stored, the count returned. */
static int split_blanks(char *s, char **tok, int max)
{
    int n = 0;
    for (char *t = strtok(s, " \t"); t != NULL; t = strtok(NULL, " \t"))
        if (n < max)
            tok[n++] = t;
    return n;
}

/* ---- text -------------------------------------------------------------------------------------- */

/* Offset of the line (from a line start at or after from) that equals line exactly. */
static size_t find_line(const char *text, size_t from, const char *line)
{
    int first = test_line_of(text, from) + (from > 0 && text[from - 1] != '\n');
    return test_line_offset(text, test_find_line(text, first, line, TEST_LINE_EXACT));
}

/* ---- frequencies from a Hessian --------------------------------------------------------------- */

typedef struct {
    int n3, n_keep;
    double *all;       /* 3N frequencies, eigenvalue order */
    double *vectors;   /* (3N)^2 mass-weighted eigenvectors, row j for all[j] */
    int *keep;         /* n_keep indices into all: the vibrations, ascending */
    double max_external; /* largest |frequency| among the dropped external modes */
} vib_result;

static void vib_free(vib_result *v)
{
    free(v->all);
    free(v->vectors);
    free(v->keep);
}

static const double *sort_key;
static int by_abs(const void *a, const void *b)
{
    double x = fabs(sort_key[*(const int *)a]), y = fabs(sort_key[*(const int *)b]);
    return x < y ? -1 : x > y;
}
static int by_value(const void *a, const void *b)
{
    double x = sort_key[*(const int *)a], y = sort_key[*(const int *)b];
    return x < y ? -1 : x > y;
}

/* Projected analysis, the 6 modes nearest zero dropped (the rotations and translations). */
static void vibrations(const hessfit_molecule *m, hessfit_mass_kind kind, vib_result *v)
{
    int n3 = 3 * m->n_atoms, n_ext = -1;
    int *order = malloc((size_t)n3 * sizeof *order);
    double *masses = malloc((size_t)m->n_atoms * sizeof *masses);
    CHECK(order != NULL && masses != NULL, "no memory");
    v->n3 = n3;
    v->all = malloc((size_t)n3 * sizeof *v->all);
    v->vectors = malloc((size_t)n3 * (size_t)n3 * sizeof *v->vectors);
    CHECK(v->all != NULL && v->vectors != NULL, "no memory");
    HF_CALL(hessfit_element_masses(m->atomic_numbers, m->n_atoms, kind, masses));
    HF_CALL(hessfit_vib_analyse(m->hessian, masses, m->coords, m->n_atoms, hessfit_frequency_factor_hartree_bohr2_amu(),
                           HESSFIT_VIB_PROJECT_EXTERNAL, v->all, v->vectors, &n_ext));
    CHECK(n_ext == 6, "%s: %d external modes", m->name, n_ext);
    for (int i = 0; i < n3; i++)
        order[i] = i;
    sort_key = v->all;
    qsort(order, (size_t)n3, sizeof *order, by_abs);
    v->max_external = fabs(v->all[order[5]]);
    v->n_keep = n3 - 6;
    v->keep = malloc((size_t)v->n_keep * sizeof *v->keep);
    CHECK(v->keep != NULL, "no memory");
    memcpy(v->keep, order + 6, (size_t)v->n_keep * sizeof *v->keep);
    qsort(v->keep, (size_t)v->n_keep, sizeof *v->keep, by_value);
    free(order);
    free(masses);
}

/* |cos| of the angle between a and b. */
static double abs_cosine(const double *a, const double *b, int n)
{
    double ab = 0.0, aa = 0.0, bb = 0.0;
    for (int i = 0; i < n; i++) {
        ab += a[i] * b[i];
        aa += a[i] * a[i];
        bb += b[i] * b[i];
    }
    return fabs(ab) / sqrt(aa * bb);
}

/* The &hess layout of a real file, checked on the text itself: blocks start at columns 1, 6, 11,
 * ...; block c lists rows c..3N in order, row r with min(r - c + 1, 5, 3N - c + 1) values. */
static void check_hess_layout(const char *text, int n3, const char *stem)
{
    const char *p = strstr(text, "\n&hess\n");
    int col = 1 - 5, row = 0, blocks = 0, values = 0;
    CHECK(p != NULL, "%s: no &hess", stem);
    p += 7;
    while (strncmp(p, "&\n", 2) != 0) {
        const char *end = strchr(p, '\n');
        char line[256], *tok[8];
        int n;
        CHECK(end != NULL && end - p < (long)sizeof line, "%s: &hess line", stem);
        memcpy(line, p, (size_t)(end - p));
        line[end - p] = '\0';
        n = split_blanks(line, tok, 8);
        if (n == 1) {
            CHECK(row == (blocks ? n3 : 0) && atoi(tok[0]) == col + 5, "%s: block header %s after row %d", stem,
                  tok[0], row);
            col = atoi(tok[0]);
            row = col - 1;
            blocks++;
        } else {
            int width = n3 - col + 1 < 5 ? n3 - col + 1 : 5, want;
            row++;
            want = row - col + 1 < width ? row - col + 1 : width;
            CHECK(atoi(tok[0]) == row && n - 1 == want, "%s: block %d: row %s with %d values, expected row %d with %d",
                  stem, col, tok[0], n - 1, row, want);
            values += n - 1;
        }
        p = end + 1;
    }
    CHECK(row == n3 && col + 5 > n3 && blocks == (n3 + 4) / 5 && values == n3 * (n3 + 1) / 2,
          "%s: %d blocks, %d values", stem, blocks, values);
}

/* ---- the nine real structures ------------------------------------------------------------------ */

static void test_real_structures(void)
{
    int total_atoms = 0, modes_compared = 0, n_freq = 0;
    double sum_abs = 0.0, sum_signed = 0.0, min_norm = 1e300, max_norm = 0.0;
    double worst_freq = 0.0, worst_avg_miss = 1e300, worst_geom = 0.0, worst_external = 0.0;
    double worst_cos_cart = 1.0, worst_cos_mw = 1.0, best_cos_mw = 0.0;
    printf("structure                                        N  max|dnu| (cm^-1)  avg-mass miss  imag\n");
    for (int s = 0; s < 9; s++) {
        const structure *st = &structures[s];
        char rel[256];
        char *in_path, *out_path;
        hessfit_molecule qin, qout;
        vib_result mono, avg;
        double max_diff = 0.0, avg_miss = 0.0, geom = 0.0;
        int counts[HESSFIT_MAX_ATOMIC_NUMBER + 1] = {0}, imag_calc = 0, imag_out = 0, n3;

        snprintf(rel, sizeof rel, JAGUAR_DIR "%s.01.in.gz", st->stem);
        in_path = test_source_path_dup(rel);
        snprintf(rel, sizeof rel, JAGUAR_DIR "%s.out.gz", st->stem);
        out_path = test_source_path_dup(rel);
        HF_CALL(hessfit_jaguar_in_read(in_path, &qin));
        HF_CALL(hessfit_jaguar_out_read(out_path, &qout));

        /* .in: atoms, elements, charge, a complete symmetric Hessian */
        CHECK(qin.n_atoms == st->n_atoms, "%s: %d atoms, expected %d", st->stem, qin.n_atoms, st->n_atoms);
        total_atoms += qin.n_atoms;
        n3 = 3 * qin.n_atoms;
        for (int a = 0; a < qin.n_atoms; a++)
            counts[qin.atomic_numbers[a]]++;
        CHECK(counts[6] == st->n_c && counts[1] == st->n_h && counts[7] == 2 && counts[8] == 1 && counts[15] == 2 &&
                  counts[45] == 1,
              "%s: formula C%d H%d N%d O%d P%d Rh%d", st->stem, counts[6], counts[1], counts[7], counts[8],
              counts[15], counts[45]);
        CHECK(qin.atomic_numbers[0] == 45, "%s: atom 1 is Rh1", st->stem);
        CHECK(qin.has_charge && qin.charge == 1 && qin.multiplicity == 0, "%s: &gen molchg=1, no multip", st->stem);
        CHECK(qin.hessian != NULL && qin.n_modes == 0, "%s: Hessian read", st->stem);
        for (int i = 0; i < n3; i++)
            for (int j = 0; j < i; j++)
                CHECK(qin.hessian[i * n3 + j] == qin.hessian[j * n3 + i], "%s: H(%d,%d) not symmetric", st->stem,
                      i + 1, j + 1);
        CHECK(strstr(qin.name, st->stem) == qin.name, "%s: name '%s'", st->stem, qin.name);
        {
            size_t size;
            char *text = test_load_gunzip(in_path, &size);
            check_hess_layout(text, n3, st->stem);
            free(text);
        }

        /* .out: the same atoms at the same place, the SCF energy, 3N - 6 frequencies with modes */
        CHECK(qout.n_atoms == qin.n_atoms, "%s: .out has %d atoms", st->stem, qout.n_atoms);
        for (int a = 0; a < qin.n_atoms; a++) {
            CHECK(qout.atomic_numbers[a] == qin.atomic_numbers[a], "%s: element of atom %d", st->stem, a + 1);
            for (int k = 0; k < 3; k++)
                geom = fmax(geom, fabs(qout.coords[3 * a + k] - qin.coords[3 * a + k]));
        }
        CHECK(geom <= 1e-12, "%s: .out geometry differs from .in by %g A", st->stem, geom);
        worst_geom = fmax(worst_geom, geom);
        CHECK(strcmp(qout.name, st->stem) == 0, "%s: .out job name '%s'", st->stem, qout.name);
        CHECK(qout.has_energy && qout.energy < -1000.0 && qout.has_charge && qout.charge == 1 &&
                  qout.multiplicity == 1,
              "%s: energy %g, charge %d, multiplicity %d", st->stem, qout.energy, qout.charge, qout.multiplicity);
        CHECK(qout.n_modes == n3 - 6 && qout.modes != NULL, "%s: %d modes printed", st->stem, qout.n_modes);
        CHECK(qout.hessian == NULL, "%s: .out has no Hessian", st->stem);

        /* frequencies rebuilt from the .in Hessian against the printed ones */
        vibrations(&qin, HESSFIT_MASS_MONOISOTOPIC, &mono);
        vibrations(&qin, HESSFIT_MASS_AVERAGE, &avg);
        for (int k = 0; k < mono.n_keep; k++) {
            double f = mono.all[mono.keep[k]], fa = avg.all[avg.keep[k]];
            max_diff = fmax(max_diff, fabs(f - qout.frequencies[k]));
            sum_abs += fabs(f - qout.frequencies[k]);
            sum_signed += f - qout.frequencies[k];
            n_freq++;
            avg_miss = fmax(avg_miss, fabs(fa - qout.frequencies[k]));
            imag_calc += f < 0.0;
            imag_out += qout.frequencies[k] < 0.0;
        }
        printf("%-46s %3d  %.5f           %.4f         %d\n", st->stem, qin.n_atoms, max_diff, avg_miss, imag_calc);
        /* the .out prints 2 decimals (rounding <= 0.005) and &hess 7 significant digits, which moves
         * a frequency by a few 1e-4 cm^-1 more */
        CHECK(max_diff <= 0.006, "%s: frequencies differ from the .out by %.5f cm^-1", st->stem, max_diff);
        CHECK(avg_miss > 0.1, "%s: average masses reproduce the .out to %.5f cm^-1 (the check cannot fail)", st->stem,
              avg_miss);
        CHECK(imag_calc == 1 && imag_out == 1, "%s: %d imaginary modes computed, %d printed", st->stem, imag_calc,
              imag_out);
        CHECK(mono.max_external < 0.5, "%s: projected external modes up to %g cm^-1", st->stem, mono.max_external);
        worst_freq = fmax(worst_freq, max_diff);
        worst_avg_miss = fmin(worst_avg_miss, avg_miss);
        worst_external = fmax(worst_external, mono.max_external);

        /* printed modes against the eigenvectors, for modes at least 2 cm^-1 from their neighbours:
         * Cartesian displacements x = e / sqrt(m) and the mass-weighted e itself */
        {
            double *masses = malloc((size_t)qin.n_atoms * sizeof *masses), *cart = malloc((size_t)n3 * sizeof *cart);
            CHECK(masses != NULL && cart != NULL, "no memory");
            HF_CALL(hessfit_element_masses(qin.atomic_numbers, qin.n_atoms, HESSFIT_MASS_MONOISOTOPIC, masses));
            for (int k = 0; k < mono.n_keep; k++) {
                const double *e = mono.vectors + (size_t)mono.keep[k] * (size_t)n3;
                const double *printed = qout.modes + (size_t)k * (size_t)n3;
                double f = mono.all[mono.keep[k]], gap = 1e300, c_cart, c_mw;
                if (k > 0)
                    gap = fmin(gap, f - mono.all[mono.keep[k - 1]]);
                if (k + 1 < mono.n_keep)
                    gap = fmin(gap, mono.all[mono.keep[k + 1]] - f);
                if (gap < 2.0)
                    continue;
                for (int i = 0; i < n3; i++)
                    cart[i] = e[i] / sqrt(masses[i / 3]);
                c_cart = abs_cosine(cart, printed, n3);
                {
                    double nrm = 0.0;
                    for (int i = 0; i < n3; i++)
                        nrm += printed[i] * printed[i];
                    min_norm = fmin(min_norm, sqrt(nrm));
                    max_norm = fmax(max_norm, sqrt(nrm));
                }
                c_mw = abs_cosine(e, printed, n3);
                worst_cos_cart = fmin(worst_cos_cart, c_cart);
                worst_cos_mw = fmin(worst_cos_mw, c_mw);
                best_cos_mw = fmax(best_cos_mw, c_mw);
                modes_compared++;
            }
            free(masses);
            free(cart);
        }
        vib_free(&mono);
        vib_free(&avg);
        hessfit_molecule_free(&qin);
        hessfit_molecule_free(&qout);
        free(in_path);
        free(out_path);
    }
    CHECK(total_atoms == 468, "%d atoms in all", total_atoms);
    printf("  468 atoms, %d frequencies: max |nu(Hessian) - nu(.out)| = %.5f cm^-1, mean |diff| %.5f, mean diff "
           "%.5f\n", n_freq, worst_freq, sum_abs / n_freq, sum_signed / n_freq);
    /* rounding to 2 decimals alone gives a mean |diff| of 0.0025 and a mean diff of 0 */
    CHECK(n_freq == 1350 && sum_abs / n_freq < 0.003 && fabs(sum_signed / n_freq) < 0.0005,
          "frequency differences are not rounding: mean |diff| %.5f, mean %.5f", sum_abs / n_freq,
          sum_signed / n_freq);
    printf("  average masses miss the .out by at least %.4f cm^-1 (max per structure)\n", worst_avg_miss);
    printf("  .out geometry vs .in: max %.3g A; projected external modes below %.3g cm^-1\n", worst_geom,
           worst_external);
    printf("  normal modes (%d at least 2 cm^-1 from their neighbours): printed vs Cartesian displacements "
           "e/sqrt(m): 1 - min|cos| = %.2e; vs mass-weighted e: min|cos| %.4f (max %.4f); printed norms %.4f..%.4f\n",
           modes_compared, 1.0 - worst_cos_cart, worst_cos_mw, best_cos_mw, min_norm, max_norm);
    CHECK(modes_compared > 900, "only %d modes compared", modes_compared);
    CHECK(1.0 - worst_cos_cart <= 1e-6, "printed modes are not the Cartesian displacements: |cos| %.8f",
          worst_cos_cart);
    CHECK(worst_cos_mw < 0.99, "mass-weighted vectors match too (the check cannot tell them apart)");
}


/* ---- bad input -------------------------------------------------------------------------------- */

static const char *first_in(void)
{
    static char rel[256];
    snprintf(rel, sizeof rel, JAGUAR_DIR "%s.01.in.gz", structures[0].stem);
    return rel;
}

static const char *first_out(void)
{
    static char rel[256];
    snprintf(rel, sizeof rel, JAGUAR_DIR "%s.out.gz", structures[0].stem);
    return rel;
}

/* Parse text as a Jaguar input written to bad.in; must fail with want (HESSFIT_SUCCESS: any), naming
 * file:line and phrase, the output zeroed. */
static void bad_in(const char *text, hessfit_status want, const char *phrase, const char *what)
{
    test_expect_read_failure(hessfit_jaguar_in_read, test_write_text("bad.in", text), want, TEST_ANY_LINE, phrase, NULL,
                             what);
}

/* The same, the message naming the line (1-based) of offset off of text. */
static void bad_in_at(const char *text, size_t off, hessfit_status want, const char *phrase, const char *what)
{
    test_expect_read_failure(hessfit_jaguar_in_read, test_write_text("bad.in", text), want, test_line_of(text, off), phrase,
                             NULL, what);
}

static void bad_out(const char *text, hessfit_status want, const char *phrase, const char *what)
{
    test_expect_read_failure(hessfit_jaguar_out_read, test_write_text("bad.out", text), want, TEST_ANY_LINE, phrase, NULL,
                             what);
}

/* Truncated copies of the real .in: every cut inside a section fails, naming file:line. */
static void test_in_truncations(const char *text, size_t size)
{
    size_t hess = find_line(text, 0, "&hess"), hess_end = find_line(text, hess, "&");
    size_t cuts[80];
    int n_cuts = 0, n_hess = 0;
    for (int i = 0; i < 60; i++) {
        size_t p = 1 + (size - 3) * (size_t)i / 59; /* 1 .. size - 2, mid-line cuts only */
        while (text[p - 1] == '\n')
            p--;
        cuts[n_cuts++] = p;
    }
    cuts[n_cuts++] = hess + 6;                          /* just after "&hess\n" */
    cuts[n_cuts++] = find_line(text, hess, "   6");     /* just before a column header */
    cuts[n_cuts++] = find_line(text, hess, "   6") + 3; /* inside it */
    cuts[n_cuts++] = hess_end;                          /* all values, no closing '&' */
    cuts[n_cuts++] = (hess + hess_end) / 2;             /* somewhere in a value */
    cuts[n_cuts++] = find_line(text, 0, "&zmat") + 40;  /* inside &zmat */
    cuts[n_cuts++] = size - 2;                          /* without the last '&' */
    for (int i = 0; i < n_cuts; i++) {
        char what[64];
        snprintf(what, sizeof what, "cut at byte %zu of %zu", cuts[i], size);
        test_set_quiet(!(i >= 60 || i % 15 == 0));
        test_expect_read_failure(hessfit_jaguar_in_read, test_write_file("cut.in", text, cuts[i]), HESSFIT_SUCCESS, TEST_ANY_LINE,
                                 NULL, NULL, what);
        test_set_quiet(0);
        n_hess += cuts[i] > hess && cuts[i] <= hess_end;
    }
    printf("  %d truncated copies of the .in (%d inside &hess) rejected\n", n_cuts, n_hess);
    CHECK(n_hess >= 8, "only %d cuts inside &hess", n_hess);
}

static void test_in_mutations(const char *text)
{
    size_t hess = find_line(text, 0, "&hess"), zmat = find_line(text, 0, "&zmat");
    size_t gen_end = find_line(text, 0, "&"), hess_end = find_line(text, hess, "&");
    char *t;
    hessfit_molecule ok, moved;

    /* a missing column block: columns 6..10 */
    t = test_splice(text, find_line(text, hess, "   6"), find_line(text, hess, "  11"), "");
    bad_in(t, HESSFIT_ERROR_TRUNCATED, "element (row 6, column 6)", "missing column block");
    free(t);
    /* a duplicated row */
    {
        size_t row = find_line(text, hess, "   3  1.914429E-02  3.062400E-03  2.588757E-01");
        t = test_splice(text, row, row, "   3  1.914429E-02  3.062400E-03  2.588757E-01\n");
        bad_in(t, HESSFIT_ERROR_FORMAT, "(row 3, column 1) given a second time", "duplicated row");
        free(t);
    }
    /* a row missing one value (the triangle loses H(4,4)) */
    t = test_replace_first(text, hess, "1.494900E-02  6.217331E-01", "1.494900E-02", NULL);
    bad_in(t, HESSFIT_ERROR_TRUNCATED, "element (row 4, column 4)", "short row");
    free(t);
    /* a value above the diagonal */
    t = test_replace_first(text, hess, "2.472421E-01\n", "2.472421E-01  1.0E-02\n", NULL);
    bad_in(t, HESSFIT_ERROR_FORMAT, "above the diagonal", "value above the diagonal");
    free(t);
    /* six values in a row */
    t = test_replace_first(text, hess + 2000, "\n", " 1.0 1.0 1.0 1.0 1.0 1.0\n", NULL);
    bad_in(t, HESSFIT_SUCCESS, NULL, "six values in a row");
    free(t);
    /* NaN, Inf and garbage values */
    t = test_replace_first(text, hess, "2.944868E-01", "NaN", NULL);
    bad_in(t, HESSFIT_ERROR_NONFINITE, ":7700:", "NaN in &hess");
    free(t);
    t = test_replace_first(text, hess, "2.944868E-01", "-inf", NULL);
    bad_in(t, HESSFIT_ERROR_NONFINITE, ":7700:", "Inf in &hess");
    free(t);
    t = test_replace_first(text, hess, "2.944868E-01", "2.94x868E-01", NULL);
    bad_in(t, HESSFIT_ERROR_PARSE, ":7700:", "garbage value in &hess");
    free(t);
    /* huge and out-of-range indices */
    t = test_splice(text, find_line(text, hess, "   6"), find_line(text, hess, "   6") + 4, "   99999999999");
    bad_in(t, HESSFIT_ERROR_PARSE, "column index", "huge column index");
    free(t);
    /* one past the last coordinate (3N + 1), 0 and negative, on the line that holds them */
    t = test_splice(text, find_line(text, hess, "   6"), find_line(text, hess, "   6") + 4, " 109");
    bad_in_at(t, find_line(text, hess, "   6"), HESSFIT_ERROR_PARSE, "column index '109' is outside [1, 108]",
              "column index 3N + 1");
    free(t);
    t = test_splice(text, find_line(text, hess, "   6"), find_line(text, hess, "   6") + 4, "   0");
    bad_in_at(t, find_line(text, hess, "   6"), HESSFIT_ERROR_PARSE, "column index '0' is outside [1, 108]",
              "column index 0");
    free(t);
    t = test_replace_first(text, hess, "\n 108 ", "\n 109 ", NULL);
    bad_in_at(t, (size_t)(strstr(t + hess, "\n 109 ") - t) + 1, HESSFIT_ERROR_PARSE, "row index '109' is outside [1, 108]",
              "row index 3N + 1");
    free(t);
    t = test_replace_first(text, hess, "\n   2 ", "\n   0 ", NULL);
    bad_in_at(t, (size_t)(strstr(t + hess, "\n   0 ") - t) + 1, HESSFIT_ERROR_PARSE, "row index '0' is outside [1, 108]",
              "row index 0");
    free(t);
    t = test_replace_first(text, hess, "\n   2 ", "\n   -2 ", NULL);
    bad_in_at(t, (size_t)(strstr(t + hess, "\n   -2 ") - t) + 1, HESSFIT_ERROR_PARSE, "row index '-2' is outside",
              "negative row index");
    free(t);
    t = test_splice(text, hess + 6, hess + 6, "   2  1.0\n");
    bad_in(t, HESSFIT_ERROR_FORMAT, "before the first column header", "row before a header");
    free(t);
    /* an empty &hess section */
    t = test_splice(text, hess + 6, hess_end, "");
    bad_in(t, HESSFIT_ERROR_FORMAT, "holds no values", "empty &hess");
    free(t);
    /* element labels */
    t = test_replace_first(text, zmat, " Rh1 ", " Qq1 ", NULL);
    bad_in(t, HESSFIT_ERROR_UNKNOWN_ELEMENT, ":15:", "unknown element label Qq1");
    free(t);
    t = test_replace_first(text, zmat, " Rh1 ", " 1Rh ", NULL);
    bad_in(t, HESSFIT_ERROR_UNKNOWN_ELEMENT, "'1Rh'", "label without element");
    free(t);
    t = test_replace_first(text, zmat, " Rh1 ", " Ho1 ", NULL);
    bad_in(t, HESSFIT_ERROR_UNKNOWN_ELEMENT, "Ho (Z = 67)", "element without data (Ho)");
    free(t);
    t = test_replace_first(text, zmat, " Rh1 ", " Du1 ", NULL);
    bad_in(t, HESSFIT_ERROR_UNSUPPORTED, "dummy", "dummy atom");
    free(t);
    /* coordinates */
    t = test_replace_first(text, zmat, " 2.2154500000\n", " nan\n", NULL);
    bad_in(t, HESSFIT_ERROR_NONFINITE, ":16:", "NaN coordinate");
    free(t);
    t = test_replace_first(text, zmat, " 2.2154500000\n", " 2.2154500000 C3 1.5\n", NULL);
    bad_in(t, HESSFIT_ERROR_PARSE, "Z-matrix", "Z-matrix line");
    free(t);
    t = test_replace_first(text, zmat, " 2.2154500000\n", "\n", NULL);
    bad_in(t, HESSFIT_ERROR_PARSE, ":16:", "coordinate missing");
    free(t);
    /* one atom less: the Hessian is then too large for &zmat */
    t = test_splice(text,
                    find_line(text, zmat, " H36             2.0785000000            -0.3765000000            -2.9386000000"),
                    find_line(text, zmat, "&"), "");
    bad_in(t, HESSFIT_ERROR_PARSE, "[1, 105]", "atom missing from &zmat");
    free(t);
    /* &gen */
    t = test_splice(text, gen_end, gen_end, "iunit=0\n");
    bad_in(t, HESSFIT_ERROR_UNSUPPORTED, "iunit", "iunit=0 (bohr)");
    free(t);
    t = test_splice(text, gen_end, gen_end, "multip=\n");
    bad_in(t, HESSFIT_ERROR_FORMAT, "multip", "multip without value");
    free(t);
    t = test_replace_first(text, 0, "molchg=1", "molchg=one", NULL);
    bad_in(t, HESSFIT_ERROR_PARSE, "molchg", "molchg not a number");
    free(t);
    /* section structure */
    t = test_splice(text, find_line(text, zmat, "&"), find_line(text, zmat, "&") + 2, "");
    bad_in(t, HESSFIT_ERROR_FORMAT, "before &zmat", "&zmat not closed");
    free(t);
    t = test_splice(text, zmat, zmat + 6, "&zmatrix\n");
    bad_in(t, HESSFIT_ERROR_FORMAT, "no &zmat", "no &zmat section");
    free(t);
    t = test_splice(text, hess, hess, "&zmat\n C1 0 0 0\n&\n");
    bad_in(t, HESSFIT_ERROR_FORMAT, "second &zmat", "two &zmat sections");
    free(t);
    t = test_splice(text, 0, 0, "&\n");
    bad_in(t, HESSFIT_ERROR_FORMAT, "outside a section", "stray '&'");
    free(t);
    /* empty, garbage, binary */
    bad_in("", HESSFIT_ERROR_FORMAT, "no &zmat", "empty file");
    bad_in("this is not a Jaguar input\n1 2 3\n", HESSFIT_ERROR_FORMAT, "no &zmat", "garbage text");
    {
        static const char binary[] = "&zmat\n C1 0 0 0\n\x01\x02\x00\xff&\n";
        test_expect_read_failure(hessfit_jaguar_in_read, test_write_file("bad.in", binary, sizeof binary - 1),
                                 HESSFIT_ERROR_PARSE, TEST_ANY_LINE, "NUL", NULL, "binary garbage");
    }
    {
        hessfit_molecule m;
        const char *path = test_temp_path("does-not-exist.in");
        CHECK(hessfit_jaguar_in_read(path, &m) == HESSFIT_ERROR_IO && strstr(hessfit_last_error(), path) != NULL,
              "missing file: %s", hessfit_last_error());
    }

    /* good variants: the &hess section before &zmat, '$' delimiters, keywords with spaces, and the
     * element rule for two-letter labels (HE5 is helium, as in Jaguar) */
    {
        const char *path;
        char *section = malloc(hess_end + 2 - hess + 1), *tmp;
        int n3 = 3 * structures[0].n_atoms;
        memcpy(section, text + hess, hess_end + 2 - hess);
        section[hess_end + 2 - hess] = '\0';
        tmp = test_splice(text, hess, hess_end + 2, "");
        t = test_splice(tmp, gen_end + 2, gen_end + 2, section);
        free(tmp);
        free(section);
        tmp = test_replace_first(t, 0, "molchg=1", "molchg = -2 , multip = 3", NULL);
        free(t);
        t = test_replace_first(tmp, 0, "&zmat\n", "$zmat\n", NULL);
        free(tmp);
        tmp = test_replace_first(t, find_line(t, 0, "$zmat"), "\n&\n", "\n$\n", NULL);
        free(t);
        t = test_replace_first(tmp, 0, " H36 ", " HE36 ", NULL);
        free(tmp);
        path = test_write_text("bad.in", t);
        HF_CALL(hessfit_jaguar_in_read(path, &moved));
        HF_CALL(hessfit_jaguar_in_read(test_source_path(first_in()), &ok));
        CHECK(moved.n_atoms == ok.n_atoms && moved.charge == -2 && moved.multiplicity == 3 &&
                  moved.atomic_numbers[35] == 2 && ok.atomic_numbers[35] == 1,
              "reordered file: %d atoms, charge %d, multiplicity %d, atom 36 Z = %d", moved.n_atoms, moved.charge,
              moved.multiplicity, moved.atomic_numbers[35]);
        CHECK(memcmp(moved.hessian, ok.hessian, (size_t)n3 * (size_t)n3 * sizeof *ok.hessian) == 0,
              "the Hessian changes when &hess comes first");
        CHECK(ok.hessian[0] == 2.944868E-01 && ok.hessian[1] == -1.904832E-02 && ok.hessian[n3] == -1.904832E-02 &&
                  ok.hessian[6 * n3 + 5] == -1.888617E-01 && ok.hessian[(size_t)n3 * (size_t)n3 - 1] == 7.813888E-02 &&
                  ok.hessian[107 * n3 + 105] == 7.561788E-02,
              "Hessian values as printed");
        CHECK(ok.coords[3 * 35] == 2.0785 && ok.coords[3 * 35 + 1] == -0.3765 && ok.coords[3 * 35 + 2] == -2.9386,
              "coordinates of H36 as printed");
        printf("  good variants: &hess before &zmat, '$' delimiters, 'molchg = -2 , multip = 3', HE36 = helium\n");
        /* &hess before &zmat: its row indices are checked against 3N once &zmat is read; 3N + 1 fails */
        tmp = test_replace_first(t, 0, "\n 108 ", "\n 109 ", NULL);
        bad_in_at(tmp, (size_t)(strstr(tmp, "\n 109 ") - tmp) + 1, HESSFIT_ERROR_COUNT,
                  "&hess row 109 is beyond 3N = 108 (36 atoms in &zmat)", "&hess first, row index 3N + 1");
        free(tmp);
        hessfit_molecule_free(&moved);
        hessfit_molecule_free(&ok);
        free(t);
    }
}

static void test_out_bad(const char *text, size_t size)
{
    size_t freq = find_line(text, 0, "  start of program freq"), last_end = 0;
    size_t table = strstr(text + freq, "  frequencies ") - text;
    char *t;
    int n = 0;
    const char *p = text;
    while ((p = strstr(p + 1, "  end of program ")) != NULL)
        last_end = (size_t)(p - text);
    /* cuts: inside each program, the geometry, the frequency tables; after the last "end of program"
     * only timing lines follow, and a cut between two programs reads as a shorter job */
    {
        size_t cuts[] = {30,
                         find_line(text, 0, " Input geometry:") + 200,
                         find_line(text, 0, "  start of program scf") + 500,
                         table + 5,
                         table + 3000,
                         (table + last_end) / 2,
                         last_end - 200,
                         last_end + 3};
        for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
            char what[64];
            snprintf(what, sizeof what, ".out cut at byte %zu of %zu", cuts[i], size);
            test_expect_read_failure(hessfit_jaguar_out_read, test_write_file("cut.out", text, cuts[i]), HESSFIT_SUCCESS,
                                     TEST_ANY_LINE, NULL, NULL, what);
            n++;
        }
    }
    t = test_replace_first(text, table, "    H9       X ", "    H8       X ", NULL);
    bad_out(t, HESSFIT_ERROR_FORMAT, "'H9 X' is expected", "mode row with the wrong label");
    free(t);
    t = test_replace_first(text, table, "    H9       Y ", "    H9       Z ", NULL);
    bad_out(t, HESSFIT_ERROR_FORMAT, "'H9 Y' is expected", "mode row with the wrong axis");
    free(t);
    t = test_replace_first(text, table, "-705.89", "-7o5.89", NULL);
    bad_out(t, HESSFIT_ERROR_PARSE, "frequency", "frequency not a number");
    free(t);
    {
        char long_value[700];
        memset(long_value, ' ', sizeof long_value);
        memcpy(long_value + sizeof long_value - 8, "-705.89", 8);
        t = test_replace_first(text, table, " -705.89", long_value, NULL);
        bad_out(t, HESSFIT_ERROR_PARSE, "longer than", "over-long frequency line");
        free(t);
    }
    t = test_replace_first(text, table, "-0.00331", "NaN", NULL);
    bad_out(t, HESSFIT_ERROR_NONFINITE, "displacement", "NaN displacement");
    free(t);
    t = test_replace_first(text, table, "-0.00331  0.00014", "-0.00331", NULL);
    bad_out(t, HESSFIT_ERROR_FORMAT, "row with 5 values", "mode row with 5 values");
    free(t);
    {
        size_t row = find_line(text, table, "    H36      Z    -0.00266 -0.01464 -0.02504 -0.01273  0.04929 -0.05754");
        t = test_splice(text, row, strchr(text + row, '\n') - text + 1, "");
        bad_out(t, HESSFIT_ERROR_COUNT, "3N = 108", "a mode row missing");
        free(t);
    }
    {
        size_t second = (size_t)(strstr(text + table + 10, "  vibration #") - text);
        size_t third = (size_t)(strstr(text + second + 10, "  vibration #") - text);
        t = test_splice(text, second, third, "");
        bad_out(t, HESSFIT_ERROR_COUNT, "102 frequencies announced, 96 printed", "a frequency table missing");
        free(t);
    }
    t = test_replace_first(text, find_line(text, 0, " Input geometry:"), "angstroms", "parsecs", NULL);
    bad_out(t, HESSFIT_ERROR_FORMAT, "geometry unit", "unknown geometry unit");
    free(t);
    t = test_replace_first(text, find_line(text, 0, " Input geometry:"), "  Rh1 ", "  Qq1 ", NULL);
    bad_out(t, HESSFIT_ERROR_UNKNOWN_ELEMENT, "Qq1", "unknown element in geometry");
    free(t);
    t = test_replace_first(text, 0, "  end of program scf", "  end of program scg", NULL);
    bad_out(t, HESSFIT_ERROR_FORMAT, "end of program scg", "mismatched program markers");
    free(t);
    t = test_splice(text, find_line(text, 0, " Input geometry:"), find_line(text, 0, " Input geometry:") + 2, " X");
    bad_out(t, HESSFIT_ERROR_FORMAT, "frequency table before any geometry", "no geometry block");
    free(t);
    bad_out("", HESSFIT_ERROR_FORMAT, "no geometry", "empty .out");
    bad_out("garbage\n\x7f\x7e\n", HESSFIT_ERROR_FORMAT, "no geometry", "garbage .out");
    /* a bohr geometry is converted */
    {
        hessfit_molecule a, b;
        const char *path;
        char *t2;
        t = test_replace_first(text, find_line(text, 0, " Input geometry:"), "angstroms", "bohrs", NULL);
        t2 = test_replace_first(t, find_line(t, 0, " Input geometry:"), "2.2154500000", "4.1865937428", NULL);
        path = test_write_text("bad.out", t2);
        HF_CALL(hessfit_jaguar_out_read(path, &a));
        HF_CALL(hessfit_jaguar_out_read(test_source_path(first_out()), &b));
        CHECK(fabs(a.coords[5] - 4.1865937428 * HESSFIT_BOHR_TO_ANGSTROM) < 1e-15 && a.coords[5] != b.coords[5] &&
                  fabs(a.coords[5] - b.coords[5]) < 1e-9,
              "bohr geometry: %.12f vs %.12f", a.coords[5], b.coords[5]);
        CHECK(fabs(b.energy - -1369.88293508102) < 1e-11 && b.frequencies[0] == -705.89 &&
                  b.frequencies[101] == 3587.52 && b.modes[0] == -0.00331 && b.modes[101 * 108 + 107] == 0.00001,
              "values of the first .out as printed");
        hessfit_molecule_free(&a);
        hessfit_molecule_free(&b);
        free(t);
        free(t2);
    }
    printf("  %d truncated copies of the .out rejected\n", n);
}

/* Truncated gzip streams fail in the line reader, naming file:line. */
static void test_truncated_gz(void)
{
    size_t n;
    char *raw = test_load_file(test_source_path(first_in()), &n);
    CHECK(n > 0, "empty %s", first_in());
    test_expect_read_failure(hessfit_jaguar_in_read, test_write_file("cut.in.gz", raw, n / 2), HESSFIT_ERROR_TRUNCATED,
                             TEST_ANY_LINE, "compressed", NULL, "truncated .in.gz");
    test_expect_read_failure(hessfit_jaguar_in_read, test_write_file("cut.in.gz", raw, 100), HESSFIT_ERROR_TRUNCATED,
                             TEST_ANY_LINE, "compressed", NULL, "truncated .in.gz (100 B)");
    free(raw);
    raw = test_load_file(test_source_path(first_out()), &n);
    CHECK(n > 0, "empty %s", first_out());
    test_expect_read_failure(hessfit_jaguar_out_read, test_write_file("cut.out.gz", raw, n - 20), HESSFIT_ERROR_TRUNCATED,
                             TEST_ANY_LINE, "compressed", NULL, "truncated .out.gz");
    free(raw);
}

int main(void)
{
    test_real_structures();
    {
        size_t size;
        char *text = test_load_gunzip(test_source_path(first_in()), &size);
        test_in_truncations(text, size);
        test_in_mutations(text);
        free(text);
        text = test_load_gunzip(test_source_path(first_out()), &size);
        test_out_bad(text, size);
        free(text);
    }
    test_truncated_gz();

    printf("test_read_jaguar: all checks passed\n");
    return 0;
}
