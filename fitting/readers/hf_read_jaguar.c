/*
 * Jaguar readers.
 *
 * Input file (.in): named sections delimited by "&name" (or "$name") and a closing "&" ("$").
 *   &gen   keywords, spacing by blanks, '=' or ','; '!' starts a comment. molchg (charge),
 *          multip (multiplicity) are read; iunit other than 1 (Angstrom) is refused.
 *   &zmat  one atom a line, "Label x y z" (Cartesian, Angstrom). The label starts with the
 *          element symbol; as in Jaguar, two leading letters that form a symbol win ("HE5" is
 *          helium), so "Rh1" is rhodium, "H3a" hydrogen.
 *   &hess  the Cartesian Hessian (Hartree/Bohr^2), lower triangle in column blocks: a line
 *          holding one integer c starts a block of columns c, c+1, ...; the rows under it read
 *          "r H(r,c) H(r,c+1) ..." with at most five values and only columns <= r.
 *   Every other section is skipped; lines outside sections ("MAEFILE: x.mae") are ignored.
 *
 * Output file (.out): the last geometry block ("Input geometry:", "new geometry:", "final
 * geometry:"), the last "SCFE:" energy, "net molecular charge:", "multiplicity:", and the
 * frequency tables of the last frequency calculation: "frequencies v1 .. vk" followed by
 * property lines (intensities, reduced masses, ...) and 3N rows "Label X|Y|Z d1 .. dk".
 */
#include "hessfit_elements.h"
#include "hessfit_molecule.h"
#include "hessfit_units.h"
#include "hessfit_vib.h"
#include "hf_lines.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest number of values on one frequency line of a .out table (Jaguar prints 6). */
#define JAGUAR_MAX_FREQ_COLUMNS 16
/* Largest number of property lines (intensities, reduced masses, ...) under a frequency line. */
#define JAGUAR_MAX_PROPERTY_LINES 32
/* Largest number of values in one &hess row. */
#define JAGUAR_HESS_BLOCK_WIDTH 5

/* ---- element from an atom label -------------------------------------------------------------- */

/* Every element symbol, index = atomic number, to split a label like Jaguar does even for elements
 * without mass data (those are then reported as such, never read as a one-letter element). */
static const char *const periodic_symbols[] = {
    "",   "H",  "He", "Li", "Be", "B",  "C",  "N",  "O",  "F",  "Ne", "Na", "Mg", "Al", "Si", "P",  "S",
    "Cl", "Ar", "K",  "Ca", "Sc", "Ti", "V",  "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As",
    "Se", "Br", "Kr", "Rb", "Sr", "Y",  "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn",
    "Sb", "Te", "I",  "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho",
    "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W",  "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po",
    "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U",  "Np", "Pu", "Am", "Cm", "Bk", "Cf", "Es", "Fm", "Md",
    "No", "Lr", "Rf", "Db", "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh", "Fl", "Mc", "Lv", "Ts", "Og"};

/* Atomic number of the symbol s[0..len) (case-insensitive), 0 if it is none. */
static int symbol_number(const char *s, size_t len)
{
    for (int z = 1; z < (int)(sizeof periodic_symbols / sizeof *periodic_symbols); z++) {
        const char *p = periodic_symbols[z];
        if (strlen(p) != len)
            continue;
        if (toupper((unsigned char)s[0]) == p[0] &&
            (len == 1 || tolower((unsigned char)s[1]) == p[1]))
            return z;
    }
    return 0;
}

/* The element of a Jaguar atom label: the two leading letters if they form a symbol, else the
 * first. Dummy atoms (X, Du) and labels without an element are errors naming file:line. */
static hessfit_status label_element(const char *label, const char *path, int line, int *atomic_number)
{
    int z = 0;
    if (isalpha((unsigned char)label[0]) && isalpha((unsigned char)label[1]))
        z = symbol_number(label, 2);
    if (z == 0 && isalpha((unsigned char)label[0]))
        z = symbol_number(label, 1);
    if (z == 0) {
        if (toupper((unsigned char)label[0]) == 'X' ||
            (toupper((unsigned char)label[0]) == 'D' && tolower((unsigned char)label[1]) == 'u'))
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s:%d: atom label '%.40s' is a dummy atom (not supported)", path,
                            line, label);
        return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: atom label '%.40s' does not start with an element symbol",
                        path, line, label);
    }
    if (hessfit_element_symbol(z) == NULL)
        return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: atom label '%.40s': element %s (Z = %d) has no data here",
                        path, line, label, periodic_symbols[z], z);
    *atomic_number = z;
    return HESSFIT_SUCCESS;
}

/* ---- shared helpers ---------------------------------------------------------------------------- */

