/*
 * Tripos mol2 reader: every @<TRIPOS>MOLECULE with its name, atoms (names, types, coordinates in
 * Angstrom, charges) and bonds. Other record types (SUBSTRUCTURE, CRYSIN, ...) are skipped.
 *
 *   @<TRIPOS>MOLECULE   name line, then "num_atoms [num_bonds [num_subst ...]]", mol_type,
 *                       charge_type (NO_CHARGES: no partial charges are stored), ...
 *   @<TRIPOS>ATOM       atom_id atom_name x y z atom_type [subst_id [subst_name [charge [status]]]]
 *   @<TRIPOS>BOND       bond_id origin_atom_id target_atom_id bond_type [status]
 *
 * Atom ids must run 1..N in file order (HESSFIT_ERROR_UNSUPPORTED otherwise); the ATOM rows must
 * number num_atoms and, when a BOND record is present or num_bonds > 0, the BOND rows num_bonds.
 * Charges are stored when every atom row has the charge column (a mix is an error). A molecule
 * without a BOND record has bonds_known = 0.
 *
 * Bond orders stored (bond_type -> bond_orders[b]): "1" 1, "2" 2, "3" 3, "ar" (aromatic) 1.5,
 * "am" (amide C-N) 1, and 0 for a bond without order: "du" (dummy), "un" (unknown) and "nc"
 * ("not connected" in the Tripos spec; files converted from MacroModel use it for the zero-order
 * dative metal bonds, e.g. the Rh-O and Rh-C bonds of the rh-enamide set, so it is kept as a bond).
 *
 * Elements, first rule that gives one:
 *   1. a SYBYL type with a dot ("C.3", "N.ar", "Co.oh"): the part before the dot;
 *   2. a MacroModel atom-type label ("C2", "H1", "RH"; case-sensitive, hf_macromodel_types.c) --
 *      q2mm writes its mol2 files with MacroModel types;
 *   3. a type that is an element symbol in its usual case ("H", "Cl", "Br", "Fe");
 *   4. the atom name: its leading letters as an element symbol ("H12" -> H, "RH" -> Rh,
 *      "HA" -> H since Ha is no element). When both the first letter and the first two letters
 *      are elements ("CA": C or Ca?) only a name in the usual case decides ("Ca"); otherwise the
 *      atom is an error, never a guess.
 * The rh-enamide mol2 set uses MacroModel labels plus the mm3.fld equivalence aliases "PX" (P)
 * and "HX" (H), which rule 4 resolves from the names; ethane's GS.mol2 has "C3" and "HC".
 */
#include "hessfit_elements.h"
#include "hessfit_molecule.h"
#include "hf_lines.h"
#include "hf_macromodel_types.h"
#include "hf_read_structures.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOL2_MAX_ATOMS 10000000L
#define MOL2_MAX_TOKENS 16
#define MOL2_RECORD "@<TRIPOS>"

typedef enum mol2_record { REC_NONE = 0, REC_MOLECULE, REC_ATOM, REC_BOND, REC_OTHER } mol2_record;

/* A molecule being read. */
typedef struct mol2_builder {
    int active;
    int start_line; /* the @<TRIPOS>MOLECULE line */
    int counts_line;
    long announced_atoms;
    long announced_bonds; /* -1: the counts line does not say */
    int molecule_lines;   /* lines of the MOLECULE record read after the counts line */
    int no_charges;       /* charge_type NO_CHARGES */
    int atom_record_line; /* 0: no ATOM record yet */
    int bond_record_line; /* 0: no BOND record yet */
    int charge_columns;   /* atom rows with a charge column */
    char *name;
    int n_atoms;
    size_t cap_atoms;
    int *atomic_numbers;
    double *coords;
    double *charges;
    char **types;
    char **names;
    int n_bonds;
    size_t cap_bonds, cap_orders, cap_bond_lines;
    int *bonds;
    double *orders;
    int *bond_lines;
} mol2_builder;

static void builder_free(void *state)
{
    mol2_builder *b = state;
    free(b->name);
    free(b->atomic_numbers);
    free(b->coords);
    free(b->charges);
    for (int i = 0; i < b->n_atoms; i++) {
        if (b->types != NULL)
            free(b->types[i]);
        if (b->names != NULL)
            free(b->names[i]);
    }
    free(b->types);
    free(b->names);
    free(b->bonds);
    free(b->orders);
    free(b->bond_lines);
    memset(b, 0, sizeof *b);
}

