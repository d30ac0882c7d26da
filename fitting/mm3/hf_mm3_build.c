/*
 * The MM3* model of one molecule (hessfit_mm3.h), as MacroModel builds it from an .fld; the rules
 * and their evidence are in docs/mm3.md (recovered from MacroModel's printed energies):
 *   stretch, bend, torsion, out-of-plane: the typed terms (NO_TERM ones contribute nothing);
 *     torsion V's of a substructure line with "00" at both ends are shared out over the torsions
 *     about that bond that use the line; impropers in the atom order MacroModel printed;
 *   stretch-bend: one per bend, k_sb from the first fitting S-B (code 3) line; none fits: 0 for a
 *     non-carbon centre or an order-0 bond, an error otherwise;
 *   bend-bend: every pair of bends at one centre whose main-table k_bb are both non-zero, k_bb and
 *     theta0 from the bend's own main-table line or, for a substructure bend, the first main-table
 *     bend line that fits it;
 *   torsion-stretch: one per torsion, K_ts from the first fitting code-8 line, else 0;
 *   reduced hydrogens: atoms whose van der Waals line has an offset, towards their one partner of
 *     non-zero bond order, f = 1 + offset;
 *   charges: formal charge (4th column of the vdW line) + sum over the stretches of +-mu/(4.803 r0),
 *     + on the atom of the line's first column (type order in the main table, pattern order in a
 *     substructure, found by embedding the pattern);
 *   pairs: all pairs not 1-2 or 1-3 (order-0 bonds are bonds), 1-4 unscaled; R = R*_i + R*_j,
 *     eps = sqrt(eps_i eps_j), or a special pair (code 6) line; an RH atom takes R* and eps of the
 *     Z0 line (what MacroModel printed; cause unknown), its formal charge from its own line.
 */
#include "hessfit_mm3.h"
#include "hessfit_units.h"
#include "hf_lines.h"
#include "hf_mm3_internal.h"
#include "hf_vec3.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hessfit_mm3_source NO_SOURCE = {HESSFIT_MM3_DERIVED, -1, -1, 0.0, 0, ""};

static hessfit_mm3_source from_param(const hessfit_forcefield *ff, int param, int value, double scale, const char *rule)
{
    hessfit_mm3_source s = {HESSFIT_MM3_FROM_PARAM, param, value, scale, ff->params[param].line, rule};
    return s;
}

static hessfit_mm3_source from_row(const hessfit_forcefield *ff, int row, int value, const char *rule)
{
    hessfit_mm3_source s = {HESSFIT_MM3_FROM_ROW, row, value, 1.0, ff->fld_rows[row].line, rule};
    return s;
}

static hessfit_mm3_source derived(const char *rule)
{
    hessfit_mm3_source s = NO_SOURCE;
    s.rule = rule;
    return s;
}

/* The value a source names (derived: NAN). */
static double source_value(const hessfit_forcefield *ff, hessfit_mm3_source s)
{
    switch (s.origin) {
    case HESSFIT_MM3_FROM_PARAM: return ff->params[s.index].values[s.value] * s.scale;
    case HESSFIT_MM3_FROM_ROW: return ff->fld_rows[s.index].values[s.value] * s.scale;
    default: return NAN;
    }
}

void hessfit_mm3_model_free(hessfit_mm3_model *m)
{
    if (m == NULL)
        return;
    free(m->stretches);
    free(m->bends);
    free(m->stretch_bends);
    free(m->bend_bends);
    free(m->torsions);
    free(m->torsion_stretches);
    free(m->out_of_plane);
    free(m->reduced);
    free(m->atoms);
    free(m->pairs);
    free(m->hbonds);
    memset(m, 0, sizeof *m);
}

typedef struct builder {
    const hessfit_molecule *mol;
    const hessfit_typed_molecule *typed;
    const hessfit_forcefield *ff;
    hf_mm3_graph g;
    int *param_row;  /* row of each param */
    int *stretch_of; /* n_atoms^2: stretch index of bond a-b, -1 */
    double *f;       /* per atom: f of a reduced H, else 1 */
    hessfit_mm3_model *m;
} builder;

static const char *type_of(const builder *b, int atom)
{
    return b->mol->atom_types[atom];
}

