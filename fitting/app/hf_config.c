/* The `hessfit fit` input file: "key = value" lines, checked against a table of keys. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_config.h"
#include "hf_lines.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { VALUE_PATH, VALUE_TEXT, VALUE_CHOICE, VALUE_NUMBER } value_kind;

/* The form of a VALUE_TEXT value made of words (NULL: any text): an error naming path:line, or
 * HESSFIT_SUCCESS. */
typedef hessfit_status (*words_check)(const char *path, int line, char **word, int n);

typedef struct {
    const char *key;
    int repeatable;
    int required;
    value_kind kind;
    const char *choices; /* VALUE_CHOICE: '|'-separated */
    double min, max;     /* VALUE_NUMBER */
    words_check words;   /* VALUE_TEXT: the words' form */
    int path_word;       /* VALUE_TEXT: the word (0-based) that is a path, resolved as VALUE_PATH; -1 none */
} key_rule;

static hessfit_status check_energy(const char *path, int line, char **word, int n);
static hessfit_status check_energy_weight(const char *path, int line, char **word, int n);
static hessfit_status check_geometry(const char *path, int line, char **word, int n);
static hessfit_status check_geometry_weight(const char *path, int line, char **word, int n);
static hessfit_status check_scale14(const char *path, int line, char **word, int n);
static hessfit_status check_device(const char *path, int line, char **word, int n);

static const key_rule rules[] = {
    {"forcefield", 0, 1, VALUE_PATH, NULL, 0, 0, NULL, -1},
    {"form", 0, 0, VALUE_CHOICE, "mm3|harmonic", 0, 0, NULL, -1},
    {"nonbonded", 0, 0, VALUE_CHOICE, "on|off", 0, 0, NULL, -1},
    {"scale14", 0, 0, VALUE_TEXT, NULL, 0, 0, check_scale14, -1},
    {"combining", 0, 0, VALUE_CHOICE, "lorentz-berthelot|geometric", 0, 0, NULL, -1},
    {"structures", 1, 1, VALUE_PATH, NULL, 0, 0, NULL, -1},
    {"hessian", 1, 0, VALUE_PATH, NULL, 0, 0, NULL, -1},
    {"free", 1, 1, VALUE_TEXT, NULL, 0, 0, NULL, -1},
    {"no-term", 1, 0, VALUE_TEXT, NULL, 0, 0, NULL, -1},
    {"prefer", 1, 0, VALUE_NUMBER, NULL, 1, 1e9, NULL, -1},
    {"objective", 0, 0, VALUE_CHOICE, "frequencies|frequencies-q2mm|eigenmatrix|hessian|none", 0, 0, NULL, -1},
    {"weight", 0, 0, VALUE_NUMBER, NULL, 1e-300, 1e300, NULL, -1},
    {"ts", 0, 0, VALUE_CHOICE, "skip|keep|replace", 0, 0, NULL, -1},
    {"energy", 1, 0, VALUE_TEXT, NULL, 0, 0, check_energy, 2},
    {"energy-weight", 1, 0, VALUE_TEXT, NULL, 0, 0, check_energy_weight, -1},
    {"geometry", 1, 0, VALUE_TEXT, NULL, 0, 0, check_geometry, -1},
    {"geometry-weight", 1, 0, VALUE_TEXT, NULL, 0, 0, check_geometry_weight, -1},
    {"start", 0, 0, VALUE_CHOICE, "forcefield|seminario", 0, 0, NULL, -1},
    {"optimizer", 0, 0, VALUE_CHOICE, "lm|trf|lbfgs|slsqp|nelder-mead|sbplx|grad-simp", 0, 0, NULL, -1},
    {"bounds", 0, 0, VALUE_CHOICE, "q2mm|none", 0, 0, NULL, -1},
    {"max-evaluations", 0, 0, VALUE_NUMBER, NULL, 1, 1e9, NULL, -1},
    {"max-time", 0, 0, VALUE_NUMBER, NULL, 0, 1e9, NULL, -1},
    {"ftol", 0, 0, VALUE_NUMBER, NULL, 0, 1, NULL, -1},
    {"output", 0, 0, VALUE_PATH, NULL, 0, 0, NULL, -1},
    {"blocks", 0, 0, VALUE_NUMBER, NULL, 1, 1e6, NULL, -1},
    {"platform", 0, 0, VALUE_CHOICE, "Reference|CPU|OpenCL|CUDA", 0, 0, NULL, -1},
    {"precision", 0, 0, VALUE_CHOICE, "single|mixed|double", 0, 0, NULL, -1},
    {"device", 0, 0, VALUE_TEXT, NULL, 0, 0, check_device, -1},
};
#define N_RULES (sizeof rules / sizeof rules[0])

