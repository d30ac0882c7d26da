/*
 * MacroModel .mmo reader (the "-mmo" output of a MacroModel/BatchMin energy run with term
 * listing, as q2mm's get_mmo jobs write it): every structure with its atom types, elements,
 * coordinates, QQ charges, connectivity with bond orders, and every bond, angle, proper and
 * improper torsion with the force-field (.fld) line MacroModel used for it.
 *
 * Layout of one structure's output, in file order (checked against the rh-enamide training set):
 *   1. the term sections, each opened by a header announcing its row count:
 *        "BOND LENGTHS AND STRETCH ENERGIES      38 Stretch interactions present"
 *            rows: i j  k r0 r E  Select Alts Comment.. FFline
 *        "ANGLES, BEND AND STRETCH BEND ENERGIES 78 Bend interactions present"
 *            rows: i j k  KBnd1 KSBnd th0 th EBnd ESBnd  Select Alts Comment.. FFline
 *        "BEND-BEND ANGLES AND ENERGIES 27 Bend-bend interactions present"            (skipped)
 *        "DIHEDRAL ANGLES AND TORSIONAL ENERGIES 56 Proper Torsion interactions present"
 *            rows: i j k l  V1 V2 V3 phi E  Select Alts Comment.. FFline
 *        "6 Improper torsion interactions present" (a sub-table, same columns)
 *        "DIHEDRAL ANGLES AND TORSIONAL CROSS-TERMS 56 Torsion interactions present"   (skipped)
 *        "NONBONDED DISTANCES AND ENERGIES 513 Nonbonded interactions present"         (skipped)
 *   2. the banner box with "Input Structure Name:" and the name on the next line, the energy
 *      equations and the energy breakdown;
 *   3. the "Connection Table": one line per atom,
 *        " RH (    1)   0.046  0.046     0.0000     0.0000     0.0000   UNK   1      13-   18-    2 "
 *      type (number) QQ Sol X Y Z residue-name residue-number, then the attached atoms, each with
 *      its bond mark; closed by "Total QQ  charge on system =   1.000".
 * So the term sections come BEFORE the banner and the Connection Table of the structure they
 * belong to; a structure is complete when its Connection Table closes.
 *
 * What is stored (hessfit_molecule.h):
 *   - atom_types: the MacroModel labels; atomic_numbers from them (hf_macromodel_types.c, a table
 *     from MacroModel's atom.typ); a label without an element is an error naming file:line.
 *   - partial_charges: the QQ column (e); has_charge/charge from "Total QQ charge" when it is an
 *     integer to 0.01 e. The sum of the QQ column must match that total to the print precision.
 *   - bonds from the attached-atom lists, each once (i < j), with bond_orders from the marks:
 *     '-' 1, '=' 2, '%' 3, and a blank mark 0: MacroModel's bond without order, used for the
 *     dative/metal bonds (Rh-O, Rh-C, the agostic C-H-Rh); they are real bonds of the topology
 *     (MacroModel lists bond, angle and torsion terms across them). Every bond must be listed by
 *     both atoms with the same mark.
 *   - reported_terms: one per bond, angle, proper torsion and improper row, in file order, with
 *     0-based atoms as printed, the FF line, the Select label ("Subst", "O1", "A3"), the .mmo line
 *     and values as printed (MacroModel/MM3* units): bond {k mdyn/A, r0 A, 0}; angle
 *     {k mdyn A/rad^2, theta0 deg, 0} (the stretch-bend constant is not kept); torsion {V1, V2, V3}
 *     kcal/mol; improper {constant, 0, 0}, the constant being printed in the V2 column (the
 *     .fld out-of-plane "Const." field; a nonzero V1 or V3 column is HESSFIT_ERROR_UNSUPPORTED).
 *     Impropers: MacroModel prints the centre atom SECOND (i centre k l; in the rh-enamide file
 *     atom 2 of every improper is bonded to the other three); the order is kept as printed.
 * Checks: each announced count equals the rows read for bonds, angles, proper and improper
 * torsions, bend-bend and nonbonded pairs; the cross-term table lists only terms with nonzero
 * constants, so its rows may only be fewer than announced. Term atoms must exist in the structure.
 * The MM energies are not stored here (hessfit_molecule.energy is a reference energy in Hartree):
 * hessfit_mmo_energies_read (hf_read_mmo_energies.c) reads every printed row and the breakdown.
 */
