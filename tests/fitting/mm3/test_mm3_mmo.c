/*
 * The MM3* model (hessfit_mm3_build + hessfit_mm3_evaluate) against every energy MacroModel printed
 * for the nine rh-enamide structures (examples/data/rh-enamide: the .mmo and the .fld it names), at
 * the Jaguar geometries of the same structures (atoms in the same order).
 *
 * Checked, per structure:
 *   - the sets of interactions are identical (the same atoms listed): stretches, bends (with their
 *     stretch-bends), bend-bend pairs, proper torsions, out-of-plane terms, torsion-stretch terms
 *     with K_ts != 0 (MacroModel lists only those), and nonbonded pairs listed where the true
 *     distance is < 8 A or q_i q_j != 0;
 *   - every printed per-interaction energy (stretch E; bend EBnd and ESBnd; EBBnd; torsion and
 *     improper E; the torsion-stretch E; EVDW and ECHARGE) against the evaluator's, within
 *         bound = sum over coordinates |dE/dx| * 1.5e-4 A + 0.0005 kJ/mol
 *     (the Jaguar coordinates differ from MacroModel's by up to ~1.5e-4 A; rows are printed to
 *     0.001 kJ/mol); dE/dx by central differences (h = 1e-5 A) of the evaluator; electrostatic
 *     rows add 2e-4 |E|: the charges' Debye factor 1/4.803 is MacroModel's to 4 digits only
 *     (fitted, docs/mm3.md), 1e-4 relative per charge;
 *   - every per-term total of the breakdown (hydrogen bonding included: 0.0000 in all nine) and the
 *     total energy within
 *         bound = sum over coordinates |dE_total/dx| * 1.5e-4 A + 0.0005 kJ/mol;
 *   - the printed constants the builder derives (not read from a typed line): KSBnd (to 0.0005),
 *     KBBnd = k_bb1 k_bb2 (to 0.00005), the torsion V's after sharing and the out-of-plane k (to
 *     0.0005), K(t-s) (to 0.0005), CHARGE* = q_i q_j (to 0.00005 + 2e-4 |qq|), CONST1 = R (to 0.0005, where the
 *     switch is not 0) and CONST2 = eps S (relative 1e-3: 4 significant digits).
 *   - the hydrogen-bond rule (check_hbond_rule): the one candidate per structure is a 1-4 pair, which
 *     as a bond would print about -0.023 kJ/mol, so 1-4 pairs are not hydrogen bonds.
 * Prints the deviations per term kind (rows, max |calc - printed|, rms, worst deviation / bound) and
 * per structure (printed total, calculated, difference): the tables of docs/mm3.md.
 */
#include "hessfit_mm3.h"
#include "hessfit_mmo_energies.h"
#include "test_util.h"

#include <string.h>

#define COORD_ERROR 1.5e-4 /* A */
#define PRINT_HALF_UNIT 0.0005 /* kJ/mol */
#define FD_STEP 1e-5

typedef struct stats {
    int rows;
    double max_abs, sum_sq, worst_ratio;
} stats;

static stats kind_stats[HESSFIT_MM3_NUM_KINDS];

static void record(hessfit_mm3_kind kind, double calc, double printed, double bound, int line)
{
    stats *s = &kind_stats[kind];
    const double d = fabs(calc - printed);
    s->rows++;
    s->sum_sq += d * d;
    if (d > s->max_abs)
        s->max_abs = d;
    if (d / bound > s->worst_ratio)
        s->worst_ratio = d / bound;
    SOFT_CHECK(d <= bound, "mmo line %d: %s energy %.4f, printed %.3f (|diff| %.4f > bound %.4f)", line,
               hessfit_mm3_kind_name(kind), calc, printed, d, bound);
}

/* ---- keys: the atoms of an interaction, independent of direction -------------------------------- */

static void sort2(int *a)
{
    if (a[0] > a[1]) {
        int t = a[0];
        a[0] = a[1];
        a[1] = t;
    }
}