/* "C6-H18 (C2 H1)" for messages. */
static const char *atoms_text(const builder *b, const int *atoms, int n, char *buf, size_t size)
{
    size_t pos = 0;
    for (int k = 0; k < n && pos < size; k++)
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%d", k ? "-" : "", atoms[k] + 1);
    for (int k = 0; k < n && pos < size; k++)
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%s", k ? " " : " (", type_of(b, atoms[k]));
    if (pos < size)
        snprintf(buf + pos, size - pos, ")");
    return buf;
}

static const char *mol_name(const builder *b)
{
    return b->mol->source != NULL ? b->mol->source : b->mol->name != NULL ? b->mol->name : "molecule";
}

/* ---- header factors ------------------------------------------------------------------------------ */

static hessfit_status factor(const builder *b, const char *key, int equation, double *out)
{
    for (int i = 0; i < b->ff->n_fld_rows; i++) {
        const hessfit_fld_row *r = &b->ff->fld_rows[i];
        if (r->code != '0' || strcmp(r->types[0], key) != 0)
            continue;
        if ((int)r->values[0] != equation)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                                 "%s:%d: %s uses equation %d; hessfit's MM3* model has only MacroModel's equation %d",
                                 b->ff->path, r->line, key, (int)r->values[0], equation);
        *out = r->values[1];
        return HESSFIT_SUCCESS;
    }
    return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no ' 0  %s' line in the -1 header (the factor of its energy)",
                         b->ff->path, key);
}

static hessfit_status read_factors(builder *b)
{
    hessfit_mm3_factors *f = &b->m->factor;
    double v14;
    hessfit_status st;
    if ((st = factor(b, "STR", 3, &f->str)) || (st = factor(b, "BND", 3, &f->bnd)) ||
        (st = factor(b, "TOR", 1, &f->tor)) || (st = factor(b, "IMP", 1, &f->imp)) ||
        (st = factor(b, "S-B", 1, &f->sb)) || (st = factor(b, "B-B", 1, &f->bb)) || (st = factor(b, "T-S", 1, &f->ts)) ||
        (st = factor(b, "VDW", 3, &f->vdw)) || (st = factor(b, "ELE", 1, &f->ele)) || (st = factor(b, "V14", 4, &v14)))
        return st;
    if (v14 != 1.0)
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: V14 multiplier %g; hessfit's MM3* model has unscaled 1-4 pairs",
                             b->ff->path, v14);
    return HESSFIT_SUCCESS;
}

/* ---- atoms: van der Waals lines, reduced hydrogens ------------------------------------------------ */

static hessfit_status build_atoms(builder *b)
{
    hessfit_mm3_model *m = b->m;
    const hessfit_forcefield *ff = b->ff;
    for (int a = 0; a < m->n_atoms; a++) {
        hessfit_mm3_atom *at = &m->atoms[a];
        const int row = hf_mm3_vdw_row(&b->g, a);
        int vrow = row;
        if (row < 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "%s: atom %d (%s): no van der Waals line (-6 table of %s) for its type", mol_name(b),
                                 a + 1, type_of(b, a), ff->path);
        if (strcmp(type_of(b, a), "RH") == 0) {
            vrow = hf_mm3_vdw_row_of_type(ff, "Z0");
            if (vrow < 0)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                     "%s: atom %d (RH): MacroModel gives RH the R* and eps of the Z0 line, and %s has "
                                     "no Z0 line in its -6 table",
                                     mol_name(b), a + 1, ff->path);
        }
        at->vdw_row = row;
        at->src_r_star = from_row(ff, vrow, 0, vrow != row ? "RH takes the Z0 line's R* (MacroModel's choice)" : "");
        at->src_eps = from_row(ff, vrow, 1, vrow != row ? "RH takes the Z0 line's eps (MacroModel's choice)" : "");
        at->src_formal = from_row(ff, row, 3, (ff->fld_rows[row].blank & 8u) ? "blank field: 0" : "");
        at->r_star = source_value(ff, at->src_r_star);
        at->eps = source_value(ff, at->src_eps);
        at->formal_charge = source_value(ff, at->src_formal);
        at->charge = at->formal_charge;
        b->f[a] = 1.0;
        if (ff->fld_rows[row].values[2] != 0.0) {
            hessfit_mm3_reduced *r = &m->reduced[m->n_reduced];
            int partner = -1, n_partners = 0;
            for (int k = b->g.start[a]; k < b->g.start[a + 1]; k++)
                if (fabs(b->g.order[k]) >= 0.1) {
                    partner = b->g.adj[k];
                    n_partners++;
                }
            if (n_partners != 1)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                     "%s: atom %d (%s) has a van der Waals offset (%s:%d) and %d bonds of non-zero "
                                     "order; MacroModel moves such an atom towards its one partner",
                                     mol_name(b), a + 1, type_of(b, a), ff->path, ff->fld_rows[row].line, n_partners);
            r->atom = a;
            r->partner = partner;
            r->src_offset = from_row(ff, row, 2, "");
            r->f = 1.0 + ff->fld_rows[row].values[2];
            b->f[a] = r->f;
            m->n_reduced++;
        }
    }
    return HESSFIT_SUCCESS;
}

