/*
 * How MacroModel finds the .fld lines of the MM3* terms that typing does not give (hf_mm3_internal.h):
 * first match in file order over the main tables (stretch-bend, torsion-stretch, the main-table
 * bend line of a substructure bend, special van der Waals pairs), the van der Waals line of an atom,
 * and the embedding of a substructure pattern that orients a substructure bond moment.
 *
 * A row fits atoms a1..an when, in one direction,
 *   - every type fits (hf_mm3_type_fits: same, "*", an -5 equivalence, an element wildcard "C0");
 *   - every bond mark fits the bond's order: '-' 1 or 1.5; '=' 2 or 1.5; '%' 3; '*' any non-zero
 *     order; '.' 0; no mark any. So a bond of order 0 (dative, the bridging H) fits only '.':
 *     "00 * C0 * 00" gives no stretch-bend across it, and the C2-C2-H1 bend line no bend-bend
 *     constant to the substructure bend C5-C6-H18, which is what MacroModel printed. (Typing lets
 *     '-' fit order 0 too: MacroModel reported such lines for the typed terms themselves.);
 *   - every descriptor field holds: 4 characters per atom naming up to two types ("00" none) that
 *     must be attached to that atom besides the row's own atoms, two distinct atoms for two types.
 * (The same rules as fitting/chem/hf_typing.c, whose ranking, not first match, picks typed terms.)
 *
 * Substructure patterns ("HX-RH(-PX)-HX.C2*C2(.2)-N2-C2=O2.2"): two-character types ("00" any)
 * numbered 1, 2, ... in order; a mark ('-' '=' '%' '*' '.'; none = '-') bonds an atom to the previous one or, when a
 * number follows the mark, to that pattern position (ring closure); parentheses branch.
 */
#include "hf_mm3_internal.h"

#include "hessfit_elements.h"
#include "hf_lines.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HF_MM3_PATTERN_MAX 24

hessfit_status hf_mm3_graph_build(const hessfit_molecule *mol, const hessfit_forcefield *ff, hf_mm3_graph *g)
{
    const int n = mol->n_atoms;
    int *fill;
    memset(g, 0, sizeof *g);
    g->mol = mol;
    g->ff = ff;
    g->start = calloc((size_t)n + 1, sizeof *g->start);
    g->adj = malloc(((size_t)2 * mol->n_bonds + 1) * sizeof *g->adj);
    g->order = malloc(((size_t)2 * mol->n_bonds + 1) * sizeof *g->order);
    fill = calloc((size_t)n + 1, sizeof *fill);
    if (g->start == NULL || g->adj == NULL || g->order == NULL || fill == NULL) {
        free(fill);
        hf_mm3_graph_free(g);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "MM3* model: adjacency of %d bonds", mol->n_bonds);
    }
    for (int b = 0; b < mol->n_bonds; b++) {
        g->start[mol->bonds[2 * b] + 1]++;
        g->start[mol->bonds[2 * b + 1] + 1]++;
    }
    for (int a = 0; a < n; a++)
        g->start[a + 1] += g->start[a];
    for (int b = 0; b < mol->n_bonds; b++)
        for (int e = 0; e < 2; e++) {
            const int i = mol->bonds[2 * b + e], j = mol->bonds[2 * b + 1 - e];
            const int at = g->start[i] + fill[i]++;
            g->adj[at] = j;
            g->order[at] = mol->bond_orders[b];
        }
    free(fill);
    return HESSFIT_SUCCESS;
}

void hf_mm3_graph_free(hf_mm3_graph *g)
{
    free(g->start);
    free(g->adj);
    free(g->order);
    memset(g, 0, sizeof *g);
}

double hf_mm3_order(const hf_mm3_graph *g, int a, int b)
{
    for (int k = g->start[a]; k < g->start[a + 1]; k++)
        if (g->adj[k] == b)
            return g->order[k];
    return -1.0;
}

static int equivalent(const hessfit_forcefield *ff, const char *type, const char *label)
{
    for (int e = 0; e < ff->n_equivalences; e++)
        if (strcmp(ff->equivalences[e].type, type) == 0 && strcmp(ff->equivalences[e].equivalent, label) == 0)
            return 1;
    return 0;
}

