/*
 * MacroModel MM3* force-field files (.fld): read every stretch, bend, torsion, out-of-plane and
 * van der Waals line into hessfit_ff_param, the atom-type equivalences and the substructures; write the
 * file back with only the numeric fields of changed parameters rewritten.
 *
 * The file is a sequence of sections, each opened by a marker line "-N" in columns 1-2:
 *   (before -1)  title lines
 *   -1           introduction: energy functions, conversion factors, selections (" 0 ..." lines)
 *   -5           atom-type equivalences: " 1  CU  C1 C2" = types C1 and C2 also match "CU"
 *   -2           a parameter table (Fortran format of the following lines); the main tables follow
 *                one another, each opened by its own -2
 *   -6           the van der Waals table, up to "END OF NONBONDED INTERACTIONS"
 *   -3           a substructure: " C  name", " 9  pattern", "-2", its parameter lines; the last -3
 *                of the file, followed by nothing but blank lines, closes the substructure section
 * Lines " C ..." are comments anywhere.
 *
 * Columns of a -2 parameter line (0-based, end exclusive; MacroModel reads them with fixed Fortran
 * formats, so positions matter, not whitespace):
 *   [0]      ' ', or 'a' for an alternative parameter (read like the others)
 *   [1]      interaction code: 1 stretch, 2 bend, 3 stretch-bend, 4 torsion, 5 out-of-plane,
 *            6 special vdW pair, 7 hydrogen bond, 8 torsion-stretch (1 to 5 are parameters here;
 *            every code 1-8 line is also an hessfit_fld_row with its three fields in file units,
 *            blank ones 0; a code letter ('A') is kept as text only)
 *   types    main tables [4,6) [9,11) [14,16) [19,21) with a bond mark between consecutive types
 *            (columns 7, 12, 17): '-' single, '=' double, '%' triple, '*' any bond, '.' a bond
 *            without order (MacroModel's zero-order dative/metal bond, as in the Rh substructure
 *            pattern "HX-RH(-PX)-HX.C2*C2(.2)-N2-C2=O2.2"); stored in hessfit_ff_param.bond_marks for
 *            stretch, bend and torsion lines (out-of-plane lines write '*' between atoms that form
 *            no chain: not stored). Substructures [4,6) [8,10) [12,14) [16,18), each a type or a
 *            1-based position in the substructure's pattern ("1", "2"), no marks; "00" is the
 *            wildcard
 *   fields   three F10.4 fields [23,33) [34,44) [45,55)
 *   descr.   main tables: [56] the number of continuation lines (blank: none), then one
 *            "Opt. Descriptor" field of 4 characters per atom at [57,61) [62,66) [67,71) [72,76):
 *            two attached-atom types each, "00" any ("O200": atom 1 must bear an O2; "0000": no
 *            condition). Stored as written in hessfit_ff_param.descriptor ("O200 0000", "1C200 0000"),
 *            "" when there is no condition; what it means is the matcher's business (hf_typing.c)
 *   then     selections and alternatives, and from column 88 the comment (the label)
 *   stretch: r0 [A], k [mdyn/A], bond moment [D]    bend: theta0 [deg], k [mdyn A/rad^2] (bend-bend)
 *   stretch-bend: k_sb [mdyn/rad]                     torsion: V1 V2 V3 [kcal/mol]
 *   out-of-plane: angle (must be 0), k [mdyn A/rad^2]
 * A blank bond moment or k_sb is 0; written back blank while unchanged.
 * A line with blank type columns continues the descriptors of the line above ("1C200 0000" on
 * line 114 of mm3.fld, " O200 0000" on 115); it is kept as text, and hessfit_forcefield_param_at_line
 * maps it to the parameter it continues (MacroModel's .mmo names such a line as the FF line).
 * vdW lines: type [2,5), radius r* [5,15) [A], epsilon [16,26) [kcal/mol], offset [27,37) [A],
 * formal charge [38,48) [e], the Atm1 descriptor [72,76) ("SX00": bonded to an SX); rows too.
 * Header lines of -1 (" 0    STR     3      601.99392"): rows {equation, factor to kJ/mol}.
 *
 * Canonical values (hessfit_forcefield.h): k_bond = k_mdyn * 71.96631, k_angle = k_mdyn * 71.94
 * (also for out-of-plane constants, which share the bend units), torsion Fourier triples
 * {V1/2, 0, 1}, {V2/2, 180, 2}, {V3/2, 0, 3}, bonds {k, r0, mu}, stretch-bends {k_sb} (mdyn/rad).
 */
#include "hessfit_forcefield.h"
#include "hessfit_units.h"
#include "hf_ff_internal.h"
#include "hf_lines.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLD_COMMENT_COL 88
#define FLD_NUMBERS_START 23 /* the type columns end before this column */
#define FLD_DESCRIPTOR_COL 56 /* continuation count, then the descriptor fields from column 57 */
#define FLD_BOND_MARKS "-=%*."

/* The three numeric fields of a -2 line and the two of a vdW line. */
static const int TABLE_FIELD_START[3] = {23, 34, 45};
static const int TABLE_FIELD_END[3] = {33, 44, 55};
static const int VDW_FIELD_START[2] = {5, 16};
static const int VDW_FIELD_END[2] = {15, 26};

static const int MAIN_TYPE_COL[4] = {4, 9, 14, 19};
static const int SUB_TYPE_COL[4] = {4, 8, 12, 16};

/* How the file fields of a parameter kind map to canonical values: values[value[i]] =
 * file field field[i] * scale[i]; a field whose bit is set in optional may be blank (0). */
typedef struct fld_map {
    int n;
    int field[3];
    int value[3];
    double scale[3];
    int n_values; /* values a parameter of this kind holds */
    unsigned optional;
} fld_map;