/* f of the bond a-b: that of its reduced H (error when both are reduced). */
static hessfit_status bond_f(const builder *b, int a, int c, double *f)
{
    if (b->f[a] != 1.0 && b->f[c] != 1.0) {
        char t[96];
        const int atoms[2] = {a, c};
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: bond %s joins two reduced hydrogens", mol_name(b),
                             atoms_text(b, atoms, 2, t, sizeof t));
    }
    *f = b->f[a] != 1.0 ? b->f[a] : b->f[c];
    return HESSFIT_SUCCESS;
}

/* ---- bonded terms --------------------------------------------------------------------------------- */

static hessfit_status add_stretch(builder *b, int term)
{
    const hessfit_typed_term *t = &b->typed->terms[term];
    const hessfit_forcefield *ff = b->ff;
    const int row = b->param_row[t->param];
    hessfit_mm3_stretch *s = &b->m->stretches[b->m->n_stretches];
    int first = t->atoms[0];
    char text[96];
    hessfit_status st;
    if (row < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: stretch %s: parameter %d has no .fld line", mol_name(b),
                             atoms_text(b, t->atoms, 2, text, sizeof text), t->param);
    s->src_r0 = from_param(ff, t->param, 1, 1.0, "");
    s->src_k = from_param(ff, t->param, 0, 1.0 / HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2, "");
    s->src_mu = from_param(ff, t->param, 2, 1.0, (ff->fld_rows[row].blank & 4u) ? "blank field: 0" : "");
    s->r0 = source_value(ff, s->src_r0);
    s->k = source_value(ff, s->src_k);
    s->mu = source_value(ff, s->src_mu);
    s->term = term;
    /* which end the line's first column names: needed for a moment; for a zero one only known or not */
    const hessfit_fld_row *r = &ff->fld_rows[row];
    if (r->substructure >= 0) {
        st = hf_mm3_substructure_first(&b->g, r, t->atoms[0], t->atoms[1], &first);
    } else {
        const int fwd =
            hf_mm3_type_fits(&b->g, r->types[0], t->atoms[0]) && hf_mm3_type_fits(&b->g, r->types[1], t->atoms[1]);
        const int bwd =
            hf_mm3_type_fits(&b->g, r->types[0], t->atoms[1]) && hf_mm3_type_fits(&b->g, r->types[1], t->atoms[0]);
        st = fwd == bwd ? hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                        "%s:%d: bond moment %g on stretch %s: the line's types %s %s fit %s, so the "
                                        "moment's direction is undetermined",
                                        ff->path, r->line, s->mu, atoms_text(b, t->atoms, 2, text, sizeof text),
                                        r->types[0], r->types[1], fwd ? "both ways" : "neither way")
                        : HESSFIT_SUCCESS;
        first = fwd ? t->atoms[0] : t->atoms[1];
    }
    if (st != HESSFIT_SUCCESS && s->mu != 0.0)
        return st;
    s->plus = st == HESSFIT_SUCCESS ? first : -1;
    if (s->mu == 0.0) /* the typed order (a term's atom order shows in the last bits of its derivatives) */
        first = t->atoms[0];
    s->atoms[0] = first;
    s->atoms[1] = first == t->atoms[0] ? t->atoms[1] : t->atoms[0];
    if ((st = bond_f(b, s->atoms[0], s->atoms[1], &s->f)) != HESSFIT_SUCCESS)
        return st;
    b->stretch_of[s->atoms[0] * b->m->n_atoms + s->atoms[1]] = b->m->n_stretches;
    b->stretch_of[s->atoms[1] * b->m->n_atoms + s->atoms[0]] = b->m->n_stretches;
    b->m->n_stretches++;
    return HESSFIT_SUCCESS;
}

static void add_bend(builder *b, int term)
{
    const hessfit_typed_term *t = &b->typed->terms[term];
    hessfit_mm3_bend *e = &b->m->bends[b->m->n_bends++];
    memcpy(e->atoms, t->atoms, sizeof e->atoms);
    e->src_theta0 = from_param(b->ff, t->param, 1, 1.0, "");
    e->src_k = from_param(b->ff, t->param, 0, 1.0 / HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2, "");
    e->theta0 = source_value(b->ff, e->src_theta0);
    e->k = source_value(b->ff, e->src_k);
    e->term = term;
}

/* The stretch of bond a-c for a cross term with a non-zero constant (error naming the term if none). */
static hessfit_status needed_stretch(const builder *b, int a, int c, const char *what, const int *atoms, int n, int *s)
{
    char text[128];
    *s = b->stretch_of[a * b->m->n_atoms + c];
    if (*s < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s %s needs the stretch of bond %d-%d, which has no "
                             "stretch term", mol_name(b), what, atoms_text(b, atoms, n, text, sizeof text), a + 1, c + 1);
    return HESSFIT_SUCCESS;
}