/* Case-insensitive string equality (ASCII). */
static int same_text_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* Atomic number from an element-like string, case-insensitive; 0 if none. */
static int element_of(const char *s, size_t len)
{
    char sym[4];
    if (len == 0 || len >= sizeof sym)
        return 0;
    memcpy(sym, s, len);
    sym[len] = '\0';
    return hessfit_element_atomic_number(sym);
}

/* Rule 3: s is an element symbol written in its canonical case. */
static int canonical_element(const char *s)
{
    int z = hessfit_element_atomic_number(s);
    const char *sym = z > 0 ? hessfit_element_symbol(z) : NULL;
    return sym != NULL && strcmp(sym, s) == 0 ? z : 0;
}

/* Rule 4: the element from an atom name; 0 none, -1 ambiguous. */
static int element_from_name(const char *name)
{
    size_t len = 0;
    int z1, z2;
    while (isalpha((unsigned char)name[len]))
        len++;
    if (len == 0)
        return 0;
    z1 = element_of(name, 1);
    z2 = len >= 2 ? element_of(name, 2) : 0;
    if (z2 == 0)
        return z1;
    if (z1 == 0)
        return z2;
    /* both readings exist: only "Ca"-style case says it is the two-letter element */
    if (isupper((unsigned char)name[0]) && islower((unsigned char)name[1]))
        return z2;
    return -1;
}

/* The element of an atom by the rules in the header comment; an error names file:line. */
static hessfit_status atom_element(const char *type, const char *name, const char *path, int line, int *z)
{
    const char *dot = strchr(type, '.');
    int e;
    if (dot != NULL) {
        if ((e = element_of(type, (size_t)(dot - type))) > 0) {
            *z = e;
            return HESSFIT_SUCCESS;
        }
        return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: SYBYL atom type '%s' (atom '%s') names no element", path,
                        line, type, name);
    }
    if ((e = hf_macromodel_type_atomic_number(type)) > 0 || (e = canonical_element(type)) > 0) {
        *z = e;
        return HESSFIT_SUCCESS;
    }
    e = element_from_name(name);
    if (e > 0) {
        *z = e;
        return HESSFIT_SUCCESS;
    }
    return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT,
                    "%s:%d: cannot tell the element of atom '%s' of type '%s': the type is neither a SYBYL, "
                    "MacroModel nor element type, and the name is %s",
                    path, line, name, type, e < 0 ? "ambiguous" : "no element symbol");
}

static hessfit_status parse_bond_order(const char *token, const char *path, int line, double *order)
{
    static const struct {
        const char *name;
        double order;
    } kinds[] = {{"1", 1.0}, {"2", 2.0}, {"3", 3.0}, {"ar", 1.5}, {"am", 1.0}, {"du", 0.0}, {"un", 0.0}, {"nc", 0.0}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (same_text_nocase(token, kinds[k].name)) {
            *order = kinds[k].order;
            return HESSFIT_SUCCESS;
        }
    return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unknown bond type '%.40s' (expected 1 2 3 ar am du un nc)", path, line,
                    token);
}