#include "hessfit_elements.h"
#include "hessfit_molecule.h"
#include "hf_lines.h"
#include "hf_macromodel_types.h"
#include "hf_read_structures.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MMO_MAX_ATOMS 1000000 /* atom numbers beyond this are rejected before any use */
#define MMO_MAX_FF_LINE 100000000
#define MMO_MAX_TOKENS 64
#define MMO_MAX_TABLE_HEADER 12 /* non-blank lines allowed between "Connection Table" and the atoms */

typedef enum mmo_section {
    SEC_NONE = 0,
    SEC_BOND,
    SEC_ANGLE,
    SEC_TORSION,
    SEC_IMPROPER,
    SEC_BEND_BEND,
    SEC_CROSS,
    SEC_NONBONDED,
    SEC_OTHER, /* a section of a kind this reader does not know: skipped, not counted */
    NUM_SECTIONS
} mmo_section;

typedef struct mmo_section_info {
    const char *words; /* the words between the count and "interactions present" */
    int min_tokens;    /* fields of a row */
    int n_atoms;       /* leading atom numbers of a row (stored kinds) */
    int n_numbers;     /* numeric fields after them (stored kinds) */
    hessfit_term_kind kind; /* stored kinds */
    int stored;
} mmo_section_info;

static const mmo_section_info section_info[NUM_SECTIONS] = {
    [SEC_NONE] = {"", 0, 0, 0, HESSFIT_TERM_BOND, 0},
    [SEC_BOND] = {"Stretch", 9, 2, 4, HESSFIT_TERM_BOND, 1},
    [SEC_ANGLE] = {"Bend", 12, 3, 6, HESSFIT_TERM_ANGLE, 1},
    [SEC_TORSION] = {"Proper Torsion", 12, 4, 5, HESSFIT_TERM_TORSION, 1},
    [SEC_IMPROPER] = {"Improper torsion", 12, 4, 5, HESSFIT_TERM_IMPROPER, 1},
    [SEC_BEND_BEND] = {"Bend-bend", 11, 0, 0, HESSFIT_TERM_BOND, 0},
    [SEC_CROSS] = {"Torsion", 9, 0, 0, HESSFIT_TERM_BOND, 0},
    [SEC_NONBONDED] = {"Nonbonded", 8, 0, 0, HESSFIT_TERM_BOND, 0},
    [SEC_OTHER] = {"", 1, 0, 0, HESSFIT_TERM_BOND, 0},
};

/* One attached-atom entry of the Connection Table. */
typedef struct mmo_attachment {
    int neighbour; /* 1-based, as printed; checked against the atom count when the table closes */
    int order;     /* 0 blank, 1 '-', 2 '=', 3 '%' */
} mmo_attachment;

/* Everything read of the structure being assembled. */
typedef struct mmo_structure {
    int started;    /* a section, the name box or the table has been seen */
    int first_line; /* where its output starts */
    int announced[NUM_SECTIONS];
    int announced_line[NUM_SECTIONS]; /* 0: section not seen */
    int rows[NUM_SECTIONS];
    hessfit_reported_term *terms;
    size_t n_terms, cap_terms;
    char *name;
    /* Connection Table */
    int n_atoms;
    size_t cap_atoms;
    int *atomic_numbers;
    double *coords;
    double *charges;
    char **types;
    int *atom_line;    /* line of each atom */
    int *attach_start; /* first attachment of each atom */
    mmo_attachment *attach;
    size_t n_attach, cap_attach;
    int *bonds;
    double *bond_orders;
    size_t n_bonds, cap_bonds, cap_bond_orders;
    double total_charge;
} mmo_structure;

