/*
 * Matching the bonded terms of a topology to force-field parameters (hessfit_typing.h).
 *
 * Rules, first that applies:
 *  1. HF_MATCH_FF_LINE: the molecule carries the MM program's report (MacroModel .mmo): the term
 *     with the same atoms (either direction; impropers as a set of four atoms) names the .fld line
 *     of its parameter. That line must be a parameter line of ff of the same kind, and a
 *     main-table parameter's types must fit the term's atom types (exact, equivalence or
 *     wildcard): otherwise ff is not the force field the report was made with, an error.
 *  2. HF_MATCH_TYPES: a main-table parameter with exactly the atom types, either direction.
 *  3. HF_MATCH_EQUIVALENCE: the same after replacing some atom types by their force-field
 *     equivalents (an MM3 .fld "PX  P0 P3 P4 P5" lets a P3 atom use PX parameters).
 *  4. HF_MATCH_WILDCARD: a main-table parameter with wildcard ("*") types.
 *     2-4 are one ranking: a candidate scores (wildcards, equivalence substitutions) and the
 *     lexicographically smallest wins, so exact beats equivalent beats wildcard, and among
 *     wildcards the most specific wins. Equally good candidates (MM3 repeats a type tuple with
 *     environment descriptors that hessfit does not evaluate, the unconditioned line last) go to
 *     the LAST in file order; the detail says how many there were.
 *  Substructure parameters (substructure >= 0) name pattern positions, not types: only rule 1
 *  reaches them.
 *  A term nothing matches gets HF_MATCH_NO_TERM when a user pattern covers it, else the call
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
 * when one of its atoms is bonded to the other three; other reported terms absent from the
 * topology (a bond, angle or torsion) mean the connectivity disagrees with the MM program's and
 * are an error naming the report line.
 */
#include "hessfit_typing.h"
#include "hf_lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HF_TYPING_MAX_PATTERN 256

const char *hf_match_rule_name(hf_match_rule rule)
{
    static const char *const names[HF_NUM_MATCH_RULES] = {"no-term", "ff-line", "types", "equivalence", "wildcard"};
    return (unsigned)rule < HF_NUM_MATCH_RULES ? names[rule] : "unknown";
}

void hf_typed_molecule_free(hf_typed_molecule *typed)
{
    if (typed == NULL)
        return;
    free(typed->terms);
    typed->terms = NULL;
    typed->n_terms = 0;
}

static const char *mol_label(const hf_molecule *mol)
{
    if (mol->source != NULL && mol->source[0] != '\0')
        return mol->source;
    if (mol->name != NULL && mol->name[0] != '\0')
        return mol->name;
    return "molecule";
}

static const char *ff_label(const hf_forcefield *ff)
{
    return ff->path != NULL && ff->path[0] != '\0' ? ff->path : "the force field";
}

static int is_wildcard(const char *t)
{
    return strcmp(t, HF_FF_WILDCARD) == 0;
}

static const char *atom_type(const hf_molecule *mol, int atom)
{
    if (mol->atom_types == NULL || mol->atom_types[atom] == NULL || mol->atom_types[atom][0] == '\0')
        return "?";
    return mol->atom_types[atom];
}

/* "1-13-20-24" (1-based) and "RH P3 C3 H1" into the buffers. */
static void term_text(const hf_molecule *mol, const int *atoms, int n, char *atoms_buf, size_t na, char *types_buf,
                      size_t nt)
{
    size_t pa = 0, pt = 0;
    atoms_buf[0] = types_buf[0] = '\0';
    for (int a = 0; a < n; a++) {
        int w = snprintf(atoms_buf + pa, na - pa, "%s%d", a ? "-" : "", atoms[a] + 1);
        pa = w > 0 && (size_t)w < na - pa ? pa + (size_t)w : na - 1;
        w = snprintf(types_buf + pt, nt - pt, "%s%s", a ? " " : "", atom_type(mol, atoms[a]));
        pt = w > 0 && (size_t)w < nt - pt ? pt + (size_t)w : nt - 1;
    }
}

/* ---- no-term patterns ----------------------------------------------------------------------- */

typedef struct {
    hf_term_kind kind;
    int n_types;
    char types[4][HF_FF_TYPE_LEN]; /* centre first for impropers */
} no_term_pattern;