static fld_map fld_map_for(hessfit_param_kind kind)
{
    fld_map m;
    memset(&m, 0, sizeof m);
    switch (kind) {
    case HESSFIT_PARAM_BOND: /* the bond moment (field 3) may be blank */
        m = (fld_map){3, {0, 1, 2}, {1, 0, 2}, {1.0, HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2, 1.0}, 3, 4u};
        break;
    case HESSFIT_PARAM_ANGLE:
        m = (fld_map){2, {0, 1, 0}, {1, 0, 0}, {1.0, HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2, 0.0}, 2, 0u};
        break;
    case HESSFIT_PARAM_TORSION: /* V_n / 2 */
        m = (fld_map){3, {0, 1, 2}, {0, 3, 6}, {0.5, 0.5, 0.5}, 9, 0u};
        break;
    case HESSFIT_PARAM_IMPROPER: /* field 0 is the out-of-plane angle, required to be 0 */
        m = (fld_map){1, {1, 0, 0}, {0, 0, 0}, {HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2, 0.0, 0.0}, 1, 0u};
        break;
    case HESSFIT_PARAM_VDW:
        m = (fld_map){2, {0, 1, 0}, {0, 1, 0}, {1.0, 1.0, 0.0}, 2, 0u};
        break;
    case HESSFIT_PARAM_STRETCH_BEND: /* k_sb as written; fields 2 and 3 are not used by MM3* */
        m = (fld_map){1, {0, 0, 0}, {0, 0, 0}, {1.0, 0.0, 0.0}, 1, 1u};
        break;
    default:
        break;
    }
    return m;
}

/* The fixed phases and periodicities of the MM3 torsion triples. */
static const double MM3_TORSION_PHASE[3] = {0.0, 180.0, 0.0};

/* One parsed line: the parameter and the decimals of each numeric field as written (-1: not read). */
typedef struct fld_line {
    hessfit_ff_param param;
    int modeled;
    int decimals[3];
} fld_line;

static int is_comment(const char *s)
{
    if (s[0] == ' ' && s[1] == 'C' && (s[2] == '\0' || isspace((unsigned char)s[2])))
        return 1;
    return s[0] == 'C' && (s[1] == '\0' || isspace((unsigned char)s[1]));
}

static int span_is_blank(const char *s, size_t len, size_t a, size_t b)
{
    for (size_t k = a; k < b && k < len; k++)
        if (!isspace((unsigned char)s[k]))
            return 0;
    return 1;
}

static const char *kind_word(hessfit_param_kind kind)
{
    switch (kind) {
    case HESSFIT_PARAM_BOND: return "stretch";
    case HESSFIT_PARAM_ANGLE: return "bend";
    case HESSFIT_PARAM_TORSION: return "torsion";
    case HESSFIT_PARAM_IMPROPER: return "out-of-plane";
    case HESSFIT_PARAM_VDW: return "van der Waals";
    case HESSFIT_PARAM_STRETCH_BEND: return "stretch-bend";
    default: return "parameter";
    }
}

/* The numeric field [start, end) of text: one token, a finite number with a decimal point (a
 * Fortran F field without one would be read with implied decimals), not running into the columns
 * around it. */
static hessfit_status fld_number(const char *path, int line_no, const char *text, int start, int end, const char *what,
                            double *value, int *decimals)
{
    size_t len = strlen(text);
    char token[32];
    const char *dot;
    size_t a = (size_t)start, b = (size_t)end;
    hessfit_status st;
    if (b > len)
        b = len;
    while (a < b && isspace((unsigned char)text[a]))
        a++;
    while (b > a && isspace((unsigned char)text[b - 1]))
        b--;
    if (a >= b)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the %s (columns %d-%d) is missing", path, line_no, what, start + 1, end);
    if ((start > 0 && (size_t)start <= len && !isspace((unsigned char)text[start - 1])) ||
        ((size_t)end < len && !isspace((unsigned char)text[end])))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the %s runs outside its columns %d-%d", path, line_no, what, start + 1,
                        end);
    for (size_t k = a; k < b; k++)
        if (isspace((unsigned char)text[k]))
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the %s (columns %d-%d) holds more than one token", path, line_no,
                            what, start + 1, end);
    if (b - a >= sizeof token)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the %s is too long", path, line_no, what);
    memcpy(token, text + a, b - a);
    token[b - a] = '\0';
    st = hf_parse_double(token, path, line_no, what, value);
    if (st != HESSFIT_SUCCESS)
        return st;
    dot = strchr(token, '.');
    if (dot == NULL)
        return hessfit_error(HESSFIT_ERROR_PARSE,
                        "%s:%d: the %s '%s' has no decimal point (a Fortran F field would read it with implied "
                        "decimals)",
                        path, line_no, what, token);
    *decimals = 0;
    for (dot++; isdigit((unsigned char)*dot); dot++)
        (*decimals)++;
    return HESSFIT_SUCCESS;
}

/* A type or position label of 1..HESSFIT_FF_TYPE_LEN-1 letters, digits or '+'; "00" is the wildcard. */
static hessfit_status fld_type(const char *path, int line_no, const char *text, int col, int width, char *out)
{
    size_t len = strlen(text);
    char raw[8];
    hf_ff_copy_trimmed(raw, sizeof raw, (size_t)col < len ? text + col : "",
                       (size_t)col < len ? ((size_t)(col + width) <= len ? (size_t)width : len - (size_t)col) : 0);
    if (raw[0] == '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom type missing in columns %d-%d", path, line_no, col + 1, col + width);
    for (const char *c = raw; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '+')
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s' in columns %d-%d is not an atom type", path, line_no, raw,
                            col + 1, col + width);
    if (strcmp(raw, "00") == 0)
        strcpy(out, HESSFIT_FF_WILDCARD);
    else
        strcpy(out, raw);
    return HESSFIT_SUCCESS;
}

static int atoms_of_code(char code)
{
    switch (code) {
    case '1': return 2;
    case '2': return 3;
    case '3': return 3;
    case '4': return 4;
    case '5': return 4;
    default: return 0;
    }
}

static hessfit_param_kind kind_of_code(char code)
{
    switch (code) {
    case '1': return HESSFIT_PARAM_BOND;
    case '2': return HESSFIT_PARAM_ANGLE;
    case '3': return HESSFIT_PARAM_STRETCH_BEND;
    case '4': return HESSFIT_PARAM_TORSION;
    default: return HESSFIT_PARAM_IMPROPER;
    }
}

