/*
 * Gaussian readers: the formatted checkpoint file (.fchk) and the log file (.log).
 *
 * Formatted checkpoint. Line 1 is the title, line 2 the job type, method and basis; every later
 * item starts with a header line: the label in columns 1-40, the type (I integer, R real,
 * C/H character, L logical) in column 44, then either the scalar value or "N=" and the number
 * of values of an array, which follow on the next lines (I: 6 a line, R: 5 a line). Read:
 * "Number of atoms", "Charge", "Multiplicity", "Total Energy", "Atomic numbers", "Current
 * cartesian coordinates" (Bohr) and "Cartesian Force Constants" (the lower triangle of the
 * Cartesian Hessian, row by row, Hartree/Bohr^2: H11 H21 H22 H31 ...). Every numeric array,
 * read or not, must hold exactly its N= values; arrays are stored as they are read (never
 * allocated from N=), and N= of the arrays used must agree with "Number of atoms".
 *
 * Log file. See hessfit_gaussian_log_read below for what is taken from where.
 */
#include "hessfit_elements.h"
#include "hessfit_io.h"
#include "hessfit_molecule.h"
#include "hessfit_units.h"
#include "hf_lines.h"

#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest atom count either reader accepts (the same bound as .xyz files). */
#define GAUSSIAN_MAX_ATOMS HESSFIT_XYZ_MAX_ATOMS
/* Most values on one line of an fchk array (Gaussian writes 6 integers or 5 reals). */
#define FCHK_MAX_VALUES_PER_LINE 64
/* Modes in one block of a frequency table: 3 (default format) or 5 (HPModes). */
#define LOG_MAX_MODES_PER_BLOCK 5
/* Sections of an archive block (Gaussian writes 7 or 8). */
#define ARCHIVE_MAX_SECTIONS 64
/* Two coordinate sets whose centred coordinates differ by at most this (Angstrom) are taken to
 * be in the same frame: the orientation tables print 6 decimals. */
#define SAME_FRAME_TOLERANCE_A 1e-5
/* Largest rms deviation (Angstrom) of a rotation that maps the archive geometry onto the
 * coordinates; more means the Hessian belongs to another geometry. */
#define ROTATION_RMS_TOLERANCE_A 1e-4

/* ---- growable arrays -------------------------------------------------------------------------- */

typedef struct dbuf {
    double *v;
    size_t n, cap;
} dbuf;

typedef struct ibuf {
    int *v;
    size_t n, cap;
} ibuf;

/* hf_grow with the message prefixed by file:line. */
static hessfit_status grow_at(void **array, size_t *cap, size_t need, size_t elem, const char *path, int line,
                         const char *what)
{
    hessfit_status st = hf_grow(array, cap, need, elem, what);
    if (st == HESSFIT_SUCCESS)
        return st;
    return hessfit_error(st, "%s:%d: %s", path, line, hessfit_last_error());
}

static hessfit_status dbuf_push(dbuf *b, double x, const char *path, int line)
{
    if (b->n == b->cap) {
        hessfit_status st = grow_at((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v, path, line, "values");
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    b->v[b->n++] = x;
    return HESSFIT_SUCCESS;
}

static hessfit_status ibuf_push(ibuf *b, int x, const char *path, int line)
{
    if (b->n == b->cap) {
        hessfit_status st = grow_at((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v, path, line, "values");
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    b->v[b->n++] = x;
    return HESSFIT_SUCCESS;
}

static void dbuf_free(dbuf *b)
{
    free(b->v);
    memset(b, 0, sizeof *b);
}

static void ibuf_free(ibuf *b)
{
    free(b->v);
    memset(b, 0, sizeof *b);
}

/* The number of lower-triangle values of an n3 x n3 matrix. */
static size_t triangle_size(size_t n3)
{
    return n3 * (n3 + 1) / 2;
}

/* The full symmetric n3 x n3 matrix from its lower triangle stored row by row
 * (H11, H21, H22, H31, H32, H33, ...). tri holds triangle_size(n3) values. */
static hessfit_status full_from_lower_triangle(const double *tri, size_t n3, const char *path, double **out)
{
    size_t k = 0;
    double *h = malloc(n3 * n3 * sizeof *h);
    if (h == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a %zu x %zu Hessian", path, n3, n3);
    for (size_t i = 0; i < n3; i++)
        for (size_t j = 0; j <= i; j++, k++)
            h[i * n3 + j] = h[j * n3 + i] = tri[k];
    *out = h;
    return HESSFIT_SUCCESS;
}

/* Every atomic number has element data; the message names the item. */
static hessfit_status check_elements(const int *z, int n, const char *path, int line, const char *what)
{
    for (int i = 0; i < n; i++)
        if (hessfit_element_symbol(z[i]) == NULL)
            return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: %s: atom %d has atomic number %d, without element data",
                            path, line, what, i + 1, z[i]);
    return HESSFIT_SUCCESS;
}

/* ==== formatted checkpoint ===================================================================== */

typedef struct fchk_header {
    char label[41];
    char type;         /* I R C H L */
    int is_array;      /* "N=" follows the type */
    const char *value; /* the scalar value, or the count after "N=" (points into the line) */
} fchk_header;

/* 1 if line is an fchk header line (label in columns 1-40, blank columns 41-43, the type in
 * column 44, a blank in column 45); fills h. line is not modified. */
static int fchk_header_parse(const char *line, size_t len, fchk_header *h)
{
    const char *rest;
    if (len < 46 || line[0] == ' ' || line[40] != ' ' || line[41] != ' ' || line[42] != ' ' || line[44] != ' ')
        return 0;
    if (line[43] != 'I' && line[43] != 'R' && line[43] != 'C' && line[43] != 'H' && line[43] != 'L')
        return 0;
    memcpy(h->label, line, 40);
    h->label[40] = '\0';
    hf_rstrip(h->label);
    h->type = line[43];
    rest = hf_skip_space(line + 44);
    h->is_array = strncmp(rest, "N=", 2) == 0;
    h->value = h->is_array ? hf_skip_space(rest + 2) : rest;
    return 1;
}

/*
 * The values of a numeric (I or R) array announced with N=count at line hline. With out != NULL
 * every value is parsed (integers in [int_min, int_max] when the array is of type I) and
 * appended to out; with out == NULL they are only counted. A header line or the end of the
 * file before count values, or more values than count, are errors.
 */
static hessfit_status fchk_read_array(hf_lines *r, const fchk_header *h, long count, int hline, dbuf *out, long int_min,
                                 long int_max)
{
    char *tok[FCHK_MAX_VALUES_PER_LINE];
    long got = 0;
    hessfit_status st;
    while (got < count) {
        fchk_header next;
        int eof, n;
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof || fchk_header_parse(r->buf, r->len, &next))
            return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: '%s' (line %d) ends after %ld of its N=%ld values", r->path,
                            eof ? r->line - 1 : r->line, h->label, hline, got, count);
        n = hf_split(r->buf, tok, FCHK_MAX_VALUES_PER_LINE);
        if (n == 0)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: blank line inside '%s' (line %d)", r->path, r->line, h->label,
                            hline);
        if (n > FCHK_MAX_VALUES_PER_LINE)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %d values on one line of '%s' (at most %d)", r->path, r->line, n,
                            h->label, FCHK_MAX_VALUES_PER_LINE);
        if (got + n > count)
            return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: '%s' (line %d) has more values than its N=%ld", r->path, r->line,
                            h->label, hline, count);
        for (int k = 0; out != NULL && k < n; k++) {
            double v;
            if (h->type == 'I') {
                long iv;
                st = hf_parse_int(tok[k], r->path, r->line, h->label, int_min, int_max, &iv);
                v = (double)iv;
            } else {
                st = hf_parse_double(tok[k], r->path, r->line, h->label, &v);
            }
            if (st != HESSFIT_SUCCESS)
                return st;
            if ((st = dbuf_push(out, v, r->path, r->line)) != HESSFIT_SUCCESS)
                return st;
        }
        got += n;
    }
    return HESSFIT_SUCCESS;
}