static void structure_free(void *state)
{
    mmo_structure *s = state;
    free(s->terms);
    free(s->name);
    free(s->atomic_numbers);
    free(s->coords);
    free(s->charges);
    if (s->types != NULL)
        for (int i = 0; i < s->n_atoms; i++)
            free(s->types[i]);
    free(s->types);
    free(s->atom_line);
    free(s->attach_start);
    free(s->attach);
    free(s->bonds);
    free(s->bond_orders);
    memset(s, 0, sizeof *s);
}

/* 1 if token is a non-empty run of decimal digits. */
static int all_digits(const char *token)
{
    if (*token == '\0')
        return 0;
    for (; *token; token++)
        if (!isdigit((unsigned char)*token))
            return 0;
    return 1;
}

/* A section header: "... <count> <words> interactions present". Returns the section (SEC_NONE if
 * the line is not a header) and its announced count. */
static hessfit_status parse_section_header(char *line, const char *path, int lineno, mmo_section *section, int *count)
{
    char *tok[MMO_MAX_TOKENS];
    char words[64];
    int n, at = -1, first_word;
    long v;
    hessfit_status st;
    *section = SEC_NONE;
    if (strstr(line, "interactions present") == NULL)
        return HESSFIT_SUCCESS;
    n = hf_split(line, tok, MMO_MAX_TOKENS);
    if (n > MMO_MAX_TOKENS)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: section header with too many fields", path, lineno);
    for (int k = 0; k + 1 < n; k++)
        if (strcmp(tok[k], "interactions") == 0 && strcmp(tok[k + 1], "present") == 0)
            at = k;
    if (at < 0)
        return HESSFIT_SUCCESS;
    /* the count is the last all-digit token before "interactions"; the words follow it */
    first_word = at;
    while (first_word > 0 && !all_digits(tok[first_word - 1]))
        first_word--;
    if (first_word == 0 || first_word == at)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: section header without an interaction count", path, lineno);
    if ((st = hf_parse_int(tok[first_word - 1], path, lineno, "interaction count", 0, 100000000, &v)) != HESSFIT_SUCCESS)
        return st;
    words[0] = '\0';
    for (int k = first_word; k < at; k++) {
        if (strlen(words) + strlen(tok[k]) + 2 > sizeof words)
            break;
        if (k > first_word)
            strcat(words, " ");
        strcat(words, tok[k]);
    }
    *section = SEC_OTHER;
    for (int s = SEC_BOND; s < SEC_OTHER; s++)
        if (strcmp(words, section_info[s].words) == 0)
            *section = (mmo_section)s;
    *count = (int)v;
    return HESSFIT_SUCCESS;
}