/* The bond mark in the gap [a, b) between two main-table types (" - "): '-' single, '=' double,
 * '%' triple, '*' any bond, '.' a bond without order (MacroModel's zero-order bond, the
 * dative/metal bonds); 0 when the gap is blank. Anything else is an error. */
static hessfit_status fld_bond_mark(const char *path, int line_no, const char *text, size_t a, size_t b, char *mark)
{
    size_t len = strlen(text);
    *mark = 0;
    for (size_t c = a; c < b && c < len; c++) {
        if (isspace((unsigned char)text[c]))
            continue;
        if (*mark != 0 || strchr(FLD_BOND_MARKS, text[c]) == NULL)
            return hessfit_error(HESSFIT_ERROR_PARSE,
                            "%s:%d: '%c' in column %zu between the atom types is not one bond mark (one of %s)", path,
                            line_no, text[c], c + 1, FLD_BOND_MARKS);
        *mark = text[c];
    }
    return HESSFIT_SUCCESS;
}

/* The "Opt. Descriptor" columns of a main-table line with n_atoms atoms: an optional count of
 * continuation lines in FLD_DESCRIPTOR_COL, then one 4-character field per atom, 5 columns apart
 * ("1C200 0000" = one continuation line; the fields of atoms 1 and 2). Stored as written, trimmed;
 * "" when there is no count and every field is blank or "0000" (no condition). */
static void fld_descriptor(const char *text, size_t len, int n_atoms, char *out, size_t size)
{
    const size_t a = FLD_DESCRIPTOR_COL, b = FLD_DESCRIPTOR_COL + 1 + 5 * (size_t)n_atoms - 1;
    int conditional = 0;
    out[0] = '\0';
    if (len <= a)
        return;
    if (!isspace((unsigned char)text[a]))
        conditional = 1; /* a continuation count */
    for (int k = 0; k < n_atoms && !conditional; k++) {
        size_t f = a + 1 + 5 * (size_t)k;
        for (size_t c = f; c < f + 4 && c < len; c++)
            if (text[c] != '0' && !isspace((unsigned char)text[c]))
                conditional = 1;
    }
    if (conditional)
        hf_ff_copy_trimmed(out, size, text + a, (len < b ? len : b) - a);
}

/* Parse a -2 table line (not a comment, not blank, not a marker). in_sub: substructure layout. */
static hessfit_status fld_parse_table_line(const char *path, int line_no, const char *text, int in_sub, fld_line *out)
{
    size_t len = strlen(text);
    char code;
    int n_atoms;
    const int *cols = in_sub ? SUB_TYPE_COL : MAIN_TYPE_COL;
    hessfit_ff_param *p = &out->param;
    fld_map m;
    double file_value[3] = {0.0, 0.0, 0.0};
    hessfit_status st;
    memset(out, 0, sizeof *out);
    out->decimals[0] = out->decimals[1] = out->decimals[2] = -1;
    if (len < 2 || (text[0] != ' ' && text[0] != 'a'))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: not a parameter line ('%.40s'): a table line starts with ' ' or 'a' "
                        "and an interaction code", path, line_no, text);
    code = text[1];
    if (!((code >= '1' && code <= '8') || (code >= 'A' && code <= 'Z')))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%c' is not an interaction code of a parameter table", path, line_no,
                        code);
    if (span_is_blank(text, len, 2, FLD_NUMBERS_START))
        return HESSFIT_SUCCESS; /* continuation of the descriptors of the line above */
    n_atoms = atoms_of_code(code);
    if (n_atoms == 0)
        return HESSFIT_SUCCESS; /* an interaction hessfit does not model: kept as text */
    p->kind = kind_of_code(code);
    p->n_types = n_atoms;
    p->substructure = -1;
    p->line = line_no;
    p->improper_form = HESSFIT_IMPROPER_HARMONIC;
    if (!span_is_blank(text, len, 2, (size_t)cols[0]))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unexpected text before the atom types", path, line_no);
    for (int k = 0; k < n_atoms; k++) {
        size_t gap_end = k + 1 < n_atoms ? (size_t)cols[k + 1] : FLD_NUMBERS_START;
        st = fld_type(path, line_no, text, cols[k], 2, p->types[k]);
        if (st != HESSFIT_SUCCESS)
            return st;
        for (size_t c = (size_t)cols[k] + 2; c < gap_end && c < len; c++)
            if (isalnum((unsigned char)text[c]))
                return hessfit_error(HESSFIT_ERROR_PARSE,
                                "%s:%d: unexpected '%c' in column %zu between the atom types (a shifted line?)", path,
                                line_no, text[c], c + 1);
        if (!in_sub && k + 1 < n_atoms) {
            char mark;
            st = fld_bond_mark(path, line_no, text, (size_t)cols[k] + 2, gap_end, &mark);
            if (st != HESSFIT_SUCCESS)
                return st;
            if (p->kind != HESSFIT_PARAM_IMPROPER) /* out-of-plane atoms are no chain: their '*' say nothing */
                p->bond_marks[k] = mark;
        }
    }
    if (!in_sub)
        fld_descriptor(text, len, n_atoms, p->descriptor, sizeof p->descriptor);
    m = fld_map_for(p->kind);
    for (int i = 0; i < m.n; i++) {
        int f = m.field[i];
        char what[64];
        snprintf(what, sizeof what, "%s field %d", kind_word(p->kind), f + 1);
        if ((m.optional & (1u << f)) && span_is_blank(text, len, (size_t)TABLE_FIELD_START[f], (size_t)TABLE_FIELD_END[f]))
            continue; /* blank: 0, decimals -1 */
        st = fld_number(path, line_no, text, TABLE_FIELD_START[f], TABLE_FIELD_END[f], what, &file_value[f],
                        &out->decimals[f]);
        if (st != HESSFIT_SUCCESS)
            return st;
        p->values[m.value[i]] = file_value[f] * m.scale[i];
    }
    p->n_values = m.n_values;
    if (p->kind == HESSFIT_PARAM_TORSION) {
        for (int t = 0; t < 3; t++) {
            p->values[3 * t + 1] = MM3_TORSION_PHASE[t];
            p->values[3 * t + 2] = (double)(t + 1);
        }
    } else if (p->kind == HESSFIT_PARAM_IMPROPER) {
        double angle;
        int dec;
        st = fld_number(path, line_no, text, TABLE_FIELD_START[0], TABLE_FIELD_END[0], "out-of-plane angle", &angle,
                        &dec);
        if (st != HESSFIT_SUCCESS)
            return st;
        if (angle != 0.0)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                            "%s:%d: out-of-plane natural angle %g is not 0 (hessfit's harmonic out-of-plane model holds "
                            "only k)",
                            path, line_no, angle);
    }
    if ((size_t)FLD_COMMENT_COL < len)
        hf_ff_copy_trimmed(p->label, sizeof p->label, text + FLD_COMMENT_COL, len - FLD_COMMENT_COL);
    out->modeled = 1;
    return HESSFIT_SUCCESS;
}