static const key_rule *find_rule(const char *key)
{
    for (size_t i = 0; i < N_RULES; i++)
        if (strcmp(rules[i].key, key) == 0)
            return &rules[i];
    return NULL;
}

void hessfit_config_free(hessfit_config *config)
{
    if (config == NULL)
        return;
    for (int i = 0; i < config->n_entries; i++) {
        free(config->entries[i].key);
        free(config->entries[i].value);
    }
    free(config->entries);
    free(config->path);
    memset(config, 0, sizeof *config);
}

/* "dir/" of path ("" when it has no directory part), malloc'ed. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    char *dir = malloc(n + 1);
    if (dir == NULL)
        return NULL;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return dir;
}

static int is_choice(const char *value, const char *choices)
{
    size_t n = strlen(value);
    for (const char *c = choices; *c;) {
        size_t len = strcspn(c, "|");
        if (len == n && strncmp(c, value, n) == 0)
            return 1;
        c += len;
        if (*c == '|')
            c++;
    }
    return 0;
}

/* ---- the forms of the worded keys ---------------------------------------------------------------- */

#define MAX_WORDS 8

/* Splits a copy of value (text, at least MAX_TEXT bytes) at blanks; returns the word count, or
 * MAX_WORDS + 1 when there are more. */
#define MAX_TEXT 1024
static int split_words(const char *value, char *text, char **word)
{
    int n = 0;
    char *save = NULL;
    snprintf(text, MAX_TEXT, "%s", value);
    for (char *t = strtok_r(text, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save)) {
        if (n == MAX_WORDS)
            return MAX_WORDS + 1;
        word[n++] = t;
    }
    return n;
}

/* A group name: letters, digits, '_', '-', '.', not a number (so that "energy-weight = GROUP W"
 * and "energy-weight = W" cannot be confused). */
static int is_group_name(const char *w)
{
    char *end;
    (void)strtod(w, &end);
    if (end != w && *end == '\0')
        return 0;
    for (const char *c = w; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
            return 0;
    return w[0] != '\0';
}

/* A 1-based index: digits only, 1 to 1e9. */
static int is_index(const char *w)
{
    char *end;
    long v = strtol(w, &end, 10);
    return end != w && *end == '\0' && isdigit((unsigned char)w[0]) && v >= 1 && v <= 1000000000L;
}

static hessfit_status check_weight_word(const char *path, int line, const char *key, const char *w)
{
    double v;
    hessfit_status st = hf_parse_double(w, path, line, key, &v);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (!(v >= 0.0 && v <= 1e300))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s: weight %g must be >= 0", path, line, key, v);
    return HESSFIT_SUCCESS;
}

/* energy = GROUP STRUCTURE [FILE] */
static hessfit_status check_energy(const char *path, int line, char **word, int n)
{
    if (n < 2 || n > 3 || !is_group_name(word[0]) || !is_index(word[1]))
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: energy is 'GROUP STRUCTURE [FILE]' (a group name of letters, digits, "
                        "_ - .; the structure's number from 1; the QM file holding its energy)", path, line);
    return HESSFIT_SUCCESS;
}

/* energy-weight = W | GROUP W */
static hessfit_status check_energy_weight(const char *path, int line, char **word, int n)
{
    if (n == 1)
        return check_weight_word(path, line, "energy-weight", word[0]);
    if (n == 2 && is_group_name(word[0]))
        return check_weight_word(path, line, "energy-weight", word[1]);
    return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: energy-weight is 'W' (every energy) or 'GROUP W', W per kcal/mol", path,
                    line);
}

/* geometry = all | STRUCTURE [bonds] [angles] [torsions] | STRUCTURE bond A B | STRUCTURE angle A B C |
 * STRUCTURE torsion A B C D */
static hessfit_status check_geometry(const char *path, int line, char **word, int n)
{
    static const char *const kinds[3] = {"bonds", "angles", "torsions"}, *const single[3] = {"bond", "angle", "torsion"};
    if (n == 1 && strcmp(word[0], "all") == 0)
        return HESSFIT_SUCCESS;
    if (n >= 1 && is_index(word[0])) {
        for (int k = 0; k < 3 && n >= 2; k++)
            if (strcmp(word[1], single[k]) == 0) {
                int ok = n == 2 + k + 2;
                for (int a = 2; a < n && ok; a++)
                    ok = is_index(word[a]);
                if (ok)
                    return HESSFIT_SUCCESS;
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: geometry = N %s takes %d atom numbers (from 1)", path, line,
                                single[k], k + 2);
            }
        unsigned seen = 0;
        int ok = 1;
        for (int a = 1; a < n && ok; a++) {
            int k = 0;
            while (k < 3 && strcmp(word[a], kinds[k]) != 0)
                k++;
            ok = k < 3 && !(seen & (1u << k));
            seen |= 1u << (k < 3 ? k : 0);
        }
        if (ok)
            return HESSFIT_SUCCESS;
    }
    return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: geometry is 'all', 'N' or 'N bonds angles torsions' (any of them, once "
                    "each), 'N bond A B', 'N angle A B C' or 'N torsion A B C D' (N a structure, A.. its atoms, from 1)",
                    path, line);
}

