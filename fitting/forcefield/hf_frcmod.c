/*
 * AMBER force-field modification files (frcmod): read and write.
 *
 * Layout (AMBER's parm/frcmod format, as parmchk2 writes it):
 *   line 1       title
 *   sections     a keyword line (recognised by its first four letters: MASS, BOND, ANGL(E),
 *                DIHE(DRAL), IMPR(OPER), NONB(ON)), data lines, and a blank line that closes it
 *   BOND         "c3-c3  300.9  1.538"          types A2-A2 in columns 1-5, then K [kcal/mol/A^2], r0 [A]
 *   ANGL         "c3-c3-h1  46.4  110.0"        K [kcal/mol/rad^2], theta0 [deg]
 *   DIHE         "X -c3-c3-X   9  1.4  0.0  3.0"  IDIVF, PK [kcal/mol], phase [deg], PN;
 *                E = PK/IDIVF (1 + cos(|PN| phi - phase)); a negative PN means the next line
 *                continues the series of the same four types
 *   IMPR         "X -X -c -o  10.5  180.0  2.0"  PK, phase, PN (no IDIVF), E = PK (1 + cos(PN phi - phase))
 *   NONB         "  c3  1.9080  0.1094"          R* [A] (half the minimum distance), epsilon [kcal/mol]
 *   MASS         "c3  12.01  0.878"              mass, polarizability: kept as text (not a parameter)
 * Text after the numbers is a comment (the label). Lines starting with '#' between sections are
 * comments. Type labels are two characters ("c " = "c"); the wildcard "X" is stored as "*".
 * AMBER's harmonic terms have no 1/2, so the canonical values are the file's values; a torsion
 * triple is {PK/IDIVF, phase, |PN|}.
 *
 * Checks: a section that is not closed by a blank line (a truncated file), numbers that are not
 * finite numbers, IDIVF <= 0, a periodicity that is not a non-zero integer, a series that does not
 * continue with the same types, unknown sections (HBON, CMAP and the like are reported as
 * unsupported rather than dropped).
 *
 * Writing regenerates the file in AMBER's layout from the parameters: title, the comment lines
 * before the first section and the MASS lines of the file the force field was read from (when it
 * was an frcmod), then BOND, ANGLE, DIHE, IMPROPER, NONBON. Torsions are written with IDIVF 1.
 * Numbers get the fewest decimals (at least 4 for constants and lengths, 3 for phases and
 * periodicities, at most 10) that read back as the same double, or else the fewest significant
 * digits (at most 17) that do, so a written file reads back to identical parameters and writes
 * again byte for byte. Labels (comments) longer than 63 characters are cut there.
 */
#include "hessfit_forcefield.h"
#include "hf_ff_internal.h"
#include "hf_lines.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRCMOD_MAX_TERMS (HESSFIT_FF_MAX_VALUES / 3)
#define FRCMOD_MAX_DECIMALS 10

typedef enum frcmod_section {
    SEC_NONE = 0,
    SEC_MASS,
    SEC_BOND,
    SEC_ANGL,
    SEC_DIHE,
    SEC_IMPR,
    SEC_NONB
} frcmod_section;

static const char *section_name(frcmod_section s)
{
    static const char *names[] = {"(none)", "MASS", "BOND", "ANGL", "DIHE", "IMPR", "NONB"};
    return names[s];
}

/* The section a keyword line opens; SEC_NONE if it is none of them. *unsupported set for AMBER
 * sections hessfit does not read. */
static frcmod_section keyword_section(const char *text, int *unsupported)
{
    static const char *known[] = {"MASS", "BOND", "ANGL", "DIHE", "IMPR", "NONB"};
    static const char *other[] = {"HBON", "CMAP", "IPOL", "LJED"};
    *unsupported = 0;
    for (int k = 0; k < 6; k++)
        if (strncmp(text, known[k], 4) == 0)
            return (frcmod_section)(k + 1);
    for (int k = 0; k < 4; k++)
        if (strncmp(text, other[k], 4) == 0)
            *unsupported = 1;
    return SEC_NONE;
}

/* Writing puts at least one space between fields, whatever the width of the numbers. */

/* Whitespace tokens of s from position *pos: [*start, *end); 0 when there is none. */
static int next_token(const char *s, size_t *pos, size_t *start, size_t *end)
{
    size_t p = *pos;
    while (s[p] && isspace((unsigned char)s[p]))
        p++;
    if (!s[p])
        return 0;
    *start = p;
    while (s[p] && !isspace((unsigned char)s[p]))
        p++;
    *end = p;
    *pos = p;
    return 1;
}