/* Skip the lines of a character or logical array up to the next header line (left unread). */
static hessfit_status fchk_skip_text_array(hf_lines *r)
{
    for (;;) {
        fchk_header next;
        int eof;
        hessfit_status st = hf_lines_next(r, &eof);
        if (st != HESSFIT_SUCCESS || eof)
            return st;
        if (fchk_header_parse(r->buf, r->len, &next)) {
            hf_lines_unread(r);
            return HESSFIT_SUCCESS;
        }
    }
}

typedef struct fchk_data {
    long n_atoms;  /* -1 until "Number of atoms" */
    int atoms_line;
    int has_charge, has_multiplicity, has_energy;
    long charge, multiplicity;
    double energy;
    int z_line, xyz_line, fc_line; /* header lines of the arrays read (0: not seen) */
    dbuf z, xyz, fc;
} fchk_data;

/* A scalar item: the value token of an I or R header. */
static hessfit_status fchk_scalar(const hf_lines *r, const fchk_header *h, char want_type, const char *what)
{
    if (h->is_array || h->type != want_type)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: '%s' must be a scalar of type %c", r->path, r->line, what, want_type);
    if (h->value[0] == '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s' has no value", r->path, r->line, what);
    return HESSFIT_SUCCESS;
}

/* An array item used by the reader: type want_type, not seen before, N= parsed into *count and
 * equal to per_atom values per atom (1 or 3) of "Number of atoms" (which must come first), or
 * with per_atom = 0 to the lower triangle of the 3N x 3N Hessian. */
static hessfit_status fchk_array_count(const hf_lines *r, const fchk_header *h, char want_type, const fchk_data *d,
                                  int seen_line, int per_atom, long *count)
{
    long long expect;
    long long n3 = 3 * (long long)d->n_atoms;
    if (!h->is_array || h->type != want_type)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: '%s' must be an array of type %c", r->path, r->line, h->label,
                        want_type);
    if (seen_line)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: '%s' appears a second time (first at line %d)", r->path, r->line,
                        h->label, seen_line);
    if (d->n_atoms < 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: '%s' comes before 'Number of atoms'", r->path, r->line, h->label);
    if (hf_parse_int(h->value, r->path, r->line, "N= count", 0, LONG_MAX, count) != HESSFIT_SUCCESS)
        return HESSFIT_ERROR_PARSE;
    expect = per_atom == 0 ? n3 * (n3 + 1) / 2 : per_atom * (long long)d->n_atoms;
    if ((long long)*count != expect)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: '%s' has N=%ld, but 'Number of atoms' (line %d) = %ld needs %lld",
                        r->path, r->line, h->label, *count, d->atoms_line, d->n_atoms, expect);
    return HESSFIT_SUCCESS;
}

