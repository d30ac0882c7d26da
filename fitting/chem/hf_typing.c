/*
 * Matching the bonded terms of a topology to force-field parameters (hessfit_typing.h).
 *
 * Rules, first that applies:
 *  1. HESSFIT_MATCH_FF_LINE: the molecule carries the MM program's report (MacroModel .mmo): the term
 *     with the same atoms (either direction; impropers as a set of four atoms) names the .fld line
 *     of its parameter (hessfit_forcefield_param_at_line: a descriptor continuation line such as
 *     mm3.fld 115 stands for the parameter it continues, 114). That line must be a parameter line
 *     of ff of the same kind, and a main-table parameter's types must fit the term's atom types
 *     (exact, equivalence or wildcard): otherwise ff is not the force field the report was made
 *     with, an error.
 *  2. HESSFIT_MATCH_TYPES: a main-table parameter with exactly the atom types, either direction.
 *  3. HESSFIT_MATCH_EQUIVALENCE: the same after replacing some atom types by their force-field
 *     equivalents (an MM3 .fld "PX  P0 P3 P4 P5" lets a P3 atom use PX parameters).
 *  4. HESSFIT_MATCH_WILDCARD: a main-table parameter with wildcard ("*") types.
 *  Substructure parameters (substructure >= 0) name pattern positions, not types: only rule 1
 *  reaches them.
 *
 * Rules 2-4 are one ranking. A candidate is a main-table parameter of the term's kind laid on the
 * term in one of its orientations (both directions; impropers: centre fixed, the three others in
 * any order) such that
 *   - every type fits (exact, equivalent, wildcard);
 *   - every bond mark fits the bond order of the molecule (MM3 .fld, hessfit_ff_param.bond_marks):
 *       '-' fits orders 1, 1.5 (aromatic) and 0 (a bond without order: dative/metal, mol2
 *           "nc"/"du"/"un", the .mmo blank mark);
 *       '=' fits 2 and 1.5;   '%' fits 3;   '.' (MacroModel's zero-order bond) fits 0;
 *       '*' and no mark (0, all other formats) fit any bond.
 *     A bond whose order the molecule does not give (no bond_orders, or a bond the topology
 *     perceived that the file lacks) is not checked: every mark fits it, and the detail says
 *     "bond orders unknown";
 *   - its environment condition (hessfit_ff_param.descriptor) does not fail. MacroModel's documented
 *     meaning (MacroModel Reference Manual, App. D, "optional atom descriptors"): one 4-character
 *     field per main atom, in the parameter's atom order, naming two types that must be attached
 *     to that atom ("C200": a C2; "C2C3": a C2 and a C3, two different atoms; "0000": nothing),
 *     "00" any atom. Implemented exactly: the attached atoms are the atom's topology neighbours
 *     other than the term's own atoms (the manual's "additional" atoms; counting them, 86
 *     rh-enamide terms would get a conditional line where MacroModel reported the plain one), and a
 *     field type fits a neighbour of that type, of a type the force field makes equivalent to it,
 *     or, for an element wildcard "C0" (an element symbol and 0, the manual's substructure
 *     wording), any atom of that element. A condition that holds makes the candidate conditional
 *     and satisfied; one that fails excludes it. A descriptor with continuation lines
 *     ("1C200 0000" + " O200 0000": their meaning is not documented) or of any other form is NOT
 *     evaluated: such a candidate ranks below unconditional ones and the detail says so.
 * Candidates are ordered by (fewest wildcards, fewest equivalence substitutions, condition:
 * satisfied < none < not evaluated, then among satisfied conditions the most attached atoms
 * required: "H1H1" before "H100"). The best ones (equal keys) must agree: when their values are
 * equal, the first in file order is used (MacroModel's choice on the rh-enamide set) and the detail
 * names the others; when their values differ the term is AMBIGUOUS, an error naming the term, its
 * types and the lines, unless a "prefer LINE" pattern (hessfit_typing_options.no_term) names exactly
 * one of them. Nothing else breaks a tie: no file order between different values.
 *
 *  A term nothing matches gets HESSFIT_MATCH_NO_TERM when a user pattern covers it, else the call
 *  fails naming the term's atoms (1-based) and types. When the molecule has a report, a term not
 *  in it is likewise NO_TERM by pattern or an error (never matched by types instead).
 *
 * Impropers are optional by construction: a force field defines out-of-plane terms only for some
 * centres (MM3 sp2 C and N; AMBER's planar groups), so a 3-connected atom without an improper
 * parameter (or absent from the report) gets NO_TERM with a detail saying so, not an error. They
 * are matched only when ff has improper parameters. Improper atoms are stored as the topology
 * orders them (three neighbours ascending, then the centre); parameter types name the centre
 * first in .fld files and third in AMBER frcmod (centre_slot below) and the three others match in
 * any order. A reported improper absent from the topology (MacroModel ignores zero-order metal
 * bonds when it counts the neighbours of an out-of-plane centre) is kept as an extra FF_LINE term
 * when one of its atoms is bonded to the other three. With an OpenMM ForceField XML, an improper
 * gets the atom order OpenMM gives its dihedral (openmm_improper_order below: (a2, a3, centre,
 * a4)), which the fit model and hessfit_ffxml_write use as it is; other reported terms absent from the
 * topology (a bond, angle or torsion) mean the connectivity disagrees with the MM program's and
 * are an error naming the report line.
 */
#include "hessfit_elements.h"
#include "hessfit_typing.h"
#include "hf_lines.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HF_TYPING_MAX_PATTERN 256
/* Tied lines named in one error message. */
#define HF_TYPING_MAX_LISTED 8

const char *hessfit_match_rule_name(hessfit_match_rule rule)
{
    static const char *const names[HESSFIT_NUM_MATCH_RULES] = {"no-term", "ff-line", "types", "equivalence", "wildcard"};
    return (unsigned)rule < HESSFIT_NUM_MATCH_RULES ? names[rule] : "unknown";
}

void hessfit_typed_molecule_free(hessfit_typed_molecule *typed)
{
    if (typed == NULL)
        return;
    free(typed->terms);
    typed->terms = NULL;
    typed->n_terms = 0;
}

static const char *mol_label(const hessfit_molecule *mol)
{
    if (mol->source != NULL && mol->source[0] != '\0')
        return mol->source;
    if (mol->name != NULL && mol->name[0] != '\0')
        return mol->name;
    return "molecule";
}

static const char *ff_label(const hessfit_forcefield *ff)
{
    return ff->path != NULL && ff->path[0] != '\0' ? ff->path : "the force field";
}

static int is_wildcard(const char *t)
{
    return strcmp(t, HESSFIT_FF_WILDCARD) == 0;
}

static const char *atom_type(const hessfit_molecule *mol, int atom)
{
    if (mol->atom_types == NULL || mol->atom_types[atom] == NULL || mol->atom_types[atom][0] == '\0')
        return "?";
    return mol->atom_types[atom];
}

