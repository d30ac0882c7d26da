/* The `hessfit fit` input file: "key = value" lines, checked against a table of keys. */
#include "hessfit_config.h"
#include "hf_lines.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { VALUE_PATH, VALUE_TEXT, VALUE_CHOICE, VALUE_NUMBER } value_kind;

typedef struct {
    const char *key;
    int repeatable;
    int required;
    value_kind kind;
    const char *choices; /* VALUE_CHOICE: '|'-separated */
    double min, max;     /* VALUE_NUMBER */
} key_rule;

static const key_rule rules[] = {
    {"forcefield", 0, 1, VALUE_PATH, NULL, 0, 0},
    {"structures", 1, 1, VALUE_PATH, NULL, 0, 0},
    {"hessian", 1, 0, VALUE_PATH, NULL, 0, 0},
    {"free", 1, 1, VALUE_TEXT, NULL, 0, 0},
    {"no-term", 1, 0, VALUE_TEXT, NULL, 0, 0},
    {"prefer", 1, 0, VALUE_NUMBER, NULL, 1, 1e9},
    {"objective", 0, 0, VALUE_CHOICE, "frequencies|frequencies-q2mm|eigenmatrix|hessian", 0, 0},
    {"weight", 0, 0, VALUE_NUMBER, NULL, 1e-300, 1e300},
    {"ts", 0, 0, VALUE_CHOICE, "skip|keep|replace", 0, 0},
    {"start", 0, 0, VALUE_CHOICE, "forcefield|seminario", 0, 0},
    {"optimizer", 0, 0, VALUE_CHOICE, "lbfgs|nelder-mead|sbplx|grad-simp", 0, 0},
    {"bounds", 0, 0, VALUE_CHOICE, "q2mm|none", 0, 0},
    {"max-evaluations", 0, 0, VALUE_NUMBER, NULL, 1, 1e9},
    {"max-time", 0, 0, VALUE_NUMBER, NULL, 0, 1e9},
    {"ftol", 0, 0, VALUE_NUMBER, NULL, 0, 1},
    {"output", 0, 0, VALUE_PATH, NULL, 0, 0},
};
#define N_RULES (sizeof rules / sizeof rules[0])

static const key_rule *find_rule(const char *key)
{
    for (size_t i = 0; i < N_RULES; i++)
        if (strcmp(rules[i].key, key) == 0)
            return &rules[i];
    return NULL;
}

void hf_config_free(hf_config *config)
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

static hf_status check_value(const char *path, int line, const key_rule *rule, const char *value)
{
    double v;
    hf_status st;
    if (value[0] == '\0')
        return hf_error(HF_ERROR_PARSE, "%s:%d: '%s' has no value", path, line, rule->key);
    switch (rule->kind) {
    case VALUE_CHOICE:
        if (!is_choice(value, rule->choices))
            return hf_error(HF_ERROR_PARSE, "%s:%d: %s is one of %s, not '%.60s'", path, line, rule->key,
                            rule->choices, value);
        break;
    case VALUE_NUMBER:
        if ((st = hf_parse_double(value, path, line, rule->key, &v)) != HF_SUCCESS)
            return st;
        if (v < rule->min || v > rule->max)
            return hf_error(HF_ERROR_PARSE, "%s:%d: %s = %g is outside [%g, %g]", path, line, rule->key, v, rule->min,
                            rule->max);
        break;
    default:
        break;
    }
    return HF_SUCCESS;
}

/* Add an entry; a VALUE_PATH value is resolved against dir unless absolute. */
static hf_status add_entry(hf_config *c, size_t *cap, const char *key, const char *value, int line, int is_path,
                           const char *dir)
{
    hf_config_entry e;
    hf_status st;
    size_t need = (is_path && value[0] != '/' ? strlen(dir) : 0) + strlen(value) + 1;
    if ((st = hf_grow((void **)&c->entries, cap, (size_t)c->n_entries + 1, sizeof *c->entries, "entries")) !=
        HF_SUCCESS)
        return st;
    e.key = hf_strdup(key);
    e.value = malloc(need);
    e.line = line;
    if (e.key == NULL || e.value == NULL) {
        free(e.key);
        free(e.value);
        return hf_error(HF_ERROR_OUT_OF_MEMORY, "%s:%d: no memory", c->path, line);
    }
    e.value[0] = '\0';
    if (is_path && value[0] != '/')
        strcat(e.value, dir);
    strcat(e.value, value);
    c->entries[c->n_entries++] = e;
    return HF_SUCCESS;
}