static hessfit_status fchk_parse(hf_lines *r, fchk_data *d, char **title)
{
    fchk_header h;
    char last_label[41] = "";
    int eof;
    hessfit_status st;

    if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
        return st;
    if (eof)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s: empty file", r->path);
    hf_rstrip(r->buf);
    if ((*title = hf_strdup(hf_skip_space(r->buf))) == NULL)
        return HESSFIT_ERROR_OUT_OF_MEMORY;
    if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
        return st;
    if (eof)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:1: the file ends after the title line", r->path);

    for (;;) {
        long count;
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof)
            break;
        if (hf_is_blank(r->buf))
            continue;
        hf_rstrip(r->buf);
        r->len = strlen(r->buf);
        if (!fchk_header_parse(r->buf, r->len, &h)) {
            if (last_label[0] != '\0')
                return hessfit_error(HESSFIT_ERROR_FORMAT,
                                "%s:%d: expected a header line ('label  type  value' or 'label  type  N= count'), "
                                "found '%.40s' (more values than N= of '%s'?)",
                                r->path, r->line, r->buf, last_label);
            return hessfit_error(HESSFIT_ERROR_FORMAT,
                            "%s:%d: expected a header line ('label  type  value' or 'label  type  N= count'), "
                            "found '%.40s'",
                            r->path, r->line, r->buf);
        }
        memcpy(last_label, h.label, sizeof last_label);

        if (strcmp(h.label, "Number of atoms") == 0) {
            if ((st = fchk_scalar(r, &h, 'I', h.label)) != HESSFIT_SUCCESS)
                return st;
            if (d->n_atoms >= 0)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: 'Number of atoms' appears a second time (first at line %d)",
                                r->path, r->line, d->atoms_line);
            if ((st = hf_parse_int(h.value, r->path, r->line, "number of atoms", 1, GAUSSIAN_MAX_ATOMS, &d->n_atoms)) !=
                HESSFIT_SUCCESS)
                return st;
            d->atoms_line = r->line;
        } else if (strcmp(h.label, "Charge") == 0) {
            if ((st = fchk_scalar(r, &h, 'I', h.label)) != HESSFIT_SUCCESS ||
                (st = hf_parse_int(h.value, r->path, r->line, "charge", -100000, 100000, &d->charge)) != HESSFIT_SUCCESS)
                return st;
            d->has_charge = 1;
        } else if (strcmp(h.label, "Multiplicity") == 0) {
            if ((st = fchk_scalar(r, &h, 'I', h.label)) != HESSFIT_SUCCESS ||
                (st = hf_parse_int(h.value, r->path, r->line, "multiplicity", 1, 100000, &d->multiplicity)) !=
                    HESSFIT_SUCCESS)
                return st;
            d->has_multiplicity = 1;
        } else if (strcmp(h.label, "Total Energy") == 0) {
            if ((st = fchk_scalar(r, &h, 'R', h.label)) != HESSFIT_SUCCESS ||
                (st = hf_parse_double(h.value, r->path, r->line, "total energy", &d->energy)) != HESSFIT_SUCCESS)
                return st;
            d->has_energy = 1;
        } else if (strcmp(h.label, "Atomic numbers") == 0) {
            int line = r->line;
            if ((st = fchk_array_count(r, &h, 'I', d, d->z_line, 1, &count)) != HESSFIT_SUCCESS ||
                (st = fchk_read_array(r, &h, count, line, &d->z, 1, HESSFIT_MAX_ATOMIC_NUMBER)) != HESSFIT_SUCCESS)
                return st;
            d->z_line = line;
        } else if (strcmp(h.label, "Current cartesian coordinates") == 0) {
            int line = r->line;
            if ((st = fchk_array_count(r, &h, 'R', d, d->xyz_line, 3, &count)) != HESSFIT_SUCCESS ||
                (st = fchk_read_array(r, &h, count, line, &d->xyz, 0, 0)) != HESSFIT_SUCCESS)
                return st;
            d->xyz_line = line;
        } else if (strcmp(h.label, "Cartesian Force Constants") == 0) {
            int line = r->line;
            if ((st = fchk_array_count(r, &h, 'R', d, d->fc_line, 0, &count)) != HESSFIT_SUCCESS ||
                (st = fchk_read_array(r, &h, count, line, &d->fc, 0, 0)) != HESSFIT_SUCCESS)
                return st;
            d->fc_line = line;
        } else if (h.is_array && (h.type == 'I' || h.type == 'R')) {
            int line = r->line;
            if ((st = hf_parse_int(h.value, r->path, r->line, "N= count", 0, LONG_MAX, &count)) != HESSFIT_SUCCESS ||
                (st = fchk_read_array(r, &h, count, line, NULL, 0, 0)) != HESSFIT_SUCCESS)
                return st;
        } else if (h.is_array) {
            if ((st = fchk_skip_text_array(r)) != HESSFIT_SUCCESS)
                return st;
        }
        /* other scalars carry nothing the molecule holds */
    }

    if (d->n_atoms < 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no 'Number of atoms' item", r->path);
    if (d->z_line == 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no 'Atomic numbers' array", r->path);
    if (d->xyz_line == 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no 'Current cartesian coordinates' array", r->path);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_fchk_read(const char *path, hessfit_molecule *mol)
{
    hf_lines r;
    fchk_data d;
    hessfit_molecule m;
    char *title = NULL;
    hessfit_status st;
    int n;

    if (mol == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_fchk_read: %s is NULL", mol == NULL ? "mol" : "path");
    memset(mol, 0, sizeof *mol);
    memset(&d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    d.n_atoms = -1;
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    st = fchk_parse(&r, &d, &title);
    hf_lines_close(&r);
    if (st != HESSFIT_SUCCESS)
        goto fail;

    n = (int)d.n_atoms;
    m.n_atoms = n;
    m.atomic_numbers = malloc((size_t)n * sizeof *m.atomic_numbers);
    m.coords = malloc(3 * (size_t)n * sizeof *m.coords);
    m.source = hf_strdup(path);
    if (m.atomic_numbers == NULL || m.coords == NULL || m.source == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %d atoms", path, n);
        goto fail;
    }
    for (int i = 0; i < n; i++)
        m.atomic_numbers[i] = (int)d.z.v[i];
    if ((st = check_elements(m.atomic_numbers, n, path, d.z_line, "'Atomic numbers'")) != HESSFIT_SUCCESS)
        goto fail;
    for (int k = 0; k < 3 * n; k++)
        m.coords[k] = d.xyz.v[k] * HESSFIT_BOHR_TO_ANGSTROM;
    if (d.fc_line != 0 && (st = full_from_lower_triangle(d.fc.v, 3 * (size_t)n, path, &m.hessian)) != HESSFIT_SUCCESS)
        goto fail;
    m.name = title;
    title = NULL;
    m.has_energy = d.has_energy;
    m.energy = d.energy;
    m.has_charge = d.has_charge;
    m.charge = (int)d.charge;
    m.multiplicity = d.has_multiplicity ? (int)d.multiplicity : 0;
    dbuf_free(&d.z);
    dbuf_free(&d.xyz);
    dbuf_free(&d.fc);
    *mol = m;
    return HESSFIT_SUCCESS;

fail:
    free(title);
    dbuf_free(&d.z);
    dbuf_free(&d.xyz);
    dbuf_free(&d.fc);
    hessfit_molecule_free(&m);
    return st;
}

/* ==== log file ================================================================================= */

/* An orientation table ("Standard orientation:", "Input orientation:", "Z-Matrix orientation:"). */
typedef struct orientation {
    int line; /* line of its title; 0: none read */
    ibuf z;
    dbuf xyz; /* Angstrom */
} orientation;

/* One "Harmonic frequencies" section. */
typedef struct freq_section {
    int line; /* its first line; 0: none */
    int is_hp;
    int n_atoms;
    dbuf freqs;
    dbuf modes; /* n_modes x 3 n_atoms */
} freq_section;

/* The text of an archive block with the leading blank of every line removed, and where each of
 * its lines starts (for messages). */
typedef struct archive {
    int line; /* first line; 0: none */
    char sep; /* '\\' (or '|' in some builds) */
    char *text;
    size_t len, cap;
    size_t end; /* offset of the terminating sep '@' */
    ibuf offsets; /* text offset of each line */
} archive;

/* The line of the archive that holds text offset pos. */
static int archive_line(const archive *a, size_t pos)
{
    size_t lo = 0, hi = a->offsets.n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((size_t)a->offsets.v[mid] <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return a->line + (int)lo;
}

static int is_dash_line(const char *s)
{
    s = hf_skip_space(s);
    return strncmp(s, "----", 4) == 0;
}

/* Read the next line; the end of the file is HESSFIT_ERROR_TRUNCATED naming what was being read. */
static hessfit_status next_line_in(hf_lines *r, const char *what, int start_line)
{
    int eof;
    hessfit_status st = hf_lines_next(r, &eof);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (eof)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends inside the %s that starts at line %d", r->path,
                        r->line - 1, what, start_line);
    return HESSFIT_SUCCESS;
}

/*
 * An orientation table after its title line:
 *     ---------------------------------------------------------------------
 *     Center     Atomic      Atomic             Coordinates (Angstroms)
 *     Number     Number       Type             X           Y           Z
 *     ---------------------------------------------------------------------
 *          1          6           0        0.000000    0.000000    0.762000
 *     ---------------------------------------------------------------------
 * (Gaussian 94 and older have no "Atomic Type" column.) Atom numbers must run 1, 2, ...
 */
static hessfit_status read_orientation(hf_lines *r, orientation *o)
{
    const int start = r->line;
    const char *what = "orientation table";
    char *tok[8];
    hessfit_status st;
    o->line = 0;
    o->z.n = o->xyz.n = 0;
    if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
        return st;
    if (!is_dash_line(r->buf))
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected a line of dashes under the orientation title", r->path,
                        r->line);
    if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
        return st;
    if (strstr(r->buf, "Center") == NULL)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected the 'Center  Atomic ...' column titles", r->path, r->line);
    if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
        return st;
    if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
        return st;
    if (!is_dash_line(r->buf))
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected a line of dashes under the column titles", r->path, r->line);
    for (int i = 0;; i++) {
        int n;
        long center, an;
        double x[3];
        if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
            return st;
        if (is_dash_line(r->buf))
            break;
        n = hf_split(r->buf, tok, 8);
        if (n != 5 && n != 6)
            return hessfit_error(HESSFIT_ERROR_PARSE,
                            "%s:%d: an orientation row has %d fields (expected 'center atomic-number [type] x y z')",
                            r->path, r->line, n);
        if ((st = hf_parse_int(tok[0], r->path, r->line, "center number", i + 1, i + 1, &center)) != HESSFIT_SUCCESS ||
            (st = hf_parse_int(tok[1], r->path, r->line, "atomic number", -1, HESSFIT_MAX_ATOMIC_NUMBER, &an)) !=
                HESSFIT_SUCCESS)
            return st;
        for (int k = 0; k < 3; k++)
            if ((st = hf_parse_double(tok[n - 3 + k], r->path, r->line, "coordinate", &x[k])) != HESSFIT_SUCCESS)
                return st;
        if (i >= GAUSSIAN_MAX_ATOMS)
            return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s:%d: more than %d atoms", r->path, r->line, GAUSSIAN_MAX_ATOMS);
        if ((st = ibuf_push(&o->z, (int)an, r->path, r->line)) != HESSFIT_SUCCESS)
            return st;
        for (int k = 0; k < 3; k++)
            if ((st = dbuf_push(&o->xyz, x[k], r->path, r->line)) != HESSFIT_SUCCESS)
                return st;
    }
    if (o->z.n == 0)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: the orientation table has no atoms", r->path, start);
    o->line = start;
    return HESSFIT_SUCCESS;
}

/* 1 if s holds 1 to LOG_MAX_MODES_PER_BLOCK positive integers and nothing else (the mode numbers
 * over a block of a frequency table). */
static int is_mode_number_line(const char *s)
{
    int count = 0;
    for (;;) {
        char *end;
        long v;
        s = hf_skip_space(s);
        if (*s == '\0')
            break;
        v = strtol(s, &end, 10);
        if (end == s || v <= 0 || (*end != '\0' && *end != ' ' && *end != '\t'))
            return 0;
        count++;
        s = end;
    }
    return count >= 1 && count <= LOG_MAX_MODES_PER_BLOCK;
}

/*
 * One "Harmonic frequencies" section, after its title line. Blocks of k modes:
 *   default format (k <= 3)                 HPModes (k <= 5)
 *     1 2 3                                   1 2 3 4 5
 *     symmetry labels                         symmetry labels
 *     Frequencies --  f1 f2 f3                Frequencies ---  f1 .. f5
 *     Red. masses --  ...  (property lines)   Reduced masses ---  ... (property lines)
 *     Atom  AN   X Y Z   X Y Z   X Y Z        Coord Atom Element:
 *     atom Z  x1 y1 z1  x2 y2 z2 ...          (n_atoms rows)   c atom Z  v1 .. v5   (3 n_atoms rows)
 * The section ends at the first line after a table that is not a row of mode numbers.
 */
static hessfit_status read_freq_section(hf_lines *r, const orientation *o, freq_section *f)
{
    const int start = r->line;
    const char *what = "frequency section";
    const int n_atoms = (int)(o != NULL ? o->z.n : 0);
    const size_t n3 = 3 * (size_t)n_atoms;
    double *block = NULL;
    char **tok = NULL;
    const int max_tok = 3 + 3 * LOG_MAX_MODES_PER_BLOCK + 1;
    hessfit_status st = HESSFIT_SUCCESS;
    int n_modes = 0, found = 0;

    f->line = 0;
    f->freqs.n = f->modes.n = 0;
    if (o == NULL)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: frequencies before any orientation table", r->path, r->line);
    block = malloc(LOG_MAX_MODES_PER_BLOCK * n3 * sizeof *block);
    tok = malloc((size_t)max_tok * sizeof *tok);
    if (block == NULL || tok == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for a block of modes", r->path, r->line);
        goto done;
    }
    /* the title text, then the first row of mode numbers */
    for (int tries = 0;; tries++) {
        if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
            goto done;
        if (is_mode_number_line(r->buf))
            break;
        if (tries >= 8) {
            st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: no row of mode numbers under the frequency title (line %d)",
                          r->path, r->line, start);
            goto done;
        }
    }
    for (;;) {
        int k, hp;
        const char *s;
        char *values;
        /* mode numbers: n_modes + 1, n_modes + 2, ... */
        k = hf_split(r->buf, tok, max_tok);
        for (int j = 0; j < k; j++) {
            long num;
            if ((st = hf_parse_int(tok[j], r->path, r->line, "mode number", n_modes + j + 1, n_modes + j + 1, &num)) !=
                HESSFIT_SUCCESS)
                goto done;
        }
        if ((size_t)(n_modes + k) > n3) {
            st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: mode %d of %d atoms (at most %zu modes)", r->path, r->line,
                          n_modes + k, n_atoms, n3);
            goto done;
        }
        /* the symmetry labels, then the frequencies */
        for (int tries = 0;; tries++) {
            if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
                goto done;
            s = hf_skip_space(r->buf);
            if (strncmp(s, "Frequencies --", 14) == 0)
                break;
            if (tries >= 2) {
                st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected 'Frequencies --' for modes %d-%d", r->path, r->line,
                              n_modes + 1, n_modes + k);
                goto done;
            }
        }
        hp = strncmp(s, "Frequencies ---", 15) == 0;
        if (found && hp != f->is_hp) {
            st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: HPModes and default blocks mixed in one frequency section", r->path,
                          r->line);
            goto done;
        }
        f->is_hp = hp;
        found = 1;
        values = (char *)s + (hp ? 15 : 14);
        {
            int n = hf_split(values, tok, max_tok);
            if (n != k) {
                st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %d frequencies for %d modes", r->path, r->line, n, k);
                goto done;
            }
            for (int j = 0; j < k; j++) {
                double v;
                if ((st = hf_parse_double(tok[j], r->path, r->line, "frequency", &v)) != HESSFIT_SUCCESS ||
                    (st = dbuf_push(&f->freqs, v, r->path, r->line)) != HESSFIT_SUCCESS)
                    goto done;
            }
        }
        /* property lines ("Red. masses --", "IR Inten --", ...) up to the table title */
        for (int tries = 0;; tries++) {
            if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
                goto done;
            s = hf_skip_space(r->buf);
            if (hp && strncmp(s, "Coord Atom Element:", 19) == 0)
                break;
            if (!hp && strncmp(s, "Atom", 4) == 0 && strstr(s, " AN ") != NULL)
                break;
            if (strstr(s, "--") == NULL || tries >= 16) {
                st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: expected a property line or the '%s' title of modes %d-%d",
                              r->path, r->line, hp ? "Coord Atom Element:" : "Atom AN X Y Z", n_modes + 1,
                              n_modes + k);
                goto done;
            }
        }
        /* the displacements: block[j * n3 + 3 atom + xyz] */
        for (size_t row = 0; row < (hp ? n3 : (size_t)n_atoms); row++) {
            const int atom = (int)(hp ? row / 3 : row), lead = hp ? 3 : 2, want = lead + (hp ? k : 3 * k);
            long v;
            int n;
            if ((st = next_line_in(r, what, start)) != HESSFIT_SUCCESS)
                goto done;
            n = hf_split(r->buf, tok, max_tok);
            if (n != want) {
                st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %d fields in a row of modes %d-%d (expected %d)", r->path,
                              r->line, n, n_modes + 1, n_modes + k, want);
                goto done;
            }
            if (hp && (st = hf_parse_int(tok[0], r->path, r->line, "coordinate number", (long)(row % 3) + 1,
                                         (long)(row % 3) + 1, &v)) != HESSFIT_SUCCESS)
                goto done;
            if ((st = hf_parse_int(tok[lead - 2], r->path, r->line, "atom number", atom + 1, atom + 1, &v)) !=
                HESSFIT_SUCCESS)
                goto done;
            if ((st = hf_parse_int(tok[lead - 1], r->path, r->line, "atomic number", o->z.v[atom], o->z.v[atom],
                                   &v)) != HESSFIT_SUCCESS)
                goto done;
            for (int j = 0; j < (hp ? k : 3 * k); j++) {
                double x;
                if ((st = hf_parse_double(tok[lead + j], r->path, r->line, "normal-mode displacement", &x)) !=
                    HESSFIT_SUCCESS)
                    goto done;
                if (hp)
                    block[(size_t)j * n3 + row] = x;
                else
                    block[(size_t)(j / 3) * n3 + 3 * row + (size_t)(j % 3)] = x;
            }
        }
        for (size_t q = 0; q < (size_t)k * n3; q++)
            if ((st = dbuf_push(&f->modes, block[q], r->path, r->line)) != HESSFIT_SUCCESS)
                goto done;
        n_modes += k;
        /* another block, or the end of the section */
        {
            int eof;
            if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
                goto done;
            if (eof)
                break;
            if (!is_mode_number_line(r->buf)) {
                hf_lines_unread(r);
                break;
            }
        }
    }
    f->line = start;
    f->n_atoms = n_atoms;
