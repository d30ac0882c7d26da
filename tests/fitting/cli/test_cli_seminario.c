/* `hessfit seminario` end to end: the built program (next to this test in the build's bin/) on the
 * Psi4 SN2 transition state (printed C-F and C-H bond estimates against q2mm's golden, to the
 * print precision) and on the nine rh-enamide Jaguar Hessians with the .mmo and the start .fld
 * (the written .fld read back: every line q2mm estimated equals its golden to the .fld's 4
 * decimals, the lines it kept keep the start value, every other line byte for byte the start
 * file's); exit codes 0 / 1 (failure naming the file) / 2 (usage on stderr). */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_seminario.h"
#include "hessfit_units.h"
#include "test_util.h"

#include "golden_json.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *hessfit;

/* Half a unit in the last printed place (plus rounding of the binary values themselves). */
#define HALF_ULP(decimals) (0.5 * pow(10.0, -(decimals)) * (1.0 + 1e-9) + 1e-12)

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- reading the output ------------------------------------------------------------------------ */

/* The next line of text after *pos (copied into line, at most size - 1 characters); 0 at the end. */
static int next_line(const char **pos, char *line, size_t size)
{
    const char *s = *pos, *nl;
    size_t n;
    if (*s == '\0')
        return 0;
    nl = strchr(s, '\n');
    n = nl ? (size_t)(nl - s) : strlen(s);
    snprintf(line, size, "%.*s", (int)(n < size ? n : size - 1), s);
    *pos = nl ? nl + 1 : s + n;
    return 1;
}

/* A term row of a single-structure run: "kind atoms elements value k k_mdyn k_au". */
typedef struct {
    char kind[16], atoms[40], elements[24];
    double value, k, k_mdyn, k_au;
} term_row;

/* The row of the term with these (1-based, as printed) atoms; 0 if none. */
static int find_term_row(const char *out, const char *atoms, term_row *row)
{
    char line[512];
    const char *pos = out;
    while (next_line(&pos, line, sizeof line)) {
        term_row t;
        if (sscanf(line, "%15s %39s %23s %lf %lf %lf %lf", t.kind, t.atoms, t.elements, &t.value, &t.k, &t.k_mdyn,
                   &t.k_au) == 7 &&
            (strcmp(t.kind, "bond") == 0 || strcmp(t.kind, "angle") == 0) && strcmp(t.atoms, atoms) == 0) {
            *row = t;
            return 1;
        }
    }
    return 0;
}

/* Rows that start with "bond " in a single-structure run. */
static int count_bond_rows(const char *out)
{
    char line[512];
    const char *pos = out;
    int n = 0;
    while (next_line(&pos, line, sizeof line))
        n += strncmp(line, "bond ", 5) == 0;
    return n;
}

/* A group row: "elements kind n used value [k k_mdyn k_au | - - -  note]"; returns the fields read
 * (8 with estimates, 5 when all estimates were <= 0), 0 if none. */
static int find_group_row(const char *out, const char *elements, const char *kind, int *n, int *used, double v[4])
{
    char line[512], e[24], k[16];
    const char *pos = out;
    while (next_line(&pos, line, sizeof line)) {
        int got = sscanf(line, "%23s %15s %d %d %lf %lf %lf %lf", e, k, n, used, &v[0], &v[1], &v[2], &v[3]);
        if (got >= 5 && strcmp(e, elements) == 0 && strcmp(k, kind) == 0)
            return got;
    }
    return 0;
}

/* A force-field line row: "line kind types n used value k k_mdyn k_au old_value old_k note";
 * fields read (11 with an estimate, 6 without), 0 if the line has no row. */
typedef struct {
    char kind[16], types[48], note[128];
    int n, used;
    double value, k, k_mdyn, k_au, old_value, old_k;
} line_row;

static int find_line_row(const char *out, int ff_line, line_row *row)
{
    char text[512];
    const char *pos = out;
    while (next_line(&pos, text, sizeof text)) {
        int l, got, consumed = 0;
        line_row t;
        memset(&t, 0, sizeof t);
        if (sscanf(text, "%d", &l) != 1 || l != ff_line)
            continue;
        got = sscanf(text, "%d %15s %47s %d %d %lf %lf %lf %lf %lf %lf %n", &l, t.kind, t.types, &t.n, &t.used,
                     &t.value, &t.k, &t.k_mdyn, &t.k_au, &t.old_value, &t.old_k, &consumed);
        if (got == 6) { /* "- - -" in place of the constants */
            char dash[3][4];
            CHECK(sscanf(text, "%*d %*s %*s %*d %*d %*f %3s %3s %3s %lf %lf %n", dash[0], dash[1], dash[2],
                         &t.old_value, &t.old_k, &consumed) == 5 &&
                      strcmp(dash[0], "-") == 0,
                  "line %d row: %s", ff_line, text);
        } else
            CHECK(got == 11, "line %d row: %s", ff_line, text);
        snprintf(t.note, sizeof t.note, "%s", text + consumed);
        *row = t;
        return got - 1;
    }
    return 0;
}