/* One row of a stored section. */
static hessfit_status parse_term_row(mmo_structure *s, mmo_section sec, char **tok, int n, const char *path, int lineno)
{
    const mmo_section_info *info = &section_info[sec];
    hessfit_reported_term t;
    double num[6];
    long v;
    hessfit_status st;
    int k = 0;
    memset(&t, 0, sizeof t);
    t.kind = info->kind;
    t.line = lineno;
    for (int a = 0; a < 4; a++)
        t.atoms[a] = -1;
    for (int a = 0; a < info->n_atoms; a++, k++) {
        if ((st = hf_parse_int(tok[k], path, lineno, "atom number", 1, MMO_MAX_ATOMS, &v)) != HESSFIT_SUCCESS)
            return st;
        t.atoms[a] = (int)v; /* 1-based until the Connection Table gives the atom count */
    }
    for (int x = 0; x < info->n_numbers; x++, k++)
        if ((st = hf_parse_double(tok[k], path, lineno, "term value", &num[x])) != HESSFIT_SUCCESS)
            return st;
    if (strlen(tok[k]) >= sizeof t.source)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: Select label '%.40s' longer than %zu characters", path, lineno, tok[k],
                        sizeof t.source - 1);
    strcpy(t.source, tok[k]);
    k++;
    if ((st = hf_parse_int(tok[k], path, lineno, "Alts column", 0, 100000000, &v)) != HESSFIT_SUCCESS)
        return st;
    if ((st = hf_parse_int(tok[n - 1], path, lineno, "FF line", 1, MMO_MAX_FF_LINE, &v)) != HESSFIT_SUCCESS)
        return st;
    t.ff_line = (int)v;
    switch (sec) {
    case SEC_BOND: /* k r0 r E */
        t.values[0] = num[0];
        t.values[1] = num[1];
        t.actual = num[2];
        break;
    case SEC_ANGLE: /* KBnd1 KSBnd th0 th EBnd ESBnd */
        t.values[0] = num[0];
        t.values[1] = num[2];
        t.actual = num[3];
        break;
    case SEC_TORSION: /* V1 V2 V3 phi E */
        t.values[0] = num[0];
        t.values[1] = num[1];
        t.values[2] = num[2];
        t.actual = num[3];
        break;
    default: /* improper: the constant in the V2 column */
        if (num[0] != 0.0 || num[2] != 0.0)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                            "%s:%d: improper torsion with nonzero V1/V3 columns (%g, %g); only the V2-column "
                            "out-of-plane constant is supported",
                            path, lineno, num[0], num[2]);
        t.values[0] = num[1];
        t.actual = NAN;
        break;
    }
    if ((st = hf_grow((void **)&s->terms, &s->cap_terms, s->n_terms + 1, sizeof *s->terms, "reported terms")) !=
        HESSFIT_SUCCESS)
        return hf_error_located(st, path, lineno);
    s->terms[s->n_terms++] = t;
    return HESSFIT_SUCCESS;
}

/* A line inside a term section: rows start with an atom number; a lone "1" is a page break;
 * anything else (column headers, dashes, blank lines) is layout. */
static hessfit_status section_line(mmo_structure *s, mmo_section sec, char *line, const char *path, int lineno)
{
    char *tok[MMO_MAX_TOKENS];
    int n = hf_split(line, tok, MMO_MAX_TOKENS);
    if (n == 0 || !all_digits(tok[0]))
        return HESSFIT_SUCCESS;
    if (n == 1 && strcmp(tok[0], "1") == 0)
        return HESSFIT_SUCCESS;
    if (n > MMO_MAX_TOKENS)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: row with more than %d fields", path, lineno, MMO_MAX_TOKENS);
    if (n < section_info[sec].min_tokens)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s row with %d fields, expected at least %d", path, lineno,
                        sec == SEC_OTHER ? "interaction" : section_info[sec].words, n, section_info[sec].min_tokens);
    s->rows[sec]++;
    if (section_info[sec].stored)
        return parse_term_row(s, sec, tok, n, path, lineno);
    return HESSFIT_SUCCESS;
}

