/* hessfit_molecules_read / hessfit_molecule_read, the one entry point for every structure format: each
 * format reached by its extension and by its name on the repository's real files (and on copies
 * with upper-case extensions, gzip-compressed or decompressed, written to a mkdtemp directory),
 * always giving bit for bit what the format's own reader gives; unknown extensions and format
 * names, a multi-structure file where one structure is expected, and NULL arguments fail with
 * the documented status and a message naming the file. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_molecule.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Totals over every comparison, for the report. */
static long n_compared_molecules, n_compared_hessian_values;

/* ---- files ------------------------------------------------------------------------------------ */

/* A plain copy of the (decompressed) content of src under the temporary directory. */
static const char *write_plain(const char *name, const char *src)
{
    size_t n;
    char *data = test_load_gunzip(src, &n);
    const char *path = test_write_file(name, data, n);
    free(data);
    return path;
}

/* A gzip-compressed copy of the (decompressed) content of src under the temporary directory. */
static const char *write_gz(const char *name, const char *src)
{
    size_t n;
    char *data = test_load_gunzip(src, &n);
    const char *path = test_write_gz(name, data, n);
    free(data);
    return path;
}

/* ---- comparison -------------------------------------------------------------------------------- */

static int same_strings(char **a, char **b, int n)
{
    if (a == NULL || b == NULL)
        return a == b;
    for (int i = 0; i < n; i++)
        if ((a[i] == NULL) != (b[i] == NULL) || (a[i] != NULL && strcmp(a[i], b[i]) != 0))
            return 0;
    return 1;
}

/* Both NULL, or the same n bytes. */
static int same_bytes(const void *a, const void *b, size_t n)
{
    if (a == NULL || b == NULL)
        return a == b;
    return memcmp(a, b, n) == 0;
}