/* ---- SN2 transition state --------------------------------------------------------------------- */

/* The second element of a golden bond ("F" or "H"; the first is the carbon). */
static const char *second_element(const gj_value *bond)
{
    const gj_value *e = gj_array(bond, "elements");
    CHECK(e->n == 2 && e->items[0].type == GJ_STRING && e->items[1].type == GJ_STRING &&
              strcmp(e->items[0].string, "C") == 0,
          "golden bond elements");
    return e->items[1].string;
}

/* The printed bonds of one run against the golden (k_au; k_mdyn and k in the run's units). */
static void check_sn2_bonds(const test_run_result *r, const gj_value *golden_bonds, const hessfit_molecule *xyz, int q2mm,
                            int with_cf, double *max_mdyn, double *max_au, double *max_k)
{
    int n_checked = 0;
    for (size_t b = 0; b < golden_bonds->n; b++) {
        const gj_value *gb = &golden_bonds->items[b];
        int i = (int)gj_number(gb, "atom_i"), j = (int)gj_number(gb, "atom_j");
        const char *label = gj_string(gb, "label");
        double au = gj_number(gb, "legacy_force_constant_au"), mdyn = gj_number(gb, "legacy_force_constant_mdyn_a");
        double want_mdyn = q2mm ? mdyn : au * HESSFIT_HARTREE_PER_BOHR2_TO_MDYN_PER_A;
        /* k = half the spring constant in kcal/mol/A^2 */
        double want_k = q2mm ? mdyn * HESSFIT_Q2MM_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2
                             : 0.5 * au * HESSFIT_HARTREE_PER_BOHR2_TO_KCAL_PER_MOL_PER_A2;
        double dx = xyz->coords[3 * j] - xyz->coords[3 * i], dy = xyz->coords[3 * j + 1] - xyz->coords[3 * i + 1],
               dz = xyz->coords[3 * j + 2] - xyz->coords[3 * i + 2];
        char atoms[32], elements[24];
        term_row row;
        int is_cf = strcmp(second_element(gb), "F") == 0;
        snprintf(atoms, sizeof atoms, "%d-%d", i + 1, j + 1);
        snprintf(elements, sizeof elements, "C-%s", is_cf ? "F" : "H");
        if (is_cf && !with_cf) {
            CHECK(!find_term_row(r->out, atoms, &row), "C-F bond %s printed without --bond-tolerance", atoms);
            continue;
        }
        CHECK(find_term_row(r->out, atoms, &row), "no row for bond %s (%s)", atoms, label);
        CHECK(strcmp(row.kind, "bond") == 0 && strcmp(row.elements, elements) == 0, "bond %s: %s %s", atoms, row.kind,
              row.elements);
        CHECK(fabs(row.value - sqrt(dx * dx + dy * dy + dz * dz)) <= HALF_ULP(5), "%s: length %.5f vs %.8f", label,
              row.value, sqrt(dx * dx + dy * dy + dz * dz));
        CHECK(fabs(row.k_au - au) <= HALF_ULP(7), "%s: k_au %.7f vs golden %.10f", label, row.k_au, au);
        CHECK(fabs(row.k_mdyn - want_mdyn) <= HALF_ULP(5), "%s: k_mdyn %.5f vs golden %.8f", label, row.k_mdyn,
              want_mdyn);
        CHECK(fabs(row.k - want_k) <= HALF_ULP(4), "%s: k %.4f vs golden %.7f", label, row.k, want_k);
        CHECK((row.k_au < 0.0) == is_cf, "%s: the C-F bonds of the TS are negative with --ts keep (%g)", label,
              row.k_au);
        *max_mdyn = fmax(*max_mdyn, fabs(row.k_mdyn - want_mdyn));
        *max_au = fmax(*max_au, fabs(row.k_au - au));
        *max_k = fmax(*max_k, fabs(row.k - want_k));
        n_checked++;
    }
    CHECK(n_checked == (with_cf ? 5 : 3), "%d bonds checked", n_checked);
    CHECK(count_bond_rows(r->out) == n_checked, "%d bond rows printed, %d expected", count_bond_rows(r->out),
          n_checked);
}