/* The line after "Input Structure Name:": " *  1 ZDMP from JCTC SI      *". */
static hessfit_status read_name(hf_lines *r, mmo_structure *s)
{
    int eof;
    hessfit_status st;
    char *p, *name;
    if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
        return st;
    if (eof)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends after 'Input Structure Name:'", r->path,
                        hf_lines_last_line(r));
    p = (char *)hf_skip_space(r->buf);
    if (*p == '*')
        p++;
    hf_rstrip(p);
    if (*p != '\0' && p[strlen(p) - 1] == '*')
        p[strlen(p) - 1] = '\0';
    hf_rstrip(p);
    p = (char *)hf_skip_space(p);
    if ((name = hf_strdup(p)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for the structure name", r->path, r->line);
    free(s->name);
    s->name = name;
    return HESSFIT_SUCCESS;
}

/* "TT (  n)" at the start of a Connection Table line: the type label and the atom number; 0 if
 * the line does not have that shape. rest points after ')'. */
static int atom_line_head(char *line, char *type, size_t type_size, long *number, char **rest)
{
    char *p = (char *)hf_skip_space(line), *q;
    size_t len = 0;
    long v = 0;
    while (p[len] && !isspace((unsigned char)p[len]) && p[len] != '(')
        len++;
    if (len == 0 || len >= type_size)
        return 0;
    q = (char *)hf_skip_space(p + len);
    if (*q != '(')
        return 0;
    q = (char *)hf_skip_space(q + 1);
    if (!isdigit((unsigned char)*q))
        return 0;
    while (isdigit((unsigned char)*q)) {
        if (v > MMO_MAX_ATOMS)
            return 0;
        v = 10 * v + (*q++ - '0');
    }
    q = (char *)hf_skip_space(q);
    if (*q != ')')
        return 0;
    memcpy(type, p, len);
    type[len] = '\0';
    *number = v;
    *rest = q + 1;
    return 1;
}

/* An attached-atom field: digits and a bond mark ('-', '=', '%' or none). */
static hessfit_status parse_attachment(const char *token, const char *path, int lineno, mmo_attachment *a)
{
    long v = 0;
    const char *p = token;
    if (!isdigit((unsigned char)*p))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: attached atom '%.40s' is not an atom number with a bond mark", path,
                        lineno, token);
    while (isdigit((unsigned char)*p)) {
        v = 10 * v + (*p++ - '0');
        if (v > MMO_MAX_ATOMS)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: attached atom '%.40s' is out of range", path, lineno, token);
    }
    switch (*p) {
    case '\0': a->order = 0; break;
    case '-': a->order = 1; break;
    case '=': a->order = 2; break;
    case '%': a->order = 3; break;
    default:
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: attached atom '%.40s' has an unknown bond mark '%c'", path, lineno,
                        token, *p);
    }
    if (*p != '\0' && p[1] != '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: attached atom '%.40s' is not an atom number with a bond mark", path,
                        lineno, token);
    if (v < 1)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: attached atom number 0 in '%.40s'", path, lineno, token);
    a->neighbour = (int)v;
    return HESSFIT_SUCCESS;
}

static hessfit_status add_atom(mmo_structure *s, const char *type, char *rest, const char *path, int lineno)
{
    char *tok[MMO_MAX_TOKENS];
    double v[5];
    long resnum;
    int n, z, i = s->n_atoms;
    hessfit_status st;
    static const char *const what[5] = {"QQ charge", "Sol charge", "x coordinate", "y coordinate", "z coordinate"};
    n = hf_split(rest, tok, MMO_MAX_TOKENS);
    if (n > MMO_MAX_TOKENS)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom line with more than %d fields", path, lineno, MMO_MAX_TOKENS);
    if (n < 7)
        return hessfit_error(HESSFIT_ERROR_PARSE,
                        "%s:%d: atom line with %d fields after the atom number, expected QQ Sol X Y Z residue "
                        "and its number",
                        path, lineno, n);
    for (int k = 0; k < 5; k++)
        if ((st = hf_parse_double(tok[k], path, lineno, what[k], &v[k])) != HESSFIT_SUCCESS)
            return st;
    if ((st = hf_parse_int(tok[6], path, lineno, "residue number", -100000000, 100000000, &resnum)) != HESSFIT_SUCCESS)
        return st;
    z = hf_macromodel_type_atomic_number(type);
    if (z <= 0 || hessfit_element_symbol(z) == NULL)
        return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT,
                        "%s:%d: unknown MacroModel atom type '%s' (no element in MacroModel's atom.typ table)", path,
                        lineno, type);
    {
        const hf_atom_array arrays[] = {{(void **)&s->coords, 3 * sizeof(double), 0},
                                        {(void **)&s->charges, sizeof(double), 0},
                                        {(void **)&s->types, sizeof(char *), 0},
                                        {(void **)&s->atom_line, sizeof(int), 0},
                                        {(void **)&s->attach_start, sizeof(int), 1}};
        if ((st = hf_grow_atom_arrays(&s->atomic_numbers, &s->cap_atoms, (size_t)i + 1, arrays, 5, path, lineno)) !=
            HESSFIT_SUCCESS)
            return st;
    }
    if ((s->types[i] = hf_strdup(type)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for an atom type", path, lineno);
    s->atomic_numbers[i] = z;
    s->charges[i] = v[0];
    for (int k = 0; k < 3; k++)
        s->coords[3 * i + k] = v[2 + k];
    s->atom_line[i] = lineno;
    s->attach_start[i] = (int)s->n_attach;
    s->n_atoms = i + 1;
    for (int k = 7; k < n; k++) {
        mmo_attachment a;
        if ((st = parse_attachment(tok[k], path, lineno, &a)) != HESSFIT_SUCCESS)
            return st;
        for (size_t e = (size_t)s->attach_start[i]; e < s->n_attach; e++)
            if (s->attach[e].neighbour == a.neighbour)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom %d lists attached atom %d twice", path, lineno, i + 1,
                                a.neighbour);
        if ((st = hf_grow((void **)&s->attach, &s->cap_attach, s->n_attach + 1, sizeof *s->attach, "attached atoms")) !=
            HESSFIT_SUCCESS)
            return hf_error_located(st, path, lineno);
        s->attach[s->n_attach++] = a;
    }
    s->attach_start[i + 1] = (int)s->n_attach;
    return HESSFIT_SUCCESS;
}

