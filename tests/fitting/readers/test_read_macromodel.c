/* The MacroModel .mmo reader and the Tripos .mol2 reader on the real rh-enamide training set
 * (q2mm examples, MIT): structure and term counts against the counts the files announce, the
 * force-field lines against the lines of mm3.fld, connectivity of every reported term, the .mmo
 * against the .mol2 of the same nine structures, the MacroModel type table against atom.typ,
 * and bad input (truncated and mutated copies written to a mkdtemp directory). */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_molecule.h"
#include "test_util.h"
#include "hf_macromodel_types.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_STRUCT 9

static const int golden_atoms[N_STRUCT] = {36, 38, 38, 62, 62, 58, 58, 58, 58};
/* rows of each term table, as announced by the .mmo headers (and read by the test's own scan) */
static const int golden_bonds[N_STRUCT] = {38, 40, 40, 67, 67, 62, 62, 62, 62};
static const int golden_angles[N_STRUCT] = {78, 84, 84, 138, 138, 132, 132, 132, 132};
static const int golden_torsions[N_STRUCT] = {56, 75, 75, 166, 166, 165, 165, 165, 165};
static const int golden_impropers[N_STRUCT] = {6, 4, 4, 10, 10, 4, 4, 4, 4};
/* elements per structure: Rh O N P C H */
static const int golden_carbons[N_STRUCT] = {10, 10, 10, 22, 22, 18, 18, 18, 18};

/* ---- small helpers ------------------------------------------------------------------------ */

/* 1 if atoms a and b are bonded. */
static int bonded(const hessfit_molecule *m, int a, int b)
{
    for (int k = 0; k < m->n_bonds; k++)
        if ((m->bonds[2 * k] == a && m->bonds[2 * k + 1] == b) || (m->bonds[2 * k] == b && m->bonds[2 * k + 1] == a))
            return 1;
    return 0;
}

static double bond_order_of(const hessfit_molecule *m, int a, int b)
{
    for (int k = 0; k < m->n_bonds; k++)
        if ((m->bonds[2 * k] == a && m->bonds[2 * k + 1] == b) || (m->bonds[2 * k] == b && m->bonds[2 * k + 1] == a))
            return m->bond_orders[k];
    return -1.0;
}

/* The decimal numbers of a .fld line ("1.5684", "-0.4611"), in order; returns how many. */
static int fld_numbers(const char *line, double *out, int max)
{
    char buf[512];
    char *save = NULL, *tok;
    int n = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (tok = strtok_r(buf, " \t", &save); tok != NULL && n < max; tok = strtok_r(NULL, " \t", &save)) {
        char *end;
        double v;
        if (strchr(tok, '.') == NULL)
            continue;
        v = strtod(tok, &end);
        if (*end == '\0')
            out[n++] = v;
    }
    return n;
}

/* ---- the MacroModel type table against atom.typ --------------------------------------------- */

static void test_type_table(void)
{
    char *text = test_load_gunzip(test_source_path("examples/data/rh-enamide/atom.typ"), NULL);
    char *save = NULL;
    int checked = 0, by_mass = 0, excluded = 0;
    printf("MacroModel type table vs examples/data/rh-enamide/atom.typ\n");
    for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char number[16], atno[16], mass[32], name[16];
        const char *p = line;
        while (*p == ' ')
            p++;
        if (*p == '#' || *p == '\0' || sscanf(p, "%15s %15s %31s %15s", number, atno, mass, name) != 4)
            continue;
        int z = hf_macromodel_type_atomic_number(name);
        if (strcmp(atno, "!") != 0 && atoi(atno) > 0) {
            CHECK(z == atoi(atno), "type %s (%s): table gives %d, atom.typ %s", name, number, z, atno);
            checked++;
        } else if (strcmp(atno, "!") == 0) {
            /* no atomic number: the mass tells the element (RH: 102.9055 = Rh), or none (Z0) */
            double m = atof(mass);
            int match = 0;
            for (int e = 1; e <= HESSFIT_MAX_ATOMIC_NUMBER; e++)
                if (hessfit_element_symbol(e) != NULL && fabs(hessfit_element_average_mass(e) - m) < 0.01)
                    match = e;
            CHECK(z == match, "type %s mass %s: table gives %d, the mass says %d", name, mass, z, match);
            if (match)
                by_mass++;
            else
                excluded++;
        } else {
            CHECK(z == 0, "type %s has atomic number %s (dummy/lone pair), table gives %d", name, atno, z);
            excluded++;
        }
    }
    printf("  %d types by atomic number, %d by mass (RH -> Rh), %d without element\n", checked, by_mass, excluded);
    CHECK(checked == 9 && by_mass == 1 && excluded == 2, "atom.typ entries: %d %d %d", checked, by_mass, excluded);
    /* case matters in MacroModel labels; the wildcard and pseudo-atoms have no element */
    CHECK(hf_macromodel_type_atomic_number("C1") == 6 && hf_macromodel_type_atomic_number("c1") == 29, "C1/c1");
    CHECK(hf_macromodel_type_atomic_number("O2") == 8 && hf_macromodel_type_atomic_number("o2") == 27, "O2/o2");
    CHECK(hf_macromodel_type_atomic_number("N2") == 7 && hf_macromodel_type_atomic_number("n2") == 28, "N2/n2");
    CHECK(hf_macromodel_type_atomic_number("00") == 0 && hf_macromodel_type_atomic_number("Lp") == 0 &&
              hf_macromodel_type_atomic_number("Du") == 0 && hf_macromodel_type_atomic_number("Z0") == 0,
          "pseudo types");
    free(text);
}

/* ---- the real .mmo ---------------------------------------------------------------------------- */

/* The test's own scan of the announced counts: "<n> <words> interactions present". */
static void announced_counts(const char *text, const char *words, int *counts, int max)
{
    char needle[64];
    int k = 0;
    snprintf(needle, sizeof needle, " %s interactions present", words);
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle)) {
        const char *q = p;
        while (q > text && q[-1] == ' ')
            q--;
        while (q > text && isdigit((unsigned char)q[-1]))
            q--;
        CHECK(k < max, "too many '%s' headers", words);
        counts[k++] = atoi(q);
    }
    CHECK(k == max, "%d '%s' headers, expected %d", k, words, max);
}

