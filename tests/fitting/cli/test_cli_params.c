/* `hessfit params` end to end: the built program (next to this test in the build's bin/) on the
 * rh-enamide .mmo and .mol2 with mm3.fld, and on a GAFF-typed acetaldehyde with an frcmod; exit
 * codes 0 / 1 (failure, message naming the file) / 2 (usage); every term listed and counted. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static const char *hessfit;

/* Lines of out that start with prefix. */
static int count_lines(const char *out, const char *prefix)
{
    int count = 0;
    size_t n = strlen(prefix);
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        count += strncmp(line, prefix, n) == 0;
    return count;
}

/* Term lines: "<structure> <kind> ..." */
static int count_term_lines(const char *out)
{
    int count = 0;
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p > line && *p == ' ' &&
            (!strncmp(p + 1, "bond ", 5) || !strncmp(p + 1, "angle ", 6) || !strncmp(p + 1, "torsion ", 8) ||
             !strncmp(p + 1, "improper ", 9)))
            count++;
    }
    return count;
}

#define MMO_PATTERNS                                                                                               \
    "--no-term 'torsion * RH * *' --no-term 'torsion RH * * *' --no-term 'torsion * * C1 N1' "                     \
    "--no-term 'torsion N2 C2 C2 H1' --no-term 'torsion C1 C2 C2 H1' --no-term 'torsion C3 P3 C2 H1' "             \
    "--no-term 'torsion C3 P3 C2 C2'"
#define MOL2_NO_TERM                                                                                               \
    "--no-term 'bond RH *' --no-term 'bond C2 HX' --no-term 'angle * RH *' --no-term 'angle RH HX *' "             \
    "--no-term 'torsion * RH * *' --no-term 'torsion RH * * *'"
/* the ties of different values type matching finds in mm3.fld (see test_typing.c) */
#define MOL2_PREFER "--prefer 952 --prefer 198 --prefer 947 --prefer=517 --prefer 509"
#define MOL2_PATTERNS MOL2_NO_TERM " " MOL2_PREFER