/* Append printf text to buf[size] at *pos (truncating, always terminated). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void append(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    if (*pos >= size - 1)
        return;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *pos, size - *pos, fmt, ap);
    va_end(ap);
    *pos = w > 0 && (size_t)w < size - *pos ? *pos + (size_t)w : size - 1;
}

/* "1-13-20-24" (1-based) and "RH P3 C3 H1" into the buffers. */
static void term_text(const hessfit_molecule *mol, const int *atoms, int n, char *atoms_buf, size_t na, char *types_buf,
                      size_t nt)
{
    size_t pa = 0, pt = 0;
    atoms_buf[0] = types_buf[0] = '\0';
    for (int a = 0; a < n; a++) {
        append(atoms_buf, na, &pa, "%s%d", a ? "-" : "", atoms[a] + 1);
        append(types_buf, nt, &pt, "%s%s", a ? " " : "", atom_type(mol, atoms[a]));
    }
}

/* ---- user patterns: no-term and prefer ------------------------------------------------------- */

typedef struct {
    hessfit_term_kind kind;              /* HESSFIT_NUM_TERM_KINDS for a prefer pattern */
    int n_types;
    char types[4][HESSFIT_FF_TYPE_LEN];  /* centre first for impropers */
    int prefer;                     /* prefer pattern: the parameter index it names; -1 otherwise */
} user_pattern;

/* "prefer LINE": LINE must hold a main-table parameter of ff (a continuation line names its
 * parameter). */
static hessfit_status parse_prefer(const hessfit_forcefield *ff, const char *text, const char *line_text, user_pattern *p)
{
    char *end;
    errno = 0;
    long line = strtol(line_text, &end, 10);
    if (errno != 0 || end == line_text || *end != '\0' || line < 1 || line > 100000000L)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "pattern '%s': '%s' is not a force-field line number", text,
                        line_text);
    int i = hessfit_forcefield_param_at_line(ff, (int)line);
    if (i < 0 || ff->params[i].substructure >= 0 || (int)ff->params[i].kind >= HESSFIT_NUM_TERM_KINDS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "pattern '%s': line %ld of %s holds no main-table bonded parameter (type matching chooses only "
                        "among those)",
                        text, line, ff_label(ff));
    p->kind = HESSFIT_NUM_TERM_KINDS;
    p->n_types = 0;
    p->prefer = i;
    return HESSFIT_SUCCESS;
}

static hessfit_status parse_pattern(const hessfit_forcefield *ff, const char *text, int index, user_pattern *p)
{
    char buf[HF_TYPING_MAX_PATTERN];
    char *tok[6];
    if (text == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "no-term pattern %d is NULL", index + 1);
    if (strlen(text) >= sizeof buf)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "no-term pattern %d is longer than %d characters", index + 1,
                        HF_TYPING_MAX_PATTERN - 1);
    strcpy(buf, text);
    int n = hf_split(buf, tok, 6);
    if (n < 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "no-term pattern %d '%s' is empty", index + 1, text);
    p->prefer = -1;
    if (strcmp(tok[0], "prefer") == 0) {
        if (n != 2)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "pattern '%s': 'prefer' takes one force-field line number",
                            text);
        return parse_prefer(ff, text, tok[1], p);
    }
    int kind = -1;
    for (int k = 0; k < HESSFIT_NUM_TERM_KINDS; k++)
        if (strcmp(tok[0], hessfit_term_kind_name((hessfit_term_kind)k)) == 0)
            kind = k;
    if (kind < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "no-term pattern '%s': kind '%s' is not bond, angle, torsion or improper (or 'prefer LINE')",
                        text, tok[0]);
    p->kind = (hessfit_term_kind)kind;
    p->n_types = hessfit_term_kind_atoms(p->kind);
    if (n - 1 != p->n_types)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "no-term pattern '%s': a %s term needs %d atom types, not %d", text,
                        tok[0], p->n_types, n - 1);
    for (int a = 0; a < p->n_types; a++) {
        if (strlen(tok[a + 1]) >= HESSFIT_FF_TYPE_LEN)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "no-term pattern '%s': type '%s' is longer than %d characters",
                            text, tok[a + 1], HESSFIT_FF_TYPE_LEN - 1);
        strcpy(p->types[a], tok[a + 1]);
    }
    return HESSFIT_SUCCESS;
}

static int pattern_type_fits(const char *pattern, const char *type)
{
    return is_wildcard(pattern) || strcmp(pattern, type) == 0;
}

static const int improper_perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* types: the term's atom types in its atom order (impropers: three neighbours then the centre). */
static int pattern_covers(const user_pattern *p, hessfit_term_kind kind, const char *const *types)
{
    if (p->kind != kind)
        return 0;
    if (kind == HESSFIT_TERM_IMPROPER) {
        if (!pattern_type_fits(p->types[0], types[3]))
            return 0;
        for (int q = 0; q < 6; q++) {
            int ok = 1;
            for (int a = 0; a < 3 && ok; a++)
                ok = pattern_type_fits(p->types[a + 1], types[improper_perms[q][a]]);
            if (ok)
                return 1;
        }
        return 0;
    }
    int fwd = 1, rev = 1;
    for (int a = 0; a < p->n_types; a++) {
        fwd = fwd && pattern_type_fits(p->types[a], types[a]);
        rev = rev && pattern_type_fits(p->types[a], types[p->n_types - 1 - a]);
    }
    return fwd || rev;
}

/* ---- the MM program's report ----------------------------------------------------------------- */

/* A term's atoms in a canonical order, so that both directions (and, for impropers, any order of
 * the four atoms) give the same key. */
static void canonical_key(hessfit_term_kind kind, const int *atoms, int *key)
{
    key[0] = key[1] = key[2] = key[3] = -1;
    switch (kind) {
    case HESSFIT_TERM_BOND:
        key[0] = atoms[0] < atoms[1] ? atoms[0] : atoms[1];
        key[1] = atoms[0] < atoms[1] ? atoms[1] : atoms[0];
        break;
    case HESSFIT_TERM_ANGLE:
        key[0] = atoms[0] < atoms[2] ? atoms[0] : atoms[2];
        key[1] = atoms[1];
        key[2] = atoms[0] < atoms[2] ? atoms[2] : atoms[0];
        break;
    case HESSFIT_TERM_TORSION:
        if (atoms[1] < atoms[2] || (atoms[1] == atoms[2] && atoms[0] <= atoms[3]))
            memcpy(key, atoms, 4 * sizeof(int));
        else
            for (int a = 0; a < 4; a++)
                key[a] = atoms[3 - a];
        break;
    default: /* improper: sorted */
        memcpy(key, atoms, 4 * sizeof(int));
        for (int a = 1; a < 4; a++)
            for (int b = a; b > 0 && key[b - 1] > key[b]; b--) {
                int t = key[b];
                key[b] = key[b - 1];
                key[b - 1] = t;
            }
        break;
    }
}

typedef struct {
    int kind;
    int key[4];
    int index; /* into mol->reported_terms */
} report_entry;

static int cmp_report_entry(const void *a, const void *b)
{
    const report_entry *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    for (int i = 0; i < 4; i++)
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i] ? -1 : 1;
    return 0;
}