static hf_status parse_pattern(const char *text, int index, no_term_pattern *p)
{
    char buf[HF_TYPING_MAX_PATTERN];
    char *tok[6];
    if (text == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "no-term pattern %d is NULL", index + 1);
    if (strlen(text) >= sizeof buf)
        return hf_error(HF_ERROR_INVALID_ARGUMENT, "no-term pattern %d is longer than %d characters", index + 1,
                        HF_TYPING_MAX_PATTERN - 1);
    strcpy(buf, text);
    int n = hf_split(buf, tok, 6);
    if (n < 1)
        return hf_error(HF_ERROR_INVALID_ARGUMENT, "no-term pattern %d '%s' is empty", index + 1, text);
    int kind = -1;
    for (int k = 0; k < HF_NUM_TERM_KINDS; k++)
        if (strcmp(tok[0], hf_term_kind_name((hf_term_kind)k)) == 0)
            kind = k;
    if (kind < 0)
        return hf_error(HF_ERROR_INVALID_ARGUMENT,
                        "no-term pattern '%s': kind '%s' is not bond, angle, torsion or improper", text, tok[0]);
    p->kind = (hf_term_kind)kind;
    p->n_types = hf_term_kind_atoms(p->kind);
    if (n - 1 != p->n_types)
        return hf_error(HF_ERROR_INVALID_ARGUMENT, "no-term pattern '%s': a %s term needs %d atom types, not %d", text,
                        tok[0], p->n_types, n - 1);
    for (int a = 0; a < p->n_types; a++) {
        if (strlen(tok[a + 1]) >= HF_FF_TYPE_LEN)
            return hf_error(HF_ERROR_INVALID_ARGUMENT, "no-term pattern '%s': type '%s' is longer than %d characters",
                            text, tok[a + 1], HF_FF_TYPE_LEN - 1);
        strcpy(p->types[a], tok[a + 1]);
    }
    return HF_SUCCESS;
}

static int pattern_type_fits(const char *pattern, const char *type)
{
    return is_wildcard(pattern) || strcmp(pattern, type) == 0;
}

