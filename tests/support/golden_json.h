#ifndef HESSFIT_GOLDEN_JSON_H_
#define HESSFIT_GOLDEN_JSON_H_
/* A small JSON reader for the tests' golden files (tests/data/goldens/): the whole document as a
 * tree. Numbers are read with strtod (correctly rounded, so q2mm's 17-digit values come back
 * bit for bit). Any syntax error is fatal for the test (message with the byte offset). */
#include <stddef.h>

typedef enum gj_type { GJ_NULL, GJ_BOOL, GJ_NUMBER, GJ_STRING, GJ_ARRAY, GJ_OBJECT } gj_type;

typedef struct gj_value {
    gj_type type;
    double number;            /* GJ_NUMBER; GJ_BOOL 0/1 */
    char *string;             /* GJ_STRING */
    size_t n;                 /* GJ_ARRAY / GJ_OBJECT: number of items */
    struct gj_value *items;   /* n values */
    char **keys;              /* GJ_OBJECT: n keys */
} gj_value;

/* Parse the file at path (exits the test with a message on any error); free with gj_free. */
gj_value *gj_read_file(const char *path);
void gj_free(gj_value *v);

/* Object member by key (NULL if absent or v is not an object). */
const gj_value *gj_get(const gj_value *v, const char *key);
/* The same, but a missing key or a wrong type is fatal (what names it in the message). */
const gj_value *gj_object(const gj_value *v, const char *key);
const gj_value *gj_array(const gj_value *v, const char *key);
double gj_number(const gj_value *v, const char *key);
const char *gj_string(const gj_value *v, const char *key);

#endif
