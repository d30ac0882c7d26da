/* Seminario force constants: q2mm's golden numbers (SN2 TS bonds, ethane bonds/angles and
 * element averages, rh-enamide per force-field line over nine Jaguar Hessians), the modified
 * method of Allen et al. (rotation invariance, reduction to the original, the neighbouring-angle
 * factor against hand-derived values), transition-state treatments, averaging and bad input. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_seminario.h"
#include "hessfit_typing.h"
#include "test_util.h"

#include "golden_json.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Largest relative deviation seen against a golden value, for the report. */
static double rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

/* A molecule built in memory (owned copies, so hessfit_molecule_free releases it). */
static void make_molecule(hessfit_molecule *m, const char *name, int n, const int *z, const double *coords,
                          const double *hessian, const int *bonds, int n_bonds)
{
    size_t dim = 3 * (size_t)n;
    memset(m, 0, sizeof *m);
    m->name = malloc(strlen(name) + 1);
    strcpy(m->name, name);
    m->n_atoms = n;
    m->atomic_numbers = malloc((size_t)n * sizeof *m->atomic_numbers);
    m->coords = malloc(dim * sizeof *m->coords);
    CHECK(m->name != NULL && m->atomic_numbers != NULL && m->coords != NULL, "no memory");
    memcpy(m->atomic_numbers, z, (size_t)n * sizeof *z);
    memcpy(m->coords, coords, dim * sizeof *coords);
    if (hessian != NULL) {
        m->hessian = malloc(dim * dim * sizeof *m->hessian);
        CHECK(m->hessian != NULL, "no memory");
        memcpy(m->hessian, hessian, dim * dim * sizeof *hessian);
    }
    if (bonds != NULL) {
        m->bonds_known = 1;
        m->n_bonds = n_bonds;
        m->bonds = malloc(2 * (size_t)n_bonds * sizeof *m->bonds + 1);
        CHECK(m->bonds != NULL, "no memory");
        memcpy(m->bonds, bonds, 2 * (size_t)n_bonds * sizeof *bonds);
    }
}

/* A random symmetric Hessian whose 3x3 blocks have distinct eigenvalues: strong diagonal, random
 * off-diagonal couplings (Hartree/Bohr^2 scale). */
static void random_hessian(int n, double *h)
{
    int dim = 3 * n;
    for (int r = 0; r < dim; r++)
        for (int c = 0; c <= r; c++) {
            double v = (r / 3 == c / 3 ? 0.5 : 0.2) * (test_random() - 0.5);
            if (r == c)
                v += 0.6 + 0.3 * test_random();
            h[r * dim + c] = h[c * dim + r] = v;
        }
}

/* R (row-major 3x3) of the rotation test_rotate applies, from the images of the unit vectors. */
static void rotation_matrix(const double axis[3], double angle, double r[9])
{
    double e[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    test_rotate(e, 3, axis, angle); /* e[3 c + a] = R[a][c] */
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++)
            r[3 * a + c] = e[3 * c + a];
}

/* H' = R H R^T block by block (the Hessian of the rotated molecule). */
static void rotate_hessian(int n, const double r[9], const double *h, double *out)
{
    int dim = 3 * n;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    double s = 0.0;
                    for (int k = 0; k < 3; k++)
                        for (int l = 0; l < 3; l++)
                            s += r[3 * i + k] * h[(3 * a + k) * dim + 3 * b + l] * r[3 * j + l];
                    out[(3 * a + i) * dim + 3 * b + j] = s;
                }
}

/* ---- SN2 transition state vs q2mm ------------------------------------------------------------ */

static void test_sn2_golden(void)
{
    hessfit_molecule mol;
    hessfit_seminario *s;
    hessfit_seminario_options opt = hessfit_seminario_q2mm_options();
    gj_value *g = gj_read_file(test_source_path("tests/data/goldens/sn2_reference.json"));
    const gj_value *bonds = gj_array(g, "bonds");
    double max_au = 0.0, max_mdyn = 0.0;
    int n_negative = 0;

    HF_CALL(hessfit_npy_xyz_read(test_source_path("examples/data/sn2/sn2-ts-optimized.xyz"),
                            test_source_path("examples/data/sn2/sn2-ts-hessian.npy"), &mol));
    CHECK(gj_number(gj_object(g, "metadata"), "dft_scaling") == opt.scaling, "golden scaling differs from 0.963");
    HF_CALL(hessfit_seminario_create(&mol, &opt, &s));
    CHECK(bonds->n == 5, "golden has %zu bonds", bonds->n);
    for (size_t b = 0; b < bonds->n; b++) {
        const gj_value *gb = &bonds->items[b];
        int i = (int)gj_number(gb, "atom_i"), j = (int)gj_number(gb, "atom_j");
        double au = gj_number(gb, "legacy_force_constant_au"), mdyn = gj_number(gb, "legacy_force_constant_mdyn_a");
        hessfit_seminario_estimate e, e_rev;
        HF_CALL(hessfit_seminario_bond(s, i, j, &e));
        HF_CALL(hessfit_seminario_bond(s, j, i, &e_rev));
        CHECK(e.k_au == e_rev.k_au || rel_err(e.k_au, e_rev.k_au) < 1e-14, "bond order matters: %.17g vs %.17g",
              e.k_au, e_rev.k_au);
        CHECK(rel_err(e.k_au, au) <= 1e-6, "SN2 %s au: %.17g vs golden %.17g", gj_string(gb, "label"), e.k_au, au);
        CHECK(rel_err(e.k_mdyn, mdyn) <= 1e-6, "SN2 %s mdyn/A: %.17g vs golden %.17g", gj_string(gb, "label"),
              e.k_mdyn, mdyn);
        /* canonical = mdyn x q2mm's 0.5 x 602.2140857 / 4.184 (= MM3's 71.96631 to 6e-9) */
        CHECK_CLOSE(e.k, e.k_mdyn * HESSFIT_Q2MM_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2, 1e-14, e.k, "SN2 canonical");
        CHECK_CLOSE(e.k, e.k_mdyn * HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2, 1e-8, e.k, "SN2 canonical (MM3)");
        max_au = fmax(max_au, rel_err(e.k_au, au));
        max_mdyn = fmax(max_mdyn, rel_err(e.k_mdyn, mdyn));
        if (au < 0.0) {
            CHECK(e.k_au < 0.0, "TS bond %s should stay negative with ts=keep", gj_string(gb, "label"));
            n_negative++;
        }
    }
    CHECK(n_negative == 2, "the two C-F bonds of the TS are negative in the golden (%d)", n_negative);
    printf("SN2 TS bonds vs q2mm: 5 bonds (2 negative), max rel err au %.3g, mdyn/A %.3g\n", max_au, max_mdyn);

    /* the TS replacement (Lime & Norrby) makes the forming/breaking C-F bonds positive */
    {
        hessfit_seminario *r;
        hessfit_seminario_options ropt = opt;
        hessfit_seminario_estimate cf, ch_keep, ch;
        ropt.ts = HESSFIT_SEMINARIO_TS_REPLACE;
        HF_CALL(hessfit_seminario_create(&mol, &ropt, &r));
        HF_CALL(hessfit_seminario_bond(r, 0, 1, &cf));
        HF_CALL(hessfit_seminario_bond(r, 0, 3, &ch));
        HF_CALL(hessfit_seminario_bond(s, 0, 3, &ch_keep));
        CHECK(cf.k_au > 0.0, "C-F with ts=replace: %g", cf.k_au);
        printf("SN2 ts=replace: C-F %.6g mdyn/A (keep: negative), C-H %.6g (keep %.6g)\n", cf.k_mdyn, ch.k_mdyn,
               ch_keep.k_mdyn);
        hessfit_seminario_free(r);
    }
    hessfit_seminario_free(s);
    hessfit_molecule_free(&mol);
    gj_free(g);
}

/* ---- ethane (Gaussian fchk) vs q2mm's canonical goldens ------------------------------------- */

/* The golden's element key of a term: bonds "C-H" (sorted), angles "C-C-H" (outer atoms sorted
 * around the centre), as the golden's averaged lists name them. */
static void element_key(const gj_value *elements, int is_angle, char *key, size_t size)
{
    const char *e0 = elements->items[0].string, *e1 = elements->items[1].string;
    if (!is_angle) {
        if (strcmp(e0, e1) > 0) {
            const char *t = e0;
            e0 = e1;
            e1 = t;
        }
        snprintf(key, size, "%s-%s", e0, e1);
    } else {
        const char *e2 = elements->items[2].string;
        if (strcmp(e0, e2) > 0) {
            const char *t = e0;
            e0 = e2;
            e2 = t;
        }
        snprintf(key, size, "%s-%s-%s", e0, e1, e2);
    }
}