done:
    free(block);
    free(tok);
    return st;
}

/* The archive block from its first line (" 1\1\GINC..."): lines joined without their leading
 * blank up to the terminating "\@". */
static hessfit_status read_archive(hf_lines *r, archive *a)
{
    const int start = r->line;
    hessfit_status st;
    a->line = start;
    a->sep = r->buf[2];
    a->len = 0;
    a->offsets.n = 0;
    for (;;) {
        const char *s = r->buf[0] == ' ' ? r->buf + 1 : r->buf;
        size_t n = strlen(s), from = a->len > 0 ? a->len - 1 : 0;
        char *hit;
        if ((st = ibuf_push(&a->offsets, (int)a->len, r->path, r->line)) != HESSFIT_SUCCESS)
            return st;
        if ((st = grow_at((void **)&a->text, &a->cap, a->len + n + 1, 1, r->path, r->line, "archive characters")) !=
            HESSFIT_SUCCESS)
            return st;
        memcpy(a->text + a->len, s, n + 1);
        a->len += n;
        for (hit = a->text + from; (hit = strchr(hit, a->sep)) != NULL; hit++)
            if (hit[1] == '@') {
                a->end = (size_t)(hit - a->text);
                return HESSFIT_SUCCESS;
            }
        if ((st = next_line_in(r, "archive block", start)) != HESSFIT_SUCCESS)
            return st;
        if (a->len > (size_t)1 << 30)
            return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s:%d: the archive block is longer than 1 GiB", r->path, r->line);
    }
}

