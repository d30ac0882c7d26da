/*
 * MacroModel .mmo: what MacroModel printed besides the structures (hessfit_mmo_energies.h): every
 * row of the term tables with its energies and the energy breakdown. The layout is the one
 * hf_read_mmo.c describes; the columns of each table (rh-enamide set, BatchMin 12.6):
 *   Stretch           i j  k r0 r  E  Select Alts Comment.. FFline
 *   Bend              i j k  KBnd KSBnd th0 th  EBnd ESBnd  Select ...
 *   Bend-bend         centre i1 k1 i2 k2  KBBnd Ideal1 Actual1 Ideal2 Actual2  EBBnd
 *   Proper Torsion    i j k l  V1 V2 V3 phi  E  Select ...
 *   Improper torsion  the same columns (a sub-table of the torsions, announced on its own line)
 *   Torsion (cross)   i j k l  K(t-s) K(t-b) K(t-t) phi  E   (only rows with a nonzero constant)
 *   Nonbonded         i j  CONST1 CONST2 CHARGE* DISTANCE  EVDW ECHARGE  (CONST2 may read ".9721E-01")
 * and the breakdown "  Stretch:   97.8154 kJ/mol ( ... kcal/mol )" between the banner and the
 * Connection Table, which closes the structure. A cross-term row with a nonzero K(t-b) or K(t-t) is
 * HESSFIT_ERROR_UNSUPPORTED (its energy would not be torsion-stretch alone).
 */
#include "hessfit_mmo_energies.h"
#include "hf_lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MMOE_MAX_TOKENS 64

typedef struct table_info {
    const char *words; /* the words between the count and "interactions present" */
    int n_atoms, n_const, n_energies, min_tokens;
} table_info;

static const table_info tables[HESSFIT_MMO_NUM_TABLES] = {
    [HESSFIT_MMO_STRETCH] = {"Stretch", 2, 3, 1, 9},
    [HESSFIT_MMO_BEND] = {"Bend", 3, 4, 2, 12},
    [HESSFIT_MMO_BEND_BEND] = {"Bend-bend", 5, 4, 1, 11},
    [HESSFIT_MMO_TORSION] = {"Proper Torsion", 4, 4, 1, 12},
    [HESSFIT_MMO_IMPROPER] = {"Improper torsion", 4, 4, 1, 12},
    [HESSFIT_MMO_TORSION_CROSS] = {"Torsion", 4, 4, 1, 9},
    [HESSFIT_MMO_NONBONDED] = {"Nonbonded", 2, 4, 2, 8},
};

static const char *const total_label[HESSFIT_MMO_NUM_TOTALS] = {
    "Stretch", "Bend", "Proper torsion", "Out-of-plane", "Stretch-bend", "Bend-bend", "Torsion-stretch",
    "Van der Waals", "Electrostatic", "Hydrogen bonding", "Total energy"};

const char *hessfit_mmo_total_name(hessfit_mmo_total total)
{
    return total >= 0 && total < HESSFIT_MMO_NUM_TOTALS ? total_label[total] : "unknown";
}

void hessfit_mmo_energies_list_free(hessfit_mmo_energies_list *list)
{
    if (list == NULL)
        return;
    for (int i = 0; i < list->n; i++)
        free(list->items[i].rows);
    free(list->items);
    memset(list, 0, sizeof *list);
}

/* The structure being read. */
typedef struct mmoe_state {
    hessfit_mmo_energies cur;
    size_t cap_rows;
    int started;
    int table;                       /* -1 outside a table */
    int announced[HESSFIT_MMO_NUM_TABLES], announced_line[HESSFIT_MMO_NUM_TABLES], rows[HESSFIT_MMO_NUM_TABLES];
    unsigned totals_seen;
} mmoe_state;

static int all_digits(const char *t)
{
    if (*t == '\0')
        return 0;
    for (; *t; t++)
        if (*t < '0' || *t > '9')
            return 0;
    return 1;
}