static void test_ethane_golden(void)
{
    hessfit_molecule mol;
    hessfit_seminario *s, *s_codata;
    hessfit_seminario_options opt = hessfit_seminario_q2mm_options(), codata = hessfit_seminario_default_options();
    gj_value *g = gj_read_file(test_source_path("tests/data/goldens/ethane_reference.json"));
    const gj_value *gs = gj_object(g, "GS");
    const char *lists[2] = {"individual_bonds", "individual_angles"};
    const char *averaged[2] = {"averaged_bonds", "averaged_angles"};
    double max_k = 0.0, max_v = 0.0, max_avg = 0.0;
    hessfit_topology topo;
    hessfit_topology_options topt = hessfit_topology_default_options();

    HF_CALL(hessfit_fchk_read(test_source_path("tests/data/ethane/GS.fchk"), &mol));
    CHECK(mol.n_atoms == (int)gj_number(gs, "n_atoms"), "ethane atoms %d", mol.n_atoms);
    HF_CALL(hessfit_seminario_create(&mol, &opt, &s));
    HF_CALL(hessfit_seminario_create(&mol, &codata, &s_codata));
    /* the golden's bonds are the ones bond perception finds with q2mm's tolerance 1.3 */
    topt.bond_tolerance = gj_number(gs, "bond_tolerance");
    HF_CALL(hessfit_topology_build(&mol, &topt, &topo));
    CHECK(topo.n_bonds == (int)gj_array(gs, "individual_bonds")->n, "ethane: %d bonds perceived, golden has %zu",
          topo.n_bonds, gj_array(gs, "individual_bonds")->n);
    CHECK(topo.n_angles == (int)gj_array(gs, "individual_angles")->n, "ethane: %d angles perceived, golden %zu",
          topo.n_angles, gj_array(gs, "individual_angles")->n);

    for (int kind = 0; kind < 2; kind++) {
        const gj_value *terms = gj_array(gs, lists[kind]), *avg = gj_array(gs, averaged[kind]);
        hessfit_seminario_instance *inst = calloc(terms->n, sizeof *inst);
        hessfit_seminario_group *groups = NULL;
        int n_groups = 0;
        CHECK(inst != NULL, "no memory");
        for (size_t t = 0; t < terms->n; t++) {
            const gj_value *gt = &terms->items[t];
            hessfit_seminario_estimate e, ec;
            char key[32];
            int atoms[3] = {(int)gj_number(gt, "atom_i"), -1, -1};
            if (kind == 0) {
                atoms[1] = (int)gj_number(gt, "atom_j");
                HF_CALL(hessfit_seminario_bond(s, atoms[0], atoms[1], &e));
                HF_CALL(hessfit_seminario_bond(s_codata, atoms[0], atoms[1], &ec));
                /* in the perceived topology too */
                int found = 0;
                for (int b = 0; b < topo.n_bonds; b++)
                    found |= (topo.bonds[2 * b] == atoms[0] && topo.bonds[2 * b + 1] == atoms[1]) ||
                             (topo.bonds[2 * b] == atoms[1] && topo.bonds[2 * b + 1] == atoms[0]);
                CHECK(found, "golden bond %d-%d not perceived", atoms[0] + 1, atoms[1] + 1);
            } else {
                atoms[1] = (int)gj_number(gt, "atom_center");
                atoms[2] = (int)gj_number(gt, "atom_j");
                HF_CALL(hessfit_seminario_angle(s, atoms[0], atoms[1], atoms[2], &e));
                HF_CALL(hessfit_seminario_angle(s_codata, atoms[0], atoms[1], atoms[2], &ec));
            }
            CHECK(rel_err(e.k, gj_number(gt, "force_constant")) <= 1e-6, "ethane %s %zu: k %.17g vs %.17g",
                  lists[kind], t, e.k, gj_number(gt, "force_constant"));
            CHECK(rel_err(e.value, gj_number(gt, "equilibrium")) <= 1e-6, "ethane %s %zu: value %.17g vs %.17g",
                  lists[kind], t, e.value, gj_number(gt, "equilibrium"));
            max_k = fmax(max_k, rel_err(e.k, gj_number(gt, "force_constant")));
            max_v = fmax(max_v, rel_err(e.value, gj_number(gt, "equilibrium")));
            /* same spring constant; the CODATA canonical differs from q2mm's by the ratio of the
             * conversion chains only (1.35e-5 bonds, 3.5e-4 angles) */
            CHECK(ec.k_au == e.k_au, "k_au independent of the unit convention");
            CHECK_CLOSE(ec.k / e.k,
                        hessfit_seminario_au_to_canonical(e.kind, 0) / hessfit_seminario_au_to_canonical(e.kind, 1), 1e-13,
                        1.0, "CODATA / q2mm canonical ratio");
            /* group = position of the element key in the golden's averaged list */
            element_key(gj_array(gt, "elements"), kind, key, sizeof key);
            inst[t].molecule = 0;
            inst[t].kind = kind == 0 ? HESSFIT_TERM_BOND : HESSFIT_TERM_ANGLE;
            memcpy(inst[t].atoms, atoms, sizeof atoms);
            inst[t].value = NAN;
            inst[t].group = -1;
            for (size_t a = 0; a < avg->n; a++) {
                char akey[32];
                element_key(gj_array(&avg->items[a], "elements"), kind, akey, sizeof akey);
                if (strcmp(key, akey) == 0)
                    inst[t].group = (int)a;
            }
            CHECK(inst[t].group >= 0, "ethane: no averaged entry for %s", key);
        }
        HF_CALL(hessfit_seminario_average(&s, 1, inst, (int)terms->n, NULL, &groups, &n_groups));
        CHECK(n_groups == (int)avg->n, "ethane %s: %d groups vs %zu", averaged[kind], n_groups, avg->n);
        for (int q = 0; q < n_groups; q++) {
            const gj_value *ga = &avg->items[groups[q].group];
            CHECK(rel_err(groups[q].k, gj_number(ga, "force_constant")) <= 1e-6, "ethane %s %d: k %.17g vs %.17g",
                  averaged[kind], q, groups[q].k, gj_number(ga, "force_constant"));
            CHECK(rel_err(groups[q].value, gj_number(ga, "equilibrium")) <= 1e-6, "ethane %s %d: value %.17g vs %.17g",
                  averaged[kind], q, groups[q].value, gj_number(ga, "equilibrium"));
            max_avg = fmax(max_avg, fmax(rel_err(groups[q].k, gj_number(ga, "force_constant")),
                                         rel_err(groups[q].value, gj_number(ga, "equilibrium"))));
        }
        free(groups);
        free(inst);
    }
    printf("ethane vs q2mm (canonical, q2mm units): 7 bonds + 12 angles max rel err k %.3g, value %.3g; "
           "4 element averages max %.3g\n",
           max_k, max_v, max_avg);
    hessfit_topology_free(&topo);
    hessfit_seminario_free(s);
    hessfit_seminario_free(s_codata);
    hessfit_molecule_free(&mol);
    gj_free(g);
}

/* ---- rh-enamide: nine Jaguar Hessians, per force-field line vs q2mm ------------------------- */

static const char *const rh_jaguar[9] = {
    "1ZDMPfromJCTCSI_loner1", "2DMPEConformation1fromJCTCSI_isomer1", "3DMPEConformation2fromJCTCSI_isomer2",
    "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4",
    "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6",
    "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};

/* The "Actual" length/angle MacroModel printed on the .mmo line of a term (what q2mm averages for
 * the equilibrium values): the 3rd number after the atoms of a bond row, the 4th of an angle row.
 * Read here straight from the file with zlib, a second route beside hessfit_reported_term.actual. lines[] holds the whole decompressed file split at newlines. */
static char **read_lines_gz(const char *path, int *n_lines)
{
    gzFile f = gzopen(path, "rb");
    char buf[4096], **lines = NULL;
    int n = 0, cap = 0;
    CHECK(f != NULL, "cannot open %s", path);
    while (gzgets(f, buf, sizeof buf) != NULL) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            lines = realloc(lines, (size_t)cap * sizeof *lines);
            CHECK(lines != NULL, "no memory");
        }
        lines[n] = malloc(strlen(buf) + 1);
        CHECK(lines[n] != NULL, "no memory");
        strcpy(lines[n++], buf);
    }
    gzclose(f);
    *n_lines = n;
    return lines;
}