int main(int argc, char **argv)
{
    (void)argc;
    hessfit = test_program_path(argv[0], "hessfit");

    char fld[1024], mmo[1024], mol2[1024], frcmod[1024], ace[1024], args[8192];
    snprintf(fld, sizeof fld, "%s", test_source_path("examples/data/rh-enamide/ff/mm3.fld"));
    snprintf(mmo, sizeof mmo, "%s", test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"));
    snprintf(mol2, sizeof mol2, "%s", test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mol2"));
    snprintf(frcmod, sizeof frcmod, "%s", test_source_path("tests/data/typing/acetaldehyde_gaff.frcmod"));
    snprintf(ace, sizeof ace, "%s", test_source_path("tests/data/typing/acetaldehyde_gaff.mol2"));
    test_run_result r;

    /* rh-enamide .mmo: every term by its FF line, the 654 torsions MacroModel left out by pattern */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' " MMO_PATTERNS, fld, mmo);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "rh-enamide .mmo");
    int terms = count_term_lines(r.out);
    printf("  .mmo listing: %d term lines, %zu bytes\n", terms, r.out_len);
    CHECK(terms == 3452, "%d term lines", terms);
    CHECK(count_lines(r.out, "# structure ") == 9, "structure headers");
    CHECK(count_lines(r.out, "1 ") == 256 && count_lines(r.out, "4 ") == 459, "terms of structures 1 and 4");
    test_expect_output(&r, "# summary: 9 structures, 3452 terms", ".mmo summary");
    test_expect_output(&r, "# no-term         0     0     654        0", ".mmo no-term row");
    test_expect_output(&r, "# ff-line       500  1050    1198       50", ".mmo ff-line row");
    test_expect_output(&r, "# no-term pattern 1 'torsion * RH * *': 495 terms", ".mmo pattern 1");
    test_expect_output(&r, "# parameters used: 98 ", ".mmo parameters used");
    test_expect_output(&r, "line 81 bond C3-H1 k=341.1203 r0=1.1120 mu=0.0000 | 204 terms in 9 structures: 1,2,3,4,5,6,7,8,9",
                       ".mmo C3-H1 summary");
    test_expect_output(&r, "line 1862 bond 2-3 [substructure 17] k=110.0581 r0=2.2886", ".mmo Rh-P substructure line");
    test_expect_output(&r, "1 bond     4-11            N2-H3               -> line 114 bond N2-H3",
                       ".mmo continuation");
    CHECK(count_lines(r.out, "line ") > 1000, "unused parameters listed");
    free(r.out);

    /* --mm3: each structure's MM3* model with every constant's source (tests/fitting/mm3 checks the
     * numbers against MacroModel's report; here the listing): structure 1 has 27 bend-bend pairs and
     * 78 stretch-bends as MacroModel printed, the nitrile's k_sb from the S-B line 438, the shared
     * benzenoid torsion of line 1150 (V2 36.8 / 4) in structure 4, RH's Z0 exception */
    snprintf(args, sizeof args, "params --mm3 --ff '%s' --structures '%s' " MMO_PATTERNS, fld, mmo);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "rh-enamide .mmo --mm3");
    CHECK(count_lines(r.out, "1 bend-bend ") == 27 && count_lines(r.out, "1 stretch-bend ") == 78 &&
              count_lines(r.out, "# structure 1: MM3* model") == 1 && count_lines(r.out, "1 atom ") == 36,
          "structure 1's MM3* listing: %d bend-bends, %d stretch-bends", count_lines(r.out, "1 bend-bend "),
          count_lines(r.out, "1 stretch-bend "));
    test_expect_output(&r, "1 stretch-bend 5-7-8           k_sb 0.1300 [line 438]", "--mm3 nitrile stretch-bend");
    test_expect_output(&r, "V1 0.0000 V2 9.2000 V3 0.0000 [line 1150, substructure 00..00 line shared", "--mm3 sharing");
    test_expect_output(&r, "1 atom 1 charge +0.04601 (formal +1) R* 2.0000 eps 0.6300 [line 1063, RH takes the Z0",
                       "--mm3 RH vdW exception");
    test_expect_output(&r, "1 reduced-H 9 -> 6 f 0.923", "--mm3 reduced hydrogen");
    test_expect_output(&r, "1 hydrogen-bonds 0 of 1 candidates", "--mm3 hydrogen bonds (the amide H...O is 1-4)");
    free(r.out);

    /* without the patterns: exit 1 naming the first torsion MacroModel left out */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s'", fld, mmo);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "torsion 1-2-3-4 (types RH O2 C2 N2) is not in the MM program's report", "no patterns");
    CHECK(strstr(r.err, "rh_enamide_training_set.mmo.gz:11") != NULL, "message names the structure: %s", r.err);
    free(r.out);

    /* rh-enamide .mol2 without prefer patterns: every structure has ambiguous terms (equally good
     * candidates with different values): each is listed as FAILED, exit 1 */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' " MOL2_NO_TERM, fld, mol2);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "hessfit params: structure 1: ", "rh-enamide .mol2 without prefer");
    CHECK(strstr(r.err, "rh_enamide_training_set.mol2:1: torsion 3-4-5-1 (types C2 N2 C2 RH) is ambiguous in") &&
              strstr(r.err, "lines 952/978 (wildcard * C2 N2 *) are equally good candidates with different values; "
                            "choose one with a pattern such as 'prefer 952' (and 5 more ambiguous terms)") &&
              strstr(r.err, "hessfit params: 9 of 9 structures failed") && !strstr(r.err, "warning"),
          "ambiguity messages: %s", r.err);
    CHECK(count_lines(r.out, "# structure ") == 9 && strstr(r.out, "FAILED: ") != NULL &&
              strstr(r.out, "angle 15-25-29 (types C2 C2 C2) is ambiguous") != NULL,
          "failed structures listed");
    CHECK(count_term_lines(r.out) == 0, "terms of failed structures listed");
    test_expect_output(&r, "# summary: 9 structures, 0 terms; 9 structures FAILED (listed above)", "failed summary");
    free(r.out);
    /* only the first three --prefer: structures 4 and 5 (their benzo ring) still fail, the rest are listed */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' " MOL2_NO_TERM " --prefer 952 --prefer 198",
             fld, mol2);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "structure 4: ", "rh-enamide .mol2 partly settled");
    CHECK(strstr(r.err, "structure 5: ") && !strstr(r.err, "structure 6: ") &&
              strstr(r.err, "2 of 9 structures failed") && strstr(r.err, "(types PX C2 C2 PX) is ambiguous"),
          "partly settled: %s", r.err);
    test_expect_output(&r, "# summary: 9 structures, 2520 terms; 2 structures FAILED (listed above)",
                       "partly settled summary");
    free(r.out);

    /* rh-enamide .mol2: by atom types, the Rh site by pattern, ties by prefer; an unused pattern is a warning */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' " MOL2_PATTERNS " --no-term 'bond XX YY'", fld,
             mol2);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, "warning: no-term pattern 'bond XX YY' covers no term", "rh-enamide .mol2");
    terms = count_term_lines(r.out);
    CHECK(terms == 3434, "%d .mol2 term lines", terms);
    test_expect_output(&r, "# summary: 9 structures, 3434 terms", ".mol2 summary");
    test_expect_output(&r, "line 81 bond C3-H1 k=341.1203 r0=1.1120 mu=0.0000 | 204 terms in 9 structures",
                       ".mol2 C3-H1 summary");
    test_expect_output(&r,
                       "1 bond     4-11            N2-H3               -> line 116 bond N2-H3 k=487.2119 r0=1.0280 mu=-1.5800 | types | "
                       "types N2 H3; 114 ranks below: 1C200 0000 not evaluated",
                       ".mol2 unevaluated condition");
    test_expect_output(&r,
                       "1 angle    3-4-11          C2-N2-H3            -> line 293 angle C2-N2-H3 k=41.7252 theta0=118.5000 "
                       "| types | types C2 N2 H3; O200 0000 0000 holds",
                       ".mol2 condition that holds");
    test_expect_output(&r,
                       "1 torsion  3-4-5-6         C2-N2-C2-C2         -> line 952 torsion *-C2-N2-* (0.0000,0,1) "
                       "(0.6250,180,2) (0.0000,0,3) | wildcard | wildcard * C2 N2 *; 952/978 differ: pattern 7 prefers 952",
                       ".mol2 tie settled by --prefer");
    test_expect_output(&r, "# prefer pattern 7 'prefer 952': 54 terms", ".mol2 prefer 952");
    test_expect_output(&r, "# prefer pattern 11 'prefer 509': 12 terms", ".mol2 prefer 509");
    test_expect_output(&r, "# types         437   760     981        0", ".mol2 types row");
    test_expect_output(&r, "# wildcard        0   146     349       32", ".mol2 wildcard row");
    CHECK(count_lines(r.out, "1 ") == 254 && count_term_lines(r.out) - 3434 == 0, ".mol2 structure 1 terms");
    CHECK(strstr(r.out, "[substructure") == NULL || strstr(r.out, "[substructure") > strstr(r.out, "# summary"),
          ".mol2 terms matched a substructure line");
    free(r.out);

    /* both files at once: structures numbered on */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' --structures '%s' " MMO_PATTERNS " " MOL2_PATTERNS,
             fld, mmo, mol2);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, ".mmo + .mol2");
    CHECK(count_term_lines(r.out) == 3452 + 3434, "both files");
    test_expect_output(&r, "# summary: 18 structures, 6886 terms", "both summary");
    free(r.out);

    /* AMBER frcmod: exact types, the X wildcard torsion, the improper with its centre third */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s'", frcmod, ace);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "acetaldehyde frcmod");
    CHECK(count_term_lines(r.out) == 22, "acetaldehyde terms");
    test_expect_output(&r, "# types           6     9       3        0", "frcmod types row");
    test_expect_output(&r, "# wildcard        0     0       3        1", "frcmod wildcard row");
    test_expect_output(&r,
                       "1 improper 1-3-4-2         c3-o-ha-c           -> line 25 improper *-*-c-o (10.5000,180,2) "
                       "| wildcard",
                       "frcmod improper");
    test_expect_output(&r, "line 21 torsion hc-c3-c-o (0.8000,0,1) (0.0800,180,3) | 3 terms", "frcmod torsion series");
    test_expect_output(&r, "# bonded parameters used by no term: 1 ", "frcmod unused");
    free(r.out);
    /* radii instead of the file's bonds: the same listing */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' --perceive-bonds --bond-tolerance=1.25", frcmod,
             ace);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "acetaldehyde --perceive-bonds");
    CHECK(count_term_lines(r.out) == 22, "acetaldehyde terms from radii");
    test_expect_output(&r, "bonds from covalent radii", "radii header");
    free(r.out);

    /* usage errors: exit 2 with the usage on stderr */
    static const char *const usage_cases[][2] = {
        {"params", "--ff FILE is required"},
        {"params --ff x.fld", "--structures FILE is required"},
        {"params --ff x.fld --structures y.mmo --frobnicate", "unknown option '--frobnicate'"},
        {"params --ff x.fld --structures y.mmo --bond-tolerance abc", "--bond-tolerance 'abc'"},
        {"params --ff x.fld --structures y.mmo --bond-tolerance 0", "--bond-tolerance '0'"},
        {"params --ff x.fld --structures y.mmo --ts-bond-tolerance nan", "--ts-bond-tolerance 'nan'"},
        {"params --ff x.txt --structures y.mmo", "must be a .fld or .frcmod"},
        {"params --ff x.fld --structures y.mmo --prefer 95x", "--prefer '95x' is not a force-field line number"},
        {"params --ff x.fld --structures y.mmo --prefer 0", "--prefer '0' is not a force-field line number"},
        {"params --ff x.fld --ff z.fld --structures y.mmo", "--ff given twice"},
        {"params --ff", "option '--ff' needs a value"},
        {"params stray --ff x.fld --structures y.mmo", "unexpected argument 'stray'"},
    };
    for (size_t k = 0; k < sizeof usage_cases / sizeof usage_cases[0]; k++) {
        r = test_run_program(hessfit, usage_cases[k][0]);
        test_expect_exit(&r, 2, usage_cases[k][1], usage_cases[k][0]);
        CHECK(strstr(r.err, "usage: hessfit params") != NULL, "%s: no usage text", usage_cases[k][0]);
        free(r.out);
    }
    r = test_run_program(hessfit, "params --help");
    test_expect_exit(&r, 0, NULL, "--help");
    CHECK(strstr(r.out, "usage: hessfit params") != NULL && strstr(r.out, "--no-term PATTERN") != NULL &&
              strstr(r.out, "--prefer LINE") != NULL,
          "help text");
    free(r.out);
    /* hessfit --version: the library's version (test_version checks it against the project's) */
    r = test_run_program(hessfit, "--version");
    test_expect_exit(&r, 0, NULL, "--version");
    char version_line[64];
    snprintf(version_line, sizeof version_line, "hessfit %s\n", hessfit_version());
    CHECK(strcmp(r.out, version_line) == 0, "--version printed '%s', expected '%s'", r.out, version_line);
    free(r.out);

    /* missing or broken files: exit 1 naming the file */
    snprintf(args, sizeof args, "params --ff '%s/missing.fld' --structures '%s'", test_temp_dir(), mmo);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "missing.fld", "missing force field");
    free(r.out);
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s/missing.mmo'", fld, test_temp_dir());
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "missing.mmo", "missing structures");
    free(r.out);
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s/structures.dat'", fld, test_temp_dir());
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "cannot tell the format", "structures of an unknown format");
    free(r.out);
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' --no-term 'stretch A B'", fld, mmo);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "kind 'stretch'", "bad pattern");
    CHECK(strstr(r.err, "structure 2") == NULL && strstr(r.out, "# summary") == NULL, "a bad pattern stops at once");
    free(r.out);
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s' --prefer 1", fld, mol2);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "pattern 'prefer 1': line 1 of", "prefer a line without a parameter");
    free(r.out);
    /* the .mmo with another force field whose lines do not match: the FF-line check catches it */
    snprintf(args, sizeof args, "params --ff '%s' --structures '%s'", frcmod, mmo);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, "not a parameter line of", "mismatched force field");
    free(r.out);

    printf("test_cli_params: all checks passed\n");
    return 0;
}