/* What the reader takes from an archive block. */
typedef struct archive_data {
    int has_charge;
    long charge, multiplicity;
    char *title;
    int has_geometry; /* Cartesian geometry (not a Z-matrix) */
    ibuf z;
    dbuf xyz;         /* Angstrom */
    int has_hessian;
    dbuf tri;         /* lower triangle */
    int hessian_line;
} archive_data;

/* The comma-separated values of a Hessian section [b, e): parsed into d->tri. */
static hessfit_status archive_hessian(archive *a, size_t b, size_t e, const char *path, archive_data *d)
{
    size_t s = b;
    hessfit_status st;
    d->hessian_line = archive_line(a, b);
    for (size_t i = b; i <= e; i++)
        if (i == e || a->text[i] == ',') {
            double v;
            char save = a->text[i];
            a->text[i] = '\0';
            st = hf_parse_double(a->text + s, path, archive_line(a, s), "archive force constant", &v);
            a->text[i] = save;
            if (st != HESSFIT_SUCCESS)
                return st;
            if ((st = dbuf_push(&d->tri, v, path, archive_line(a, s))) != HESSFIT_SUCCESS)
                return st;
            s = i + 1;
        }
    d->has_hessian = 1;
    return HESSFIT_SUCCESS;
}

/*
 * The archive: "1\1\GINC-host\job\method\basis\formula\user\date\0\\route\\title\\q,m\atoms
 * \\Version=...\NImag=n\\Hessian lower triangle\\gradient\\@" (sections separated by a double
 * separator). Atoms are "Sym,x,y,z" or "Sym,0,x,y,z" (Cartesian, Angstrom); any other form is a
 * Z-matrix, whose frame the reader does not rebuild.
 */