/* Case-insensitive string equality (ASCII). */
static int same_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* The file name without directories and without the given extension (and a trailing ".gz"). */
static char *file_stem(const char *path, const char *ext)
{
    const char *base = strrchr(path, '/');
    char *s;
    size_t n, e = strlen(ext);
    base = base ? base + 1 : path;
    s = hf_strdup(base);
    if (s == NULL)
        return NULL;
    n = strlen(s);
    if (n > 3 && strcmp(s + n - 3, ".gz") == 0)
        s[n -= 3] = '\0';
    if (n > e && strcmp(s + n - e, ext) == 0)
        s[n - e] = '\0';
    return s;
}

/* The last line of a file after hf_lines_next reported its end (1 for an empty file). */
static int last_line(const hf_lines *r)
{
    return r->line > 1 ? r->line - 1 : 1;
}

/* Growing per-atom arrays: atomic numbers, coordinates and (for the .out) labels. */
typedef struct atom_list {
    int n;
    size_t cap_z, cap_xyz, cap_labels;
    int *z;
    double *xyz;
    char **labels; /* NULL unless keep_labels */
} atom_list;

static void atom_list_free(atom_list *a)
{
    if (a->labels != NULL)
        for (int i = 0; i < a->n; i++)
            free(a->labels[i]);
    free(a->labels);
    free(a->z);
    free(a->xyz);
    memset(a, 0, sizeof *a);
}

/* Append the atom of one "Label x y z" line (tokens already split), coordinates times scale. */
static hessfit_status atom_list_add(atom_list *a, char **tok, double scale, int keep_labels, const char *path, int line)
{
    hessfit_status st;
    int z = 0;
    double v[3];
    static const char *const what[3] = {"x coordinate", "y coordinate", "z coordinate"};
    if (a->n >= HESSFIT_VIB_MAX_ATOMS)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s:%d: more than %d atoms", path, line, HESSFIT_VIB_MAX_ATOMS);
    if ((st = label_element(tok[0], path, line, &z)) != HESSFIT_SUCCESS)
        return st;
    for (int k = 0; k < 3; k++)
        if ((st = hf_parse_double(tok[1 + k], path, line, what[k], &v[k])) != HESSFIT_SUCCESS)
            return st;
    if ((st = hf_grow((void **)&a->z, &a->cap_z, (size_t)a->n + 1, sizeof *a->z, "atoms")) != HESSFIT_SUCCESS ||
        (st = hf_grow((void **)&a->xyz, &a->cap_xyz, 3 * ((size_t)a->n + 1), sizeof *a->xyz, "coordinates")) !=
            HESSFIT_SUCCESS)
        return st;
    if (keep_labels) {
        if ((st = hf_grow((void **)&a->labels, &a->cap_labels, (size_t)a->n + 1, sizeof *a->labels, "labels")) !=
            HESSFIT_SUCCESS)
            return st;
        if ((a->labels[a->n] = hf_strdup(tok[0])) == NULL)
            return HESSFIT_ERROR_OUT_OF_MEMORY;
    }
    a->z[a->n] = z;
    for (int k = 0; k < 3; k++)
        a->xyz[3 * (size_t)a->n + k] = v[k] * scale;
    a->n++;
    return HESSFIT_SUCCESS;
}

/* ================================================================================================
 * Jaguar input (.in)
 * ============================================================================================== */

typedef enum { SEC_NONE, SEC_GEN, SEC_ZMAT, SEC_HESS, SEC_OTHER } section_kind;

/* One value of the &hess lower triangle as the file gave it (1-based indices). */
typedef struct hess_entry {
    int row, col, line;
    double value;
} hess_entry;

typedef struct jaguar_in {
    const char *path;
    atom_list atoms;
    int zmat_line;          /* line of the &zmat header; 0 if none yet */
    int has_charge, charge, multiplicity;
    hess_entry *h;
    size_t n_h, cap_h;
    int hess_line;          /* line of the &hess header; 0 if none */
    int hess_column;        /* first column of the current block; 0 before the first header */
} jaguar_in;

static int is_terminator(const char *tok)
{
    return strcmp(tok, "&") == 0 || strcmp(tok, "$") == 0;
}

/* &gen keywords on one line (the text after the header on the header line). *closed = 1 when a
 * lone '&' or '$' ends the section on this line. */