static void test_mmo(const hessfit_molecule_list *mmo, const char *mmo_text)
{
    static const char *const kinds[4] = {"Stretch", "Bend", "Proper Torsion", "Improper torsion"};
    const int *golden[4] = {golden_bonds, golden_angles, golden_torsions, golden_impropers};
    int announced[4][N_STRUCT], used_1860_1867[8] = {0}, order0 = 0, exceptions = 0, across_order0 = 0;
    printf(".mmo: %d structures\n", mmo->n);
    CHECK(mmo->n == N_STRUCT, "%d structures", mmo->n);
    for (int k = 0; k < 4; k++)
        announced_counts(mmo_text, kinds[k], announced[k], N_STRUCT);
    CHECK(strcmp(mmo->items[0].name, "1 ZDMP from JCTC SI") == 0, "name 1 '%s'", mmo->items[0].name);
    CHECK(strcmp(mmo->items[8].name, "9 (R,R)-Me-BPE pro-S Conformation 2 from JCTC SI") == 0, "name 9 '%s'",
          mmo->items[8].name);
    for (int s = 0; s < N_STRUCT; s++) {
        const hessfit_molecule *m = &mmo->items[s];
        int count[HESSFIT_NUM_TERM_KINDS] = {0}, z_count[4] = {0}, o0 = 0;
        HF_CALL(hessfit_molecule_check(m, m->source));
        CHECK(m->n_atoms == golden_atoms[s], "structure %d: %d atoms", s + 1, m->n_atoms);
        CHECK(m->atom_types != NULL && m->partial_charges != NULL && m->coords != NULL && m->bonds_known &&
                  m->bond_orders != NULL && m->n_bonds > 0,
              "structure %d lacks types/charges/coordinates/bonds", s + 1);
        CHECK(m->has_charge && m->charge == 1, "structure %d: total charge %d (%d)", s + 1, m->charge, m->has_charge);
        for (int i = 0; i < m->n_atoms; i++) {
            int z = m->atomic_numbers[i];
            z_count[0] += z == 45;
            z_count[1] += z == 6;
            z_count[2] += z == 15;
            z_count[3] += z == 1;
        }
        CHECK(z_count[0] == 1 && z_count[1] == golden_carbons[s] && z_count[2] == 2 &&
                  z_count[3] == m->n_atoms - 6 - golden_carbons[s],
              "structure %d: Rh %d C %d P %d H %d", s + 1, z_count[0], z_count[1], z_count[2], z_count[3]);
        CHECK(strcmp(m->atom_types[0], "RH") == 0 && m->atomic_numbers[0] == 45, "atom 1 is %s", m->atom_types[0]);
        for (int t = 0; t < m->n_reported_terms; t++)
            count[m->reported_terms[t].kind]++;
        for (int k = 0; k < 4; k++) {
            CHECK(count[k] == announced[k][s] && count[k] == golden[k][s], "structure %d: %d %s terms, announced %d",
                  s + 1, count[k], kinds[k], announced[k][s]);
        }
        /* every bond of the connectivity has its stretch term and the other way round */
        CHECK(m->n_bonds == count[HESSFIT_TERM_BOND], "structure %d: %d bonds vs %d stretch terms", s + 1, m->n_bonds,
              count[HESSFIT_TERM_BOND]);
        for (int b = 0; b < m->n_bonds; b++)
            o0 += m->bond_orders[b] == 0.0;
        order0 += o0;
        CHECK(o0 == 3, "structure %d: %d bonds without order", s + 1, o0);
        printf("  %d '%s': %d atoms, %d bonds (%d without order), terms: %d bonds %d angles %d torsions %d "
               "impropers (announced %d %d %d %d)\n",
               s + 1, m->name, m->n_atoms, m->n_bonds, o0, count[0], count[1], count[2], count[3], announced[0][s],
               announced[1][s], announced[2][s], announced[3][s]);
        /* connectivity of every term (impropers: MacroModel prints the centre second) */
        for (int t = 0; t < m->n_reported_terms; t++) {
            const hessfit_reported_term *r = &m->reported_terms[t];
            const int *a = r->atoms;
            int ok = 0;
            switch (r->kind) {
            case HESSFIT_TERM_BOND: ok = bonded(m, a[0], a[1]) && a[2] == -1; break;
            case HESSFIT_TERM_ANGLE: ok = bonded(m, a[0], a[1]) && bonded(m, a[1], a[2]) && a[3] == -1; break;
            case HESSFIT_TERM_TORSION: ok = bonded(m, a[0], a[1]) && bonded(m, a[1], a[2]) && bonded(m, a[2], a[3]); break;
            default: ok = bonded(m, a[1], a[0]) && bonded(m, a[1], a[2]) && bonded(m, a[1], a[3]); break;
            }
            if (!ok) {
                exceptions++;
                printf("  EXCEPTION %s line %d: %s %d %d %d %d\n", m->source, r->line, hessfit_term_kind_name(r->kind),
                       a[0] + 1, a[1] + 1, a[2] + 1, a[3] + 1);
            }
            for (int k = 0; k + 1 < hessfit_term_kind_atoms(r->kind) && r->kind != HESSFIT_TERM_IMPROPER; k++)
                if (bond_order_of(m, a[k], a[k + 1]) == 0.0) {
                    across_order0++;
                    break;
                }
            if (r->ff_line >= 1860 && r->ff_line <= 1867)
                used_1860_1867[r->ff_line - 1860]++;
        }
    }
    printf("  bonds without order (blank mark): %d; terms across them: %d; connectivity exceptions: %d\n", order0,
           across_order0, exceptions);
    CHECK(exceptions == 0, "%d terms whose atoms are not connected as their kind requires", exceptions);
    CHECK(across_order0 > 0, "no term across a bond without order");
    for (int k = 0; k < 8; k++) {
        printf("  FF line %d used by %d bond terms\n", 1860 + k, used_1860_1867[k]);
        CHECK(used_1860_1867[k] > 0, "FF line %d never used", 1860 + k);
    }
    /* the first structure's Rh-H(17) bond: line 1860, Subst, k 2.5782, r0 1.5684 (mmo line 19) */
    {
        const hessfit_molecule *m = &mmo->items[0];
        int found = 0;
        for (int t = 0; t < m->n_reported_terms; t++) {
            const hessfit_reported_term *r = &m->reported_terms[t];
            if (r->kind == HESSFIT_TERM_BOND && r->atoms[0] == 0 && r->atoms[1] == 16) {
                found = 1;
                CHECK(r->ff_line == 1860 && strcmp(r->source, "Subst") == 0 && r->values[0] == 2.5782 &&
                          r->values[1] == 1.5684 && r->line == 19,
                      "Rh-H17: line %d source %s k %g r0 %g at %d", r->ff_line, r->source, r->values[0], r->values[1],
                      r->line);
                CHECK(strcmp(m->atom_types[16], "H1") == 0, "atom 17 is %s", m->atom_types[16]);
            }
        }
        CHECK(found, "no Rh-H17 bond term in structure 1");
        /* the first torsion and the first improper, as printed at .mmo lines 187 and 246 */
        for (int t = 0; t < m->n_reported_terms; t++) {
            const hessfit_reported_term *r = &m->reported_terms[t];
            if (r->line == 187)
                CHECK(r->kind == HESSFIT_TERM_TORSION && r->atoms[0] == 0 && r->atoms[3] == 23 && r->ff_line == 990 &&
                          strcmp(r->source, "A3") == 0 && r->values[2] == 0.35,
                      "torsion at line 187");
            if (r->line == 246)
                CHECK(r->kind == HESSFIT_TERM_IMPROPER && r->atoms[0] == 1 && r->atoms[1] == 2 && r->atoms[2] == 3 &&
                          r->atoms[3] == 11 && r->ff_line == 1022 && r->values[0] == 0.8,
                      "improper at line 246");
        }
    }
}