/* Parse a line of the -6 van der Waals table. */
static hessfit_status fld_parse_vdw_line(const char *path, int line_no, const char *text, fld_line *out)
{
    size_t len = strlen(text);
    hessfit_ff_param *p = &out->param;
    hessfit_status st;
    memset(out, 0, sizeof *out);
    out->decimals[0] = out->decimals[1] = out->decimals[2] = -1;
    if (len < 3 || text[0] != ' ' || text[1] != ' ' || isspace((unsigned char)text[2]))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: not a van der Waals line ('%.40s'): the atom type starts in column 3",
                        path, line_no, text);
    p->kind = HESSFIT_PARAM_VDW;
    p->n_types = 1;
    p->substructure = -1;
    p->line = line_no;
    st = fld_type(path, line_no, text, 2, 3, p->types[0]);
    if (st != HESSFIT_SUCCESS)
        return st;
    st = fld_number(path, line_no, text, VDW_FIELD_START[0], VDW_FIELD_END[0], "van der Waals radius", &p->values[0],
                    &out->decimals[0]);
    if (st != HESSFIT_SUCCESS)
        return st;
    st = fld_number(path, line_no, text, VDW_FIELD_START[1], VDW_FIELD_END[1], "van der Waals epsilon", &p->values[1],
                    &out->decimals[1]);
    if (st != HESSFIT_SUCCESS)
        return st;
    p->n_values = 2;
    if ((size_t)FLD_COMMENT_COL < len)
        hf_ff_copy_trimmed(p->label, sizeof p->label, text + FLD_COMMENT_COL, len - FLD_COMMENT_COL);
    out->modeled = 1;
    return HESSFIT_SUCCESS;
}

/* ---- rows: every line again in file units (hessfit_fld_row) ------------------------------------- */

static const int VDW_ROW_FIELD_START[4] = {5, 16, 27, 38};
static const int VDW_ROW_FIELD_END[4] = {15, 26, 37, 48};
#define FLD_VDW_DESCRIPTOR_COL 72

/* A numeric field that may be blank (then 0 and bit `bit` of *blank). */
static hessfit_status fld_optional_number(const char *path, int line_no, const char *text, int start, int end,
                                          const char *what, double *value, unsigned *blank, int bit)
{
    int decimals;
    if (span_is_blank(text, strlen(text), (size_t)start, (size_t)end)) {
        *value = 0.0;
        *blank |= 1u << bit;
        return HESSFIT_SUCCESS;
    }
    return fld_number(path, line_no, text, start, end, what, value, &decimals);
}

/* Atoms of a table line of each interaction code; code 7 (hydrogen bonds: two to four atoms) counts
 * the filled type columns. */
static int row_atoms(char code, const char *text, size_t len, const int *cols)
{
    static const int n[9] = {0, 2, 3, 3, 4, 4, 2, 4, 4};
    if (code < '1' || code > '8')
        return 0;
    if (code != '7')
        return n[code - '0'];
    int k = 0;
    while (k < 4 && !span_is_blank(text, len, (size_t)cols[k], (size_t)cols[k] + 2))
        k++;
    return k;
}

/* A -2 table line (not blank, not a comment) as a row; *has = 0 for continuation lines and
 * interaction codes that are letters. */
static hessfit_status fld_parse_row(const char *path, int line_no, const char *text, int in_sub, hessfit_fld_row *row,
                                    int *has)
{
    const size_t len = strlen(text);
    const int *cols = in_sub ? SUB_TYPE_COL : MAIN_TYPE_COL;
    hessfit_status st;
    memset(row, 0, sizeof *row);
    *has = 0;
    if (len < 2 || (text[0] != ' ' && text[0] != 'a') || span_is_blank(text, len, 2, FLD_NUMBERS_START))
        return HESSFIT_SUCCESS;
    row->n_types = row_atoms(text[1], text, len, cols);
    if (row->n_types == 0)
        return HESSFIT_SUCCESS;
    row->code = text[1];
    row->alternative = text[0] == 'a';
    row->param = -1;
    row->substructure = -1;
    row->line = line_no;
    for (int k = 0; k < row->n_types; k++) {
        st = fld_type(path, line_no, text, cols[k], 2, row->types[k]);
        if (st != HESSFIT_SUCCESS)
            return st;
        if (!in_sub && k + 1 < row->n_types && row->code != '5') {
            st = fld_bond_mark(path, line_no, text, (size_t)cols[k] + 2, (size_t)cols[k + 1], &row->bond_marks[k]);
            if (st != HESSFIT_SUCCESS)
                return st;
        }
    }
    if (!in_sub)
        fld_descriptor(text, len, row->n_types, row->descriptor, sizeof row->descriptor);
    row->n_values = 3;
    for (int f = 0; f < 3; f++) {
        char what[64];
        snprintf(what, sizeof what, "field %d of the code-%c line", f + 1, row->code);
        st = fld_optional_number(path, line_no, text, TABLE_FIELD_START[f], TABLE_FIELD_END[f], what, &row->values[f],
                                 &row->blank, f);
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    /* a hydrogen-bond line: 2 atoms with C/100 and D/100 (the angle-independent 10-12 form), or a
     * directional line of 3-4 atoms (read, not modelled) */
    if (row->code == '7' && row->n_types < 2)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: a hydrogen-bond line (code 7) names %d atom type (2 to 4 expected)",
                             path, line_no, row->n_types);
    if (row->code == '7' && row->n_types == 2 && (row->blank & 3u))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the hydrogen-bond line (code 7) of %s %s has no %s", path,
                             line_no, row->types[0], row->types[1], (row->blank & 1u) ? "C/100" : "D/100");
    *has = 1;
    return HESSFIT_SUCCESS;
}

