/*
 * ORCA Hessian file (.hess), the text file ORCA writes beside a frequency calculation:
 *
 *     $orca_hessian_file
 *     $act_atom / $act_coord        (one integer each; skipped)
 *     $act_energy                   one value, Hartree (ORCA writes 0.000000 when it has none)
 *     $multiplicity                 one integer (newer versions)
 *     $hessian                      N = 3 n_atoms, then column blocks: a line of column indices
 *         c c+1 ... c+k-1               (0-based, consecutive, continuing the previous block)
 *         0  H(0,c) ... H(0,c+k-1)      followed by the N rows 0 .. N-1, each "row v .. v"
 *         ...
 *     $vibrational_frequencies      count, then "i value" (cm^-1) for i = 0 .. count-1; ORCA
 *                                   lists all 3N, the translations and rotations as 0.000000
 *     $normal_modes                 "rows cols" (3N 3N), then column blocks as $hessian; column k
 *                                   is the displacement vector of frequency k
 *     $atoms                        count, then "Symbol mass x y z" (coordinates in Bohr)
 *     $end
 * Lines starting with '#' are comments; sections the reader does not use ($dipole_derivatives,
 * $ir_spectrum, ...) are skipped up to the next '$' line; nothing after $end is read. The blocks
 * are read strictly: every column index in sequence, every row 0 .. N-1 once per block, in order,
 * with one value per column; a section's data must be followed by a blank line, a comment or
 * the next section. Values are stored as they are read, never allocated from a count.
 */
#include "hessfit_elements.h"
#include "hessfit_io.h"
#include "hessfit_molecule.h"
#include "hessfit_units.h"
#include "hf_lines.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest relative asymmetry |H_ij - H_ji| / max|H| accepted in a $hessian block. */
#define HF_ORCA_SYMMETRY_TOLERANCE 1e-4

/* Largest atom count (the same bound as .xyz files). */
#define ORCA_MAX_ATOMS HESSFIT_XYZ_MAX_ATOMS
/* Most columns in one block of $hessian / $normal_modes (ORCA writes 5 or 6). */
#define ORCA_MAX_BLOCK_COLUMNS 64

typedef struct dbuf {
    double *v;
    size_t n, cap;
} dbuf;

static hessfit_status dbuf_push(dbuf *b, double x, const char *path, int line)
{
    if (b->n == b->cap) {
        hessfit_status st = hf_grow((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v, "values");
        if (st != HESSFIT_SUCCESS)
            return hessfit_error(st, "%s:%d: %s", path, line, hessfit_last_error());
    }
    b->v[b->n++] = x;
    return HESSFIT_SUCCESS;
}

/* A matrix read from column blocks. */
typedef struct orca_matrix {
    int line; /* line of the section title; 0: not read */
    long rows, cols;
    double *v; /* rows x cols, row-major */
} orca_matrix;

typedef struct orca_data {
    orca_matrix hessian, modes;
    int freq_line;
    dbuf freqs;
    int atoms_line;
    int n_atoms;
    int *z;
    dbuf xyz; /* Bohr */
    int energy_line;
    double energy;
    int multiplicity_line;
    long multiplicity;
} orca_data;

static int is_section_line(const char *s)
{
    return *hf_skip_space(s) == '$';
}

static int is_comment_or_blank(const char *s)
{
    s = hf_skip_space(s);
    return *s == '\0' || *s == '#';
}

/* The next line of the section that starts at line start: the end of the file, a blank line or
 * a '$' line is HESSFIT_ERROR_TRUNCATED ("the $x section ends ..."). */
static hessfit_status section_line(hf_lines *r, const char *section, int start, const char *expected)
{
    int eof;
    hessfit_status st = hf_lines_next(r, &eof);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (eof)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends inside %s (line %d): expected %s", r->path,
                        r->line - 1, section, start, expected);
    if (is_section_line(r->buf) || hf_is_blank(r->buf))
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: %s (line %d) ends early: expected %s", r->path, r->line, section,
                        start, expected);
    return HESSFIT_SUCCESS;
}

