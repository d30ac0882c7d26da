/*
 * The MM3* tables of an .fld (hessfit_fld_row) and what the builder and the .mmo energies reader do
 * with bad input: every failure names file:line or the atoms, their types and the table, and leaves
 * no partial output (the model or list zeroed).
 *   - the rows of mm3.fld: header factors, S-B, torsion-stretch, special pair, H-bond and vdW lines
 *     with their values in file units; the .fld still writes back byte for byte;
 *   - a type with no van der Waals line, a .fld missing the S-B line a carbon bend needs, a .fld
 *     missing a header factor: hessfit_mm3_build fails naming the atom/bend and the table;
 *   - a listed hydrogen bond without the HBD header factor: the builder fails naming the table;
 *   - a truncated S-B table, a van der Waals line without its epsilon, an H-bond line without D/100
 *     or with one type, a truncated .mmo: the readers fail naming file:line.
 * Lines are blanked to comments (" C"), not deleted, so that the .mmo's FF lines still point where
 * they did.
 */
#include "hessfit_mm3.h"
#include "hessfit_mmo_energies.h"
#include "test_util.h"

#include <string.h>

#define FLD "examples/data/rh-enamide/ff/mm3.fld"
#define MMO "examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"

static const char *const NO_TERM[7] = {"torsion * RH * *",    "torsion RH * * *",    "torsion * * C1 N1",
                                       "torsion N2 C2 C2 H1", "torsion C1 C2 C2 H1", "torsion C3 P3 C2 H1",
                                       "torsion C3 P3 C2 C2"};

static int row_at(const hessfit_forcefield *ff, int line)
{
    for (int r = 0; r < ff->n_fld_rows; r++)
        if (ff->fld_rows[r].line == line)
            return r;
    return -1;
}

static void test_rows(void)
{
    hessfit_forcefield ff;
    char *orig, *back;
    size_t n_orig, n_back;
    int counts[256] = {0};
    HF_CALL(hessfit_fld_read(test_source_path(FLD), &ff));
    for (int r = 0; r < ff.n_fld_rows; r++) /* the main tables */
        counts[(unsigned char)ff.fld_rows[r].code] += ff.fld_rows[r].substructure < 0;
    CHECK(counts['3'] == 3 && counts['8'] == 6 && counts['6'] == 1 && counts['7'] == 37 && counts['V'] == 36,
          "rows: %d S-B, %d T-S, %d special, %d H-bond, %d vdW", counts['3'], counts['8'], counts['6'], counts['7'],
          counts['V']);
    const hessfit_fld_row *str = &ff.fld_rows[row_at(&ff, 10)], *sb = &ff.fld_rows[row_at(&ff, 438)];
    CHECK(str->code == '0' && strcmp(str->types[0], "STR") == 0 && str->values[0] == 3.0 && str->values[1] == 601.99392,
          "header line 10");
    CHECK(sb->code == '3' && strcmp(sb->types[1], "C0") == 0 && sb->bond_marks[0] == '*' && sb->values[0] == 0.13 &&
              sb->blank == 6u && sb->param >= 0 &&
              ff.params[sb->param].kind == HESSFIT_PARAM_STRETCH_BEND && ff.params[sb->param].line == 438,
          "S-B line 438");
    const hessfit_fld_row *ts = &ff.fld_rows[row_at(&ff, 1012)];
    CHECK(ts->code == '8' && strcmp(ts->descriptor, "0000 O200 0000 0000") == 0 && ts->values[0] == 0.1, "T-S line 1012: '%s'",
          ts->descriptor);
    const hessfit_fld_row *h1 = &ff.fld_rows[row_at(&ff, 1044)], *rh = &ff.fld_rows[row_at(&ff, 1064)];
    CHECK(h1->code == 'V' && h1->values[2] == -0.077 && h1->descriptor[0] == '\0' && h1->param >= 0 &&
              ff.params[h1->param].line == 1044,
          "vdW line 1044");
    CHECK(strcmp(ff.fld_rows[row_at(&ff, 1043)].descriptor, "SX00") == 0, "vdW line 1043 descriptor");
    CHECK(rh->values[3] == 1.0 && strcmp(rh->types[0], "RH") == 0, "vdW line 1064");
    /* H-bond lines: 13 of 2 atoms (the angle-independent form), 22 of 3 and 2 of 4 (directional, not modelled) */
    int hb_atoms[5] = {0};
    for (int r = 0; r < ff.n_fld_rows; r++)
        if (ff.fld_rows[r].code == '7' && ff.fld_rows[r].substructure < 0)
            hb_atoms[ff.fld_rows[r].n_types]++;
    CHECK(hb_atoms[2] == 13 && hb_atoms[3] == 22 && hb_atoms[4] == 2, "H-bond rows: %d, %d, %d of 2, 3, 4 atoms",
          hb_atoms[2], hb_atoms[3], hb_atoms[4]);
    const hessfit_fld_row *hb = &ff.fld_rows[row_at(&ff, 1084)], *hb3 = &ff.fld_rows[row_at(&ff, 1115)];
    CHECK(hb->code == '7' && hb->n_types == 2 && strcmp(hb->types[0], "H1") == 0 && strcmp(hb->types[1], "O3") == 0 &&
              hb->values[0] == 90.0 && hb->values[1] == 40.0 && strncmp(hb->descriptor, "SX00", 4) == 0,
          "H-bond line 1084: %s %s %g %g '%s'", hb->types[0], hb->types[1], hb->values[0], hb->values[1], hb->descriptor);
    CHECK(hb3->code == '7' && hb3->n_types == 3 && strcmp(hb3->types[1], "O2") == 0 && hb3->bond_marks[0] == '=' &&
              hb3->values[0] == 120.0 && hb3->values[1] == 0.01,
          "H-bond line 1115 (C2 = O2 H2)");
    const hessfit_fld_row *mu = &ff.fld_rows[row_at(&ff, 1867)];
    CHECK(mu->code == '1' && mu->substructure >= 0 && mu->values[2] == -1.534 && strcmp(mu->types[0], "5") == 0 &&
              mu->param >= 0,
          "substructure stretch 1867");
    HF_CALL(hessfit_fld_write(&ff, test_temp_path("back.fld")));
    orig = test_load_file(test_source_path(FLD), &n_orig);
    back = test_load_file(test_temp_path("back.fld"), &n_back);
    CHECK(n_orig == n_back && memcmp(orig, back, n_orig) == 0, "the .fld does not write back byte for byte");
    free(orig);
    free(back);
    hessfit_forcefield_free(&ff);
}