/* A van der Waals line as a row: type, R*, eps, offset, formal charge, the Atm1 descriptor. */
static hessfit_status fld_parse_vdw_row(const char *path, int line_no, const char *text, hessfit_fld_row *row)
{
    static const char *const what[4] = {"van der Waals radius", "van der Waals epsilon", "van der Waals offset",
                                        "formal charge"};
    const size_t len = strlen(text);
    hessfit_status st;
    memset(row, 0, sizeof *row);
    row->code = 'V';
    row->n_types = 1;
    row->param = -1;
    row->substructure = -1;
    row->line = line_no;
    st = fld_type(path, line_no, text, 2, 3, row->types[0]);
    if (st != HESSFIT_SUCCESS)
        return st;
    row->n_values = 4;
    for (int f = 0; f < 4; f++) {
        st = fld_optional_number(path, line_no, text, VDW_ROW_FIELD_START[f], VDW_ROW_FIELD_END[f], what[f],
                                 &row->values[f], &row->blank, f);
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    if (row->blank & 3u)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the van der Waals line of %s has no %s", path, line_no,
                             row->types[0], what[(row->blank & 1u) ? 0 : 1]);
    if (len > FLD_VDW_DESCRIPTOR_COL) {
        char d[8];
        hf_ff_copy_trimmed(d, sizeof d, text + FLD_VDW_DESCRIPTOR_COL, len - FLD_VDW_DESCRIPTOR_COL < 4 ? len - FLD_VDW_DESCRIPTOR_COL : 4);
        if (strcmp(d, "0000") != 0)
            strcpy(row->descriptor, d);
    }
    return HESSFIT_SUCCESS;
}

/* A header line " 0  KEY  eq  factor" of the -1 section as a row (SEL lines and lines without a
 * factor are not rows). */
static hessfit_status fld_parse_header_row(const char *path, int line_no, const char *text, hessfit_fld_row *row, int *has)
{
    char copy[256];
    char *tok[8];
    long eq;
    hessfit_status st;
    *has = 0;
    if (text[0] != ' ' || text[1] != '0' || strlen(text) >= sizeof copy)
        return HESSFIT_SUCCESS;
    strcpy(copy, text);
    if (hf_split(copy, tok, 8) < 4 || strcmp(tok[1], "SEL") == 0 || strlen(tok[1]) >= HESSFIT_FF_TYPE_LEN)
        return HESSFIT_SUCCESS;
    memset(row, 0, sizeof *row);
    row->code = '0';
    row->n_types = 1;
    strcpy(row->types[0], tok[1]);
    if ((st = hf_parse_int(tok[2], path, line_no, "equation number", 0, 1000, &eq)) != HESSFIT_SUCCESS ||
        (st = hf_parse_double(tok[3], path, line_no, "conversion factor", &row->values[1])) != HESSFIT_SUCCESS)
        return st;
    row->values[0] = (double)eq;
    row->n_values = 2;
    row->param = -1;
    row->substructure = -1;
    row->line = line_no;
    *has = 1;
    return HESSFIT_SUCCESS;
}

static hessfit_status fld_add_row(hessfit_forcefield *ff, size_t *cap, const hessfit_fld_row *row)
{
    hessfit_status st = hf_grow((void **)&ff->fld_rows, cap, (size_t)ff->n_fld_rows + 1, sizeof *ff->fld_rows, ".fld rows");
    if (st == HESSFIT_SUCCESS)
        ff->fld_rows[ff->n_fld_rows++] = *row;
    return st;
}

/* ---- reading ------------------------------------------------------------------------------------ */

typedef enum fld_state {
    FLD_PREAMBLE,     /* before the first marker */
    FLD_INTRO,        /* -1 */
    FLD_EQUIV,        /* -5 */
    FLD_TABLE,        /* -2 in the main part */
    FLD_VDW,          /* -6 */
    FLD_AFTER_VDW,    /* after END OF NONBONDED INTERACTIONS, until the next marker */
    FLD_SUB_HEAD,     /* after -3: the substructure's " C  name" line, or the end of the file */
    FLD_SUB_PATTERN,  /* after the name: the " 9  pattern" line, then -2 */
    FLD_SUB_TABLE     /* the substructure's parameter lines */
} fld_state;

static const char *state_name(fld_state s)
{
    switch (s) {
    case FLD_PREAMBLE: return "the title lines";
    case FLD_INTRO: return "the introduction (-1)";
    case FLD_EQUIV: return "the atom-type equivalences (-5)";
    case FLD_TABLE: return "a parameter table (-2)";
    case FLD_VDW: return "the van der Waals table (-6)";
    case FLD_AFTER_VDW: return "the lines after the van der Waals table";
    case FLD_SUB_HEAD: return "a substructure header (-3)";
    case FLD_SUB_PATTERN: return "a substructure header (-3)";
    default: return "a substructure's parameter table";
    }
}