/* The report sorted by (kind, key), every entry checked; NULL + error on a bad report. */
static hessfit_status report_index(const hessfit_molecule *mol, report_entry **out)
{
    *out = NULL;
    if (mol->reported_terms == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: %d reported terms but no array", mol_label(mol),
                        mol->n_reported_terms);
    report_entry *idx = malloc((size_t)mol->n_reported_terms * sizeof *idx);
    if (idx == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: index of %d reported terms", mol_label(mol),
                        mol->n_reported_terms);
    for (int r = 0; r < mol->n_reported_terms; r++) {
        const hessfit_reported_term *t = &mol->reported_terms[r];
        if ((unsigned)t->kind >= HESSFIT_NUM_TERM_KINDS) {
            free(idx);
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: reported term %d (line %d) has kind %d", mol_label(mol),
                            r + 1, t->line, (int)t->kind);
        }
        const int n = hessfit_term_kind_atoms(t->kind);
        for (int a = 0; a < n; a++) {
            int bad = t->atoms[a] < 0 || t->atoms[a] >= mol->n_atoms;
            for (int b = 0; b < a && !bad; b++)
                bad = t->atoms[b] == t->atoms[a];
            if (bad) {
                free(idx);
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                "%s: reported %s at line %d has atom %d (number %d): out of 1..%d or repeated",
                                mol_label(mol), hessfit_term_kind_name(t->kind), t->line, a + 1, t->atoms[a] + 1,
                                mol->n_atoms);
            }
        }
        idx[r].kind = (int)t->kind;
        idx[r].index = r;
        canonical_key(t->kind, t->atoms, idx[r].key);
    }
    qsort(idx, (size_t)mol->n_reported_terms, sizeof *idx, cmp_report_entry);
    for (int r = 1; r < mol->n_reported_terms; r++)
        if (cmp_report_entry(&idx[r - 1], &idx[r]) == 0) {
            const hessfit_reported_term *a = &mol->reported_terms[idx[r - 1].index], *b = &mol->reported_terms[idx[r].index];
            hessfit_status st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: the %s at lines %d and %d is reported twice",
                                    mol_label(mol), hessfit_term_kind_name(a->kind), a->line, b->line);
            free(idx);
            return st;
        }
    *out = idx;
    return HESSFIT_SUCCESS;
}

static int report_find(const report_entry *idx, int n, hessfit_term_kind kind, const int *atoms)
{
    report_entry key;
    key.kind = (int)kind;
    key.index = -1;
    canonical_key(kind, atoms, key.key);
    const report_entry *hit = bsearch(&key, idx, (size_t)n, sizeof *idx, cmp_report_entry);
    return hit != NULL ? (int)(hit - idx) : -1;
}

/* ---- the matching context -------------------------------------------------------------------- */

typedef struct {
    const hessfit_molecule *mol;
    const hessfit_topology *topo;
    const hessfit_forcefield *ff;
    const user_pattern *patterns;
    const char *const *pattern_text;
    int n_patterns;
    /* the topology's bonds as adjacency lists, with the molecule's bond orders */
    int *adj_start;        /* n_atoms + 1 offsets into adj */
    int *adj;              /* neighbours */
    double *adj_order;     /* order of each listed bond; -1 when the molecule does not give it */
    /* scratch: the candidates of one term */
    int *cand;             /* parameter indices */
    struct match_key *cand_key;
    report_entry *report;  /* NULL without a report */
    unsigned char *report_used;
    int n_unmatched, n_ambiguous;
    char first_unmatched[HESSFIT_ERROR_MESSAGE_SIZE];
    char first_ambiguous[HESSFIT_ERROR_MESSAGE_SIZE];
} typing_context;

typedef struct {
    int i, j; /* i < j */
    double order;
} order_entry;