/* A line of exactly n integers in [min, max]. */
static hessfit_status count_line(hf_lines *r, const char *section, int start, int n, long min, long max, long *out)
{
    char *tok[3];
    int got;
    hessfit_status st = section_line(r, section, start, n == 1 ? "a count" : "two counts");
    if (st != HESSFIT_SUCCESS)
        return st;
    got = hf_split(r->buf, tok, 3);
    if (got != n)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s: expected %d integer%s on the count line, found %d fields", r->path,
                        r->line, section, n, n == 1 ? "" : "s", got);
    for (int k = 0; k < n; k++)
        if ((st = hf_parse_int(tok[k], r->path, r->line, section, min, max, &out[k])) != HESSFIT_SUCCESS)
            return st;
    return HESSFIT_SUCCESS;
}

/* rows x cols values in column blocks (see the file comment) into m->v. */
static hessfit_status read_column_blocks(hf_lines *r, const char *section, int start, long rows, long cols,
                                    orca_matrix *m)
{
    char *tok[ORCA_MAX_BLOCK_COLUMNS + 2];
    dbuf vals = {0};
    long widths_cap = 0, n_blocks = 0, *widths = NULL;
    long col = 0;
    hessfit_status st = HESSFIT_SUCCESS;

    while (col < cols) {
        long k, c;
        char expected[96];
        snprintf(expected, sizeof expected, "the column indices from %ld", col);
        if ((st = section_line(r, section, start, expected)) != HESSFIT_SUCCESS)
            goto done;
        k = hf_split(r->buf, tok, ORCA_MAX_BLOCK_COLUMNS + 2);
        if (k == 0 || k > ORCA_MAX_BLOCK_COLUMNS) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s: expected a line of 1 to %d column indices from %ld, found %ld fields",
                          r->path, r->line, section, ORCA_MAX_BLOCK_COLUMNS, col, k);
            goto done;
        }
        for (long j = 0; j < k; j++)
            if ((st = hf_parse_int(tok[j], r->path, r->line, "column index (consecutive from the previous block)",
                                   col + j, col + j, &c)) != HESSFIT_SUCCESS)
                goto done;
        if (col + k > cols) {
            st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %s: column %ld beyond the %ld announced", r->path, r->line, section,
                          col + k - 1, cols);
            goto done;
        }
        for (long row = 0; row < rows; row++) {
            long idx;
            int n;
            snprintf(expected, sizeof expected, "row %ld of columns %ld-%ld", row, col, col + k - 1);
            if ((st = section_line(r, section, start, expected)) != HESSFIT_SUCCESS)
                goto done;
            n = hf_split(r->buf, tok, ORCA_MAX_BLOCK_COLUMNS + 2);
            if ((st = hf_parse_int(n > 0 ? tok[0] : "", r->path, r->line, "row index", row, row, &idx)) != HESSFIT_SUCCESS)
                goto done;
            if (n != k + 1) {
                st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %s: row %ld has %d values for the %ld columns %ld-%ld", r->path,
                              r->line, section, row, n - 1, k, col, col + k - 1);
                goto done;
            }
            for (long j = 0; j < k; j++) {
                double v;
                if ((st = hf_parse_double(tok[1 + j], r->path, r->line, section, &v)) != HESSFIT_SUCCESS ||
                    (st = dbuf_push(&vals, v, r->path, r->line)) != HESSFIT_SUCCESS)
                    goto done;
            }
        }
        if (n_blocks == widths_cap) {
            size_t cap = (size_t)widths_cap;
            if ((st = hf_grow((void **)&widths, &cap, (size_t)n_blocks + 1, sizeof *widths, "column blocks")) !=
                HESSFIT_SUCCESS)
                goto done;
            widths_cap = (long)cap;
        }
        widths[n_blocks++] = k;
        col += k;
    }
    /* vals holds the blocks one after the other, each row-major rows x k: reorder */
    m->v = malloc((vals.n > 0 ? vals.n : 1) * sizeof *m->v);
    if (m->v == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %s", r->path, section);
        goto done;
    }
    {
        size_t q = 0;
        long c0 = 0;
        for (long b = 0; b < n_blocks; b++) {
            for (long row = 0; row < rows; row++)
                for (long j = 0; j < widths[b]; j++)
                    m->v[(size_t)row * (size_t)cols + (size_t)(c0 + j)] = vals.v[q++];
            c0 += widths[b];
        }
    }
    m->rows = rows;
    m->cols = cols;
    m->line = start;