static hessfit_status parse_equivalence(const char *path, int line_no, const char *text, hessfit_forcefield *ff, size_t *cap)
{
    char copy[512];
    char *tok[64];
    int n;
    long index;
    hessfit_status st;
    if (strlen(text) >= sizeof copy)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: equivalence line too long", path, line_no);
    strcpy(copy, text);
    n = hf_split(copy, tok, 64);
    if (n > 64)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: more than 62 types on one equivalence line", path, line_no);
    if (n < 3)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: an equivalence line reads 'index NEW type type ...' ('%.40s')", path,
                        line_no, text);
    st = hf_parse_int(tok[0], path, line_no, "equivalence index", 0, 1000000, &index);
    if (st != HESSFIT_SUCCESS)
        return st;
    for (int k = 1; k < n; k++)
        if (strlen(tok[k]) >= HESSFIT_FF_TYPE_LEN)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: atom type '%.20s' longer than %d characters", path, line_no, tok[k],
                            HESSFIT_FF_TYPE_LEN - 1);
    for (int k = 2; k < n; k++) {
        hessfit_ff_equivalence *e;
        st = hf_grow((void **)&ff->equivalences, cap, (size_t)ff->n_equivalences + 1, sizeof *ff->equivalences,
                     "equivalences");
        if (st != HESSFIT_SUCCESS)
            return st;
        e = &ff->equivalences[ff->n_equivalences++];
        memset(e, 0, sizeof *e);
        strcpy(e->type, tok[k]);
        strcpy(e->equivalent, tok[1]);
        e->line = line_no;
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_fld_read(const char *path, hessfit_forcefield *ff)
{
    hessfit_forcefield tmp;
    size_t param_cap = 0, sub_cap = 0, equiv_cap = 0, row_cap = 0;
    hessfit_fld_row row;
    int has_row;
    fld_state state = FLD_PREAMBLE;
    int section_line = 0; /* line of the marker that opened the current section */
    int pattern_seen = 0;
    hessfit_status st;
    st = hf_ff_read_begin("hessfit_fld_read", path, ff, HESSFIT_FF_MM3_FLD, "", &tmp);
    if (st != HESSFIT_SUCCESS)
        return st;
    for (int i = 0; i < tmp.n_lines; i++) {
        const char *text = tmp.lines[i];
        int line_no = i + 1;
        if (text[0] == '-' && state != FLD_PREAMBLE) {
            long marker;
            if (!isdigit((unsigned char)text[1]) || !hf_is_blank(text + 2)) {
                st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%.40s' is not a section marker ('-' and one digit)", path,
                              line_no, text);
                goto fail;
            }
            marker = text[1] - '0';
            if (state == FLD_SUB_HEAD || state == FLD_SUB_PATTERN) {
                if (marker != 2 || state == FLD_SUB_HEAD || !pattern_seen) {
                    st = hessfit_error(HESSFIT_ERROR_FORMAT,
                                  "%s:%d: marker -%ld where the substructure opened at line %d needs its ' C  name' "
                                  "and ' 9  pattern' lines and then -2",
                                  path, line_no, marker, section_line);
                    goto fail;
                }
                state = FLD_SUB_TABLE;
                continue;
            }
            switch (marker) {
            case 1: state = FLD_INTRO; break;
            case 2: state = state == FLD_SUB_TABLE ? FLD_SUB_TABLE : FLD_TABLE; break;
            case 3: state = FLD_SUB_HEAD; pattern_seen = 0; break;
            case 5: state = FLD_EQUIV; break;
            case 6: state = FLD_VDW; break;
            default:
                st = hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                              "%s:%d: unknown section marker '-%ld' in %s (hessfit reads -1 -2 -3 -5 -6)", path,
                              line_no, marker, state_name(state));
                goto fail;
            }
            section_line = line_no;
            continue;
        }
        if (state == FLD_PREAMBLE) {
            if (text[0] == '-' && isdigit((unsigned char)text[1]) && hf_is_blank(text + 2)) {
                if (text[1] != '1') {
                    st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: the first section marker is '%.2s', not -1", path, line_no,
                                  text);
                    goto fail;
                }
                state = FLD_INTRO;
                section_line = line_no;
            }
            continue;
        }
        if (hf_is_blank(text) || is_comment(text)) {
            if (state == FLD_SUB_HEAD && is_comment(text)) {
                hessfit_ff_substructure *s;
                st = hf_grow((void **)&tmp.substructures, &sub_cap, (size_t)tmp.n_substructures + 1,
                             sizeof *tmp.substructures, "substructures");
                if (st != HESSFIT_SUCCESS)
                    goto fail;
                s = &tmp.substructures[tmp.n_substructures++];
                memset(s, 0, sizeof *s);
                {
                    const char *c = strchr(text, 'C') + 1;
                    hf_ff_copy_trimmed(s->name, sizeof s->name, c, strlen(c));
                }
                s->line = line_no;
                state = FLD_SUB_PATTERN;
            }
            continue;
        }
        switch (state) {
        case FLD_INTRO: /* kept as text; the factors also as rows */
            st = fld_parse_header_row(path, line_no, text, &row, &has_row);
            if (st == HESSFIT_SUCCESS && has_row)
                st = fld_add_row(&tmp, &row_cap, &row);
            if (st != HESSFIT_SUCCESS)
                goto fail;
            break;
        case FLD_EQUIV:
            st = parse_equivalence(path, line_no, text, &tmp, &equiv_cap);
            if (st != HESSFIT_SUCCESS)
                goto fail;
            break;
        case FLD_TABLE:
        case FLD_SUB_TABLE: {
            fld_line parsed;
            st = fld_parse_table_line(path, line_no, text, state == FLD_SUB_TABLE, &parsed);
            if (st != HESSFIT_SUCCESS)
                goto fail;
            if (parsed.modeled) {
                if (state == FLD_SUB_TABLE)
                    parsed.param.substructure = tmp.n_substructures - 1;
                st = hf_ff_add_param(&tmp, &param_cap, &parsed.param);
                if (st != HESSFIT_SUCCESS)
                    goto fail;
            }
            st = fld_parse_row(path, line_no, text, state == FLD_SUB_TABLE, &row, &has_row);
            if (st == HESSFIT_SUCCESS && has_row) {
                row.param = parsed.modeled ? tmp.n_params - 1 : -1;
                row.substructure = state == FLD_SUB_TABLE ? tmp.n_substructures - 1 : -1;
                st = fld_add_row(&tmp, &row_cap, &row);
            }
            if (st != HESSFIT_SUCCESS)
                goto fail;
            break;
        }
        case FLD_VDW: {
            fld_line parsed;
            if (hf_starts_with(text, "END", 1)) {
                state = FLD_AFTER_VDW;
                break;
            }
            st = fld_parse_vdw_line(path, line_no, text, &parsed);
            if (st != HESSFIT_SUCCESS)
                goto fail;
            st = hf_ff_add_param(&tmp, &param_cap, &parsed.param);
            if (st == HESSFIT_SUCCESS)
                st = fld_parse_vdw_row(path, line_no, text, &row);
            if (st == HESSFIT_SUCCESS) {
                row.param = tmp.n_params - 1;
                st = fld_add_row(&tmp, &row_cap, &row);
            }
            if (st != HESSFIT_SUCCESS)
                goto fail;
            break;
        }
        case FLD_SUB_HEAD:
            st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: a substructure (-3 at line %d) starts with its ' C  name' line, not "
                          "'%.40s'", path, line_no, section_line, text);
            goto fail;
        case FLD_SUB_PATTERN: {
            hessfit_ff_substructure *s = &tmp.substructures[tmp.n_substructures - 1];
            char copy[512];
            char *tok[2];
            if (text[0] != ' ' || text[1] != '9' || (text[2] != '\0' && !isspace((unsigned char)text[2]))) {
                st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected the ' 9  pattern' line of substructure '%s', not '%.40s'",
                              path, line_no, s->name, text);
                goto fail;
            }
            if (pattern_seen) {
                st = hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s:%d: a second pattern line for substructure '%s'", path, line_no,
                              s->name);
                goto fail;
            }
            snprintf(copy, sizeof copy, "%s", text + 2);
            if (hf_split(copy, tok, 2) < 1 || strlen(tok[0]) >= sizeof s->pattern) {
                st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: missing or overlong substructure pattern", path, line_no);
                goto fail;
            }
            strcpy(s->pattern, tok[0]);
            pattern_seen = 1;
            break;
        }
        default: /* FLD_AFTER_VDW */
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unexpected line after the van der Waals table: '%.40s'", path, line_no,
                          text);
            goto fail;
        }
    }
    if (state == FLD_PREAMBLE) {
        st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: no '-1' section marker: not a MacroModel .fld, or truncated", path,
                      tmp.n_lines);
        goto fail;
    }
    if (state != FLD_SUB_HEAD) {
        st = hessfit_error(HESSFIT_ERROR_TRUNCATED,
                      "%s:%d: the file ends inside %s (opened at line %d); a MacroModel .fld ends with the '-3' line "
                      "that closes the substructures (truncated?)",
                      path, tmp.n_lines, state_name(state), section_line);
        goto fail;
    }
    *ff = tmp;
    return HESSFIT_SUCCESS;