static hessfit_status gen_line(jaguar_in *in, char *text, int line, int *closed)
{
    char *tok[64];
    int n;
    char *bang = strchr(text, '!');
    *closed = 0;
    if (bang != NULL)
        *bang = '\0';
    for (char *p = text; *p; p++)
        if (*p == '=' || *p == ',')
            *p = ' ';
    n = hf_split(text, tok, 64);
    if (n > 64)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: more than 64 fields on an &gen line", in->path, line);
    for (int i = 0; i < n; i++) {
        long v;
        hessfit_status st;
        const char *key = tok[i];
        if (is_terminator(key)) {
            if (i != n - 1)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: text after the '&' that closes the &gen section", in->path,
                                line);
            *closed = 1;
            break;
        }
        if (!same_ci(key, "molchg") && !same_ci(key, "multip") && !same_ci(key, "iunit"))
            continue;
        if (i + 1 >= n || is_terminator(tok[i + 1]))
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: &gen keyword %s has no value", in->path, line, key);
        if (same_ci(key, "molchg")) {
            if ((st = hf_parse_int(tok[i + 1], in->path, line, "molchg", -1000, 1000, &v)) != HESSFIT_SUCCESS)
                return st;
            in->has_charge = 1;
            in->charge = (int)v;
        } else if (same_ci(key, "multip")) {
            if ((st = hf_parse_int(tok[i + 1], in->path, line, "multip", 1, 1000, &v)) != HESSFIT_SUCCESS)
                return st;
            in->multiplicity = (int)v;
        } else {
            if ((st = hf_parse_int(tok[i + 1], in->path, line, "iunit", -1000, 1000, &v)) != HESSFIT_SUCCESS)
                return st;
            if (v != 1)
                return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                                "%s:%d: iunit=%ld: only Cartesian Angstrom coordinates (iunit=1, the default) are "
                                "supported",
                                in->path, line, v);
        }
        i++;
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status zmat_line(jaguar_in *in, char *text, int line)
{
    char *tok[8];
    int n = hf_split(text, tok, 8);
    if (n == 0)
        return HESSFIT_SUCCESS;
    if (n != 4)
        return hessfit_error(HESSFIT_ERROR_PARSE,
                        "%s:%d: &zmat line with %d fields; expected 'label x y z' (Cartesian; Z-matrix input is not "
                        "supported)",
                        in->path, line, n);
    return atom_list_add(&in->atoms, tok, 1.0, 0, in->path, line);
}

static int entry_order(const void *pa, const void *pb)
{
    const hess_entry *a = pa, *b = pb;
    if (a->row != b->row)
        return a->row < b->row ? -1 : 1;
    if (a->col != b->col)
        return a->col < b->col ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* Sort the entries and report the first one given twice (HESSFIT_SUCCESS if none). */
static hessfit_status find_duplicate(jaguar_in *in)
{
    qsort(in->h, in->n_h, sizeof *in->h, entry_order);
    for (size_t i = 1; i < in->n_h; i++)
        if (in->h[i].row == in->h[i - 1].row && in->h[i].col == in->h[i - 1].col)
            return hessfit_error(HESSFIT_ERROR_FORMAT,
                            "%s:%d: &hess element (row %d, column %d) given a second time (first at line %d)",
                            in->path, in->h[i].line, in->h[i].row, in->h[i].col, in->h[i - 1].line);
    return HESSFIT_SUCCESS;
}

static hessfit_status hess_line(jaguar_in *in, char *text, int line)
{
    char *tok[JAGUAR_HESS_BLOCK_WIDTH + 2];
    int n = hf_split(text, tok, JAGUAR_HESS_BLOCK_WIDTH + 2);
    long limit = in->zmat_line ? 3L * in->atoms.n : 3L * HESSFIT_VIB_MAX_ATOMS, row, col;
    size_t cap_entries = (size_t)limit * ((size_t)limit + 1) / 2;
    hessfit_status st;
    if (n == 0)
        return HESSFIT_SUCCESS;
    if (n == 1) { /* a column header */
        if ((st = hf_parse_int(tok[0], in->path, line, "&hess column index", 1, limit, &col)) != HESSFIT_SUCCESS)
            return st;
        in->hess_column = (int)col;
        return HESSFIT_SUCCESS;
    }
    if (n > JAGUAR_HESS_BLOCK_WIDTH + 1)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: &hess row with %d values; a column block holds at most %d",
                        in->path, line, n - 1, JAGUAR_HESS_BLOCK_WIDTH);
    if (in->hess_column == 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: &hess row before the first column header", in->path, line);
    if ((st = hf_parse_int(tok[0], in->path, line, "&hess row index", 1, limit, &row)) != HESSFIT_SUCCESS)
        return st;
    if (in->hess_column + (n - 1) - 1 > row)
        return hessfit_error(HESSFIT_ERROR_FORMAT,
                        "%s:%d: &hess row %ld has %d values from column %d: columns above the diagonal (the block "
                        "is a lower triangle)",
                        in->path, line, row, n - 1, in->hess_column);
    for (int t = 1; t < n; t++) {
        hess_entry *e;
        double v;
        if ((st = hf_parse_double(tok[t], in->path, line, "&hess value", &v)) != HESSFIT_SUCCESS)
            return st;
        if (in->n_h >= cap_entries) { /* more values than the triangle holds: some element repeats */
            st = find_duplicate(in);
            return st != HESSFIT_SUCCESS ? st
                                    : hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: more &hess values than a %ld x %ld lower "
                                               "triangle holds", in->path, line, limit, limit);
        }
        if ((st = hf_grow((void **)&in->h, &in->cap_h, in->n_h + 1, sizeof *in->h, "&hess values")) != HESSFIT_SUCCESS)
            return st;
        e = &in->h[in->n_h++];
        e->row = (int)row;
        e->col = in->hess_column + t - 1;
        e->line = line;
        e->value = v;
    }
    return HESSFIT_SUCCESS;
}