/* geometry-weight = bond W | angle W | torsion W */
/* scale14 = COULOMB LJ: the 1-4 pairs' scales, numbers in [0, 1] */
/* device = auto | N (a device index, a whole number >= 0) */
static hessfit_status check_device(const char *path, int line, char **word, int n)
{
    if (n == 1 && strcmp(word[0], "auto") == 0)
        return HESSFIT_SUCCESS;
    char *end = NULL;
    const long v = n == 1 ? strtol(word[0], &end, 10) : -1;
    if (n != 1 || end == word[0] || *end != '\0' || v < 0 || v > 1000000)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: device is auto or a device index (0, 1, ...), not '%.60s'", path,
                             line, n >= 1 ? word[0] : "");
    return HESSFIT_SUCCESS;
}

static hessfit_status check_scale14(const char *path, int line, char **word, int n)
{
    if (n != 2)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: scale14 is 'COULOMB LJ', two numbers in [0, 1] (AMBER: "
                                                  "0.8333333333 0.5)", path, line);
    for (int k = 0; k < 2; k++) {
        double v;
        hessfit_status st = hf_parse_double(word[k], path, line, "scale14", &v);
        if (st != HESSFIT_SUCCESS)
            return st;
        if (!(v >= 0.0 && v <= 1.0))
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: scale14: %s scale %g is not in [0, 1]", path, line,
                                 k == 0 ? "Coulomb" : "LJ", v);
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status check_geometry_weight(const char *path, int line, char **word, int n)
{
    if (n == 2 && (strcmp(word[0], "bond") == 0 || strcmp(word[0], "angle") == 0 || strcmp(word[0], "torsion") == 0))
        return check_weight_word(path, line, "geometry-weight", word[1]);
    return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: geometry-weight is 'bond W' (per Angstrom), 'angle W' or 'torsion W' (per "
                    "degree)", path, line);
}

static hessfit_status check_value(const char *path, int line, const key_rule *rule, const char *value)
{
    double v;
    hessfit_status st;
    if (value[0] == '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s' has no value", path, line, rule->key);
    switch (rule->kind) {
    case VALUE_CHOICE:
        if (!is_choice(value, rule->choices))
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s is one of %s, not '%.60s'", path, line, rule->key,
                            rule->choices, value);
        break;
    case VALUE_NUMBER:
        if ((st = hf_parse_double(value, path, line, rule->key, &v)) != HESSFIT_SUCCESS)
            return st;
        if (v < rule->min || v > rule->max)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s = %g is outside [%g, %g]", path, line, rule->key, v, rule->min,
                            rule->max);
        break;
    case VALUE_TEXT:
        if (rule->words != NULL) {
            char text[MAX_TEXT], *word[MAX_WORDS];
            if (strlen(value) >= MAX_TEXT)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s: the value is longer than %d characters", path, line,
                                rule->key, MAX_TEXT - 1);
            const int n = split_words(value, text, word);
            if (n > MAX_WORDS)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s: more than %d words", path, line, rule->key, MAX_WORDS);
            return rule->words(path, line, word, n);
        }
        break;
    default:
        break;
    }
    return HESSFIT_SUCCESS;
}

/* Add an entry; a VALUE_PATH value is resolved against dir unless absolute, and so is word
 * path_word (>= 0) of a worded value (checked: at most MAX_TEXT characters), whose words are then
 * joined by single blanks. */