static hessfit_status parse_archive(archive *a, const char *path, archive_data *d)
{
    size_t sec_b[ARCHIVE_MAX_SECTIONS], sec_e[ARCHIVE_MAX_SECTIONS];
    int n_sec = 0, nimag_sec = -1;
    const char sep = a->sep;
    size_t s = 0;
    hessfit_status st;

    for (size_t i = 0; i <= a->end; i++)
        if (i == a->end || (a->text[i] == sep && i + 1 < a->end && a->text[i + 1] == sep)) {
            if (n_sec == ARCHIVE_MAX_SECTIONS)
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: more than %d sections in the archive block", path,
                                archive_line(a, i), ARCHIVE_MAX_SECTIONS);
            sec_b[n_sec] = s;
            sec_e[n_sec] = i;
            n_sec++;
            s = i + 2;
            i++;
        }
    if (n_sec < 5)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: the archive block has %d sections (expected at least 5)", path,
                        a->line, n_sec);
    /* section 4 on: the properties section with NImag=, then the Hessian */
    for (int k = 4; k < n_sec && nimag_sec < 0; k++) {
        for (size_t i = sec_b[k]; i + 6 <= sec_e[k]; i++)
            if ((i == sec_b[k] || a->text[i - 1] == sep) && strncmp(a->text + i, "NImag=", 6) == 0) {
                nimag_sec = k;
                break;
            }
    }
    if (nimag_sec >= 0) {
        if (nimag_sec + 1 >= n_sec || sec_e[nimag_sec + 1] == sec_b[nimag_sec + 1])
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: the archive block has NImag= but no force constants after it",
                            path, archive_line(a, sec_b[nimag_sec]));
        if ((st = archive_hessian(a, sec_b[nimag_sec + 1], sec_e[nimag_sec + 1], path, d)) != HESSFIT_SUCCESS)
            return st;
    }

    /* title (section 2) */
    a->text[sec_e[2]] = '\0';
    if ((d->title = hf_strdup(a->text + sec_b[2])) == NULL)
        return HESSFIT_ERROR_OUT_OF_MEMORY;

    /* charge, multiplicity and atoms (section 3) */
    {
        size_t b = sec_b[3], e = sec_e[3], fs = b;
        int field = 0, cartesian = 1;
        for (size_t i = b; i <= e; i++) {
            char *f, *part[6];
            int n_parts = 0, line;
            if (i < e && a->text[i] != sep)
                continue;
            a->text[i] = '\0';
            f = a->text + fs;
            line = archive_line(a, fs);
            fs = i + 1;
            /* split f at commas */
            part[n_parts++] = f;
            for (char *c = f; *c; c++)
                if (*c == ',') {
                    *c = '\0';
                    if (n_parts == 6)
                        break;
                    part[n_parts++] = c + 1;
                }
            if (field++ == 0) {
                if (n_parts < 2)
                    return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: the archive's charge,multiplicity field is '%.40s'",
                                    path, line, f);
                if ((st = hf_parse_int(part[0], path, line, "archive charge", -100000, 100000, &d->charge)) !=
                        HESSFIT_SUCCESS ||
                    (st = hf_parse_int(part[1], path, line, "archive multiplicity", 1, 100000, &d->multiplicity)) !=
                        HESSFIT_SUCCESS)
                    return st;
                d->has_charge = 1;
                continue;
            }
            if (!cartesian)
                continue;
            if (n_parts == 4 || (n_parts == 5 && (strcmp(part[1], "0") == 0 || strcmp(part[1], "-1") == 0))) {
                int z;
                double x[3];
                char *paren = strchr(part[0], '(');
                if (paren != NULL)
                    *paren = '\0';
                if ((st = hessfit_element_lookup(part[0], &z)) != HESSFIT_SUCCESS)
                    return hessfit_error(st, "%s:%d: archive atom %d: unknown element '%.20s'", path, line, field - 1,
                                    part[0]);
                for (int k = 0; k < 3; k++)
                    if ((st = hf_parse_double(part[n_parts - 3 + k], path, line, "archive coordinate", &x[k])) !=
                        HESSFIT_SUCCESS)
                        return st;
                if ((st = ibuf_push(&d->z, z, path, line)) != HESSFIT_SUCCESS)
                    return st;
                for (int k = 0; k < 3; k++)
                    if ((st = dbuf_push(&d->xyz, x[k], path, line)) != HESSFIT_SUCCESS)
                        return st;
            } else {
                cartesian = 0; /* a Z-matrix */
            }
        }
        d->has_geometry = cartesian && d->z.n > 0;
    }
    return HESSFIT_SUCCESS;
}

/*
 * The rotation R (row-major 3 x 3) that maps the centred points a best onto the centred points b
 * in the least-squares sense (Horn 1987, J. Opt. Soc. Am. A 4, 629: the unit quaternion is the
 * eigenvector of the largest eigenvalue of a 4 x 4 matrix built from S_uv = sum_i a_iu b_iv),
 * and the rms of |R a_i - b_i|.
 */
static hessfit_status best_rotation(const double *a, const double *b, int n, double R[9], double *rms)
{
    double S[9] = {0}, N[16], w[4], q[4], sum = 0.0;
    lapack_int info;
    for (int i = 0; i < n; i++)
        for (int u = 0; u < 3; u++)
            for (int v = 0; v < 3; v++)
                S[3 * u + v] += a[3 * i + u] * b[3 * i + v];
#define Sxy(u, v) S[3 * (u) + (v)]
    N[0] = Sxy(0, 0) + Sxy(1, 1) + Sxy(2, 2);
    N[1] = Sxy(1, 2) - Sxy(2, 1);
    N[2] = Sxy(2, 0) - Sxy(0, 2);
    N[3] = Sxy(0, 1) - Sxy(1, 0);
    N[5] = Sxy(0, 0) - Sxy(1, 1) - Sxy(2, 2);
    N[6] = Sxy(0, 1) + Sxy(1, 0);
    N[7] = Sxy(2, 0) + Sxy(0, 2);
    N[10] = -Sxy(0, 0) + Sxy(1, 1) - Sxy(2, 2);
    N[11] = Sxy(1, 2) + Sxy(2, 1);
    N[15] = -Sxy(0, 0) - Sxy(1, 1) + Sxy(2, 2);
#undef Sxy
    N[4] = N[1];
    N[8] = N[2];
    N[9] = N[6];
    N[12] = N[3];
    N[13] = N[7];
    N[14] = N[11];
    info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 4, N, 4, w);
    if (info != 0)
        return hessfit_error(HESSFIT_ERROR_LAPACK, "LAPACKE_dsyev (4 x 4 rotation fit) returned %d", (int)info);
    for (int k = 0; k < 4; k++)
        q[k] = N[4 * k + 3]; /* eigenvector of the largest eigenvalue: last column */
    R[0] = q[0] * q[0] + q[1] * q[1] - q[2] * q[2] - q[3] * q[3];
    R[1] = 2.0 * (q[1] * q[2] - q[0] * q[3]);
    R[2] = 2.0 * (q[1] * q[3] + q[0] * q[2]);
    R[3] = 2.0 * (q[1] * q[2] + q[0] * q[3]);
    R[4] = q[0] * q[0] - q[1] * q[1] + q[2] * q[2] - q[3] * q[3];
    R[5] = 2.0 * (q[2] * q[3] - q[0] * q[1]);
    R[6] = 2.0 * (q[1] * q[3] - q[0] * q[2]);
    R[7] = 2.0 * (q[2] * q[3] + q[0] * q[1]);
    R[8] = q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3];
    for (int i = 0; i < n; i++)
        for (int u = 0; u < 3; u++) {
            double d = R[3 * u] * a[3 * i] + R[3 * u + 1] * a[3 * i + 1] + R[3 * u + 2] * a[3 * i + 2] - b[3 * i + u];
            sum += d * d;
        }
    *rms = sqrt(sum / (n > 0 ? n : 1));
    return HESSFIT_SUCCESS;
}

/* Centred copy of 3n coordinates. */
static void centred(const double *x, int n, double *out)
{
    double c[3] = {0, 0, 0};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            c[k] += x[3 * i + k] / n;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            out[3 * i + k] = x[3 * i + k] - c[k];
}

/*
 * Bring the Hessian h (in the frame of the coordinates ref) into the frame of the coordinates
 * target: H'_ab = R H_ab R^T for every 3 x 3 atom block, with R the best rotation of ref onto
 * target. Same frame (centred coordinates within SAME_FRAME_TOLERANCE_A): h unchanged.
 */