/* "... <count> <words> interactions present": the table (-1 for another kind, -2 not a header). */
static int table_header(char *line, int *count)
{
    char *tok[MMOE_MAX_TOKENS];
    char words[64] = "";
    int n, at = -1, first;
    if (strstr(line, "interactions present") == NULL)
        return -2;
    n = hf_split(line, tok, MMOE_MAX_TOKENS);
    for (int k = 0; k + 1 < n && k + 1 < MMOE_MAX_TOKENS; k++)
        if (strcmp(tok[k], "interactions") == 0 && strcmp(tok[k + 1], "present") == 0)
            at = k;
    if (at < 1)
        return -2;
    for (first = at; first > 0 && !all_digits(tok[first - 1]); first--)
        ;
    if (first == 0)
        return -2;
    *count = atoi(tok[first - 1]);
    for (int k = first; k < at; k++) {
        if (strlen(words) + strlen(tok[k]) + 2 > sizeof words)
            return -1;
        if (k > first)
            strcat(words, " ");
        strcat(words, tok[k]);
    }
    for (int t = 0; t < HESSFIT_MMO_NUM_TABLES; t++)
        if (strcmp(words, tables[t].words) == 0)
            return t;
    return -1;
}

static hessfit_status table_row(mmoe_state *s, const char *path, int lineno, char *line)
{
    const table_info *info = &tables[s->table];
    char *tok[MMOE_MAX_TOKENS];
    hessfit_mmo_row row;
    hessfit_status st;
    int n = hf_split(line, tok, MMOE_MAX_TOKENS), k = 0;
    if (n == 0 || !all_digits(tok[0]) || (n == 1 && strcmp(tok[0], "1") == 0))
        return HESSFIT_SUCCESS; /* column headers, dashes, page breaks */
    if (n < info->min_tokens || n > MMOE_MAX_TOKENS)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s row with %d fields, expected at least %d", path, lineno,
                             info->words, n, info->min_tokens);
    memset(&row, 0, sizeof row);
    row.table = (hessfit_mmo_table)s->table;
    row.line = lineno;
    for (int a = 0; a < 5; a++)
        row.atoms[a] = -1;
    for (int a = 0; a < info->n_atoms; a++, k++) {
        long v;
        if ((st = hf_parse_int(tok[k], path, lineno, "atom number", 1, 100000000, &v)) != HESSFIT_SUCCESS)
            return st;
        row.atoms[a] = (int)v - 1;
    }
    /* the constants, then (bend-bend: after Actual2) the energies */
    for (int c = 0; c < info->n_const; c++, k++)
        if ((st = hf_parse_double(tok[k], path, lineno, "printed constant", &row.c[c])) != HESSFIT_SUCCESS)
            return st;
    if (s->table == HESSFIT_MMO_BEND_BEND)
        k++; /* Actual2 */
    for (int e = 0; e < info->n_energies; e++, k++)
        if ((st = hf_parse_double(tok[k], path, lineno, "printed energy", &row.e[e])) != HESSFIT_SUCCESS)
            return st;
    if (s->table == HESSFIT_MMO_TORSION_CROSS && (row.c[1] != 0.0 || row.c[2] != 0.0))
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                             "%s:%d: cross-term row with K(t-b) %g, K(t-t) %g: only torsion-stretch is read", path,
                             lineno, row.c[1], row.c[2]);
    if ((st = hf_grow((void **)&s->cur.rows, &s->cap_rows, (size_t)s->cur.n_rows + 1, sizeof row, "printed rows")) !=
        HESSFIT_SUCCESS)
        return st;
    s->cur.rows[s->cur.n_rows++] = row;
    s->rows[s->table]++;
    return HESSFIT_SUCCESS;
}

/* "  Van der Waals:   -18.1068 kJ/mol (...)": 1 if it is a breakdown line (value stored). */
static hessfit_status breakdown_line(mmoe_state *s, const char *path, int lineno, const char *line, int *is)
{
    const char *p = hf_skip_space(line);
    *is = 0;
    for (int t = 0; t < HESSFIT_MMO_NUM_TOTALS; t++) {
        size_t n = strlen(total_label[t]);
        char value[64];
        if (strncmp(p, total_label[t], n) != 0 || p[n] != ':' || strstr(p, "kJ/mol") == NULL)
            continue;
        if (sscanf(p + n + 1, "%63s", value) != 1)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s:' without a value", path, lineno, total_label[t]);
        *is = 1;
        s->totals_seen |= 1u << t;
        return hf_parse_double(value, path, lineno, total_label[t], &s->cur.totals[t]);
    }
    return HESSFIT_SUCCESS;
}

