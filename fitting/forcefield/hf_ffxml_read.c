/*
 * OpenMM ForceField XML as an input force field (hessfit_ffxml_read, hessfit_forcefield.h): a small
 * XML scanner (elements, attributes with the five predefined entities and numeric character
 * references, comments, processing instructions, CDATA; text is skipped) and the mapping of the
 * standard forces to hessfit's parameters in canonical units.
 */
#include "hessfit_forcefield.h"
#include "hessfit_units.h"
#include "hf_ff_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XML_MAX_ATTRS 64
#define XML_MAX_DEPTH 32
#define XML_NAME_LEN 64
#define XML_VALUE_LEN 256

typedef struct xml_attr {
    char name[XML_NAME_LEN];
    char value[XML_VALUE_LEN];
} xml_attr;

typedef struct xml_element {
    char name[XML_NAME_LEN];
    xml_attr attrs[XML_MAX_ATTRS];
    int n_attrs, line;
    const char *parent; /* the enclosing element's name, "" at the top */
} xml_element;

typedef struct ffxml_reader {
    const char *path;
    hessfit_forcefield *ff;
    size_t cap;
    int n_types;
    char (*type_names)[XML_NAME_LEN];
    char (*type_classes)[HESSFIT_FF_TYPE_LEN];
    size_t type_cap;
    char ordering[16]; /* the enclosing PeriodicTorsionForce's: "default" or "amber" */
} ffxml_reader;

static const char *attr(const xml_element *e, const char *name)
{
    for (int k = 0; k < e->n_attrs; k++)
        if (strcmp(e->attrs[k].name, name) == 0)
            return e->attrs[k].value;
    return NULL;
}

static hessfit_status bad(const ffxml_reader *r, const xml_element *e, hessfit_status st, const char *what)
{
    return hessfit_error(st, "%s:%d: <%s>: %s", r->path, e->line, e->name, what);
}

/* A number attribute (required). */
static hessfit_status number(const ffxml_reader *r, const xml_element *e, const char *name, double *out)
{
    const char *s = attr(e, name);
    char *end, msg[160];
    if (s == NULL) {
        snprintf(msg, sizeof msg, "no %s attribute", name);
        return bad(r, e, HESSFIT_ERROR_INVALID_ARGUMENT, msg);
    }
    errno = 0;
    *out = strtod(s, &end);
    while (end != s && isspace((unsigned char)*end))
        end++;
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(*out)) {
        snprintf(msg, sizeof msg, "%s=\"%.60s\" is not a finite number", name, s);
        return bad(r, e, HESSFIT_ERROR_PARSE, msg);
    }
    return HESSFIT_SUCCESS;
}

/* ---- the scanner -------------------------------------------------------------------------------- */

/* Decode the entities of s[0..n) into out (XML_VALUE_LEN). */
static int decode(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '&') {
            static const struct {
                const char *name;
                char c;
            } ents[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
            size_t k = 0;
            for (; k < sizeof ents / sizeof ents[0]; k++)
                if (n - i - 1 >= strlen(ents[k].name) && strncmp(s + i + 1, ents[k].name, strlen(ents[k].name)) == 0)
                    break;
            if (k < sizeof ents / sizeof ents[0]) {
                c = ents[k].c;
                i += strlen(ents[k].name);
            } else if (i + 2 < n && s[i + 1] == '#') {
                char *end;
                long v = s[i + 2] == 'x' ? strtol(s + i + 3, &end, 16) : strtol(s + i + 2, &end, 10);
                if (*end != ';' || v <= 0 || v > 127)
                    return 0; /* only ASCII character references */
                c = (char)v;
                i = (size_t)(end - s);
            } else {
                return 0;
            }
        }
        if (o + 1 >= XML_VALUE_LEN)
            return 0;
        out[o++] = c;
    }
    out[o] = '\0';
    return 1;
}