/* The dense symmetric Hessian from the entries: each lower-triangle element exactly once. */
static hessfit_status assemble_hessian(jaguar_in *in, double **hessian)
{
    size_t n3 = 3 * (size_t)in->atoms.n, k = 0;
    hessfit_status st;
    double *h;
    *hessian = NULL;
    if (in->n_h == 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: the &hess section holds no values", in->path, in->hess_line);
    for (size_t i = 0; i < in->n_h; i++) /* the &hess section may come before &zmat */
        if ((size_t)in->h[i].row > n3)
            return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: &hess row %d is beyond 3N = %zu (%d atoms in &zmat)", in->path,
                            in->h[i].line, in->h[i].row, n3, in->atoms.n);
    if ((st = find_duplicate(in)) != HESSFIT_SUCCESS)
        return st;
    /* sorted, distinct, in range, lower triangle: walk the triangle in the same order */
    for (size_t r = 1; r <= n3; r++)
        for (size_t c = 1; c <= r; c++, k++)
            if (k >= in->n_h || (size_t)in->h[k].row != r || (size_t)in->h[k].col != c)
                return hessfit_error(HESSFIT_ERROR_TRUNCATED,
                                "%s:%d: &hess section: element (row %zu, column %zu) of the lower triangle is missing",
                                in->path, in->hess_line, r, c);
    h = malloc(n3 * n3 * sizeof *h);
    if (h == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a %zu x %zu Hessian", in->path, n3, n3);
    for (size_t i = 0; i < in->n_h; i++) {
        size_t r = (size_t)in->h[i].row - 1, c = (size_t)in->h[i].col - 1;
        h[r * n3 + c] = in->h[i].value;
        h[c * n3 + r] = in->h[i].value;
    }
    *hessian = h;
    return HESSFIT_SUCCESS;
}

/* A section header "&name rest": the kind, the name for messages and the rest of the line. */
static section_kind section_of(const char *s, char *name, size_t cap, const char **rest)
{
    size_t n = 0;
    s++; /* the '&' or '$' */
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    snprintf(name, cap, "%.*s", (int)n, s);
    *rest = s + n;
    if (same_ci(name, "gen"))
        return SEC_GEN;
    if (same_ci(name, "zmat"))
        return SEC_ZMAT;
    if (same_ci(name, "hess"))
        return SEC_HESS;
    return SEC_OTHER;
}

static hessfit_status read_in_sections(jaguar_in *in, hf_lines *r)
{
    section_kind sec = SEC_NONE;
    char name[32] = "";
    int sec_line = 0, eof = 0;
    hessfit_status st;
    for (;;) {
        const char *s;
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof)
            break;
        s = hf_skip_space(r->buf);
        if ((s[0] == '&' || s[0] == '$') && hf_is_blank(s + 1)) { /* a section end */
            if (sec == SEC_NONE)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: '%c' outside a section", in->path, r->line, s[0]);
            sec = SEC_NONE;
            continue;
        }
        if (s[0] == '&' || s[0] == '$') { /* a section header */
            const char *rest;
            char *text;
            int closed = 0;
            char new_name[32];
            section_kind kind = section_of(s, new_name, sizeof new_name, &rest);
            if (sec != SEC_NONE)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: section &%s starts before &%s (line %d) is closed", in->path,
                                r->line, new_name, name, sec_line);
            if (new_name[0] == '\0')
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: '%c' without a section name", in->path, r->line, s[0]);
            if ((kind == SEC_ZMAT && in->zmat_line) || (kind == SEC_HESS && in->hess_line))
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: a second &%s section (the first at line %d)", in->path,
                                r->line, new_name, kind == SEC_ZMAT ? in->zmat_line : in->hess_line);
            sec = kind;
            sec_line = r->line;
            memcpy(name, new_name, sizeof name);
            if (kind == SEC_ZMAT)
                in->zmat_line = r->line;
            if (kind == SEC_HESS)
                in->hess_line = r->line;
            text = r->buf + (rest - r->buf);
            if (kind == SEC_GEN) {
                if ((st = gen_line(in, text, r->line, &closed)) != HESSFIT_SUCCESS)
                    return st;
            } else { /* a lone '&' at the end closes the section on its header line */
                char *tok[64];
                int n = hf_split(text, tok, 64);
                closed = n >= 1 && n <= 64 && is_terminator(tok[n - 1]);
                if (kind != SEC_OTHER && n > closed)
                    return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: unexpected text after &%s", in->path, r->line, name);
            }
            if (closed)
                sec = SEC_NONE;
            continue;
        }
        switch (sec) {
        case SEC_NONE: /* top-level lines ("MAEFILE: x.mae", "entry_name: x") carry nothing we read */
            break;
        case SEC_GEN: {
            int closed = 0;
            if ((st = gen_line(in, r->buf, r->line, &closed)) != HESSFIT_SUCCESS)
                return st;
            if (closed)
                sec = SEC_NONE;
            break;
        }
        case SEC_ZMAT:
            if ((st = zmat_line(in, r->buf, r->line)) != HESSFIT_SUCCESS)
                return st;
            break;
        case SEC_HESS:
            if ((st = hess_line(in, r->buf, r->line)) != HESSFIT_SUCCESS)
                return st;
            break;
        case SEC_OTHER:
            break;
        }
    }
    if (sec != SEC_NONE)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends inside the &%s section started at line %d",
                        in->path, last_line(r), name, sec_line);
    if (!in->zmat_line)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: no &zmat section (the coordinates)", in->path, last_line(r));
    if (in->atoms.n == 0)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: the &zmat section holds no atoms", in->path, in->zmat_line);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_jaguar_in_read(const char *path, hessfit_molecule *mol)
{
    jaguar_in in;
    hf_lines r;
    hessfit_status st;
    hessfit_molecule m;
    if (mol == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_jaguar_in_read: %s is NULL", mol == NULL ? "mol" : "path");
    memset(mol, 0, sizeof *mol);
    memset(&in, 0, sizeof in);
    memset(&m, 0, sizeof m);
    in.path = path;
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    st = read_in_sections(&in, &r);
    hf_lines_close(&r);
    if (st == HESSFIT_SUCCESS && in.hess_line)
        st = assemble_hessian(&in, &m.hessian);
    if (st == HESSFIT_SUCCESS) {
        m.n_atoms = in.atoms.n;
        m.atomic_numbers = in.atoms.z;
        m.coords = in.atoms.xyz;
        in.atoms.z = NULL;
        in.atoms.xyz = NULL;
        m.has_charge = in.has_charge;
        m.charge = in.charge;
        m.multiplicity = in.multiplicity;
        m.name = file_stem(path, ".in");
        m.source = hf_strdup(path);
        if (m.name == NULL || m.source == NULL)
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    }
    if (st == HESSFIT_SUCCESS)
        st = hessfit_molecule_check(&m, path);
    atom_list_free(&in.atoms);
    free(in.h);
    if (st != HESSFIT_SUCCESS) {
        hessfit_molecule_free(&m);
        return st;
    }
    *mol = m;
    return HESSFIT_SUCCESS;
}

/* ================================================================================================
 * Jaguar output (.out)
 * ============================================================================================== */

typedef struct jaguar_out {
    const char *path;
    atom_list geom;           /* the last geometry block, with labels */
    int geom_line;
    char *name;
    int has_energy, has_charge, charge, multiplicity;
    double energy;
    char program[64];         /* the Jaguar program running ("scf", "freq"); "" between programs */
    int program_line;
    long announced;           /* "Number of frequencies:" value, -1 if none */
    int announced_line;
    int n_freq, modes_state;  /* modes_state: -1 unknown, 0 tables without modes, 1 with */
    size_t cap_freq, cap_modes;
    double *freq, *modes;     /* n_freq; n_freq x 3N */
    double *block;            /* one table: 3N rows x k values */
    size_t cap_block;
} jaguar_out;

static const char *const geometry_headers[] = {"input geometry:", "new geometry:", "final geometry:",
                                               "symmetrized geometry:"};

static int is_geometry_header(const char *s)
{
    char copy[64];
    size_t n;
    s = hf_skip_space(s);
    n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= sizeof copy)
        return 0;
    memcpy(copy, s, n);
    copy[n] = '\0';
    for (size_t i = 0; i < sizeof geometry_headers / sizeof *geometry_headers; i++)
        if (same_ci(copy, geometry_headers[i]))
            return 1;
    return 0;
}