static hessfit_status hessian_to_frame(double *h, const double *ref, const double *target, int n, const char *path,
                                  int ref_line, int target_line)
{
    const size_t n3 = 3 * (size_t)n;
    double *a = malloc(2 * n3 * sizeof *a), *b, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, rms = 0.0, dmax = 0.0;
    hessfit_status st;
    if (a == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %d atoms", path, n);
    b = a + n3;
    centred(ref, n, a);
    centred(target, n, b);
    for (size_t k = 0; k < n3; k++)
        dmax = fmax(dmax, fabs(a[k] - b[k]));
    if (dmax <= SAME_FRAME_TOLERANCE_A) {
        free(a);
        return HESSFIT_SUCCESS;
    }
    st = best_rotation(a, b, n, R, &rms);
    free(a);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (rms > ROTATION_RMS_TOLERANCE_A)
        return hessfit_error(HESSFIT_ERROR_FORMAT,
                        "%s:%d: the geometry of the archive Hessian is not a rotation of the orientation at line %d "
                        "(rms deviation %.3g A after the best rotation): the Hessian belongs to another geometry",
                        path, ref_line, target_line, rms);
    for (size_t ia = 0; ia < (size_t)n; ia++)
        for (size_t ib = 0; ib < (size_t)n; ib++) {
            double blk[9], tmp[9];
            for (int u = 0; u < 3; u++)
                for (int v = 0; v < 3; v++)
                    blk[3 * u + v] = h[(3 * ia + u) * n3 + 3 * ib + v];
            for (int u = 0; u < 3; u++) /* tmp = R blk */
                for (int v = 0; v < 3; v++)
                    tmp[3 * u + v] = R[3 * u] * blk[v] + R[3 * u + 1] * blk[3 + v] + R[3 * u + 2] * blk[6 + v];
            for (int u = 0; u < 3; u++) /* blk' = tmp R^T */
                for (int v = 0; v < 3; v++)
                    h[(3 * ia + u) * n3 + 3 * ib + v] =
                        tmp[3 * u] * R[3 * v] + tmp[3 * u + 1] * R[3 * v + 1] + tmp[3 * u + 2] * R[3 * v + 2];
        }
    return HESSFIT_SUCCESS;
}

typedef struct log_data {
    orientation standard, input; /* the last of each kind */
    const orientation *latest;   /* the last table read, for the frequency tables under it */
    int charge_line;
    long charge, multiplicity;
    int energy_line;
    double energy;
    freq_section best, scratch;
    int previous_was_hp;         /* the section just read was HPModes, nothing between */
    archive arch;
    int normal_end;              /* no non-blank line since "Normal termination of Gaussian" */
} log_data;

static void log_data_free(log_data *d)
{
    ibuf_free(&d->standard.z);
    dbuf_free(&d->standard.xyz);
    ibuf_free(&d->input.z);
    dbuf_free(&d->input.xyz);
    dbuf_free(&d->best.freqs);
    dbuf_free(&d->best.modes);
    dbuf_free(&d->scratch.freqs);
    dbuf_free(&d->scratch.modes);
    free(d->arch.text);
    ibuf_free(&d->arch.offsets);
}

static hessfit_status log_charge_line(hf_lines *r, log_data *d)
{
    char *tok[10];
    int n = hf_split(r->buf, tok, 10);
    hessfit_status st;
    /* "Charge = q Multiplicity = m" or "... in supermolecule"; fragment lines are skipped */
    if (n < 6 || strcmp(tok[1], "=") != 0 || strcmp(tok[3], "Multiplicity") != 0 || strcmp(tok[4], "=") != 0)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: expected 'Charge = q Multiplicity = m'", r->path, r->line);
    if (n > 6 && !(n == 8 && strcmp(tok[6], "in") == 0 && strcmp(tok[7], "supermolecule") == 0))
        return HESSFIT_SUCCESS;
    if ((st = hf_parse_int(tok[2], r->path, r->line, "charge", -100000, 100000, &d->charge)) != HESSFIT_SUCCESS ||
        (st = hf_parse_int(tok[5], r->path, r->line, "multiplicity", 1, 100000, &d->multiplicity)) != HESSFIT_SUCCESS)
        return st;
    d->charge_line = r->line;
    return HESSFIT_SUCCESS;
}

static hessfit_status log_scf_line(hf_lines *r, log_data *d)
{
    char *tok[4];
    char *eq = strchr(r->buf, '=');
    hessfit_status st;
    if (eq == NULL || hf_split(eq + 1, tok, 4) < 1)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: expected 'SCF Done:  E(...) =  energy'", r->path, r->line);
    if ((st = hf_parse_double(tok[0], r->path, r->line, "SCF energy", &d->energy)) != HESSFIT_SUCCESS)
        return st;
    d->energy_line = r->line;
    return HESSFIT_SUCCESS;
}

static int is_archive_start(const char *s)
{
    return s[0] == ' ' && s[1] == '1' && (s[2] == '\\' || s[2] == '|') && s[3] == '1' && s[4] == s[2];
}

static hessfit_status log_scan(hf_lines *r, log_data *d)
{
    hessfit_status st;
    for (;;) {
        const char *s;
        int eof;
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof)
            break;
        s = hf_skip_space(r->buf);
        if (*s == '\0')
            continue;
        d->normal_end = 0;
        if (strncmp(s, "Normal termination of Gaussian", 30) == 0) {
            d->normal_end = 1;
            d->previous_was_hp = 0;
        } else if (strncmp(s, "Standard orientation:", 21) == 0) {
            if ((st = read_orientation(r, &d->standard)) != HESSFIT_SUCCESS)
                return st;
            d->latest = &d->standard;
            d->previous_was_hp = 0;
        } else if (strncmp(s, "Input orientation:", 18) == 0 || strncmp(s, "Z-Matrix orientation:", 21) == 0) {
            if ((st = read_orientation(r, &d->input)) != HESSFIT_SUCCESS)
                return st;
            d->latest = &d->input;
            d->previous_was_hp = 0;
        } else if (strncmp(s, "Charge =", 8) == 0) {
            if ((st = log_charge_line(r, d)) != HESSFIT_SUCCESS)
                return st;
        } else if (strncmp(s, "SCF Done:", 9) == 0) {
            if ((st = log_scf_line(r, d)) != HESSFIT_SUCCESS)
                return st;
        } else if (strncmp(s, "Harmonic frequencies (cm**-1)", 29) == 0) {
            if ((st = read_freq_section(r, d->latest, &d->scratch)) != HESSFIT_SUCCESS)
                return st;
            /* HPModes prints its section and then the default one for the same modes: keep the
             * precise one. Any other section replaces what was kept. */
            if (d->previous_was_hp && !d->scratch.is_hp && d->scratch.freqs.n == d->best.freqs.n) {
                d->previous_was_hp = 0;
            } else {
                freq_section t = d->best;
                d->best = d->scratch;
                d->scratch = t;
                d->previous_was_hp = d->best.is_hp;
            }
        } else if (is_archive_start(r->buf)) {
            if ((st = read_archive(r, &d->arch)) != HESSFIT_SUCCESS)
                return st;
        }
    }
    if (r->line <= 1)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s: empty file", r->path);
    if (!d->normal_end)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED,
                        "%s:%d: the file ends before 'Normal termination of Gaussian' of its last job (truncated, or "
                        "the job failed)",
                        r->path, r->line - 1);
    return HESSFIT_SUCCESS;
}

