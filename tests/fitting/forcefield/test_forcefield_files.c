/*
 * Force-field files: MacroModel MM3* .fld read + write-back and AMBER frcmod read + write, on the
 * real files of the rh-enamide example (examples/data/rh-enamide/ff, 1913 lines each) and q2mm's
 * frcmod samples (tests/data/goldens), plus a hessfit-written frcmod with a DIHE series.
 *
 * .fld: parameter counts against an independent scan of the raw text and against the numbers
 * measured once (186 stretch, 529 bend, 911 torsion, 4 out-of-plane, 36 vdW, 18 substructures,
 * 25 equivalences); spot values with their conversions checked against the raw line text (bond
 * k = field * 71.96631, bend k = field * 71.94 exactly); the Rh substructure's bonds on lines
 * 1860-1867 and bends from 1868; a byte-identical write of every file read unchanged (plain, gzip
 * and CRLF copies); two changed values -> exactly those two lines and fields change and read back;
 * start.fld vs seminario.fld: parameters that differ are on exactly the lines whose text differs.
 * frcmod: read, write, re-read -> identical parameters; a second write is byte-identical; an MM3
 * main-table force field written as frcmod reads back identical.
 * Bad input: truncations at many cut points, non-numeric fields, NaN, unknown section markers,
 * garbage, empty files, values too wide to write back -> an error with file:line (or the parameter),
 * no crash, and no output file left behind by a failed write.
 */
#define _POSIX_C_SOURCE 200809L

#include "hessfit_forcefield.h"
#include "hessfit_units.h"
#include "test_util.h"

#include <ctype.h>
#include <string.h>
#include <unistd.h>

#define RH_FF "examples/data/rh-enamide/ff/"

/* ---- small file helpers ----------------------------------------------------------------------------- */

/* Split a copy of text at "\n" (the last line may lack one). */
static int split_lines(const char *text, size_t n, char ***out)
{
    char *copy = malloc(n + 1);
    char **lines = malloc((n + 2) * sizeof *lines);
    int count = 0;
    size_t start = 0;
    CHECK(copy != NULL && lines != NULL, "no memory");
    memcpy(copy, text, n);
    copy[n] = '\0';
    for (size_t i = 0; i <= n; i++)
        if (i == n || copy[i] == '\n') {
            if (i == n && start == n)
                break;
            copy[i] = '\0';
            lines[count++] = copy + start;
            start = i + 1;
        }
    *out = lines;
    return count;
}

static void free_lines(char **lines)
{
    if (lines != NULL)
        free(lines[0]);
    free(lines);
}

typedef hessfit_status (*reader_fn)(const char *, hessfit_forcefield *);

/* data written to name must fail to read (with want unless want is HESSFIT_SUCCESS), naming file:line
 * and holding want_text (if not NULL); the output is left zeroed. */
static void expect_read_failure(reader_fn reader, const char *name, const char *data, size_t n, hessfit_status want,
                                const char *want_text, int quiet)
{
    const char *path = test_write_file(name, data, n);
    hessfit_forcefield ff;
    memset(&ff, 0x5a, sizeof ff);
    test_set_quiet(quiet);
    test_expect_file_error(reader(path, &ff), want, path, TEST_ANY_LINE, want_text, NULL, name);
    test_set_quiet(0);
    CHECK(ff.n_params == 0 && ff.params == NULL && ff.lines == NULL && ff.path == NULL, "%s: output not zeroed", name);
    unlink(path);
}

/* A copy of text with line L (1-based) replaced by repl (NULL: deleted) or, with insert, repl
 * inserted before line L; *out_n its length. */
static char *edit_line(const char *text, int L, const char *repl, int insert, size_t *out_n)
{
    char line[1024];
    char *out;
    CHECK(snprintf(line, sizeof line, "%s\n", repl != NULL ? repl : "") < (int)sizeof line, "line too long");
    out = test_replace_lines(text, L, insert ? L - 1 : L, repl != NULL ? line : "");
    *out_n = strlen(out);
    return out;
}

/* ---- .fld -------------------------------------------------------------------------------------------- */

/* An independent count of the modelled lines of a .fld: table lines ' '/'a' + code 1 2 4 5 with
 * something in the type columns, after the first "-2"; vdW lines between "-6" and "END". */
static void scan_fld_counts(char **lines, int n, int counts[HESSFIT_NUM_PARAM_KINDS])
{
    int tables = 0, vdw = 0;
    memset(counts, 0, HESSFIT_NUM_PARAM_KINDS * sizeof(int));
    for (int i = 0; i < n; i++) {
        const char *s = lines[i];
        size_t len = strlen(s);
        int blank_types = 1;
        if (strncmp(s, "-2", 2) == 0)
            tables = 1;
        if (strncmp(s, "-6", 2) == 0) {
            vdw = 1;
            continue;
        }
        if (vdw) {
            if (strstr(s, "END OF NONBONDED") != NULL)
                vdw = 0;
            else if (len > 3 && s[0] == ' ' && s[1] == ' ' && s[2] != ' ')
                counts[4]++;
            continue;
        }
        if (!tables || len < 23 || (s[0] != ' ' && s[0] != 'a'))
            continue;
        for (size_t c = 2; c < 23; c++)
            if (s[c] != ' ')
                blank_types = 0;
        if (blank_types)
            continue;
        switch (s[1]) {
        case '1': counts[0]++; break;
        case '2': counts[1]++; break;
        case '4': counts[2]++; break;
        case '5': counts[3]++; break;
        case '3': counts[HESSFIT_PARAM_STRETCH_BEND]++; break;
        default: break;
        }
    }
}

static double field(const char *line, int start, int end)
{
    char buf[32];
    size_t len = strlen(line);
    CHECK((size_t)end <= len, "line too short for field [%d, %d): '%s'", start, end, line);
    memcpy(buf, line + start, (size_t)(end - start));
    buf[end - start] = '\0';
    return strtod(buf, NULL);
}

static const hessfit_ff_param *param_at(const hessfit_forcefield *ff, int line)
{
    int i = hessfit_forcefield_param_at_line(ff, line);
    CHECK(i >= 0, "no parameter read from line %d", line);
    return &ff->params[i];
}

static void check_types(const hessfit_ff_param *p, int n, const char *a, const char *b, const char *c, const char *d)
{
    const char *want[4] = {a, b, c, d};
    CHECK(p->n_types == n, "line %d: %d types, expected %d", p->line, p->n_types, n);
    for (int k = 0; k < n; k++)
        CHECK(strcmp(p->types[k], want[k]) == 0, "line %d: type %d is '%s', expected '%s'", p->line, k + 1,
              p->types[k], want[k]);
}