static double printed_actual(char **lines, int n_lines, const hessfit_reported_term *t)
{
    const int n_atoms = t->kind == HESSFIT_TERM_BOND ? 2 : 3, which = t->kind == HESSFIT_TERM_BOND ? 2 : 3;
    char *p, *end;
    double v = NAN;
    CHECK(t->line >= 1 && t->line <= n_lines, "term line %d outside the file", t->line);
    p = lines[t->line - 1];
    for (int k = 0; k < n_atoms + which + 1; k++) {
        v = strtod(p, &end);
        CHECK(end != p, ".mmo line %d: expected a number: %s", t->line, lines[t->line - 1]);
        p = end;
    }
    return v;
}

static void test_rh_enamide_golden(void)
{
    const char *mmo_path = test_source_path_dup("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz");
    hessfit_molecule_list list;
    hessfit_seminario *est[9];
    hessfit_seminario_options opt = hessfit_seminario_q2mm_options();
    hessfit_seminario_instance *inst = NULL;
    hessfit_seminario_group *groups = NULL, *groups_geo = NULL;
    hessfit_forcefield ff;
    gj_value *g = gj_read_file(test_source_path("tests/data/goldens/rh_enamide_reference.json"));
    const gj_value *par = gj_object(g, "parameters");
    const char *k_au_key[2] = {"bond_force_constants_au", "angle_force_constants_au"};
    const char *k_mdyn_key[2] = {"bond_force_constants_mdyn_a", "angle_force_constants_mdyn_a_rad2"};
    const char *eq_key[2] = {"bond_equilibria_angstrom", "angle_equilibria_degrees"};
    char **lines;
    int n_lines, n_inst = 0, cap = 0, n_groups = 0, n_groups_geo = 0, n_lines_checked[2] = {0, 0}, n_kept = 0;
    double max_k = 0.0, max_eq = 0.0, max_geo_eq = 0.0, max_coord = 0.0;

    HF_CALL(hessfit_mmo_read(mmo_path, &list));
    CHECK(list.n == 9, "rh-enamide .mmo holds %d structures", list.n);
    lines = read_lines_gz(mmo_path, &n_lines);
    for (int m = 0; m < 9; m++) {
        hessfit_molecule jag;
        char rel[160], squeezed[128];
        int q = 0;
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(rel), &jag));
        /* the .mmo structure is the Jaguar one: same name (letters, digits, '-'), elements, geometry to
         * the .mmo's 4 decimals */
        for (const char *c = list.items[m].name; *c != '\0' && q < (int)sizeof squeezed - 1; c++)
            if (isalnum((unsigned char)*c) || *c == '-')
                squeezed[q++] = *c;
        squeezed[q] = '\0';
        CHECK(strncmp(rh_jaguar[m], squeezed, strlen(squeezed)) == 0, "structure %d: .mmo '%s' vs Jaguar %s", m + 1,
              list.items[m].name, rh_jaguar[m]);
        CHECK(jag.n_atoms == list.items[m].n_atoms && jag.hessian != NULL, "structure %d: %d vs %d atoms", m + 1,
              jag.n_atoms, list.items[m].n_atoms);
        for (int a = 0; a < jag.n_atoms; a++) {
            CHECK(jag.atomic_numbers[a] == list.items[m].atomic_numbers[a], "structure %d atom %d element", m + 1,
                  a + 1);
            for (int k = 0; k < 3; k++)
                max_coord = fmax(max_coord, fabs(jag.coords[3 * a + k] - list.items[m].coords[3 * a + k]));
        }
        /* q2mm projects the Jaguar Hessian with the .mmo coordinates (4 decimals); the Jaguar
         * &zmat ones (10 decimals) move the constants by up to 4e-5 relative */
        list.items[m].hessian = jag.hessian;
        jag.hessian = NULL;
        hessfit_molecule_free(&jag);
        HF_CALL(hessfit_seminario_create(&list.items[m], &opt, &est[m]));
        for (int t = 0; t < list.items[m].n_reported_terms; t++) {
            const hessfit_reported_term *rt = &list.items[m].reported_terms[t];
            if ((rt->kind != HESSFIT_TERM_BOND && rt->kind != HESSFIT_TERM_ANGLE) || rt->ff_line <= 0)
                continue;
            if (n_inst == cap) {
                cap = cap ? 2 * cap : 512;
                inst = realloc(inst, (size_t)cap * sizeof *inst);
                CHECK(inst != NULL, "no memory");
            }
            inst[n_inst].molecule = m;
            inst[n_inst].kind = rt->kind;
            memcpy(inst[n_inst].atoms, rt->atoms, sizeof inst[n_inst].atoms);
            inst[n_inst].group = rt->ff_line;
            inst[n_inst].value = rt->actual;
            /* the reader's printed value equals the column read here by a second route */
            CHECK(rt->actual == printed_actual(lines, n_lines, rt), ".mmo line %d: reader %.6f vs text %.6f", rt->line,
                  rt->actual, printed_actual(lines, n_lines, rt));
            n_inst++;
        }
    }
    CHECK(max_coord <= 5.0001e-5, ".mmo and Jaguar coordinates differ by %g A", max_coord);
    HF_CALL(hessfit_seminario_average(est, 9, inst, n_inst, NULL, &groups, &n_groups));
    /* the same with the geometric values (NaN: the estimate's own length/angle) */
    for (int t = 0; t < n_inst; t++)
        inst[t].value = NAN;
    HF_CALL(hessfit_seminario_average(est, 9, inst, n_inst, NULL, &groups_geo, &n_groups_geo));
    HF_CALL(hessfit_fld_read(test_source_path("examples/data/rh-enamide/ff/mm3.fld"), &ff));

    for (int kind = 0; kind < 2; kind++) {
        const gj_value *gk = gj_object(par, k_au_key[kind]), *gm = gj_object(par, k_mdyn_key[kind]),
                       *ge = gj_object(par, eq_key[kind]);
        for (size_t q = 0; q < gk->n; q++) {
            int line = atoi(gk->keys[q]), pi = hessfit_forcefield_param_at_line(&ff, line);
            double want_au = gk->items[q].number, want_mdyn = gj_number(gm, gk->keys[q]);
            double want_eq = gj_number(ge, gk->keys[q]);
            const hessfit_seminario_group *gr = NULL, *gg = NULL;
            const double mm3 = kind == 0 ? HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2
                                         : HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2;
            for (int x = 0; x < n_groups; x++)
                if (groups[x].group == line)
                    gr = &groups[x], gg = &groups_geo[x];
            CHECK(pi >= 0 && (int)ff.params[pi].kind == kind, "mm3.fld line %d: no %s parameter", line,
                  kind ? "angle" : "bond");
            n_lines_checked[kind]++;
            if (gr == NULL || gr->n_used == 0) {
                /* no instance (1886) or none positive (1866): q2mm keeps the .fld value */
                double old_mdyn = ff.params[pi].values[0] / mm3;
                CHECK(rel_err(old_mdyn, want_mdyn) <= 1e-6, "line %d: kept .fld value %.8g vs golden %.8g", line,
                      old_mdyn, want_mdyn);
                CHECK(rel_err(want_au * hessfit_seminario_au_to_mdyn(kind, 1), want_mdyn) <= 1e-12,
                      "line %d: golden au is the kept value / q2mm factor", line);
                if (gr != NULL) {
                    CHECK(gr->n_nonpositive == gr->n_instances, "line %d: kept although some k > 0", line);
                    CHECK(rel_err(gr->value, want_eq) <= 1e-6, "line %d: equilibrium %.10g vs %.10g", line,
                          gr->value, want_eq);
                    max_eq = fmax(max_eq, rel_err(gr->value, want_eq));
                    printf("  line %d: all %d estimates <= 0 (k from %.4g to %.4g): keeps %.4f mdyn/A\n", line,
                           gr->n_instances, gr->k_min / mm3, gr->k_max / mm3, old_mdyn);
                } else {
                    CHECK(rel_err(ff.params[pi].values[1], want_eq) <= 1e-6, "line %d: kept equilibrium", line);
                    printf("  line %d: no term of the nine structures uses it: keeps %.4f\n", line, old_mdyn);
                }
                n_kept++;
                continue;
            }
            CHECK(gr->n_used == gr->n_instances, "line %d: %d of %d estimates used", line, gr->n_used,
                  gr->n_instances);
            CHECK(rel_err(gr->k_au, want_au) <= 1e-6, "line %d: k_au %.17g vs golden %.17g", line, gr->k_au, want_au);
            CHECK(rel_err(gr->k_mdyn, want_mdyn) <= 1e-6, "line %d: k mdyn %.17g vs golden %.17g", line, gr->k_mdyn,
                  want_mdyn);
            CHECK(rel_err(gr->value, want_eq) <= 1e-6, "line %d: equilibrium %.17g vs golden %.17g", line, gr->value,
                  want_eq);
            max_k = fmax(max_k, fmax(rel_err(gr->k_au, want_au), rel_err(gr->k_mdyn, want_mdyn)));
            max_eq = fmax(max_eq, rel_err(gr->value, want_eq));
            /* geometric means: the .mmo prints 4 (bonds) / 3 (angles) decimals of the same geometry,
             * except for the angles about the forming C6-H18 bond (lines 1882-1884), where
             * MacroModel's printed angle is not the angle of its printed coordinates */
            if (line >= 1882 && line <= 1884)
                CHECK(rel_err(gg->value, want_eq) > 0.01, "line %d: expected MacroModel's deviation", line);
            else {
                CHECK(rel_err(gg->value, want_eq) <= 1e-5, "line %d: geometric mean %.10g vs %.10g", line, gg->value,
                      want_eq);
                max_geo_eq = fmax(max_geo_eq, rel_err(gg->value, want_eq));
            }
        }
    }
    CHECK(n_lines_checked[0] == 8 && n_lines_checked[1] == 23, "golden lines: %d bonds, %d angles",
          n_lines_checked[0], n_lines_checked[1]);
    CHECK(n_kept == 2, "two lines keep their .fld constant (1866, 1886): %d", n_kept);
    printf("rh-enamide vs q2mm: %d bond + %d angle lines over 9 structures (%d terms): max rel err k %.3g "
           "(au and mdyn), equilibria %.3g; geometric means (not MacroModel's printed values) within %.3g "
           "except lines 1882-1884\n",
           n_lines_checked[0], n_lines_checked[1], n_inst, max_k, max_eq, max_geo_eq);

    /* apply to the force field, write it atomically and read it back */
    {
        char dir[] = "/tmp/hessfit_seminario_XXXXXX", out[128];
        hessfit_forcefield back;
        int n_changed = 0;
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
        snprintf(out, sizeof out, "%s/rh_seminario.fld", dir);
        int n_skipped = 0, n_opt = 0;
        /* q2mm fits the parameters of the OPT substructures: exactly the golden's 31 lines */
        for (int x = 0; x < n_groups; x++) {
            int pi = hessfit_forcefield_param_at_line(&ff, groups[x].group);
            if (pi >= 0 && hessfit_seminario_param_marked_opt(&ff, &ff.params[pi])) {
                char key[16];
                snprintf(key, sizeof key, "%d", groups[x].group);
                CHECK(gj_get(gj_object(par, k_mdyn_key[groups[x].kind == HESSFIT_TERM_ANGLE]), key) != NULL,
                      "OPT line %d is not in the golden", groups[x].group);
                n_opt++;
            }
        }
        CHECK(n_opt == 30, "30 OPT lines have terms (1886 has none): %d", n_opt);
        HF_CALL(hessfit_seminario_apply(&ff, groups, n_groups, HESSFIT_SEMINARIO_APPLY_OPT_ONLY, &n_changed, &n_skipped));
        CHECK(n_changed == 30 && n_skipped == n_groups - 30, "changed %d, skipped %d of %d", n_changed, n_skipped,
              n_groups);
        HF_CALL(hessfit_fld_write(&ff, out));
        HF_CALL(hessfit_fld_read(out, &back));
        for (int kind = 0; kind < 2; kind++) {
            const gj_value *gm = gj_object(par, k_mdyn_key[kind]), *ge = gj_object(par, eq_key[kind]);
            const double mm3 = kind == 0 ? HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2
                                         : HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2;
            for (size_t q = 0; q < gm->n; q++) {
                int line = atoi(gm->keys[q]), pi = hessfit_forcefield_param_at_line(&back, line);
                CHECK(pi >= 0, "written file: line %d", line);
                /* the .fld holds 4 decimals */
                CHECK(fabs(back.params[pi].values[0] / mm3 - gm->items[q].number) <= 0.5001e-4,
                      "written line %d: k %.6f vs golden %.6f", line, back.params[pi].values[0] / mm3,
                      gm->items[q].number);
                CHECK(fabs(back.params[pi].values[1] - gj_number(ge, gm->keys[q])) <= 0.5001e-4,
                      "written line %d: equilibrium %.6f vs golden %.6f", line, back.params[pi].values[1],
                      gj_number(ge, gm->keys[q]));
            }
        }
        /* everything outside the OPT lines is as it was */
        for (int l = 0; l < ff.n_lines && l < back.n_lines; l++) {
            int line = l + 1, in_golden;
            char key[16];
            snprintf(key, sizeof key, "%d", line);
            in_golden = gj_get(gj_object(par, k_mdyn_key[0]), key) != NULL ||
                        gj_get(gj_object(par, k_mdyn_key[1]), key) != NULL;
            if (!in_golden)
                CHECK(strcmp(ff.lines[l], back.lines[l]) == 0, "written file changed line %d", line);
        }
        CHECK(ff.n_lines == back.n_lines, "written file has %d lines, not %d", back.n_lines, ff.n_lines);
        printf("rh-enamide: %d OPT parameters changed (%d groups on other lines left alone), written to a .fld and "
               "read back within its 4 decimals; all other lines unchanged\n",
               n_changed, n_skipped);
        hessfit_forcefield_free(&back);
        remove(out);
        rmdir(dir);
    }
    hessfit_forcefield_free(&ff);
    for (int m = 0; m < 9; m++)
        hessfit_seminario_free(est[m]);
    for (int l = 0; l < n_lines; l++)
        free(lines[l]);
    free(lines);
    free(inst);
    free(groups);
    free(groups_geo);
    hessfit_molecule_list_free(&list);
    free((void *)mmo_path);
    gj_free(g);
}