/* Next line, with end of file an error naming what was being read. */
static hessfit_status out_next(jaguar_out *o, hf_lines *r, const char *inside, int start)
{
    int eof = 0;
    hessfit_status st = hf_lines_next(r, &eof);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (eof)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends inside the %s started at line %d", o->path,
                        last_line(r), inside, start);
    return HESSFIT_SUCCESS;
}

/* A geometry block: the header line is current; then the unit line, the column titles, the atom
 * rows up to a blank line. */
static hessfit_status read_geometry(jaguar_out *o, hf_lines *r)
{
    atom_list g;
    int start = r->line;
    double scale;
    char *tok[8];
    hessfit_status st;
    const char *unit;
    memset(&g, 0, sizeof g);
    if ((st = out_next(o, r, "geometry block", start)) != HESSFIT_SUCCESS)
        return st;
    unit = hf_skip_space(r->buf);
    hf_rstrip(r->buf);
    if (same_ci(unit, "angstroms") || same_ci(unit, "angstrom"))
        scale = 1.0;
    else if (same_ci(unit, "bohrs") || same_ci(unit, "bohr"))
        scale = HESSFIT_BOHR_TO_ANGSTROM;
    else
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: geometry unit '%.40s' where 'angstroms' or 'bohrs' is expected",
                        o->path, r->line, unit);
    if ((st = out_next(o, r, "geometry block", start)) != HESSFIT_SUCCESS)
        return st;
    if (hf_split(r->buf, tok, 8) != 4 || strcmp(tok[0], "atom") != 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected the column titles 'atom x y z'", o->path, r->line);
    for (;;) {
        int n;
        if ((st = out_next(o, r, "geometry block", start)) != HESSFIT_SUCCESS)
            goto fail;
        if (hf_is_blank(r->buf))
            break;
        n = hf_split(r->buf, tok, 8);
        if (n != 4) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: geometry row with %d fields; expected 'label x y z'", o->path,
                          r->line, n);
            goto fail;
        }
        if ((st = atom_list_add(&g, tok, scale, 1, o->path, r->line)) != HESSFIT_SUCCESS)
            goto fail;
    }
    if (g.n == 0) {
        st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: geometry block without atoms", o->path, start);
        goto fail;
    }
    if (o->geom_line && g.n != o->geom.n) {
        st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: geometry with %d atoms; the one at line %d has %d", o->path, start, g.n,
                      o->geom_line, o->geom.n);
        goto fail;
    }
    atom_list_free(&o->geom);
    o->geom = g;
    o->geom_line = start;
    return HESSFIT_SUCCESS;