/* types: the term's atom types in its atom order (impropers: three neighbours then the centre). */
static int pattern_covers(const no_term_pattern *p, hf_term_kind kind, const char *const *types)
{
    if (p->kind != kind)
        return 0;
    if (kind == HF_TERM_IMPROPER) {
        static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        if (!pattern_type_fits(p->types[0], types[3]))
            return 0;
        for (int q = 0; q < 6; q++) {
            int ok = 1;
            for (int a = 0; a < 3 && ok; a++)
                ok = pattern_type_fits(p->types[a + 1], types[perms[q][a]]);
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

/* ---- type matching ---------------------------------------------------------------------------- */

/* Where a parameter's improper types name the centre. */
static int centre_slot(const hf_forcefield *ff)
{
    return ff->format == HF_FF_FRCMOD ? 2 : 0;
}

/* 1 if the force field lets an atom of type `type` use parameters written for `param_type`. */
static int equivalent(const hf_forcefield *ff, const char *type, const char *param_type)
{
    for (int e = 0; e < ff->n_equivalences; e++)
        if (strcmp(ff->equivalences[e].type, type) == 0 && strcmp(ff->equivalences[e].equivalent, param_type) == 0)
            return 1;
    return 0;
}

typedef struct {
    int wildcards;
    int substitutions;
} match_score;

/* One parameter type against one atom type: 0 no, 1 yes (score updated). */
static int type_fits(const hf_forcefield *ff, const char *param_type, const char *type, match_score *s)
{
    if (is_wildcard(param_type)) {
        s->wildcards++;
        return 1;
    }
    if (strcmp(param_type, type) == 0)
        return 1;
    if (equivalent(ff, type, param_type)) {
        s->substitutions++;
        return 1;
    }
    return 0;
}

static int score_less(match_score a, match_score b)
{
    return a.wildcards != b.wildcards ? a.wildcards < b.wildcards : a.substitutions < b.substitutions;
}

/* Best score of parameter p for a term with atom types `types` (term order); 0 if it does not fit. */
static int param_fits(const hf_forcefield *ff, const hf_ff_param *p, hf_term_kind kind, const char *const *types,
                      match_score *best)
{
    const int n = hf_term_kind_atoms(kind);
    int found = 0;
    if ((int)p->kind != (int)kind || p->n_types != n)
        return 0;
    if (kind == HF_TERM_IMPROPER) {
        static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        const int c = centre_slot(ff);
        int others[3], m = 0;
        for (int a = 0; a < 4; a++)
            if (a != c)
                others[m++] = a;
        for (int q = 0; q < 6; q++) {
            match_score s = {0, 0};
            int ok = type_fits(ff, p->types[c], types[3], &s);
            for (int a = 0; a < 3 && ok; a++)
                ok = type_fits(ff, p->types[others[a]], types[perms[q][a]], &s);
            if (ok && (!found || score_less(s, *best))) {
                *best = s;
                found = 1;
            }
        }
        return found;
    }
    for (int dir = 0; dir < 2; dir++) {
        match_score s = {0, 0};
        int ok = 1;
        for (int a = 0; a < n && ok; a++)
            ok = type_fits(ff, p->types[a], types[dir ? n - 1 - a : a], &s);
        if (ok && (!found || score_less(s, *best))) {
            *best = s;
            found = 1;
        }
    }
    return found;
}

static void param_types_text(const hf_ff_param *p, char *buf, size_t size)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (int a = 0; a < p->n_types && a < 4; a++) {
        int w = snprintf(buf + pos, size - pos, "%s%s", a ? " " : "", p->types[a]);
        pos = w > 0 && (size_t)w < size - pos ? pos + (size_t)w : size - 1;
    }
}

/* Rules 2-4 for one term: the best main-table parameter, or -1. */
static int match_by_types(const hf_forcefield *ff, hf_term_kind kind, const char *const *types, hf_typed_term *out)
{
    int best = -1, ties = 0;
    match_score best_score = {0, 0};
    for (int i = 0; i < ff->n_params; i++) {
        const hf_ff_param *p = &ff->params[i];
        match_score s;
        if (p->substructure >= 0 || !param_fits(ff, p, kind, types, &s))
            continue;
        if (best < 0 || score_less(s, best_score)) {
            best = i;
            best_score = s;
            ties = 1;
        } else if (!score_less(best_score, s)) { /* equally good: the last in file order wins */
            best = i;
            ties++;
        }
    }
    if (best < 0)
        return -1;
    char ptypes[4 * HF_FF_TYPE_LEN + 4], tie_text[48] = "";
    param_types_text(&ff->params[best], ptypes, sizeof ptypes);
    if (ties > 1)
        snprintf(tie_text, sizeof tie_text, "; last of %d equal candidates", ties);
    out->param = best;
    if (best_score.wildcards > 0) {
        out->rule = HF_MATCH_WILDCARD;
        snprintf(out->detail, sizeof out->detail, "wildcard %s%s%s", ptypes,
                 best_score.substitutions ? " with equivalences" : "", tie_text);
    } else if (best_score.substitutions > 0) {
        out->rule = HF_MATCH_EQUIVALENCE;
        snprintf(out->detail, sizeof out->detail, "equivalence %s%s", ptypes, tie_text);
    } else {
        out->rule = HF_MATCH_TYPES;
        snprintf(out->detail, sizeof out->detail, "types %s%s", ptypes, tie_text);
    }
    return best;
}

/* ---- the MM program's report ----------------------------------------------------------------- */

/* A term's atoms in a canonical order, so that both directions (and, for impropers, any order of
 * the four atoms) give the same key. */
static void canonical_key(hf_term_kind kind, const int *atoms, int *key)
{
    key[0] = key[1] = key[2] = key[3] = -1;
    switch (kind) {
    case HF_TERM_BOND:
        key[0] = atoms[0] < atoms[1] ? atoms[0] : atoms[1];
        key[1] = atoms[0] < atoms[1] ? atoms[1] : atoms[0];
        break;
    case HF_TERM_ANGLE:
        key[0] = atoms[0] < atoms[2] ? atoms[0] : atoms[2];
        key[1] = atoms[1];
        key[2] = atoms[0] < atoms[2] ? atoms[2] : atoms[0];
        break;
    case HF_TERM_TORSION:
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
static hf_status report_index(const hf_molecule *mol, report_entry **out)
{
    *out = NULL;
    if (mol->reported_terms == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "%s: %d reported terms but no array", mol_label(mol),
                        mol->n_reported_terms);
    report_entry *idx = malloc((size_t)mol->n_reported_terms * sizeof *idx);
    if (idx == NULL)
        return hf_error(HF_ERROR_OUT_OF_MEMORY, "%s: index of %d reported terms", mol_label(mol),
                        mol->n_reported_terms);
    for (int r = 0; r < mol->n_reported_terms; r++) {
        const hf_reported_term *t = &mol->reported_terms[r];
        if ((unsigned)t->kind >= HF_NUM_TERM_KINDS) {
            free(idx);
            return hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: reported term %d (line %d) has kind %d", mol_label(mol),
                            r + 1, t->line, (int)t->kind);
        }
        const int n = hf_term_kind_atoms(t->kind);
        for (int a = 0; a < n; a++) {
            int bad = t->atoms[a] < 0 || t->atoms[a] >= mol->n_atoms;
            for (int b = 0; b < a && !bad; b++)
                bad = t->atoms[b] == t->atoms[a];
            if (bad) {
                free(idx);
                return hf_error(HF_ERROR_INVALID_ARGUMENT,
                                "%s: reported %s at line %d has atom %d (number %d): out of 1..%d or repeated",
                                mol_label(mol), hf_term_kind_name(t->kind), t->line, a + 1, t->atoms[a] + 1,
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
            const hf_reported_term *a = &mol->reported_terms[idx[r - 1].index], *b = &mol->reported_terms[idx[r].index];
            hf_status st = hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: the %s at lines %d and %d is reported twice",
                                    mol_label(mol), hf_term_kind_name(a->kind), a->line, b->line);
            free(idx);
            return st;
        }
    *out = idx;
    return HF_SUCCESS;
}

static int report_find(const report_entry *idx, int n, hf_term_kind kind, const int *atoms)
{
    report_entry key;
    key.kind = (int)kind;
    key.index = -1;
    canonical_key(kind, atoms, key.key);
    const report_entry *hit = bsearch(&key, idx, (size_t)n, sizeof *idx, cmp_report_entry);
    return hit != NULL ? (int)(hit - idx) : -1;
}

/* ---- the matching ----------------------------------------------------------------------------- */

typedef struct {
    const hf_molecule *mol;
    const hf_topology *topo;
    const hf_forcefield *ff;
    const no_term_pattern *patterns;
    const char *const *pattern_text;
    int n_patterns;
    report_entry *report; /* NULL without a report */
    unsigned char *report_used;
    int n_unmatched;
    char first_unmatched[HF_ERROR_MESSAGE_SIZE];
} typing_context;

static int covered_by_pattern(const typing_context *c, hf_term_kind kind, const char *const *types, hf_typed_term *t)
{
    for (int p = 0; p < c->n_patterns; p++)
        if (pattern_covers(&c->patterns[p], kind, types)) {
            t->param = -1;
            t->rule = HF_MATCH_NO_TERM;
            snprintf(t->detail, sizeof t->detail, "no-term pattern %d '%s'", p + 1, c->pattern_text[p]);
            return 1;
        }
    return 0;
}

/* 1 if .fld line `line` (1-based) continues the parameter line above it: MM3* writes further
 * environment descriptors of a parameter on lines whose type columns (2-22) are blank, e.g.
 *     " 1  N2 - H3                1.0280     6.7700    -1.5800 1C200 0000   ..."
 *     " 1                                                       O200 0000"
 * and MacroModel's "FF Line" names the LAST line of such an entry (mm3.fld line 115). */
static int fld_continuation_line(const hf_forcefield *ff, int line)
{
    if (ff->format != HF_FF_MM3_FLD || ff->lines == NULL || line < 2 || line > ff->n_lines)
        return 0;
    const char *t = ff->lines[line - 1];
    if (t == NULL || strlen(t) <= 23 || t[0] != ' ' || t[1] < '1' || t[1] > '9' || hf_is_blank(t + 23))
        return 0;
    for (int c = 2; c < 23; c++)
        if (t[c] != ' ')
            return 0;
    return 1;
}

/* The parameter a reported FF line names: the parameter on that line, or the one a chain of
 * continuation lines leads back to (*from = its line; 0 when the line itself is a parameter). */
static int param_at_reported_line(const hf_forcefield *ff, int line, int *from)
{
    int p = hf_forcefield_param_at_line(ff, line);
    *from = 0;
    if (p >= 0)
        return p;
    for (int l = line; fld_continuation_line(ff, l); l--) {
        p = hf_forcefield_param_at_line(ff, l - 1);
        if (p >= 0) {
            const char *above = ff->lines[l - 2];
            if (above[1] != ff->lines[line - 1][1]) /* the same interaction code */
                return -1;
            *from = l - 1;
            return p;
        }
    }
    return -1;
}

/* Rule 1 for a term found in the report: the parameter on that line, checked. */
static hf_status match_by_line(typing_context *c, const hf_reported_term *r, hf_term_kind kind, const int *atoms,
                               const char *const *types, hf_typed_term *t)
{
    char at[64], ty[64];
    const hf_forcefield *ff = c->ff;
    term_text(c->mol, atoms, hf_term_kind_atoms(kind), at, sizeof at, ty, sizeof ty);
    int from;
    int p = param_at_reported_line(ff, r->ff_line, &from);
    if (p < 0)
        return hf_error(HF_ERROR_INVALID_ARGUMENT,
                        "%s: %s %s (types %s) at report line %d uses force-field line %d, which is not a parameter "
                        "line of %s",
                        mol_label(c->mol), hf_term_kind_name(kind), at, ty, r->line, r->ff_line, ff_label(ff));
    const hf_ff_param *param = &ff->params[p];
    if ((int)param->kind != (int)kind)
        return hf_error(HF_ERROR_INVALID_ARGUMENT,
                        "%s: %s %s (types %s) at report line %d uses force-field line %d of %s, a parameter of kind %s",
                        mol_label(c->mol), hf_term_kind_name(kind), at, ty, r->line, r->ff_line, ff_label(ff),
                        hf_param_kind_name(param->kind));
    match_score s;
    if (param->substructure < 0 && c->mol->atom_types != NULL && !param_fits(ff, param, kind, types, &s)) {
        char pt[4 * HF_FF_TYPE_LEN + 4];
        param_types_text(param, pt, sizeof pt);
        return hf_error(HF_ERROR_INVALID_ARGUMENT,
                        "%s: %s %s (types %s) at report line %d uses force-field line %d of %s, whose types %s do "
                        "not fit: is that the force field the report was made with?",
                        mol_label(c->mol), hf_term_kind_name(kind), at, ty, r->line, r->ff_line, ff_label(ff), pt);
    }
    t->param = p;
    t->rule = HF_MATCH_FF_LINE;
    if (from > 0)
        snprintf(t->detail, sizeof t->detail, "ff line %d (continued on %d) via mmo line %d%s%s%s", from, r->ff_line,
                 r->line, r->source[0] ? " (" : "", r->source, r->source[0] ? ")" : "");
    else
        snprintf(t->detail, sizeof t->detail, "ff line %d via mmo line %d%s%s%s", r->ff_line, r->line,
                 r->source[0] ? " (" : "", r->source, r->source[0] ? ")" : "");
    return HF_SUCCESS;
}

static void note_unmatched(typing_context *c, hf_term_kind kind, const int *atoms, const char *why)
{
    if (c->n_unmatched++ > 0)
        return;
    char at[64], ty[64];
    term_text(c->mol, atoms, hf_term_kind_atoms(kind), at, sizeof at, ty, sizeof ty);
    snprintf(c->first_unmatched, sizeof c->first_unmatched, "%s: %s %s (types %s) %s; if it has no parameter, say so "
             "with a no-term pattern such as '%s %s'",
             mol_label(c->mol), hf_term_kind_name(kind), at, ty, why, hf_term_kind_name(kind), ty);
}

/* One topology term (atoms in topology order) -> t. Unmatched terms are counted, not fatal here. */
static hf_status match_term(typing_context *c, hf_term_kind kind, const int *atoms, hf_typed_term *t)
{
    const int n = hf_term_kind_atoms(kind);
    const char *types[4] = {"", "", "", ""};
    char ff_words[300];
    for (int a = 0; a < n; a++)
        types[a] = atom_type(c->mol, atoms[a]);
    t->kind = kind;
    for (int a = 0; a < 4; a++)
        t->atoms[a] = a < n ? atoms[a] : -1;
    t->param = -1;
    t->rule = HF_MATCH_NO_TERM;
    t->detail[0] = '\0';

    if (c->report != NULL) {
        int hit = report_find(c->report, c->mol->n_reported_terms, kind, atoms);
        if (hit >= 0) {
            const hf_reported_term *r = &c->mol->reported_terms[c->report[hit].index];
            c->report_used[c->report[hit].index] = 1;
            if (r->ff_line > 0)
                return match_by_line(c, r, kind, atoms, types, t);
        }
        if (covered_by_pattern(c, kind, types, t))
            return HF_SUCCESS;
        if (kind == HF_TERM_IMPROPER) {
            snprintf(t->detail, sizeof t->detail, "optional improper: none in the mmo report");
            return HF_SUCCESS;
        }
        note_unmatched(c, kind, atoms,
                       hit >= 0 ? "is in the MM program's report without a force-field line"
                                : "is not in the MM program's report (the program used no parameter for it)");
        return HF_SUCCESS;
    }

    if (match_by_types(c->ff, kind, types, t) >= 0)
        return HF_SUCCESS;
    if (covered_by_pattern(c, kind, types, t))
        return HF_SUCCESS;
    if (kind == HF_TERM_IMPROPER) {
        snprintf(t->detail, sizeof t->detail, "optional improper: no parameter for centre type %s", types[3]);
        return HF_SUCCESS;
    }
    snprintf(ff_words, sizeof ff_words, "matches no parameter of %s (exact, equivalent or wildcard types)",
             ff_label(c->ff));
    note_unmatched(c, kind, atoms, ff_words);
    return HF_SUCCESS;
}

/* 1 if the topology has bond a-b (bonds sorted, i < j). */
static int topo_bonded(const hf_topology *topo, int a, int b)
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

static hf_status check_topology(const hf_molecule *mol, const hf_topology *topo)
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
        return hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: topology of %d atoms for a molecule of %d", mol_label(mol),
                        topo->n_atoms, mol->n_atoms);
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        if (lists[l].n < 0 || (lists[l].n > 0 && lists[l].v == NULL))
            return hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: topology has %d %ss and %s array", mol_label(mol),
                            lists[l].n, lists[l].what, lists[l].v == NULL ? "no" : "an");
        for (long i = 0; i < (long)lists[l].n * lists[l].width; i++)
            if (lists[l].v[i] < 0 || lists[l].v[i] >= mol->n_atoms)
                return hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: topology %s %ld names atom %d, outside 1..%d",
                                mol_label(mol), lists[l].what, i / lists[l].width + 1, lists[l].v[i] + 1,
                                mol->n_atoms);
    }
    return HF_SUCCESS;
}