static void test_fld_read(void)
{
    const char *path = test_source_path_dup(RH_FF "mm3.fld");
    hessfit_forcefield ff;
    size_t n;
    char *text = test_load_file(path, &n);
    char **raw;
    int n_raw = split_lines(text, n, &raw), counts[HESSFIT_NUM_PARAM_KINDS] = {0}, scan[HESSFIT_NUM_PARAM_KINDS];
    const hessfit_ff_param *p;
    HF_CALL(hessfit_fld_read(path, &ff));
    CHECK(ff.format == HESSFIT_FF_MM3_FLD && ff.n_lines == 1913 && n_raw == 1913, "%d lines", ff.n_lines);
    for (int i = 0; i < ff.n_params; i++) {
        const hessfit_ff_param *q = &ff.params[i];
        static const char code[HESSFIT_NUM_PARAM_KINDS] = {'1', '2', '4', '5', 0, 0, '3'};
        CHECK(q->line >= 1 && q->line <= ff.n_lines, "parameter %d line %d", i, q->line);
        counts[q->kind]++;
        /* cross-check: the interaction code in column 2 of the parameter's own line */
        if (q->kind != HESSFIT_PARAM_VDW)
            CHECK(raw[q->line - 1][1] == code[q->kind], "parameter %d (%s) on line %d: '%.30s'", i,
                  hessfit_param_kind_name(q->kind), q->line, raw[q->line - 1]);
        CHECK(hessfit_forcefield_param_at_line(&ff, q->line) == i, "two parameters on line %d", q->line);
    }
    scan_fld_counts(raw, n_raw, scan);
    printf("mm3.fld: %d parameters: %d stretch, %d bend, %d torsion, %d out-of-plane, %d vdW, %d stretch-bend; %d "
           "substructures, %d equivalences\n",
           ff.n_params, counts[0], counts[1], counts[2], counts[3], counts[4], counts[HESSFIT_PARAM_STRETCH_BEND],
           ff.n_substructures, ff.n_equivalences);
    for (int k = 0; k < HESSFIT_NUM_PARAM_KINDS; k++)
        CHECK(counts[k] == scan[k], "kind %d: reader %d, raw scan %d", k, counts[k], scan[k]);
    CHECK(counts[0] == 186 && counts[1] == 529 && counts[2] == 911 && counts[3] == 4 && counts[4] == 36 &&
              counts[HESSFIT_PARAM_STRETCH_BEND] == 6,
          "counts changed");
    CHECK(ff.n_substructures == 18 && ff.n_equivalences == 25, "substructures %d, equivalences %d",
          ff.n_substructures, ff.n_equivalences);

    /* Main-table stretch, line 60: " 1  C3 - C3   1.5177  4.4900 ..." */
    p = param_at(&ff, 60);
    CHECK(p->kind == HESSFIT_PARAM_BOND && p->substructure == -1 && p->n_values == 3, "line 60");
    check_types(p, 2, "C3", "C3", NULL, NULL);
    CHECK(p->values[0] == field(raw[59], 34, 44) * HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2 &&
              p->values[0] == 4.49 * 71.96631,
          "line 60 k %.17g", p->values[0]);
    CHECK(p->values[1] == 1.5177, "line 60 r0 %.17g", p->values[1]);
    CHECK(strcmp(p->label, "(O=C-)C(sp3)-C(sp3)") == 0, "line 60 label '%s'", p->label);
    /* The bond moment (field 3): line 73 -1.0100 D; blank on substructure line 1129 (0) */
    p = param_at(&ff, 73);
    CHECK(p->kind == HESSFIT_PARAM_BOND && p->n_values == 3 && p->values[2] == -1.01, "line 73 mu %.17g", p->values[2]);
    p = param_at(&ff, 1129);
    CHECK(p->kind == HESSFIT_PARAM_BOND && p->substructure >= 0 && p->n_values == 3 && p->values[2] == 0.0 &&
              p->values[1] == 1.3887,
          "line 1129 (blank moment)");
    /* Stretch-bend, line 438: " 3  00 * C0 * 00  0.1300" -> k_sb 0.13 mdyn/rad (kept in the file's unit) */
    p = param_at(&ff, 438);
    check_types(p, 3, "*", "C0", "*", NULL);
    CHECK(p->kind == HESSFIT_PARAM_STRETCH_BEND && p->n_values == 1 && p->substructure == -1 &&
              p->values[0] == 0.13 && p->bond_marks[0] == '*' &&
              p->bond_marks[1] == '*',
          "line 438: %.17g", p->values[0]);
    /* Bend, line 173 */
    p = param_at(&ff, 173);
    check_types(p, 3, "H1", "C3", "H1", NULL);
    CHECK(p->kind == HESSFIT_PARAM_ANGLE && p->values[0] == field(raw[172], 34, 44) * 71.94 && p->values[0] == 0.55 * 71.94 &&
              p->values[1] == 109.47,
          "line 173: %.17g %.17g", p->values[0], p->values[1]);
    /* Torsion, line 448: V1 V2 V3 = 0.1850 0.1700 0.5200 -> {V1/2, 0, 1}, {V2/2, 180, 2}, {V3/2, 0, 3} */
    p = param_at(&ff, 448);
    check_types(p, 4, "C3", "C3", "C3", "C3");
    {
        double want[9] = {0.185 / 2, 0, 1, 0.17 / 2, 180, 2, 0.52 / 2, 0, 3};
        CHECK(p->kind == HESSFIT_PARAM_TORSION && p->n_values == 9, "line 448");
        for (int k = 0; k < 9; k++)
            CHECK(p->values[k] == want[k], "line 448 value %d: %.17g vs %.17g", k, p->values[k], want[k]);
    }
    /* Out-of-plane, line 1022: "5  C2 * O2 * 00 * 00  0.0000  0.8000" */
    p = param_at(&ff, 1022);
    check_types(p, 4, "C2", "O2", HESSFIT_FF_WILDCARD, HESSFIT_FF_WILDCARD);
    CHECK(p->kind == HESSFIT_PARAM_IMPROPER && p->improper_form == HESSFIT_IMPROPER_HARMONIC && p->n_values == 1 &&
              p->values[0] == 0.8 * HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2,
          "line 1022: %.17g", p->values[0]);
    /* vdW, lines 1035 (C3) and 1064 (RH) */
    p = param_at(&ff, 1035);
    check_types(p, 1, "C3", NULL, NULL, NULL);
    CHECK(p->kind == HESSFIT_PARAM_VDW && p->values[0] == 2.04 && p->values[1] == 0.027, "line 1035");
    p = param_at(&ff, 1064);
    CHECK(strcmp(p->types[0], "RH") == 0 && p->values[0] == 2.69 && p->values[1] == 0.14 &&
              strcmp(p->label, "Donoghue") == 0,
          "line 1064");
    /* The Rh substructure: bonds on 1860-1867 (1862 an 'a' alternative), bends from 1868. */
    CHECK(strstr(ff.substructures[16].name, "Rhodium") != NULL && ff.substructures[16].line == 1856 &&
              strcmp(ff.substructures[16].pattern, "HX-RH(-PX)-HX.C2*C2(.2)-N2-C2=O2.2") == 0,
          "substructure 16: '%s' '%s'", ff.substructures[16].name, ff.substructures[16].pattern);
    CHECK(strcmp(ff.substructures[0].name, "Benzenoid") == 0 && ff.substructures[0].line == 1126 &&
              strcmp(ff.substructures[0].pattern, "C2*C2*AA*AA*AA*AA*1") == 0,
          "substructure 0");
    CHECK(hessfit_forcefield_param_at_line(&ff, 1859) == -1, "line 1859 (code 'A') is not modelled");
    for (int L = 1860; L <= 1889; L++) {
        p = param_at(&ff, L);
        CHECK(p->substructure == 16 && p->kind == (L <= 1867 ? HESSFIT_PARAM_BOND : HESSFIT_PARAM_ANGLE), "line %d: %s sub %d",
              L, hessfit_param_kind_name(p->kind), p->substructure);
        CHECK(p->values[0] == field(raw[L - 1], 34, 44) * (L <= 1867 ? HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2
                                                                      : HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2) &&
                  p->values[1] == field(raw[L - 1], 23, 33),
              "line %d values", L);
    }
    p = param_at(&ff, 1860);
    check_types(p, 2, "1", "2", NULL, NULL);
    CHECK(p->values[0] == 2.5782 * 71.96631 && p->values[1] == 1.5684, "line 1860");
    p = param_at(&ff, 1862);
    check_types(p, 2, "2", "3", NULL, NULL);
    p = param_at(&ff, 1868);
    check_types(p, 3, "1", "2", "3", NULL);
    CHECK(p->values[0] == 0.7558 * 71.94 && p->values[1] == 85.4339, "line 1868");
    p = param_at(&ff, 1909);
    check_types(p, 3, "2", "1", "PX", NULL);
    CHECK(p->kind == HESSFIT_PARAM_ANGLE && p->substructure == 17, "line 1909");
    p = param_at(&ff, 1890);
    check_types(p, 4, HESSFIT_FF_WILDCARD, "2", "3", HESSFIT_FF_WILDCARD);
    /* Bond marks (columns 8, 13, 18) and "Opt. Descriptor" fields (columns 57-76), checked against
     * the raw text of each line as well as by value on the lines the typing relies on. */
    {
        static const struct {
            int line;
            const char *marks; /* one per gap, '0' for none */
            const char *descriptor;
        } want[] = {
            {96, "-", "O200 0000"},   /* " 1  C2 - C2 ... O200 0000"  C(=O)-C(sp2) */
            {97, "=", "Si00 0000"},   /* " 1  C2 = C2 ... Si00 0000"  (Si-)C=C */
            {98, "=", ""},            /* " 1  C2 = C2 ... 0000 0000"  C=C */
            {114, "-", "1C200 0000"}, /* one continuation line (115) follows */
            {116, "-", ""},
            {117, "=", ""},           /* N2 = C2 */
            {118, "%", ""},           /* N1 % C1 */
            {60, "-", "1C200 0000"},
            {173, "--", "0000 H1H1 0000"},
            {225, "*-", "0000 H100 0000"},
            {448, "---", ""},
            {510, "*-=", "0000 C200 0000 0000"},
            {519, "*--", "C200 C200 O200 0000"},
            {957, "*.-", ""},         /* '.': MacroModel's bond without order */
            {1022, "000", ""},        /* out-of-plane: the '*' between its atoms are not stored */
            {1860, "0", ""},          /* substructure: none */
            {1890, "000", ""},
        };
        for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
            p = param_at(&ff, want[w].line);
            for (int k = 0; k + 1 < p->n_types; k++) {
                char got = p->bond_marks[k] ? p->bond_marks[k] : '0';
                CHECK(got == want[w].marks[k], "line %d: bond mark %d '%c', expected '%c'", want[w].line, k + 1, got,
                      want[w].marks[k]);
            }
            CHECK(strcmp(p->descriptor, want[w].descriptor) == 0, "line %d: descriptor '%s', expected '%s'",
                  want[w].line, p->descriptor, want[w].descriptor);
        }
        int marked = 0, described = 0, continued = 0;
        for (int i = 0; i < ff.n_params; i++) {
            const hessfit_ff_param *q = &ff.params[i];
            const char *t = raw[q->line - 1];
            if (q->substructure >= 0 || q->kind == HESSFIT_PARAM_VDW || q->kind == HESSFIT_PARAM_IMPROPER) {
                CHECK(!q->bond_marks[0] && !q->bond_marks[1] && !q->bond_marks[2] &&
                          (q->substructure >= 0 || q->kind == HESSFIT_PARAM_IMPROPER || q->descriptor[0] == '\0'),
                      "line %d: marks or descriptor on a %s line", q->line, hessfit_param_kind_name(q->kind));
                if (q->substructure >= 0)
                    CHECK(q->descriptor[0] == '\0', "substructure line %d has descriptor '%s'", q->line,
                          q->descriptor);
                continue;
            }
            for (int k = 0; k + 1 < q->n_types; k++) {
                CHECK(q->bond_marks[k] == t[7 + 5 * k], "line %d: mark %d '%c' vs column %d '%c'", q->line, k + 1,
                      q->bond_marks[k], 8 + 5 * k, t[7 + 5 * k]);
                marked++;
            }
            /* independent: a descriptor is stored iff column 57 holds a count or a field is not 0000 */
            int conditional = strlen(t) > 56 && t[56] != ' ';
            for (int k = 0; k < q->n_types; k++)
                conditional |= strlen(t) >= (size_t)(61 + 5 * k) && strncmp(t + 57 + 5 * k, "0000", 4) != 0;
            CHECK(conditional == (q->descriptor[0] != '\0'), "line %d: descriptor '%s' vs '%.25s'", q->line,
                  q->descriptor, t + 55);
            described += conditional;
            continued += q->descriptor[0] >= '1' && q->descriptor[0] <= '9';
        }
        printf("mm3.fld main tables: %d bond marks, %d conditional lines (%d with continuation lines)\n", marked,
               described, continued);
        CHECK(marked == 105 + 2 * (258 + 3) + 3 * 559 && described == 337 && continued == 2,
              "marks %d, conditional %d, continued %d", marked, described, continued);
    }
    /* A continuation line maps to the parameter it continues (MacroModel reports it as the FF line);
     * the parameter keeps its own line. */
    CHECK(hessfit_forcefield_param_at_line(&ff, 115) == hessfit_forcefield_param_at_line(&ff, 114) &&
              param_at(&ff, 115)->line == 114 && param_at(&ff, 61)->line == 60,
          "continuation lines 115, 61");
    CHECK(hessfit_forcefield_param_at_line(&ff, 59) == -1 && hessfit_forcefield_param_at_line(&ff, 1) == -1 &&
              hessfit_forcefield_param_at_line(&ff, 0) == -1 && hessfit_forcefield_param_at_line(&ff, 99999) == -1,
          "non-parameter lines");
    /* Equivalences: " 1  CU  C1 C2" (line 48) ... " 6  HX  H1 ... H7" (line 53) */
    CHECK(strcmp(ff.equivalences[0].type, "C1") == 0 && strcmp(ff.equivalences[0].equivalent, "CU") == 0 &&
              ff.equivalences[0].line == 48,
          "first equivalence");
    CHECK(strcmp(ff.equivalences[24].type, "H7") == 0 && strcmp(ff.equivalences[24].equivalent, "HX") == 0 &&
              ff.equivalences[24].line == 53,
          "last equivalence");
    CHECK(strcmp(hessfit_param_kind_name(HESSFIT_PARAM_VDW), "vdw") == 0 && strcmp(hessfit_param_kind_name(HESSFIT_PARAM_TORSION), "torsion") == 0,
          "kind names");
    hessfit_forcefield_free(&ff);
    CHECK(ff.params == NULL && ff.n_params == 0, "free zeroes");
    free_lines(raw);
    free(text);
    free((void *)path);
}