fail:
    atom_list_free(&g);
    return st;
}

/* A frequency table: the "frequencies v1 .. vk" line is current (tok/k its values). */
static hessfit_status read_frequency_table(jaguar_out *o, hf_lines *r, char **tok, int k)
{
    int start = r->line, rows = 0, properties = 0;
    size_t n3;
    double f[JAGUAR_MAX_FREQ_COLUMNS];
    hessfit_status st;
    static const char axes[] = "XYZ";
    if (!o->geom_line)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: frequency table before any geometry block", o->path, start);
    n3 = 3 * (size_t)o->geom.n;
    for (int t = 0; t < k; t++)
        if ((st = hf_parse_double(tok[1 + t], o->path, start, "frequency", &f[t])) != HESSFIT_SUCCESS)
            return st;
    if ((size_t)o->n_freq + (size_t)k > n3)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: more than 3N = %zu frequencies", o->path, start, n3);
    for (;;) {
        char *rt[JAGUAR_MAX_FREQ_COLUMNS + 3];
        int n;
        if ((st = out_next(o, r, "frequency table", start)) != HESSFIT_SUCCESS)
            return st;
        if (hf_is_blank(r->buf))
            break;
        n = hf_split(r->buf, rt, JAGUAR_MAX_FREQ_COLUMNS + 3);
        if (n >= 2 && strlen(rt[1]) == 1 && strchr(axes, toupper((unsigned char)rt[1][0])) != NULL) {
            size_t atom = (size_t)rows / 3;
            int axis = rows % 3;
            if (n != k + 2)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: normal-mode row with %d values; the table has %d frequencies",
                                o->path, r->line, n - 2, k);
            if ((size_t)rows >= n3)
                return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: more than 3N = %zu normal-mode rows", o->path, r->line, n3);
            if (toupper((unsigned char)rt[1][0]) != axes[axis] || strcmp(rt[0], o->geom.labels[atom]) != 0)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: normal-mode row '%.20s %.4s' where '%s %c' is expected",
                                o->path, r->line, rt[0], rt[1], o->geom.labels[atom], axes[axis]);
            if ((st = hf_grow((void **)&o->block, &o->cap_block, ((size_t)rows + 1) * (size_t)k, sizeof *o->block,
                              "normal-mode values")) != HESSFIT_SUCCESS)
                return st;
            for (int t = 0; t < k; t++)
                if ((st = hf_parse_double(rt[2 + t], o->path, r->line, "normal-mode displacement",
                                          &o->block[(size_t)rows * (size_t)k + (size_t)t])) != HESSFIT_SUCCESS)
                    return st;
            rows++;
        } else if (rows == 0 && properties < JAGUAR_MAX_PROPERTY_LINES) {
            properties++; /* intensities, reduced masses, force constants, symmetries */
        } else {
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected a normal-mode row 'label X|Y|Z' with %d values",
                            o->path, r->line, k);
        }
    }
    if (rows != 0 && (size_t)rows != n3)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: the normal-mode table holds %d rows; 3N = %zu", o->path, r->line,
                        rows, n3);
    if (o->modes_state != -1 && o->modes_state != (rows != 0))
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: frequency table %s normal modes, unlike the ones before", o->path,
                        start, rows ? "with" : "without");
    o->modes_state = rows != 0;
    if ((st = hf_grow((void **)&o->freq, &o->cap_freq, (size_t)o->n_freq + (size_t)k, sizeof *o->freq,
                      "frequencies")) != HESSFIT_SUCCESS)
        return st;
    if (rows != 0 && (st = hf_grow((void **)&o->modes, &o->cap_modes, ((size_t)o->n_freq + (size_t)k) * n3,
                                   sizeof *o->modes, "normal modes")) != HESSFIT_SUCCESS)
        return st;
    for (int t = 0; t < k; t++) {
        size_t m = (size_t)o->n_freq + (size_t)t;
        o->freq[m] = f[t];
        for (size_t i = 0; rows != 0 && i < n3; i++)
            o->modes[m * n3 + i] = o->block[i * (size_t)k + (size_t)t];
    }
    o->n_freq += k;
    return HESSFIT_SUCCESS;
}