static hessfit_status add_stretch_bend(builder *b, int bend)
{
    const hessfit_mm3_bend *e = &b->m->bends[bend];
    hessfit_mm3_stretch_bend *x = &b->m->stretch_bends[b->m->n_stretch_bends++];
    int row, reversed;
    char text[128];
    hessfit_status st;
    memcpy(x->atoms, e->atoms, sizeof x->atoms);
    x->bend = bend;
    x->theta0 = e->theta0;
    x->src_theta0 = e->src_theta0;
    x->f[0] = x->f[1] = 1.0;
    x->src_r0[0] = x->src_r0[1] = NO_SOURCE;
    if ((st = hf_mm3_first_row(&b->g, '3', e->atoms, 3, &row, &reversed)) != HESSFIT_SUCCESS)
        return st;
    if (row < 0) {
        const int centre = e->atoms[1];
        const int ordered = fabs(hf_mm3_order(&b->g, e->atoms[0], centre)) >= 0.1 &&
                            fabs(hf_mm3_order(&b->g, e->atoms[2], centre)) >= 0.1;
        if (b->mol->atomic_numbers[centre] == 6 && ordered)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "%s: bend %s at a carbon: no stretch-bend line (S-B table, code 3) of %s fits it",
                                 mol_name(b), atoms_text(b, e->atoms, 3, text, sizeof text), b->ff->path);
        x->k_sb = 0.0;
        x->src_k_sb = derived(ordered ? "no S-B line: not a carbon centre" : "no S-B line: an order-0 bond");
        return HESSFIT_SUCCESS;
    }
    const int param = b->ff->fld_rows[row].param; /* every S-B line is a parameter (hessfit_fld_read) */
    x->src_k_sb = param >= 0 ? from_param(b->ff, param, 0, 1.0, "") : from_row(b->ff, row, 0, "");
    x->k_sb = source_value(b->ff, x->src_k_sb);
    for (int k = 0; k < 2; k++) {
        int s = b->stretch_of[e->atoms[2 * k] * b->m->n_atoms + e->atoms[1]];
        if (s < 0 && x->k_sb != 0.0 &&
            (st = needed_stretch(b, e->atoms[1], e->atoms[2 * k], "stretch-bend", e->atoms, 3, &s)) != HESSFIT_SUCCESS)
            return st;
        if (s >= 0) {
            x->r0[k] = b->m->stretches[s].r0;
            x->f[k] = b->m->stretches[s].f;
            x->src_r0[k] = b->m->stretches[s].src_r0;
        }
    }
    return HESSFIT_SUCCESS;
}

/* k_bb and theta0 of a bend for bend-bend: its own main-table line, or the first main-table line
 * that fits a substructure bend. */
static hessfit_status bend_bend_constants(const builder *b, int bend, double *k_bb, double *theta0,
                                          hessfit_mm3_source *src_k, hessfit_mm3_source *src_theta0)
{
    const hessfit_mm3_bend *e = &b->m->bends[bend];
    const int param = b->typed->terms[e->term].param;
    int row = b->param_row[param], reversed;
    hessfit_status st;
    if (b->ff->params[param].substructure < 0) {
        if (row < 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: bend %d-%d-%d: parameter %d has no .fld line",
                                 mol_name(b), e->atoms[0] + 1, e->atoms[1] + 1, e->atoms[2] + 1, param);
        *src_theta0 = e->src_theta0;
    } else {
        if ((st = hf_mm3_first_row(&b->g, '2', e->atoms, 3, &row, &reversed)) != HESSFIT_SUCCESS)
            return st;
        if (row < 0) {
            *k_bb = *theta0 = 0.0;
            *src_k = *src_theta0 = derived("no main-table bend line: k_bb 0");
            return HESSFIT_SUCCESS;
        }
        *src_theta0 = from_row(b->ff, row, 0, "main-table line of a substructure bend");
    }
    *src_k = from_row(b->ff, row, 2, (b->ff->fld_rows[row].blank & 4u) ? "blank field: 0" : "");
    *k_bb = source_value(b->ff, *src_k);
    *theta0 = source_value(b->ff, *src_theta0);
    return HESSFIT_SUCCESS;
}