/* stretch, pair: sorted; bend: centre then sorted ends; torsion: the direction with j < k; improper:
 * sorted set; bend-bend: centre, then the two sorted angles in order. */
static void key_of(hessfit_mmo_table table, const int *atoms, int *key)
{
    memset(key, -1, 5 * sizeof *key);
    switch (table) {
    case HESSFIT_MMO_STRETCH:
    case HESSFIT_MMO_NONBONDED:
        key[0] = atoms[0], key[1] = atoms[1];
        sort2(key);
        break;
    case HESSFIT_MMO_BEND:
        key[0] = atoms[1], key[1] = atoms[0], key[2] = atoms[2];
        sort2(key + 1);
        break;
    case HESSFIT_MMO_TORSION:
    case HESSFIT_MMO_TORSION_CROSS:
        for (int k = 0; k < 4; k++)
            key[k] = atoms[1] < atoms[2] ? atoms[k] : atoms[3 - k];
        break;
    case HESSFIT_MMO_IMPROPER:
        memcpy(key, atoms, 4 * sizeof *key);
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++)
                if (key[j] < key[i]) {
                    int t = key[i];
                    key[i] = key[j];
                    key[j] = t;
                }
        break;
    default: { /* bend-bend */
        int p[2] = {atoms[1], atoms[2]}, q[2] = {atoms[3], atoms[4]};
        sort2(p);
        sort2(q);
        const int swap = p[0] > q[0] || (p[0] == q[0] && p[1] > q[1]);
        key[0] = atoms[0];
        key[1] = swap ? q[0] : p[0];
        key[2] = swap ? q[1] : p[1];
        key[3] = swap ? p[0] : q[0];
        key[4] = swap ? p[1] : q[1];
        break;
    }
    }
}

/* The model's interactions of one table as keys; listed[i] = 0 for those MacroModel would not print. */
typedef struct listing {
    int n;
    int (*keys)[5];
    unsigned char *listed, *used;
} listing;

static void listing_init(listing *l, int n)
{
    l->n = n;
    l->keys = calloc((size_t)n + 1, sizeof *l->keys);
    l->listed = calloc((size_t)n + 1, 1);
    l->used = calloc((size_t)n + 1, 1);
    CHECK(l->keys && l->listed && l->used, "no memory");
}

static void listing_free(listing *l)
{
    free(l->keys);
    free(l->listed);
    free(l->used);
}

static int listing_find(const listing *l, const int *key)
{
    for (int i = 0; i < l->n; i++)
        if (l->listed[i] && memcmp(l->keys[i], key, 5 * sizeof *key) == 0)
            return i;
    return -1;
}

/* ---- one structure -------------------------------------------------------------------------------- */

typedef struct evaluation {
    double *per[HESSFIT_MM3_NUM_KINDS];  /* energies */
    double *grad[HESSFIT_MM3_NUM_KINDS]; /* sum |dE/dx| */
    double totals[HESSFIT_MM3_NUM_KINDS], total_grad[HESSFIT_MM3_NUM_KINDS + 1], total;
} evaluation;