static int same_text(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

/* Every field of two molecules, bit for bit (doubles compared by their bytes); name and source
 * only when identity is set (copies under another file name differ there by design). */
static void check_same_molecule(const hessfit_molecule *a, const hessfit_molecule *b, int identity, const char *what)
{
    const int n = a->n_atoms;
    const size_t dim = 3 * (size_t)n;
    CHECK(n > 0 && n == b->n_atoms, "%s: %d vs %d atoms", what, a->n_atoms, b->n_atoms);
    if (identity) {
        CHECK(same_text(a->name, b->name), "%s: name '%s' vs '%s'", what, a->name, b->name);
        CHECK(same_text(a->source, b->source), "%s: source '%s' vs '%s'", what, a->source, b->source);
    }
    CHECK(same_bytes(a->atomic_numbers, b->atomic_numbers, (size_t)n * sizeof(int)), "%s: elements", what);
    CHECK(a->coords != NULL && same_bytes(a->coords, b->coords, dim * sizeof(double)), "%s: coordinates", what);
    CHECK(same_strings(a->atom_types, b->atom_types, n), "%s: atom types", what);
    CHECK(same_strings(a->atom_names, b->atom_names, n), "%s: atom names", what);
    CHECK(same_bytes(a->partial_charges, b->partial_charges, (size_t)n * sizeof(double)), "%s: charges", what);
    CHECK(a->bonds_known == b->bonds_known && a->n_bonds == b->n_bonds, "%s: bonds known %d/%d, %d vs %d bonds", what,
          a->bonds_known, b->bonds_known, a->n_bonds, b->n_bonds);
    if (a->n_bonds > 0) {
        CHECK(same_bytes(a->bonds, b->bonds, 2 * (size_t)a->n_bonds * sizeof(int)), "%s: bond list", what);
        CHECK(same_bytes(a->bond_orders, b->bond_orders, (size_t)a->n_bonds * sizeof(double)), "%s: bond orders",
              what);
    }
    CHECK(same_bytes(a->hessian, b->hessian, dim * dim * sizeof(double)), "%s: Hessian", what);
    if (a->hessian != NULL)
        n_compared_hessian_values += (long)(dim * dim);
    CHECK(a->has_energy == b->has_energy && same_bytes(&a->energy, &b->energy, sizeof a->energy), "%s: energy", what);
    CHECK(a->has_charge == b->has_charge && a->charge == b->charge && a->multiplicity == b->multiplicity,
          "%s: charge/multiplicity", what);
    CHECK(a->n_modes == b->n_modes, "%s: %d vs %d modes", what, a->n_modes, b->n_modes);
    if (a->n_modes > 0) {
        CHECK(same_bytes(a->frequencies, b->frequencies, (size_t)a->n_modes * sizeof(double)), "%s: frequencies",
              what);
        CHECK(same_bytes(a->modes, b->modes, (size_t)a->n_modes * dim * sizeof(double)), "%s: normal modes", what);
    }
    CHECK(a->n_reported_terms == b->n_reported_terms, "%s: %d vs %d reported terms", what, a->n_reported_terms,
          b->n_reported_terms);
    for (int t = 0; t < a->n_reported_terms; t++) {
        const hessfit_reported_term *x = &a->reported_terms[t], *y = &b->reported_terms[t];
        CHECK(x->kind == y->kind && memcmp(x->atoms, y->atoms, sizeof x->atoms) == 0 && x->ff_line == y->ff_line &&
                  strcmp(x->source, y->source) == 0 && memcmp(x->values, y->values, sizeof x->values) == 0 &&
                  memcmp(&x->actual, &y->actual, sizeof x->actual) == 0 && x->line == y->line,
              "%s: reported term %d (.mmo line %d vs %d)", what, t, x->line, y->line);
    }
    n_compared_molecules++;
}

static void check_same_list(const hessfit_molecule_list *a, const hessfit_molecule_list *b, int identity, const char *what)
{
    char item[600];
    CHECK(a->n > 0 && a->n == b->n, "%s: %d vs %d structures", what, a->n, b->n);
    for (int m = 0; m < a->n; m++) {
        snprintf(item, sizeof item, "%s, structure %d", what, m + 1);
        check_same_molecule(&a->items[m], &b->items[m], identity, item);
    }
}

static void check_zeroed_list(const hessfit_molecule_list *list, const char *what)
{
    CHECK(list->n == 0 && list->items == NULL, "%s: list not zeroed after a failure (n %d)", what, list->n);
}

static void check_zeroed_molecule(const hessfit_molecule *m, const char *what)
{
    static const hessfit_molecule zero;
    CHECK(memcmp(m, &zero, sizeof zero) == 0, "%s: molecule not zeroed after a failure", what);
}

/* ---- the dispatch ---------------------------------------------------------------------------------- */

typedef struct format_case {
    const char *name;                                         /* format name */
    hessfit_status (*read_one)(const char *path, hessfit_molecule *mol);        /* its own reader, or */
    hessfit_status (*read_list)(const char *path, hessfit_molecule_list *list); /* for multi-structure formats */
} format_case;

static const format_case FCHK = {"fchk", hessfit_fchk_read, NULL};
static const format_case GAUSSIAN_LOG = {"gaussian-log", hessfit_gaussian_log_read, NULL};
static const format_case JAGUAR_IN = {"jaguar-in", hessfit_jaguar_in_read, NULL};
static const format_case JAGUAR_OUT = {"jaguar-out", hessfit_jaguar_out_read, NULL};
static const format_case ORCA_HESS = {"orca-hess", hessfit_orca_hess_read, NULL};
static const format_case MMO = {"mmo", NULL, hessfit_mmo_read};
static const format_case MOL2 = {"mol2", NULL, hessfit_mol2_read};
static const format_case XYZ = {"xyz", hessfit_xyz_molecule_read, NULL};

/* The format's own reader on path, as a list. */
static void read_direct(const format_case *f, const char *path, hessfit_molecule_list *list)
{
    memset(list, 0, sizeof *list);
    if (f->read_list != NULL) {
        HF_CALL(f->read_list(path, list));
        return;
    }
    list->items = calloc(1, sizeof *list->items);
    CHECK(list->items != NULL, "out of memory");
    HF_CALL(f->read_one(path, &list->items[0]));
    list->n = 1;
}

/*
 * path read by extension (format NULL) and by the format's name through hessfit_molecules_read, and
 * through hessfit_molecule_read, equals the format's own reader on the same path (everything, name
 * and source included) and, when original is given, the content read from the original file.
 * Returns the direct read in *out (for later comparisons) if out is not NULL.
 */
static void check_dispatch(const format_case *f, const char *path, int n_structures, const hessfit_molecule_list *original,
                           hessfit_molecule_list *out)
{
    hessfit_molecule_list direct, by_ext, by_name;
    hessfit_molecule one;
    char what[600];

    read_direct(f, path, &direct);
    CHECK(direct.n == n_structures, "%s: %d structures, expected %d", path, direct.n, n_structures);
    HF_CALL(hessfit_molecules_read(path, NULL, &by_ext));
    HF_CALL(hessfit_molecules_read(path, f->name, &by_name));
    snprintf(what, sizeof what, "%s by extension", path);
    check_same_list(&by_ext, &direct, 1, what);
    snprintf(what, sizeof what, "%s by name '%s'", path, f->name);
    check_same_list(&by_name, &direct, 1, what);
    if (original != NULL) {
        snprintf(what, sizeof what, "%s against the original file", path);
        check_same_list(&direct, original, 0, what);
    }

    /* the single-structure entry point */
    for (int named = 0; named < 2; named++) {
        hessfit_status st = hessfit_molecule_read(path, named ? f->name : NULL, &one);
        snprintf(what, sizeof what, "hessfit_molecule_read(%s, %s)", path, named ? f->name : "NULL");
        if (n_structures == 1) {
            CHECK(st == HESSFIT_SUCCESS, "%s -> %s: %s", what, hessfit_status_string(st), hessfit_last_error());
            check_same_molecule(&one, &direct.items[0], 1, what);
            hessfit_molecule_free(&one);
        } else {
            char count[32];
            snprintf(count, sizeof count, "%d structures", n_structures);
            CHECK(st == HESSFIT_ERROR_COUNT, "%s -> %s, expected HESSFIT_ERROR_COUNT", what, hessfit_status_string(st));
            CHECK(strstr(hessfit_last_error(), path) != NULL && strstr(hessfit_last_error(), count) != NULL,
                  "%s: message lacks the file or '%s': %s", what, count, hessfit_last_error());
            check_zeroed_molecule(&one, what);
        }
    }
    hessfit_molecule_list_free(&by_ext);
    hessfit_molecule_list_free(&by_name);
    if (out != NULL)
        *out = direct;
    else
        hessfit_molecule_list_free(&direct);
}

/* An UNSUPPORTED failure whose message names the file, what was asked and every known format. */
static void check_unsupported(const char *path, const char *format, const char *must_name)
{
    hessfit_molecule_list list = {7, (hessfit_molecule *)&list}; /* garbage that must be overwritten */
    hessfit_molecule mol;
    hessfit_status st = hessfit_molecules_read(path, format, &list);
    static const char *const names[] = {"fchk", "gaussian-log", "jaguar-in", "jaguar-out", "orca-hess", "mmo",
                                        "mol2", "xyz"};
    CHECK(st == HESSFIT_ERROR_UNSUPPORTED, "%s (format %s) -> %s, expected HESSFIT_ERROR_UNSUPPORTED: %s", path,
          format ? format : "NULL", hessfit_status_string(st), hessfit_last_error());
    check_zeroed_list(&list, path);
    CHECK(strstr(hessfit_last_error(), path) != NULL, "message does not name %s: %s", path, hessfit_last_error());
    CHECK(must_name == NULL || strstr(hessfit_last_error(), must_name) != NULL, "message lacks '%s': %s", must_name,
          hessfit_last_error());
    CHECK(strstr(hessfit_last_error(), hessfit_molecule_formats()) != NULL, "message lacks the list of formats: %s",
          hessfit_last_error());
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        CHECK(strstr(hessfit_molecule_formats(), names[k]) != NULL, "format list lacks %s", names[k]);
    printf("  expected error: %s\n", hessfit_last_error());
    /* the single-structure entry point passes the failure on */
    memset(&mol, 0xA5, sizeof mol);
    CHECK(hessfit_molecule_read(path, format, &mol) == HESSFIT_ERROR_UNSUPPORTED, "hessfit_molecule_read(%s) status", path);
    check_zeroed_molecule(&mol, path);
}

/* ---- the formats on the repository's files ---------------------------------------------------- */

static const char *const rh_jaguar[9] = {
    "1ZDMPfromJCTCSI_loner1", "2DMPEConformation1fromJCTCSI_isomer1", "3DMPEConformation2fromJCTCSI_isomer2",
    "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4",
    "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6",
    "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};

static void test_gaussian(void)
{
    char *fchk = test_source_path_dup("tests/data/ethane/GS.fchk");
    char *log = test_source_path_dup("tests/data/ethane/GS.log");
    hessfit_molecule_list ref_fchk, ref_log;

    check_dispatch(&FCHK, fchk, 1, NULL, &ref_fchk);
    CHECK(ref_fchk.items[0].n_atoms == 8 && ref_fchk.items[0].hessian != NULL, "ethane fchk: %d atoms, Hessian %p",
          ref_fchk.items[0].n_atoms, (void *)ref_fchk.items[0].hessian);
    check_dispatch(&FCHK, write_plain("ethane.FCHK", fchk), 1, &ref_fchk, NULL);
    check_dispatch(&FCHK, write_plain("ethane.fch", fchk), 1, &ref_fchk, NULL);
    check_dispatch(&FCHK, write_gz("ethane.Fch.GZ", fchk), 1, &ref_fchk, NULL);
    check_dispatch(&FCHK, write_gz("ethane.fchk.gz", fchk), 1, &ref_fchk, NULL);

    check_dispatch(&GAUSSIAN_LOG, log, 1, NULL, &ref_log);
    CHECK(ref_log.items[0].n_atoms == 8 && ref_log.items[0].hessian != NULL && ref_log.items[0].n_modes == 18,
          "ethane log: %d atoms, %d modes", ref_log.items[0].n_atoms, ref_log.items[0].n_modes);
    check_dispatch(&GAUSSIAN_LOG, write_gz("ethane.LOG.gz", log), 1, &ref_log, NULL);
    check_dispatch(&GAUSSIAN_LOG, write_plain("ethane.Log", log), 1, &ref_log, NULL);
    printf("Gaussian: fchk (.fchk .FCHK .fch .Fch.GZ .fchk.gz) and log (.log .LOG.gz .Log) by extension and by "
           "name equal hessfit_fchk_read / hessfit_gaussian_log_read bit for bit\n");
    hessfit_molecule_list_free(&ref_fchk);
    hessfit_molecule_list_free(&ref_log);
    free(fchk);
    free(log);
}

static void test_jaguar(void)
{
    int min_atoms = 1 << 30, max_atoms = 0;
    for (int m = 0; m < 9; m++) {
        char rel[200], *in, *out;
        hessfit_molecule_list ref_in, ref_out;
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        in = test_source_path_dup(rel);
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.out.gz", rh_jaguar[m]);
        out = test_source_path_dup(rel);
        check_dispatch(&JAGUAR_IN, in, 1, NULL, &ref_in);
        check_dispatch(&JAGUAR_OUT, out, 1, NULL, &ref_out);
        min_atoms = ref_in.items[0].n_atoms < min_atoms ? ref_in.items[0].n_atoms : min_atoms;
        max_atoms = ref_in.items[0].n_atoms > max_atoms ? ref_in.items[0].n_atoms : max_atoms;
        CHECK(ref_in.items[0].hessian != NULL && ref_out.items[0].n_modes > 0, "%s: Hessian / modes", rh_jaguar[m]);
        CHECK(ref_in.items[0].n_atoms == ref_out.items[0].n_atoms, "%s: .in %d vs .out %d atoms", rh_jaguar[m],
              ref_in.items[0].n_atoms, ref_out.items[0].n_atoms);
        if (m == 0) { /* renamed copies of the smallest pair */
            check_dispatch(&JAGUAR_IN, write_plain("loner1.01.IN", in), 1, &ref_in, NULL);
            check_dispatch(&JAGUAR_IN, write_gz("loner1.01.In.Gz", in), 1, &ref_in, NULL);
            check_dispatch(&JAGUAR_OUT, write_plain("loner1.OUT", out), 1, &ref_out, NULL);
            check_dispatch(&JAGUAR_OUT, write_gz("loner1.Out.GZ", out), 1, &ref_out, NULL);
        }
        hessfit_molecule_list_free(&ref_in);
        hessfit_molecule_list_free(&ref_out);
        free(in);
        free(out);
    }
    printf("Jaguar: nine .01.in.gz and nine .out.gz (%d to %d atoms) and upper-/mixed-case, plain and gzip copies by "
           "extension and by name equal hessfit_jaguar_in_read / hessfit_jaguar_out_read bit for bit\n",
           min_atoms, max_atoms);
}

static void test_orca_and_xyz(void)
{
    char *hess = test_source_path_dup("tests/data/orca/ch3f.hess");
    char *xyz = test_source_path_dup("examples/data/sn2/ch3f-optimized.xyz");
    hessfit_molecule_list ref_hess, ref_xyz;

    check_dispatch(&ORCA_HESS, hess, 1, NULL, &ref_hess);
    CHECK(ref_hess.items[0].n_atoms == 5 && ref_hess.items[0].hessian != NULL, "ch3f.hess: %d atoms",
          ref_hess.items[0].n_atoms);
    check_dispatch(&ORCA_HESS, write_gz("ch3f.HESS.gz", hess), 1, &ref_hess, NULL);
    check_dispatch(&ORCA_HESS, write_plain("ch3f.Hess", hess), 1, &ref_hess, NULL);

    check_dispatch(&XYZ, xyz, 1, NULL, &ref_xyz);
    CHECK(ref_xyz.items[0].n_atoms == 5 && ref_xyz.items[0].hessian == NULL, "ch3f xyz: %d atoms",
          ref_xyz.items[0].n_atoms);
    CHECK(memcmp(ref_xyz.items[0].atomic_numbers, ref_hess.items[0].atomic_numbers, 5 * sizeof(int)) == 0,
          "CH3F elements differ between the .xyz and the ORCA file");
    check_dispatch(&XYZ, write_gz("ch3f.XYZ.GZ", xyz), 1, &ref_xyz, NULL);
    check_dispatch(&XYZ, write_plain("ch3f.Xyz", xyz), 1, &ref_xyz, NULL);
    printf("ORCA .hess and .xyz (CH3F, 5 atoms), plain, .gz and upper-case: equal hessfit_orca_hess_read / "
           "hessfit_xyz_molecule_read bit for bit\n");
    hessfit_molecule_list_free(&ref_hess);
    hessfit_molecule_list_free(&ref_xyz);
    free(hess);
    free(xyz);
}

static void test_macromodel_and_mol2(void)
{
    char *mmo = test_source_path_dup("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz");
    char *mol2 = test_source_path_dup("examples/data/rh-enamide/rh_enamide_training_set.mol2");
    char *ethane = test_source_path_dup("tests/data/ethane/GS.mol2");
    hessfit_molecule_list ref_mmo, ref_mol2;
    int n_terms = 0;

    check_dispatch(&MMO, mmo, 9, NULL, &ref_mmo);
    for (int m = 0; m < 9; m++)
        n_terms += ref_mmo.items[m].n_reported_terms;
    /* 3452 terms of the nine topologies less the 654 torsions MacroModel left out (test_cli_params) */
    CHECK(n_terms == 2798, ".mmo: %d reported terms, expected 2798", n_terms);
    check_dispatch(&MMO, write_plain("training.MMO", mmo), 9, &ref_mmo, NULL);
    check_dispatch(&MMO, write_gz("training.Mmo.GZ", mmo), 9, &ref_mmo, NULL);

    check_dispatch(&MOL2, mol2, 9, NULL, &ref_mol2);
    for (int m = 0; m < 9; m++) /* the same nine structures in both files */
        CHECK(ref_mol2.items[m].n_atoms == ref_mmo.items[m].n_atoms &&
                  memcmp(ref_mol2.items[m].atomic_numbers, ref_mmo.items[m].atomic_numbers,
                         (size_t)ref_mmo.items[m].n_atoms * sizeof(int)) == 0,
              "structure %d: .mol2 and .mmo atoms differ", m + 1);
    check_dispatch(&MOL2, write_gz("training.MOL2.gz", mol2), 9, &ref_mol2, NULL);
    check_dispatch(&MOL2, ethane, 1, NULL, NULL);
    check_dispatch(&MOL2, write_plain("ethane.Mol2", ethane), 1, NULL, NULL);
    printf(".mmo (9 structures, %d reported terms) and .mol2 (9 + ethane's 1), plain/.gz/upper-case: equal "
           "hessfit_mmo_read / hessfit_mol2_read bit for bit; hessfit_molecule_read on them: HESSFIT_ERROR_COUNT naming the file\n",
           n_terms);
    hessfit_molecule_list_free(&ref_mmo);
    hessfit_molecule_list_free(&ref_mol2);
    free(mmo);
    free(mol2);
    free(ethane);
}

/* ---- failures ------------------------------------------------------------------------------------ */

static void test_unknown_and_wrong(void)
{
    char *fchk = test_source_path_dup("tests/data/ethane/GS.fchk");
    char *xyz = test_source_path_dup("examples/data/sn2/ch3f-optimized.xyz");
    const char *dat = write_plain("ethane.dat", fchk);
    const char *gz_only = write_gz("ethane.gz", fchk);
    hessfit_molecule_list list, direct;
    hessfit_molecule mol;
    hessfit_status st;

    /* an extension no reader has, a bare .gz, a name without extension: the format must be named */
    check_unsupported(dat, NULL, "cannot tell the format");
    check_unsupported(gz_only, NULL, "cannot tell the format");
    check_unsupported(write_plain("ethane", fchk), NULL, "cannot tell the format");
    check_unsupported(write_plain("ethane.npy", fchk), NULL, "cannot tell the format");
    /* unknown format names (names are exact; npy-xyz needs two files: hessfit_npy_xyz_read) */
    check_unsupported(fchk, "gaussian", "'gaussian'");
    check_unsupported(fchk, "", "''");
    check_unsupported(xyz, "npy-xyz", "'npy-xyz'");

    /* the name wins over the extension: the .dat copy read as fchk is the fchk */
    HF_CALL(hessfit_molecules_read(dat, "fchk", &list));
    read_direct(&FCHK, fchk, &direct);
    check_same_list(&list, &direct, 0, "ethane.dat read as fchk");
    hessfit_molecule_list_free(&list);
    hessfit_molecule_list_free(&direct);
    /* ... and a wrong name is that reader's failure on the file, naming it */
    st = hessfit_molecules_read(fchk, "xyz", &list);
    CHECK(st != HESSFIT_SUCCESS && strstr(hessfit_last_error(), fchk) != NULL, "GS.fchk read as xyz -> %s: %s",
          hessfit_status_string(st), hessfit_last_error());
    check_zeroed_list(&list, "fchk as xyz");
    printf("  expected error: %s\n", hessfit_last_error());
    st = hessfit_molecules_read(xyz, "orca-hess", &list);
    CHECK(st != HESSFIT_SUCCESS && strstr(hessfit_last_error(), xyz) != NULL, ".xyz read as orca-hess -> %s: %s",
          hessfit_status_string(st), hessfit_last_error());
    check_zeroed_list(&list, "xyz as orca-hess");
    st = hessfit_molecule_read(xyz, "mmo", &mol);
    CHECK(st != HESSFIT_SUCCESS && strstr(hessfit_last_error(), xyz) != NULL, ".xyz read as mmo -> %s: %s",
          hessfit_status_string(st), hessfit_last_error());
    check_zeroed_molecule(&mol, "xyz as mmo");

    /* a missing file: the reader's I/O error naming it */
    {
        const char *missing = test_temp_path("missing.fchk");
        st = hessfit_molecules_read(missing, NULL, &list);
        CHECK(st == HESSFIT_ERROR_IO && strstr(hessfit_last_error(), missing) != NULL, "missing file -> %s: %s",
              hessfit_status_string(st), hessfit_last_error());
        check_zeroed_list(&list, "missing file");
        printf("  expected error: %s\n", hessfit_last_error());
    }

    /* NULL arguments */
    list.n = 3;
    CHECK(hessfit_molecules_read(NULL, NULL, &list) == HESSFIT_ERROR_NULL_ARGUMENT && strstr(hessfit_last_error(), "path"),
          "NULL path: %s", hessfit_last_error());
    check_zeroed_list(&list, "NULL path");
    CHECK(hessfit_molecules_read(NULL, "fchk", &list) == HESSFIT_ERROR_NULL_ARGUMENT, "NULL path with a format");
    CHECK(hessfit_molecules_read(fchk, NULL, NULL) == HESSFIT_ERROR_NULL_ARGUMENT && strstr(hessfit_last_error(), "list"),
          "NULL list: %s", hessfit_last_error());
    CHECK(hessfit_molecule_read(fchk, NULL, NULL) == HESSFIT_ERROR_NULL_ARGUMENT && strstr(hessfit_last_error(), "mol"),
          "NULL mol: %s", hessfit_last_error());
    memset(&mol, 0x5A, sizeof mol);
    CHECK(hessfit_molecule_read(NULL, NULL, &mol) == HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_molecule_read NULL path: %s",
          hessfit_last_error());
    check_zeroed_molecule(&mol, "hessfit_molecule_read NULL path");
    printf("unknown extensions (.dat, bare .gz, none, .npy) and format names ('gaussian', '', 'npy-xyz'): "
           "HESSFIT_ERROR_UNSUPPORTED naming the file and the formats; NULL arguments: HESSFIT_ERROR_NULL_ARGUMENT\n");
    free(fchk);
    free(xyz);
}

int main(void)
{
    test_gaussian();
    test_jaguar();
    test_orca_and_xyz();
    test_macromodel_and_mol2();
    test_unknown_and_wrong();
    printf("compared %ld molecules field by field (%ld Hessian values bit for bit)\n", n_compared_molecules,
           n_compared_hessian_values);

    test_temp_check_known(); /* no file the test did not write itself */
    printf("test_read_dispatch: all checks passed\n");
    return 0;
}
