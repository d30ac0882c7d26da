/* The tests' JSON reader (golden_json.h): recursive descent over the whole file in memory. */
#include "golden_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *path;
    const char *text;
    size_t pos, len;
} parser;

static void fail(const parser *p, const char *what)
{
    fprintf(stderr, "%s: JSON error at byte %zu: %s\n", p->path, p->pos, what);
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *q = calloc(n ? n : 1, size);
    if (q == NULL) {
        fprintf(stderr, "golden_json: out of memory\n");
        exit(1);
    }
    return q;
}

static void skip_space(parser *p)
{
    while (p->pos < p->len && strchr(" \t\r\n", p->text[p->pos]) != NULL)
        p->pos++;
}

static int peek(parser *p)
{
    skip_space(p);
    return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

static void expect(parser *p, char c)
{
    if (peek(p) != c) {
        char msg[32];
        snprintf(msg, sizeof msg, "expected '%c'", c);
        fail(p, msg);
    }
    p->pos++;
}

/* A string; escapes \" \\ \/ \b \f \n \r \t kept simple, \uXXXX copied as '?' (goldens carry
 * such escapes only in descriptive metadata). */
static char *parse_string(parser *p)
{
    size_t cap = 16, n = 0;
    char *s = xcalloc(cap, 1);
    expect(p, '"');
    for (;;) {
        char c;
        if (p->pos >= p->len)
            fail(p, "unterminated string");
        c = p->text[p->pos++];
        if (c == '"')
            break;
        if (c == '\\') {
            if (p->pos >= p->len)
                fail(p, "unterminated escape");
            c = p->text[p->pos++];
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u':
                if (p->pos + 4 > p->len)
                    fail(p, "short \\u escape");
                p->pos += 4;
                c = '?';
                break;
            case '"': case '\\': case '/': break;
            default: fail(p, "bad escape");
            }
        }
        if (n + 2 > cap) {
            char *t;
            cap *= 2;
            t = realloc(s, cap);
            if (t == NULL)
                fail(p, "out of memory");
            s = t;
        }
        s[n++] = c;
    }
    s[n] = '\0';
    return s;
}

static void parse_value(parser *p, gj_value *v);

/* Append one item to an array/object being built (grows by doubling). */
static gj_value *push_item(gj_value *v, size_t *cap, int with_key)
{
    if (v->n == *cap) {
        gj_value *items;
        *cap = *cap ? 2 * *cap : 8;
        items = realloc(v->items, *cap * sizeof *items);
        if (items == NULL) {
            fprintf(stderr, "golden_json: out of memory\n");
            exit(1);
        }
        v->items = items;
        if (with_key) {
            char **keys = realloc(v->keys, *cap * sizeof *keys);
            if (keys == NULL) {
                fprintf(stderr, "golden_json: out of memory\n");
                exit(1);
            }
            v->keys = keys;
        }
    }
    memset(&v->items[v->n], 0, sizeof v->items[v->n]);
    return &v->items[v->n++];
}

static void parse_value(parser *p, gj_value *v)
{
    int c = peek(p);
    size_t cap = 0;
    memset(v, 0, sizeof *v);
    if (c == '{') {
        v->type = GJ_OBJECT;
        p->pos++;
        if (peek(p) == '}') {
            p->pos++;
            return;
        }
        for (;;) {
            char *key = parse_string(p);
            gj_value *item;
            expect(p, ':');
            item = push_item(v, &cap, 1);
            v->keys[v->n - 1] = key;
            parse_value(p, item);
            if (peek(p) == ',') {
                p->pos++;
                continue;
            }
            expect(p, '}');
            return;
        }
    }
    if (c == '[') {
        v->type = GJ_ARRAY;
        p->pos++;
        if (peek(p) == ']') {
            p->pos++;
            return;
        }
        for (;;) {
            parse_value(p, push_item(v, &cap, 0));
            if (peek(p) == ',') {
                p->pos++;
                continue;
            }
            expect(p, ']');
            return;
        }
    }
    if (c == '"') {
        v->type = GJ_STRING;
        v->string = parse_string(p);
        return;
    }
    if (p->pos + 4 <= p->len && strncmp(p->text + p->pos, "null", 4) == 0) {
        v->type = GJ_NULL;
        p->pos += 4;
        return;
    }
    if (p->pos + 4 <= p->len && strncmp(p->text + p->pos, "true", 4) == 0) {
        v->type = GJ_BOOL;
        v->number = 1;
        p->pos += 4;
        return;
    }
    if (p->pos + 5 <= p->len && strncmp(p->text + p->pos, "false", 5) == 0) {
        v->type = GJ_BOOL;
        p->pos += 5;
        return;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        v->type = GJ_NUMBER;
        v->number = strtod(p->text + p->pos, &end);
        if (end == p->text + p->pos)
            fail(p, "bad number");
        p->pos = (size_t)(end - p->text);
        return;
    }
    fail(p, "unexpected character");
}

gj_value *gj_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    parser p;
    char *text;
    long size;
    gj_value *root;
    if (f == NULL) {
        fprintf(stderr, "%s: cannot open\n", path);
        exit(1);
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "%s: cannot size\n", path);
        exit(1);
    }
    text = xcalloc((size_t)size + 1, 1);
    if (fread(text, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: short read\n", path);
        exit(1);
    }
    fclose(f);
    p.path = path;
    p.text = text;
    p.pos = 0;
    p.len = (size_t)size;
    root = xcalloc(1, sizeof *root);
    parse_value(&p, root);
    if (peek(&p) != -1)
        fail(&p, "trailing data");
    free(text);
    return root;
}

static void free_contents(gj_value *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_contents(&v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

void gj_free(gj_value *v)
{
    if (v == NULL)
        return;
    free_contents(v);
    free(v);
}

const gj_value *gj_get(const gj_value *v, const char *key)
{
    if (v == NULL || v->type != GJ_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

static const gj_value *typed(const gj_value *v, const char *key, gj_type type, const char *type_name)
{
    const gj_value *m = gj_get(v, key);
    if (m == NULL || m->type != type) {
        fprintf(stderr, "golden JSON: member '%s' missing or not %s\n", key, type_name);
        exit(1);
    }
    return m;
}

const gj_value *gj_object(const gj_value *v, const char *key)
{
    return typed(v, key, GJ_OBJECT, "an object");
}

const gj_value *gj_array(const gj_value *v, const char *key)
{
    return typed(v, key, GJ_ARRAY, "an array");
}

double gj_number(const gj_value *v, const char *key)
{
    return typed(v, key, GJ_NUMBER, "a number")->number;
}

const char *gj_string(const gj_value *v, const char *key)
{
    return typed(v, key, GJ_STRING, "a string")->string;
}