static hessfit_status add_bend_bends(builder *b)
{
    const int n = b->m->n_bends;
    double *k = malloc(((size_t)n + 1) * sizeof *k), *th = malloc(((size_t)n + 1) * sizeof *th);
    hessfit_mm3_source *sk = malloc(((size_t)n + 1) * sizeof *sk), *sth = malloc(((size_t)n + 1) * sizeof *sth);
    hessfit_status st = HESSFIT_SUCCESS;
    size_t cap = 0;
    if (k == NULL || th == NULL || sk == NULL || sth == NULL)
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: bend-bend constants of %d bends", mol_name(b), n);
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++)
        st = bend_bend_constants(b, i, &k[i], &th[i], &sk[i], &sth[i]);
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++)
        for (int j = i + 1; j < n && st == HESSFIT_SUCCESS; j++) {
            const hessfit_mm3_bend *p = &b->m->bends[i], *q = &b->m->bends[j];
            if (p->atoms[1] != q->atoms[1] || k[i] == 0.0 || k[j] == 0.0)
                continue;
            st = hf_grow((void **)&b->m->bend_bends, &cap, (size_t)b->m->n_bend_bends + 1, sizeof *b->m->bend_bends,
                         "bend-bend terms");
            if (st != HESSFIT_SUCCESS)
                break;
            hessfit_mm3_bend_bend *x = &b->m->bend_bends[b->m->n_bend_bends++];
            const int idx[2] = {i, j};
            x->atoms[0] = p->atoms[1];
            x->atoms[1] = p->atoms[0];
            x->atoms[2] = p->atoms[2];
            x->atoms[3] = q->atoms[0];
            x->atoms[4] = q->atoms[2];
            for (int h = 0; h < 2; h++) {
                x->k_bb[h] = k[idx[h]];
                x->theta0[h] = th[idx[h]];
                x->src_k_bb[h] = sk[idx[h]];
                x->src_theta0[h] = sth[idx[h]];
                x->bend[h] = idx[h];
            }
        }
    free(k);
    free(th);
    free(sk);
    free(sth);
    return st;
}

static int same_bond(const int *a, const int *c)
{
    return (a[1] == c[1] && a[2] == c[2]) || (a[1] == c[2] && a[2] == c[1]);
}

static void add_torsion(builder *b, int term)
{
    const hessfit_typed_term *t = &b->typed->terms[term];
    const hessfit_ff_param *p = &b->ff->params[t->param];
    hessfit_mm3_torsion *x = &b->m->torsions[b->m->n_torsions++];
    int share = 1;
    const char *rule = "";
    if (p->substructure >= 0 && strcmp(p->types[0], HESSFIT_FF_WILDCARD) == 0 &&
        strcmp(p->types[3], HESSFIT_FF_WILDCARD) == 0) {
        share = 0;
        for (int u = 0; u < b->typed->n_terms; u++) {
            const hessfit_typed_term *o = &b->typed->terms[u];
            share += o->kind == HESSFIT_TERM_TORSION && o->param == t->param && same_bond(o->atoms, t->atoms);
        }
        rule = "substructure 00..00 line shared over the torsions about its bond";
    }
    memcpy(x->atoms, t->atoms, sizeof x->atoms);
    x->term = term;
    for (int v = 0; v < 3; v++) {
        x->src_v[v] = from_param(b->ff, t->param, 3 * v, 2.0 / share, rule); /* values hold V/2 */
        x->v[v] = source_value(b->ff, x->src_v[v]);
    }
}