/* A reported term the topology lacks: an improper whose centre (one atom bonded to the other three)
 * is found becomes an extra term; anything else is an error. */
static hf_status reported_extra(typing_context *c, const hf_reported_term *r, hf_typed_term *t, int *added)
{
    char at[64], ty[64];
    const int n = hf_term_kind_atoms(r->kind);
    *added = 0;
    term_text(c->mol, r->atoms, n, at, sizeof at, ty, sizeof ty);
    if (r->kind == HF_TERM_IMPROPER) {
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
            t->kind = HF_TERM_IMPROPER;
            memcpy(t->atoms, atoms, sizeof atoms);
            if (r->ff_line <= 0)
                return hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: improper %s (types %s) at report line %d has no "
                                "force-field line", mol_label(c->mol), at, ty, r->line);
            hf_status st = match_by_line(c, r, HF_TERM_IMPROPER, atoms, types, t);
            if (st != HF_SUCCESS)
                return st;
            size_t len = strlen(t->detail);
            snprintf(t->detail + len, sizeof t->detail - len, "; centre not 3-connected in topology");
            *added = 1;
            return HF_SUCCESS;
        }
    }
    return hf_error(HF_ERROR_INVALID_ARGUMENT,
                    "%s: the %s %s (types %s) at report line %d is not in the topology: the connectivity differs "
                    "from the MM program's",
                    mol_label(c->mol), hf_term_kind_name(r->kind), at, ty, r->line);
}

