/* OpenMM ForceField XML export of a typed training set (hessfit_ffxml.h): one atom type per atom,
 * one residue template per molecule, one explicit entry per term. */
#include "hessfit_ffxml.h"
#include "hessfit_elements.h"
#include "hessfit_units.h"
#include "hf_ff_internal.h"
#include "hf_pdb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FFXML_NAME_LEN 64

/* Harmonic improper as a CustomTorsionForce: k d^2, d = |theta - theta0| wrapped into [0, pi]. */
#define FFXML_HARMONIC_IMPROPER_ENERGY "k*d^2; d=min(a, 2*pi-a); a=abs(theta-theta0); pi=3.141592653589793"

/* The molecules' names in the file: letters, digits, '_', '.', '+' kept, anything else '_'. */
static void base_name(const hessfit_molecule *mol, int k, char *out, size_t size)
{
    size_t n = 0;
    const char *s = mol->name != NULL ? mol->name : "";
    for (; *s && n + 1 < size && n < 40; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                 c == '+';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, size, "mol%d", k);
}

static hessfit_status molecule_names(const hessfit_molecule *mols, int n_mols, char (*names)[FFXML_NAME_LEN])
{
    for (int k = 0; k < n_mols; k++) {
        char base[FFXML_NAME_LEN];
        base_name(&mols[k], k, base, sizeof base);
        snprintf(names[k], FFXML_NAME_LEN, "%s", base);
        for (long attempt = 0;; attempt++) {
            int clash = 0;
            for (int j = 0; j < k && !clash; j++)
                clash = strcmp(names[j], names[k]) == 0;
            if (!clash)
                break;
            if (attempt > 1000)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "molecule %d: no unique name from '%s'", k, base);
            /* the base cut so that "_<number>" always fits (at most 14 characters here) */
            snprintf(names[k], FFXML_NAME_LEN, "%.*s_%ld", FFXML_NAME_LEN - 16, base, k + attempt * (long)n_mols);
        }
    }
    return HESSFIT_SUCCESS;
}