static void test_fld_round_trip(void)
{
    static const char *files[] = {"mm3.fld", "rh_hyd_enamide_start.fld", "rh_hyd_enamide_seminario.fld",
                                  "rh_hyd_enamide_final.fld"};
    char rel[256];
    hessfit_forcefield ff, again;
    size_t n, m;
    char *orig, *out;
    const char *path;
    /* Unchanged -> byte-identical, for every file. */
    for (int f = 0; f < 4; f++) {
        snprintf(rel, sizeof rel, RH_FF "%s", files[f]);
        path = test_source_path(rel);
        HF_CALL(hessfit_fld_read(path, &ff));
        HF_CALL(hessfit_fld_write(&ff, test_temp_path("same.fld")));
        orig = test_load_file(test_source_path(rel), &n);
        out = test_load_file(test_temp_path("same.fld"), &m);
        CHECK(n == m && memcmp(orig, out, n) == 0, "%s: written unchanged, not byte-identical", files[f]);
        printf("%s: %d parameters, written back byte-identical (%zu bytes)\n", files[f], ff.n_params, n);
        free(orig);
        free(out);
        hessfit_forcefield_free(&ff);
    }
    /* A gzip copy and a CRLF copy read the same and write back as they were. */
    path = test_source_path(RH_FF "mm3.fld");
    orig = test_load_file(path, &n);
    {
        char *crlf = malloc(2 * n + 1);
        size_t k = 0;
        hessfit_forcefield plain;
        CHECK(crlf != NULL, "no memory");
        test_write_gz("mm3.fld.gz", orig, n);
        HF_CALL(hessfit_fld_read(path, &plain));
        HF_CALL(hessfit_fld_read(test_temp_path("mm3.fld.gz"), &ff));
        CHECK(ff.n_params == plain.n_params && memcmp(ff.params, plain.params, sizeof *ff.params * (size_t)ff.n_params) == 0,
              "gzip copy reads differently");
        HF_CALL(hessfit_fld_write(&ff, test_temp_path("from_gz.fld")));
        out = test_load_file(test_temp_path("from_gz.fld"), &m);
        CHECK(m == n && memcmp(out, orig, n) == 0, "gzip copy does not write back as the plain file");
        free(out);
        hessfit_forcefield_free(&ff);
        for (size_t i = 0; i < n; i++) {
            if (orig[i] == '\n')
                crlf[k++] = '\r';
            crlf[k++] = orig[i];
        }
        test_write_file("crlf.fld", crlf, k);
        HF_CALL(hessfit_fld_read(test_temp_path("crlf.fld"), &ff));
        CHECK(ff.n_params == plain.n_params && memcmp(ff.params, plain.params, sizeof *ff.params * (size_t)ff.n_params) == 0,
              "CRLF copy reads differently");
        /* change one value: the CRLF line stays CRLF */
        ff.params[hessfit_forcefield_param_at_line(&ff, 1860)].values[0] = 150.0;
        HF_CALL(hessfit_fld_write(&ff, test_temp_path("crlf_out.fld")));
        out = test_load_file(test_temp_path("crlf_out.fld"), &m);
        CHECK(m == k, "CRLF write changed the size: %zu vs %zu", m, k);
        {
            size_t diff = 0;
            for (size_t i = 0; i < k; i++)
                diff += out[i] != crlf[i];
            CHECK(diff > 0 && diff <= 10, "CRLF write: %zu bytes differ", diff);
        }
        free(out);
        free(crlf);
        hessfit_forcefield_free(&ff);
        hessfit_forcefield_free(&plain);
    }
    /* Two changed values -> exactly those lines and fields. */
    HF_CALL(hessfit_fld_read(path, &ff));
    {
        int ib = hessfit_forcefield_param_at_line(&ff, 1860), it = hessfit_forcefield_param_at_line(&ff, 448);
        char **a, **b;
        int na, nb, changed = 0;
        double new_k = 150.0, new_v2_half = -0.4321;
        ff.params[ib].values[0] = new_k;
        ff.params[it].values[3] = new_v2_half;
        HF_CALL(hessfit_fld_write(&ff, test_temp_path("two.fld")));
        out = test_load_file(test_temp_path("two.fld"), &m);
        na = split_lines(orig, n, &a);
        nb = split_lines(out, m, &b);
        CHECK(na == nb, "line count changed");
        for (int i = 0; i < na; i++) {
            if (strcmp(a[i], b[i]) == 0)
                continue;
            changed++;
            CHECK(i + 1 == 1860 || i + 1 == 448, "line %d changed", i + 1);
            CHECK(strlen(a[i]) == strlen(b[i]), "line %d changed length", i + 1);
            for (size_t c = 0; c < strlen(a[i]); c++)
                CHECK(a[i][c] == b[i][c] || (c >= 34 && c < 44), "line %d column %zu changed outside field 2", i + 1,
                      c + 1);
            printf("  line %d: '%.44s' -> '%.44s'\n", i + 1, a[i], b[i]);
        }
        CHECK(changed == 2, "%d lines changed", changed);
        CHECK(strncmp(b[1859] + 34, "    2.0843", 10) == 0 && strncmp(b[447] + 34, "   -0.8642", 10) == 0,
              "new fields '%.10s' '%.10s'", b[1859] + 34, b[447] + 34);
        HF_CALL(hessfit_fld_read(test_temp_path("two.fld"), &again));
        CHECK(again.n_params == ff.n_params, "parameter count changed");
        for (int i = 0; i < ff.n_params; i++) {
            const hessfit_ff_param *p = &ff.params[i], *q = &again.params[i];
            CHECK(p->line == q->line && p->kind == q->kind && p->n_values == q->n_values, "parameter %d", i);
            for (int k = 0; k < p->n_values; k++) {
                if (i == ib && k == 0) { /* to the field's precision: 0.5e-4 mdyn/A */
                    CHECK(q->values[0] == 2.0843 * 71.96631 && fabs(q->values[0] - new_k) <= 0.5e-4 * 71.96631,
                          "re-read k %.17g", q->values[0]);
                    continue;
                }
                CHECK(p->values[k] == q->values[k], "parameter %d value %d: %.17g re-read as %.17g", i, k, p->values[k],
                      q->values[k]);
            }
        }
        printf("  re-read: k %.6f (set %.1f, field precision 0.5e-4 x 71.96631), V2/2 %.4f exactly\n",
               again.params[ib].values[0], new_k, again.params[it].values[3]);
        free_lines(a);
        free_lines(b);
        free(out);
        hessfit_forcefield_free(&again);
    }
    hessfit_forcefield_free(&ff);
    /* The MM3* values a fit may now change besides k and r0: a stretch-bend k (line 438), a bond
     * moment (line 73) and a blank moment filled (line 1129) -> only those fields, in the line's
     * format (F10.4), every other byte unchanged. */
    HF_CALL(hessfit_fld_read(path, &ff));
    {
        const int isb = hessfit_forcefield_param_at_line(&ff, 438), imu = hessfit_forcefield_param_at_line(&ff, 73),
                  iblank = hessfit_forcefield_param_at_line(&ff, 1129);
        static const struct {
            int line, start;
            const char *field;
        } want[3] = {{438, 23, "    0.1712"}, {73, 45, "   -0.8765"}, {1129, 45, "    0.2500"}};
        char **a, **b;
        int na, nb, changed = 0;
        ff.params[isb].values[0] = 0.1712;
        ff.params[imu].values[2] = -0.8765;
        ff.params[iblank].values[2] = 0.25;
        HF_CALL(hessfit_fld_write(&ff, test_temp_path("mm3free.fld")));
        out = test_load_file(test_temp_path("mm3free.fld"), &m);
        na = split_lines(orig, n, &a);
        nb = split_lines(out, m, &b);
        CHECK(na == nb, "line count changed: %d -> %d", na, nb);
        for (int i = 0; i < na && i < nb; i++) {
            int w = -1;
            for (int k = 0; k < 3; k++)
                w = want[k].line == i + 1 ? k : w;
            if (w < 0) {
                CHECK(strcmp(a[i], b[i]) == 0, "line %d changed", i + 1);
                continue;
            }
            changed++;
            const size_t la = strlen(a[i]), lb = strlen(b[i]), s0 = (size_t)want[w].start, s1 = s0 + 10;
            CHECK(lb == (la > s1 ? la : s1), "line %d: length %zu -> %zu", i + 1, la, lb);
            for (size_t c = 0; c < lb; c++)
                CHECK((c >= s0 && c < s1) || (c < la ? a[i][c] : ' ') == b[i][c],
                      "line %d column %zu changed outside its field", i + 1, c + 1);
            CHECK(strncmp(b[i] + s0, want[w].field, 10) == 0, "line %d: field '%.10s', expected '%s'", i + 1, b[i] + s0,
                  want[w].field);
            printf("  line %d: '%.56s' -> '%.56s'\n", i + 1, a[i], b[i]);
        }
        CHECK(changed == 3, "%d lines changed", changed);
        HF_CALL(hessfit_fld_read(test_temp_path("mm3free.fld"), &again));
        CHECK(again.params[isb].values[0] == 0.1712 && again.params[imu].values[2] == -0.8765 &&
                  again.params[iblank].values[2] == 0.25,
              "re-read k_sb %.17g, mu %.17g, %.17g", again.params[isb].values[0], again.params[imu].values[2],
              again.params[iblank].values[2]);
        free_lines(a);
        free_lines(b);
        free(out);
        hessfit_forcefield_free(&again);
    }
    hessfit_forcefield_free(&ff);
    free(orig);
    /* start vs seminario: parameters differ exactly where the text differs. */
    {
        hessfit_forcefield s, e;
        int text_diff = 0, param_diff = 0;
        HF_CALL(hessfit_fld_read(test_source_path(RH_FF "rh_hyd_enamide_start.fld"), &s));
        HF_CALL(hessfit_fld_read(test_source_path(RH_FF "rh_hyd_enamide_seminario.fld"), &e));
        CHECK(s.n_lines == e.n_lines && s.n_params == e.n_params, "the two files differ in shape");
        for (int L = 1; L <= s.n_lines; L++) {
            int i = hessfit_forcefield_param_at_line(&s, L), j = hessfit_forcefield_param_at_line(&e, L);
            int td = strcmp(s.lines[L - 1], e.lines[L - 1]) != 0, pd;
            CHECK((i < 0) == (j < 0), "line %d is a parameter in one file only", L);
            pd = i >= 0 && memcmp(s.params[i].values, e.params[j].values, sizeof s.params[i].values) != 0;
            CHECK(td == pd, "line %d: text %s, parameters %s", L, td ? "differs" : "same", pd ? "differ" : "same");
            text_diff += td;
            param_diff += pd;
        }
        printf("start vs seminario: %d lines differ in text, %d parameters differ (the same lines)\n", text_diff,
               param_diff);
        CHECK(text_diff == 30, "%d lines differ", text_diff);
        hessfit_forcefield_free(&s);
        hessfit_forcefield_free(&e);
    }
    test_temp_clear();
}