done:
    free(vals.v);
    free(widths);
    return st;
}

static hessfit_status read_frequencies(hf_lines *r, int start, orca_data *d)
{
    const char *section = "$vibrational_frequencies";
    char *tok[3];
    long count;
    hessfit_status st = count_line(r, section, start, 1, 0, 3L * ORCA_MAX_ATOMS, &count);
    if (st != HESSFIT_SUCCESS)
        return st;
    for (long i = 0; i < count; i++) {
        long idx;
        double v;
        char expected[96];
        snprintf(expected, sizeof expected, "frequency %ld of %ld", i, count);
        if ((st = section_line(r, section, start, expected)) != HESSFIT_SUCCESS)
            return st;
        if (hf_split(r->buf, tok, 3) != 2)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s: expected 'index value'", r->path, r->line, section);
        if ((st = hf_parse_int(tok[0], r->path, r->line, "frequency index", i, i, &idx)) != HESSFIT_SUCCESS ||
            (st = hf_parse_double(tok[1], r->path, r->line, "frequency", &v)) != HESSFIT_SUCCESS ||
            (st = dbuf_push(&d->freqs, v, r->path, r->line)) != HESSFIT_SUCCESS)
            return st;
    }
    d->freq_line = start;
    return HESSFIT_SUCCESS;
}

static hessfit_status read_atoms(hf_lines *r, int start, orca_data *d)
{
    const char *section = "$atoms";
    char *tok[6];
    size_t cap = 0;
    long count;
    hessfit_status st = count_line(r, section, start, 1, 1, ORCA_MAX_ATOMS, &count);
    if (st != HESSFIT_SUCCESS)
        return st;
    for (long i = 0; i < count; i++) {
        double mass, x[3];
        int z;
        char expected[96];
        snprintf(expected, sizeof expected, "atom %ld of %ld", i + 1, count);
        if ((st = section_line(r, section, start, expected)) != HESSFIT_SUCCESS)
            return st;
        if (hf_split(r->buf, tok, 6) != 5)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: $atoms: expected 'symbol mass x y z'", r->path, r->line);
        if (hessfit_element_lookup(tok[0], &z) != HESSFIT_SUCCESS)
            return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: $atoms: unknown element '%.20s'", r->path, r->line,
                            tok[0]);
        if ((st = hf_parse_double(tok[1], r->path, r->line, "mass", &mass)) != HESSFIT_SUCCESS)
            return st;
        if (mass <= 0.0)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: $atoms: mass %g is not positive", r->path, r->line, mass);
        for (int k = 0; k < 3; k++)
            if ((st = hf_parse_double(tok[2 + k], r->path, r->line, "coordinate", &x[k])) != HESSFIT_SUCCESS ||
                (st = dbuf_push(&d->xyz, x[k], r->path, r->line)) != HESSFIT_SUCCESS)
                return st;
        if ((size_t)d->n_atoms == cap &&
            (st = hf_grow((void **)&d->z, &cap, (size_t)d->n_atoms + 1, sizeof *d->z, "atoms")) != HESSFIT_SUCCESS)
            return st;
        d->z[d->n_atoms++] = z;
    }
    d->atoms_line = start;
    return HESSFIT_SUCCESS;
}