static void evaluate(const hessfit_mm3_model *m, const double *coords, evaluation *ev)
{
    double *plus[HESSFIT_MM3_NUM_KINDS], *minus[HESSFIT_MM3_NUM_KINDS];
    double tp[HESSFIT_MM3_NUM_KINDS], tm[HESSFIT_MM3_NUM_KINDS];
    double *x = malloc(3 * (size_t)m->n_atoms * sizeof *x);
    CHECK(x != NULL, "no memory");
    memset(ev, 0, sizeof *ev);
    for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++) {
        const size_t n = (size_t)hessfit_mm3_count(m, (hessfit_mm3_kind)k) + 1;
        ev->per[k] = calloc(n, sizeof(double));
        ev->grad[k] = calloc(n, sizeof(double));
        plus[k] = calloc(n, sizeof(double));
        minus[k] = calloc(n, sizeof(double));
        CHECK(ev->per[k] && ev->grad[k] && plus[k] && minus[k], "no memory");
    }
    ev->total = hessfit_mm3_evaluate(m, coords, ev->totals, ev->per);
    memcpy(x, coords, 3 * (size_t)m->n_atoms * sizeof *x);
    for (int c = 0; c < 3 * m->n_atoms; c++) {
        double sum_p, sum_m;
        x[c] = coords[c] + FD_STEP;
        sum_p = hessfit_mm3_evaluate(m, x, tp, plus);
        x[c] = coords[c] - FD_STEP;
        sum_m = hessfit_mm3_evaluate(m, x, tm, minus);
        x[c] = coords[c];
        for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++) {
            for (int i = 0; i < hessfit_mm3_count(m, (hessfit_mm3_kind)k); i++)
                ev->grad[k][i] += fabs(plus[k][i] - minus[k][i]) / (2 * FD_STEP);
            ev->total_grad[k] += fabs(tp[k] - tm[k]) / (2 * FD_STEP);
        }
        ev->total_grad[HESSFIT_MM3_NUM_KINDS] += fabs(sum_p - sum_m) / (2 * FD_STEP);
    }
    for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++) {
        free(plus[k]);
        free(minus[k]);
    }
    free(x);
}

static void evaluation_free(evaluation *ev)
{
    for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++) {
        free(ev->per[k]);
        free(ev->grad[k]);
    }
}

#define CHARGE_PRODUCT_ERROR 2e-4 /* relative, from the 4-digit Debye factor */

static double bound_of(const evaluation *ev, hessfit_mm3_kind kind, int i)
{
    const double charge = kind == HESSFIT_MM3_ELECTROSTATIC ? CHARGE_PRODUCT_ERROR * fabs(ev->per[kind][i]) : 0.0;
    return ev->grad[kind][i] * COORD_ERROR + PRINT_HALF_UNIT + charge;
}

static double dist(const double *x, int a, int b)
{
    double s = 0.0;
    for (int d = 0; d < 3; d++)
        s += (x[3 * a + d] - x[3 * b + d]) * (x[3 * a + d] - x[3 * b + d]);
    return sqrt(s);
}

/* Printed constants to their print precision. */
static void check_constant(double model, double printed, double tol, const char *what, int line)
{
    SOFT_CHECK(fabs(model - printed) <= tol + 1e-9, "mmo line %d: %s %.6g, printed %.6g", line, what, model, printed);
}