static int cmp_order_entry(const void *a, const void *b)
{
    const order_entry *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

/* Adjacency lists of the topology bonds, each bond with the order the molecule gives it (-1 when
 * mol has no bond orders or not this bond). */
static hessfit_status build_graph(typing_context *c)
{
    const hessfit_molecule *mol = c->mol;
    const hessfit_topology *topo = c->topo;
    order_entry *orders = NULL;
    int n_orders = 0;
    const size_t n_atoms = (size_t)topo->n_atoms, n_bonds = (size_t)topo->n_bonds;
    c->adj_start = calloc(n_atoms + 1, sizeof *c->adj_start);
    const size_t n_entries = n_bonds > 0 ? 2 * n_bonds : 1;
    c->adj = malloc(n_entries * sizeof *c->adj);
    c->adj_order = malloc(n_entries * sizeof *c->adj_order);
    if (c->adj_start == NULL || c->adj == NULL || c->adj_order == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: adjacency of %d bonds", mol_label(mol), topo->n_bonds);
    if (mol->bond_orders != NULL && mol->n_bonds > 0) {
        if (mol->bonds == NULL)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %d bond orders but no bonds", mol_label(mol), mol->n_bonds);
        orders = malloc((size_t)mol->n_bonds * sizeof *orders);
        if (orders == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: %d bond orders", mol_label(mol), mol->n_bonds);
        for (int b = 0; b < mol->n_bonds; b++) {
            int i = mol->bonds[2 * b], j = mol->bonds[2 * b + 1];
            if (i < 0 || j < 0 || i >= mol->n_atoms || j >= mol->n_atoms) {
                free(orders);
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: bond %d names atom %d, outside 1..%d", mol_label(mol),
                                b + 1, (i < 0 || i >= mol->n_atoms ? i : j) + 1, mol->n_atoms);
            }
            orders[n_orders].i = i < j ? i : j;
            orders[n_orders].j = i < j ? j : i;
            orders[n_orders++].order = isfinite(mol->bond_orders[b]) ? mol->bond_orders[b] : -1.0;
        }
        qsort(orders, (size_t)n_orders, sizeof *orders, cmp_order_entry);
    }
    for (size_t b = 0; b < n_bonds; b++) {
        c->adj_start[topo->bonds[2 * b] + 1]++;
        c->adj_start[topo->bonds[2 * b + 1] + 1]++;
    }
    for (size_t a = 0; a < n_atoms; a++)
        c->adj_start[a + 1] += c->adj_start[a];
    int *fill = calloc(n_atoms ? n_atoms : 1, sizeof *fill);
    if (fill == NULL) {
        free(orders);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: adjacency of %d atoms", mol_label(mol), topo->n_atoms);
    }
    for (size_t b = 0; b < n_bonds; b++) {
        int i = topo->bonds[2 * b], j = topo->bonds[2 * b + 1];
        order_entry key = {i < j ? i : j, i < j ? j : i, 0.0};
        const order_entry *hit = orders != NULL ? bsearch(&key, orders, (size_t)n_orders, sizeof *orders,
                                                          cmp_order_entry)
                                                : NULL;
        double order = hit != NULL ? hit->order : -1.0;
        int pi = c->adj_start[i] + fill[i]++, pj = c->adj_start[j] + fill[j]++;
        c->adj[pi] = j;
        c->adj_order[pi] = order;
        c->adj[pj] = i;
        c->adj_order[pj] = order;
    }
    free(fill);
    free(orders);
    return HESSFIT_SUCCESS;
}

/* Order of bond a-b (-1 unknown or not bonded). */
static double bond_order(const typing_context *c, int a, int b)
{
    for (int k = c->adj_start[a]; k < c->adj_start[a + 1]; k++)
        if (c->adj[k] == b)
            return c->adj_order[k];
    return -1.0;
}

/* ---- candidates: types, bond marks, environment conditions ------------------------------------ */

/* Where a parameter's improper types name the centre. */
static int centre_slot(const hessfit_forcefield *ff)
{
    return ff->format == HESSFIT_FF_FRCMOD ? 2 : 0;
}

/* 1 if the force field lets an atom of type `type` use parameters written for `param_type`. */
static int equivalent(const hessfit_forcefield *ff, const char *type, const char *param_type)
{
    for (int e = 0; e < ff->n_equivalences; e++)
        if (strcmp(ff->equivalences[e].type, type) == 0 && strcmp(ff->equivalences[e].equivalent, param_type) == 0)
            return 1;
    return 0;
}

typedef enum { COND_HOLDS = 0, COND_NONE = 1, COND_NOT_EVALUATED = 2, COND_FAILS = 3 } condition;

/* A candidate's rank, smaller first (see the top of the file). */
typedef struct match_key {
    int wildcards;
    int substitutions;
    int condition; /* COND_HOLDS, COND_NONE or COND_NOT_EVALUATED */
    int required;  /* attached atoms a holding condition requires */
} match_key;

static int key_less(match_key a, match_key b)
{
    if (a.wildcards != b.wildcards)
        return a.wildcards < b.wildcards;
    if (a.substitutions != b.substitutions)
        return a.substitutions < b.substitutions;
    if (a.condition != b.condition)
        return a.condition < b.condition;
    return a.required > b.required;
}

static int key_equal(match_key a, match_key b)
{
    return !key_less(a, b) && !key_less(b, a);
}

/* One parameter type against one atom type: 0 no, 1 yes (key updated). */
static int type_fits(const hessfit_forcefield *ff, const char *param_type, const char *type, match_key *k)
{
    if (is_wildcard(param_type)) {
        k->wildcards++;
        return 1;
    }
    if (strcmp(param_type, type) == 0)
        return 1;
    if (equivalent(ff, type, param_type)) {
        k->substitutions++;
        return 1;
    }
    return 0;
}

/* The ways a parameter can lie on a term: maps[o][position in the parameter] = slot of the term's
 * atoms (impropers: three neighbours then the centre). Returns the number of maps. */
static int orientations(const hessfit_forcefield *ff, hessfit_term_kind kind, int maps[6][4])
{
    const int n = hessfit_term_kind_atoms(kind);
    if (kind == HESSFIT_TERM_IMPROPER) {
        const int c = centre_slot(ff);
        int others[3], m = 0;
        for (int a = 0; a < 4; a++)
            if (a != c)
                others[m++] = a;
        for (int q = 0; q < 6; q++) {
            maps[q][c] = 3;
            for (int a = 0; a < 3; a++)
                maps[q][others[a]] = improper_perms[q][a];
        }
        return 6;
    }
    for (int a = 0; a < n; a++) {
        maps[0][a] = a;
        maps[1][a] = n - 1 - a;
    }
    return 2;
}

/* 1 if the mark between two parameter types fits a bond of that order (top of the file). */
static int mark_fits(char mark, double order, int *unchecked)
{
    if (mark == 0 || mark == '*')
        return 1;
    if (order < 0.0) {
        *unchecked = 1;
        return 1;
    }
    const int zero = fabs(order) < 0.1, single = fabs(order - 1.0) < 0.1, aromatic = fabs(order - 1.5) < 0.1,
              dbl = fabs(order - 2.0) < 0.1, triple = fabs(order - 3.0) < 0.1;
    switch (mark) {
    case '-': return single || aromatic || zero;
    case '=': return dbl || aromatic;
    case '%': return triple;
    case '.': return zero;
    default: return 0; /* hessfit_fld_read writes no other mark */
    }
}

/* 1 if an attached atom fits a descriptor type: the same type, a type equivalent to it, or for an
 * element wildcard ("C0": an element symbol of one letter and 0) any atom of that element. */
static int attached_fits(const typing_context *c, const char *label, int atom)
{
    const char *type = atom_type(c->mol, atom);
    if (strcmp(label, type) == 0 || equivalent(c->ff, type, label))
        return 1;
    if (label[1] == '0' && label[2] == '\0' && isupper((unsigned char)label[0]) && c->mol->atomic_numbers != NULL) {
        const char symbol[2] = {label[0], '\0'};
        const int z = hessfit_element_atomic_number(symbol);
        return z > 0 && c->mol->atomic_numbers[atom] == z;
    }
    return 0;
}

static int is_term_atom(int atom, const int *term_atoms, int n_term)
{
    for (int t = 0; t < n_term; t++)
        if (term_atoms[t] == atom)
            return 1;
    return 0;
}

/* 1 if `atom` bears, among its neighbours other than the term's atoms, n_labels (1 or 2) distinct
 * atoms fitting the labels. */
static int bears(const typing_context *c, int atom, const int *term_atoms, int n_term, char labels[2][3], int n_labels)
{
    for (int k = c->adj_start[atom]; k < c->adj_start[atom + 1]; k++) {
        const int first = c->adj[k];
        if (is_term_atom(first, term_atoms, n_term) || !attached_fits(c, labels[0], first))
            continue;
        if (n_labels == 1)
            return 1;
        for (int m = c->adj_start[atom]; m < c->adj_start[atom + 1]; m++) {
            const int second = c->adj[m];
            if (second != first && !is_term_atom(second, term_atoms, n_term) && attached_fits(c, labels[1], second))
                return 1;
        }
    }
    return 0;
}

/* The condition p's descriptor sets on the term laid as map; *required: the attached atoms it
 * asks for. Forms other than one 4-character field per atom are not evaluated. */
static condition descriptor_condition(const typing_context *c, const hessfit_ff_param *p, const int *atoms, int n,
                                      const int *map, int *required)
{
    char buf[sizeof p->descriptor + 1];
    char *tok[5];
    *required = 0;
    memcpy(buf, p->descriptor, sizeof p->descriptor);
    buf[sizeof p->descriptor] = '\0';
    if (hf_is_blank(buf))
        return COND_NONE;
    if (hf_split(buf, tok, 5) != n)
        return COND_NOT_EVALUATED;
    for (int k = 0; k < n; k++) {
        if (strlen(tok[k]) != 4)
            return COND_NOT_EVALUATED; /* e.g. "1C200": a count of continuation lines */
        for (int ch = 0; ch < 4; ch++)
            if (!isalnum((unsigned char)tok[k][ch]))
                return COND_NOT_EVALUATED;
    }
    for (int k = 0; k < n; k++) {
        char labels[2][3];
        int n_labels = 0;
        for (int h = 0; h < 2; h++)
            if (tok[k][2 * h] != '0' || tok[k][2 * h + 1] != '0') {
                labels[n_labels][0] = tok[k][2 * h];
                labels[n_labels][1] = tok[k][2 * h + 1];
                labels[n_labels++][2] = '\0';
            }
        if (n_labels > 0 && !bears(c, atoms[map[k]], atoms, n, labels, n_labels))
            return COND_FAILS;
        *required += n_labels;
    }
    return *required > 0 ? COND_HOLDS : COND_NONE;
}

/* The best key of parameter p on the term (atoms, types in the term's order); 0 if it is no
 * candidate. *unchecked is set when a bond mark met a bond of unknown order. */
static int candidate_key(const typing_context *c, const hessfit_ff_param *p, hessfit_term_kind kind, const int *atoms,
                         const char *const *types, match_key *best, int *unchecked)
{
    const int n = hessfit_term_kind_atoms(kind);
    int maps[6][4], found = 0;
    if ((int)p->kind != (int)kind || p->n_types != n)
        return 0;
    const int n_maps = orientations(c->ff, kind, maps);
    for (int o = 0; o < n_maps; o++) {
        match_key k = {0, 0, COND_NONE, 0};
        int ok = 1, unknown = 0;
        for (int a = 0; a < n && ok; a++)
            ok = type_fits(c->ff, p->types[a], types[maps[o][a]], &k);
        if (kind != HESSFIT_TERM_IMPROPER)
            for (int a = 0; a + 1 < n && ok; a++)
                ok = mark_fits(p->bond_marks[a], bond_order(c, atoms[maps[o][a]], atoms[maps[o][a + 1]]), &unknown);
        if (!ok)
            continue;
        int required;
        condition cond = descriptor_condition(c, p, atoms, n, maps[o], &required);
        if (cond == COND_FAILS)
            continue;
        k.condition = (int)cond;
        k.required = cond == COND_HOLDS ? required : 0;
        *unchecked |= unknown;
        if (!found || key_less(k, *best)) {
            *best = k;
            found = 1;
        }
    }
    return found;
}

/* 1 if p's types fit the term in some orientation (the check of a reported FF line). */
static int types_fit(const hessfit_forcefield *ff, const hessfit_ff_param *p, hessfit_term_kind kind, const char *const *types)
{
    const int n = hessfit_term_kind_atoms(kind);
    int maps[6][4];
    if ((int)p->kind != (int)kind || p->n_types != n)
        return 0;
    const int n_maps = orientations(ff, kind, maps);
    for (int o = 0; o < n_maps; o++) {
        match_key k = {0, 0, COND_NONE, 0};
        int ok = 1;
        for (int a = 0; a < n && ok; a++)
            ok = type_fits(ff, p->types[a], types[maps[o][a]], &k);
        if (ok)
            return 1;
    }
    return 0;
}

static void param_types_text(const hessfit_ff_param *p, char *buf, size_t size)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (int a = 0; a < p->n_types && a < 4; a++)
        append(buf, size, &pos, "%s%s", a ? " " : "", p->types[a]);
}

static int same_values(const hessfit_ff_param *a, const hessfit_ff_param *b)
{
    if (a->n_values != b->n_values || a->improper_form != b->improper_form)
        return 0;
    for (int v = 0; v < a->n_values && v < HESSFIT_FF_MAX_VALUES; v++)
        if (a->values[v] != b->values[v])
            return 0;
    return 1;
}

/* "952/978" (at most HF_TYPING_MAX_LISTED lines, then "/..."). */
static void lines_text(const hessfit_forcefield *ff, const int *idx, int n, char *buf, size_t size)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (int t = 0; t < n; t++) {
        if (t == HF_TYPING_MAX_LISTED) {
            append(buf, size, &pos, "/... (%d lines)", n);
            break;
        }
        append(buf, size, &pos, "%s%d", t ? "/" : "", ff->params[idx[t]].line);
    }
}