/* An XML comment: "--" may not appear inside one, nor '-' before its end. */
static hessfit_status put_comment(hf_buf *b, const char *indent, const char *text)
{
    hessfit_status st = hf_buf_printf(b, "%s<!-- ", indent);
    char prev = ' ';
    for (const char *s = text; *s && st == HESSFIT_SUCCESS; s++) {
        char c = (unsigned char)*s < 0x20 ? ' ' : *s;
        if (c == '-' && prev == '-')
            st = hf_buf_append(b, " ", 1);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_append(b, &c, 1);
        prev = c;
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_append(b, " -->\n", 5); /* the space keeps a final '-' off "-->" */
    return st;
}

/* ---- per-molecule bond look-up and duplicate checks ------------------------------------------- */

typedef struct term_key {
    int a[5]; /* kind, then the atoms in a canonical order */
    int term;
} term_key;

static int cmp_key(const void *x, const void *y)
{
    const term_key *p = x, *q = y;
    for (int k = 0; k < 5; k++)
        if (p->a[k] != q->a[k])
            return p->a[k] < q->a[k] ? -1 : 1;
    return 0;
}

static int cmp_int2(const void *x, const void *y)
{
    const int *p = x, *q = y;
    if (p[0] != q[0])
        return p[0] < q[0] ? -1 : 1;
    return p[1] < q[1] ? -1 : p[1] > q[1];
}

static int bonded(const int *pairs, int n_pairs, int i, int j)
{
    int key[2] = {i < j ? i : j, i < j ? j : i};
    return bsearch(key, pairs, (size_t)n_pairs, 2 * sizeof(int), cmp_int2) != NULL;
}

/* The key two terms on the same atoms share (a torsion read either way, an improper by its centre
 * and its neighbour set). */
static term_key key_of(const hessfit_typed_term *t, int centre, int index)
{
    term_key k;
    int *a = k.a + 1;
    k.term = index;
    k.a[0] = (int)t->kind;
    a[0] = a[1] = a[2] = a[3] = -1;
    switch (t->kind) {
    case HESSFIT_TERM_BOND:
        a[0] = t->atoms[0] < t->atoms[1] ? t->atoms[0] : t->atoms[1];
        a[1] = t->atoms[0] < t->atoms[1] ? t->atoms[1] : t->atoms[0];
        break;
    case HESSFIT_TERM_ANGLE:
        a[0] = t->atoms[0] < t->atoms[2] ? t->atoms[0] : t->atoms[2];
        a[1] = t->atoms[1];
        a[2] = t->atoms[0] < t->atoms[2] ? t->atoms[2] : t->atoms[0];
        break;
    case HESSFIT_TERM_TORSION: {
        int fwd = t->atoms[1] < t->atoms[2] || (t->atoms[1] == t->atoms[2] && t->atoms[0] <= t->atoms[3]);
        for (int m = 0; m < 4; m++)
            a[m] = fwd ? t->atoms[m] : t->atoms[3 - m];
        break;
    }
    default: { /* improper: centre, then the other three sorted */
        int n = 0, o[3];
        for (int m = 0; m < 4; m++)
            if (t->atoms[m] != centre && n < 3)
                o[n++] = t->atoms[m];
        for (int x = 0; x < 3; x++)
            for (int y = x + 1; y < 3; y++)
                if (o[y] < o[x]) {
                    int s = o[x];
                    o[x] = o[y];
                    o[y] = s;
                }
        a[0] = centre;
        a[1] = o[0];
        a[2] = o[1];
        a[3] = o[2];
        break;
    }
    }
    return k;
}

static void term_text(const hessfit_typed_term *t, const char *mol, char *out, size_t size)
{
    int n = hessfit_term_kind_atoms(t->kind), m = snprintf(out, size, "%s %s", hessfit_term_kind_name(t->kind), mol);
    for (int k = 0; k < n && m > 0 && (size_t)m < size; k++)
        m += snprintf(out + m, size - (size_t)m, "%s%d", k == 0 ? " " : "-", t->atoms[k]);
}

/* ---- the writer ----------------------------------------------------------------------------------- */

/* The parts of the file one molecule's template adds, in file order, and its entry counts. */
enum {
    PART_TYPES,
    PART_RESIDUE,
    PART_BONDS,
    PART_ANGLES,
    PART_TORSIONS,
    PART_AMBER_IMPROPERS, /* impropers in OpenMM's "amber" order (a2, a3, centre, a4): from an XML start */
    PART_HARMONIC,
    PART_NONBONDED,
    N_PARTS
};

typedef struct ffxml_out {
    hf_buf part[N_PARTS];
    int n_bonds, n_angles, n_torsions, n_harmonic, n_omitted;
} ffxml_out;

static void out_free(ffxml_out *o)
{
    for (int k = 0; k < N_PARTS; k++)
        hf_buf_free(&o->part[k]);
}

/* Same text in every part: the same atoms, types, bonds and parameters. */
static int same_text(const ffxml_out *a, const ffxml_out *b, int n_parts)
{
    for (int k = 0; k < n_parts; k++)
        if (a->part[k].len != b->part[k].len ||
            (a->part[k].len > 0 && memcmp(a->part[k].data, b->part[k].data, a->part[k].len) != 0))
            return 0;
    return 1;
}

static hessfit_status put_type_attrs(hf_buf *b, const char *mol, const int *atoms, int n)
{
    hessfit_status st = HESSFIT_SUCCESS;
    for (int k = 0; k < n && st == HESSFIT_SUCCESS; k++) {
        st = hf_buf_printf(b, " type%d=\"", k + 1);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_put_xml(b, mol);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(b, "-%d\"", atoms[k]);
    }
    return st;
}

/* A Fourier parameter's triples as periodicityN, phaseN [rad], kN [kJ/mol], and the end of the entry. */
static hessfit_status put_fourier(hf_buf *b, const hessfit_ff_param *p)
{
    hessfit_status st = HESSFIT_SUCCESS;
    for (int k = 0; k < p->n_values / 3 && st == HESSFIT_SUCCESS; k++)
        st = hf_buf_printf(b, " periodicity%d=\"%d\" phase%d=\"%s\" k%d=\"%s\"", k + 1, (int)p->values[3 * k + 2], k + 1,
                           hf_num(p->values[3 * k + 1] * HESSFIT_DEG_TO_RAD).s, k + 1,
                           hf_num(p->values[3 * k] * HESSFIT_KCAL_TO_KJ).s);
    return st == HESSFIT_SUCCESS ? hf_buf_printf(b, "/>\n") : st;
}

/* Check the parameter of a term and return it. */
static hessfit_status term_param(const char *path, const hessfit_forcefield *ff, const hessfit_typed_term *t, const char *what,
                            const hessfit_ff_param **out)
{
    const hessfit_ff_param *p;
    if (t->param < 0 || t->param >= ff->n_params)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: parameter index %d outside [0, %d)", path, what, t->param,
                        ff->n_params);
    p = &ff->params[t->param];
    if ((int)p->kind != (int)t->kind)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: parameter %d is a %s parameter", path, what, t->param,
                        hessfit_param_kind_name(p->kind));
    for (int k = 0; k < p->n_values; k++)
        if (!isfinite(p->values[k]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: %s: parameter %d value %d is %g", path, what, t->param, k + 1,
                            p->values[k]);
    if (t->kind == HESSFIT_TERM_BOND || t->kind == HESSFIT_TERM_ANGLE) {
        if (p->n_values != 2 && !(t->kind == HESSFIT_TERM_BOND && p->n_values == 3)) /* .fld bonds: {k, r0, mu} */
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: parameter %d holds %d values, not {k, x0}", path, what,
                            t->param, p->n_values);
    } else if (t->kind == HESSFIT_TERM_IMPROPER && p->improper_form == HESSFIT_IMPROPER_HARMONIC) {
        if (p->n_values != 1)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: harmonic improper parameter %d holds %d values, not {k}",
                            path, what, t->param, p->n_values);
    } else {
        if (p->n_values < 3 || p->n_values % 3 != 0 || p->n_values > HESSFIT_FF_MAX_VALUES)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: parameter %d holds %d values, not Fourier triples", path,
                            what, t->param, p->n_values);
        for (int k = 2; k < p->n_values; k += 3)
            if (p->values[k] != floor(p->values[k]) || p->values[k] < 1.0 || p->values[k] > 1000.0)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: parameter %d periodicity %g is not a positive integer",
                                path, what, t->param, p->values[k]);
    }
    *out = p;
    return HESSFIT_SUCCESS;
}