/* Build structure `s` of the .mmo with the .fld text `fld`: the status (model must be empty on failure). */
static hessfit_status build_with(const char *fld, const hessfit_molecule_list *mmo, int s)
{
    hessfit_forcefield ff;
    hessfit_topology topo;
    hessfit_typed_molecule typed;
    hessfit_mm3_model model;
    hessfit_typing_options opt = {7, NO_TERM};
    hessfit_status st;
    HF_CALL(hessfit_fld_read(test_write_text("bad.fld", fld), &ff));
    HF_CALL(hessfit_topology_build(&mmo->items[s], NULL, &topo));
    HF_CALL(hessfit_assign_parameters(&mmo->items[s], &topo, &ff, &opt, &typed));
    memset(&model, 0x5a, sizeof model);
    st = hessfit_mm3_build(&mmo->items[s], &typed, &ff, &model);
    if (st != HESSFIT_SUCCESS)
        CHECK(model.n_atoms == 0 && model.stretches == NULL && model.pairs == NULL && model.atoms == NULL,
              "a failed build left a partial model");
    else
        hessfit_mm3_model_free(&model);
    hessfit_typed_molecule_free(&typed);
    hessfit_topology_free(&topo);
    hessfit_forcefield_free(&ff);
    return st;
}

static char *blank_line(const char *text, const char *line_text)
{
    const int line = test_find_line(text, 1, line_text, 0);
    return test_replace_lines(text, line, line, " C  (removed by the test)\n");
}

static void test_builder_errors(void)
{
    char *fld = test_load_file(test_source_path(FLD), NULL), *bad;
    hessfit_molecule_list mmo;
    HF_CALL(hessfit_mmo_read(test_source_path(MMO), &mmo));
    HF_CALL(build_with(fld, &mmo, 0)); /* the unchanged file builds */

    bad = blank_line(fld, "  C1     1.9400     0.0560");
    test_expect_error(build_with(bad, &mmo, 0), HESSFIT_ERROR_INVALID_ARGUMENT, "atom 7 (C1): no van der Waals line",
                      "-6 table", "a type with no vdW line");
    free(bad);

    bad = blank_line(fld, " 3  00 * C0 * 00");
    test_expect_error(build_with(bad, &mmo, 0), HESSFIT_ERROR_INVALID_ARGUMENT, "no stretch-bend line (S-B table, code 3)",
                      "at a carbon", "an S-B line MacroModel needs");
    free(bad);

    bad = blank_line(fld, " 0    ELE     1");
    test_expect_error(build_with(bad, &mmo, 0), HESSFIT_ERROR_FORMAT, "no ' 0  ELE' line", "-1 header", "no ELE factor");
    free(bad);

    /* a hydrogen bond listed (the H1 O3 line read as H1 O2: H9...O2 is 1-5 at 3.1 A) and no HBD factor */
    {
        char *hb = test_replace_first(fld, 0, " 7  H1   O3               90.0000    40.0000             SX00",
                                      " 7  H1   O2               90.0000    40.0000             0000", NULL);
        HF_CALL(build_with(hb, &mmo, 0));
        bad = blank_line(hb, " 0    HBD     1");
        test_expect_error(build_with(bad, &mmo, 0), HESSFIT_ERROR_FORMAT, "no ' 0  HBD' line", "-1 header",
                          "a hydrogen bond without the HBD factor");
        free(bad);
        free(hb);
    }

    bad = blank_line(fld, "  RH     2.6900");
    test_expect_error(build_with(bad, &mmo, 0), HESSFIT_ERROR_INVALID_ARGUMENT, "atom 1 (RH)", "van der Waals",
                      "no RH vdW line");
    free(bad);
    hessfit_molecule_list_free(&mmo);
    free(fld);
}