/* ---- unit conventions ------------------------------------------------------------------------ */

static void test_units(void)
{
    /* CODATA: canonical = spring / 2 in kcal/mol/A^2; the same through mdyn and the full
     * mdyn -> kcal/mol/A^2 factor (a second route) */
    double b = hessfit_seminario_au_to_canonical(HESSFIT_TERM_BOND, 0);
    double a = hessfit_seminario_au_to_canonical(HESSFIT_TERM_ANGLE, 0);
    CHECK_CLOSE(b, hessfit_seminario_au_to_mdyn(HESSFIT_TERM_BOND, 0) * hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2() / 2, 1e-12,
                b, "bond au -> canonical via mdyn");
    CHECK_CLOSE(a, hessfit_seminario_au_to_mdyn(HESSFIT_TERM_ANGLE, 0) * hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2() / 2,
                1e-12, a, "angle au -> canonical via mdyn*A");
    CHECK_CLOSE(b, 1120.4385, 1e-7, b, "Hartree/Bohr^2 -> kcal/mol/A^2 / 2");
    CHECK_CLOSE(a, 313.75475, 1e-7, a, "Hartree/rad^2 -> kcal/mol/rad^2 / 2");
    CHECK_CLOSE(hessfit_seminario_au_to_mdyn(HESSFIT_TERM_BOND, 0), 15.568931, 1e-7, 15.6, "CODATA mdyn/A");
    /* q2mm's chain: 15.569141 x 0.5 x 602.2140857 / 4.184 and 4.3598 x 0.5 x 601.99392 / 4.184 */
    CHECK_CLOSE(hessfit_seminario_au_to_canonical(HESSFIT_TERM_BOND, 1), 15.569141 * 0.5 * 602.2140857 / 4.184, 1e-14, 1120.0,
                "q2mm bond chain");
    CHECK_CLOSE(hessfit_seminario_au_to_canonical(HESSFIT_TERM_ANGLE, 1), 4.3598 * 0.5 * 601.99392 / 4.184, 1e-12, 313.6,
                "q2mm angle chain");
    CHECK(isnan(hessfit_seminario_au_to_mdyn(HESSFIT_TERM_TORSION, 0)), "torsion conversion should be NaN");
    printf("units: canonical bond %.6f, angle %.6f kcal/mol per Hartree (CODATA); q2mm %.6f, %.6f\n", b, a,
           hessfit_seminario_au_to_canonical(HESSFIT_TERM_BOND, 1), hessfit_seminario_au_to_canonical(HESSFIT_TERM_ANGLE, 1));
}