static const char bond_mark[4] = {' ', '-', '=', '%'};

/* Bonds from the attachment lists: each listed by both atoms with the same mark, stored once. */
static hessfit_status build_bonds(mmo_structure *s, const char *path)
{
    hessfit_status st;
    for (int i = 0; i < s->n_atoms; i++) {
        for (int e = s->attach_start[i]; e < s->attach_start[i + 1]; e++) {
            int j = s->attach[e].neighbour - 1, found = -1;
            if (j >= s->n_atoms)
                return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: atom %d is attached to atom %d, but the structure has %d atoms",
                                path, s->atom_line[i], i + 1, j + 1, s->n_atoms);
            if (j == i)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom %d is attached to itself", path, s->atom_line[i], i + 1);
            for (int f = s->attach_start[j]; f < s->attach_start[j + 1]; f++)
                if (s->attach[f].neighbour == i + 1)
                    found = f;
            if (found < 0)
                return hessfit_error(HESSFIT_ERROR_PARSE,
                                "%s:%d: atom %d lists atom %d as attached, but atom %d (line %d) does not "
                                "list atom %d",
                                path, s->atom_line[i], i + 1, j + 1, j + 1, s->atom_line[j], i + 1);
            if (s->attach[found].order != s->attach[e].order)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: bond %d-%d has mark '%c' here and '%c' at atom %d (line %d)",
                                path, s->atom_line[i], i + 1, j + 1, bond_mark[s->attach[e].order],
                                bond_mark[s->attach[found].order], j + 1, s->atom_line[j]);
            if (i > j)
                continue;
            if ((st = hf_grow((void **)&s->bonds, &s->cap_bonds, 2 * (s->n_bonds + 1), sizeof(int), "bonds")) !=
                    HESSFIT_SUCCESS ||
                (st = hf_grow((void **)&s->bond_orders, &s->cap_bond_orders, s->n_bonds + 1, sizeof(double),
                              "bonds")) != HESSFIT_SUCCESS)
                return hf_error_located(st, path, s->atom_line[i]);
            s->bonds[2 * s->n_bonds] = i;
            s->bonds[2 * s->n_bonds + 1] = j;
            s->bond_orders[s->n_bonds] = s->attach[e].order;
            s->n_bonds++;
        }
    }
    return HESSFIT_SUCCESS;
}