/* The NonbondedForce <Atom> of atom i: its charge, and the LJ sigma and epsilon of its type's vdw
 * parameter, converted as the fit model converts R* and eps (hessfit_model.h, "Slots"). */
static hessfit_status put_nonbonded_atom(const char *path, const hessfit_forcefield *ff, const hessfit_molecule *mol,
                                         int m, const char *name, int i, hf_buf *b)
{
    int p = -1;
    hessfit_status st = hessfit_forcefield_vdw_param(ff, mol->atom_types[i], &p);
    const double q = mol->partial_charges != NULL ? mol->partial_charges[i] : NAN;
    if (st != HESSFIT_SUCCESS)
        return hessfit_error(st, "%s: molecule %d (%s) atom %d: %s", path, m, name, i, hessfit_last_error());
    if (ff->params[p].n_values < 2 || !isfinite(ff->params[p].values[0]) || !isfinite(ff->params[p].values[1]))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "%s: molecule %d (%s) atom %d: vdw parameter %d (line %d) is not two finite values {R*, eps}",
                             path, m, name, i, p, ff->params[p].line);
    if (!isfinite(q))
        return hessfit_error(mol->partial_charges == NULL ? HESSFIT_ERROR_INVALID_ARGUMENT : HESSFIT_ERROR_NONFINITE,
                             "%s: molecule %d (%s) atom %d: %s", path, m, name, i,
                             mol->partial_charges == NULL ? "no partial charges (needed for the nonbonded force)"
                                                          : "its charge is not finite");
    st = hf_buf_printf(b, "  <Atom type=\"");
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_put_xml(b, name);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "-%d\" charge=\"%s\"", i, hf_num(q).s);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, " sigma=\"%s\"", hf_num(ff->params[p].values[0] * HESSFIT_RSTAR_A_TO_LJ_SIGMA_NM).s);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, " epsilon=\"%s\"/>\n", hf_num(ff->params[p].values[1] * HESSFIT_KCAL_TO_KJ).s);
    return st;
}

/* The PDB of one molecule: its atoms named as the template's (the element alone where that name
 * is longer than a PDB's 4 characters), residue = the template's name cut to 3 characters, and
 * the template's bonds. */
static hessfit_status put_pdb(const hessfit_molecule *mol, int m, const char *name, const int *pairs, int n_pairs,
                              hf_buf *b)
{
    hf_pdb_atom *atoms = malloc((size_t)mol->n_atoms * sizeof *atoms);
    char text[16];
    hessfit_status st;
    if (atoms == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "molecule %d: no memory for the PDB", m);
    for (int i = 0; i < mol->n_atoms; i++) {
        const char *symbol = hessfit_element_symbol(mol->atomic_numbers[i]);
        snprintf(text, sizeof text, "%s%d", symbol, i);
        snprintf(atoms[i].name, sizeof atoms[i].name, "%s", strlen(text) <= 4 ? text : symbol);
        atoms[i].element = symbol;
        for (int c = 0; c < 3; c++)
            atoms[i].xyz[c] = mol->coords[3 * i + c];
    }
    st = hf_buf_printf(b, "REMARK   1 hessfit ForceField XML export: molecule %d, residue template ", m + 1);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "%s\n", name);
    if (st == HESSFIT_SUCCESS)
        st = hf_pdb_put(b, name, atoms, mol->n_atoms, pairs, n_pairs);
    free(atoms);
    return st;
}