static hessfit_status orca_parse(hf_lines *r, orca_data *d)
{
    char *tok[4];
    int eof, skipping = 0;
    hessfit_status st;

    /* the file starts with $orca_hessian_file (after blank and comment lines) */
    do {
        if ((st = hf_lines_next(r, &eof)) != HESSFIT_SUCCESS)
            return st;
        if (eof)
            return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s: empty file (no $orca_hessian_file)", r->path);
    } while (is_comment_or_blank(r->buf));
    if (hf_split(r->buf, tok, 4) != 1 || strcmp(tok[0], "$orca_hessian_file") != 0)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: not an ORCA .hess file: the first line is not $orca_hessian_file",
                        r->path, r->line);

    for (;;) {
        const int start = (st = hf_lines_next(r, &eof)) == HESSFIT_SUCCESS ? r->line : 0;
        const char *name;
        if (st != HESSFIT_SUCCESS)
            return st;
        if (eof)
            return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends without $end", r->path, r->line - 1);
        if (is_comment_or_blank(r->buf))
            continue;
        if (!is_section_line(r->buf)) {
            if (skipping)
                continue;
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: unexpected line '%.40s' after the data of the section above",
                            r->path, r->line, r->buf);
        }
        skipping = 0;
        if (hf_split(r->buf, tok, 4) != 1)
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: a section title must stand alone on its line", r->path, r->line);
        name = tok[0]; /* points into r->buf: valid only until the next line is read */
        if (strcmp(name, "$end") == 0)
            return HESSFIT_SUCCESS;
        if (strcmp(name, "$orca_hessian_file") == 0 ||
            (strcmp(name, "$hessian") == 0 && d->hessian.line != 0) ||
            (strcmp(name, "$normal_modes") == 0 && d->modes.line != 0) ||
            (strcmp(name, "$vibrational_frequencies") == 0 && d->freq_line != 0) ||
            (strcmp(name, "$atoms") == 0 && d->atoms_line != 0) ||
            (strcmp(name, "$act_energy") == 0 && d->energy_line != 0) ||
            (strcmp(name, "$multiplicity") == 0 && d->multiplicity_line != 0))
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: %s appears a second time", r->path, r->line, name);

        if (strcmp(name, "$hessian") == 0) {
            long n;
            if ((st = count_line(r, "$hessian", start, 1, 1, 3L * ORCA_MAX_ATOMS, &n)) != HESSFIT_SUCCESS ||
                (st = read_column_blocks(r, "$hessian", start, n, n, &d->hessian)) != HESSFIT_SUCCESS)
                return st;
        } else if (strcmp(name, "$normal_modes") == 0) {
            long n[2];
            if ((st = count_line(r, "$normal_modes", start, 2, 0, 3L * ORCA_MAX_ATOMS, n)) != HESSFIT_SUCCESS ||
                (st = read_column_blocks(r, "$normal_modes", start, n[0], n[1], &d->modes)) != HESSFIT_SUCCESS)
                return st;
        } else if (strcmp(name, "$vibrational_frequencies") == 0) {
            if ((st = read_frequencies(r, start, d)) != HESSFIT_SUCCESS)
                return st;
        } else if (strcmp(name, "$atoms") == 0) {
            if ((st = read_atoms(r, start, d)) != HESSFIT_SUCCESS)
                return st;
        } else if (strcmp(name, "$act_energy") == 0) {
            if ((st = section_line(r, "$act_energy", start, "the energy")) != HESSFIT_SUCCESS)
                return st;
            if (hf_split(r->buf, tok, 4) != 1)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: $act_energy: expected one value", r->path, r->line);
            if ((st = hf_parse_double(tok[0], r->path, r->line, "energy", &d->energy)) != HESSFIT_SUCCESS)
                return st;
            d->energy_line = start;
        } else if (strcmp(name, "$multiplicity") == 0) {
            if ((st = count_line(r, "$multiplicity", start, 1, 1, 100000, &d->multiplicity)) != HESSFIT_SUCCESS)
                return st;
            d->multiplicity_line = start;
        } else {
            skipping = 1; /* a section the molecule has no place for */
        }
    }
}

/* See the file comment. The molecule gets the $atoms elements and coordinates (Bohr -> Angstrom),
 * the $hessian, all $vibrational_frequencies as printed (3N, translations and rotations as 0) with
 * the $normal_modes columns as rows of mol->modes, $act_energy unless it is exactly 0 (ORCA's
 * placeholder) and $multiplicity. .hess files hold no title or charge. */