/* ---- hand-checkable cases -------------------------------------------------------------------- */

/* A diatomic with a spring k0 along a random direction: H_AA = H_BB = k0 e e^T, H_AB = -k0 e e^T.
 * Both methods give k_au = scaling * k0 exactly; with a negative k0, ts=abs flips the sign. */
static void test_diatomic(void)
{
    double x[6] = {0.1, -0.2, 0.3, 0.0, 0.0, 0.0}, e[3] = {0.48, -0.6, 0.64}, h[36], k0 = 0.37;
    int z[2] = {6, 8}, bond[2] = {0, 1};
    for (int k = 0; k < 3; k++)
        x[3 + k] = x[k] + 1.13 * e[k];
    for (int sign = 1; sign >= -1; sign -= 2)
        for (int method = 0; method < 2; method++) {
            hessfit_molecule m;
            hessfit_seminario *s;
            hessfit_seminario_estimate est;
            hessfit_seminario_options o = hessfit_seminario_default_options();
            double kk = sign * k0;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            h[(3 * a + i) * 6 + 3 * b + j] = (a == b ? 1 : -1) * kk * e[i] * e[j];
            make_molecule(&m, "diatomic", 2, z, x, h, bond, 1);
            o.method = method ? HESSFIT_SEMINARIO_MODIFIED : HESSFIT_SEMINARIO_ORIGINAL;
            HF_CALL(hessfit_seminario_create(&m, &o, &s));
            HF_CALL(hessfit_seminario_bond(s, 0, 1, &est));
            CHECK_CLOSE(est.k_au, o.scaling * kk, 1e-14, k0, "diatomic k_au");
            CHECK_CLOSE(est.k, est.k_au * HESSFIT_HARTREE_PER_BOHR2_TO_KCAL_PER_MOL_PER_A2 / 2, 1e-14, est.k,
                        "diatomic canonical = spring / 2");
            CHECK_CLOSE(est.value, 1.13, 1e-14, 1.0, "diatomic length");
            hessfit_seminario_free(s);
            o.ts = HESSFIT_SEMINARIO_TS_BLOCK_ABS;
            HF_CALL(hessfit_seminario_create(&m, &o, &s));
            HF_CALL(hessfit_seminario_bond(s, 0, 1, &est));
            CHECK_CLOSE(est.k_au, o.scaling * k0, 1e-14, k0, "diatomic k_au with ts=abs");
            hessfit_seminario_free(s);
            hessfit_molecule_free(&m);
        }
    printf("diatomic: k_au = 0.963 k0 for both methods and signs; ts=abs gives |k0|\n");
}

/* The TS replacement against a second route: a Hessian built as Q diag(w) Q^T with two negative
 * eigenvalues; ts=replace must equal ts=keep on Q diag(w') Q^T, w' = (replacement, 0, rest). */
static void test_ts_replace(void)
{
    enum { N = 4, D = 12 };
    double x[3 * N] = {0.0, 0.0, 0.0, 1.4, 0.1, 0.0, -0.5, 1.3, 0.2, -0.4, -0.6, 1.2};
    double q[D * D], w[D], h[D * D], h2[D * D];
    int z[N] = {6, 1, 1, 8};
    hessfit_molecule m1, m2;
    hessfit_seminario *s1, *s2;
    hessfit_seminario_options keep = hessfit_seminario_default_options(), repl = keep;
    double max_diff = 0.0;
    test_seed(11);
    /* orthonormal Q by Gram-Schmidt of random vectors */
    for (int c = 0; c < D; c++) {
        for (int r = 0; r < D; r++)
            q[r * D + c] = test_random() - 0.5;
        for (int p = 0; p < c; p++) {
            double d = 0.0;
            for (int r = 0; r < D; r++)
                d += q[r * D + c] * q[r * D + p];
            for (int r = 0; r < D; r++)
                q[r * D + c] -= d * q[r * D + p];
        }
        double nn = 0.0;
        for (int r = 0; r < D; r++)
            nn += q[r * D + c] * q[r * D + c];
        for (int r = 0; r < D; r++)
            q[r * D + c] /= sqrt(nn);
    }
    for (int c = 0; c < D; c++)
        w[c] = 0.1 + 0.05 * c;
    w[3] = -0.3; /* the reaction coordinate */
    w[7] = -0.02;
    for (int pass = 0; pass < 2; pass++) {
        double *out = pass == 0 ? h : h2;
        for (int r = 0; r < D; r++)
            for (int c = 0; c < D; c++) {
                double sum = 0.0;
                for (int m = 0; m < D; m++) {
                    double wm = w[m];
                    if (pass == 1 && wm < 0.0)
                        wm = m == 3 ? 0.75 : 0.0;
                    sum += q[r * D + m] * wm * q[c * D + m];
                }
                out[r * D + c] = sum;
            }
    }
    repl.ts = HESSFIT_SEMINARIO_TS_REPLACE;
    repl.ts_replacement = 0.75;
    make_molecule(&m1, "ts", N, z, x, h, NULL, 0);
    make_molecule(&m2, "ts-rebuilt", N, z, x, h2, NULL, 0);
    HF_CALL(hessfit_seminario_create(&m1, &repl, &s1));
    HF_CALL(hessfit_seminario_create(&m2, &keep, &s2));
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            if (i != j) {
                hessfit_seminario_estimate a, b;
                HF_CALL(hessfit_seminario_bond(s1, i, j, &a));
                HF_CALL(hessfit_seminario_bond(s2, i, j, &b));
                CHECK_CLOSE(a.k_au, b.k_au, 1e-10, 1.0, "ts=replace vs rebuilt Hessian (bond)");
                max_diff = fmax(max_diff, fabs(a.k_au - b.k_au));
                for (int k = 0; k < N; k++)
                    if (k != i && k != j) {
                        HF_CALL(hessfit_seminario_angle(s1, i, j, k, &a));
                        HF_CALL(hessfit_seminario_angle(s2, i, j, k, &b));
                        CHECK_CLOSE(a.k_au, b.k_au, 1e-10, fmax(1.0, fabs(b.k_au)), "ts=replace vs rebuilt (angle)");
                        max_diff = fmax(max_diff, fabs(a.k_au - b.k_au) / fmax(1.0, fabs(b.k_au)));
                    }
            }
    printf("ts=replace equals ts=keep on Q diag(0.75, 0, ...) Q^T: max diff %.3g over all bonds/angles\n", max_diff);
    hessfit_seminario_free(s1);
    hessfit_seminario_free(s2);
    hessfit_molecule_free(&m1);
    hessfit_molecule_free(&m2);
}

/* ---- modified Seminario -------------------------------------------------------------------- */

/* Every bond and angle of a distorted 6-atom molecule, original and modified: the same after a
 * rotation of coordinates and Hessian (1e-10), and the modified bonds equal the original ones. */