typedef hessfit_status (*element_fn)(ffxml_reader *r, const xml_element *e);

/* Scan text, calling fn for every start (or empty) element with its parent's name. */
static hessfit_status scan(ffxml_reader *r, const char *text, element_fn fn)
{
    char stack[XML_MAX_DEPTH][XML_NAME_LEN];
    int depth = 0, line = 1;
    xml_element *e = malloc(sizeof *e);
    hessfit_status st = HESSFIT_SUCCESS;
    const char *s = text;
    if (e == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", r->path);
#define ADVANCE(p)                                                                                                     \
    do {                                                                                                               \
        for (; s < (p); s++)                                                                                           \
            line += *s == '\n';                                                                                        \
    } while (0)
#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        st = hessfit_error(HESSFIT_ERROR_PARSE, __VA_ARGS__);                                                          \
        goto done;                                                                                                     \
    } while (0)
    while (*s != '\0') {
        const char *lt = strchr(s, '<'), *end;
        if (lt == NULL) {
            ADVANCE(s + strlen(s));
            break;
        }
        ADVANCE(lt);
        static const struct {
            const char *open, *close;
        } skips[] = {{"<!--", "-->"}, {"<?", "?>"}, {"<![CDATA[", "]]>"}, {"<!DOCTYPE", ">"}};
        size_t k = 0;
        for (; k < sizeof skips / sizeof skips[0]; k++)
            if (strncmp(s, skips[k].open, strlen(skips[k].open)) == 0)
                break;
        if (k < sizeof skips / sizeof skips[0]) {
            if ((end = strstr(s + strlen(skips[k].open), skips[k].close)) == NULL)
                FAIL("%s:%d: '%s' without its '%s'", r->path, line, skips[k].open, skips[k].close);
            ADVANCE(end + strlen(skips[k].close));
            continue;
        }
        if (s[1] == '/') { /* an end tag */
            const char *p = s + 2, *q = p;
            while (*q && !isspace((unsigned char)*q) && *q != '>')
                q++;
            if (depth == 0 || (size_t)(q - p) != strlen(stack[depth - 1]) || strncmp(p, stack[depth - 1], (size_t)(q - p)) != 0)
                FAIL("%s:%d: end tag </%.*s> does not close <%s>", r->path, line, (int)(q - p > 40 ? 40 : q - p), p,
                     depth > 0 ? stack[depth - 1] : "(nothing)");
            if ((end = strchr(q, '>')) == NULL)
                FAIL("%s:%d: unterminated end tag", r->path, line);
            depth--;
            ADVANCE(end + 1);
            continue;
        }
        /* a start tag: name, attributes, '>' or '/>' */
        const char *p = s + 1, *q = p;
        int start_line = line;
        while (*q && !isspace((unsigned char)*q) && *q != '>' && *q != '/')
            q++;
        if (q == p || (size_t)(q - p) >= XML_NAME_LEN)
            FAIL("%s:%d: bad element name", r->path, line);
        memcpy(e->name, p, (size_t)(q - p));
        e->name[q - p] = '\0';
        e->n_attrs = 0;
        e->line = start_line;
        e->parent = depth > 0 ? stack[depth - 1] : "";
        int empty = 0;
        for (;;) {
            while (*q && isspace((unsigned char)*q))
                line += *q++ == '\n';
            if (*q == '>' || (*q == '/' && q[1] == '>')) {
                empty = *q == '/';
                q += empty ? 2 : 1;
                break;
            }
            const char *n0 = q;
            while (*q && *q != '=' && !isspace((unsigned char)*q) && *q != '>')
                q++;
            const char *n1 = q;
            while (*q && isspace((unsigned char)*q))
                line += *q++ == '\n';
            if (*q != '=' || n1 == n0 || (size_t)(n1 - n0) >= XML_NAME_LEN || e->n_attrs == XML_MAX_ATTRS)
                FAIL("%s:%d: <%s>: malformed attribute", r->path, line, e->name);
            q++;
            while (*q && isspace((unsigned char)*q))
                line += *q++ == '\n';
            char quote = *q;
            const char *v0 = q + 1, *v1;
            if ((quote != '"' && quote != '\'') || (v1 = strchr(v0, quote)) == NULL)
                FAIL("%s:%d: <%s>: attribute %.*s without a quoted value", r->path, line, e->name, (int)(n1 - n0), n0);
            xml_attr *a = &e->attrs[e->n_attrs++];
            memcpy(a->name, n0, (size_t)(n1 - n0));
            a->name[n1 - n0] = '\0';
            if (!decode(v0, (size_t)(v1 - v0), a->value))
                FAIL("%s:%d: <%s>: attribute %s: a bad entity or a value longer than %d characters", r->path, line,
                     e->name, a->name, XML_VALUE_LEN - 1);
            for (const char *c = v0; c < v1; c++)
                line += *c == '\n';
            q = v1 + 1;
        }
        s = q;
        if ((st = fn(r, e)) != HESSFIT_SUCCESS)
            goto done;
        if (!empty) {
            if (depth == XML_MAX_DEPTH)
                FAIL("%s:%d: elements nested deeper than %d", r->path, start_line, XML_MAX_DEPTH);
            snprintf(stack[depth++], XML_NAME_LEN, "%s", e->name);
        }
    }
    if (depth > 0)
        FAIL("%s:%d: the file ends inside <%s>", r->path, line, stack[depth - 1]);
#undef ADVANCE
#undef FAIL
done:
    free(e);
    return st;
}