static void note_ambiguous(typing_context *c, hessfit_term_kind kind, const int *atoms, const int *top, int n_top,
                           const char *how, const char *why)
{
    if (c->n_ambiguous++ > 0)
        return;
    char at[64], ty[64], lines[128];
    term_text(c->mol, atoms, hessfit_term_kind_atoms(kind), at, sizeof at, ty, sizeof ty);
    lines_text(c->ff, top, n_top, lines, sizeof lines);
    snprintf(c->first_ambiguous, sizeof c->first_ambiguous,
             "%s: %s %s (types %s) is ambiguous in %s: lines %s (%s) are equally good candidates with different "
             "values%s; choose one with a pattern such as 'prefer %d'",
             mol_label(c->mol), hessfit_term_kind_name(kind), at, ty, ff_label(c->ff), lines, how, why,
             c->ff->params[top[0]].line);
}

/* Rules 2-4 for one term: 1 matched (out filled), 0 no candidate, -1 ambiguous (noted). */
static int match_by_types(typing_context *c, hessfit_term_kind kind, const int *atoms, const char *const *types,
                          hessfit_typed_term *out)
{
    const hessfit_forcefield *ff = c->ff;
    int n_cand = 0, unchecked = 0;
    match_key best = {0, 0, COND_NONE, 0};
    for (int i = 0; i < ff->n_params; i++) {
        match_key k;
        if (ff->params[i].substructure >= 0 || !candidate_key(c, &ff->params[i], kind, atoms, types, &k, &unchecked))
            continue;
        if (n_cand == 0 || key_less(k, best))
            best = k;
        c->cand[n_cand] = i;
        c->cand_key[n_cand++] = k;
    }
    if (n_cand == 0)
        return 0;
    /* the best candidates moved to the front of cand, in file order (insertion by line); the writes
     * reach only positions already read (n_top <= k), cand_key is not moved */
    int n_top = 0, n_below = 0, below = -1;
    for (int k = 0; k < n_cand; k++) {
        if (key_equal(c->cand_key[k], best)) {
            int i = c->cand[k], t = n_top++;
            while (t > 0 && ff->params[c->cand[t - 1]].line > ff->params[i].line) {
                c->cand[t] = c->cand[t - 1];
                t--;
            }
            c->cand[t] = i;
        } else if (c->cand_key[k].condition == COND_NOT_EVALUATED && best.condition != COND_NOT_EVALUATED &&
                   c->cand_key[k].wildcards == best.wildcards && c->cand_key[k].substitutions == best.substitutions) {
            /* ranked below the choice only because its condition was not evaluated */
            if (n_below++ == 0)
                below = c->cand[k];
        }
    }
    int *top = c->cand, chosen = top[0], by_pattern = -1, equal = 1;
    for (int t = 1; t < n_top; t++)
        equal = equal && same_values(&ff->params[top[t]], &ff->params[top[0]]);

    char ptypes[4 * HESSFIT_FF_TYPE_LEN + 4], lines[128], how[64];
    param_types_text(&ff->params[top[0]], ptypes, sizeof ptypes);
    snprintf(how, sizeof how, "%s %s", best.wildcards ? "wildcard" : best.substitutions ? "equivalence" : "types",
             ptypes);
    lines_text(ff, top, n_top, lines, sizeof lines);
    if (!equal) {
        int n_preferred = 0; /* distinct tied parameters some prefer pattern names */
        for (int t = 0; t < n_top; t++) {
            int named_by = -1;
            for (int p = 0; p < c->n_patterns && named_by < 0; p++)
                if (c->patterns[p].prefer == top[t])
                    named_by = p;
            if (named_by >= 0 && n_preferred++ == 0) {
                chosen = top[t];
                by_pattern = named_by;
            }
        }
        if (n_preferred != 1) {
            note_ambiguous(c, kind, atoms, top, n_top, how,
                           n_preferred > 1 ? " and prefer patterns name more than one of them" : "");
            return -1;
        }
    }

    const hessfit_ff_param *p = &ff->params[chosen];
    char *detail = out->detail;
    size_t pos = 0;
    param_types_text(p, ptypes, sizeof ptypes);
    if (best.wildcards > 0) {
        out->rule = HESSFIT_MATCH_WILDCARD;
        append(detail, sizeof out->detail, &pos, "wildcard %s%s", ptypes, best.substitutions ? " with equivalences" : "");
    } else if (best.substitutions > 0) {
        out->rule = HESSFIT_MATCH_EQUIVALENCE;
        append(detail, sizeof out->detail, &pos, "equivalence %s", ptypes);
    } else {
        out->rule = HESSFIT_MATCH_TYPES;
        append(detail, sizeof out->detail, &pos, "types %s", ptypes);
    }
    if (by_pattern >= 0)
        append(detail, sizeof out->detail, &pos, "; %s differ: pattern %d prefers %d", lines, by_pattern + 1, p->line);
    if (best.condition == COND_HOLDS)
        append(detail, sizeof out->detail, &pos, "; %s holds", p->descriptor);
    else if (best.condition == COND_NOT_EVALUATED)
        append(detail, sizeof out->detail, &pos, "; condition %s NOT evaluated", p->descriptor);
    if (n_top > 1 && by_pattern < 0)
        append(detail, sizeof out->detail, &pos, "; first of %s (same values)", lines);
    if (n_below > 0)
        append(detail, sizeof out->detail, &pos, "; %d%s ranks below: %s not evaluated", ff->params[below].line,
               n_below > 1 ? " etc." : "", ff->params[below].descriptor);
    if (unchecked)
        append(detail, sizeof out->detail, &pos, "; bond orders unknown");
    out->param = chosen;
    return 1;
}