static hessfit_status parse_atom_row(mol2_builder *b, char *line, const char *path, int lineno)
{
    char *tok[MOL2_MAX_TOKENS];
    long id;
    double xyz[3], charge = 0.0;
    int n = hf_split(line, tok, MOL2_MAX_TOKENS), z = 0, i = b->n_atoms, has_charge;
    hessfit_status st;
    static const char *const what[3] = {"x coordinate", "y coordinate", "z coordinate"};
    if (n < 6)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom row with %d fields, expected at least 6 (id name x y z type)",
                        path, lineno, n);
    if ((st = hf_parse_int(tok[0], path, lineno, "atom id", 1, MOL2_MAX_ATOMS, &id)) != HESSFIT_SUCCESS)
        return st;
    if (id != i + 1)
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s:%d: atom id %ld where %d was expected (ids must run 1..N in order)",
                        path, lineno, id, i + 1);
    if (i >= b->announced_atoms)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: more atom rows than the %ld announced at line %d", path, lineno,
                        b->announced_atoms, b->counts_line);
    for (int k = 0; k < 3; k++)
        if ((st = hf_parse_double(tok[2 + k], path, lineno, what[k], &xyz[k])) != HESSFIT_SUCCESS)
            return st;
    has_charge = n >= 9;
    if (has_charge && (st = hf_parse_double(tok[8], path, lineno, "charge", &charge)) != HESSFIT_SUCCESS)
        return st;
    if (i > 0 && has_charge != (b->charge_columns > 0))
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: atom %d %s a charge column, the atoms before it %s", path, lineno,
                        i + 1, has_charge ? "has" : "lacks", has_charge ? "do not" : "do");
    if ((st = atom_element(tok[5], tok[1], path, lineno, &z)) != HESSFIT_SUCCESS)
        return st;
    {
        const hf_atom_array arrays[] = {{(void **)&b->coords, 3 * sizeof(double), 0},
                                        {(void **)&b->charges, sizeof(double), 0},
                                        {(void **)&b->types, sizeof(char *), 0},
                                        {(void **)&b->names, sizeof(char *), 0}};
        if ((st = hf_grow_atom_arrays(&b->atomic_numbers, &b->cap_atoms, (size_t)i + 1, arrays, 4, path, lineno)) !=
            HESSFIT_SUCCESS)
            return st;
    }
    b->types[i] = hf_strdup(tok[5]);
    b->names[i] = hf_strdup(tok[1]);
    b->n_atoms = i + 1; /* from here on builder_free frees the two strings */
    if (b->types[i] == NULL || b->names[i] == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for an atom", path, lineno);
    b->atomic_numbers[i] = z;
    memcpy(&b->coords[3 * i], xyz, sizeof xyz);
    b->charges[i] = charge;
    b->charge_columns += has_charge;
    return HESSFIT_SUCCESS;
}

static hessfit_status parse_bond_row(mol2_builder *b, char *line, const char *path, int lineno)
{
    char *tok[MOL2_MAX_TOKENS];
    long id, a1, a2;
    double order = 0.0;
    int n = hf_split(line, tok, MOL2_MAX_TOKENS), k = b->n_bonds;
    hessfit_status st;
    if (n < 4)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: bond row with %d fields, expected at least 4 (id atom atom type)", path,
                        lineno, n);
    if ((st = hf_parse_int(tok[0], path, lineno, "bond id", 1, 10 * MOL2_MAX_ATOMS, &id)) != HESSFIT_SUCCESS ||
        (st = hf_parse_int(tok[1], path, lineno, "bond origin atom", 1, b->n_atoms, &a1)) != HESSFIT_SUCCESS ||
        (st = hf_parse_int(tok[2], path, lineno, "bond target atom", 1, b->n_atoms, &a2)) != HESSFIT_SUCCESS ||
        (st = parse_bond_order(tok[3], path, lineno, &order)) != HESSFIT_SUCCESS)
        return st;
    if (a1 == a2)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: bond %ld joins atom %ld to itself", path, lineno, id, a1);
    if (b->announced_bonds >= 0 && k >= b->announced_bonds)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: more bond rows than the %ld announced at line %d", path, lineno,
                        b->announced_bonds, b->counts_line);
    if ((st = hf_grow((void **)&b->bonds, &b->cap_bonds, 2 * ((size_t)k + 1), sizeof(int), "bonds")) != HESSFIT_SUCCESS ||
        (st = hf_grow((void **)&b->orders, &b->cap_orders, (size_t)k + 1, sizeof(double), "bonds")) != HESSFIT_SUCCESS ||
        (st = hf_grow((void **)&b->bond_lines, &b->cap_bond_lines, (size_t)k + 1, sizeof(int), "bonds")) != HESSFIT_SUCCESS)
        return hf_error_located(st, path, lineno);
    b->bonds[2 * k] = (int)(a1 < a2 ? a1 : a2) - 1;
    b->bonds[2 * k + 1] = (int)(a1 < a2 ? a2 : a1) - 1;
    b->orders[k] = order;
    b->bond_lines[k] = lineno;
    b->n_bonds = k + 1;
    return HESSFIT_SUCCESS;
}

typedef struct bond_key {
    uint64_t key;
    int line;
} bond_key;

static int compare_bond_keys(const void *pa, const void *pb)
{
    const bond_key *a = pa, *b = pb;
    return a->key < b->key ? -1 : a->key > b->key ? 1 : a->line - b->line;
}