int hf_mm3_type_fits(const hf_mm3_graph *g, const char *label, int atom)
{
    const char *type = g->mol->atom_types[atom];
    if (strcmp(label, HESSFIT_FF_WILDCARD) == 0 || strcmp(label, type) == 0 || equivalent(g->ff, type, label))
        return 1;
    if (isupper((unsigned char)label[0]) && label[1] == '0' && label[2] == '\0') { /* element wildcard "C0" */
        const char symbol[2] = {label[0], '\0'};
        const int z = hessfit_element_atomic_number(symbol);
        return z > 0 && g->mol->atomic_numbers[atom] == z;
    }
    return 0;
}

static int mark_fits(char mark, double order)
{
    const int zero = fabs(order) < 0.1, single = fabs(order - 1.0) < 0.1, aromatic = fabs(order - 1.5) < 0.1;
    switch (mark) {
    case 0: return 1;
    case '-': return single || aromatic;
    case '=': return fabs(order - 2.0) < 0.1 || aromatic;
    case '%': return fabs(order - 3.0) < 0.1;
    case '.': return zero;
    case '*': return !zero;
    default: return 0;
    }
}

static int in_list(int atom, const int *atoms, int n)
{
    for (int k = 0; k < n; k++)
        if (atoms[k] == atom)
            return 1;
    return 0;
}

/* 1 if `atom` bears, besides the atoms in skip, distinct neighbours fitting labels[0..n_labels). */
static int bears(const hf_mm3_graph *g, int atom, const int *skip, int n_skip, char labels[2][3], int n_labels)
{
    for (int k = g->start[atom]; k < g->start[atom + 1]; k++) {
        const int first = g->adj[k];
        if (in_list(first, skip, n_skip) || !hf_mm3_type_fits(g, labels[0], first))
            continue;
        if (n_labels == 1)
            return 1;
        for (int m = g->start[atom]; m < g->start[atom + 1]; m++)
            if (m != k && !in_list(g->adj[m], skip, n_skip) && hf_mm3_type_fits(g, labels[1], g->adj[m]))
                return 1;
    }
    return 0;
}

/* Descriptor of n fields laid on atoms (in the row's order): 1 holds, 0 fails, -1 not evaluable. */
static int descriptor_holds(const hf_mm3_graph *g, const char *descriptor, const int *atoms, int n)
{
    char buf[32];
    char *tok[8];
    int n_tok;
    if (descriptor[0] == '\0')
        return 1;
    snprintf(buf, sizeof buf, "%s", descriptor);
    n_tok = hf_split(buf, tok, 8);
    if (n_tok > n)
        return -1;
    for (int k = 0; k < n_tok; k++) {
        char labels[2][3];
        int n_labels = 0;
        if (strlen(tok[k]) != 4)
            return -1; /* a count of continuation lines ("1C200") */
        for (int h = 0; h < 2; h++)
            if (tok[k][2 * h] != '0' || tok[k][2 * h + 1] != '0') {
                labels[n_labels][0] = tok[k][2 * h];
                labels[n_labels][1] = tok[k][2 * h + 1];
                labels[n_labels++][2] = '\0';
            }
        if (n_labels > 0 && !bears(g, atoms[k], atoms, n, labels, n_labels))
            return 0;
    }
    return 1;
}

/* Row r on atoms in this order: 1 fits, 0 not, -1 types and marks fit but the descriptor is not evaluable. */
static int row_fits_oriented(const hf_mm3_graph *g, const hessfit_fld_row *r, const int *atoms, int n)
{
    for (int k = 0; k < n; k++)
        if (!hf_mm3_type_fits(g, r->types[k], atoms[k]))
            return 0;
    for (int k = 0; k + 1 < n; k++)
        if (!mark_fits(r->bond_marks[k], hf_mm3_order(g, atoms[k], atoms[k + 1])))
            return 0;
    return descriptor_holds(g, r->descriptor, atoms, n);
}