/* n numbers from s at *pos, then the rest as a label. */
static hessfit_status read_numbers(const char *path, int line_no, const char *s, size_t pos, int n, const char *const *what,
                              double *values, char *label, size_t label_size)
{
    for (int k = 0; k < n; k++) {
        size_t a, b;
        char token[64];
        hessfit_status st;
        if (!next_token(s, &pos, &a, &b))
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the %s is missing", path, line_no, what[k]);
        if (b - a >= sizeof token)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the %s is too long to be a number", path, line_no, what[k]);
        memcpy(token, s + a, b - a);
        token[b - a] = '\0';
        st = hf_parse_double(token, path, line_no, what[k], &values[k]);
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    hf_ff_copy_trimmed(label, label_size, s + pos, strlen(s + pos));
    return HESSFIT_SUCCESS;
}

/* An AMBER type as read: one or two printable characters, no '-' (the separator). The writer
 * accepts exactly these, so whatever reads writes back. */
static hessfit_status check_type(const char *path, int line_no, int k, const char *t)
{
    if (t[0] == '\0' || strlen(t) > 2)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom type %d ('%.20s') is not one or two characters", path, line_no,
                        k + 1, t);
    for (const char *c = t; *c; c++)
        if (!isgraph((unsigned char)*c) || *c == '-')
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom type %d ('%s') has a character that is not allowed", path,
                            line_no, k + 1, t);
    return HESSFIT_SUCCESS;
}

/* Types "t1-t2-..." in the fixed A2 columns; "X" -> wildcard. */
static hessfit_status read_types(const char *path, int line_no, const char *s, int n, hessfit_ff_param *p)
{
    size_t len = strlen(s);
    hessfit_status st;
    if (len < (size_t)(3 * n - 1))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%.40s' is too short for %d atom types 'a1-a2...'", path, line_no, s, n);
    for (int k = 0; k < n; k++) {
        char t[3];
        if (k + 1 < n && s[3 * k + 2] != '-')
            return hessfit_error(HESSFIT_ERROR_PARSE,
                            "%s:%d: expected '-' in column %d between the two-character atom types ('%.40s')", path,
                            line_no, 3 * k + 3, s);
        hf_ff_copy_trimmed(t, sizeof t, s + 3 * k, 2);
        if (t[0] == '\0')
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom type %d is blank", path, line_no, k + 1);
        if ((st = check_type(path, line_no, k, t)) != HESSFIT_SUCCESS)
            return st;
        strcpy(p->types[k], strcmp(t, "X") == 0 ? HESSFIT_FF_WILDCARD : t);
    }
    p->n_types = n;
    return HESSFIT_SUCCESS;
}

/* A periodicity as written (may be negative): a non-zero integer below 1000. */
static hessfit_status check_periodicity(const char *path, int line_no, double pn)
{
    if (pn != floor(pn) || pn == 0.0 || fabs(pn) >= 1000.0)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: periodicity %g is not a non-zero integer", path, line_no, pn);
    return HESSFIT_SUCCESS;
}

static int same_types(const hessfit_ff_param *a, const hessfit_ff_param *b)
{
    if (a->n_types != b->n_types)
        return 0;
    for (int k = 0; k < a->n_types; k++)
        if (strcmp(a->types[k], b->types[k]) != 0)
            return 0;
    return 1;
}