static void test_rotation_invariance(void)
{
    enum { N = 6, D = 18 };
    /* a branched skeleton: 0 the centre with 1, 2, 3; 1 with 4 and 5 */
    const double x0[3 * N] = {0.0, 0.0, 0.0, 1.52, 0.08, -0.05, -0.55, 1.31, 0.22, -0.47, -0.71, 1.18,
                              2.11, 1.02, 0.31, 2.05, -0.83, -0.62};
    const int z[N] = {6, 6, 8, 7, 1, 1}, bonds[] = {0, 1, 0, 2, 0, 3, 1, 4, 1, 5};
    const double axis[3] = {0.3, -0.7, 0.5};
    double h[D * D], hr[D * D], xr[3 * N], r[9], max_rel = 0.0;
    int n_terms = 0;
    test_seed(2024);
    random_hessian(N, h);
    memcpy(xr, x0, sizeof xr);
    test_rotate(xr, N, axis, 1.234);
    for (int a = 0; a < N; a++) /* and a translation */
        xr[3 * a] += 3.5, xr[3 * a + 2] -= 1.25;
    rotation_matrix(axis, 1.234, r);
    rotate_hessian(N, r, h, hr);
    for (int method = 0; method < 2; method++) {
        hessfit_molecule m, mr;
        hessfit_seminario *s, *sr;
        hessfit_seminario_options o = hessfit_seminario_default_options();
        o.method = method ? HESSFIT_SEMINARIO_MODIFIED : HESSFIT_SEMINARIO_ORIGINAL;
        make_molecule(&m, "skeleton", N, z, x0, h, bonds, 5);
        make_molecule(&mr, "skeleton-rotated", N, z, xr, hr, bonds, 5);
        HF_CALL(hessfit_seminario_create(&m, &o, &s));
        HF_CALL(hessfit_seminario_create(&mr, &o, &sr));
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                hessfit_seminario_estimate a, b;
                if (i == j)
                    continue;
                HF_CALL(hessfit_seminario_bond(s, i, j, &a));
                HF_CALL(hessfit_seminario_bond(sr, i, j, &b));
                CHECK_CLOSE(a.k_au, b.k_au, 1e-10, a.k_au, "rotated bond");
                max_rel = fmax(max_rel, rel_err(b.k_au, a.k_au));
                n_terms++;
                for (int k = i + 1; k < N; k++) {
                    if (k == j)
                        continue;
                    HF_CALL(hessfit_seminario_angle(s, i, j, k, &a));
                    HF_CALL(hessfit_seminario_angle(sr, i, j, k, &b));
                    CHECK_CLOSE(a.k_au, b.k_au, 1e-10, a.k_au, "rotated angle");
                    CHECK_CLOSE(a.value, b.value, 1e-10, a.value, "rotated angle value");
                    CHECK_CLOSE(a.factor[0], b.factor[0], 1e-10, 1.0, "rotated factor");
                    max_rel = fmax(max_rel, rel_err(b.k_au, a.k_au));
                    n_terms++;
                }
            }
        hessfit_seminario_free(s);
        hessfit_seminario_free(sr);
        hessfit_molecule_free(&m);
        hessfit_molecule_free(&mr);
    }
    printf("rotation + translation invariance: %d estimates (original and modified), max rel diff %.3g\n", n_terms,
           max_rel);
}

/* Dihedral angle (radians) of p0-p1-p2-p3 by the atan2 formula (an independent route to the
 * angle between the planes A-B-X and A-B-C about the axis B-A). */
static double dihedral(const double *p0, const double *p1, const double *p2, const double *p3)
{
    double b0[3], b1[3], b2[3], n1[3], n2[3], m[3], len = 0.0;
    for (int k = 0; k < 3; k++) {
        b0[k] = p0[k] - p1[k];
        b1[k] = p2[k] - p1[k];
        b2[k] = p3[k] - p2[k];
        len += b1[k] * b1[k];
    }
    len = sqrt(len);
    /* n1 = b0 x b1, n2 = b1 x b2, m = n1 x b1/|b1| */
    n1[0] = b0[1] * b1[2] - b0[2] * b1[1];
    n1[1] = b0[2] * b1[0] - b0[0] * b1[2];
    n1[2] = b0[0] * b1[1] - b0[1] * b1[0];
    n2[0] = b1[1] * b2[2] - b1[2] * b2[1];
    n2[1] = b1[2] * b2[0] - b1[0] * b2[2];
    n2[2] = b1[0] * b2[1] - b1[1] * b2[0];
    m[0] = (n1[1] * b1[2] - n1[2] * b1[1]) / len;
    m[1] = (n1[2] * b1[0] - n1[0] * b1[2]) / len;
    m[2] = (n1[0] * b1[1] - n1[1] * b1[0]) / len;
    return atan2(m[0] * n2[0] + m[1] * n2[1] + m[2] * n2[2], n1[0] * n2[0] + n1[1] * n2[1] + n1[2] * n2[2]);
}

/* Allen et al.'s factor by the second route: f_A = 1 + mean_X cos^2(dihedral C-B-A-X) over the
 * other neighbours X of B (the in-plane perpendiculars of two planes through the axis B-A meet at
 * the dihedral angle between the planes). */
static double factor_by_dihedrals(const double *x, int a, int b, int c, const int *nbrs, int n_nbrs)
{
    double sum = 0.0;
    int n = 0;
    for (int t = 0; t < n_nbrs; t++) {
        int q = nbrs[t];
        double d;
        if (q == a || q == c)
            continue;
        d = dihedral(x + 3 * c, x + 3 * b, x + 3 * a, x + 3 * q);
        sum += cos(d) * cos(d);
        n++;
    }
    return n ? 1.0 + sum / n : 1.0;
}

/* The modified method against hand-derived factors: tetrahedral CH4 (f = 1 + cos^2(120 deg) =
 * 1.25, so k_mod = 0.8 k_orig), planar BH3 (f = 2, k_mod = 0.5 k_orig), a distorted centre
 * (factors from dihedral angles), and a triatomic (no other angles: modified = original). */
static void test_modified_factors(void)
{
    const double t = 1.09 / sqrt(3.0);
    const double ch4[15] = {0, 0, 0, t, t, t, t, -t, -t, -t, t, -t, -t, -t, t};
    const double c120 = cos(2.0 * HESSFIT_PI / 3.0), s120 = sin(2.0 * HESSFIT_PI / 3.0);
    const double bh3[12] = {0, 0, 0, 1.19, 0, 0, 1.19 * c120, 1.19 * s120, 0, 1.19 * c120, -1.19 * s120, 0};
    const double distorted[15] = {0.02, -0.01, 0.03, 1.08, 0.12, -0.05, -0.41, 1.02, 0.11, -0.33, -0.52, 0.95,
                                  -0.30, -0.47, -0.98};
    const double water[9] = {0, 0, 0, 0.9572, 0, 0, 0.9572 * cos(1.8242), 0.9572 * sin(1.8242), 0};
    const int z5[5] = {6, 1, 1, 1, 1}, z4[4] = {5, 1, 1, 1}, z3[3] = {8, 1, 1};
    const int bonds5[8] = {0, 1, 0, 2, 0, 3, 0, 4}, bonds4[6] = {0, 1, 0, 2, 0, 3}, bonds3[4] = {0, 1, 0, 2};
    const int nbrs[4] = {1, 2, 3, 4};
    struct {
        const char *name;
        const double *x;
        const int *z, *bonds;
        int n, n_bonds;
        double want_ratio; /* k_mod / k_orig for every angle, 0: check by dihedrals */
    } cases[4] = {{"CH4 (Td)", ch4, z5, bonds5, 5, 4, 0.8},
                  {"BH3 (D3h)", bh3, z4, bonds4, 4, 3, 0.5},
                  {"distorted CH4", distorted, z5, bonds5, 5, 4, 0.0},
                  {"H2O", water, z3, bonds3, 3, 2, 1.0}};
    double h[15 * 15];
    test_seed(7);
    for (int c = 0; c < 4; c++) {
        hessfit_molecule m;
        hessfit_seminario *so, *sm;
        hessfit_seminario_options oo = hessfit_seminario_default_options(), om = oo;
        double max_dev = 0.0;
        om.method = HESSFIT_SEMINARIO_MODIFIED;
        random_hessian(cases[c].n, h);
        make_molecule(&m, cases[c].name, cases[c].n, cases[c].z, cases[c].x, h, cases[c].bonds, cases[c].n_bonds);
        HF_CALL(hessfit_seminario_create(&m, &oo, &so));
        HF_CALL(hessfit_seminario_create(&m, &om, &sm));
        for (int a = 1; a < cases[c].n; a++) {
            hessfit_seminario_estimate bo, bm;
            HF_CALL(hessfit_seminario_bond(so, 0, a, &bo));
            HF_CALL(hessfit_seminario_bond(sm, 0, a, &bm));
            CHECK(bo.k_au == bm.k_au, "%s: modified bond 1-%d differs from the original", cases[c].name, a + 1);
            for (int b = a + 1; b < cases[c].n; b++) {
                hessfit_seminario_estimate eo, em;
                double fa, fc, want;
                HF_CALL(hessfit_seminario_angle(so, a, 0, b, &eo));
                HF_CALL(hessfit_seminario_angle(sm, a, 0, b, &em));
                CHECK(eo.factor[0] == 1.0 && eo.factor[1] == 1.0, "original method factors must be 1");
                CHECK_CLOSE(em.projection[0], eo.projection[0], 1e-15, eo.projection[0], "same projections");
                if (cases[c].want_ratio > 0.0) {
                    want = cases[c].want_ratio * eo.k_au;
                    fa = fc = 1.0 / cases[c].want_ratio;
                } else {
                    /* second route: k = s / (f_A / (R_A^2 p_A) + f_C / (R_C^2 p_C)) */
                    double ra = 0.0, rc = 0.0;
                    for (int k = 0; k < 3; k++) {
                        ra += pow(cases[c].x[3 * a + k] - cases[c].x[k], 2);
                        rc += pow(cases[c].x[3 * b + k] - cases[c].x[k], 2);
                    }
                    ra /= HESSFIT_BOHR_TO_ANGSTROM * HESSFIT_BOHR_TO_ANGSTROM;
                    rc /= HESSFIT_BOHR_TO_ANGSTROM * HESSFIT_BOHR_TO_ANGSTROM;
                    fa = factor_by_dihedrals(cases[c].x, a, 0, b, nbrs, cases[c].n - 1);
                    fc = factor_by_dihedrals(cases[c].x, b, 0, a, nbrs, cases[c].n - 1);
                    CHECK(fa > 1.0 && fc > 1.0 && fa < 2.0 && fc < 2.0, "factors in (1, 2): %g %g", fa, fc);
                    want = om.scaling / (fa / (ra * eo.projection[0]) + fc / (rc * eo.projection[1]));
                }
                CHECK_CLOSE(em.factor[0], fa, 1e-12, 1.0, "f_A");
                CHECK_CLOSE(em.factor[1], fc, 1e-12, 1.0, "f_C");
                CHECK_CLOSE(em.k_au, want, 1e-12, want, "modified angle k");
                max_dev = fmax(max_dev, rel_err(em.k_au, want));
            }
        }
        printf("modified Seminario, %-14s: angles k_mod/k_orig %s, max rel dev %.3g\n", cases[c].name,
               cases[c].want_ratio > 0.0 ? (cases[c].want_ratio == 0.8   ? "= 0.8 (f = 1.25)"
                                            : cases[c].want_ratio == 0.5 ? "= 0.5 (f = 2)"
                                                                         : "= 1 (no other angles)")
                                         : "from dihedral-angle factors",
               max_dev);
        hessfit_seminario_free(so);
        hessfit_seminario_free(sm);
        hessfit_molecule_free(&m);
    }
}