/* ---- the MM program's report: the term's FF line ------------------------------------------------ */

static int covered_by_pattern(const typing_context *c, hessfit_term_kind kind, const char *const *types, hessfit_typed_term *t)
{
    for (int p = 0; p < c->n_patterns; p++)
        if (pattern_covers(&c->patterns[p], kind, types)) {
            t->param = -1;
            t->rule = HESSFIT_MATCH_NO_TERM;
            snprintf(t->detail, sizeof t->detail, "no-term pattern %d '%s'", p + 1, c->pattern_text[p]);
            return 1;
        }
    return 0;
}

/* Rule 1 for a term found in the report: the parameter on that line, checked. */
static hessfit_status match_by_line(typing_context *c, const hessfit_reported_term *r, hessfit_term_kind kind, const int *atoms,
                               const char *const *types, hessfit_typed_term *t)
{
    char at[64], ty[64];
    const hessfit_forcefield *ff = c->ff;
    term_text(c->mol, atoms, hessfit_term_kind_atoms(kind), at, sizeof at, ty, sizeof ty);
    int p = hessfit_forcefield_param_at_line(ff, r->ff_line);
    if (p < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "%s: %s %s (types %s) at report line %d uses force-field line %d, which is not a parameter "
                        "line of %s",
                        mol_label(c->mol), hessfit_term_kind_name(kind), at, ty, r->line, r->ff_line, ff_label(ff));
    const hessfit_ff_param *param = &ff->params[p];
    if ((int)param->kind != (int)kind)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "%s: %s %s (types %s) at report line %d uses force-field line %d of %s, a parameter of kind %s",
                        mol_label(c->mol), hessfit_term_kind_name(kind), at, ty, r->line, r->ff_line, ff_label(ff),
                        hessfit_param_kind_name(param->kind));
    if (param->substructure < 0 && c->mol->atom_types != NULL && !types_fit(ff, param, kind, types)) {
        char pt[4 * HESSFIT_FF_TYPE_LEN + 4];
        param_types_text(param, pt, sizeof pt);
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "%s: %s %s (types %s) at report line %d uses force-field line %d of %s, whose types %s do "
                        "not fit: is that the force field the report was made with?",
                        mol_label(c->mol), hessfit_term_kind_name(kind), at, ty, r->line, r->ff_line, ff_label(ff), pt);
    }
    t->param = p;
    t->rule = HESSFIT_MATCH_FF_LINE;
    if (param->line != r->ff_line) /* a continuation line of the parameter's entry */
        snprintf(t->detail, sizeof t->detail, "ff line %d (continued on %d) via mmo line %d%s%s%s", param->line,
                 r->ff_line, r->line, r->source[0] ? " (" : "", r->source, r->source[0] ? ")" : "");
    else
        snprintf(t->detail, sizeof t->detail, "ff line %d via mmo line %d%s%s%s", r->ff_line, r->line,
                 r->source[0] ? " (" : "", r->source, r->source[0] ? ")" : "");
    return HESSFIT_SUCCESS;
}

static void note_unmatched(typing_context *c, hessfit_term_kind kind, const int *atoms, const char *why)
{
    if (c->n_unmatched++ > 0)
        return;
    char at[64], ty[64];
    term_text(c->mol, atoms, hessfit_term_kind_atoms(kind), at, sizeof at, ty, sizeof ty);
    snprintf(c->first_unmatched, sizeof c->first_unmatched, "%s: %s %s (types %s) %s; if it has no parameter, say so "
             "with a no-term pattern such as '%s %s'",
             mol_label(c->mol), hessfit_term_kind_name(kind), at, ty, why, hessfit_term_kind_name(kind), ty);
}

/* One topology term (atoms in topology order) -> t. Unmatched and ambiguous terms are counted,
 * not fatal here. */
static hessfit_status match_term(typing_context *c, hessfit_term_kind kind, const int *atoms, hessfit_typed_term *t)
{
    const int n = hessfit_term_kind_atoms(kind);
    const char *types[4] = {"", "", "", ""};
    char ff_words[300];
    for (int a = 0; a < n; a++)
        types[a] = atom_type(c->mol, atoms[a]);
    t->kind = kind;
    for (int a = 0; a < 4; a++)
        t->atoms[a] = a < n ? atoms[a] : -1;
    t->param = -1;
    t->rule = HESSFIT_MATCH_NO_TERM;
    t->detail[0] = '\0';

    if (c->report != NULL) {
        int hit = report_find(c->report, c->mol->n_reported_terms, kind, atoms);
        if (hit >= 0) {
            const hessfit_reported_term *r = &c->mol->reported_terms[c->report[hit].index];
            c->report_used[c->report[hit].index] = 1;
            if (r->ff_line > 0)
                return match_by_line(c, r, kind, atoms, types, t);
        }
        if (covered_by_pattern(c, kind, types, t))
            return HESSFIT_SUCCESS;
        if (kind == HESSFIT_TERM_IMPROPER) {
            snprintf(t->detail, sizeof t->detail, "optional improper: none in the mmo report");
            return HESSFIT_SUCCESS;
        }
        note_unmatched(c, kind, atoms,
                       hit >= 0 ? "is in the MM program's report without a force-field line"
                                : "is not in the MM program's report (the program used no parameter for it)");
        return HESSFIT_SUCCESS;
    }

    int matched = match_by_types(c, kind, atoms, types, t);
    if (matched != 0) /* matched, or ambiguous (noted) */
        return HESSFIT_SUCCESS;
    if (covered_by_pattern(c, kind, types, t))
        return HESSFIT_SUCCESS;
    if (kind == HESSFIT_TERM_IMPROPER) {
        snprintf(t->detail, sizeof t->detail, "optional improper: no parameter for centre type %s", types[3]);
        return HESSFIT_SUCCESS;
    }
    snprintf(ff_words, sizeof ff_words, "matches no parameter of %s (exact, equivalent or wildcard types, bond marks "
             "and conditions)", ff_label(c->ff));
    note_unmatched(c, kind, atoms, ff_words);
    return HESSFIT_SUCCESS;
}