static void compare_structure(int s, const hessfit_molecule *mol, const hessfit_mm3_model *m, const double *coords,
                              const hessfit_mmo_energies *printed, double *calc_total)
{
    evaluation ev;
    listing l[HESSFIT_MMO_NUM_TABLES];
    evaluate(m, coords, &ev);
    /* the model's interactions by table */
    listing_init(&l[HESSFIT_MMO_STRETCH], m->n_stretches);
    for (int i = 0; i < m->n_stretches; i++)
        key_of(HESSFIT_MMO_STRETCH, m->stretches[i].atoms, l[HESSFIT_MMO_STRETCH].keys[i]), l[0].listed[i] = 1;
    listing_init(&l[HESSFIT_MMO_BEND], m->n_bends);
    for (int i = 0; i < m->n_bends; i++)
        key_of(HESSFIT_MMO_BEND, m->bends[i].atoms, l[HESSFIT_MMO_BEND].keys[i]), l[HESSFIT_MMO_BEND].listed[i] = 1;
    listing_init(&l[HESSFIT_MMO_BEND_BEND], m->n_bend_bends);
    for (int i = 0; i < m->n_bend_bends; i++)
        key_of(HESSFIT_MMO_BEND_BEND, m->bend_bends[i].atoms, l[HESSFIT_MMO_BEND_BEND].keys[i]),
            l[HESSFIT_MMO_BEND_BEND].listed[i] = 1;
    listing_init(&l[HESSFIT_MMO_TORSION], m->n_torsions);
    for (int i = 0; i < m->n_torsions; i++)
        key_of(HESSFIT_MMO_TORSION, m->torsions[i].atoms, l[HESSFIT_MMO_TORSION].keys[i]),
            l[HESSFIT_MMO_TORSION].listed[i] = 1;
    listing_init(&l[HESSFIT_MMO_IMPROPER], m->n_out_of_plane);
    for (int i = 0; i < m->n_out_of_plane; i++)
        key_of(HESSFIT_MMO_IMPROPER, m->out_of_plane[i].atoms, l[HESSFIT_MMO_IMPROPER].keys[i]),
            l[HESSFIT_MMO_IMPROPER].listed[i] = 1;
    listing_init(&l[HESSFIT_MMO_TORSION_CROSS], m->n_torsion_stretches);
    for (int i = 0; i < m->n_torsion_stretches; i++)
        key_of(HESSFIT_MMO_TORSION_CROSS, m->torsion_stretches[i].atoms, l[HESSFIT_MMO_TORSION_CROSS].keys[i]),
            l[HESSFIT_MMO_TORSION_CROSS].listed[i] = m->torsion_stretches[i].k_ts != 0.0;
    listing_init(&l[HESSFIT_MMO_NONBONDED], m->n_pairs);
    for (int i = 0; i < m->n_pairs; i++) {
        const hessfit_mm3_pair *p = &m->pairs[i];
        key_of(HESSFIT_MMO_NONBONDED, p->atoms, l[HESSFIT_MMO_NONBONDED].keys[i]);
        l[HESSFIT_MMO_NONBONDED].listed[i] = dist(coords, p->atoms[0], p->atoms[1]) < 8.0 || fabs(p->qq) > 0.0;
    }
    for (int r = 0; r < printed->n_rows; r++) {
        const hessfit_mmo_row *row = &printed->rows[r];
        listing *li = &l[row->table];
        int key[5], i;
        key_of(row->table, row->atoms, key);
        i = listing_find(li, key);
        SOFT_CHECK(i >= 0, "structure %d, mmo line %d: printed interaction %d-%d-%d-%d-%d is not in the model", s + 1,
                   row->line, row->atoms[0] + 1, row->atoms[1] + 1, row->atoms[2] + 1, row->atoms[3] + 1,
                   row->atoms[4] + 1);
        if (i < 0)
            continue;
        SOFT_CHECK(!li->used[i], "mmo line %d: printed twice", row->line);
        li->used[i] = 1;
        switch (row->table) {
        case HESSFIT_MMO_STRETCH:
            record(HESSFIT_MM3_STRETCH, ev.per[HESSFIT_MM3_STRETCH][i], row->e[0], bound_of(&ev, HESSFIT_MM3_STRETCH, i),
                   row->line);
            break;
        case HESSFIT_MMO_BEND:
            record(HESSFIT_MM3_BEND, ev.per[HESSFIT_MM3_BEND][i], row->e[0], bound_of(&ev, HESSFIT_MM3_BEND, i), row->line);
            record(HESSFIT_MM3_STRETCH_BEND, ev.per[HESSFIT_MM3_STRETCH_BEND][i], row->e[1],
                   bound_of(&ev, HESSFIT_MM3_STRETCH_BEND, i), row->line);
            check_constant(m->stretch_bends[i].k_sb, row->c[1], 0.0005, "KSBnd", row->line);
            break;
        case HESSFIT_MMO_BEND_BEND:
            record(HESSFIT_MM3_BEND_BEND, ev.per[HESSFIT_MM3_BEND_BEND][i], row->e[0],
                   bound_of(&ev, HESSFIT_MM3_BEND_BEND, i), row->line);
            check_constant(m->bend_bends[i].k_bb[0] * m->bend_bends[i].k_bb[1], row->c[0], 0.00005, "KBBnd", row->line);
            break;
        case HESSFIT_MMO_TORSION:
            record(HESSFIT_MM3_TORSION, ev.per[HESSFIT_MM3_TORSION][i], row->e[0], bound_of(&ev, HESSFIT_MM3_TORSION, i),
                   row->line);
            for (int v = 0; v < 3; v++)
                check_constant(m->torsions[i].v[v], row->c[v], 0.0005, "torsion V", row->line);
            break;
        case HESSFIT_MMO_IMPROPER:
            record(HESSFIT_MM3_OUT_OF_PLANE, ev.per[HESSFIT_MM3_OUT_OF_PLANE][i], row->e[0],
                   bound_of(&ev, HESSFIT_MM3_OUT_OF_PLANE, i), row->line);
            check_constant(m->out_of_plane[i].k, row->c[1], 0.0005, "out-of-plane k", row->line);
            break;
        case HESSFIT_MMO_TORSION_CROSS:
            record(HESSFIT_MM3_TORSION_STRETCH, ev.per[HESSFIT_MM3_TORSION_STRETCH][i], row->e[0],
                   bound_of(&ev, HESSFIT_MM3_TORSION_STRETCH, i), row->line);
            check_constant(m->torsion_stretches[i].k_ts, row->c[0], 0.0005, "K(t-s)", row->line);
            break;
        default: {
            const hessfit_mm3_pair *p = &m->pairs[i];
            const double r = dist(coords, p->atoms[0], p->atoms[1]);
            const double S = r <= 6.0 ? 1.0 : r >= 8.0 ? 0.0 : (64.0 - r * r) / 28.0;
            record(HESSFIT_MM3_VDW, ev.per[HESSFIT_MM3_VDW][i], row->e[0], bound_of(&ev, HESSFIT_MM3_VDW, i), row->line);
            record(HESSFIT_MM3_ELECTROSTATIC, ev.per[HESSFIT_MM3_ELECTROSTATIC][i], row->e[1],
                   bound_of(&ev, HESSFIT_MM3_ELECTROSTATIC, i), row->line);
            check_constant(p->qq, row->c[2], 0.00005 + CHARGE_PRODUCT_ERROR * fabs(p->qq), "CHARGE*", row->line);
            if (S > 0.0 && row->c[0] != 0.0)
                check_constant(p->r, row->c[0], 0.0005, "CONST1", row->line);
            if (r < 5.9 || r > 8.1) /* the switch at the edges moves with the coordinates */
                SOFT_CHECK(fabs(p->eps * S - row->c[1]) <= 1e-3 * fabs(row->c[1]) + 1e-9,
                           "mmo line %d: CONST2 %.6g, printed %.6g", row->line, p->eps * S, row->c[1]);
            break;
        }
        }
    }
    for (int t = 0; t < HESSFIT_MMO_NUM_TABLES; t++) {
        for (int i = 0; i < l[t].n; i++)
            SOFT_CHECK(!l[t].listed[i] || l[t].used[i], "structure %d: model interaction %d-%d-%d-%d-%d (table %d) was "
                       "not printed", s + 1, l[t].keys[i][0] + 1, l[t].keys[i][1] + 1, l[t].keys[i][2] + 1,
                       l[t].keys[i][3] + 1, l[t].keys[i][4] + 1, t);
        listing_free(&l[t]);
    }
    /* the breakdown (the mmo totals follow hessfit_mm3_kind's order) */
    for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++) {
        const double bound = ev.total_grad[k] * COORD_ERROR + PRINT_HALF_UNIT, d = ev.totals[k] - printed->totals[k];
        SOFT_CHECK(fabs(d) <= bound, "structure %d: %s total %.4f, printed %.4f (diff %.4f > bound %.4f)", s + 1,
                   hessfit_mm3_kind_name((hessfit_mm3_kind)k), ev.totals[k], printed->totals[k], d, bound);
    }
    {
        const double bound = ev.total_grad[HESSFIT_MM3_NUM_KINDS] * COORD_ERROR + PRINT_HALF_UNIT;
        const double d = ev.total - printed->totals[HESSFIT_MMO_TOTAL_ENERGY];
        SOFT_CHECK(fabs(d) <= bound, "structure %d: total %.4f, printed %.4f (diff %.4f > bound %.4f)", s + 1, ev.total,
                   printed->totals[HESSFIT_MMO_TOTAL_ENERGY], d, bound);
        printf("  %d | %d | %.3f | %.3f | %+.3f | %.3f |", s + 1, mol->n_atoms, printed->totals[HESSFIT_MMO_TOTAL_ENERGY],
               ev.total, d, bound);
        for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++)
            printf(" %+.4f", ev.totals[k] - printed->totals[k]);
        printf("\n");
    }
    *calc_total = ev.total;
    evaluation_free(&ev);
}