hessfit_status hessfit_frcmod_read(const char *path, hessfit_forcefield *ff)
{
    hessfit_forcefield tmp;
    size_t cap = 0;
    frcmod_section sec = SEC_NONE;
    int section_line = 0, n_sections = 0, ended = 0;
    int pending = -1; /* index of a torsion whose series a negative PN continues */
    int pending_line = 0;
    hessfit_status st;
    st = hf_ff_read_begin("hessfit_frcmod_read", path, ff, HESSFIT_FF_FRCMOD, " (no title line)", &tmp);
    if (st != HESSFIT_SUCCESS)
        return st;
    for (int i = 1; i < tmp.n_lines; i++) {
        const char *s = tmp.lines[i];
        int line_no = i + 1;
        if (ended) {
            if (!hf_is_blank(s)) {
                st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: text after END", path, line_no);
                goto fail;
            }
            continue;
        }
        if (sec == SEC_NONE) {
            int unsupported;
            frcmod_section k;
            char word[16];
            if (hf_is_blank(s) || hf_skip_space(s)[0] == '#')
                continue;
            hf_ff_copy_trimmed(word, sizeof word, s, strlen(s));
            if (strcmp(word, "END") == 0) {
                ended = 1;
                continue;
            }
            k = keyword_section(s, &unsupported);
            if (k == SEC_NONE) {
                st = hessfit_error(unsupported ? HESSFIT_ERROR_UNSUPPORTED : HESSFIT_ERROR_FORMAT,
                              "%s:%d: %s section '%.20s' (hessfit reads MASS, BOND, ANGL, DIHE, IMPR, NONB)", path,
                              line_no, unsupported ? "unsupported" : "unknown", s);
                goto fail;
            }
            sec = k;
            section_line = line_no;
            n_sections++;
            continue;
        }
        if (hf_is_blank(s)) {
            if (pending >= 0) {
                st = hessfit_error(HESSFIT_ERROR_FORMAT,
                              "%s:%d: the %s section ends while line %d continues its series (negative PN)", path,
                              line_no, section_name(sec), pending_line);
                goto fail;
            }
            sec = SEC_NONE;
            continue;
        }
        {
            hessfit_ff_param p;
            double v[4];
            memset(&p, 0, sizeof p);
            p.line = line_no;
            p.substructure = -1;
            switch (sec) {
            case SEC_MASS: {
                static const char *const what[] = {"mass"};
                size_t pos = 0, a = 0, b = 0;
                next_token(s, &pos, &a, &b); /* the type; the line is not blank */
                st = read_numbers(path, line_no, s, pos, 1, what, v, p.label, sizeof p.label);
                if (st != HESSFIT_SUCCESS)
                    goto fail;
                if (!(v[0] > 0.0)) {
                    st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: mass %g is not positive", path, line_no, v[0]);
                    goto fail;
                }
                continue; /* kept as text */
            }
            case SEC_BOND:
            case SEC_ANGL: { /* "a1-a2  K  r0" / "a1-a2-a3  K  theta0": the numbers after the types */
                static const char *const what_bond[] = {"bond force constant", "bond length"};
                static const char *const what_angle[] = {"angle force constant", "equilibrium angle"};
                const int n_types = sec == SEC_BOND ? 2 : 3;
                st = read_types(path, line_no, s, n_types, &p);
                if (st == HESSFIT_SUCCESS)
                    st = read_numbers(path, line_no, s, (size_t)(3 * n_types - 1), 2,
                                      sec == SEC_BOND ? what_bond : what_angle, v, p.label, sizeof p.label);
                if (st != HESSFIT_SUCCESS)
                    goto fail;
                p.kind = sec == SEC_BOND ? HESSFIT_PARAM_BOND : HESSFIT_PARAM_ANGLE;
                p.n_values = 2;
                p.values[0] = v[0];
                p.values[1] = v[1];
                break;
            }
            case SEC_DIHE:
            case SEC_IMPR: {
                static const char *const what_dihe[] = {"IDIVF", "PK", "phase", "PN"};
                static const char *const what_impr[] = {"PK", "phase", "PN"};
                double k, phase, pn;
                st = read_types(path, line_no, s, 4, &p);
                if (st == HESSFIT_SUCCESS) {
                    if (sec == SEC_DIHE)
                        st = read_numbers(path, line_no, s, 11, 4, what_dihe, v, p.label, sizeof p.label);
                    else
                        st = read_numbers(path, line_no, s, 11, 3, what_impr, v + 1, p.label, sizeof p.label);
                }
                if (st != HESSFIT_SUCCESS)
                    goto fail;
                if (sec == SEC_IMPR)
                    v[0] = 1.0;
                if (!(v[0] > 0.0)) {
                    st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: IDIVF %g is not positive", path, line_no, v[0]);
                    goto fail;
                }
                st = check_periodicity(path, line_no, v[3]);
                if (st != HESSFIT_SUCCESS)
                    goto fail;
                k = v[1] / v[0];
                phase = v[2];
                pn = v[3];
                p.kind = sec == SEC_DIHE ? HESSFIT_PARAM_TORSION : HESSFIT_PARAM_IMPROPER;
                p.improper_form = sec == SEC_IMPR ? HESSFIT_IMPROPER_FOURIER : HESSFIT_IMPROPER_HARMONIC; /* (unused for torsions) */
                if (pending >= 0) {
                    hessfit_ff_param *q = &tmp.params[pending];
                    if (q->kind != p.kind || !same_types(q, &p)) {
                        st = hessfit_error(HESSFIT_ERROR_FORMAT,
                                      "%s:%d: line %d continues its series (negative PN) but this line names other "
                                      "types",
                                      path, line_no, pending_line);
                        goto fail;
                    }
                    if (q->n_values + 3 > HESSFIT_FF_MAX_VALUES) {
                        st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s:%d: more than %d terms in the series of line %d", path,
                                      line_no, FRCMOD_MAX_TERMS, pending_line);
                        goto fail;
                    }
                    q->values[q->n_values++] = k;
                    q->values[q->n_values++] = phase;
                    q->values[q->n_values++] = fabs(pn);
                    if (pn > 0.0)
                        pending = -1;
                    continue;
                }
                p.n_values = 3;
                p.values[0] = k;
                p.values[1] = phase;
                p.values[2] = fabs(pn);
                if (pn < 0.0) {
                    pending = tmp.n_params;
                    pending_line = line_no;
                }
                break;
            }
            case SEC_NONB: {
                static const char *const what[] = {"R*", "epsilon"};
                size_t pos = 0, a = 0, b = 0;
                next_token(s, &pos, &a, &b); /* the type; the line is not blank */
                if (b - a > 2) { /* as in the bonded sections' fixed two-character columns */
                    st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom type '%.20s' longer than AMBER's two characters", path,
                                  line_no, s + a);
                    goto fail;
                }
                memcpy(p.types[0], s + a, b - a);
                p.types[0][b - a] = '\0';
                if ((st = check_type(path, line_no, 0, p.types[0])) != HESSFIT_SUCCESS)
                    goto fail;
                p.n_types = 1;
                st = read_numbers(path, line_no, s, pos, 2, what, v, p.label, sizeof p.label);
                if (st != HESSFIT_SUCCESS)
                    goto fail;
                if (v[0] < 0.0 || v[1] < 0.0) {
                    st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: negative R* or epsilon (%g, %g)", path, line_no, v[0], v[1]);
                    goto fail;
                }
                p.kind = HESSFIT_PARAM_VDW;
                p.n_values = 2;
                p.values[0] = v[0];
                p.values[1] = v[1];
                break;
            }
            default:
                break;
            }
            st = hf_ff_add_param(&tmp, &cap, &p);
            if (st != HESSFIT_SUCCESS)
                goto fail;
        }
    }
    if (sec != SEC_NONE) {
        st = hessfit_error(HESSFIT_ERROR_TRUNCATED,
                      "%s:%d: the file ends inside the %s section (opened at line %d) without the blank line that "
                      "closes it (truncated?)",
                      path, tmp.n_lines, section_name(sec), section_line);
        goto fail;
    }
    if (n_sections == 0) {
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: no MASS/BOND/ANGL/DIHE/IMPR/NONB section", path, tmp.n_lines);
        goto fail;
    }
    *ff = tmp;
    return HESSFIT_SUCCESS;