static void test_fld_bad_input(void)
{
    const char *path = test_source_path(RH_FF "mm3.fld");
    size_t n, m;
    char *orig = test_load_file(path, &n), *bad;
    char **raw;
    int n_raw = split_lines(orig, n, &raw), cuts = 0;
    size_t end_offset = 0;
    CHECK(n_raw == 1913, "mm3.fld has %d lines", n_raw);
    printf("bad .fld input:\n");
    /* Truncations: every cut before the final "-3" line (line 1911) fails, except a cut right after
     * a "-3" line, which leaves a well-formed shorter file. */
    for (int i = 0; i < 1910; i++)
        end_offset += strlen(raw[i]) + 1;
    for (int k = 0; k < 97; k++) {
        size_t cut = (size_t)((double)end_offset * k / 97.0) + (size_t)(k % 7);
        size_t ls = cut;
        while (ls > 0 && orig[ls - 1] != '\n')
            ls--;
        if (cut - ls <= 2 && strncmp(orig + ls, "-3", cut - ls) == 0 && cut > ls)
            continue; /* "-" or "-3" as the last line */
        if (cut == ls && ls >= 3 && strncmp(orig + ls - 3, "-3\n", 3) == 0)
            continue;
        expect_read_failure(hessfit_fld_read, "cut.fld", orig, cut, HESSFIT_SUCCESS, NULL, 1);
        cuts++;
    }
    printf("  %d truncated copies (cut points spread over the file): all rejected, e.g. %s\n", cuts, hessfit_last_error());
    CHECK(cuts >= 90, "only %d cut points", cuts);
    expect_read_failure(hessfit_fld_read, "empty.fld", "", 0, HESSFIT_ERROR_TRUNCATED, NULL, 0);
    /* a non-numeric field, NaN, no decimal point, a shifted line */
    {
        char line[256];
        snprintf(line, sizeof line, "%s", raw[59]);
        memcpy(line + 34, "    4.49x0", 10);
        bad = edit_line(orig, 60, line, 0, &m);
        expect_read_failure(hessfit_fld_read, "nonnumeric.fld", bad, m, HESSFIT_ERROR_PARSE, ".fld:60:", 0);
        free(bad);
        memcpy(line + 34, "       NaN", 10);
        bad = edit_line(orig, 60, line, 0, &m);
        expect_read_failure(hessfit_fld_read, "nan.fld", bad, m, HESSFIT_ERROR_NONFINITE, ".fld:60:", 0);
        free(bad);
        memcpy(line + 34, "         4", 10);
        bad = edit_line(orig, 60, line, 0, &m);
        expect_read_failure(hessfit_fld_read, "nodot.fld", bad, m, HESSFIT_ERROR_PARSE, "decimal point", 0);
        free(bad);
        snprintf(line, sizeof line, " %s", raw[59]);
        bad = edit_line(orig, 60, line, 0, &m);
        expect_read_failure(hessfit_fld_read, "shifted.fld", bad, m, HESSFIT_ERROR_PARSE, ".fld:60:", 0);
        free(bad);
    }
    /* a bond mark hessfit does not know, two marks in one gap */
    {
        char line[256];
        snprintf(line, sizeof line, "%s", raw[97]); /* " 1  C2 = C2 ..." */
        line[7] = '#';
        bad = edit_line(orig, 98, line, 0, &m);
        expect_read_failure(hessfit_fld_read, "mark.fld", bad, m, HESSFIT_ERROR_PARSE, ".fld:98: '#' in column 8", 0);
        free(bad);
        line[6] = '-';
        line[7] = '=';
        bad = edit_line(orig, 98, line, 0, &m);
        expect_read_failure(hessfit_fld_read, "marks.fld", bad, m, HESSFIT_ERROR_PARSE, "is not one bond mark", 0);
        free(bad);
    }
    /* a continuation line whose parameter line is gone is no parameter's line */
    {
        hessfit_forcefield ff;
        const char *dir_file;
        bad = edit_line(orig, 114, " C  (comment instead of the N2-H3 line)", 0, &m);
        dir_file = test_write_file("orphan.fld", bad, m);
        HF_CALL(hessfit_fld_read(dir_file, &ff));
        CHECK(hessfit_forcefield_param_at_line(&ff, 115) == -1 && hessfit_forcefield_param_at_line(&ff, 61) >= 0,
              "orphaned continuation line");
        hessfit_forcefield_free(&ff);
        remove(dir_file);
        free(bad);
    }
    bad = edit_line(orig, 62, "-7", 1, &m);
    expect_read_failure(hessfit_fld_read, "marker.fld", bad, m, HESSFIT_ERROR_UNSUPPORTED, ".fld:62: unknown section marker '-7'",
                        0);
    free(bad);
    bad = edit_line(orig, 200, "hello world, this is not a force field line", 0, &m);
    expect_read_failure(hessfit_fld_read, "garbage.fld", bad, m, HESSFIT_ERROR_PARSE, ".fld:200:", 0);
    free(bad);
    bad = edit_line(orig, 1128, NULL, 0, &m); /* the -2 after the first substructure's pattern */
    expect_read_failure(hessfit_fld_read, "subhead.fld", bad, m, HESSFIT_SUCCESS, ".fld:1128:", 0);
    free(bad);
    {
        char line[256];
        snprintf(line, sizeof line, "%s", raw[1021]);
        memcpy(line + 23, "    5.0000", 10);
        bad = edit_line(orig, 1022, line, 0, &m);
        expect_read_failure(hessfit_fld_read, "oop.fld", bad, m, HESSFIT_ERROR_UNSUPPORTED, ".fld:1022:", 0);
        free(bad);
    }
    {
        char junk[4096];
        unsigned state = 12345;
        for (size_t i = 0; i < sizeof junk; i++) {
            state = state * 1103515245u + 12345u;
            junk[i] = (char)(state >> 16);
        }
        expect_read_failure(hessfit_fld_read, "binary.fld", junk, sizeof junk, HESSFIT_SUCCESS, NULL, 0);
        memset(junk, 'x', sizeof junk);
        for (size_t i = 80; i < sizeof junk; i += 81)
            junk[i] = '\n';
        expect_read_failure(hessfit_fld_read, "text.fld", junk, sizeof junk, HESSFIT_ERROR_TRUNCATED, NULL, 0);
        {
            char with_nul[] = " title\n-1\n 0 \0 x\n";
            expect_read_failure(hessfit_fld_read, "nul.fld", with_nul, sizeof with_nul - 1, HESSFIT_ERROR_PARSE, "NUL", 0);
        }
    }
    /* Writes that must fail: nothing written, an existing file untouched, no temporary file left. */
    {
        hessfit_forcefield ff;
        const char *out = test_temp_path("out.fld");
        const char *keep[] = {"out.fld"};
        int ib;
        HF_CALL(hessfit_fld_read(path, &ff));
        ib = hessfit_forcefield_param_at_line(&ff, 1860);
        test_write_file("out.fld", "existing\n", 9);
        struct {
            const char *what;
            int param;
            int value;
            double v;
            hessfit_status status;
            const char *text;
        } cases[] = {
            {"a k too wide for F10.4", ib, 0, 1e12, HESSFIT_ERROR_OVERFLOW, "bond 1 2, line 1860"},
            {"a NaN value", ib, 1, NAN, HESSFIT_ERROR_NONFINITE, "line 1860"},
            {"a torsion phase MM3 cannot write", hessfit_forcefield_param_at_line(&ff, 448), 1, 90.0,
             HESSFIT_ERROR_INVALID_ARGUMENT, "line 448"},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            double saved = ff.params[cases[c].param].values[cases[c].value];
            hessfit_status st;
            ff.params[cases[c].param].values[cases[c].value] = cases[c].v;
            st = hessfit_fld_write(&ff, out);
            printf("  write, %s: %s\n", cases[c].what, hessfit_last_error());
            CHECK(st == cases[c].status, "%s: %s", cases[c].what, hessfit_status_string(st));
            CHECK(strstr(hessfit_last_error(), cases[c].text) != NULL, "%s: message lacks '%s'", cases[c].what, cases[c].text);
            ff.params[cases[c].param].values[cases[c].value] = saved;
            bad = test_load_file(out, &m);
            CHECK(m == 9 && memcmp(bad, "existing\n", 9) == 0, "%s: the existing file was changed", cases[c].what);
            free(bad);
            test_temp_check_only(keep, 1);
        }
        strcpy(ff.params[ib].types[0], "C3");
        CHECK(hessfit_fld_write(&ff, out) == HESSFIT_ERROR_INVALID_ARGUMENT, "changed types accepted");
        printf("  write, changed atom types: %s\n", hessfit_last_error());
        strcpy(ff.params[ib].types[0], "1");
        ff.params[ib].line = 0;
        CHECK(hessfit_fld_write(&ff, out) == HESSFIT_ERROR_INVALID_ARGUMENT, "a parameter without a line accepted");
        printf("  write, a parameter without a line: %s\n", hessfit_last_error());
        ff.params[ib].line = 1860;
        CHECK(hessfit_fld_write(&ff, test_temp_path("missing/dir/x.fld")) == HESSFIT_ERROR_IO, "missing directory");
        printf("  write, missing directory: %s\n", hessfit_last_error());
        test_temp_check_only(keep, 1);
        hessfit_forcefield_free(&ff);
        unlink(out);
    }
    free_lines(raw);
    free(orig);
}