/* A linear angle (F-C-F of the SN2 TS is 180 degrees): averaged over planes, finite, flagged, and
 * invariant under rotation to the accuracy of the 360-plane mean. */
static void test_linear_angle(void)
{
    hessfit_molecule mol;
    hessfit_seminario *s;
    hessfit_seminario_options o = hessfit_seminario_default_options();
    hessfit_seminario_estimate e;
    HF_CALL(hessfit_npy_xyz_read(test_source_path("examples/data/sn2/sn2-ts-optimized.xyz"),
                            test_source_path("examples/data/sn2/sn2-ts-hessian.npy"), &mol));
    HF_CALL(hessfit_seminario_create(&mol, &o, &s));
    HF_CALL(hessfit_seminario_angle(s, 1, 0, 2, &e));
    CHECK(e.linear == 1 && isfinite(e.k_au), "F-C-F: linear %d, k %g", e.linear, e.k_au);
    /* C sits 5.8e-7 A off the F-F axis: sin(theta) = 6e-7 < HESSFIT_SEMINARIO_LINEAR_SIN */
    CHECK_CLOSE(e.value, 180.0, 1e-6, 180.0, "F-C-F angle");
    printf("SN2 linear F-C-F: %.3f deg, k = %.6g kcal/mol/rad^2 (mean over %d planes)\n", e.value, e.k,
           HESSFIT_SEMINARIO_LINEAR_SAMPLES);
    hessfit_seminario_free(s);
    hessfit_molecule_free(&mol);
}

/* ---- averaging and applying -------------------------------------------------------------------- */