static hessfit_status add_torsion_stretch(builder *b, int torsion)
{
    const hessfit_mm3_torsion *t = &b->m->torsions[torsion];
    hessfit_mm3_torsion_stretch *x = &b->m->torsion_stretches[b->m->n_torsion_stretches++];
    int row, reversed, s;
    hessfit_status st;
    memcpy(x->atoms, t->atoms, sizeof x->atoms);
    x->torsion = torsion;
    x->f = 1.0;
    x->src_r0 = NO_SOURCE;
    if ((st = hf_mm3_first_row(&b->g, '8', t->atoms, 4, &row, &reversed)) != HESSFIT_SUCCESS)
        return st;
    if (row < 0) {
        x->src_k_ts = derived("no torsion-stretch (code 8) line: 0");
        return HESSFIT_SUCCESS;
    }
    x->src_k_ts = from_row(b->ff, row, 0, "");
    x->k_ts = source_value(b->ff, x->src_k_ts);
    s = b->stretch_of[t->atoms[1] * b->m->n_atoms + t->atoms[2]];
    if (s < 0 && x->k_ts != 0.0 &&
        (st = needed_stretch(b, t->atoms[1], t->atoms[2], "torsion-stretch", t->atoms, 4, &s)) != HESSFIT_SUCCESS)
        return st;
    if (s >= 0) {
        x->r0 = b->m->stretches[s].r0;
        x->f = b->m->stretches[s].f;
        x->src_r0 = b->m->stretches[s].src_r0;
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status add_out_of_plane(builder *b, int term)
{
    const hessfit_typed_term *t = &b->typed->terms[term];
    hessfit_mm3_out_of_plane *x = &b->m->out_of_plane[b->m->n_out_of_plane++];
    int centre = -1, set[4];
    char text[128];
    memcpy(set, t->atoms, sizeof set);
    /* the atom order MacroModel printed, when the molecule carries its report */
    for (int r = 0; r < b->mol->n_reported_terms; r++) {
        const hessfit_reported_term *rep = &b->mol->reported_terms[r];
        int hits = 0;
        if (rep->kind != HESSFIT_TERM_IMPROPER)
            continue;
        for (int k = 0; k < 4; k++)
            for (int h = 0; h < 4; h++)
                hits += rep->atoms[k] == set[h];
        if (hits == 4) {
            memcpy(x->atoms, rep->atoms, sizeof x->atoms);
            centre = -2;
            break;
        }
    }
    if (centre != -2) { /* (first neighbour, centre, second, third) */
        for (int c = 0; c < 4 && centre < 0; c++) {
            int bonded = 0;
            for (int h = 0; h < 4; h++)
                bonded += h != c && hf_mm3_order(&b->g, set[c], set[h]) >= 0.0;
            if (bonded == 3)
                centre = c;
        }
        if (centre < 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: out-of-plane %s: no atom is bonded to the other three",
                                 mol_name(b), atoms_text(b, set, 4, text, sizeof text));
        int k = 0;
        for (int h = 0; h < 4; h++)
            if (h != centre)
                x->atoms[k == 0 ? 0 : k + 1] = set[h], k++;
        x->atoms[1] = set[centre];
    }
    x->term = term;
    x->src_k = from_param(b->ff, t->param, 0, 1.0 / HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2, "");
    x->k = source_value(b->ff, x->src_k);
    return HESSFIT_SUCCESS;
}

/* ---- pairs -------------------------------------------------------------------------------------- */

/* 1-2 and 1-3 (0 apart: excluded), 1-4 (1), farther (2), through every bond (order 0 included). */
static int separation(const builder *b, int i, int j)
{
    const hf_mm3_graph *g = &b->g;
    int is14 = 0;
    for (int k = g->start[i]; k < g->start[i + 1]; k++) {
        const int n1 = g->adj[k];
        if (n1 == j)
            return 0;
        for (int l = g->start[n1]; l < g->start[n1 + 1]; l++) {
            const int n2 = g->adj[l];
            if (n2 == j)
                return 0;
            if (n2 != i && hf_mm3_order(g, n2, j) >= 0.0)
                is14 = 1;
        }
    }
    return is14 ? 1 : 2;
}

static hessfit_status build_pairs(builder *b)
{
    hessfit_mm3_model *m = b->m;
    const int n = m->n_atoms;
    size_t cap = 0;
    hessfit_status st;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const int sep = separation(b, i, j), atoms[2] = {i, j};
            int row, reversed;
            if (sep == 0)
                continue;
            if ((st = hf_grow((void **)&m->pairs, &cap, (size_t)m->n_pairs + 1, sizeof *m->pairs, "pairs")) !=
                    HESSFIT_SUCCESS ||
                (st = hf_mm3_first_row(&b->g, '6', atoms, 2, &row, &reversed)) != HESSFIT_SUCCESS)
                return st;
            hessfit_mm3_pair *p = &m->pairs[m->n_pairs++];
            p->atoms[0] = i;
            p->atoms[1] = j;
            p->is14 = sep == 1;
            p->qq = m->atoms[i].charge * m->atoms[j].charge;
            if (row >= 0) {
                p->src_r = from_row(b->ff, row, 0, "special pair (code 6)");
                p->src_eps = from_row(b->ff, row, 1, "special pair (code 6)");
                p->r = source_value(b->ff, p->src_r);
                p->eps = source_value(b->ff, p->src_eps);
            } else {
                p->src_r = derived("R*_i + R*_j");
                p->src_eps = derived("sqrt(eps_i eps_j)");
                p->r = m->atoms[i].r_star + m->atoms[j].r_star;
                p->eps = sqrt(m->atoms[i].eps * m->atoms[j].eps);
            }
        }
    return HESSFIT_SUCCESS;
}

/* ---- hydrogen bonds -------------------------------------------------------------------------------- */

/* The 2-atom code-7 lines (hessfit_mm3.h, hessfit_mm3_hbond): every pair not 1-2 or 1-3 whose types
 * fit one is a candidate; the 1-5 and farther ones are kept (the hydrogen first), and listed when
 * within HESSFIT_MM3_HBOND_CUTOFF at mol's geometry. */
static hessfit_status build_hbonds(builder *b)
{
    hessfit_mm3_model *m = b->m;
    const hessfit_forcefield *ff = b->ff;
    size_t cap = 0;
    hessfit_status st;
    int any_line = 0;
    for (int r = 0; r < ff->n_fld_rows && !any_line; r++)
        any_line = ff->fld_rows[r].code == '7' && ff->fld_rows[r].n_types == 2 && ff->fld_rows[r].substructure < 0;
    if (!any_line)
        return HESSFIT_SUCCESS;
    for (int p = 0; p < m->n_pairs; p++) {
        const hessfit_mm3_pair *pair = &m->pairs[p];
        int row, reversed;
        if ((st = hf_mm3_first_row(&b->g, '7', pair->atoms, 2, &row, &reversed)) != HESSFIT_SUCCESS)
            return st;
        if (row < 0)
            continue;
        m->n_hbond_candidates++;
        if (pair->is14)
            continue;
        if (b->mol->coords == NULL)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "%s: atoms %d and %d fit the hydrogen-bond line %s:%d, and the molecule has no "
                                 "coordinates to apply its %g A cutoff to",
                                 mol_name(b), pair->atoms[0] + 1, pair->atoms[1] + 1, ff->path, ff->fld_rows[row].line,
                                 HESSFIT_MM3_HBOND_CUTOFF);
        if (m->n_hbonds == 0 && (st = factor(b, "HBD", 1, &m->factor.hbd)) != HESSFIT_SUCCESS)
            return st;
        if ((st = hf_grow((void **)&m->hbonds, &cap, (size_t)m->n_hbonds + 1, sizeof *m->hbonds, "hydrogen bonds")) !=
            HESSFIT_SUCCESS)
            return st;
        hessfit_mm3_hbond *h = &m->hbonds[m->n_hbonds++];
        const int swap = b->mol->atomic_numbers[pair->atoms[1]] == 1 && b->mol->atomic_numbers[pair->atoms[0]] != 1;
        h->atoms[0] = pair->atoms[swap];
        h->atoms[1] = pair->atoms[!swap];
        h->listed = hf_atom_distance(b->mol->coords, pair->atoms[0], pair->atoms[1]) < HESSFIT_MM3_HBOND_CUTOFF;
        m->n_hbonds_listed += h->listed;
        h->src_c = from_row(ff, row, 0, "");
        h->src_d = from_row(ff, row, 1, "");
        h->c = source_value(ff, h->src_c);
        h->d = source_value(ff, h->src_d);
    }
    return HESSFIT_SUCCESS;
}