fail:
    hessfit_forcefield_free(&tmp);
    return st;
}

/* ---- continuation lines ---------------------------------------------------------------------- */

/* 1 if text has the shape of a -2 continuation line: ' ' or 'a', an interaction code, blank type
 * columns, something after them (the reader's test in fld_parse_table_line). */
static int fld_is_continuation_text(const char *text)
{
    size_t len = text != NULL ? strlen(text) : 0;
    char code;
    if (len < 2 || (text[0] != ' ' && text[0] != 'a'))
        return 0;
    code = text[1];
    if (!((code >= '1' && code <= '8') || (code >= 'A' && code <= 'Z')))
        return 0;
    return span_is_blank(text, len, 2, FLD_NUMBERS_START) && len > FLD_NUMBERS_START &&
           !hf_is_blank(text + FLD_NUMBERS_START);
}

int hf_fld_param_continued_at(const hessfit_forcefield *ff, int line)
{
    if (ff == NULL || ff->format != HESSFIT_FF_MM3_FLD || ff->lines == NULL || line < 2 || line > ff->n_lines ||
        !fld_is_continuation_text(ff->lines[line - 1]))
        return -1;
    const char code = ff->lines[line - 1][1];
    /* up through further continuation lines of the same code to the parameter line */
    for (int l = line - 1; l >= 1; l--) {
        const char *above = ff->lines[l - 1];
        if (above == NULL || strlen(above) < 2 || above[1] != code)
            return -1;
        if (fld_is_continuation_text(above))
            continue;
        for (int i = 0; i < ff->n_params; i++)
            if (ff->params[i].line == l && ff->params[i].kind != HESSFIT_PARAM_VDW)
                return i;
        return -1;
    }
    return -1;
}

/* ---- writing ------------------------------------------------------------------------------------ */

/* Right-align v with the given decimals into line[start, end); an error if it does not fit. */
static hessfit_status put_field(char *line, int start, int end, int decimals, double v, const char *who, const char *path,
                           int field)
{
    char buf[64];
    int width = end - start, n;
    if (!isfinite(v))
        return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: %s: field %d would be %g", path, who, field + 1, v);
    n = snprintf(buf, sizeof buf, "%*.*f", width, decimals, v);
    if (n < 0 || n > width)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: %s: field %d value %.6g does not fit the %d columns (F%d.%d) of its line",
                        path, who, field + 1, v, width, width, decimals);
    if (strchr(buf, '-') != NULL && strspn(buf, " -0.") == (size_t)n) /* "-0.0000" -> " 0.0000" */
        snprintf(buf, sizeof buf, "%*.*f", width, decimals, 0.0);
    memcpy(line + start, buf, (size_t)width);
    return HESSFIT_SUCCESS;
}

/* The decimals a blank field gets when a fitted value fills it: those of the line's first written
 * field (its F10.4 format), else 4. */
static int blank_decimals(const fld_line *orig)
{
    for (int f = 0; f < 3; f++)
        if (orig->decimals[f] >= 0)
            return orig->decimals[f];
    return 4;
}