/*
 * The hydrogen-bond rule (hessfit_mm3.h, docs/mm3.md) against MacroModel's "Hydrogen bonding: 0.0000"
 * of every structure: the candidates (pairs whose types fit a 2-atom code-7 line) are exactly the
 * 1-4 pairs of the H3-O2 line's types (the amide H-N-C=O), counted here independently; none is
 * listed, so the total is 0 as printed; and each, were it a hydrogen bond, would give more than the
 * print's half unit, so a rule that kept 1-4 pairs would contradict the printed 0.0000.
 */
static void check_hbond_rule(int s, const hessfit_molecule *mol, const hessfit_mm3_model *m, const hessfit_forcefield *ff,
                             const double *coords, const hessfit_mmo_energies *printed, int *n_examined)
{
    const hessfit_fld_row *line = NULL;
    for (int r = 0; r < ff->n_fld_rows && line == NULL; r++) {
        const hessfit_fld_row *row = &ff->fld_rows[r];
        if (row->code == '7' && row->n_types == 2 && strcmp(row->types[0], "H3") == 0 && strcmp(row->types[1], "O2") == 0)
            line = row;
    }
    CHECK(line != NULL, "the .fld has no H3 O2 hydrogen-bond line");
    int n14 = 0;
    for (int i = 0; i < m->n_pairs; i++) {
        const int a = m->pairs[i].atoms[0], b = m->pairs[i].atoms[1];
        const char *ta = mol->atom_types[a], *tb = mol->atom_types[b];
        if (!((strcmp(ta, "H3") == 0 && strcmp(tb, "O2") == 0) || (strcmp(ta, "O2") == 0 && strcmp(tb, "H3") == 0)))
            continue;
        CHECK(m->pairs[i].is14, "structure %d: H3...O2 pair %d-%d is not 1-4", s + 1, a + 1, b + 1);
        const double r = dist(coords, a, b), e = 418.4 * (line->values[0] / pow(r, 12) - line->values[1] / pow(r, 10));
        printf("  structure %d: hydrogen-bond candidate %d-%d (H3...O2, 1-4) at %.4f A: as a bond %.4f kJ/mol; printed "
               "hydrogen bonding %.4f\n", s + 1, a + 1, b + 1, r, e, printed->totals[HESSFIT_MMO_TOTAL_HBOND]);
        CHECK(r < HESSFIT_MM3_HBOND_CUTOFF && fabs(e) > 10.0 * PRINT_HALF_UNIT,
              "structure %d: the 1-4 candidate would not show in the print (%.4f kJ/mol at %.3f A)", s + 1, e, r);
        n14++;
    }
    CHECK(m->n_hbond_candidates == n14 && n14 == 1 && m->n_hbonds == 0 && m->n_hbonds_listed == 0,
          "structure %d: %d hydrogen-bond candidates (%d 1-4 H3...O2 pairs), %d listed", s + 1, m->n_hbond_candidates,
          n14, m->n_hbonds);
    double totals[HESSFIT_MM3_NUM_KINDS];
    hessfit_mm3_evaluate(m, coords, totals, NULL);
    CHECK(printed->totals[HESSFIT_MMO_TOTAL_HBOND] == 0.0 && totals[HESSFIT_MM3_HBOND] == 0.0,
          "structure %d: hydrogen bonding printed %.4f, calculated %.4f", s + 1, printed->totals[HESSFIT_MMO_TOTAL_HBOND],
          totals[HESSFIT_MM3_HBOND]);
    *n_examined += m->n_hbond_candidates;
}