static void test_sn2(void)
{
    char npy[1024], xyz[1024], args[4096];
    gj_value *g = gj_read_file(test_source_path("tests/data/goldens/sn2_reference.json"));
    const gj_value *bonds = gj_array(g, "bonds");
    hessfit_molecule geo;
    double max_mdyn = 0.0, max_au = 0.0, max_k = 0.0, mean_ch_au = 0.0, mean_ch_mdyn = 0.0, v[4];
    int n, used, n_ch = 0;
    test_run_result r;

    snprintf(npy, sizeof npy, "%s", test_source_path("examples/data/sn2/sn2-ts-hessian.npy"));
    snprintf(xyz, sizeof xyz, "%s", test_source_path("examples/data/sn2/sn2-ts-optimized.xyz"));
    HF_CALL(hessfit_xyz_molecule_read(xyz, &geo));
    CHECK(bonds->n == 5 && gj_number(gj_object(g, "metadata"), "dft_scaling") == HESSFIT_Q2MM_DFT_SCALING,
          "golden: %zu bonds", bonds->n);

    /* the plain command: CODATA units; bonds from radii at the default tolerance 1.3 miss the
     * 1.85 A C-F bonds of the TS (1.3 x (0.76 + 0.57) = 1.729 A), so only the three C-H print */
    snprintf(args, sizeof args, "seminario --hessian '%s' --xyz '%s'", npy, xyz);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "SN2 TS (CODATA, default tolerance)");
    test_expect_output(&r, "# 6 atoms, 3 bonds (perceived), 3 angles", "SN2 default");
    test_expect_output(&r, "method original, ts keep, scaling 0.963, CODATA units", "SN2 default options");
    check_sn2_bonds(&r, bonds, &geo, 0, 0, &max_mdyn, &max_au, &max_k);
    free(r.out);

    /* with the C-F bonds (1.4 x 1.33 = 1.862 A >= 1.85 A), CODATA and q2mm units */
    for (int q2mm = 0; q2mm < 2; q2mm++) {
        snprintf(args, sizeof args, "seminario --hessian '%s' --xyz '%s' --bond-tolerance 1.4%s", npy, xyz,
                 q2mm ? " --q2mm-units" : "");
        r = test_run_program(hessfit, args);
        test_expect_exit(&r, 0, NULL,
                         q2mm ? "SN2 TS --q2mm-units --bond-tolerance 1.4" : "SN2 TS --bond-tolerance 1.4");
        test_expect_output(&r, "# 6 atoms, 5 bonds (perceived), 10 angles", "SN2 with C-F");
        check_sn2_bonds(&r, bonds, &geo, q2mm, 1, &max_mdyn, &max_au, &max_k);
        /* per element: C-H the mean of the three, C-F none positive */
        CHECK(find_group_row(r.out, "C-F", "bond", &n, &used, v) == 5 && n == 2 && used == 0 &&
                  fabs(v[0] - 1.85) <= HALF_ULP(5),
              "C-F group row: %d %d %g", n, used, v[0]);
        CHECK(strstr(r.out, "(all estimates <= 0)") != NULL, "C-F group note");
        CHECK(find_group_row(r.out, "C-H", "bond", &n, &used, v) == 8 && n == 3 && used == 3, "C-H group row");
        if (q2mm) {
            for (size_t b = 0; b < bonds->n; b++)
                if (strcmp(second_element(&bonds->items[b]), "H") == 0) {
                    mean_ch_au += gj_number(&bonds->items[b], "legacy_force_constant_au") / 3.0;
                    mean_ch_mdyn += gj_number(&bonds->items[b], "legacy_force_constant_mdyn_a") / 3.0;
                    n_ch++;
                }
            CHECK(n_ch == 3 && fabs(v[2] - mean_ch_mdyn) <= HALF_ULP(5) && fabs(v[3] - mean_ch_au) <= HALF_ULP(7),
                  "C-H mean: %.5f %.7f vs golden %.8f %.10f", v[2], v[3], mean_ch_mdyn, mean_ch_au);
        }
        free(r.out);
    }
    printf("SN2 TS: 3 + 2 x 5 printed bonds vs q2mm's golden: max |dk_mdyn| %.2g mdyn/A, |dk_au| %.2g Hartree/Bohr^2, "
           "|dk| %.2g kcal/mol/A^2 (print steps 1e-5, 1e-7, 1e-4); C-F negative, C-H mean %.5f mdyn/A\n",
           max_mdyn, max_au, max_k, mean_ch_mdyn);
    hessfit_molecule_free(&geo);
    gj_free(g);
}