/* ---- frcmod ------------------------------------------------------------------------------------------ */

static void check_same_params(const hessfit_forcefield *a, const hessfit_forcefield *b, const char *what)
{
    CHECK(a->n_params == b->n_params, "%s: %d vs %d parameters", what, a->n_params, b->n_params);
    for (int i = 0; i < a->n_params; i++) {
        const hessfit_ff_param *p = &a->params[i], *q = &b->params[i];
        CHECK(p->kind == q->kind && p->n_types == q->n_types && p->n_values == q->n_values &&
                  (p->kind != HESSFIT_PARAM_IMPROPER || p->improper_form == q->improper_form) &&
                  strcmp(p->label, q->label) == 0,
              "%s: parameter %d differs in kind, types, count or label", what, i);
        for (int k = 0; k < p->n_types; k++)
            CHECK(strcmp(p->types[k], q->types[k]) == 0, "%s: parameter %d type %d", what, i, k);
        for (int k = 0; k < p->n_values; k++)
            CHECK(p->values[k] == q->values[k], "%s: parameter %d value %d: %.17g vs %.17g", what, i, k, p->values[k],
                  q->values[k]);
    }
}

static void frcmod_round_trip(const char *path, const char *name)
{
    hessfit_forcefield a, b, c;
    char *t1, *t2;
    size_t n1, n2;
    HF_CALL(hessfit_frcmod_read(path, &a));
    HF_CALL(hessfit_frcmod_write(&a, test_temp_path("first.frcmod")));
    HF_CALL(hessfit_frcmod_read(test_temp_path("first.frcmod"), &b));
    check_same_params(&a, &b, name);
    HF_CALL(hessfit_frcmod_write(&b, test_temp_path("second.frcmod")));
    HF_CALL(hessfit_frcmod_read(test_temp_path("second.frcmod"), &c));
    check_same_params(&a, &c, name);
    t1 = test_load_file(test_temp_path("first.frcmod"), &n1);
    t2 = test_load_file(test_temp_path("second.frcmod"), &n2);
    CHECK(n1 == n2 && memcmp(t1, t2, n1) == 0, "%s: the second write differs from the first", name);
    printf("%s: %d parameters; written, re-read identical, second write byte-identical (%zu bytes)\n", name,
           a.n_params, n1);
    free(t1);
    free(t2);
    hessfit_forcefield_free(&a);
    hessfit_forcefield_free(&b);
    hessfit_forcefield_free(&c);
}