hessfit_status hessfit_orca_hess_read(const char *path, hessfit_molecule *mol)
{
    hf_lines r;
    orca_data d;
    hessfit_molecule m;
    hessfit_status st;
    size_t n3;

    if (mol == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_orca_hess_read: %s is NULL", mol == NULL ? "mol" : "path");
    memset(mol, 0, sizeof *mol);
    memset(&d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    st = orca_parse(&r, &d);
    hf_lines_close(&r);
    if (st != HESSFIT_SUCCESS)
        goto fail;

    if (d.atoms_line == 0) {
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no $atoms section", path);
        goto fail;
    }
    if (d.hessian.line == 0) {
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no $hessian section", path);
        goto fail;
    }
    n3 = 3 * (size_t)d.n_atoms;
    if ((size_t)d.hessian.rows != n3) {
        st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: $hessian is %ld x %ld, but $atoms (line %d) has %d atoms (%zu x %zu)",
                      path, d.hessian.line, d.hessian.rows, d.hessian.cols, d.atoms_line, d.n_atoms, n3, n3);
        goto fail;
    }
    if (d.freq_line != 0 && d.freqs.n != n3) {
        st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: $vibrational_frequencies has %zu values for %d atoms (expected %zu)", path,
                      d.freq_line, d.freqs.n, d.n_atoms, n3);
        goto fail;
    }
    if (d.modes.line != 0) {
        if (d.freq_line == 0) {
            st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: $normal_modes without $vibrational_frequencies", path, d.modes.line);
            goto fail;
        }
        if ((size_t)d.modes.rows != n3 || (size_t)d.modes.cols != d.freqs.n) {
            st = hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: $normal_modes is %ld x %ld; %d atoms and %zu frequencies need %zu x %zu",
                          path, d.modes.line, d.modes.rows, d.modes.cols, d.n_atoms, d.freqs.n, n3, d.freqs.n);
            goto fail;
        }
    }

    m.n_atoms = d.n_atoms;
    m.atomic_numbers = d.z;
    d.z = NULL;
    m.coords = d.xyz.v;
    d.xyz.v = NULL;
    for (size_t k = 0; k < n3; k++)
        m.coords[k] *= HESSFIT_BOHR_TO_ANGSTROM;
    m.hessian = d.hessian.v;
    d.hessian.v = NULL;
    /* ORCA's numerical Hessians are symmetric only to their differencing error: accept an
     * asymmetry up to HF_ORCA_SYMMETRY_TOLERANCE of the largest element and symmetrise,
     * (H + H^T) / 2; a larger one is an error naming the element. */
    {
        double hmax = 0.0;
        for (size_t k = 0; k < n3 * n3; k++)
            hmax = fmax(hmax, fabs(m.hessian[k]));
        for (size_t i = 0; i < n3; i++)
            for (size_t j = 0; j < i; j++) {
                double a = m.hessian[i * n3 + j], b = m.hessian[j * n3 + i];
                if (fabs(a - b) > HF_ORCA_SYMMETRY_TOLERANCE * hmax) {
                    st = hessfit_error(HESSFIT_ERROR_SHAPE, "%s:%d: $hessian is not symmetric: element (%zu, %zu) = %.10g but "
                                  "(%zu, %zu) = %.10g", path, d.hessian.line, i, j, a, j, i, b);
                    goto fail;
                }
                m.hessian[i * n3 + j] = m.hessian[j * n3 + i] = 0.5 * (a + b);
            }
    }
    m.name = hf_strdup("");
    m.source = hf_strdup(path);
    if (m.name == NULL || m.source == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
        goto fail;
    }
    if (d.freq_line != 0) {
        m.n_modes = (int)d.freqs.n;
        m.frequencies = d.freqs.v;
        d.freqs.v = NULL;
    }
    if (d.modes.line != 0) {
        const size_t nm = (size_t)m.n_modes;
        m.modes = malloc((nm > 0 ? nm : 1) * n3 * sizeof *m.modes);
        if (m.modes == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for the normal modes", path);
            goto fail;
        }
        for (size_t k = 0; k < nm; k++) /* column k of the file = mode k */
            for (size_t row = 0; row < n3; row++)
                m.modes[k * n3 + row] = d.modes.v[row * nm + k];
    }
    if (d.energy_line != 0 && d.energy != 0.0) {
        m.has_energy = 1;
        m.energy = d.energy;
    }
    if (d.multiplicity_line != 0)
        m.multiplicity = (int)d.multiplicity;
    free(d.modes.v);
    *mol = m;
    return HESSFIT_SUCCESS;

fail:
    free(d.hessian.v);
    free(d.modes.v);
    free(d.freqs.v);
    free(d.z);
    free(d.xyz.v);
    hessfit_molecule_free(&m);
    return st;
}