/* ---- the force field ---------------------------------------------------------------------------- */

/* The class an entry names by its attribute cls_key (a class) or type_key (a type: its class), "*"
 * for "" (any class). */
static hessfit_status entry_class(const ffxml_reader *r, const xml_element *e, const char *cls_key, const char *type_key,
                                  char out[HESSFIT_FF_TYPE_LEN])
{
    char msg[200];
    const char *c = attr(e, cls_key), *key = cls_key;
    if (c == NULL) {
        const char *t = attr(e, type_key);
        key = type_key;
        if (t == NULL) {
            snprintf(msg, sizeof msg, "neither %s nor %s", cls_key, type_key);
            return bad(r, e, HESSFIT_ERROR_INVALID_ARGUMENT, msg);
        }
        if (t[0] != '\0') {
            for (int i = 0; i < r->n_types; i++)
                if (strcmp(r->type_names[i], t) == 0) {
                    snprintf(out, HESSFIT_FF_TYPE_LEN, "%s", r->type_classes[i]);
                    return HESSFIT_SUCCESS;
                }
            snprintf(msg, sizeof msg, "%s=\"%.60s\" is not a type of <AtomTypes>", key, t);
            return bad(r, e, HESSFIT_ERROR_INVALID_ARGUMENT, msg);
        }
        c = t;
    }
    if (strlen(c) >= HESSFIT_FF_TYPE_LEN) {
        snprintf(msg, sizeof msg, "%s=\"%.60s\": hessfit holds classes of at most %d characters", key, c,
                 HESSFIT_FF_TYPE_LEN - 1);
        return bad(r, e, HESSFIT_ERROR_UNSUPPORTED, msg);
    }
    snprintf(out, HESSFIT_FF_TYPE_LEN, "%s", c[0] != '\0' ? c : HESSFIT_FF_WILDCARD);
    return HESSFIT_SUCCESS;
}