static void test_average_apply(void)
{
    /* the diatomic spring (k0 > 0) and a copy with k0 < 0 as two "structures" */
    double x[6] = {0, 0, 0, 1.2, 0, 0}, h[36];
    int z[2] = {6, 6};
    hessfit_molecule m[2];
    hessfit_seminario *s[2];
    hessfit_seminario_group *groups = NULL;
    hessfit_seminario_estimate est[3];
    int n_groups = 0, n_changed = -1;
    hessfit_seminario_options o = hessfit_seminario_q2mm_options();
    const double k0[2] = {0.5, -0.2};
    hessfit_seminario_instance inst[3] = {{0, HESSFIT_TERM_BOND, {0, 1, -1}, 1866, NAN},
                                     {1, HESSFIT_TERM_BOND, {1, 0, -1}, 1866, 1.5},
                                     {0, HESSFIT_TERM_BOND, {0, 1, -1}, 1860, NAN}};
    hessfit_forcefield ff;
    hessfit_ff_param params[2];
    for (int q = 0; q < 2; q++) {
        memset(h, 0, sizeof h);
        h[0] = h[21] = k0[q];
        h[3] = h[18] = -k0[q];
        make_molecule(&m[q], q ? "negative" : "positive", 2, z, x, h, NULL, 0);
        HF_CALL(hessfit_seminario_create(&m[q], &o, &s[q]));
    }
    HF_CALL(hessfit_seminario_average(s, 2, inst, 3, est, &groups, &n_groups));
    CHECK(n_groups == 2 && groups[0].group == 1860 && groups[1].group == 1866, "groups sorted by line");
    CHECK(groups[1].n_instances == 2 && groups[1].n_used == 1 && groups[1].n_nonpositive == 1,
          "positive policy: 2 instances, 1 used, 1 non-positive");
    CHECK_CLOSE(groups[1].k_au, o.scaling * 0.5, 1e-14, 1.0, "mean over the positive estimate");
    CHECK_CLOSE(groups[1].value, (1.2 + 1.5) / 2, 1e-14, 1.0, "equilibrium: geometry and the given value");
    CHECK_CLOSE(groups[1].k_mdyn, o.scaling * 0.5 * HESSFIT_Q2MM_HARTREE_PER_BOHR2_TO_MDYN_PER_A, 1e-14, 1.0, "mdyn mean");
    CHECK(est[1].k_au < 0.0, "per-instance estimates come back");
    free(groups);
    o.policy = HESSFIT_SEMINARIO_AVERAGE_ALL;
    {
        hessfit_seminario *s_all[2];
        for (int q = 0; q < 2; q++)
            HF_CALL(hessfit_seminario_create(&m[q], &o, &s_all[q]));
        HF_CALL(hessfit_seminario_average(s_all, 2, inst, 2, NULL, &groups, &n_groups));
        CHECK(n_groups == 1 && groups[0].n_used == 2, "all policy uses both");
        CHECK_CLOSE(groups[0].k_au, o.scaling * (0.5 - 0.2) / 2, 1e-14, 1.0, "mean of all");
        free(groups);
        /* estimators with different options cannot be averaged together */
        {
            hessfit_seminario *mixed[2] = {s[0], s_all[1]};
            hessfit_status st = hessfit_seminario_average(mixed, 2, inst, 2, NULL, &groups, &n_groups);
            CHECK(st == HESSFIT_ERROR_INVALID_ARGUMENT && strstr(hessfit_last_error(), "other options") != NULL,
                  "mixed options: %s", hessfit_last_error());
        }
        for (int q = 0; q < 2; q++)
            hessfit_seminario_free(s_all[q]);
    }
    /* only the negative structure: no k, and apply keeps the old constant but sets r0 */
    {
        hessfit_seminario_instance neg = {0, HESSFIT_TERM_BOND, {0, 1, -1}, 1866, NAN};
        HF_CALL(hessfit_seminario_average(&s[1], 1, &neg, 1, NULL, &groups, &n_groups));
        CHECK(n_groups == 1 && groups[0].n_used == 0 && isnan(groups[0].k), "all non-positive: no k");
        memset(&ff, 0, sizeof ff);
        memset(params, 0, sizeof params);
        params[0].kind = HESSFIT_PARAM_BOND;
        params[0].n_values = 2;
        params[0].values[0] = 21.9463 * HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2;
        params[0].values[1] = 1.7492;
        params[0].line = 1866;
        params[1].kind = HESSFIT_PARAM_ANGLE;
        params[1].n_values = 2;
        params[1].line = 1868;
        ff.n_params = 2;
        ff.params = params;
        HF_CALL(hessfit_seminario_apply(&ff, groups, 1, 0, &n_changed, NULL));
        CHECK(n_changed == 1 && params[0].values[0] == 21.9463 * HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2 &&
                  params[0].values[1] == 1.2,
              "kept k, new r0: %g %g", params[0].values[0], params[0].values[1]);
        /* a group on a line of another kind, or on no parameter line */
        /* a group on a line of another kind is an error; on a line without parameter skipped */
        groups[0].group = 1868;
        CHECK(hessfit_seminario_apply(&ff, groups, 1, 0, NULL, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT &&
                  strstr(hessfit_last_error(), ":1868: a angle parameter") != NULL,
              "kind mismatch: %s", hessfit_last_error());
        groups[0].group = 5;
        {
            int n_skipped = -1;
            HF_CALL(hessfit_seminario_apply(&ff, groups, 1, 0, &n_changed, &n_skipped));
            CHECK(n_changed == 0 && n_skipped == 1, "no parameter on line 5: skipped (%d, %d)", n_changed, n_skipped);
            groups[0].group = 1866; /* not in an OPT substructure (no substructures here) */
            HF_CALL(hessfit_seminario_apply(&ff, groups, 1, HESSFIT_SEMINARIO_APPLY_OPT_ONLY, &n_changed, &n_skipped));
            CHECK(n_changed == 0 && n_skipped == 1, "OPT only: skipped (%d, %d)", n_changed, n_skipped);
        }
        free(groups);
    }
    printf("averaging: positive-only policy (1 of 2 used), all policy, old k kept when none is positive\n");
    for (int q = 0; q < 2; q++) {
        hessfit_seminario_free(s[q]);
        hessfit_molecule_free(&m[q]);
    }
}

/* ---- bad input ------------------------------------------------------------------------------- */

static void expect_error(hessfit_status got, hessfit_status want, const char *part, const char *what)
{
    CHECK(got == want, "%s: got %s, expected %s (%s)", what, hessfit_status_string(got), hessfit_status_string(want),
          hessfit_last_error());
    CHECK(strstr(hessfit_last_error(), part) != NULL, "%s: message lacks '%s': %s", what, part, hessfit_last_error());
    printf("  %-26s -> %s: %s\n", what, hessfit_status_string(got), hessfit_last_error());
}

static void test_bad_input(void)
{
    const double x[9] = {0, 0, 0, 1.0, 0, 0, 0, 1.0, 0};
    const int z[3] = {8, 1, 1}, bonds[4] = {0, 1, 0, 2};
    double h[81];
    hessfit_molecule m;
    hessfit_seminario *s = NULL;
    hessfit_seminario_estimate e;
    hessfit_seminario_options o = hessfit_seminario_default_options();
    test_seed(3);
    random_hessian(3, h);

    printf("bad input:\n");
    make_molecule(&m, "noHessian", 3, z, x, NULL, bonds, 2);
    expect_error(hessfit_seminario_create(&m, &o, &s), HESSFIT_ERROR_INVALID_ARGUMENT, "no Hessian", "no Hessian");
    CHECK(s == NULL, "no estimator on failure");
    hessfit_molecule_free(&m);

    make_molecule(&m, "water", 3, z, x, h, NULL, 0);
    o.method = HESSFIT_SEMINARIO_MODIFIED;
    expect_error(hessfit_seminario_create(&m, &o, &s), HESSFIT_ERROR_INVALID_ARGUMENT, "connectivity", "modified, no bonds");
    o = hessfit_seminario_default_options();
    o.scaling = NAN;
    expect_error(hessfit_seminario_create(&m, &o, &s), HESSFIT_ERROR_INVALID_ARGUMENT, "scaling", "NaN scaling");
    o = hessfit_seminario_default_options();
    o.ts = (hessfit_seminario_ts)7;
    expect_error(hessfit_seminario_create(&m, &o, &s), HESSFIT_ERROR_INVALID_ARGUMENT, "ts 7", "bad ts option");
    o = hessfit_seminario_default_options();
    expect_error(hessfit_seminario_create(NULL, &o, &s), HESSFIT_ERROR_NULL_ARGUMENT, "mol", "NULL molecule");

    m.hessian[3 * 9 + 4] = NAN;
    expect_error(hessfit_seminario_create(&m, &o, &s), HESSFIT_ERROR_NONFINITE, "Hessian element (3, 4)", "NaN in Hessian");
    m.hessian[3 * 9 + 4] = 0.0;
    m.coords[4] = INFINITY;
    expect_error(hessfit_seminario_create(&m, &o, &s), HESSFIT_ERROR_NONFINITE, "atom 2 coordinate y", "Inf coordinate");
    m.coords[4] = 0.0;

    HF_CALL(hessfit_seminario_create(&m, &o, &s));
    {
        hessfit_seminario_instance mix[2] = {{0, HESSFIT_TERM_BOND, {0, 1, -1}, 7, NAN}, {0, HESSFIT_TERM_ANGLE, {1, 0, 2}, 7, NAN}};
        hessfit_seminario_instance bad_mol = {1, HESSFIT_TERM_BOND, {0, 1, -1}, 7, NAN};
        hessfit_seminario_instance bad_atom = {0, HESSFIT_TERM_BOND, {0, 9, -1}, 7, NAN};
        hessfit_seminario_group *groups = NULL;
        int n_groups = -1;
        expect_error(hessfit_seminario_average(&s, 1, mix, 2, NULL, &groups, &n_groups), HESSFIT_ERROR_INVALID_ARGUMENT,
                     "group 7 mixes bond and angle", "group mixing kinds");
        CHECK(groups == NULL && n_groups == 0, "no groups on failure");
        expect_error(hessfit_seminario_average(&s, 1, &bad_mol, 1, NULL, &groups, &n_groups), HESSFIT_ERROR_INVALID_ARGUMENT,
                     "molecule 1 out of range", "instance molecule range");
        expect_error(hessfit_seminario_average(&s, 1, &bad_atom, 1, NULL, &groups, &n_groups), HESSFIT_ERROR_INVALID_ARGUMENT,
                     "bond 1-10", "instance atom range");
    }
    expect_error(hessfit_seminario_bond(s, 0, 3, &e), HESSFIT_ERROR_INVALID_ARGUMENT, "atom 4 out of range 1..3",
                 "bond index out of range");
    expect_error(hessfit_seminario_bond(s, -1, 1, &e), HESSFIT_ERROR_INVALID_ARGUMENT, "bond 0-2", "negative index");
    expect_error(hessfit_seminario_angle(s, 1, 0, 5, &e), HESSFIT_ERROR_INVALID_ARGUMENT, "angle 2-1-6",
                 "angle index out of range");
    expect_error(hessfit_seminario_bond(s, 1, 1, &e), HESSFIT_ERROR_INVALID_ARGUMENT, "itself", "bond to itself");
    expect_error(hessfit_seminario_angle(s, 1, 0, 1, &e), HESSFIT_ERROR_INVALID_ARGUMENT, "twice", "angle repeats atom");
    {
        int atoms[4] = {0, 1, 2, 0};
        expect_error(hessfit_seminario_term(s, HESSFIT_TERM_TORSION, atoms, &e), HESSFIT_ERROR_UNSUPPORTED, "torsion",
                     "torsion term");
    }
    hessfit_seminario_free(s);

    /* coincident atoms: a zero-length bond and a zero-length angle arm */
    m.coords[3] = 0.0;
    HF_CALL(hessfit_seminario_create(&m, &o, &s));
    expect_error(hessfit_seminario_bond(s, 0, 1, &e), HESSFIT_ERROR_INVALID_ARGUMENT, "coincide", "zero-length bond");
    expect_error(hessfit_seminario_angle(s, 1, 0, 2, &e), HESSFIT_ERROR_INVALID_ARGUMENT, "coincide", "zero-length angle arm");
    hessfit_seminario_free(s);
    hessfit_molecule_free(&m);

    /* bonds out of range for the modified method */
    {
        const int bad_bonds[4] = {0, 1, 0, 3};
        make_molecule(&m, "badbonds", 3, z, x, h, bad_bonds, 2);
        o.method = HESSFIT_SEMINARIO_MODIFIED;
        expect_error(hessfit_seminario_create(&m, &o, &s), HESSFIT_ERROR_INVALID_ARGUMENT, "bond 2 joins atoms 1 and 4",
                     "bond list out of range");
        hessfit_molecule_free(&m);
    }
}

int main(void)
{
    test_units();
    test_sn2_golden();
    test_ethane_golden();
    test_rh_enamide_golden();
    test_diatomic();
    test_ts_replace();
    test_rotation_invariance();
    test_modified_factors();
    test_linear_angle();
    test_average_apply();
    test_bad_input();
    printf("test_seminario: all checks passed\n");
    return 0;
}