static void test_reader_errors(void)
{
    char *fld = test_load_file(test_source_path(FLD), NULL), *bad;
    hessfit_forcefield ff;
    const char *path;
    size_t n_mmo;
    char *mmo = test_load_gunzip(test_source_path(MMO), &n_mmo);
    hessfit_mmo_energies_list list;

    /* a truncated S-B table: the file ends after its first line */
    {
        const int line = test_find_line(fld, 1, " 3  H1 * C0 * H1", 0);
        bad = test_splice(fld, test_line_offset(fld, line + 1), strlen(fld), "");
        path = test_write_text("truncated.fld", bad);
        test_expect_file_error(hessfit_fld_read(path, &ff), HESSFIT_ERROR_TRUNCATED, path, line, "ends inside", NULL,
                               "a truncated S-B table");
        CHECK(ff.n_params == 0 && ff.fld_rows == NULL, "a failed read left rows");
        free(bad);
    }
    /* a van der Waals line without its epsilon */
    {
        int line;
        bad = test_replace_first(fld, 0, "  C3     2.0400     0.0270", "  C3     2.0400           ", &line);
        path = test_write_text("no_eps.fld", bad);
        test_expect_file_error(hessfit_fld_read(path, &ff), HESSFIT_ERROR_PARSE, path, line, "epsilon", NULL,
                               "a vdW line without eps");
        free(bad);
    }
    /* an S-B line whose constant is not a number */
    {
        int line;
        bad = test_replace_first(fld, 0, "3  00 * C0 * H1           0.0800", "3  00 * C0 * H1           0.08x0", &line);
        path = test_write_text("bad_sb.fld", bad);
        test_expect_file_error(hessfit_fld_read(path, &ff), HESSFIT_ERROR_PARSE, path, line, "stretch-bend field 1",
                               NULL, "a bad S-B number");
        free(bad);
    }
    /* a hydrogen-bond line of two atoms without its D/100, and one naming a single type */
    {
        int line;
        bad = test_replace_first(fld, 0, " 7  H3   O2               42.5000    10.0000",
                                 " 7  H3   O2               42.5000           ", &line);
        path = test_write_text("hbond_no_d.fld", bad);
        test_expect_file_error(hessfit_fld_read(path, &ff), HESSFIT_ERROR_PARSE, path, line, "hydrogen-bond line",
                               "has no D/100", "an H-bond line without D");
        free(bad);
        bad = test_replace_first(fld, 0, " 7  H3   O2               42.5000", " 7  H3                    42.5000", &line);
        path = test_write_text("hbond_one_type.fld", bad);
        test_expect_file_error(hessfit_fld_read(path, &ff), HESSFIT_ERROR_PARSE, path, line, "names 1 atom type",
                               NULL, "an H-bond line of one type");
        free(bad);
    }
    /* a truncated .mmo: cut inside the first nonbonded table */
    {
        const int line = test_find_line(mmo, 1, "NONBONDED DISTANCES AND ENERGIES", 0) + 10;
        bad = test_splice(mmo, test_line_offset(mmo, line), strlen(mmo), "");
        path = test_write_gz("truncated.mmo.gz", bad, strlen(bad));
        memset(&list, 0x5a, sizeof list);
        test_expect_file_error(hessfit_mmo_energies_read(path, &list), HESSFIT_ERROR_TRUNCATED, path, TEST_ANY_LINE,
                               "ends before the Connection Table", NULL, "a truncated .mmo");
        CHECK(list.n == 0 && list.items == NULL, "a failed read left structures");
        free(bad);
    }
    /* a breakdown line missing */
    {
        int line;
        bad = test_replace_first(mmo, 0, "  Bend-bend:", "  Bend-bond:", &line);
        path = test_write_text("no_bb.mmo", bad);
        test_expect_file_error(hessfit_mmo_energies_read(path, &list), HESSFIT_ERROR_FORMAT, path, TEST_ANY_LINE,
                               "no 'Bend-bend:' line", NULL, "a missing breakdown line");
        free(bad);
    }
    /* a nonbonded row dropped: the announced count fails */
    {
        const int line = test_find_line(mmo, 1, "            1     9  3.620", 0);
        bad = test_replace_lines(mmo, line, line, "");
        path = test_write_text("short.mmo", bad);
        test_expect_file_error(hessfit_mmo_energies_read(path, &list), HESSFIT_ERROR_COUNT, path, TEST_ANY_LINE,
                               "513 Nonbonded interactions announced, 512 rows", NULL, "a missing row");
        free(bad);
    }
    free(mmo);
    free(fld);
}

int main(void)
{
    test_rows();
    test_builder_errors();
    test_reader_errors();
    printf("test_mm3_bad_input: all checks passed\n");
    return 0;
}