static hessfit_status add_type(ffxml_reader *r, const xml_element *e)
{
    const char *name = attr(e, "name"), *cls = attr(e, "class");
    if (name == NULL || cls == NULL)
        return bad(r, e, HESSFIT_ERROR_INVALID_ARGUMENT, name == NULL ? "no name attribute" : "no class attribute");
    if (strlen(name) >= XML_NAME_LEN || strlen(cls) >= HESSFIT_FF_TYPE_LEN || cls[0] == '\0')
        return bad(r, e, HESSFIT_ERROR_UNSUPPORTED, "a type name longer than 63 characters, or a class that is empty or "
                                                    "longer than hessfit's 7");
    if ((size_t)r->n_types == r->type_cap) {
        size_t cap = r->type_cap ? 2 * r->type_cap : 64;
        void *a = realloc(r->type_names, cap * sizeof *r->type_names), *b;
        if (a == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu atom types", r->path, cap);
        r->type_names = a;
        if ((b = realloc(r->type_classes, cap * sizeof *r->type_classes)) == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu atom types", r->path, cap);
        r->type_classes = b;
        r->type_cap = cap;
    }
    if (strncmp(name, "opls_", 5) == 0)
        r->ff->geometric_combining = 1; /* OPLS-AA (LigParGen, foyer) */
    snprintf(r->type_names[r->n_types], XML_NAME_LEN, "%s", name);
    snprintf(r->type_classes[r->n_types++], HESSFIT_FF_TYPE_LEN, "%s", cls);
    return HESSFIT_SUCCESS;
}

static hessfit_status add_param(ffxml_reader *r, const xml_element *e, hessfit_param_kind kind, int n_types,
                                const double *values, int n_values)
{
    hessfit_ff_param p;
    hessfit_status st = HESSFIT_SUCCESS;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.n_types = n_types;
    p.n_values = n_values;
    p.line = e->line;
    p.substructure = -1;
    p.improper_form = HESSFIT_IMPROPER_FOURIER;
    if (kind == HESSFIT_PARAM_IMPROPER) /* the atom order OpenMM gives its dihedral (hessfit_typing.h) */
        snprintf(p.label, sizeof p.label, "%s", r->ordering);
    memcpy(p.values, values, (size_t)n_values * sizeof *values);
    if (kind == HESSFIT_PARAM_VDW) { /* an <Atom> names one class or type */
        st = entry_class(r, e, "class", "type", p.types[0]);
        if (st == HESSFIT_SUCCESS && strcmp(p.types[0], HESSFIT_FF_WILDCARD) == 0)
            return bad(r, e, HESSFIT_ERROR_INVALID_ARGUMENT, "an empty class or type");
    }
    for (int k = 0; k < n_types && st == HESSFIT_SUCCESS && kind != HESSFIT_PARAM_VDW; k++) {
        char cls[16], type[16];
        snprintf(cls, sizeof cls, "class%d", k + 1);
        snprintf(type, sizeof type, "type%d", k + 1);
        st = entry_class(r, e, cls, type, p.types[k]);
    }
    return st == HESSFIT_SUCCESS ? hf_ff_add_param(r->ff, &r->cap, &p) : st;
}

/* The Fourier triples of a <Proper> or <Improper>: periodicityN, phaseN, kN for N = 1, 2, ... */
static hessfit_status torsion(ffxml_reader *r, const xml_element *e, hessfit_param_kind kind)
{
    double v[HESSFIT_FF_MAX_VALUES];
    int n = 0;
    char key[3][16];
    for (int t = 1;; t++) {
        snprintf(key[0], sizeof key[0], "k%d", t);
        snprintf(key[1], sizeof key[1], "phase%d", t);
        snprintf(key[2], sizeof key[2], "periodicity%d", t);
        if (attr(e, key[2]) == NULL)
            break;
        if (n + 3 > HESSFIT_FF_MAX_VALUES)
            return bad(r, e, HESSFIT_ERROR_UNSUPPORTED, "more than 6 periodic terms");
        double k, phase, per;
        hessfit_status st;
        if ((st = number(r, e, key[0], &k)) != HESSFIT_SUCCESS || (st = number(r, e, key[1], &phase)) != HESSFIT_SUCCESS ||
            (st = number(r, e, key[2], &per)) != HESSFIT_SUCCESS)
            return st;
        if (per != floor(per) || per < 1.0 || per > 1000.0)
            return bad(r, e, HESSFIT_ERROR_INVALID_ARGUMENT, "a periodicity that is not a positive integer");
        v[n++] = k * HESSFIT_KJ_TO_KCAL;
        v[n++] = phase * HESSFIT_RAD_TO_DEG;
        v[n++] = per;
    }
    if (n == 0)
        return bad(r, e, HESSFIT_ERROR_INVALID_ARGUMENT, "no periodicity1");
    return add_param(r, e, kind, 4, v, n);
}

static hessfit_status on_element(ffxml_reader *r, const xml_element *e)
{
    const char *parent = e->parent;
    double v[2];
    hessfit_status st;
    /* the elements whose children are read (or skipped) below; the last is PeriodicTorsionForce */
    static const char *const containers[] = {"Info", "Residues", "Patches", "AtomTypes", "HarmonicBondForce",
                                             "HarmonicAngleForce", "PeriodicTorsionForce"};
    const size_t n_containers = sizeof containers / sizeof containers[0];
    if (strcmp(parent, "") == 0) {
        const char *rule = attr(e, "combining_rule");
        if (strcmp(e->name, "ForceField") != 0)
            return bad(r, e, HESSFIT_ERROR_PARSE, "not an OpenMM ForceField file (its root element is not <ForceField>)");
        if (rule != NULL && strcmp(rule, "geometric") == 0)
            r->ff->geometric_combining = 1;
        return HESSFIT_SUCCESS;
    }
    if (strcmp(parent, "ForceField") == 0) {
        for (size_t k = 0; k < n_containers; k++)
            if (strcmp(e->name, containers[k]) == 0) {
                const char *ordering = attr(e, "ordering");
                if (k == n_containers - 1 && ordering != NULL && strcmp(ordering, "default") != 0 && strcmp(ordering, "amber") != 0)
                    return bad(r, e, HESSFIT_ERROR_UNSUPPORTED, "torsion ordering other than \"default\" and \"amber\"");
                if (k == n_containers - 1)
                    snprintf(r->ordering, sizeof r->ordering, "%s", ordering != NULL ? ordering : "default");
                return HESSFIT_SUCCESS;
            }
        if (strcmp(e->name, "NonbondedForce") == 0) {
            if ((st = number(r, e, "coulomb14scale", &r->ff->coulomb14_scale)) != HESSFIT_SUCCESS ||
                (st = number(r, e, "lj14scale", &r->ff->lj14_scale)) != HESSFIT_SUCCESS)
                return st;
            r->ff->has_14_scales = 1;
            return HESSFIT_SUCCESS;
        }
        return bad(r, e, HESSFIT_ERROR_UNSUPPORTED,
                   strcmp(e->name, "LennardJonesForce") == 0 || strcmp(e->name, "CustomNonbondedForce") == 0
                       ? "not supported: hessfit reads the Lennard-Jones parameters of a NonbondedForce only (an "
                         "OPLS-AA file whose NonbondedForce holds them, with \"opls_\" types as LigParGen writes, is read "
                         "with geometric combining; else an frcmod with `combining = geometric` and `scale14 = 0.5 0.5`)"
                       : "not supported: hessfit reads AtomTypes, HarmonicBondForce, HarmonicAngleForce, "
                         "PeriodicTorsionForce and NonbondedForce");
    }
    if (strcmp(parent, "AtomTypes") == 0 && strcmp(e->name, "Type") == 0)
        return add_type(r, e);
    if (strcmp(parent, "HarmonicBondForce") == 0 && strcmp(e->name, "Bond") == 0) {
        if ((st = number(r, e, "k", &v[0])) != HESSFIT_SUCCESS || (st = number(r, e, "length", &v[1])) != HESSFIT_SUCCESS)
            return st;
        v[0] = 0.5 * v[0] * HESSFIT_KJ_PER_MOL_PER_NM2_TO_KCAL_PER_MOL_PER_A2; /* OpenMM's E = k/2 (r - r0)^2 */
        v[1] *= HESSFIT_NM_TO_ANGSTROM;
        return add_param(r, e, HESSFIT_PARAM_BOND, 2, v, 2);
    }
    if (strcmp(parent, "HarmonicAngleForce") == 0 && strcmp(e->name, "Angle") == 0) {
        if ((st = number(r, e, "k", &v[0])) != HESSFIT_SUCCESS || (st = number(r, e, "angle", &v[1])) != HESSFIT_SUCCESS)
            return st;
        v[0] = 0.5 * v[0] * HESSFIT_KJ_PER_MOL_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2;
        v[1] *= HESSFIT_RAD_TO_DEG;
        return add_param(r, e, HESSFIT_PARAM_ANGLE, 3, v, 2);
    }
    if (strcmp(parent, "PeriodicTorsionForce") == 0 && (strcmp(e->name, "Proper") == 0 || strcmp(e->name, "Improper") == 0))
        return torsion(r, e, strcmp(e->name, "Proper") == 0 ? HESSFIT_PARAM_TORSION : HESSFIT_PARAM_IMPROPER);
    if (strcmp(parent, "NonbondedForce") == 0 && strcmp(e->name, "Atom") == 0) {
        if ((st = number(r, e, "sigma", &v[0])) != HESSFIT_SUCCESS || (st = number(r, e, "epsilon", &v[1])) != HESSFIT_SUCCESS)
            return st;
        v[0] /= HESSFIT_RSTAR_A_TO_LJ_SIGMA_NM; /* sigma (nm) -> R* (A) */
        v[1] *= HESSFIT_KJ_TO_KCAL;
        return add_param(r, e, HESSFIT_PARAM_VDW, 1, v, 2);
    }
    if (strcmp(parent, "NonbondedForce") == 0 && strcmp(e->name, "UseAttributeFromResidue") == 0)
        return HESSFIT_SUCCESS; /* charges come from the structures */
    if (strcmp(parent, "Residues") == 0 || strcmp(parent, "Residue") == 0 || strcmp(parent, "Patches") == 0 ||
        strcmp(parent, "Patch") == 0 || strcmp(parent, "Info") == 0 || strcmp(parent, "AddAtom") == 0)
        return HESSFIT_SUCCESS;
    {
        char msg[160];
        snprintf(msg, sizeof msg, "unexpected inside <%s>", parent);
        return bad(r, e, HESSFIT_ERROR_UNSUPPORTED, msg);
    }
}

hessfit_status hessfit_ffxml_read(const char *path, hessfit_forcefield *ff)
{
    hessfit_forcefield tmp;
    hf_buf text = {0};
    ffxml_reader r;
    memset(&tmp, 0, sizeof tmp);
    hessfit_status st = hf_ff_read_begin("hessfit_ffxml_read", path, ff, HESSFIT_FF_FFXML, "", &tmp);
    if (st != HESSFIT_SUCCESS)
        return st;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.ff = &tmp;
    for (int i = 0; i < tmp.n_lines && st == HESSFIT_SUCCESS; i++)
        st = hf_buf_printf(&text, "%s\n", tmp.lines[i]);
    if (st == HESSFIT_SUCCESS)
        st = scan(&r, text.data, on_element);
    if (st == HESSFIT_SUCCESS && tmp.n_params == 0)
        st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: no parameters (no HarmonicBondForce, HarmonicAngleForce, "
                           "PeriodicTorsionForce or NonbondedForce entries)", path);
    hf_buf_free(&text);
    free(r.type_names);
    free(r.type_classes);
    if (st != HESSFIT_SUCCESS) {
        hessfit_forcefield_free(&tmp);
        return st;
    }
    *ff = tmp;
    return HESSFIT_SUCCESS;
}