/* ---- rh-enamide: nine Jaguar Hessians, the .mmo and the start .fld ---------------------------- */

static const char *const rh_jaguar[9] = {
    "1ZDMPfromJCTCSI_loner1", "2DMPEConformation1fromJCTCSI_isomer1", "3DMPEConformation2fromJCTCSI_isomer2",
    "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4",
    "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6",
    "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};

/* " --hessian 'path'" for the structures in order[] (indices into rh_jaguar), appended to args. */
static void append_hessians(char *args, size_t size, const int *order, int n)
{
    for (int k = 0; k < n; k++) {
        char rel[200];
        size_t used = strlen(args);
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[order[k]]);
        CHECK(snprintf(args + used, size - used, " --hessian '%s'", test_source_path(rel)) < (int)(size - used),
              "arguments too long");
    }
}

/* The lines of a text file (newline stripped), exactly as in the file. */
static char **read_text_lines(const char *path, int *n_lines)
{
    FILE *f = fopen(path, "r");
    char **lines = NULL, *buf = NULL;
    size_t cap_buf = 0;
    ssize_t len;
    int n = 0, cap = 0;
    CHECK(f != NULL, "cannot open %s", path);
    while ((len = getline(&buf, &cap_buf, f)) >= 0) {
        if (len > 0 && buf[len - 1] == '\n')
            buf[--len] = '\0';
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            lines = realloc(lines, (size_t)cap * sizeof *lines);
            CHECK(lines != NULL, "out of memory");
        }
        lines[n] = malloc((size_t)len + 1);
        CHECK(lines[n] != NULL, "out of memory");
        memcpy(lines[n++], buf, (size_t)len + 1);
    }
    free(buf);
    fclose(f);
    *n_lines = n;
    return lines;
}