/* 1 if the topology has bond a-b (bonds sorted, i < j). */
static int topo_bonded(const hessfit_topology *topo, int a, int b)
{
    int key[2] = {a < b ? a : b, a < b ? b : a};
    int lo = 0, hi = topo->n_bonds - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const int *v = topo->bonds + 2 * mid;
        int d = v[0] != key[0] ? (v[0] < key[0] ? -1 : 1) : (v[1] != key[1] ? (v[1] < key[1] ? -1 : 1) : 0);
        if (d == 0)
            return 1;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

static hessfit_status check_topology(const hessfit_molecule *mol, const hessfit_topology *topo)
{
    const struct {
        const char *what;
        int n, width;
        const int *v;
    } lists[] = {{"bond", topo->n_bonds, 2, topo->bonds},
                 {"angle", topo->n_angles, 3, topo->angles},
                 {"torsion", topo->n_torsions, 4, topo->torsions},
                 {"improper", topo->n_impropers, 4, topo->impropers}};
    if (topo->n_atoms != mol->n_atoms)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: topology of %d atoms for a molecule of %d", mol_label(mol),
                        topo->n_atoms, mol->n_atoms);
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        if (lists[l].n < 0 || (lists[l].n > 0 && lists[l].v == NULL))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: topology has %d %ss and %s array", mol_label(mol),
                            lists[l].n, lists[l].what, lists[l].v == NULL ? "no" : "an");
        for (long i = 0; i < (long)lists[l].n * lists[l].width; i++)
            if (lists[l].v[i] < 0 || lists[l].v[i] >= mol->n_atoms)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: topology %s %ld names atom %d, outside 1..%d",
                                mol_label(mol), lists[l].what, i / lists[l].width + 1, lists[l].v[i] + 1,
                                mol->n_atoms);
    }
    return HESSFIT_SUCCESS;
}

/* A reported term the topology lacks: an improper whose centre (one atom bonded to the other three)
 * is found becomes an extra term; anything else is an error. */
static hessfit_status reported_extra(typing_context *c, const hessfit_reported_term *r, hessfit_typed_term *t, int *added)
{
    char at[64], ty[64];
    const int n = hessfit_term_kind_atoms(r->kind);
    *added = 0;
    term_text(c->mol, r->atoms, n, at, sizeof at, ty, sizeof ty);
    if (r->kind == HESSFIT_TERM_IMPROPER) {
        for (int centre = 0; centre < 4; centre++) {
            int ok = 1, m = 0, others[3];
            for (int a = 0; a < 4 && ok; a++)
                if (a != centre) {
                    ok = topo_bonded(c->topo, r->atoms[centre], r->atoms[a]);
                    others[m++] = r->atoms[a];
                }
            if (!ok)
                continue;
            int atoms[4];
            for (int a = 0; a < 3; a++) /* three neighbours ascending, then the centre */
                atoms[a] = others[a];
            for (int a = 1; a < 3; a++)
                for (int b = a; b > 0 && atoms[b - 1] > atoms[b]; b--) {
                    int x = atoms[b];
                    atoms[b] = atoms[b - 1];
                    atoms[b - 1] = x;
                }
            atoms[3] = r->atoms[centre];
            const char *types[4];
            for (int a = 0; a < 4; a++)
                types[a] = atom_type(c->mol, atoms[a]);
            t->kind = HESSFIT_TERM_IMPROPER;
            memcpy(t->atoms, atoms, sizeof atoms);
            if (r->ff_line <= 0)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: improper %s (types %s) at report line %d has no "
                                "force-field line", mol_label(c->mol), at, ty, r->line);
            hessfit_status st = match_by_line(c, r, HESSFIT_TERM_IMPROPER, atoms, types, t);
            if (st != HESSFIT_SUCCESS)
                return st;
            size_t len = strlen(t->detail);
            snprintf(t->detail + len, sizeof t->detail - len, "; centre not 3-connected in topology");
            *added = 1;
            return HESSFIT_SUCCESS;
        }
    }
    return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                    "%s: the %s %s (types %s) at report line %d is not in the topology: the connectivity differs "
                    "from the MM program's",
                    mol_label(c->mol), hessfit_term_kind_name(r->kind), at, ty, r->line);
}

/* An improper matched to an OpenMM ForceField XML parameter, in the atom order OpenMM gives its
 * dihedral (openmm/app/forcefield.py, _matchImproper, for a one-residue molecule whose template
 * lists the atoms in the molecule's order): the topology's (n1, n2, n3, c), n1 < n2 < n3, is laid
 * on the parameter's (centre, t2, t3, t4) by the first permutation of (n1, n2, n3) whose types fit
 * (t2, t3, t4) -> (a2, a3, a4); then, the parameter's PeriodicTorsionForce ordering (its label):
 *   "amber"   without wildcards: a2 <-> a4 where their types are equal and a2 > a4, a3 <-> a4
 *             likewise, a2 <-> a3 likewise; with a wildcard: the same on equal elements, and a2 <->
 *             a3 whenever a2 > a3; the dihedral (a2, a3, c, a4);
 *   "default" a2 <-> a3 when their elements are equal and a2 > a3, or else when a2 is not a carbon
 *             and a3 is one or is heavier (standard atomic weights); the dihedral (a2, a3, c, a4). */
static void openmm_improper_order(const hessfit_molecule *mol, const hessfit_ff_param *p, int atoms[4])
{
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const int c = atoms[3], *z = mol->atomic_numbers;
    int a[3] = {-1, -1, -1}, wild = 0;
    for (int k = 0; k < 4; k++)
        wild |= strcmp(p->types[k], HESSFIT_FF_WILDCARD) == 0;
    for (int q = 0; q < 6 && a[0] < 0; q++) {
        int ok = 1;
        for (int k = 0; k < 3; k++)
            ok &= strcmp(p->types[k + 1], HESSFIT_FF_WILDCARD) == 0 ||
                  strcmp(p->types[k + 1], mol->atom_types[atoms[perms[q][k]]]) == 0;
        for (int k = 0; k < 3 && ok; k++)
            a[k] = atoms[perms[q][k]];
    }
    if (a[0] < 0)
        return; /* matched through an equivalence: keep the topology's order */
#define SWAP_IF(i, j, cond)                                                                                            \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            int s_ = a[i];                                                                                             \
            a[i] = a[j];                                                                                               \
            a[j] = s_;                                                                                                 \
        }                                                                                                              \
    } while (0)
    if (strcmp(p->label, "amber") == 0 && !wild) {
        SWAP_IF(0, 2, strcmp(mol->atom_types[a[0]], mol->atom_types[a[2]]) == 0 && a[0] > a[2]);
        SWAP_IF(1, 2, strcmp(mol->atom_types[a[1]], mol->atom_types[a[2]]) == 0 && a[1] > a[2]);
        SWAP_IF(0, 1, strcmp(mol->atom_types[a[0]], mol->atom_types[a[1]]) == 0 && a[0] > a[1]);
    } else if (strcmp(p->label, "amber") == 0) {
        SWAP_IF(0, 2, z[a[0]] == z[a[2]] && a[0] > a[2]);
        SWAP_IF(1, 2, z[a[1]] == z[a[2]] && a[1] > a[2]);
        SWAP_IF(0, 1, a[0] > a[1]);
    } else if (z[a[0]] == z[a[1]]) {
        SWAP_IF(0, 1, a[0] > a[1]);
    } else {
        SWAP_IF(0, 1, z[a[0]] != 6 && (z[a[1]] == 6 || hessfit_element_average_mass(z[a[0]]) <
                                                          hessfit_element_average_mass(z[a[1]])));
    }