/* ---- the FF lines against mm3.fld ------------------------------------------------------------- */

static void test_ff_lines(const hessfit_molecule_list *mmo)
{
    char *fld = test_load_gunzip(test_source_path("examples/data/rh-enamide/ff/mm3.fld"), NULL);
    char *lines[4096];
    int n_lines = 0, checked[HESSFIT_NUM_TERM_KINDS] = {0}, continuation = 0, split_torsion = 0;
    double max_diff[HESSFIT_NUM_TERM_KINDS] = {0};
    for (char *p = fld; *p && n_lines < 4096;) {
        char *nl = strchr(p, '\n');
        lines[n_lines++] = p;
        if (nl == NULL)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    printf("FF lines vs examples/data/rh-enamide/ff/mm3.fld (%d lines)\n", n_lines);
    CHECK(n_lines == 1913, "mm3.fld has %d lines", n_lines);
    /* spot checks on the text of the lines themselves */
    CHECK(strstr(lines[1859], "1.5684") && strstr(lines[1859], "2.5782"), "line 1860: %s", lines[1859]);
    CHECK(strstr(lines[81], "C2 - H1") && strstr(lines[81], "1.1180     4.3700"), "line 82: %s", lines[81]);
    CHECK(strstr(lines[94], "O2 = C2") && strstr(lines[94], "1.2080    10.1000"), "line 95: %s", lines[94]);
    CHECK(strstr(lines[142], "PX - C3") && strstr(lines[142], "1.8490     2.9100"), "line 143: %s", lines[142]);
    CHECK(strstr(lines[117], "N1 % C1") && strstr(lines[117], "1.1580    17.3300"), "line 118: %s", lines[117]);
    CHECK(strstr(lines[1866], "1.4281") && strstr(lines[1866], "4.1874"), "line 1867: %s", lines[1866]);
    for (int s = 0; s < mmo->n; s++) {
        const hessfit_molecule *m = &mmo->items[s];
        for (int t = 0; t < m->n_reported_terms; t++) {
            const hessfit_reported_term *r = &m->reported_terms[t];
            double v[8], d = 0.0;
            int n, line = r->ff_line;
            CHECK(line >= 1 && line <= n_lines, "%s line %d: FF line %d outside mm3.fld", m->source, r->line, line);
            n = fld_numbers(lines[line - 1], v, 8);
            if (r->kind == HESSFIT_TERM_BOND && n == 0) {
                /* a continuation line (an extra environment of the parameter above it) */
                CHECK(line >= 2 && (n = fld_numbers(lines[line - 2], v, 8)) >= 2, "FF line %d", line);
                continuation++;
            }
            switch (r->kind) {
            case HESSFIT_TERM_BOND:  /* r0 k */
            case HESSFIT_TERM_ANGLE: /* theta0 k */
                CHECK(n >= 2, "FF line %d has %d numbers", line, n);
                d = fmax(fabs(r->values[1] - v[0]), fabs(r->values[0] - v[1]));
                break;
            case HESSFIT_TERM_TORSION: /* V1 V2 V3 */
                CHECK(n >= 3, "FF line %d has %d numbers", line, n);
                if (line == 1150 && fabs(r->values[1] - v[1]) > 1e-4) {
                    /* the substructure torsion "00 2 3 00" (V2 36.8) is printed as 36.8 / 4 */
                    CHECK(fabs(4.0 * r->values[1] - v[1]) < 1e-9 && r->values[0] == v[0] && r->values[2] == v[2],
                          "line 1150 torsion printed %g", r->values[1]);
                    split_torsion++;
                    continue;
                }
                for (int k = 0; k < 3; k++)
                    d = fmax(d, fabs(r->values[k] - v[k]));
                break;
            default: /* improper: the .fld "Const." field follows its "Angle" field */
                CHECK(n >= 2, "FF line %d has %d numbers", line, n);
                d = fabs(r->values[0] - v[1]);
                break;
            }
            /* half a unit of the print precision: bonds 4 decimals, the others 3 */
            CHECK(d <= (r->kind == HESSFIT_TERM_BOND ? 0.50001e-4 : 0.50001e-3),
                  "%s line %d: %s printed values differ from FF line %d by %g: %s", m->source, r->line,
                  hessfit_term_kind_name(r->kind), line, d, lines[line - 1]);
            checked[r->kind]++;
            max_diff[r->kind] = fmax(max_diff[r->kind], d);
        }
    }
    for (int k = 0; k < HESSFIT_NUM_TERM_KINDS; k++)
        printf("  %-8s: %4d terms match their FF line, max |printed - fld| = %.2g\n", hessfit_term_kind_name(k), checked[k],
               max_diff[k]);
    printf("  bond terms naming a continuation line (checked against the line above): %d\n", continuation);
    printf("  torsions on line 1150 printed with V2 = fld V2 / 4: %d\n", split_torsion);
    CHECK(checked[HESSFIT_TERM_BOND] == 500 && checked[HESSFIT_TERM_ANGLE] == 1050 && checked[HESSFIT_TERM_TORSION] == 1150 &&
              checked[HESSFIT_TERM_IMPROPER] == 50,
          "checked %d %d %d %d", checked[0], checked[1], checked[2], checked[3]);
    CHECK(continuation == 9 && split_torsion == 48, "continuation %d split %d", continuation, split_torsion);
    free(fld);
}

/* ---- mol2 -------------------------------------------------------------------------------------- */

static void test_mol2(const hessfit_molecule_list *mol2)
{
    int aromatic = 0, order0 = 0;
    printf(".mol2: %d molecules\n", mol2->n);
    CHECK(mol2->n == N_STRUCT, "%d molecules", mol2->n);
    for (int s = 0; s < N_STRUCT; s++) {
        const hessfit_molecule *m = &mol2->items[s];
        int px = 0;
        HF_CALL(hessfit_molecule_check(m, m->source));
        CHECK(m->n_atoms == golden_atoms[s] && m->n_bonds == golden_bonds[s] && m->bonds_known,
              "molecule %d: %d atoms %d bonds", s + 1, m->n_atoms, m->n_bonds);
        CHECK(m->atom_names != NULL && m->atom_types != NULL && m->partial_charges != NULL, "molecule %d fields",
              s + 1);
        for (int i = 0; i < m->n_atoms; i++) {
            /* every element agrees with the atom name read as an element symbol */
            CHECK(m->atomic_numbers[i] == hessfit_element_atomic_number(m->atom_names[i]), "molecule %d atom %d: %d vs %s",
                  s + 1, i + 1, m->atomic_numbers[i], m->atom_names[i]);
            px += strcmp(m->atom_types[i], "PX") == 0 || strcmp(m->atom_types[i], "HX") == 0;
        }
        CHECK(px == 4, "molecule %d: %d PX/HX atoms", s + 1, px);
        for (int b = 0; b < m->n_bonds; b++) {
            aromatic += m->bond_orders[b] == 1.5;
            order0 += m->bond_orders[b] == 0.0;
        }
    }
    printf("  atoms and bonds as the .mmo; %d aromatic bonds, %d 'nc' bonds (order 0)\n", aromatic, order0);
    CHECK(aromatic == 12 && order0 == 27, "aromatic %d order0 %d", aromatic, order0);
}

static void test_mmo_vs_mol2(const hessfit_molecule_list *mmo, const hessfit_molecule_list *mol2)
{
    double max_dd = 0.0, max_dx = 0.0;
    long pairs = 0;
    int kekule = 0;
    for (int s = 0; s < N_STRUCT; s++) {
        const hessfit_molecule *a = &mmo->items[s], *b = &mol2->items[s];
        CHECK(a->n_atoms == b->n_atoms && strcmp(a->name, b->name) == 0, "structure %d: %s vs %s", s + 1, a->name,
              b->name);
        for (int i = 0; i < a->n_atoms; i++) {
            CHECK(a->atomic_numbers[i] == b->atomic_numbers[i], "structure %d atom %d element", s + 1, i + 1);
            CHECK(a->atomic_numbers[i] == hessfit_element_atomic_number(b->atom_names[i]),
                  "structure %d atom %d: mmo type %s vs mol2 name %s", s + 1, i + 1, a->atom_types[i],
                  b->atom_names[i]);
            for (int k = 0; k < 3; k++)
                max_dx = fmax(max_dx, fabs(a->coords[3 * i + k] - b->coords[3 * i + k]));
            for (int j = 0; j < i; j++, pairs++)
                max_dd = fmax(max_dd, fabs(test_distance(a->coords, i, j) - test_distance(b->coords, i, j)));
        }
        CHECK(a->n_bonds == b->n_bonds, "structure %d: %d vs %d bonds", s + 1, a->n_bonds, b->n_bonds);
        for (int k = 0; k < b->n_bonds; k++) {
            double oa = bond_order_of(a, b->bonds[2 * k], b->bonds[2 * k + 1]), ob = b->bond_orders[k];
            CHECK(oa >= 0.0, "structure %d: mol2 bond %d-%d missing in the .mmo", s + 1, b->bonds[2 * k] + 1,
                  b->bonds[2 * k + 1] + 1);
            if (ob == 1.5) {
                CHECK(oa == 1.0 || oa == 2.0, "aromatic bond as %g", oa);
                kekule++;
            } else {
                CHECK(oa == ob, "structure %d bond %d-%d: order %g vs %g", s + 1, b->bonds[2 * k] + 1,
                      b->bonds[2 * k + 1] + 1, oa, ob);
            }
        }
    }
    printf(".mmo vs .mol2: %ld atom pairs, max |r_mmo - r_mol2| = %.3g A, max coordinate difference %.3g A; bond "
           "sets equal, orders equal (%d aromatic mol2 bonds are Kekule 1/2 in the .mmo)\n",
           pairs, max_dd, max_dx, kekule);
    CHECK(max_dd <= 1e-3, "distances differ by %g", max_dd);
}

static void test_small_mol2(void)
{
    hessfit_molecule_list l;
    const char *dmpe = test_source_path("examples/data/rh-enamide/2_dmpe_conf_1.mol2");
    char *text, *fixed;
    const char *path;
    int counts[120] = {0};
    HF_CALL(hessfit_mol2_read(test_source_path("tests/data/ethane/GS.mol2"), &l));
    CHECK(l.n == 1 && l.items[0].n_atoms == 8 && l.items[0].n_bonds == 7, "ethane: %d molecules", l.n);
    for (int i = 0; i < 8; i++)
        counts[l.items[0].atomic_numbers[i]]++;
    CHECK(counts[6] == 2 && counts[1] == 6, "ethane elements C %d H %d", counts[6], counts[1]);
    CHECK(strcmp(l.items[0].name, "Basic Ethane minimum") == 0 && strcmp(l.items[0].atom_types[0], "HC") == 0,
          "ethane name/type");
    CHECK(l.items[0].partial_charges != NULL && l.items[0].partial_charges[1] == -0.0681, "ethane charges");
    printf("ethane GS.mol2: 8 atoms (C2H6 from types C3/HC and names), 7 bonds, C-C %.4f A\n",
           test_distance(l.items[0].coords, 1, 3));
    CHECK(fabs(test_distance(l.items[0].coords, 1, 3) - 1.5305) < 1e-3, "C-C %g",
          test_distance(l.items[0].coords, 1, 3));
    hessfit_molecule_list_free(&l);

    /* q2mm's per-structure 2_dmpe_conf_1.mol2 announces 38 bonds and lists 40 */
    test_expect_list_failure(hessfit_mol2_read, dmpe, HESSFIT_ERROR_COUNT, TEST_ANY_LINE, "more bond rows than the 38 announced",
                             NULL, "real 2_dmpe_conf_1.mol2");
    /* with the count corrected it reads: SYBYL O.3/N.3, element type H, MacroModel RH/C3/P3 */
    text = test_load_gunzip(dmpe, NULL);
    fixed = test_replace_first(text, 0, " 38 38 0 0 0", " 38 40 0 0 0", NULL);
    path = test_write_text("dmpe_fixed.mol2", fixed);
    HF_CALL(hessfit_mol2_read(path, &l));
    memset(counts, 0, sizeof counts);
    for (int i = 0; i < l.items[0].n_atoms; i++)
        counts[l.items[0].atomic_numbers[i]]++;
    CHECK(l.n == 1 && l.items[0].n_bonds == 40 && counts[45] == 1 && counts[8] == 1 && counts[7] == 2 &&
              counts[15] == 2 && counts[6] == 10 && counts[1] == 22,
          "dmpe elements");
    CHECK(strcmp(l.items[0].atom_types[1], "O.3") == 0, "type %s", l.items[0].atom_types[1]);
    printf("2_dmpe_conf_1.mol2 with its bond count corrected: 38 atoms (Rh O N2 P2 C10 H22), 40 bonds\n");
    hessfit_molecule_list_free(&l);
    unlink(path);
    free(text);
    free(fixed);
}

/* ---- bad input ---------------------------------------------------------------------------------- */

static int count_occurrences(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A mutation of a real file: its first occurrence of old replaced by new must fail with status,
 * naming file:line and holding part. */
typedef struct mutation {
    const char *old, *new, *part, *what;
    hessfit_status status;
} mutation;

static void check_mutations(hessfit_status (*reader)(const char *, hessfit_molecule_list *), const char *text, const char *name,
                            const mutation *cases, size_t n)
{
    for (size_t c = 0; c < n; c++) {
        char *bad = test_replace_first(text, 0, cases[c].old, cases[c].new, NULL);
        test_expect_list_failure(reader, test_write_text(name, bad), cases[c].status, TEST_ANY_LINE, cases[c].part,
                                 NULL, cases[c].what);
        free(bad);
    }
}

/* Random byte edits of text[0, n) (characters that matter to the parsers): every copy must read
 * into consistent molecules or fail naming file:line; never crash. Returns how many failed. */
static int random_edits(const char *text, size_t n, const char *name, int copies,
                        hessfit_status (*reader)(const char *, hessfit_molecule_list *))
{
    static const char alphabet[] = " 0123456789.-=%()*\nabcXYZ@<>#\t";
    char *copy = malloc(n);
    int failed = 0;
    CHECK(copy != NULL, "no memory");
    test_seed(12345);
    for (int c = 0; c < copies; c++) {
        hessfit_molecule_list l;
        const char *path;
        hessfit_status st;
        char what[64];
        int edits = 1 + (int)(8.0 * test_random());
        memcpy(copy, text, n);
        for (int e = 0; e < edits; e++)
            copy[(size_t)(test_random() * (double)n)] = alphabet[(int)(test_random() * (sizeof alphabet - 1))];
        path = test_write_file(name, copy, n);
        if ((st = reader(path, &l)) == HESSFIT_SUCCESS) {
            for (int m = 0; m < l.n; m++)
                HF_CALL(hessfit_molecule_check(&l.items[m], l.items[m].source));
            hessfit_molecule_list_free(&l);
        } else {
            snprintf(what, sizeof what, "edited copy %d", c);
            test_set_quiet(1);
            test_expect_file_error(st, HESSFIT_SUCCESS, path, TEST_ANY_LINE, NULL, NULL, what);
            test_set_quiet(0);
            CHECK(l.n == 0 && l.items == NULL, "edited copy %d: output not zeroed", c);
            failed++;
        }
    }
    free(copy);
    return failed;
}

/* A copy of the .mmo cut after `cut` bytes must fail naming file:line, unless the cut falls
 * between structures (after a complete Connection Table and before the next structure's output),
 * where the complete structures read. Returns 1 if it read. */
static int check_mmo_cut(const char *text, size_t cut)
{
    char *prefix = strndup(text, cut);
    const char *path, *last = NULL, *tail;
    hessfit_molecule_list l;
    hessfit_status st;
    int k = 0, in_gap;
    CHECK(prefix != NULL, "no memory");
    path = test_write_file("cut.mmo", prefix, cut);
    for (const char *p = strstr(prefix, "Total QQ"); p != NULL; p = strstr(p + 1, "Total QQ")) {
        k++;
        last = p;
    }
    tail = last ? strchr(last, '\n') : prefix;
    if (tail == NULL)
        tail = "";
    in_gap = k > 0 && !strstr(tail, "interactions present") && !strstr(tail, "Connection Table") &&
             !strstr(tail, "Input Structure Name");
    st = hessfit_mmo_read(path, &l);
    if (st == HESSFIT_SUCCESS) {
        CHECK(in_gap && l.n == k, "cut at %zu read %d structures (%d complete, in gap %d)", cut, l.n, k, in_gap);
        hessfit_molecule_list_free(&l);
    } else {
        char what[64];
        snprintf(what, sizeof what, "cut at %zu", cut);
        test_set_quiet(1);
        test_expect_file_error(st, HESSFIT_SUCCESS, path, TEST_ANY_LINE, NULL, NULL, what);
        test_set_quiet(0);
        CHECK(l.n == 0 && l.items == NULL, "cut at %zu: output not zeroed", cut);
    }
    free(prefix);
    return st == HESSFIT_SUCCESS;
}

static void test_bad_mmo(const char *text, size_t size)
{
    hessfit_molecule_list l;
    int cuts = 0, read_ok = 0;
    const char *anchors[] = {"BOND LENGTHS AND STRETCH",
                             "         1    18  ",
                             "ANGLES, BEND AND",
                             "     13     1    17",
                             "Improper torsion",
                             "     3     4     5    11",
                             "NONBONDED DISTANCES",
                             "Input Structure Name",
                             "Connection Table",
                             " C2 (    5)",
                             " H1 (   36)",
                             "Total QQ",
                             "Total Sol"};
    printf("bad .mmo input (copies in %s)\n", test_temp_dir());
    /* truncated: every 1/60 of the file, and around landmarks of the first and the last structure */
    for (int k = 1; k < 60; k++, cuts++)
        read_ok += check_mmo_cut(text, size * (size_t)k / 60);
    for (size_t a = 0; a < sizeof anchors / sizeof anchors[0]; a++) {
        const char *first = strstr(text, anchors[a]), *last = first;
        for (const char *p = first; p != NULL; p = strstr(p + 1, anchors[a]))
            last = p;
        CHECK(first != NULL, "anchor %s", anchors[a]);
        for (int d = -1; d <= 7; d += 4) {
            read_ok += check_mmo_cut(text, (size_t)(first - text) + (size_t)(d + 1));
            read_ok += check_mmo_cut(text, (size_t)(last - text) + (size_t)(d + 1));
            cuts += 2;
        }
    }
    printf("  %d truncated copies: %d failed naming file:line, %d ended between structures and read the complete "
           "ones\n",
           cuts, cuts - read_ok, read_ok);
    CHECK(cuts - read_ok >= cuts * 3 / 4, "too few truncations failed");
    /* random edits of the first structure's output (up to its "Total Sol" line) */
    {
        size_t n = (size_t)(strstr(text, "Total Sol") - text);
        int failed = random_edits(text, n, "edit.mmo", 400, hessfit_mmo_read);
        printf("  400 randomly edited copies of structure 1: %d failed naming file:line, %d read consistently\n",
               failed, 400 - failed);
        CHECK(failed > 100, "only %d edited copies failed", failed);
    }
    /* a truncated .gz */
    {
        size_t gz_size;
        char *gz =
            test_load_file(test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"), &gz_size);
        test_expect_list_failure(hessfit_mmo_read, test_write_file("cut.mmo.gz", gz, gz_size / 2), HESSFIT_ERROR_TRUNCATED,
                                 TEST_ANY_LINE, NULL, NULL, "gzip cut in half");
        free(gz);
    }
    /* mutations of the first structure */
    const mutation cases[] = {
        {"38 Stretch interactions present", "39 Stretch interactions present", "39 Stretch interactions announced, 38",
         "stretch count mismatch", HESSFIT_ERROR_COUNT},
        {"56 Proper Torsion interactions", "57 Proper Torsion interactions", ":181: 57 Proper Torsion",
         "torsion count mismatch", HESSFIT_ERROR_COUNT},
        {"6 Improper torsion interactions", "5 Improper torsion interactions",
         "5 Improper torsion interactions "
         "announced, 6",
         "improper count mismatch", HESSFIT_ERROR_COUNT},
        {"27 Bend-bend interactions", "28 Bend-bend interactions", ":145: 28 Bend-bend", "bend-bend count mismatch",
         HESSFIT_ERROR_COUNT},
        {"   14-    2     5 ", "   14-    2    99 ", ":884: atom 1 is attached to atom 99", "attached atom 99",
         HESSFIT_ERROR_COUNT},
        {"            1    13                1.5293", "            1    99                1.5293",
         ":17: bond term names atom 99", "bond term atom 99", HESSFIT_ERROR_COUNT},
        /* atom indices one past the last atom (structure 1 has 36) and 0 / negative: an off-by-one
         * in a range check (j > n for j >= n) reads past the atom table */
        {"   14-    2     5 ", "   14-    2    37 ", ":884: atom 1 is attached to atom 37, but the structure has 36",
         "attached atom N+1", HESSFIT_ERROR_COUNT},
        {"   14-    2     5 ", "   14-    2    36 ", ":884: atom 1 lists atom 36 as attached, but atom 36 (line 919)",
         "attached atom N, not listing back", HESSFIT_ERROR_PARSE},
        {"   14-    2     5 ", "   14-    2     0 ", ":884: attached atom number 0", "attached atom 0", HESSFIT_ERROR_PARSE},
        {"   14-    2     5 ", "   14-    2    -5 ", ":884: attached atom '-5' is not an atom number",
         "attached atom -5", HESSFIT_ERROR_PARSE},
        {"            1    13                1.5293", "            1    37                1.5293",
         ":17: bond term names atom 37, but the structure has 36", "bond term atom N+1", HESSFIT_ERROR_COUNT},
        {"            1    13                1.5293", "            0    13                1.5293",
         ":17: atom number '0' is outside [1, ", "bond term atom 0", HESSFIT_ERROR_PARSE},
        {"UNK   1       1     3=", "UNK   1             3=", "atom 2 (line 885) does not list atom 1",
         "bond listed by one atom only", HESSFIT_ERROR_PARSE},
        {"UNK   1       1     3=", "UNK   1       1-    3=", "bond 1-2 has mark ' ' here and '-'", "bond marks differ",
         HESSFIT_ERROR_PARSE},
        {"0.046  0.046     0.0000", "0.046  0.046        nan", ":884: x coordinate 'nan'", "NaN coordinate",
         HESSFIT_ERROR_NONFINITE},
        {" RH (    1)", " XQ (    1)", ":884: unknown MacroModel atom type 'XQ'", "unknown atom type",
         HESSFIT_ERROR_UNKNOWN_ELEMENT},
        {" O2 (    2)", " 00 (    2)", ":885: unknown MacroModel atom type '00'", "wildcard 00 as a type",
         HESSFIT_ERROR_UNKNOWN_ELEMENT},
        {" C2 (    5)", " C2 (    6)", ":888: atom number 6 where atom 5", "atom numbers out of order", HESSFIT_ERROR_PARSE},
        {"    12        0.000    0.800    0.000   -179.7", "    12        0.100    0.800    0.000   -179.7",
         ":246: improper", "improper with a V1 column", HESSFIT_ERROR_UNSUPPORTED},
        {"            1    18                1.6059", "            1    18                1.60x9",
         ":18: term value '1.60x9'", "garbled number", HESSFIT_ERROR_PARSE},
        {"Subst  17    Rhodium catalyzed hydrogenati                                 1862",
         "Subst  17    Rhodium catalyzed hydrogenati                                 0", ":17: FF line '0'",
         "FF line 0", HESSFIT_ERROR_PARSE},
        {"Total QQ  charge on system =   1.000", "Total QQ  charge on system =   3.000", ":921: the QQ charges add up",
         "total charge mismatch", HESSFIT_ERROR_COUNT},
    };
    check_mutations(hessfit_mmo_read, text, "bad.mmo", cases, sizeof cases / sizeof cases[0]);
    /* garbage, binary garbage, empty file */
    test_expect_list_failure(hessfit_mmo_read, test_write_file("garbage.mmo", "this is not\nMacroModel output\n", 30),
                             HESSFIT_ERROR_FORMAT, TEST_ANY_LINE, "no 'Connection Table'", NULL, "garbage text");
    {
        unsigned char junk[4096];
        test_seed(7);
        for (size_t k = 0; k < sizeof junk; k++)
            junk[k] = (unsigned char)(256.0 * test_random());
        test_expect_list_failure(hessfit_mmo_read, test_write_file("junk.mmo", junk, sizeof junk), HESSFIT_SUCCESS, TEST_ANY_LINE,
                                 NULL, NULL, "random bytes");
    }
    test_expect_list_failure(hessfit_mmo_read, test_write_file("empty.mmo", "", 0), HESSFIT_ERROR_FORMAT, TEST_ANY_LINE, "empty",
                             NULL, "empty file");
    /* a missing file has no line to name: the message names the file */
    CHECK(hessfit_mmo_read(test_temp_path("missing.mmo"), &l) == HESSFIT_ERROR_IO &&
              strstr(hessfit_last_error(), "missing.mmo") != NULL,
          "missing file: %s", hessfit_last_error());
    printf("  %-30s -> %s\n", "missing file", hessfit_last_error());
    CHECK(count_occurrences(text, "Connection Table") == N_STRUCT, "landmarks");
}

static void test_bad_mol2(void)
{
    const char *src = test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mol2");
    char *text = test_load_gunzip(src, NULL);
    hessfit_molecule_list l;
    const char *path;
    int cuts = 0;
    printf("bad .mol2 input\n");
    /* truncated inside every molecule: after the header, after the name, mid ATOM, mid BOND, and
     * inside / before the last bond row */
    for (const char *mol = strstr(text, "@<TRIPOS>MOLECULE"); mol != NULL; mol = strstr(mol + 1, "@<TRIPOS>MOLECULE")) {
        const char *atom = strstr(mol, "@<TRIPOS>ATOM"), *bond = strstr(mol, "@<TRIPOS>BOND"),
                   *sub = strstr(mol, "@<TRIPOS>SUBSTRUCTURE"), *last_row = sub - 1;
        size_t at[7];
        CHECK(atom && bond && sub, "mol2 landmarks");
        while (last_row > bond && last_row[-1] != '\n')
            last_row--;
        at[0] = (size_t)(mol - text) + 18;
        at[1] = (size_t)(strchr(mol + 18, '\n') - text) + 1;
        at[2] = (size_t)(atom - text) + (size_t)(bond - atom) / 2;
        at[3] = (size_t)(bond - text) + (size_t)(sub - bond) / 2;
        at[4] = (size_t)(last_row - text);
        at[5] = (size_t)(last_row - text) + 12;
        at[6] = (size_t)(atom - text) + 5;
        for (int k = 0; k < 7; k++, cuts++) {
            test_set_quiet(mol != text); /* print the first molecule's seven */
            test_expect_list_failure(hessfit_mol2_read, test_write_file("cut.mol2", text, at[k]), HESSFIT_SUCCESS, TEST_ANY_LINE,
                                     NULL, NULL, "truncated mol2");
        }
        test_set_quiet(0);
    }
    printf("  %d truncated copies all failed naming file:line\n", cuts);
    const mutation cases[] = {
        {"36   38    1", "36   39    1", ":3: 39 bonds announced, 38 bond rows read", "bond count mismatch",
         HESSFIT_ERROR_COUNT},
        {"36   38    1", "37   38    1", ":3: 37 atoms announced, 36 atom rows read", "atom count mismatch",
         HESSFIT_ERROR_COUNT},
        {"     1    1   13 1", "     1    1   99 1", ":46: bond target atom '99' is outside [1, 36]", "bond to atom 99",
         HESSFIT_ERROR_PARSE},
        /* one past the last atom, 0 and negative (an off-by-one in the range reads past the atoms) */
        {"     1    1   13 1", "     1    1   37 1", ":46: bond target atom '37' is outside [1, 36]", "bond to atom N+1",
         HESSFIT_ERROR_PARSE},
        {"     1    1   13 1", "     1   37   13 1", ":46: bond origin atom '37' is outside [1, 36]",
         "bond from atom N+1", HESSFIT_ERROR_PARSE},
        {"     1    1   13 1", "     1    0   13 1", ":46: bond origin atom '0' is outside [1, 36]", "bond from atom 0",
         HESSFIT_ERROR_PARSE},
        {"     1    1   13 1", "     1    1   -1 1", ":46: bond target atom '-1' is outside [1, 36]", "bond to atom -1",
         HESSFIT_ERROR_PARSE},
        {"     1    1   13 1", "     1    1    1 1", ":46: bond 1 joins atom 1 to itself", "self bond", HESSFIT_ERROR_PARSE},
        {"     2    1   18 1", "     2    1   13 1", "bond 1-13 is listed twice", "duplicate bond", HESSFIT_ERROR_PARSE},
        {"     1    1   13 1", "     1    1   13 7", ":46: unknown bond type '7'", "bond type 7", HESSFIT_ERROR_PARSE},
        {"      1 RH          0.0000    0.0000", "      1 RH             nan    0.0000", ":9: x coordinate 'nan'",
         "NaN coordinate", HESSFIT_ERROR_NONFINITE},
        {"      2 O           0.0000    0.0000    2.2155 O2", "      2 Q           0.0000    0.0000    2.2155 Q9",
         ":10: cannot tell the element of atom 'Q' of type 'Q9'", "unknown type and name", HESSFIT_ERROR_UNKNOWN_ELEMENT},
        {"      2 O           0.0000    0.0000    2.2155 O2", "      2 CA          0.0000    0.0000    2.2155 XX",
         "name is ambiguous", "ambiguous name CA", HESSFIT_ERROR_UNKNOWN_ELEMENT},
        {"      2 O           0.0000    0.0000    2.2155 O2", "      2 O           0.0000    0.0000    2.2155 Du.C",
         ":10: SYBYL atom type 'Du.C'", "dummy SYBYL type", HESSFIT_ERROR_UNKNOWN_ELEMENT},
        {"      3 C           1.1328", "      4 C           1.1328", ":11: atom id 4 where 3 was expected",
         "atom ids out of order", HESSFIT_ERROR_UNSUPPORTED},
        {"UNL         0.0000 \n      2 O", "UNL\n      2 O", ":10: atom 2 has a charge column", "charge column mix",
         HESSFIT_ERROR_FORMAT},
        {"@<TRIPOS>ATOM", "@<TRIPOS>ATOMS", ":45: @<TRIPOS>BOND before the @<TRIPOS>ATOM record",
         "BOND record before ATOM", HESSFIT_ERROR_UNSUPPORTED},
    };
    check_mutations(hessfit_mol2_read, text, "bad.mol2", cases, sizeof cases / sizeof cases[0]);
    {
        int failed = random_edits(text, strlen(text), "edit.mol2", 400, hessfit_mol2_read);
        printf("  400 randomly edited copies: %d failed naming file:line, %d read consistently\n", failed,
               400 - failed);
        CHECK(failed > 100, "only %d edited copies failed", failed);
    }
    /* charge_type NO_CHARGES: the charge column is not taken as charges */
    {
        char *nocharge = test_replace_first(text, 0, "SMALL\nUSER_CHARGES", "SMALL\nNO_CHARGES", NULL);
        path = test_write_text("bad.mol2", nocharge);
        HF_CALL(hessfit_mol2_read(path, &l));
        CHECK(l.n == N_STRUCT && l.items[0].partial_charges == NULL && l.items[1].partial_charges != NULL,
              "NO_CHARGES");
        hessfit_molecule_list_free(&l);
        free(nocharge);
    }
    test_expect_list_failure(hessfit_mol2_read, test_write_file("garbage.mol2", "hello\nworld\n", 12), HESSFIT_ERROR_FORMAT,
                             TEST_ANY_LINE, ":1: text before the first", NULL, "garbage text");
    test_expect_list_failure(hessfit_mol2_read, test_write_file("empty.mol2", "", 0), HESSFIT_ERROR_FORMAT, TEST_ANY_LINE,
                             "empty", NULL, "empty file");
    test_expect_list_failure(hessfit_mol2_read, test_write_file("nul.mol2", "@<TRIPOS>MOLECULE\nx\0y\n", 22), HESSFIT_ERROR_PARSE,
                             TEST_ANY_LINE, "NUL", NULL, "NUL byte");
    free(text);
}

int main(void)
{
    const char *mmo_path = test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz");
    char *mmo_text;
    size_t mmo_size;
    hessfit_molecule_list mmo, mol2;
    const char *names[] = {"cut.mmo",   "cut.mmo.gz",      "bad.mmo",  "garbage.mmo",  "junk.mmo",
                           "empty.mmo", "cut.mol2",        "bad.mol2", "garbage.mol2", "empty.mol2",
                           "nul.mol2",  "dmpe_fixed.mol2", "edit.mmo", "edit.mol2"};

    test_type_table();
    mmo_text = test_load_gunzip(mmo_path, &mmo_size);
    HF_CALL(hessfit_mmo_read(mmo_path, &mmo));
    test_mmo(&mmo, mmo_text);
    test_ff_lines(&mmo);
    HF_CALL(hessfit_mol2_read(test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mol2"), &mol2));
    test_mol2(&mol2);
    test_mmo_vs_mol2(&mmo, &mol2);
    test_small_mol2();
    test_bad_mmo(mmo_text, mmo_size);
    test_bad_mol2();

    hessfit_molecule_list_free(&mmo);
    hessfit_molecule_list_free(&mol2);
    free(mmo_text);
    test_temp_check_only(names, (int)(sizeof names / sizeof names[0]));
    printf("test_read_macromodel: all checks passed\n");
    return 0;
}