fail:
    hessfit_forcefield_free(&tmp);
    return st;
}

/* ---- writing ------------------------------------------------------------------------------------ */

/* v with the fewest decimals in [min_dec, FRCMOD_MAX_DECIMALS] that read back as the same double,
 * or, for a value without such a form, the fewest significant digits (15 to 17) that do. */
static void format_number(char *out, size_t size, double v, int min_dec)
{
    if (v == 0.0)
        v = 0.0; /* no "-0.0000" */
    for (int d = min_dec; d <= FRCMOD_MAX_DECIMALS; d++) {
        snprintf(out, size, "%.*f", d, v);
        if (strtod(out, NULL) == v)
            return;
    }
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* Whether p can be written to an frcmod, with a message naming it otherwise. */
static hessfit_status check_writable(const hessfit_ff_param *p, int index, const char *path)
{
    char who[160];
    int want_types;
    hf_ff_describe_param(p, index, who, sizeof who);
    switch (p->kind) {
    case HESSFIT_PARAM_BOND: want_types = 2; break;
    case HESSFIT_PARAM_ANGLE: want_types = 3; break;
    case HESSFIT_PARAM_TORSION: want_types = 4; break;
    case HESSFIT_PARAM_IMPROPER: want_types = 4; break;
    case HESSFIT_PARAM_VDW: want_types = 1; break;
    default:
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: %s: an frcmod has no %s parameters", path, who,
                        hessfit_param_kind_name(p->kind));
    }
    if (p->substructure >= 0)
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: %s is a substructure parameter (pattern positions), which an frcmod "
                        "cannot express", path, who);
    if (p->kind == HESSFIT_PARAM_BOND && p->n_values == 3)
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: %s holds a bond moment (an MM3* .fld value), which an frcmod "
                             "cannot express", path, who);
    if (p->n_types != want_types)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s has %d types, not %d", path, who, p->n_types, want_types);
    for (int k = 0; k < p->n_types; k++) {
        size_t n = strlen(p->types[k]);
        if (n == 0 || n > 2 || strchr(p->types[k], '-') != NULL || strchr(p->types[k], ' ') != NULL)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: %s: type '%s' is not a two-character AMBER type", path, who,
                            p->types[k]);
    }
    if (p->kind == HESSFIT_PARAM_IMPROPER && p->improper_form != HESSFIT_IMPROPER_FOURIER)
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: %s is a harmonic improper; AMBER impropers are Fourier terms", path,
                        who);
    if (p->kind == HESSFIT_PARAM_TORSION || p->kind == HESSFIT_PARAM_IMPROPER) {
        if (p->n_values < 3 || p->n_values % 3 != 0 || p->n_values > HESSFIT_FF_MAX_VALUES)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s holds %d values, not Fourier triples", path, who,
                            p->n_values);
        for (int t = 0; t < p->n_values / 3; t++) {
            double n = p->values[3 * t + 2];
            if (n != floor(n) || n < 1.0 || n >= 1000.0)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: periodicity %g of term %d is not a positive integer",
                                path, who, n, t + 1);
        }
    } else if (p->n_values != 2) {
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s holds %d values, not 2", path, who, p->n_values);
    }
    for (int k = 0; k < p->n_values; k++)
        if (!isfinite(p->values[k]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: %s: value %d is %g", path, who, k + 1, p->values[k]);
    return HESSFIT_SUCCESS;
}

static const char *amber_type(const char *t)
{
    return strcmp(t, HESSFIT_FF_WILDCARD) == 0 ? "X" : t;
}

/* "c -c4-ca" from the types. */
static void types_field(const hessfit_ff_param *p, char *out)
{
    int n = 0;
    for (int k = 0; k < p->n_types; k++)
        n += sprintf(out + n, k + 1 < p->n_types ? "%-2s-" : "%-2s", amber_type(p->types[k]));
}

static hessfit_status write_label(hf_buf *b, const hessfit_ff_param *p)
{
    hessfit_status st = HESSFIT_SUCCESS;
    if (p->label[0] != '\0')
        st = hf_buf_printf(b, "  %s", p->label);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_append(b, "\n", 1);
    return st;
}

static hessfit_status write_section(hf_buf *b, const hessfit_forcefield *ff, hessfit_param_kind kind)
{
    hessfit_status st = HESSFIT_SUCCESS;
    for (int i = 0; i < ff->n_params && st == HESSFIT_SUCCESS; i++) {
        const hessfit_ff_param *p = &ff->params[i];
        char types[16], x[48], y[48], z[48];
        if (p->kind != kind)
            continue;
        types_field(p, types);
        switch (kind) {
        case HESSFIT_PARAM_BOND:
        case HESSFIT_PARAM_ANGLE:
            format_number(x, sizeof x, p->values[0], 4);
            format_number(y, sizeof y, p->values[1], 4);
            st = hf_buf_printf(b, kind == HESSFIT_PARAM_BOND ? "%s %11s %9s" : "%s %10s %10s", types, x, y);
            if (st == HESSFIT_SUCCESS)
                st = write_label(b, p);
            break;
        case HESSFIT_PARAM_TORSION:
        case HESSFIT_PARAM_IMPROPER:
            for (int t = 0; t < p->n_values / 3 && st == HESSFIT_SUCCESS; t++) {
                double pn = p->values[3 * t + 2] * (t + 1 < p->n_values / 3 ? -1.0 : 1.0);
                format_number(x, sizeof x, p->values[3 * t], 4);
                format_number(y, sizeof y, p->values[3 * t + 1], 3);
                format_number(z, sizeof z, pn, 3);
                if (kind == HESSFIT_PARAM_TORSION)
                    st = hf_buf_printf(b, "%s%4d %11s %9s %8s", types, 1, x, y, z);
                else
                    st = hf_buf_printf(b, "%s     %11s %9s %8s", types, x, y, z);
                if (st == HESSFIT_SUCCESS) {
                    if (t == 0)
                        st = write_label(b, p);
                    else
                        st = hf_buf_append(b, "\n", 1);
                }
            }
            break;
        default: /* vdw */
            format_number(x, sizeof x, p->values[0], 4);
            format_number(y, sizeof y, p->values[1], 4);
            st = hf_buf_printf(b, "  %-2s %13s %9s", p->types[0], x, y);
            if (st == HESSFIT_SUCCESS)
                st = write_label(b, p);
            break;
        }
    }
    return st;
}

/* Append line without a trailing "\r", then "\n". */
static hessfit_status append_line(hf_buf *b, const char *line)
{
    size_t n = strlen(line);
    hessfit_status st;
    if (n > 0 && line[n - 1] == '\r')
        n--;
    st = hf_buf_append(b, line, n);
    return st == HESSFIT_SUCCESS ? hf_buf_append(b, "\n", 1) : st;
}

hessfit_status hessfit_frcmod_write(const hessfit_forcefield *ff, const char *path)
{
    /* the sections after MASS, in AMBER's order, each after a blank line */
    static const struct {
        const char *header;
        hessfit_param_kind kind;
    } sections[] = {{"\nBOND\n", HESSFIT_PARAM_BOND},
                    {"\nANGLE\n", HESSFIT_PARAM_ANGLE},
                    {"\nDIHE\n", HESSFIT_PARAM_TORSION},
                    {"\nIMPROPER\n", HESSFIT_PARAM_IMPROPER},
                    {"\nNONBON\n", HESSFIT_PARAM_VDW}};
    hf_buf b = {0};
    hessfit_status st = HESSFIT_SUCCESS;
    int from_frcmod;
    if (ff == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_frcmod_write: %s is NULL", ff == NULL ? "ff" : "path");
    for (int i = 0; i < ff->n_params; i++) {
        st = check_writable(&ff->params[i], i, path);
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    from_frcmod = ff->format == HESSFIT_FF_FRCMOD && ff->lines != NULL && ff->n_lines > 0;
    /* Title, the comment lines before the first section, and the MASS lines, as read. */
    if (from_frcmod) {
        int in_mass = 0;
        st = append_line(&b, ff->lines[0]);
        for (int i = 1; i < ff->n_lines && st == HESSFIT_SUCCESS; i++) {
            const char *s = ff->lines[i];
            int unsupported;
            if (!hf_is_blank(s) && keyword_section(s, &unsupported) != SEC_NONE)
                break;
            if (hf_skip_space(s)[0] == '#')
                st = append_line(&b, s);
        }
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_append(&b, "MASS\n", 5);
        for (int i = 1; i < ff->n_lines && st == HESSFIT_SUCCESS; i++) {
            const char *s = ff->lines[i];
            int unsupported;
            if (in_mass) {
                if (hf_is_blank(s))
                    in_mass = 0;
                else
                    st = append_line(&b, s);
            } else if (!hf_is_blank(s) && hf_skip_space(s)[0] != '#' && keyword_section(s, &unsupported) == SEC_MASS) {
                in_mass = 1;
            } else if (!hf_is_blank(s) && hf_skip_space(s)[0] != '#' && keyword_section(s, &unsupported) != SEC_NONE) {
                /* another section: skip its data lines up to the blank line */
                while (i + 1 < ff->n_lines && !hf_is_blank(ff->lines[i + 1]))
                    i++;
            }
        }
    } else {
        st = hf_buf_printf(&b, "hessfit: parameters of %s\nMASS\n", ff->path != NULL ? ff->path : "a force field");
    }
    for (size_t k = 0; k < sizeof sections / sizeof sections[0] && st == HESSFIT_SUCCESS; k++) {
        st = hf_buf_append(&b, sections[k].header, strlen(sections[k].header));
        if (st == HESSFIT_SUCCESS)
            st = write_section(&b, ff, sections[k].kind);
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_append(&b, "\n", 1);
    if (st == HESSFIT_SUCCESS)
        st = hessfit_atomic_write_buffer(path, b.data, b.len);
    hf_buf_free(&b);
    return st;
}