#undef SWAP_IF
    atoms[0] = a[0];
    atoms[1] = a[1];
    atoms[2] = c;
    atoms[3] = a[2];
}

hessfit_status hessfit_assign_parameters(const hessfit_molecule *mol, const hessfit_topology *topo, const hessfit_forcefield *ff,
                               const hessfit_typing_options *options, hessfit_typed_molecule *typed)
{
    typing_context c;
    user_pattern *patterns = NULL;
    hessfit_typed_term *terms = NULL;
    hessfit_status st;
    int n_terms = 0, use_impropers = 0;

    if (typed == NULL || mol == NULL || topo == NULL || ff == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_assign_parameters: %s is NULL",
                        typed == NULL ? "typed" : mol == NULL ? "mol" : topo == NULL ? "topo" : "ff");
    typed->n_terms = 0;
    typed->terms = NULL;
    if ((st = check_topology(mol, topo)) != HESSFIT_SUCCESS)
        return st;
    if (ff->n_params < 0 || (ff->n_params > 0 && ff->params == NULL) || ff->n_equivalences < 0 ||
        (ff->n_equivalences > 0 && ff->equivalences == NULL))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: inconsistent parameter or equivalence counts", ff_label(ff));
    if (mol->n_reported_terms < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: negative reported term count", mol_label(mol));
    if (mol->n_reported_terms == 0 && mol->atom_types == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "%s: no atom types and no MM report: nothing to match force-field parameters by",
                        mol_label(mol));
    for (int i = 0; i < ff->n_params; i++)
        if (ff->params[i].kind == HESSFIT_PARAM_IMPROPER)
            use_impropers = 1;

    memset(&c, 0, sizeof c);
    c.mol = mol;
    c.topo = topo;
    c.ff = ff;
    if (options != NULL && options->n_no_term > 0) {
        if (options->no_term == NULL)
            return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_assign_parameters: %d no-term patterns but no array",
                            options->n_no_term);
        patterns = calloc((size_t)options->n_no_term, sizeof *patterns);
        if (patterns == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%d no-term patterns", options->n_no_term);
        for (int p = 0; p < options->n_no_term; p++)
            if ((st = parse_pattern(ff, options->no_term[p], p, &patterns[p])) != HESSFIT_SUCCESS) {
                free(patterns);
                return st;
            }
        c.patterns = patterns;
        c.pattern_text = options->no_term;
        c.n_patterns = options->n_no_term;
    }
    if ((st = build_graph(&c)) != HESSFIT_SUCCESS)
        goto done;
    c.cand = malloc((size_t)(ff->n_params ? ff->n_params : 1) * sizeof *c.cand);
    c.cand_key = malloc((size_t)(ff->n_params ? ff->n_params : 1) * sizeof *c.cand_key);
    if (c.cand == NULL || c.cand_key == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: candidate lists of %d parameters", ff_label(ff), ff->n_params);
        goto done;
    }
    if (mol->n_reported_terms > 0) {
        if ((st = report_index(mol, &c.report)) != HESSFIT_SUCCESS)
            goto done;
        c.report_used = calloc((size_t)mol->n_reported_terms, 1);
        if (c.report_used == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: %d reported terms", mol_label(mol), mol->n_reported_terms);
            goto done;
        }
    }

    {
        const size_t capacity = (size_t)topo->n_bonds + (size_t)topo->n_angles + (size_t)topo->n_torsions +
                                (use_impropers ? (size_t)topo->n_impropers : 0) + (size_t)mol->n_reported_terms;
        terms = calloc(capacity ? capacity : 1, sizeof *terms);
        if (terms == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: %zu typed terms", mol_label(mol), capacity);
            goto done;
        }
    }
    const struct {
        hessfit_term_kind kind;
        int n;
        const int *v;
    } lists[] = {{HESSFIT_TERM_BOND, topo->n_bonds, topo->bonds},
                 {HESSFIT_TERM_ANGLE, topo->n_angles, topo->angles},
                 {HESSFIT_TERM_TORSION, topo->n_torsions, topo->torsions},
                 {HESSFIT_TERM_IMPROPER, use_impropers ? topo->n_impropers : 0, topo->impropers}};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        const int w = hessfit_term_kind_atoms(lists[l].kind);
        for (int i = 0; i < lists[l].n; i++)
            if ((st = match_term(&c, lists[l].kind, lists[l].v + (size_t)i * (size_t)w, &terms[n_terms++])) !=
                HESSFIT_SUCCESS)
                goto done;
    }
    if (c.n_unmatched > 0 || c.n_ambiguous > 0) {
        char more[160] = "";
        size_t pos = 0;
        if (c.n_unmatched > 1)
            append(more, sizeof more, &pos, " (and %d more unmatched terms)", c.n_unmatched - 1);
        if (c.n_unmatched > 0 && c.n_ambiguous > 0)
            append(more, sizeof more, &pos, " (and %d ambiguous terms)", c.n_ambiguous);
        else if (c.n_ambiguous > 1)
            append(more, sizeof more, &pos, " (and %d more ambiguous terms)", c.n_ambiguous - 1);
        st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s%s", c.n_unmatched > 0 ? c.first_unmatched : c.first_ambiguous,
                      more);
        goto done;
    }
    /* Reported terms the topology lacks, in report order. */
    for (int r = 0; r < mol->n_reported_terms; r++) {
        int added;
        if (c.report_used[r])
            continue;
        if ((st = reported_extra(&c, &mol->reported_terms[r], &terms[n_terms], &added)) != HESSFIT_SUCCESS)
            goto done;
        n_terms += added;
    }
    for (int i = 0; i < n_terms && ff->format == HESSFIT_FF_FFXML && mol->atom_types != NULL; i++)
        if (terms[i].kind == HESSFIT_TERM_IMPROPER && terms[i].param >= 0 && terms[i].rule != HESSFIT_MATCH_FF_LINE)
            openmm_improper_order(mol, &ff->params[terms[i].param], terms[i].atoms);
    typed->terms = terms;
    typed->n_terms = n_terms;
    terms = NULL;
    st = HESSFIT_SUCCESS;
done:
    free(terms);
    free(patterns);
    free(c.report);
    free(c.report_used);
    free(c.adj_start);
    free(c.adj);
    free(c.adj_order);
    free(c.cand);
    free(c.cand_key);
    return st;
}