hf_status hf_config_read(const char *path, hf_config *config)
{
    hf_lines r;
    hf_config c;
    size_t cap = 0;
    char *dir = NULL;
    hf_status st;
    int eof;

    if (config == NULL || path == NULL)
        return hf_error(HF_ERROR_NULL_ARGUMENT, "hf_config_read: %s is NULL", path == NULL ? "path" : "config");
    memset(config, 0, sizeof *config);
    memset(&c, 0, sizeof c);
    if ((c.path = hf_strdup(path)) == NULL || (dir = directory_of(path)) == NULL) {
        free(c.path);
        return hf_error(HF_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    }
    if ((st = hf_lines_open(&r, path)) != HF_SUCCESS)
        goto fail_open;
    for (;;) {
        char *hash, *eq, *key, *value;
        const key_rule *rule;
        if ((st = hf_lines_next(&r, &eof)) != HF_SUCCESS)
            goto fail;
        if (eof)
            break;
        if ((hash = strchr(r.buf, '#')) != NULL)
            *hash = '\0';
        if (hf_is_blank(r.buf))
            continue;
        if ((eq = strchr(r.buf, '=')) == NULL) {
            st = hf_error(HF_ERROR_PARSE, "%s:%d: expected 'key = value', found '%.60s'", path, r.line,
                          hf_skip_space(r.buf));
            goto fail;
        }
        *eq = '\0';
        key = (char *)hf_skip_space(r.buf);
        hf_rstrip(key);
        value = (char *)hf_skip_space(eq + 1);
        hf_rstrip(value);
        if ((rule = find_rule(key)) == NULL) {
            st = hf_error(HF_ERROR_PARSE, "%s:%d: unknown key '%.40s' (see docs/fitting.md for the keys)", path, r.line,
                          key);
            goto fail;
        }
        if (!rule->repeatable && hf_config_count(&c, key) > 0) {
            st = hf_error(HF_ERROR_PARSE, "%s:%d: '%s' given a second time (first on line %d)", path, r.line, key,
                          hf_config_entry_at(&c, key, 0)->line);
            goto fail;
        }
        if ((st = check_value(path, r.line, rule, value)) != HF_SUCCESS)
            goto fail;
        if ((st = add_entry(&c, &cap, key, value, r.line, rule->kind == VALUE_PATH, dir)) != HF_SUCCESS)
            goto fail;
    }
    for (size_t i = 0; i < N_RULES; i++)
        if (rules[i].required && hf_config_count(&c, rules[i].key) == 0) {
            st = hf_error(HF_ERROR_PARSE, "%s: the required key '%s' is missing", path, rules[i].key);
            goto fail;
        }
    hf_lines_close(&r);
    free(dir);
    *config = c;
    return HF_SUCCESS;

fail:
    hf_lines_close(&r);
fail_open:
    free(dir);
    hf_config_free(&c);
    return st;
}

int hf_config_count(const hf_config *config, const char *key)
{
    int n = 0;
    for (int i = 0; i < config->n_entries; i++)
        n += strcmp(config->entries[i].key, key) == 0;
    return n;
}

const hf_config_entry *hf_config_entry_at(const hf_config *config, const char *key, int i)
{
    for (int k = 0; k < config->n_entries; k++)
        if (strcmp(config->entries[k].key, key) == 0 && i-- == 0)
            return &config->entries[k];
    return NULL;
}

const char *hf_config_get(const hf_config *config, const char *key, const char *fallback)
{
    const hf_config_entry *e = hf_config_entry_at(config, key, 0);
    return e != NULL ? e->value : fallback;
}

hf_status hf_config_number(const hf_config *config, const char *key, double min, double max, double fallback,
                           double *value)
{
    const hf_config_entry *e = hf_config_entry_at(config, key, 0);
    hf_status st;
    double v;
    if (e == NULL) {
        *value = fallback;
        return HF_SUCCESS;
    }
    if ((st = hf_parse_double(e->value, config->path, e->line, key, &v)) != HF_SUCCESS)
        return st;
    if (v < min || v > max)
        return hf_error(HF_ERROR_PARSE, "%s:%d: %s = %g is outside [%g, %g]", config->path, e->line, key, v, min, max);
    *value = v;
    return HF_SUCCESS;
}