/* Molecule m's template named `name` into o (and its PDB into pdb, when not NULL). */
static hessfit_status write_molecule(const char *path, const hessfit_forcefield *ff, const hessfit_molecule *mol,
                                     const hessfit_typed_molecule *typed, int m, const char *name,
                                     const hessfit_ffxml_options *opt, ffxml_out *o, hf_buf *pdb)
{
    int *pairs = NULL, n_pairs = 0;
    term_key *keys = NULL;
    int *centre = NULL;
    hessfit_status st = HESSFIT_SUCCESS;
    char what[192];
    if (mol->n_atoms <= 0 || mol->atomic_numbers == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: molecule %d (%s) has no atoms", path, m, name);
    if (mol->atom_types == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: molecule %d (%s) has no force-field atom types", path, m, name);
    if (typed->n_terms < 0 || (typed->n_terms > 0 && typed->terms == NULL))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: molecule %d (%s): bad term list", path, m, name);
    pairs = malloc(2 * sizeof(int) * (size_t)(typed->n_terms + 1));
    keys = malloc(sizeof *keys * (size_t)(typed->n_terms + 1));
    centre = malloc(sizeof *centre * (size_t)(typed->n_terms + 1));
    if (pairs == NULL || keys == NULL || centre == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: molecule %d: no memory for %d terms", path, m, typed->n_terms);
        goto done;
    }
    /* Atoms and the bonds of the bond terms. */
    for (int i = 0; i < typed->n_terms; i++) {
        const hessfit_typed_term *t = &typed->terms[i];
        int n;
        if ((int)t->kind < 0 || (int)t->kind >= HESSFIT_NUM_TERM_KINDS) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: molecule %d term %d: unknown kind %d", path, m, i, (int)t->kind);
            goto done;
        }
        n = hessfit_term_kind_atoms(t->kind);
        term_text(t, name, what, sizeof what);
        for (int k = 0; k < n; k++) {
            if (t->atoms[k] < 0 || t->atoms[k] >= mol->n_atoms) {
                st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: term %d (%s): atom index %d outside [0, %d)", path, i,
                              what, t->atoms[k], mol->n_atoms);
                goto done;
            }
            for (int j = 0; j < k; j++)
                if (t->atoms[j] == t->atoms[k]) {
                    st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: term %d (%s) names atom %d twice", path, i, what,
                                  t->atoms[k]);
                    goto done;
                }
        }
        if (t->kind == HESSFIT_TERM_BOND) {
            pairs[2 * n_pairs] = t->atoms[0] < t->atoms[1] ? t->atoms[0] : t->atoms[1];
            pairs[2 * n_pairs + 1] = t->atoms[0] < t->atoms[1] ? t->atoms[1] : t->atoms[0];
            n_pairs++;
        }
    }
    qsort(pairs, (size_t)n_pairs, 2 * sizeof(int), cmp_int2);
    /* Terms along bonds; the centre of each improper; no two terms on the same atoms. */
    for (int i = 0; i < typed->n_terms; i++) {
        const hessfit_typed_term *t = &typed->terms[i];
        const int *a = t->atoms;
        term_text(t, name, what, sizeof what);
        centre[i] = -1;
        if ((t->kind == HESSFIT_TERM_ANGLE && !(bonded(pairs, n_pairs, a[0], a[1]) && bonded(pairs, n_pairs, a[1], a[2]))) ||
            (t->kind == HESSFIT_TERM_TORSION && !(bonded(pairs, n_pairs, a[0], a[1]) && bonded(pairs, n_pairs, a[1], a[2]) &&
                                             bonded(pairs, n_pairs, a[2], a[3])))) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                          "%s: term %d (%s) does not follow the bonds of the molecule's bond terms", path, i, what);
            goto done;
        }
        if (t->kind == HESSFIT_TERM_IMPROPER) {
            int ok[4];
            for (int k = 0; k < 4; k++) {
                ok[k] = 1;
                for (int j = 0; j < 4; j++)
                    if (j != k && !bonded(pairs, n_pairs, a[k], a[j]))
                        ok[k] = 0;
            }
            centre[i] = ok[0] ? a[0] : ok[3] ? a[3] : ff->format == HESSFIT_FF_FFXML && ok[2] ? a[2] : -1;
            if (centre[i] < 0) {
                st = hessfit_error(ok[1] || ok[2] ? HESSFIT_ERROR_UNSUPPORTED : HESSFIT_ERROR_INVALID_ARGUMENT,
                              ok[1] || ok[2] ? "%s: term %d (%s): its central atom is listed %s; OpenMM's improper "
                                               "ordering reproduces only a centre listed first or last"
                                             : "%s: term %d (%s): no atom is bonded to the other three%s",
                              path, i, what, ok[1] || ok[2] ? (ok[1] ? "second" : "third") : "");
                goto done;
            }
        }
        keys[i] = key_of(t, centre[i], i);
    }
    qsort(keys, (size_t)typed->n_terms, sizeof *keys, cmp_key);
    for (int i = 1; i < typed->n_terms; i++)
        if (cmp_key(&keys[i - 1], &keys[i]) == 0) {
            const hessfit_typed_term *t = &typed->terms[keys[i].term];
            term_text(t, name, what, sizeof what);
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                          "%s: terms %d and %d of molecule %d act on the same atoms (%s); OpenMM would apply only one",
                          path, keys[i - 1].term < keys[i].term ? keys[i - 1].term : keys[i].term,
                          keys[i - 1].term < keys[i].term ? keys[i].term : keys[i - 1].term, m, what);
            goto done;
        }
    /* Atom types and the residue template. */
    st = hf_buf_printf(&o->part[PART_RESIDUE], "  <Residue name=\"");
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_put_xml(&o->part[PART_RESIDUE], name);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&o->part[PART_RESIDUE], "\">\n");
    for (int i = 0; i < mol->n_atoms && st == HESSFIT_SUCCESS; i++) {
        const char *symbol = hessfit_element_symbol(mol->atomic_numbers[i]);
        if (symbol == NULL || mol->atom_types[i] == NULL) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: molecule %d (%s) atom %d: %s", path, m, name, i,
                          symbol == NULL ? "unknown element" : "no atom type");
            goto done;
        }
        st = hf_buf_printf(&o->part[PART_TYPES], "  <Type name=\"");
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_put_xml(&o->part[PART_TYPES], name);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(&o->part[PART_TYPES], "-%d\" class=\"", i);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_put_xml(&o->part[PART_TYPES], mol->atom_types[i]);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(&o->part[PART_TYPES], "\" element=\"%s\" mass=\"%s\"/>\n", symbol,
                                  hf_num(hessfit_element_average_mass(mol->atomic_numbers[i])).s);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(&o->part[PART_RESIDUE], "   <Atom name=\"%s%d\" type=\"", symbol, i);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_put_xml(&o->part[PART_RESIDUE], name);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(&o->part[PART_RESIDUE], "-%d\"/>\n", i);
    }
    for (int b = 0; b < n_pairs && st == HESSFIT_SUCCESS; b++)
        st = hf_buf_printf(&o->part[PART_RESIDUE], "   <Bond atomName1=\"%s%d\" atomName2=\"%s%d\"/>\n",
                              hessfit_element_symbol(mol->atomic_numbers[pairs[2 * b]]), pairs[2 * b],
                              hessfit_element_symbol(mol->atomic_numbers[pairs[2 * b + 1]]), pairs[2 * b + 1]);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&o->part[PART_RESIDUE], "  </Residue>\n");
    for (int i = 0; i < mol->n_atoms && st == HESSFIT_SUCCESS && opt->nonbonded; i++)
        st = put_nonbonded_atom(path, ff, mol, m, name, i, &o->part[PART_NONBONDED]);
    if (st == HESSFIT_SUCCESS && pdb != NULL)
        st = put_pdb(mol, m, name, pairs, n_pairs, pdb);
    if (st != HESSFIT_SUCCESS)
        goto done;
    /* One entry per term. */
    for (int i = 0; i < typed->n_terms && st == HESSFIT_SUCCESS; i++) {
        const hessfit_typed_term *t = &typed->terms[i];
        const hessfit_ff_param *p = NULL;
        hf_buf *b;
        term_text(t, name, what, sizeof what);
        if (t->rule == HESSFIT_MATCH_NO_TERM) {
            char text[320];
            b = &o->part[t->kind == HESSFIT_TERM_BOND    ? PART_BONDS
                         : t->kind == HESSFIT_TERM_ANGLE ? PART_ANGLES
                                                         : PART_TORSIONS];
            snprintf(text, sizeof text, "no term (the user chose none): %s%s%s", what, t->detail[0] ? ": " : "",
                     t->detail);
            st = put_comment(b, "  ", text);
            o->n_omitted++;
            continue;
        }
        st = term_param(path, ff, t, what, &p);
        if (st != HESSFIT_SUCCESS)
            goto done;
        switch (t->kind) {
        case HESSFIT_TERM_BOND:
            st = hf_buf_printf(&o->part[PART_BONDS], "  <Bond");
            if (st == HESSFIT_SUCCESS)
                st = put_type_attrs(&o->part[PART_BONDS], name, t->atoms, 2);
            if (st == HESSFIT_SUCCESS) /* OpenMM: E = k/2 (r - r0)^2 */
                st = hf_buf_printf(&o->part[PART_BONDS], " length=\"%s\" k=\"%s\"/>\n",
                                   hf_num(p->values[1] * HESSFIT_ANGSTROM_TO_NM).s, hf_num(2.0 * p->values[0] * HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2).s);
            o->n_bonds++;
            break;
        case HESSFIT_TERM_ANGLE:
            st = hf_buf_printf(&o->part[PART_ANGLES], "  <Angle");
            if (st == HESSFIT_SUCCESS)
                st = put_type_attrs(&o->part[PART_ANGLES], name, t->atoms, 3);
            if (st == HESSFIT_SUCCESS)
                st = hf_buf_printf(&o->part[PART_ANGLES], " angle=\"%s\" k=\"%s\"/>\n",
                                   hf_num(p->values[1] * HESSFIT_DEG_TO_RAD).s, hf_num(2.0 * p->values[0] * HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2).s);
            o->n_angles++;
            break;
        default: {
            int order[4];
            int is_improper = t->kind == HESSFIT_TERM_IMPROPER;
            if (is_improper && centre[i] == t->atoms[2]) {
                /* (a2, a3, c, a4), typed against an OpenMM XML: OpenMM's "amber" ordering of
                 * <Improper type1=c type2=a2 type3=a3 type4=a4> gives that dihedral back (per-atom types,
                 * so no two are equal and nothing is swapped) */
                const int amber[4] = {t->atoms[2], t->atoms[0], t->atoms[1], t->atoms[3]};
                b = &o->part[PART_AMBER_IMPROPERS];
                st = hf_buf_printf(b, "  <Improper");
                if (st == HESSFIT_SUCCESS)
                    st = put_type_attrs(b, name, amber, 4);
                if (st == HESSFIT_SUCCESS)
                    st = put_fourier(b, p);
                o->n_torsions++;
                break;
            }
            for (int k = 0; k < 4; k++) /* an improper with its centre last is written reversed */
                order[k] = is_improper && centre[i] != t->atoms[0] ? t->atoms[3 - k] : t->atoms[k];
            if (is_improper && p->improper_form == HESSFIT_IMPROPER_HARMONIC) {
                b = &o->part[PART_HARMONIC];
                st = hf_buf_printf(b, "  <Improper");
                if (st == HESSFIT_SUCCESS)
                    st = put_type_attrs(b, name, order, 4);
                if (st == HESSFIT_SUCCESS)
                    st = hf_buf_printf(b, " k=\"%s\" theta0=\"0\"/>\n",
                                          hf_num(p->values[0] * HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2).s);
                o->n_harmonic++;
                break;
            }
            b = &o->part[PART_TORSIONS];
            st = hf_buf_printf(b, is_improper ? "  <Improper" : "  <Proper");
            if (st == HESSFIT_SUCCESS)
                st = put_type_attrs(b, name, order, 4);
            if (st == HESSFIT_SUCCESS)
                st = put_fourier(b, p);
            o->n_torsions++;
            break;
        }
        }
    }