static void free_lines(char **lines, int n)
{
    for (int i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* Whitespace-separated fields of a line with the column where each ends; returns the count. */
static int fields(const char *line, char out[][32], int *ends, int max)
{
    int n = 0;
    for (const char *p = line; *p != '\0' && n < max;) {
        const char *s;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        s = p;
        while (*p != '\0' && *p != ' ' && *p != '\t')
            p++;
        snprintf(out[n], 32, "%.*s", (int)(p - s), s);
        ends[n++] = (int)(p - line);
    }
    return n;
}

/*
 * A parameter line the run rewrote: the same fields in the same columns (right-aligned numbers
 * keep their end columns), only the equilibrium and the constant (the two numbers after the type
 * columns) possibly different.
 */
static void check_rewritten_line(const char *start, const char *out, int n_types, int line)
{
    char fs[12][32], fo[12][32];
    int es[12], eo[12], ns = fields(start, fs, es, 12), no = fields(out, fo, eo, 12);
    CHECK(strlen(start) == strlen(out), "line %d: length %zu vs %zu:\n  %s\n  %s", line, strlen(out), strlen(start),
          out, start);
    CHECK(ns == no && ns >= n_types + 3, "line %d: %d vs %d fields", line, no, ns);
    for (int k = 0; k < ns; k++) {
        CHECK(es[k] == eo[k], "line %d: field %d ends in column %d, not %d as in the start file", line, k + 1, eo[k],
              es[k]);
        if (k != n_types + 1 && k != n_types + 2)
            CHECK(strcmp(fs[k], fo[k]) == 0, "line %d: field %d '%s' became '%s'", line, k + 1, fs[k], fo[k]);
    }
}

static void test_rh_enamide(void)
{
    static const int mmo_order[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    char fld[1024], mm3[1024], mmo[1024], out[512], args[16384];
    gj_value *g = gj_read_file(test_source_path("tests/data/goldens/rh_enamide_reference.json"));
    const gj_value *par = gj_object(g, "parameters");
    const char *k_mdyn_key[2] = {"bond_force_constants_mdyn_a", "angle_force_constants_mdyn_a_rad2"};
    const char *k_au_key[2] = {"bond_force_constants_au", "angle_force_constants_au"};
    const char *eq_key[2] = {"bond_equilibria_angstrom", "angle_equilibria_degrees"};
    const double mm3_factor[2] = {HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2,
                                  HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2};
    hessfit_forcefield start, written, q2mm_start;
    hessfit_molecule_list list;
    char **start_lines, **out_lines;
    int n_start, n_out, in_golden[4096] = {0}, n_estimated = 0, n_kept = 0, n_same = 0, n_rewritten = 0;
    double max_fld_k = 0.0, max_fld_eq = 0.0, max_row_mdyn = 0.0, max_row_au = 0.0, max_row_eq = 0.0;
    test_run_result r;

    snprintf(fld, sizeof fld, "%s", test_source_path("examples/data/rh-enamide/ff/rh_hyd_enamide_start.fld"));
    snprintf(mm3, sizeof mm3, "%s", test_source_path("examples/data/rh-enamide/ff/mm3.fld"));
    snprintf(mmo, sizeof mmo, "%s", test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"));
    snprintf(out, sizeof out, "%s/out.fld", test_temp_dir());

    /* the Hessians go in the .mmo's structure order: its titles are the Jaguar names, shortened */
    HF_CALL(hessfit_mmo_read(mmo, &list));
    CHECK(list.n == 9, ".mmo holds %d structures", list.n);
    for (int m = 0; m < 9; m++) {
        char squeezed[128];
        int q = 0;
        for (const char *c = list.items[m].name; *c != '\0' && q < (int)sizeof squeezed - 1; c++)
            if (isalnum((unsigned char)*c) || *c == '-')
                squeezed[q++] = *c;
        squeezed[q] = '\0';
        CHECK(q > 5 && strncmp(rh_jaguar[mmo_order[m]], squeezed, strlen(squeezed)) == 0,
              ".mmo structure %d '%s' is not %s", m + 1, list.items[m].name, rh_jaguar[mmo_order[m]]);
    }
    hessfit_molecule_list_free(&list);

    snprintf(args, sizeof args, "seminario --ff '%s' --structures '%s' --q2mm-units --ts keep --out '%s'", fld, mmo,
             out);
    append_hessians(args, sizeof args, mmo_order, 9);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "rh-enamide --ff start.fld --out");
    CHECK(r.err[0] == '\0', "stderr not empty: %s", r.err);
    test_expect_output(&r, "method original, ts keep, scaling 0.963, q2mm units", "rh-enamide options");
    test_expect_output(&r, "# 9 structures from", "rh-enamide header");
    test_expect_output(&r, "1550 bond and angle terms on 73 force-field lines", "rh-enamide term count");
    test_expect_output(&r, "# 30 parameters changed, 43 lines left alone", "rh-enamide summary");
    CHECK(strstr(r.out, "# wrote ") != NULL && strstr(r.out, out) != NULL, "no '# wrote %s'", out);

    HF_CALL(hessfit_fld_read(fld, &start));
    HF_CALL(hessfit_fld_read(out, &written));
    HF_CALL(hessfit_fld_read(mm3, &q2mm_start)); /* the .fld q2mm's golden run started from */
    CHECK(written.n_params == start.n_params && written.n_lines == start.n_lines, "written .fld: %d params, %d lines",
          written.n_params, written.n_lines);

    for (int kind = 0; kind < 2; kind++) {
        const gj_value *gm = gj_object(par, k_mdyn_key[kind]);
        for (size_t q = 0; q < gm->n; q++) {
            const char *key = gm->keys[q];
            int line = atoi(key), ps = hessfit_forcefield_param_at_line(&start, line),
                pw = hessfit_forcefield_param_at_line(&written, line), pq = hessfit_forcefield_param_at_line(&q2mm_start, line);
            double want_mdyn = gm->items[q].number, want_au = gj_number(gj_object(par, k_au_key[kind]), key),
                   want_eq = gj_number(gj_object(par, eq_key[kind]), key);
            double got_mdyn, got_eq;
            line_row row;
            int fields_read = find_line_row(r.out, line, &row), estimated;
            CHECK(line >= 1860 && line <= 1909 && line < (int)(sizeof in_golden / sizeof in_golden[0]),
                  "golden line %d outside 1860-1909", line);
            CHECK(kind == 0 ? line <= 1867 : line >= 1868, "golden %s line %d", kind ? "angle" : "bond", line);
            in_golden[line] = 1;
            CHECK(ps >= 0 && pw >= 0 && pq >= 0 && (int)start.params[ps].kind == kind &&
                      (int)written.params[pw].kind == kind,
                  "line %d: no %s parameter", line, kind ? "angle" : "bond");
            got_mdyn = written.params[pw].values[0] / mm3_factor[kind];
            got_eq = written.params[pw].values[1];
            /* q2mm estimated the line unless it kept its start value: then the golden constant is
             * mm3.fld's (q2mm's start) and the run prints no estimate for it */
            estimated = fabs(q2mm_start.params[pq].values[0] / mm3_factor[kind] - want_mdyn) > 0.5e-4;
            if (estimated) {
                CHECK(fields_read == 10 && row.used == row.n && row.n >= 9, "line %d: row with %d of %d used (%d fields)",
                      line, row.used, row.n, fields_read);
                CHECK(fabs(got_mdyn - want_mdyn) <= HALF_ULP(4), "line %d: written k %.6f vs golden %.8f", line,
                      got_mdyn, want_mdyn);
                CHECK(fabs(got_eq - want_eq) <= HALF_ULP(4), "line %d: written equilibrium %.6f vs golden %.8f", line,
                      got_eq, want_eq);
                CHECK(fabs(row.k_mdyn - want_mdyn) <= HALF_ULP(5) && fabs(row.k_au - want_au) <= HALF_ULP(7) &&
                          fabs(row.value - want_eq) <= HALF_ULP(5),
                      "line %d: printed %.5f %.7f %.5f vs golden %.8f %.10f %.8f", line, row.k_mdyn, row.k_au,
                      row.value, want_mdyn, want_au, want_eq);
                max_fld_k = fmax(max_fld_k, fabs(got_mdyn - want_mdyn));
                max_fld_eq = fmax(max_fld_eq, fabs(got_eq - want_eq));
                max_row_mdyn = fmax(max_row_mdyn, fabs(row.k_mdyn - want_mdyn));
                max_row_au = fmax(max_row_au, fabs(row.k_au - want_au));
                max_row_eq = fmax(max_row_eq, fabs(row.value - want_eq));
                n_estimated++;
            } else {
                /* the start file's constant stays (bit for bit: the same text) */
                CHECK(written.params[pw].values[0] == start.params[ps].values[0], "line %d: kept k %.6f vs start %.6f",
                      line, got_mdyn, start.params[ps].values[0] / mm3_factor[kind]);
                if (fields_read > 0) { /* terms, but every estimate <= 0: the equilibrium is still their mean */
                    CHECK(fields_read == 5 && row.used == 0 && row.n == 9 &&
                              strstr(row.note, "all estimates <= 0: constant kept") != NULL,
                          "line %d: kept line row (%d fields, %d used): %s", line, fields_read, row.used, row.note);
                    CHECK(fabs(got_eq - want_eq) <= HALF_ULP(4) && fabs(row.value - want_eq) <= HALF_ULP(5),
                          "line %d: equilibrium %.6f / %.5f vs golden %.8f", line, got_eq, row.value, want_eq);
                    printf("  line %d: all 9 estimates <= 0: k stays %.4f (start), r0 %.4f (golden %.6f)\n", line,
                           got_mdyn, got_eq, want_eq);
                } else { /* no term uses the line: all of it stays */
                    CHECK(got_eq == start.params[ps].values[1], "line %d: equilibrium changed", line);
                    printf("  line %d: no term of the nine structures: stays %.4f, %.4f\n", line, got_eq, got_mdyn);
                }
                n_kept++;
            }
            CHECK(fields_read == 0 || fabs(row.old_k - start.params[ps].values[0]) <= HALF_ULP(4),
                  "line %d: printed old k %.4f vs start %.6f", line, row.old_k, start.params[ps].values[0]);
        }
    }
    CHECK(n_estimated == 29 && n_kept == 2, "%d lines estimated, %d kept (expected 29 and 2: 1866, 1886)",
          n_estimated, n_kept);

    /* the text: every line outside the golden ones byte for byte the start file's; the golden ones
     * in the start file's columns */
    start_lines = read_text_lines(fld, &n_start);
    out_lines = read_text_lines(out, &n_out);
    CHECK(n_start == n_out && n_start == start.n_lines, "written .fld has %d lines, start %d", n_out, n_start);
    for (int l = 0; l < n_start; l++) {
        int line = l + 1;
        if (line < (int)(sizeof in_golden / sizeof in_golden[0]) && in_golden[line]) {
            int pi = hessfit_forcefield_param_at_line(&start, line);
            check_rewritten_line(start_lines[l], out_lines[l], start.params[pi].n_types, line);
            n_rewritten += strcmp(start_lines[l], out_lines[l]) != 0;
        } else {
            CHECK(strcmp(start_lines[l], out_lines[l]) == 0, "line %d changed:\n  start: %s\n  out:   %s", line,
                  start_lines[l], out_lines[l]);
            n_same++;
        }
    }
    CHECK(n_rewritten == 30, "%d golden lines differ from the start file, expected 30", n_rewritten);
    printf("rh-enamide: %d lines estimated, written .fld vs q2mm: max |dk| %.2g mdyn/A (or mdyn*A/rad^2), "
           "|dr0/dtheta0| %.2g (4 decimals: 5e-5); printed rows: |dk_mdyn| %.2g, |dk_au| %.2g, |dvalue| %.2g; "
           "%d other lines byte-identical to the start file\n",
           n_estimated, max_fld_k, max_fld_eq, max_row_mdyn, max_row_au, max_row_eq, n_same);
    free_lines(start_lines, n_start);
    free_lines(out_lines, n_out);
    hessfit_forcefield_free(&start);
    hessfit_forcefield_free(&written);
    hessfit_forcefield_free(&q2mm_start);
    free(r.out);
    CHECK(remove(out) == 0, "remove %s", out);
    gj_free(g);
}

/* ---- failures ------------------------------------------------------------------------------------ */

static void test_failures(void)
{
    char fld[1024], mmo[1024], npy[1024], xyz[1024], ch3f[1024], mol2[1024], out[512], args[16384];
    static const int all[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    static const int swapped[9] = {3, 1, 2, 0, 4, 5, 6, 7, 8}; /* 62-atom DuPHOS first */
    test_run_result r;

    snprintf(fld, sizeof fld, "%s", test_source_path("examples/data/rh-enamide/ff/rh_hyd_enamide_start.fld"));
    snprintf(mmo, sizeof mmo, "%s", test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"));
    snprintf(npy, sizeof npy, "%s", test_source_path("examples/data/sn2/sn2-ts-hessian.npy"));
    snprintf(xyz, sizeof xyz, "%s", test_source_path("examples/data/sn2/sn2-ts-optimized.xyz"));
    snprintf(ch3f, sizeof ch3f, "%s", test_source_path("examples/data/sn2/ch3f-optimized.xyz"));
    snprintf(mol2, sizeof mol2, "%s", test_source_path("tests/data/ethane/GS.mol2"));

    /* usage errors: exit 2, the reason and the usage on stderr, nothing on stdout */
    static const char *const usage_cases[][2] = {
        {"seminario", "--hessian FILE is required"},
        {"seminario --hessian a.fchk --frobnicate 1", "unknown option '--frobnicate'"},
        {"seminario stray --hessian a.fchk", "unexpected argument 'stray'"},
        {"seminario --hessian", "option '--hessian' needs a value"},
        {"seminario --hessian a.fchk --method fancy", "--method is original or modified, not 'fancy'"},
        {"seminario --hessian a.fchk --ts bogus", "--ts is keep, replace or abs, not 'bogus'"},
        {"seminario --hessian a.fchk --scaling 0", "--scaling needs a number in (0, 10], not '0'"},
        {"seminario --hessian a.fchk --scaling nan", "--scaling needs a number in (0, 10], not 'nan'"},
        {"seminario --hessian a.fchk --scaling 11", "--scaling needs a number in (0, 10], not '11'"},
        {"seminario --hessian a.fchk --scaling 1x", "--scaling needs a number in (0, 10], not '1x'"},
        {"seminario --hessian a.fchk --bond-tolerance 4", "--bond-tolerance needs a number in (0, 3], not '4'"},
        {"seminario --hessian a.fchk --bond-tolerance -1", "--bond-tolerance needs a number in (0, 3], not '-1'"},
        {"seminario --ff x.fld --hessian a.fchk", "--ff and --structures go together"},
        {"seminario --structures y.mmo --hessian a.fchk", "--ff and --structures go together"},
        {"seminario --ff x.fld --structures y.mmo --hessian a.in --xyz b.xyz", "--xyz is for a single structure"},
        {"seminario --ff x.frcmod --structures y.mmo --hessian a.in", "--ff must be an MM3* .fld file, not 'x.frcmod'"},
        {"seminario --ff x.fld --structures y.mol2 --hessian a.in", "--structures must be a MacroModel .mmo file"},
        {"seminario --hessian a.fchk --out o.fld", "--out needs --ff and --structures"},
        {"seminario --hessian a.fchk --all-lines", "--all-lines needs --ff and --structures"},
        {"seminario --hessian a.fchk --hessian b.fchk", "several --hessian files need --ff and --structures"},
    };
    for (size_t k = 0; k < sizeof usage_cases / sizeof usage_cases[0]; k++) {
        r = test_run_program(hessfit, usage_cases[k][0]);
        test_expect_exit(&r, 2, usage_cases[k][1], usage_cases[k][0]);
        CHECK(strstr(r.err, "usage: hessfit seminario") != NULL, "%s: no usage text on stderr", usage_cases[k][0]);
        CHECK(r.out_len == 0, "%s: stdout not empty: %s", usage_cases[k][0], r.out);
        free(r.out);
    }
    for (int h = 0; h < 2; h++) {
        r = test_run_program(hessfit, h ? "seminario -h" : "seminario --hessian a.fchk --help");
        test_expect_exit(&r, 0, NULL, h ? "-h" : "--help");
        CHECK(r.err[0] == '\0' && strstr(r.out, "usage: hessfit seminario") != NULL &&
                  strstr(r.out, "--q2mm-units") != NULL && strstr(r.out, "--structures FILE") != NULL,
              "help text on stdout");
        free(r.out);
    }

    /* files: exit 1 naming the file */
    snprintf(args, sizeof args, "seminario --hessian '%s/missing.fchk'", test_temp_dir());
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "missing.fchk", "missing Hessian file");
    CHECK(strstr(r.err, test_temp_dir()) != NULL && strstr(r.err, "usage:") == NULL, "message: %s", r.err);
    free(r.out);
    snprintf(args, sizeof args, "seminario --hessian '%s'", npy);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "a .npy Hessian needs --xyz", ".npy without --xyz");
    free(r.out);
    snprintf(args, sizeof args, "seminario --hessian '%s' --xyz '%s'", npy, ch3f);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "sn2-ts-hessian.npy", ".npy with another molecule's .xyz");
    free(r.out);
    snprintf(args, sizeof args, "seminario --hessian '%s'", mol2);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "GS.mol2: holds no Hessian", "structure without a Hessian");
    free(r.out);
    snprintf(args, sizeof args, "seminario --hessian '%s/data.bin' --xyz '%s'", test_temp_dir(), xyz);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "data.bin", "Hessian of unknown format");
    free(r.out);

    /* --structures runs: nothing written on any failure */
    snprintf(out, sizeof out, "%s/never.fld", test_temp_dir());
    for (int n = 8; n <= 10; n += 2) { /* one Hessian short, one too many */
        snprintf(args, sizeof args, "seminario --ff '%s' --structures '%s' --q2mm-units --out '%s'", fld, mmo, out);
        append_hessians(args, sizeof args, all, n == 8 ? 8 : 9);
        if (n == 10)
            append_hessians(args, sizeof args, all, 1);
        r = test_run_program(hessfit, args);
        test_expect_exit(&r, 1,
                         n == 8 ? "holds 9 structures, but 8 Hessian files were given"
                                : "holds 9 structures, but 10 Hessian files were given",
                         n == 8 ? "8 Hessians for 9 structures" : "10 Hessians for 9 structures");
        CHECK(strstr(r.err, "rh_enamide_training_set.mmo.gz") != NULL, "message names the .mmo: %s", r.err);
        CHECK(!file_exists(out), "%s written after a failure", out);
        free(r.out);
    }
    snprintf(args, sizeof args, "seminario --ff '%s' --structures '%s' --out '%s'", fld, mmo, out);
    append_hessians(args, sizeof args, swapped, 9);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3.01.in.gz: 62 atoms, but structure 1 of",
                     "Hessians out of the .mmo's order");
    CHECK(!file_exists(out), "%s written after a failure", out);
    free(r.out);
    snprintf(args, sizeof args, "seminario --ff '%s' --structures '%s' --out '%s' --hessian '%s/missing.in'", fld,
             mmo, out, test_temp_dir());
    append_hessians(args, sizeof args, all, 8);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "missing.in", "a missing Hessian of nine");
    CHECK(!file_exists(out), "%s written after a failure", out);
    free(r.out);

    /* --out into a directory that does not exist: exit 1 naming it, no file anywhere */
    snprintf(out, sizeof out, "%s/no-such-dir/out.fld", test_temp_dir());
    snprintf(args, sizeof args, "seminario --ff '%s' --structures '%s' --q2mm-units --out '%s'", fld, mmo, out);
    append_hessians(args, sizeof args, all, 9);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "no-such-dir/out.fld", "--out into a missing directory");
    CHECK(!file_exists(out), "%s exists", out);
    *strrchr(out, '/') = '\0';
    CHECK(!file_exists(out), "%s was created", out);
    free(r.out);
}

int main(int argc, char **argv)
{
    (void)argc;
    hessfit = test_program_path(argv[0], "hessfit");

    test_sn2();
    test_rh_enamide();
    test_failures();

    /* a failed atomic write would leave its temporary file here */
    CHECK(test_temp_check_only(NULL, 0) == 0, "%s not empty at the end (leftover files)", test_temp_dir());
    printf("test_cli_seminario: all checks passed\n");
    return 0;
}