hessfit_status hf_mm3_first_row(const hf_mm3_graph *g, char code, const int *atoms, int n, int *row, int *reversed)
{
    int rev[4];
    for (int k = 0; k < n; k++)
        rev[k] = atoms[n - 1 - k];
    *row = -1;
    *reversed = 0;
    for (int i = 0; i < g->ff->n_fld_rows; i++) {
        const hessfit_fld_row *r = &g->ff->fld_rows[i];
        if (r->code != code || r->substructure >= 0 || r->n_types != n)
            continue;
        const int fwd = row_fits_oriented(g, r, atoms, n), bwd = row_fits_oriented(g, r, rev, n);
        if (fwd < 0 || bwd < 0)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                                 "%s:%d: the descriptor '%s' of this code-%c line (continuation lines) cannot be "
                                 "evaluated, and its types fit atoms %d-%d...",
                                 g->ff->path, r->line, r->descriptor, code, atoms[0] + 1, atoms[n - 1] + 1);
        if (fwd || bwd) {
            *row = i;
            *reversed = !fwd;
            return HESSFIT_SUCCESS;
        }
    }
    return HESSFIT_SUCCESS;
}

int hf_mm3_vdw_row(const hf_mm3_graph *g, int atom)
{
    const char *type = g->mol->atom_types[atom];
    for (int i = 0; i < g->ff->n_fld_rows; i++) {
        const hessfit_fld_row *r = &g->ff->fld_rows[i];
        if (r->code != 'V' || (strcmp(r->types[0], type) != 0 && !equivalent(g->ff, type, r->types[0])))
            continue;
        if (descriptor_holds(g, r->descriptor, &atom, 1) == 1)
            return i;
    }
    return -1;
}

int hf_mm3_vdw_row_of_type(const hessfit_forcefield *ff, const char *type)
{
    for (int i = 0; i < ff->n_fld_rows; i++)
        if (ff->fld_rows[i].code == 'V' && strcmp(ff->fld_rows[i].types[0], type) == 0)
            return i;
    return -1;
}

/* ---- substructure patterns ----------------------------------------------------------------------- */

typedef struct pattern {
    int n, n_bonds;
    char types[HF_MM3_PATTERN_MAX][4];
    int a[2 * HF_MM3_PATTERN_MAX], b[2 * HF_MM3_PATTERN_MAX];
    char mark[2 * HF_MM3_PATTERN_MAX];
} pattern;

static int pattern_parse(const char *text, pattern *p)
{
    int stack[HF_MM3_PATTERN_MAX], depth = 0, prev = -1;
    char mark = 0;
    memset(p, 0, sizeof *p);
    for (const char *c = text; *c;) {
        if (*c == '(') {
            if (prev < 0 || depth == HF_MM3_PATTERN_MAX)
                return 0;
            stack[depth++] = prev;
            c++;
        } else if (*c == ')') {
            if (depth == 0)
                return 0;
            prev = stack[--depth];
            c++;
        } else if (strchr("-=%*.", *c) != NULL) {
            mark = *c++;
        } else if (isdigit((unsigned char)*c) && !(c[0] == '0' && c[1] == '0')) { /* a bond to that position */
            int to = 0;
            while (isdigit((unsigned char)*c))
                to = 10 * to + (*c++ - '0');
            if (prev < 0 || to < 1 || to > p->n || p->n_bonds == 2 * HF_MM3_PATTERN_MAX)
                return 0;
            p->a[p->n_bonds] = prev;
            p->b[p->n_bonds] = to - 1;
            p->mark[p->n_bonds++] = mark ? mark : '-';
            mark = 0;
        } else if (isalnum((unsigned char)*c) && c[1] != '\0' && isalnum((unsigned char)c[1])) { /* a type, "00" any */
            if (p->n == HF_MM3_PATTERN_MAX || p->n_bonds == 2 * HF_MM3_PATTERN_MAX)
                return 0;
            memcpy(p->types[p->n], c, 2);
            if (strcmp(p->types[p->n], "00") == 0)
                strcpy(p->types[p->n], HESSFIT_FF_WILDCARD);
            if (prev >= 0) {
                p->a[p->n_bonds] = prev;
                p->b[p->n_bonds] = p->n;
                p->mark[p->n_bonds++] = mark ? mark : '-';
            }
            mark = 0;
            prev = p->n++;
            c += 2;
        } else {
            return 0;
        }
    }
    return depth == 0 && p->n > 0;
}