static void test_frcmod(void)
{
    hessfit_forcefield ff;
    int counts[5] = {0};
    const hessfit_ff_param *p;
    HF_CALL(hessfit_frcmod_read(test_source_path("tests/data/goldens/sample.frcmod"), &ff));
    for (int i = 0; i < ff.n_params; i++)
        counts[ff.params[i].kind]++;
    printf("sample.frcmod: %d bond, %d angle, %d torsion, %d improper, %d vdW\n", counts[0], counts[1], counts[2],
           counts[3], counts[4]);
    CHECK(ff.format == HESSFIT_FF_FRCMOD && counts[0] == 3 && counts[1] == 7 && counts[2] == 8 && counts[3] == 3 &&
              counts[4] == 1,
          "sample.frcmod counts");
    p = param_at(&ff, 6); /* "c -c4    337.5987    1.6002" */
    check_types(p, 2, "c", "c4", NULL, NULL);
    CHECK(p->kind == HESSFIT_PARAM_BOND && p->values[0] == 337.5987 && p->values[1] == 1.6002, "sample line 6");
    p = param_at(&ff, 20); /* "c -c4-ca-ca   1    2.4403   180.000    2.000" */
    check_types(p, 4, "c", "c4", "ca", "ca");
    CHECK(p->kind == HESSFIT_PARAM_TORSION && p->n_values == 3 && p->values[0] == 2.4403 && p->values[1] == 180.0 &&
              p->values[2] == 2.0,
          "sample line 20");
    p = param_at(&ff, 30); /* "c4-ce-c -o          10.5   180.0    2.0" */
    check_types(p, 4, "c4", "ce", "c", "o");
    CHECK(p->kind == HESSFIT_PARAM_IMPROPER && p->improper_form == HESSFIT_IMPROPER_FOURIER && p->values[0] == 10.5 &&
              p->values[1] == 180.0 && p->values[2] == 2.0,
          "sample line 30");
    p = param_at(&ff, 35);
    CHECK(p->kind == HESSFIT_PARAM_VDW && strcmp(p->types[0], "c4") == 0 && p->values[0] == 0.0, "sample line 35");
    hessfit_forcefield_free(&ff);

    HF_CALL(hessfit_frcmod_read(test_source_path("tests/data/goldens/upstream_q2mm.frcmod"), &ff));
    memset(counts, 0, sizeof counts);
    for (int i = 0; i < ff.n_params; i++)
        counts[ff.params[i].kind]++;
    printf("upstream_q2mm.frcmod: %d bond, %d angle, %d torsion, %d improper, %d vdW\n", counts[0], counts[1], counts[2],
           counts[3], counts[4]);
    CHECK(counts[0] == 3 && counts[1] == 10 && counts[2] == 10 && counts[3] == 10 && counts[4] == 1, "upstream counts");
    p = param_at(&ff, 25); /* "ca-ca-ce-c    4    2.800  180.000  2.000  same as X -c2-ca-X , ..." */
    CHECK(p->values[0] == 2.8 / 4.0 && strncmp(p->label, "same as X -c2-ca-X", 18) == 0, "upstream line 25: %.17g '%s'",
          p->values[0], p->label);
    p = param_at(&ff, 21); /* "c1-ce-ca   65.100   103.77282  ..." */
    CHECK(p->kind == HESSFIT_PARAM_ANGLE && p->values[0] == 65.1 && p->values[1] == 103.77282, "upstream line 21");
    hessfit_forcefield_free(&ff);

    HF_CALL(hessfit_frcmod_read(test_source_path("tests/data/frcmod/series.frcmod"), &ff));
    CHECK(ff.n_params == 9, "series.frcmod: %d parameters", ff.n_params);
    p = param_at(&ff, 16); /* "X -c3-c3-X    9    1.4000  0.000  3.000" */
    check_types(p, 4, HESSFIT_FF_WILDCARD, "c3", "c3", HESSFIT_FF_WILDCARD);
    CHECK(p->values[0] == 1.4 / 9.0 && p->values[2] == 3.0, "series line 16");
    p = param_at(&ff, 17); /* a series of three terms on lines 17-19 */
    {
        double want[9] = {0.15, 0.0, 3.0, 0.5 / 2.0, 180.0, 2.0, 0.05, 30.0, 1.0};
        CHECK(p->n_values == 9 && strcmp(p->label, "series of three") == 0, "series: %d values", p->n_values);
        for (int k = 0; k < 9; k++)
            CHECK(p->values[k] == want[k], "series value %d: %.17g", k, p->values[k]);
        CHECK(hessfit_forcefield_param_at_line(&ff, 18) == -1, "line 18 continues line 17");
    }
    p = param_at(&ff, 22); /* "X -X -c -o   10.5   180.   2." */
    check_types(p, 4, HESSFIT_FF_WILDCARD, HESSFIT_FF_WILDCARD, "c", "o");
    CHECK(p->values[0] == 10.5 && p->values[1] == 180.0 && p->values[2] == 2.0, "series line 22");
    hessfit_forcefield_free(&ff);

    frcmod_round_trip(test_source_path("tests/data/goldens/sample.frcmod"), "sample.frcmod");
    frcmod_round_trip(test_source_path("tests/data/goldens/upstream_q2mm.frcmod"), "upstream_q2mm.frcmod");
    frcmod_round_trip(test_source_path("tests/data/frcmod/series.frcmod"), "series.frcmod");

    /* The MM3 main tables (stretch, bend, torsion, vdW) as an frcmod: read back identical. */
    {
        hessfit_forcefield mm3, sub, back;
        int kept = 0;
        HF_CALL(hessfit_fld_read(test_source_path(RH_FF "mm3.fld"), &mm3));
        CHECK(hessfit_frcmod_write(&mm3, test_temp_path("mm3.frcmod")) == HESSFIT_ERROR_UNSUPPORTED,
              "substructure parameters accepted");
        printf("mm3.fld as frcmod: %s\n", hessfit_last_error());
        CHECK(access(test_temp_path("mm3.frcmod"), F_OK) != 0, "a failed write left a file");
        memset(&sub, 0, sizeof sub);
        sub.format = HESSFIT_FF_MM3_FLD;
        sub.params = malloc(sizeof *sub.params * (size_t)mm3.n_params);
        for (int i = 0; i < mm3.n_params; i++)
            if (mm3.params[i].substructure < 0 && mm3.params[i].kind != HESSFIT_PARAM_IMPROPER &&
                mm3.params[i].kind != HESSFIT_PARAM_STRETCH_BEND) {
                sub.params[kept] = mm3.params[i];
                if (sub.params[kept].kind == HESSFIT_PARAM_BOND) /* {k, r0} without the bond moment */
                    sub.params[kept].n_values = 2;
                kept++;
            }
        sub.n_params = kept;
        HF_CALL(hessfit_frcmod_write(&sub, test_temp_path("mm3.frcmod")));
        HF_CALL(hessfit_frcmod_read(test_temp_path("mm3.frcmod"), &back));
        check_same_params(&sub, &back, "mm3 main tables as frcmod");
        printf("mm3.fld main tables (%d stretch/bend/torsion/vdW parameters) as frcmod: read back identical\n", kept);
        hessfit_forcefield_free(&back);
        free(sub.params);
        hessfit_forcefield_free(&mm3);
    }
    test_temp_clear();
}