hessfit_status hessfit_fld_write(const hessfit_forcefield *ff, const char *path)
{
    char **edited = NULL; /* per line: NULL = unchanged, else the rewritten line */
    int *owner = NULL;    /* per line: 1 + the parameter read from it */
    hf_buf out = {0};
    hessfit_status st = HESSFIT_SUCCESS;
    const char *src;
    if (ff == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_fld_write: %s is NULL", ff == NULL ? "ff" : "path");
    src = ff->path != NULL ? ff->path : "(force field)";
    if (ff->format != HESSFIT_FF_MM3_FLD || ff->lines == NULL || ff->n_lines <= 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "hessfit_fld_write(%s): the force field was not read from a .fld file (it has no .fld lines to "
                        "write back)",
                        path);
    edited = calloc((size_t)ff->n_lines, sizeof *edited);
    owner = calloc((size_t)ff->n_lines, sizeof *owner);
    if (edited == NULL || owner == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %d lines", path, ff->n_lines);
        goto done;
    }
    for (int i = 0; i < ff->n_params; i++) {
        const hessfit_ff_param *p = &ff->params[i];
        fld_line orig;
        fld_map m;
        char who[160];
        const char *text;
        int L = p->line;
        hf_ff_describe_param(p, i, who, sizeof who);
        if (L < 1 || L > ff->n_lines) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                          "%s: %s has no line in %s; hessfit_fld_write only rewrites the lines parameters were read from",
                          path, who, src);
            goto done;
        }
        if (owner[L - 1] != 0) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: parameters %d and %d both claim line %d", path,
                          owner[L - 1] - 1, i, L);
            goto done;
        }
        owner[L - 1] = i + 1;
        text = ff->lines[L - 1];
        /* Re-read the line as it was: what the parameter was, and the precision of each field. */
        if (p->kind == HESSFIT_PARAM_VDW)
            st = fld_parse_vdw_line(src, L, text, &orig);
        else
            st = fld_parse_table_line(src, L, text, p->substructure >= 0, &orig);
        if (st != HESSFIT_SUCCESS)
            goto done;
        if (!orig.modeled || orig.param.kind != p->kind || orig.param.n_types != p->n_types) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s does not match the text of line %d any more", path, who, L);
            goto done;
        }
        for (int k = 0; k < p->n_types; k++)
            if (strcmp(orig.param.types[k], p->types[k]) != 0) {
                st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                              "%s: %s: its atom types differ from line %d ('%s' vs '%s'); only values are written",
                              path, who, L, p->types[k], orig.param.types[k]);
                goto done;
            }
        m = fld_map_for(p->kind);
        if (p->n_values != m.n_values ||
            (p->kind == HESSFIT_PARAM_IMPROPER && p->improper_form != HESSFIT_IMPROPER_HARMONIC)) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s holds %d values; an MM3 %s line holds %d%s", path, who,
                          p->n_values, kind_word(p->kind), m.n_values,
                          p->kind == HESSFIT_PARAM_IMPROPER ? " (harmonic)" : "");
            goto done;
        }
        if (p->kind == HESSFIT_PARAM_TORSION)
            for (int t = 0; t < 3; t++)
                if (p->values[3 * t + 1] != MM3_TORSION_PHASE[t] || p->values[3 * t + 2] != (double)(t + 1)) {
                    st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                  "%s: %s: MM3 torsions are the triples {V1/2, 0, 1}, {V2/2, 180, 2}, {V3/2, 0, 3}; "
                                  "triple %d is {%g, %g, %g}",
                                  path, who, t + 1, p->values[3 * t], p->values[3 * t + 1], p->values[3 * t + 2]);
                    goto done;
                }
        for (int k = 0; k < m.n; k++) {
            int f = m.field[k], v = m.value[k];
            const int *fs = p->kind == HESSFIT_PARAM_VDW ? VDW_FIELD_START : TABLE_FIELD_START;
            const int *fe = p->kind == HESSFIT_PARAM_VDW ? VDW_FIELD_END : TABLE_FIELD_END;
            if (p->values[v] == orig.param.values[v])
                continue;
            if (edited[L - 1] == NULL) { /* a copy without the "\r" of a CRLF line (put back on output) */
                size_t len = strlen(text), need;
                if (len > 0 && text[len - 1] == '\r')
                    len--;
                need = len > (size_t)fe[f] ? len : (size_t)fe[f];
                edited[L - 1] = malloc(need + 1);
                if (edited[L - 1] == NULL) {
                    st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for line %d", path, L);
                    goto done;
                }
                memcpy(edited[L - 1], text, len);
                memset(edited[L - 1] + len, ' ', need - len);
                edited[L - 1][need] = '\0';
            } else if (strlen(edited[L - 1]) < (size_t)fe[f]) {
                size_t len = strlen(edited[L - 1]);
                char *grown = realloc(edited[L - 1], (size_t)fe[f] + 1);
                if (grown == NULL) {
                    st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for line %d", path, L);
                    goto done;
                }
                memset(grown + len, ' ', (size_t)fe[f] - len);
                grown[fe[f]] = '\0';
                edited[L - 1] = grown;
            }
            st = put_field(edited[L - 1], fs[f], fe[f], orig.decimals[f] >= 0 ? orig.decimals[f] : blank_decimals(&orig),
                           p->values[v] / m.scale[k], who, path, f);
            if (st != HESSFIT_SUCCESS)
                goto done;
        }
    }
    for (int i = 0; i < ff->n_lines; i++) {
        const char *line = edited[i] != NULL ? edited[i] : ff->lines[i];
        size_t n = strlen(ff->lines[i]);
        int crlf = edited[i] != NULL && n > 0 && ff->lines[i][n - 1] == '\r';
        st = hf_buf_append(&out, line, strlen(line));
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_append(&out, crlf ? "\r\n" : "\n", crlf ? 2 : 1);
        if (st != HESSFIT_SUCCESS)
            goto done;
    }
    st = hessfit_atomic_write_buffer(path, out.data, out.len);
done:
    if (edited != NULL)
        for (int i = 0; i < ff->n_lines; i++)
            free(edited[i]);
    free(edited);
    free(owner);
    hf_buf_free(&out);
    return st;
}