/*
 * Gaussian log file (Gaussian 94 to 16), read in one pass:
 *   coordinates   the LAST "Standard orientation:" table; only when the log has none (NoSym
 *                 jobs print none) the last "Input orientation:" / "Z-Matrix orientation:" one;
 *   charge, multiplicity  the last "Charge = q Multiplicity = m" line (fragment lines skipped),
 *                 else the archive's "q,m";
 *   energy        the last "SCF Done:  E(...) = value";
 *   frequencies and normal modes  the last "Harmonic frequencies" section: the HPModes blocks
 *                 ("Frequencies ---", "Coord Atom Element:", 5 modes a block) when the job
 *                 printed them (Gaussian then repeats the modes in the default format, which is
 *                 ignored), else the default 3-column blocks; displacements as printed (each
 *                 mode a unit Cartesian vector, 2 or 5 decimals); atom numbers and atomic
 *                 numbers are checked against the orientation table above them;
 *   Hessian       the archive block at the end of the last job (" 1\1\GINC...\@", lines of 70
 *                 characters that are joined before splitting, so numbers broken across lines
 *                 read whole): the section after the one holding "NImag=", the lower triangle
 *                 row by row, 8 decimals. Gaussian writes it in the input (Z-matrix) frame of
 *                 the archive's own geometry; when that differs from the orientation chosen
 *                 above, the Hessian is rotated into the coordinates' frame (best rotation of
 *                 the archive geometry onto the coordinates, rms <= 1e-4 A required; the
 *                 6-decimal orientation table limits the rotation to about 1e-6). An archive
 *                 with a Z-matrix geometry uses the last input orientation table as its frame.
 *   name          the archive title, else "".
 * The last job must end with "Normal termination of Gaussian" (a truncated or failed log is
 * an error).
 */
hessfit_status hessfit_gaussian_log_read(const char *path, hessfit_molecule *mol)
{
    hf_lines r;
    log_data d;
    archive_data ad;
    hessfit_molecule m;
    const orientation *o;
    hessfit_status st;
    int n;

    if (mol == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_gaussian_log_read: %s is NULL", mol == NULL ? "mol" : "path");
    memset(mol, 0, sizeof *mol);
    memset(&d, 0, sizeof d);
    memset(&ad, 0, sizeof ad);
    memset(&m, 0, sizeof m);
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    st = log_scan(&r, &d);
    hf_lines_close(&r);
    if (st != HESSFIT_SUCCESS)
        goto fail;

    o = d.standard.line != 0 ? &d.standard : d.input.line != 0 ? &d.input : NULL;
    if (o == NULL) {
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no 'Standard orientation:' or 'Input orientation:' table", path);
        goto fail;
    }
    n = (int)o->z.n;
    if ((st = check_elements(o->z.v, n, path, o->line, "orientation table")) != HESSFIT_SUCCESS)
        goto fail;
    if (d.best.line != 0 && d.best.n_atoms != n) {
        st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: the frequency section is for %d atoms, the orientation at line %d has %d",
                      path, d.best.line, d.best.n_atoms, o->line, n);
        goto fail;
    }
    if (d.arch.line != 0 && (st = parse_archive(&d.arch, path, &ad)) != HESSFIT_SUCCESS)
        goto fail;

    m.n_atoms = n;
    m.atomic_numbers = malloc((size_t)n * sizeof *m.atomic_numbers);
    m.coords = malloc(3 * (size_t)n * sizeof *m.coords);
    m.source = hf_strdup(path);
    m.name = hf_strdup(ad.title != NULL ? ad.title : "");
    if (m.atomic_numbers == NULL || m.coords == NULL || m.source == NULL || m.name == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %d atoms", path, n);
        goto fail;
    }
    memcpy(m.atomic_numbers, o->z.v, (size_t)n * sizeof *m.atomic_numbers);
    memcpy(m.coords, o->xyz.v, 3 * (size_t)n * sizeof *m.coords);

    if (ad.has_hessian) {
        const size_t n3 = 3 * (size_t)n;
        const double *ref = NULL;
        int ref_line = 0;
        if (ad.tri.n != triangle_size(n3)) {
            st = hessfit_error(HESSFIT_ERROR_COUNT,
                          "%s:%d: the archive Hessian has %zu values; %d atoms (orientation at line %d) need %zu",
                          path, ad.hessian_line, ad.tri.n, n, o->line, triangle_size(n3));
            goto fail;
        }
        if ((st = full_from_lower_triangle(ad.tri.v, n3, path, &m.hessian)) != HESSFIT_SUCCESS)
            goto fail;
        /* the Hessian's frame: the archive geometry, else the last input orientation */
        if (ad.has_geometry) {
            if (ad.z.n != (size_t)n || memcmp(ad.z.v, o->z.v, (size_t)n * sizeof *o->z.v) != 0) {
                st = hessfit_error(HESSFIT_ERROR_COUNT,
                              "%s:%d: the archive's atoms (%zu) are not those of the orientation at line %d (%d)", path,
                              d.arch.line, ad.z.n, o->line, n);
                goto fail;
            }
            ref = ad.xyz.v;
            ref_line = d.arch.line;
        } else if (d.input.line != 0 && d.input.z.n == (size_t)n &&
                   memcmp(d.input.z.v, o->z.v, (size_t)n * sizeof *o->z.v) == 0) {
            ref = d.input.xyz.v;
            ref_line = d.input.line;
        } else {
            st = hessfit_error(HESSFIT_ERROR_FORMAT,
                          "%s:%d: the archive Hessian's frame is unknown (Z-matrix archive geometry and no matching "
                          "input orientation table)",
                          path, d.arch.line);
            goto fail;
        }
        if (ref != o->xyz.v &&
            (st = hessian_to_frame(m.hessian, ref, o->xyz.v, n, path, ref_line, o->line)) != HESSFIT_SUCCESS)
            goto fail;
    }
    if (d.charge_line != 0) {
        if (ad.has_charge && (ad.charge != d.charge || ad.multiplicity != d.multiplicity)) {
            st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: charge %ld, multiplicity %ld, but the archive (line %d) says %ld,%ld",
                          path, d.charge_line, d.charge, d.multiplicity, d.arch.line, ad.charge, ad.multiplicity);
            goto fail;
        }
        m.has_charge = 1;
        m.charge = (int)d.charge;
        m.multiplicity = (int)d.multiplicity;
    } else if (ad.has_charge) {
        m.has_charge = 1;
        m.charge = (int)ad.charge;
        m.multiplicity = (int)ad.multiplicity;
    }
    if (d.energy_line != 0) {
        m.has_energy = 1;
        m.energy = d.energy;
    }
    if (d.best.line != 0) {
        m.n_modes = (int)d.best.freqs.n;
        m.frequencies = d.best.freqs.v;
        m.modes = d.best.modes.v;
        memset(&d.best.freqs, 0, sizeof d.best.freqs);
        memset(&d.best.modes, 0, sizeof d.best.modes);
    }
    free(ad.title);
    ibuf_free(&ad.z);
    dbuf_free(&ad.xyz);
    dbuf_free(&ad.tri);
    log_data_free(&d);
    *mol = m;
    return HESSFIT_SUCCESS;

fail:
    free(ad.title);
    ibuf_free(&ad.z);
    dbuf_free(&ad.xyz);
    dbuf_free(&ad.tri);
    log_data_free(&d);
    hessfit_molecule_free(&m);
    return st;
}