/* Extend the partial embedding map[0..n) (atom or -1) to the whole pattern: 1 if possible. */
static int embed(const hf_mm3_graph *g, const pattern *p, int *map)
{
    int next = -1, via = -1;
    for (int k = 0; k < p->n_bonds && next < 0; k++) {
        if (map[p->a[k]] >= 0 && map[p->b[k]] < 0)
            next = p->b[k], via = p->a[k];
        else if (map[p->b[k]] >= 0 && map[p->a[k]] < 0)
            next = p->a[k], via = p->b[k];
    }
    if (next < 0) {
        for (int k = 0; k < p->n && next < 0; k++)
            if (map[k] < 0)
                next = k;
        if (next < 0)
            return 1;
    }
    const int lo = via >= 0 ? g->start[map[via]] : 0;
    const int hi = via >= 0 ? g->start[map[via] + 1] : g->mol->n_atoms;
    for (int c = lo; c < hi; c++) {
        const int atom = via >= 0 ? g->adj[c] : c;
        int ok = hf_mm3_type_fits(g, p->types[next], atom);
        for (int k = 0; k < p->n && ok; k++)
            ok = map[k] != atom;
        for (int k = 0; k < p->n_bonds && ok; k++) {
            const int other = p->a[k] == next ? p->b[k] : p->b[k] == next ? p->a[k] : -1;
            if (other >= 0 && map[other] >= 0) {
                const double order = hf_mm3_order(g, atom, map[other]);
                ok = order >= 0.0 && mark_fits(p->mark[k], order);
            }
        }
        if (!ok)
            continue;
        map[next] = atom;
        if (embed(g, p, map))
            return 1;
        map[next] = -1;
    }
    return 0;
}

/* A row column: a pattern position (1-based, returned) or 0 for a type label. */
static int column_position(const char *label)
{
    for (const char *c = label; *c; c++)
        if (!isdigit((unsigned char)*c))
            return 0;
    return atoi(label);
}

/* 1 if row's two columns can lie on (x, y) in this order with the pattern embedded. */
static int oriented_embeds(const hf_mm3_graph *g, const pattern *p, const hessfit_fld_row *row, int x, int y)
{
    int map[HF_MM3_PATTERN_MAX];
    const int at[2] = {x, y};
    for (int k = 0; k < p->n; k++)
        map[k] = -1;
    for (int c = 0; c < 2; c++) {
        const int pos = column_position(row->types[c]);
        if (pos == 0) {
            if (!hf_mm3_type_fits(g, row->types[c], at[c]))
                return 0;
        } else {
            if (pos > p->n || (map[pos - 1] >= 0 && map[pos - 1] != at[c]))
                return 0;
            map[pos - 1] = at[c];
            if (!hf_mm3_type_fits(g, p->types[pos - 1], at[c]))
                return 0;
        }
    }
    return embed(g, p, map);
}

hessfit_status hf_mm3_substructure_first(const hf_mm3_graph *g, const hessfit_fld_row *row, int a, int b, int *first)
{
    const hessfit_ff_substructure *s = &g->ff->substructures[row->substructure];
    pattern p;
    if (!pattern_parse(s->pattern, &p))
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s:%d: substructure pattern '%s' (substructure '%s') is not one "
                             "hessfit reads (two-character types, marks - = %% * ., positions, parentheses)",
                             g->ff->path, s->line + 1, s->pattern, s->name);
    const int ab = oriented_embeds(g, &p, row, a, b), ba = oriented_embeds(g, &p, row, b, a);
    if (ab == ba)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "%s:%d: the substructure pattern '%s' %s on bond %d-%d (%s %s): the bond moment's "
                             "direction is undetermined",
                             g->ff->path, row->line, s->pattern, ab ? "lies both ways" : "does not lie",
                             a + 1, b + 1, g->mol->atom_types[a], g->mol->atom_types[b]);
    *first = ab ? a : b;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_mm3_substructure_applies(const hf_mm3_graph *g, int substructure, int *applies)
{
    const hessfit_ff_substructure *s = &g->ff->substructures[substructure];
    int map[HF_MM3_PATTERN_MAX];
    pattern p;
    if (!pattern_parse(s->pattern, &p))
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s:%d: substructure pattern '%s' (substructure '%s') is not one "
                             "hessfit reads (two-character types, marks - = %% * ., positions, parentheses)",
                             g->ff->path, s->line + 1, s->pattern, s->name);
    for (int k = 0; k < p.n; k++)
        map[k] = -1;
    *applies = embed(g, &p, map);
    return HESSFIT_SUCCESS;
}