static hessfit_status add_entry(hessfit_config *c, size_t *cap, const char *key, const char *value, int line, int is_path,
                           int path_word, const char *dir)
{
    hessfit_config_entry e;
    hessfit_status st;
    char joined[2 * MAX_TEXT + 4096];
    if (path_word >= 0) {
        char text[MAX_TEXT], *word[MAX_WORDS];
        const int n = split_words(value, text, word);
        size_t at = 0;
        joined[0] = '\0';
        for (int w = 0; w < n && w <= MAX_WORDS - 1; w++) {
            const char *prefix = w == path_word && word[w][0] != '/' ? dir : "";
            at += (size_t)snprintf(joined + at, sizeof joined - at, "%s%s%s", w > 0 ? " " : "", prefix, word[w]);
            if (at >= sizeof joined)
                return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s: the value is too long", c->path, line, key);
        }
        value = joined;
    }
    size_t need = (is_path && value[0] != '/' ? strlen(dir) : 0) + strlen(value) + 1;
    if ((st = hf_grow((void **)&c->entries, cap, (size_t)c->n_entries + 1, sizeof *c->entries, "entries")) !=
        HESSFIT_SUCCESS)
        return st;
    e.key = hf_strdup(key);
    e.value = malloc(need);
    e.line = line;
    if (e.key == NULL || e.value == NULL) {
        free(e.key);
        free(e.value);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory", c->path, line);
    }
    e.value[0] = '\0';
    if (is_path && value[0] != '/')
        strcat(e.value, dir);
    strcat(e.value, value);
    c->entries[c->n_entries++] = e;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_config_read(const char *path, hessfit_config *config)
{
    hf_lines r;
    hessfit_config c;
    size_t cap = 0;
    char *dir = NULL;
    hessfit_status st;
    int eof;

    if (config == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_config_read: %s is NULL", path == NULL ? "path" : "config");
    memset(config, 0, sizeof *config);
    memset(&c, 0, sizeof c);
    if ((c.path = hf_strdup(path)) == NULL || (dir = directory_of(path)) == NULL) {
        free(c.path);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    }
    if ((st = hf_lines_open(&r, path)) != HESSFIT_SUCCESS)
        goto fail_open;
    for (;;) {
        char *hash, *eq, *key, *value;
        const key_rule *rule;
        if ((st = hf_lines_next(&r, &eof)) != HESSFIT_SUCCESS)
            goto fail;
        if (eof)
            break;
        if ((hash = strchr(r.buf, '#')) != NULL)
            *hash = '\0';
        if (hf_is_blank(r.buf))
            continue;
        if ((eq = strchr(r.buf, '=')) == NULL) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: expected 'key = value', found '%.60s'", path, r.line,
                          hf_skip_space(r.buf));
            goto fail;
        }
        *eq = '\0';
        key = (char *)hf_skip_space(r.buf);
        hf_rstrip(key);
        value = (char *)hf_skip_space(eq + 1);
        hf_rstrip(value);
        if ((rule = find_rule(key)) == NULL) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unknown key '%.40s' (see docs/fitting.md for the keys)", path, r.line,
                          key);
            goto fail;
        }
        if (!rule->repeatable && hessfit_config_count(&c, key) > 0) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s' given a second time (first on line %d)", path, r.line, key,
                          hessfit_config_entry_at(&c, key, 0)->line);
            goto fail;
        }
        if ((st = check_value(path, r.line, rule, value)) != HESSFIT_SUCCESS)
            goto fail;
        if ((st = add_entry(&c, &cap, key, value, r.line, rule->kind == VALUE_PATH, rule->path_word, dir)) !=
            HESSFIT_SUCCESS)
            goto fail;
    }
    for (size_t i = 0; i < N_RULES; i++)
        if (rules[i].required && hessfit_config_count(&c, rules[i].key) == 0) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s: the required key '%s' is missing", path, rules[i].key);
            goto fail;
        }
    hf_lines_close(&r);
    free(dir);
    *config = c;
    return HESSFIT_SUCCESS;

fail:
    hf_lines_close(&r);
fail_open:
    free(dir);
    hessfit_config_free(&c);
    return st;
}

int hessfit_config_count(const hessfit_config *config, const char *key)
{
    int n = 0;
    for (int i = 0; i < config->n_entries; i++)
        n += strcmp(config->entries[i].key, key) == 0;
    return n;
}

const hessfit_config_entry *hessfit_config_entry_at(const hessfit_config *config, const char *key, int i)
{
    for (int k = 0; k < config->n_entries; k++)
        if (strcmp(config->entries[k].key, key) == 0 && i-- == 0)
            return &config->entries[k];
    return NULL;
}

const char *hessfit_config_get(const hessfit_config *config, const char *key, const char *fallback)
{
    const hessfit_config_entry *e = hessfit_config_entry_at(config, key, 0);
    return e != NULL ? e->value : fallback;
}

hessfit_status hessfit_config_number(const hessfit_config *config, const char *key, double min, double max, double fallback,
                           double *value)
{
    const hessfit_config_entry *e = hessfit_config_entry_at(config, key, 0);
    hessfit_status st;
    double v;
    if (e == NULL) {
        *value = fallback;
        return HESSFIT_SUCCESS;
    }
    if ((st = hf_parse_double(e->value, config->path, e->line, key, &v)) != HESSFIT_SUCCESS)
        return st;
    if (v < min || v > max)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s = %g is outside [%g, %g]", config->path, e->line, key, v, min, max);
    *value = v;
    return HESSFIT_SUCCESS;
}