/* From the "Connection Table" line to "Total QQ  charge on system = q". */
static hessfit_status read_connection_table(hf_lines *r, mmo_structure *s)
{
    const int table_line = r->line;
    int header_lines = 0, eof;
    hessfit_status st;
    for (;;) {
        char type[8];
        char *rest;
        long number;
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof)
            return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends inside the Connection Table of line %d", r->path,
                            hf_lines_last_line(r), table_line);
        if (hf_starts_with(r->buf, "Total QQ", 1)) {
            const char *eq = strchr(r->buf, '=');
            char value[64];
            double sum = 0.0;
            if (s->n_atoms == 0)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: Connection Table (line %d) without atoms", r->path, r->line,
                                table_line);
            if (eq == NULL || sscanf(eq + 1, "%63s", value) != 1)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: 'Total QQ charge' line without a value", r->path, r->line);
            if ((st = hf_parse_double(value, r->path, r->line, "total QQ charge", &s->total_charge)) != HESSFIT_SUCCESS)
                return st;
            for (int i = 0; i < s->n_atoms; i++)
                sum += s->charges[i];
            /* each QQ is printed to 0.001 e: the sum may differ by half a digit per atom */
            if (fabs(sum - s->total_charge) > 0.0005 * s->n_atoms + 0.001)
                return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: the QQ charges add up to %.4f, the total printed is %.4f",
                                r->path, r->line, sum, s->total_charge);
            return build_bonds(s, r->path);
        }
        if (atom_line_head(r->buf, type, sizeof type, &number, &rest)) {
            if (number != s->n_atoms + 1)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom number %ld where atom %d was expected", r->path, r->line,
                                number, s->n_atoms + 1);
            if ((st = add_atom(s, type, rest, r->path, r->line)) != HESSFIT_SUCCESS)
                return st;
            continue;
        }
        if (hf_is_blank(r->buf))
            continue;
        if (s->n_atoms > 0)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unexpected line in the Connection Table: '%.60s'", r->path, r->line,
                            r->buf);
        if (++header_lines > MMO_MAX_TABLE_HEADER)
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: no atom lines after the Connection Table header of line %d",
                            r->path, r->line, table_line);
    }
}

/* The structure is complete: check the counts and the term atoms, and move it into mol. */
static hessfit_status finish_structure(mmo_structure *s, const char *path, hessfit_molecule *mol)
{
    for (int sec = SEC_BOND; sec < SEC_OTHER; sec++) {
        int line = s->announced_line[sec];
        if (line == 0)
            continue;
        if (sec == SEC_CROSS ? s->rows[sec] > s->announced[sec] : s->rows[sec] != s->announced[sec])
            return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %d %s interactions announced, %d rows read", path, line,
                            s->announced[sec], section_info[sec].words, s->rows[sec]);
    }
    for (size_t t = 0; t < s->n_terms; t++) {
        hessfit_reported_term *term = &s->terms[t];
        int na = hessfit_term_kind_atoms(term->kind);
        for (int a = 0; a < na; a++) {
            if (term->atoms[a] > s->n_atoms)
                return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %s term names atom %d, but the structure has %d atoms", path,
                                term->line, hessfit_term_kind_name(term->kind), term->atoms[a], s->n_atoms);
            for (int b = 0; b < a; b++)
                if (term->atoms[a] == term->atoms[b])
                    return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s term names atom %d twice", path, term->line,
                                    hessfit_term_kind_name(term->kind), term->atoms[a]);
        }
        for (int a = 0; a < na; a++)
            term->atoms[a] -= 1;
    }
    memset(mol, 0, sizeof *mol);
    mol->source = hf_source_at_line(path, s->first_line);
    mol->name = s->name != NULL ? s->name : hf_strdup("");
    s->name = NULL;
    if (mol->source == NULL || mol->name == NULL) {
        hessfit_molecule_free(mol);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a structure", path);
    }
    mol->n_atoms = s->n_atoms;
    mol->atomic_numbers = s->atomic_numbers;
    mol->coords = s->coords;
    mol->atom_types = s->types;
    mol->partial_charges = s->charges;
    mol->bonds_known = 1;
    mol->n_bonds = (int)s->n_bonds;
    mol->bonds = s->bonds;
    mol->bond_orders = s->bond_orders;
    mol->n_reported_terms = (int)s->n_terms;
    mol->reported_terms = s->terms;
    if (fabs(s->total_charge - round(s->total_charge)) <= 0.01) {
        mol->has_charge = 1;
        mol->charge = (int)lround(s->total_charge);
    }
    s->atomic_numbers = NULL;
    s->coords = s->charges = s->bond_orders = NULL;
    s->types = NULL;
    s->bonds = NULL;
    s->terms = NULL;
    s->n_atoms = 0;
    structure_free(s);
    /* hessfit_molecule_check's conditions hold by construction (known elements, finite coordinates,
     * each bond once and in range); its pairwise bond scan is left out for large inputs */
    return HESSFIT_SUCCESS;
}