static void test_frcmod_bad_input(void)
{
    size_t n, m;
    char *orig = test_load_file(test_source_path("tests/data/frcmod/series.frcmod"), &n), *bad;
    char **raw;
    int n_raw = split_lines(orig, n, &raw), cuts = 0, accepted = 0;
    size_t offset = 0;
    CHECK(n_raw == 27, "series.frcmod has %d lines", n_raw);
    printf("bad frcmod input:\n");
    /* Truncations: a cut inside a section (after a data line, or inside one) must fail; a cut just
     * after a blank line closing a section leaves a shorter valid file. */
    for (int i = 0; i < n_raw; i++) {
        size_t len = strlen(raw[i]);
        for (size_t c = 0; c <= len; c += (len > 8 ? len / 3 : 1)) {
            size_t cut = offset + c;
            int in_section = 0;
            hessfit_forcefield ff;
            hessfit_status st;
            if (cut == 0 || cut >= n)
                continue;
            /* does the text up to cut end inside a section? */
            {
                char **l;
                int nl = split_lines(orig, cut, &l), sec = 0;
                for (int k = 1; k < nl; k++) { /* a keyword: upper case, not "X -" (a wildcard type) */
                    size_t ll = strlen(l[k]);
                    if (ll == 0)
                        sec = 0;
                    else if (isupper((unsigned char)l[k][0]) && ll >= 2 && l[k][1] != ' ' && (ll < 3 || l[k][2] != '-'))
                        sec = 1;
                }
                in_section = sec;
                free_lines(l);
            }
            test_write_file("cut.frcmod", orig, cut);
            if (in_section) {
                expect_read_failure(hessfit_frcmod_read, "cut.frcmod", orig, cut, HESSFIT_SUCCESS, NULL, 1);
                cuts++;
            } else if ((st = hessfit_frcmod_read(test_temp_path("cut.frcmod"), &ff)) == HESSFIT_SUCCESS) {
                accepted++;
                hessfit_forcefield_free(&ff);
            } else {
                test_set_quiet(1);
                test_expect_file_error(st, HESSFIT_SUCCESS, test_temp_path("cut.frcmod"), TEST_ANY_LINE, NULL, NULL,
                                       "cut between sections");
                test_set_quiet(0);
            }
        }
        offset += len + 1;
    }
    printf("  %d cuts inside a section rejected (e.g. %s); %d cuts between sections read as shorter files\n", cuts,
           hessfit_last_error(), accepted);
    CHECK(cuts >= 20, "only %d cuts", cuts);
    unlink(test_temp_path("cut.frcmod"));
    expect_read_failure(hessfit_frcmod_read, "empty.frcmod", "", 0, HESSFIT_ERROR_TRUNCATED, NULL, 0);
    expect_read_failure(hessfit_frcmod_read, "title.frcmod", "just a title\n", 13, HESSFIT_ERROR_FORMAT, NULL, 0);
    bad = edit_line(orig, 8, "c3-c3  300.9x00   1.5380", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "nonnumeric.frcmod", bad, m, HESSFIT_ERROR_PARSE, ".frcmod:8:", 0);
    free(bad);
    bad = edit_line(orig, 8, "c3-c3  nan   1.5380", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "nan.frcmod", bad, m, HESSFIT_ERROR_NONFINITE, ".frcmod:8:", 0);
    free(bad);
    bad = edit_line(orig, 8, "c3 c3  300.9   1.5380", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "types.frcmod", bad, m, HESSFIT_ERROR_PARSE, ".frcmod:8:", 0);
    free(bad);
    bad = edit_line(orig, 11, "FOOBAR", 1, &m);
    expect_read_failure(hessfit_frcmod_read, "section.frcmod", bad, m, HESSFIT_ERROR_FORMAT, ".frcmod:11: unknown section", 0);
    free(bad);
    bad = edit_line(orig, 11, "CMAP", 1, &m);
    expect_read_failure(hessfit_frcmod_read, "cmap.frcmod", bad, m, HESSFIT_ERROR_UNSUPPORTED, ".frcmod:11:", 0);
    free(bad);
    bad = edit_line(orig, 19, "hc-c3-c3-hc   1    0.0500    30.000    -1.000", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "series_end.frcmod", bad, m, HESSFIT_ERROR_FORMAT, "negative PN", 0);
    free(bad);
    bad = edit_line(orig, 18, "hc-c3-c3-c3   2    0.5000   180.000    -2.000", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "series_types.frcmod", bad, m, HESSFIT_ERROR_FORMAT, ".frcmod:18:", 0);
    free(bad);
    bad = edit_line(orig, 16, "X -c3-c3-X    9    1.4000     0.000     2.500", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "pn.frcmod", bad, m, HESSFIT_ERROR_PARSE, "periodicity", 0);
    free(bad);
    bad = edit_line(orig, 16, "X -c3-c3-X    0    1.4000     0.000     3.000", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "idivf.frcmod", bad, m, HESSFIT_ERROR_PARSE, "IDIVF", 0);
    free(bad);
    bad = edit_line(orig, 8, "c3-c3  300.9", 0, &m);
    expect_read_failure(hessfit_frcmod_read, "missing.frcmod", bad, m, HESSFIT_ERROR_PARSE, "bond length", 0);
    free(bad);
    {
        char junk[2048];
        unsigned state = 777;
        for (size_t i = 0; i < sizeof junk; i++) {
            state = state * 1103515245u + 12345u;
            junk[i] = (char)(state >> 16);
        }
        junk[0] = 'x';
        expect_read_failure(hessfit_frcmod_read, "binary.frcmod", junk, sizeof junk, HESSFIT_SUCCESS, NULL, 0);
    }
    /* Writes that must fail, naming the parameter, leaving no file. */
    {
        hessfit_forcefield ff;
        const char *out = test_temp_path("out.frcmod");
        HF_CALL(hessfit_frcmod_read(test_source_path("tests/data/frcmod/series.frcmod"), &ff));
        ff.params[0].values[0] = NAN;
        CHECK(hessfit_frcmod_write(&ff, out) == HESSFIT_ERROR_NONFINITE && strstr(hessfit_last_error(), "line 8") != NULL, "NaN");
        printf("  write, NaN: %s\n", hessfit_last_error());
        ff.params[0].values[0] = 300.9;
        strcpy(ff.params[0].types[0], "c3x");
        CHECK(hessfit_frcmod_write(&ff, out) == HESSFIT_ERROR_UNSUPPORTED, "3-character type");
        printf("  write, 3-character type: %s\n", hessfit_last_error());
        strcpy(ff.params[0].types[0], "c3");
        ff.params[ff.n_params - 3].improper_form = HESSFIT_IMPROPER_HARMONIC;
        CHECK(hessfit_frcmod_write(&ff, out) == HESSFIT_ERROR_UNSUPPORTED, "harmonic improper");
        printf("  write, harmonic improper: %s\n", hessfit_last_error());
        ff.params[ff.n_params - 3].improper_form = HESSFIT_IMPROPER_FOURIER;
        ff.params[1].kind = HESSFIT_PARAM_CHARGE;
        CHECK(hessfit_frcmod_write(&ff, out) == HESSFIT_ERROR_UNSUPPORTED, "charge");
        printf("  write, charge: %s\n", hessfit_last_error());
        ff.params[1].kind = HESSFIT_PARAM_BOND;
        CHECK(access(out, F_OK) != 0, "a failed write left a file");
        test_temp_check_only(NULL, 0);
        hessfit_forcefield_free(&ff);
    }
    free_lines(raw);
    free(orig);
}

int main(void)
{
    test_fld_read();
    test_fld_round_trip();
    test_fld_bad_input();
    test_frcmod();
    test_frcmod_bad_input();
    printf("test_forcefield_files: OK\n");
    return 0;
}