/* "start of program X" / "end of program X": the file must not end inside a program. */
static hessfit_status program_marker(jaguar_out *o, const char *s, int line)
{
    int start = hf_starts_with(s, "start of program ", 0);
    const char *prog = s + strlen(start ? "start of program " : "end of program ");
    char name[64];
    snprintf(name, sizeof name, "%s", hf_skip_space(prog));
    hf_rstrip(name);
    if (start) {
        if (o->program[0] != '\0')
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: program %s starts before program %s (line %d) ended", o->path,
                            line, name, o->program, o->program_line);
        memcpy(o->program, name, sizeof o->program);
        o->program_line = line;
    } else {
        if (strcmp(o->program, name) != 0)
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: end of program %s, but the running program is '%s'", o->path,
                            line, name, o->program);
        o->program[0] = '\0';
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status out_line(jaguar_out *o, hf_lines *r)
{
    const char *s = hf_skip_space(r->buf);
    char copy[512], *tok[JAGUAR_MAX_FREQ_COLUMNS + 2];
    int n;
    long v;
    hessfit_status st;
    if (hf_starts_with(s, "start of program ", 0) || hf_starts_with(s, "end of program ", 0))
        return program_marker(o, s, r->line);
    if (is_geometry_header(s))
        return read_geometry(o, r);
    if (hf_starts_with(s, "Job name:", 0) && o->name == NULL) {
        snprintf(copy, sizeof copy, "%s", hf_skip_space(s + strlen("Job name:")));
        hf_rstrip(copy);
        if ((o->name = hf_strdup(copy)) == NULL)
            return HESSFIT_ERROR_OUT_OF_MEMORY;
        return HESSFIT_SUCCESS;
    }
    if (strlen(s) >= sizeof copy) { /* none of the lines read below is this long */
        static const char *const keys[] = {"net molecular charge:", "multiplicity:", "SCFE:",
                                           "Number of frequencies:", "frequencies "};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            if (hf_starts_with(s, keys[i], 0))
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s' line longer than %zu characters", o->path, r->line,
                                keys[i], sizeof copy - 1);
        return HESSFIT_SUCCESS;
    }
    memcpy(copy, s, strlen(s) + 1);
    if (hf_starts_with(s, "net molecular charge:", 0)) {
        if (hf_split(copy + strlen("net molecular charge:"), tok, 2) != 1)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: expected one value after 'net molecular charge:'", o->path,
                            r->line);
        if ((st = hf_parse_int(tok[0], o->path, r->line, "net molecular charge", -1000, 1000, &v)) != HESSFIT_SUCCESS)
            return st;
        o->has_charge = 1;
        o->charge = (int)v;
    } else if (hf_starts_with(s, "multiplicity:", 0)) {
        if (hf_split(copy + strlen("multiplicity:"), tok, 2) != 1)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: expected one value after 'multiplicity:'", o->path, r->line);
        if ((st = hf_parse_int(tok[0], o->path, r->line, "multiplicity", 1, 1000, &v)) != HESSFIT_SUCCESS)
            return st;
        o->multiplicity = (int)v;
    } else if (hf_starts_with(s, "SCFE:", 0)) {
        /* "SCFE: SCF energy: DFT(b3lyp)     -1369.88293508102 hartrees   iterations:  11" */
        n = hf_split(copy, tok, JAGUAR_MAX_FREQ_COLUMNS + 2);
        for (int i = 1; i < n && i < JAGUAR_MAX_FREQ_COLUMNS + 2; i++)
            if (strcmp(tok[i], "hartrees") == 0) {
                if ((st = hf_parse_double(tok[i - 1], o->path, r->line, "SCF energy", &o->energy)) != HESSFIT_SUCCESS)
                    return st;
                o->has_energy = 1;
                return HESSFIT_SUCCESS;
            }
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: SCFE line without an energy in hartrees", o->path, r->line);
    } else if (hf_starts_with(s, "Number of frequencies:", 0)) {
        if (hf_split(copy + strlen("Number of frequencies:"), tok, 2) != 1)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: expected one value after 'Number of frequencies:'", o->path,
                            r->line);
        if ((st = hf_parse_int(tok[0], o->path, r->line, "number of frequencies", 0, 3L * HESSFIT_VIB_MAX_ATOMS, &v)) !=
            HESSFIT_SUCCESS)
            return st;
        o->announced = v; /* a new frequency calculation: the tables after it replace earlier ones */
        o->announced_line = r->line;
        o->n_freq = 0;
        o->modes_state = -1;
    } else if (hf_starts_with(s, "frequencies ", 0)) { /* "frequencies  -705.89  42.10 ..." */
        n = hf_split(copy, tok, JAGUAR_MAX_FREQ_COLUMNS + 2);
        if (n > JAGUAR_MAX_FREQ_COLUMNS + 1)
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: more than %d frequencies on one line", o->path, r->line,
                            JAGUAR_MAX_FREQ_COLUMNS);
        return read_frequency_table(o, r, tok, n - 1);
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_jaguar_out_read(const char *path, hessfit_molecule *mol)
{
    jaguar_out o;
    hf_lines r;
    hessfit_status st;
    hessfit_molecule m;
    int eof = 0;
    if (mol == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_jaguar_out_read: %s is NULL", mol == NULL ? "mol" : "path");
    memset(mol, 0, sizeof *mol);
    memset(&o, 0, sizeof o);
    memset(&m, 0, sizeof m);
    o.path = path;
    o.announced = -1;
    o.modes_state = -1;
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    for (;;) {
        if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS || eof)
            break;
        if ((st = out_line(&o, &r)) != HESSFIT_SUCCESS)
            break;
    }
    if (st == HESSFIT_SUCCESS && o.program[0] != '\0')
        st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends inside program %s (started at line %d)", path,
                      last_line(&r), o.program, o.program_line);
    if (st == HESSFIT_SUCCESS && !o.geom_line)
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: no geometry block ('Input geometry:')", path, last_line(&r));
    if (st == HESSFIT_SUCCESS && o.announced >= 0 && o.announced != o.n_freq)
        st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %ld frequencies announced, %d printed", path, o.announced_line,
                      o.announced, o.n_freq);
    hf_lines_close(&r);
    if (st == HESSFIT_SUCCESS) {
        m.n_atoms = o.geom.n;
        m.atomic_numbers = o.geom.z;
        m.coords = o.geom.xyz;
        o.geom.z = NULL;
        o.geom.xyz = NULL;
        m.has_energy = o.has_energy;
        m.energy = o.energy;
        m.has_charge = o.has_charge;
        m.charge = o.charge;
        m.multiplicity = o.multiplicity;
        m.n_modes = o.n_freq;
        if (o.n_freq > 0) {
            m.frequencies = o.freq;
            o.freq = NULL;
            if (o.modes_state == 1) {
                m.modes = o.modes;
                o.modes = NULL;
            }
        }
        m.name = o.name != NULL ? o.name : file_stem(path, ".out");
        o.name = NULL;
        m.source = hf_strdup(path);
        if (m.name == NULL || m.source == NULL)
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    }
    if (st == HESSFIT_SUCCESS)
        st = hessfit_molecule_check(&m, path);
    atom_list_free(&o.geom);
    free(o.name);
    free(o.freq);
    free(o.modes);
    free(o.block);
    if (st != HESSFIT_SUCCESS) {
        hessfit_molecule_free(&m);
        return st;
    }
    *mol = m;
    return HESSFIT_SUCCESS;
}