/* The Connection Table closes the structure: counts and breakdown checked, moved into list. */
static hessfit_status finish(mmoe_state *s, const char *path, int lineno, hessfit_mmo_energies_list *list, size_t *cap)
{
    hessfit_status st;
    for (int t = 0; t < HESSFIT_MMO_NUM_TABLES; t++) {
        if (s->announced_line[t] == 0)
            continue;
        if (t == HESSFIT_MMO_TORSION_CROSS ? s->rows[t] > s->announced[t] : s->rows[t] != s->announced[t])
            return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: %d %s interactions announced, %d rows read", path,
                                 s->announced_line[t], s->announced[t], tables[t].words, s->rows[t]);
    }
    for (int t = 0; t < HESSFIT_MMO_NUM_TOTALS; t++)
        if (!(s->totals_seen & (1u << t)))
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: the structure's energy breakdown has no '%s:' line", path,
                                 lineno, total_label[t]);
    if ((st = hf_grow((void **)&list->items, cap, (size_t)list->n + 1, sizeof *list->items, "structures")) !=
        HESSFIT_SUCCESS)
        return st;
    list->items[list->n++] = s->cur;
    memset(s, 0, sizeof *s);
    s->table = -1;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_mmo_energies_read(const char *path, hessfit_mmo_energies_list *list)
{
    hf_lines r;
    mmoe_state s;
    size_t cap = 0;
    int eof;
    hessfit_status st;
    if (list != NULL)
        memset(list, 0, sizeof *list);
    if (path == NULL || list == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_mmo_energies_read: %s is NULL",
                             path == NULL ? "path" : "list");
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        return st;
    memset(&s, 0, sizeof s);
    s.table = -1;
    for (;;) {
        int count = 0, t, is;
        const char *p;
        if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS || eof)
            break;
        p = hf_skip_space(r.buf);
        if (strncmp(p, "Connection Table", 16) == 0) {
            if ((st = finish(&s, path, r.line, list, &cap)) != HESSFIT_SUCCESS)
                break;
            continue;
        }
        if ((st = breakdown_line(&s, path, r.line, r.buf, &is)) != HESSFIT_SUCCESS)
            break;
        if (is)
            continue;
        if (strstr(r.buf, "interactions present") != NULL) {
            char copy[HF_LINES_MAX_LINE];
            strcpy(copy, r.buf);
            t = table_header(copy, &count);
            if (t >= 0) {
                if (!s.started) {
                    s.started = 1;
                    s.cur.line = r.line;
                }
                if (s.announced_line[t] != 0) {
                    st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: a second '%s' table before the Connection Table",
                                       path, r.line, tables[t].words);
                    break;
                }
                s.announced[t] = count;
                s.announced_line[t] = r.line;
            }
            s.table = t >= 0 ? t : -1;
            continue;
        }
        if (strncmp(p, "TIME:", 5) == 0 || strncmp(p, "Time:", 5) == 0 || strncmp(p, "**", 2) == 0 ||
            strncmp(p, "Energy Equations", 16) == 0) {
            s.table = -1;
            continue;
        }
        if (s.table >= 0 && (st = table_row(&s, path, r.line, r.buf)) != HESSFIT_SUCCESS)
            break;
    }
    if (st == HESSFIT_SUCCESS && s.started)
        st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends before the Connection Table of structure %d",
                           path, r.line, list->n + 1);
    if (st == HESSFIT_SUCCESS && list->n == 0)
        st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s: no MacroModel structure output in the file", path);
    hf_lines_close(&r);
    if (st != HESSFIT_SUCCESS) {
        free(s.cur.rows);
        hessfit_mmo_energies_list_free(list);
    }
    return st;
}