/* ---- the model -------------------------------------------------------------------------------------- */

/* Substructure stretch-bend, special-pair, H-bond and torsion-stretch lines are not applied: an
 * error when their substructure lies on the molecule (none of the rh-enamide set's does). */
static hessfit_status check_substructure_tables(const builder *b)
{
    int checked = -1;
    for (int r = 0; r < b->ff->n_fld_rows; r++) {
        const hessfit_fld_row *row = &b->ff->fld_rows[r];
        int applies;
        hessfit_status st;
        if (row->substructure < 0 || row->substructure == checked || !strchr("3678", row->code))
            continue;
        checked = row->substructure;
        if ((st = hf_mm3_substructure_applies(&b->g, row->substructure, &applies)) != HESSFIT_SUCCESS)
            return st;
        if (applies)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                                 "%s:%d: substructure '%s' lies on %s and has a code-%c line, which hessfit's MM3* "
                                 "model does not apply (only its stretch, bend, torsion and out-of-plane lines, "
                                 "through typing)",
                                 b->ff->path, row->line, b->ff->substructures[row->substructure].name, mol_name(b),
                                 row->code);
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status check_inputs(const hessfit_molecule *mol, const hessfit_typed_molecule *typed,
                                   const hessfit_forcefield *ff)
{
    if (mol == NULL || typed == NULL || ff == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_mm3_build: %s is NULL",
                             mol == NULL ? "mol" : typed == NULL ? "typed" : "ff");
    if (ff->format != HESSFIT_FF_MM3_FLD || ff->n_fld_rows == 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_mm3_build: %s was not read from an MM3* .fld",
                             ff->path != NULL ? ff->path : "the force field");
    if (mol->n_atoms <= 0 || mol->atom_types == NULL || mol->atomic_numbers == NULL || !mol->bonds_known ||
        (mol->n_bonds > 0 && (mol->bonds == NULL || mol->bond_orders == NULL)))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "hessfit_mm3_build: %s needs atoms with MacroModel types and bonds with their orders",
                             mol->source != NULL ? mol->source : "the molecule");
    for (int t = 0; t < typed->n_terms; t++)
        if (typed->terms[t].param >= ff->n_params)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_mm3_build: term %d names parameter %d of %d",
                                 t, typed->terms[t].param, ff->n_params);
    return HESSFIT_SUCCESS;
}