static hessfit_status read_mmo(hf_lines *r, hessfit_molecule_list *out, void *state)
{
    mmo_structure *s = state;
    mmo_section sec = SEC_NONE;
    size_t cap = 0;
    int eof;
    hessfit_status st;
    for (;;) {
        mmo_section header;
        int count = 0;
        const char *p;
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof)
            break;
        if ((st = parse_section_header(r->buf, r->path, r->line, &header, &count)) != HESSFIT_SUCCESS)
            return st;
        if (header != SEC_NONE) {
            if (!s->started) {
                s->started = 1;
                s->first_line = r->line;
            }
            if (header != SEC_OTHER && s->announced_line[header] != 0)
                return hessfit_error(HESSFIT_ERROR_FORMAT,
                                "%s:%d: a second '%s' section for one structure (the first is at line "
                                "%d) before its Connection Table",
                                r->path, r->line, section_info[header].words, s->announced_line[header]);
            if (header != SEC_OTHER) {
                s->announced[header] = count;
                s->announced_line[header] = r->line;
            }
            sec = header;
            continue;
        }
        p = hf_skip_space(r->buf);
        if (strstr(r->buf, "Input Structure Name:") != NULL) {
            sec = SEC_NONE;
            if (!s->started) {
                s->started = 1;
                s->first_line = r->line;
            }
            if ((st = read_name(r, s)) != HESSFIT_SUCCESS)
                return st;
            continue;
        }
        if (strncmp(p, "Connection Table", 16) == 0) {
            hessfit_molecule mol;
            sec = SEC_NONE;
            if (!s->started)
                s->first_line = r->line;
            if ((st = read_connection_table(r, s)) != HESSFIT_SUCCESS)
                return st;
            if ((st = hf_structures_reserve(out, &cap, "structures", r->path, r->line)) != HESSFIT_SUCCESS)
                return st;
            if ((st = finish_structure(s, r->path, &mol)) != HESSFIT_SUCCESS)
                return st;
            out->items[out->n++] = mol;
            continue;
        }
        /* the banner, time stamps and the energy breakdown end any section */
        if (strncmp(p, "TIME:", 5) == 0 || strncmp(p, "Time:", 5) == 0 || strncmp(p, "**", 2) == 0 ||
            strncmp(p, "Energy Equations", 16) == 0) {
            sec = SEC_NONE;
            continue;
        }
        if (sec != SEC_NONE && (st = section_line(s, sec, r->buf, r->path, r->line)) != HESSFIT_SUCCESS)
            return st;
    }
    if (hf_lines_last_line(r) <= 1 && out->n == 0 && !s->started)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:1: empty file or no MacroModel output", r->path);
    if (s->started)
        return hessfit_error(
            HESSFIT_ERROR_TRUNCATED,
            "%s:%d: the file ends before the Connection Table of structure %d (its output starts at line %d)", r->path,
            hf_lines_last_line(r), out->n + 1, s->first_line);
    if (out->n == 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: no 'Connection Table' in the file: not MacroModel .mmo output",
                        r->path, hf_lines_last_line(r));
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_mmo_read(const char *path, hessfit_molecule_list *list)
{
    mmo_structure s;
    memset(&s, 0, sizeof s);
    return hf_read_structures("hessfit_mmo_read", path, list, read_mmo, &s, structure_free);
}