done:
    free(pairs);
    free(keys);
    free(centre);
    return st;
}

/* Geometric combining (the fit model's HESSFIT_COMBINE_GEOMETRIC): ForceField's NonbondedForce
 * combines by Lorentz-Berthelot, so the <Script> (run by createSystem after every generator, with
 * `sys` its System) moves the Lennard-Jones part to a CustomNonbondedForce with
 * sigma_ij = sqrt(sigma_i sigma_j), eps_ij = sqrt(eps_i eps_j) and one exclusion per exception of the
 * NonbondedForce, and gives each 1-4 exception the geometric sigma (its epsilon, lj14scale
 * sqrt(eps_i eps_j), is already the rule's). Free of '<', '>' and '&': no escaping as XML text. */
static const char geometric_script[] =
    "import math\n"
    "import openmm\n"
    "from openmm import unit\n"
    "hessfit_nb = [f for f in sys.getForces() if isinstance(f, openmm.NonbondedForce)][0]\n"
    "hessfit_lj = openmm.CustomNonbondedForce('4*epsilon*((sigma/r)^12 - (sigma/r)^6); sigma = sqrt(sigma1*sigma2); "
    "epsilon = sqrt(epsilon1*epsilon2)')\n"
    "hessfit_lj.addPerParticleParameter('sigma')\n"
    "hessfit_lj.addPerParticleParameter('epsilon')\n"
    "hessfit_method = {openmm.NonbondedForce.NoCutoff: openmm.CustomNonbondedForce.NoCutoff,\n"
    "                  openmm.NonbondedForce.CutoffNonPeriodic: openmm.CustomNonbondedForce.CutoffNonPeriodic}\n"
    "hessfit_lj.setNonbondedMethod(hessfit_method.get(hessfit_nb.getNonbondedMethod(),\n"
    "                                                 openmm.CustomNonbondedForce.CutoffPeriodic))\n"
    "hessfit_lj.setCutoffDistance(hessfit_nb.getCutoffDistance())\n"
    "hessfit_sigma = []\n"
    "for i in range(hessfit_nb.getNumParticles()):\n"
    "    q, s, e = hessfit_nb.getParticleParameters(i)\n"
    "    hessfit_sigma.append(s.value_in_unit(unit.nanometer))\n"
    "    hessfit_lj.addParticle([s, e])\n"
    "    hessfit_nb.setParticleParameters(i, q, s, 0.0)\n"
    "for k in range(hessfit_nb.getNumExceptions()):\n"
    "    i, j, qq, s, e = hessfit_nb.getExceptionParameters(k)\n"
    "    hessfit_lj.addExclusion(i, j)\n"
    "    hessfit_nb.setExceptionParameters(k, i, j, qq, math.sqrt(hessfit_sigma[i] * hessfit_sigma[j]), e)\n"
    "sys.addForce(hessfit_lj)\n";