hf_status hf_assign_parameters(const hf_molecule *mol, const hf_topology *topo, const hf_forcefield *ff,
                               const hf_typing_options *options, hf_typed_molecule *typed)
{
    typing_context c;
    no_term_pattern *patterns = NULL;
    hf_typed_term *terms = NULL;
    hf_status st;
    int n_terms = 0, use_impropers = 0;

    if (typed == NULL || mol == NULL || topo == NULL || ff == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_assign_parameters: %s is NULL",
                        typed == NULL ? "typed" : mol == NULL ? "mol" : topo == NULL ? "topo" : "ff");
    typed->n_terms = 0;
    typed->terms = NULL;
    if ((st = check_topology(mol, topo)) != HF_SUCCESS)
        return st;
    if (ff->n_params < 0 || (ff->n_params > 0 && ff->params == NULL) || ff->n_equivalences < 0 ||
        (ff->n_equivalences > 0 && ff->equivalences == NULL))
        return hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: inconsistent parameter or equivalence counts", ff_label(ff));
    if (mol->n_reported_terms < 0)
        return hf_error(HF_ERROR_INVALID_ARGUMENT, "%s: negative reported term count", mol_label(mol));
    if (mol->n_reported_terms == 0 && mol->atom_types == NULL)
        return hf_error(HF_ERROR_INVALID_ARGUMENT,
                        "%s: no atom types and no MM report: nothing to match force-field parameters by",
                        mol_label(mol));
    for (int i = 0; i < ff->n_params; i++)
        if (ff->params[i].kind == HF_PARAM_IMPROPER)
            use_impropers = 1;

    memset(&c, 0, sizeof c);
    c.mol = mol;
    c.topo = topo;
    c.ff = ff;
    if (options != NULL && options->n_no_term > 0) {
        if (options->no_term == NULL)
            return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_assign_parameters: %d no-term patterns but no array",
                            options->n_no_term);
        patterns = calloc((size_t)options->n_no_term, sizeof *patterns);
        if (patterns == NULL)
            return hf_error(HF_ERROR_OUT_OF_MEMORY, "%d no-term patterns", options->n_no_term);
        for (int p = 0; p < options->n_no_term; p++)
            if ((st = parse_pattern(options->no_term[p], p, &patterns[p])) != HF_SUCCESS) {
                free(patterns);
                return st;
            }
        c.patterns = patterns;
        c.pattern_text = options->no_term;
        c.n_patterns = options->n_no_term;
    }
    if (mol->n_reported_terms > 0) {
        if ((st = report_index(mol, &c.report)) != HF_SUCCESS) {
            free(patterns);
            return st;
        }
        c.report_used = calloc((size_t)mol->n_reported_terms, 1);
        if (c.report_used == NULL) {
            st = hf_error(HF_ERROR_OUT_OF_MEMORY, "%s: %d reported terms", mol_label(mol), mol->n_reported_terms);
            goto done;
        }
    }

    {
        const size_t capacity = (size_t)topo->n_bonds + (size_t)topo->n_angles + (size_t)topo->n_torsions +
                                (use_impropers ? (size_t)topo->n_impropers : 0) + (size_t)mol->n_reported_terms;
        terms = calloc(capacity ? capacity : 1, sizeof *terms);
        if (terms == NULL) {
            st = hf_error(HF_ERROR_OUT_OF_MEMORY, "%s: %zu typed terms", mol_label(mol), capacity);
            goto done;
        }
    }
    const struct {
        hf_term_kind kind;
        int n;
        const int *v;
    } lists[] = {{HF_TERM_BOND, topo->n_bonds, topo->bonds},
                 {HF_TERM_ANGLE, topo->n_angles, topo->angles},
                 {HF_TERM_TORSION, topo->n_torsions, topo->torsions},
                 {HF_TERM_IMPROPER, use_impropers ? topo->n_impropers : 0, topo->impropers}};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        const int w = hf_term_kind_atoms(lists[l].kind);
        for (int i = 0; i < lists[l].n; i++)
            if ((st = match_term(&c, lists[l].kind, lists[l].v + (size_t)i * (size_t)w, &terms[n_terms++])) !=
                HF_SUCCESS)
                goto done;
    }
    if (c.n_unmatched > 0) {
        if (c.n_unmatched > 1)
            st = hf_error(HF_ERROR_INVALID_ARGUMENT, "%s (and %d more unmatched terms)", c.first_unmatched,
                          c.n_unmatched - 1);
        else
            st = hf_error(HF_ERROR_INVALID_ARGUMENT, "%s", c.first_unmatched);
        goto done;
    }
    /* Reported terms the topology lacks, in report order. */
    for (int r = 0; r < mol->n_reported_terms; r++) {
        int added;
        if (c.report_used[r])
            continue;
        if ((st = reported_extra(&c, &mol->reported_terms[r], &terms[n_terms], &added)) != HF_SUCCESS)
            goto done;
        n_terms += added;
    }
    typed->terms = terms;
    typed->n_terms = n_terms;
    terms = NULL;
    st = HF_SUCCESS;
done:
    free(terms);
    free(patterns);
    free(c.report);
    free(c.report_used);
    return st;
}