static hessfit_status build(builder *b)
{
    hessfit_mm3_model *m = b->m;
    const hessfit_typed_molecule *typed = b->typed;
    const size_t n = (size_t)m->n_atoms, nt = (size_t)typed->n_terms + 1;
    hessfit_status st;
    b->param_row = malloc(((size_t)b->ff->n_params + 1) * sizeof *b->param_row);
    b->stretch_of = malloc(n * n * sizeof *b->stretch_of);
    b->f = malloc(n * sizeof *b->f);
    m->atoms = calloc(n, sizeof *m->atoms);
    m->reduced = calloc(n, sizeof *m->reduced);
    m->stretches = calloc(nt, sizeof *m->stretches);
    m->bends = calloc(nt, sizeof *m->bends);
    m->stretch_bends = calloc(nt, sizeof *m->stretch_bends);
    m->torsions = calloc(nt, sizeof *m->torsions);
    m->torsion_stretches = calloc(nt, sizeof *m->torsion_stretches);
    m->out_of_plane = calloc(nt, sizeof *m->out_of_plane);
    if (b->param_row == NULL || b->stretch_of == NULL || b->f == NULL || m->atoms == NULL || m->reduced == NULL ||
        m->stretches == NULL || m->bends == NULL || m->stretch_bends == NULL || m->torsions == NULL ||
        m->torsion_stretches == NULL || m->out_of_plane == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: MM3* model of %d atoms", mol_name(b), m->n_atoms);
    for (int p = 0; p < b->ff->n_params; p++)
        b->param_row[p] = -1;
    for (int r = 0; r < b->ff->n_fld_rows; r++)
        if (b->ff->fld_rows[r].param >= 0)
            b->param_row[b->ff->fld_rows[r].param] = r;
    for (size_t k = 0; k < n * n; k++)
        b->stretch_of[k] = -1;
    if ((st = read_factors(b)) != HESSFIT_SUCCESS || (st = hf_mm3_graph_build(b->mol, b->ff, &b->g)) != HESSFIT_SUCCESS ||
        (st = check_substructure_tables(b)) != HESSFIT_SUCCESS || (st = build_atoms(b)) != HESSFIT_SUCCESS)
        return st;
    for (int t = 0; t < typed->n_terms; t++) {
        const hessfit_typed_term *term = &typed->terms[t];
        if (term->param < 0)
            continue;
        switch (term->kind) {
        case HESSFIT_TERM_BOND: st = add_stretch(b, t); break;
        case HESSFIT_TERM_ANGLE: add_bend(b, t); break;
        case HESSFIT_TERM_TORSION: add_torsion(b, t); break;
        case HESSFIT_TERM_IMPROPER: st = add_out_of_plane(b, t); break;
        default: break;
        }
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    for (int e = 0; e < m->n_bends; e++)
        if ((st = add_stretch_bend(b, e)) != HESSFIT_SUCCESS)
            return st;
    for (int t = 0; t < m->n_torsions; t++)
        if ((st = add_torsion_stretch(b, t)) != HESSFIT_SUCCESS)
            return st;
    if ((st = add_bend_bends(b)) != HESSFIT_SUCCESS)
        return st;
    for (int s = 0; s < m->n_stretches; s++) { /* bond moments: + on the line's first atom */
        const hessfit_mm3_stretch *x = &m->stretches[s];
        const double dq = x->mu / (HF_MM3_DEBYE_PER_E_A * x->r0);
        m->atoms[x->atoms[0]].charge += dq;
        m->atoms[x->atoms[1]].charge -= dq;
    }
    if ((st = build_pairs(b)) != HESSFIT_SUCCESS)
        return st;
    return build_hbonds(b);
}

hessfit_status hessfit_mm3_build(const hessfit_molecule *mol, const hessfit_typed_molecule *typed,
                                 const hessfit_forcefield *ff, hessfit_mm3_model *model)
{
    builder b;
    hessfit_status st;
    if (model == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_mm3_build: model is NULL");
    memset(model, 0, sizeof *model);
    if ((st = check_inputs(mol, typed, ff)) != HESSFIT_SUCCESS)
        return st;
    memset(&b, 0, sizeof b);
    b.mol = mol;
    b.typed = typed;
    b.ff = ff;
    b.m = model;
    model->n_atoms = mol->n_atoms;
    st = build(&b);
    hf_mm3_graph_free(&b.g);
    free(b.param_row);
    free(b.stretch_of);
    free(b.f);
    if (st != HESSFIT_SUCCESS)
        hessfit_mm3_model_free(model);
    return st;
}