typedef struct ffxml_template {
    int first;      /* the molecule that made it */
    ffxml_out text;
    hf_buf members; /* "1, 2" (1-based molecule numbers) */
} ffxml_template;

hessfit_status hessfit_ffxml_write(const char *path, const hessfit_forcefield *ff, const hessfit_molecule *mols,
                                   const hessfit_typed_molecule *typed, int n_mols, const hessfit_ffxml_options *options,
                                   int *n_templates)
{
    const hessfit_ffxml_options none = {0, 0, 1.0, 1.0, NULL};
    const hessfit_ffxml_options *opt = options != NULL ? options : &none;
    ffxml_template *tm = NULL;
    ffxml_out mine;
    hf_buf doc = {0}, *pdb = NULL, notes = {0};
    char (*names)[FFXML_NAME_LEN] = NULL;
    hessfit_status st;
    int n_t = 0, n_bonds = 0, n_angles = 0, n_torsions = 0, n_harmonic = 0, n_omitted = 0;
    if (path == NULL || ff == NULL || mols == NULL || typed == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_ffxml_write: %s is NULL",
                        path == NULL ? "path" : ff == NULL ? "ff" : mols == NULL ? "mols" : "typed");
    if (n_mols <= 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_ffxml_write(%s): %d molecules", path, n_mols);
    if (opt->nonbonded && (!(opt->coulomb14_scale >= 0.0 && opt->coulomb14_scale <= 1.0) ||
                           !(opt->lj14_scale >= 0.0 && opt->lj14_scale <= 1.0)))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: 1-4 scales %g and %g are not in [0, 1]", path,
                             opt->coulomb14_scale, opt->lj14_scale);
    memset(&mine, 0, sizeof mine);
    names = calloc((size_t)n_mols, sizeof *names);
    tm = calloc((size_t)n_mols, sizeof *tm);
    pdb = calloc((size_t)n_mols, sizeof *pdb);
    if (names == NULL || tm == NULL || pdb == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %d molecules", path, n_mols);
        goto done;
    }
    st = molecule_names(mols, n_mols, names);
    for (int m = 0; m < n_mols && st == HESSFIT_SUCCESS; m++) {
        hf_buf *my_pdb = opt->pdb_paths != NULL && opt->pdb_paths[m] != NULL ? &pdb[m] : NULL;
        int t = 0, same_graph = -1;
        /* an earlier template with the same text (atoms, types, bonds and every parameter) */
        for (; t < n_t && st == HESSFIT_SUCCESS; t++) {
            out_free(&mine);
            memset(&mine, 0, sizeof mine);
            if (my_pdb != NULL)
                hf_buf_free(my_pdb);
            st = write_molecule(path, ff, &mols[m], &typed[m], m, names[tm[t].first], opt, &mine, my_pdb);
            if (st == HESSFIT_SUCCESS && same_text(&mine, &tm[t].text, N_PARTS))
                break;
            if (st == HESSFIT_SUCCESS && same_graph < 0 && same_text(&mine, &tm[t].text, PART_RESIDUE + 1))
                same_graph = t;
        }
        if (st != HESSFIT_SUCCESS)
            break;
        if (t < n_t) { /* a conformer of template t */
            st = hf_buf_printf(&tm[t].members, ", %d", m + 1);
            continue;
        }
        out_free(&mine);
        memset(&mine, 0, sizeof mine);
        if (my_pdb != NULL)
            hf_buf_free(my_pdb);
        tm[n_t].first = m;
        st = write_molecule(path, ff, &mols[m], &typed[m], m, names[m], opt, &tm[n_t].text, my_pdb);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(&tm[n_t].members, "%d", m + 1);
        if (st == HESSFIT_SUCCESS && same_graph >= 0) {
            st = hf_buf_printf(&notes, " Templates %s and %s have the same atoms and bonds but not the same parameters: "
                                       "createSystem needs residueTemplates={residue: name} for their residues.",
                               names[tm[same_graph].first], names[m]);
        }
        n_bonds += tm[n_t].text.n_bonds;
        n_angles += tm[n_t].text.n_angles;
        n_torsions += tm[n_t].text.n_torsions;
        n_harmonic += tm[n_t].text.n_harmonic;
        n_omitted += tm[n_t].text.n_omitted;
        n_t++;
    }
    if (st != HESSFIT_SUCCESS)
        goto done;
    st = hf_buf_printf(&doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    {
        hf_buf comment = {0};
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(
                &comment,
                "Written by hessfit (hessfit_ffxml_write) from the force field %s for %d training molecule(s) in %d "
                "residue template(s): %d bond, %d angle, %d periodic torsion (proper or Fourier improper) and %d harmonic "
                "improper entries, %d terms without parameters left out. One atom type per atom (<template>-<atom index>, "
                "class = its force-field type) and one residue template per distinct molecule (molecules with the same "
                "atoms, types, bonds and parameters share one): these templates fit only the training molecules. Units "
                "nm, rad, kJ/mol, e; OpenMM's harmonic k = 2 x hessfit's k (E = k/2 (x - x0)^2). Harmonic impropers: "
                "CustomTorsionForce E = k d^2 (no 1/2), d = |theta - theta0| wrapped to [0, pi]. ",
                ff->path != NULL ? ff->path : "(unnamed)", n_mols, n_t, n_bonds, n_angles, n_torsions, n_harmonic,
                n_omitted);
        if (st == HESSFIT_SUCCESS && opt->nonbonded)
            st = hf_buf_printf(&comment,
                               "NonbondedForce: the fit model's Lennard-Jones (sigma = 2 R* / 2^(1/6), epsilon of the "
                               "atom type's vdw parameter) and charges, 1-2 and 1-3 pairs of the template bonds excluded, "
                               "1-4 pairs scaled by coulomb14scale %s and lj14scale %s, %s combining%s.",
                               hf_num(opt->coulomb14_scale).s, hf_num(opt->lj14_scale).s,
                               opt->geometric ? "geometric" : "Lorentz-Berthelot",
                               opt->geometric ? " (the Script at the end moves the Lennard-Jones part to a "
                                                "CustomNonbondedForce with sigma_ij = sqrt(sigma_i sigma_j) and sets the "
                                                "1-4 exceptions' sigma likewise; it converts every NonbondedForce particle "
                                                "of the System)"
                                              : "");
        else if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(&comment, "No nonbonded force (the fit model had nonbonded = off).");
        for (int t = 0; t < n_t && st == HESSFIT_SUCCESS; t++)
            st = hf_buf_printf(&comment, " %s = molecule%s %s;", names[tm[t].first],
                               strchr(tm[t].members.data, ',') ? "s" : "", tm[t].members.data);
        if (st == HESSFIT_SUCCESS && notes.len > 0)
            st = hf_buf_append(&comment, notes.data, notes.len);
        if (st == HESSFIT_SUCCESS)
            st = put_comment(&doc, "", comment.data);
        hf_buf_free(&comment);
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&doc, "<ForceField>\n");
    {
        /* each element with the entries of every template */
        char nonbonded_open[160];
        snprintf(nonbonded_open, sizeof nonbonded_open, " <NonbondedForce coulomb14scale=\"%s\"",
                 hf_num(opt->coulomb14_scale).s);
        snprintf(nonbonded_open + strlen(nonbonded_open), sizeof nonbonded_open - strlen(nonbonded_open),
                 " lj14scale=\"%s\">\n", hf_num(opt->lj14_scale).s);
        const struct {
            const char *open, *close;
            int needed; /* written when 1, or when a template has entries */
        } parts[N_PARTS] = {{" <AtomTypes>\n", " </AtomTypes>\n", 1},
                            {" <Residues>\n", " </Residues>\n", 1},
                            {" <HarmonicBondForce>\n", " </HarmonicBondForce>\n", 1},
                            {" <HarmonicAngleForce>\n", " </HarmonicAngleForce>\n", 1},
                            {" <PeriodicTorsionForce ordering=\"charmm\">\n", " </PeriodicTorsionForce>\n", 1},
                            {" <PeriodicTorsionForce ordering=\"amber\">\n", " </PeriodicTorsionForce>\n", 0},
                            {" <CustomTorsionForce energy=\"" FFXML_HARMONIC_IMPROPER_ENERGY "\" ordering=\"charmm\">\n"
                             "  <PerTorsionParameter name=\"k\"/>\n  <PerTorsionParameter name=\"theta0\"/>\n",
                             " </CustomTorsionForce>\n", 0},
                            {nonbonded_open, " </NonbondedForce>\n", opt->nonbonded}};
        for (int k = 0; k < N_PARTS && st == HESSFIT_SUCCESS; k++) {
            int any = parts[k].needed;
            for (int t = 0; t < n_t; t++)
                any |= tm[t].text.part[k].len > 0;
            if (!any)
                continue;
            st = hf_buf_printf(&doc, "%s", parts[k].open);
            for (int t = 0; t < n_t && st == HESSFIT_SUCCESS; t++)
                if (tm[t].text.part[k].len > 0)
                    st = hf_buf_append(&doc, tm[t].text.part[k].data, tm[t].text.part[k].len);
            if (st == HESSFIT_SUCCESS)
                st = hf_buf_printf(&doc, "%s", parts[k].close);
        }
    }
    if (st == HESSFIT_SUCCESS && opt->nonbonded && opt->geometric)
        st = hf_buf_printf(&doc, " <Script>\n# hessfit: geometric combining, as the fit model evaluated it\n%s </Script>\n",
                           geometric_script);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&doc, "</ForceField>\n");
    if (st == HESSFIT_SUCCESS)
        st = hessfit_atomic_write_buffer(path, doc.data, doc.len);
    for (int m = 0; m < n_mols && st == HESSFIT_SUCCESS; m++)
        if (opt->pdb_paths != NULL && opt->pdb_paths[m] != NULL)
            st = hessfit_atomic_write_buffer(opt->pdb_paths[m], pdb[m].data, pdb[m].len);
    if (st == HESSFIT_SUCCESS && n_templates != NULL)
        *n_templates = n_t;
done:
    out_free(&mine);
    for (int t = 0; tm != NULL && t < n_t; t++) {
        out_free(&tm[t].text);
        hf_buf_free(&tm[t].members);
    }
    if (tm != NULL && n_t < n_mols) { /* a template being made when an error came */
        out_free(&tm[n_t].text);
        hf_buf_free(&tm[n_t].members);
    }
    for (int m = 0; pdb != NULL && m < n_mols; m++)
        hf_buf_free(&pdb[m]);
    free(names);
    free(tm);
    free(pdb);
    hf_buf_free(&doc);
    hf_buf_free(&notes);
    return st;
}