int main(void)
{
    hessfit_forcefield ff;
    hessfit_molecule_list mmo;
    hessfit_typed_molecule typed[TEST_RH_MOLECULES];
    hessfit_mmo_energies_list printed;
    test_type_rh_enamide(&ff, &mmo, typed);
    HF_CALL(hessfit_mmo_energies_read(test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"),
                                      &printed));
    CHECK(printed.n == TEST_RH_MOLECULES, "%d structures of printed energies", printed.n);
    int n_hbond_examined = 0;
    printf("  # | atoms | printed total | calc | diff | bound | per-term diffs (calc - printed), breakdown order\n");
    for (int s = 0; s < TEST_RH_MOLECULES; s++) {
        char path[512];
        hessfit_molecule jag;
        hessfit_mm3_model model;
        double calc;
        snprintf(path, sizeof path, "examples/data/rh-enamide/jaguar/%s.01.in.gz", test_rh_jaguar[s]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(path), &jag));
        CHECK(jag.n_atoms == mmo.items[s].n_atoms, "structure %d: %d Jaguar atoms, %d in the .mmo", s + 1, jag.n_atoms,
              mmo.items[s].n_atoms);
        for (int a = 0; a < jag.n_atoms; a++) {
            CHECK(jag.atomic_numbers[a] == mmo.items[s].atomic_numbers[a], "structure %d atom %d: element differs", s + 1,
                  a + 1);
            for (int d = 0; d < 3; d++)
                CHECK(fabs(jag.coords[3 * a + d] - mmo.items[s].coords[3 * a + d]) < 1e-3,
                      "structure %d atom %d: Jaguar and .mmo coordinates differ", s + 1, a + 1);
        }
        HF_CALL(hessfit_mm3_build(&mmo.items[s], &typed[s], &ff, &model));
        compare_structure(s, &mmo.items[s], &model, jag.coords, &printed.items[s], &calc);
        check_hbond_rule(s, &mmo.items[s], &model, &ff, jag.coords, &printed.items[s], &n_hbond_examined);
        hessfit_mm3_model_free(&model);
        hessfit_molecule_free(&jag);
    }
    printf("  kind | rows | max |calc - printed| | rms | worst |diff|/bound\n");
    for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++) {
        const stats *st = &kind_stats[k];
        printf("  %s | %d | %.4f | %.4f | %.2f\n", hessfit_mm3_kind_name((hessfit_mm3_kind)k), st->rows, st->max_abs,
               st->rows ? sqrt(st->sum_sq / st->rows) : 0.0, st->worst_ratio);
    }
    printf("hydrogen bonds: %d candidate pairs examined in the nine structures, all 1-4, none listed (printed 0.0000)\n",
           n_hbond_examined);
    CHECK(n_hbond_examined == TEST_RH_MOLECULES, "%d hydrogen-bond candidates examined", n_hbond_examined);
    hessfit_mmo_energies_list_free(&printed);
    for (int s = 0; s < TEST_RH_MOLECULES; s++)
        hessfit_typed_molecule_free(&typed[s]);
    hessfit_molecule_list_free(&mmo);
    hessfit_forcefield_free(&ff);
    return test_soft_finish("test_mm3_mmo");
}