/* No bond listed twice (sorting keeps this O(B log B) for large molecules). */
static hessfit_status check_duplicate_bonds(const mol2_builder *b, const char *path)
{
    bond_key *keys;
    if (b->n_bonds < 2)
        return HESSFIT_SUCCESS;
    keys = malloc((size_t)b->n_bonds * sizeof *keys);
    if (keys == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory to check %d bonds", path, b->n_bonds);
    for (int k = 0; k < b->n_bonds; k++) {
        keys[k].key = ((uint64_t)(uint32_t)b->bonds[2 * k] << 32) | (uint32_t)b->bonds[2 * k + 1];
        keys[k].line = b->bond_lines[k];
    }
    qsort(keys, (size_t)b->n_bonds, sizeof *keys, compare_bond_keys);
    for (int k = 1; k < b->n_bonds; k++)
        if (keys[k].key == keys[k - 1].key) {
            int i = (int)(keys[k].key >> 32), j = (int)(keys[k].key & 0xffffffffu), l0 = keys[k - 1].line,
                l1 = keys[k].line;
            free(keys);
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: bond %d-%d is listed twice (also at line %d)", path, l1, i + 1,
                            j + 1, l0);
        }
    free(keys);
    return HESSFIT_SUCCESS;
}

/* The molecule is complete: check counts and move it into mol. */
static hessfit_status finish_molecule(mol2_builder *b, const char *path, int end_line, hessfit_molecule *mol)
{
    hessfit_status st;
    if (b->atom_record_line == 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: molecule '%s' has no @<TRIPOS>ATOM record", path, b->start_line,
                        b->name);
    if (b->n_atoms != b->announced_atoms)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %ld atoms announced, %d atom rows read (record ends at line %d)", path,
                        b->counts_line, b->announced_atoms, b->n_atoms, end_line);
    if (b->bond_record_line == 0 && b->announced_bonds > 0)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %ld bonds announced, but the molecule has no @<TRIPOS>BOND record",
                        path, b->counts_line, b->announced_bonds);
    if (b->bond_record_line != 0 && b->announced_bonds >= 0 && b->n_bonds != b->announced_bonds)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %ld bonds announced, %d bond rows read (record ends at line %d)", path,
                        b->counts_line, b->announced_bonds, b->n_bonds, end_line);
    if ((st = check_duplicate_bonds(b, path)) != HESSFIT_SUCCESS)
        return st;
    memset(mol, 0, sizeof *mol);
    if ((mol->source = hf_source_at_line(path, b->start_line)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a molecule", path);
    mol->name = b->name;
    mol->n_atoms = b->n_atoms;
    mol->atomic_numbers = b->atomic_numbers;
    mol->coords = b->coords;
    mol->atom_types = b->types;
    mol->atom_names = b->names;
    if (b->charge_columns > 0 && !b->no_charges) {
        mol->partial_charges = b->charges;
        b->charges = NULL;
    }
    mol->bonds_known = b->bond_record_line != 0;
    mol->n_bonds = b->n_bonds;
    mol->bonds = b->bonds;
    mol->bond_orders = b->orders;
    b->name = NULL;
    b->atomic_numbers = NULL;
    b->coords = NULL;
    b->types = b->names = NULL;
    b->bonds = NULL;
    b->orders = NULL;
    b->n_atoms = 0;
    builder_free(b);
    return HESSFIT_SUCCESS;
}

static hessfit_status start_molecule(hf_lines *r, mol2_builder *b)
{
    char *tok[MOL2_MAX_TOKENS];
    long v;
    int eof, n;
    hessfit_status st;
    memset(b, 0, sizeof *b);
    b->active = 1;
    b->start_line = r->line;
    b->announced_bonds = -1;
    if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
        return st;
    if (eof || hf_starts_with(r->buf, MOL2_RECORD, 1))
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: @<TRIPOS>MOLECULE of line %d without its name and counts lines",
                        r->path, eof ? hf_lines_last_line(r) : r->line, b->start_line);
    hf_rstrip(r->buf);
    if ((b->name = hf_strdup(hf_skip_space(r->buf))) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for the name", r->path, r->line);
    if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
        return st;
    if (eof || hf_starts_with(r->buf, MOL2_RECORD, 1))
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: @<TRIPOS>MOLECULE of line %d without its counts line", r->path,
                        eof ? hf_lines_last_line(r) : r->line, b->start_line);
    b->counts_line = r->line;
    n = hf_split(r->buf, tok, MOL2_MAX_TOKENS);
    if (n < 1)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: empty counts line (expected num_atoms [num_bonds ...])", r->path,
                        r->line);
    if ((st = hf_parse_int(tok[0], r->path, r->line, "number of atoms", 1, MOL2_MAX_ATOMS, &v)) != HESSFIT_SUCCESS)
        return st;
    b->announced_atoms = v;
    if (n >= 2) {
        if ((st = hf_parse_int(tok[1], r->path, r->line, "number of bonds", 0, 10 * MOL2_MAX_ATOMS, &v)) != HESSFIT_SUCCESS)
            return st;
        b->announced_bonds = v;
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status read_mol2(hf_lines *r, hessfit_molecule_list *out, void *state)
{
    mol2_builder *b = state;
    mol2_record rec = REC_NONE;
    size_t cap = 0;
    int eof;
    hessfit_status st;
    for (;;) {
        const char *p;
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof)
            break;
        p = hf_skip_space(r->buf);
        if (strncmp(p, MOL2_RECORD, strlen(MOL2_RECORD)) == 0) {
            const char *kind = p + strlen(MOL2_RECORD);
            char name[32];
            if (sscanf(kind, "%31s", name) != 1)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: record header without a record type", r->path, r->line);
            if (strcmp(name, "MOLECULE") == 0) {
                if (b->active) {
                    hessfit_molecule mol;
                    if ((st = hf_structures_reserve(out, &cap, "molecules", r->path, r->line)) != HESSFIT_SUCCESS)
                        return st;
                    if ((st = finish_molecule(b, r->path, r->line - 1, &mol)) != HESSFIT_SUCCESS)
                        return st;
                    out->items[out->n++] = mol;
                }
                if ((st = start_molecule(r, b)) != HESSFIT_SUCCESS)
                    return st;
                rec = REC_MOLECULE;
                continue;
            }
            if (!b->active)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: @<TRIPOS>%s before any @<TRIPOS>MOLECULE", r->path, r->line,
                                name);
            if (strcmp(name, "ATOM") == 0) {
                if (b->atom_record_line != 0)
                    return hessfit_error(HESSFIT_ERROR_FORMAT,
                                    "%s:%d: a second @<TRIPOS>ATOM record in one molecule (first at "
                                    "line %d)",
                                    r->path, r->line, b->atom_record_line);
                b->atom_record_line = r->line;
                rec = REC_ATOM;
            } else if (strcmp(name, "BOND") == 0) {
                if (b->bond_record_line != 0)
                    return hessfit_error(HESSFIT_ERROR_FORMAT,
                                    "%s:%d: a second @<TRIPOS>BOND record in one molecule (first at "
                                    "line %d)",
                                    r->path, r->line, b->bond_record_line);
                if (b->atom_record_line == 0)
                    return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s:%d: @<TRIPOS>BOND before the @<TRIPOS>ATOM record",
                                    r->path, r->line);
                b->bond_record_line = r->line;
                rec = REC_BOND;
            } else {
                rec = REC_OTHER;
            }
            continue;
        }
        if (*p == '\0' || *p == '#')
            continue;
        switch (rec) {
        case REC_NONE:
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: text before the first @<TRIPOS>MOLECULE: not a mol2 file?",
                            r->path, r->line);
        case REC_MOLECULE: /* mol_type, then charge_type, then status bits and comment */
            if (++b->molecule_lines == 2 && strncmp(p, "NO_CHARGES", 10) == 0)
                b->no_charges = 1;
            break;
        case REC_ATOM:
            if ((st = parse_atom_row(b, r->buf, r->path, r->line)) != HESSFIT_SUCCESS)
                return st;
            break;
        case REC_BOND:
            if ((st = parse_bond_row(b, r->buf, r->path, r->line)) != HESSFIT_SUCCESS)
                return st;
            break;
        case REC_OTHER: break;
        }
    }
    if (!b->active) {
        if (r->line <= 1)
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:1: empty file, no @<TRIPOS>MOLECULE", r->path);
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: no @<TRIPOS>MOLECULE in the file", r->path, hf_lines_last_line(r));
    }
    {
        hessfit_molecule mol;
        if ((st = hf_structures_reserve(out, &cap, "molecules", r->path, hf_lines_last_line(r))) != HESSFIT_SUCCESS)
            return st;
        if ((st = finish_molecule(b, r->path, hf_lines_last_line(r), &mol)) != HESSFIT_SUCCESS)
            return st;
        out->items[out->n++] = mol;
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_mol2_read(const char *path, hessfit_molecule_list *list)
{
    mol2_builder b;
    memset(&b, 0, sizeof b);
    return hf_read_structures("hessfit_mol2_read", path, list, read_mol2, &b, builder_free);
}
