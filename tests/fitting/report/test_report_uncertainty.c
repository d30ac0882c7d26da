/* The uncertainties' text section and JSON object (hessfit_report_uncertainty_text / _json) on a
 * fixed input: three parameters, one of them in a null direction, one correlated pair. The text is
 * compared whole; the JSON is read back (tests/support/golden_json) and every value checked. */
#include "golden_json.h"
#include "hessfit_report.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const hessfit_uncertainty *u;
    const char *const *names;
    int json;
} writer_input;

static hessfit_status write_it(hessfit_atomic_file *out, void *context)
{
    const writer_input *w = context;
    return w->json ? hessfit_report_uncertainty_json(out, w->u, w->names, 2, 2)
                   : hessfit_report_uncertainty_text(out, w->u, w->names, 2, 2);
}

static const char expected_text[] =
    "\nUncertainties (12 residuals, 3 parameters, rank 2; s^2 = L / (m - rank) = 0.5)\n"
    "  parameter     standard error\n"
    "  bond k C1-F1  0.125\n"
    "  bond r0       0.0625\n"
    "  #2            inf (in a null direction)\n"
    "  strongest correlations\n"
    "    -0.8400  bond k C1-F1 / bond r0\n"
    "  sloppiest directions (singular value of the column-scaled Jacobian: largest components in the scaled "
    "parameters)\n"
    "    0 (null): +1.000 #2 +0.000 bond k C1-F1\n"
    "    0.5: +0.800 bond r0 -0.600 bond k C1-F1\n";

int main(void)
{
    /* a fixed input, as hessfit_uncertainty_compute would fill it */
    double se[3] = {0.125, 0.0625, INFINITY};
    double sv[3] = {1.25, 0.5, 0.0};
    double dirs[9] = {0.8, 0.6, 0.0, -0.6, 0.8, 0.0, 0.0, 0.0, 1.0};
    int order[9] = {0, 1, 2, 1, 0, 2, 2, 0, 1};
    hessfit_uncertainty_pair pairs[1] = {{0, 1, -0.84}};
    hessfit_uncertainty u;
    const char *names[3] = {"bond k C1-F1", "bond r0", NULL};
    writer_input w = {&u, names, 0};
    const char *path = test_temp_path("uncertainty.txt");
    char *text;
    size_t len;
    gj_value *doc;
    memset(&u, 0, sizeof u);
    u.n = 3, u.m = 12, u.loss = 5.0, u.rank = 2, u.sigma2_determined = 1, u.sigma2 = 0.5;
    u.standard_error = se, u.singular_values = sv, u.directions = dirs, u.direction_order = order;
    u.n_null = 1, u.n_pairs = 1, u.pairs = pairs;

    HF_CALL(hessfit_atomic_write(path, write_it, &w));
    text = test_load_file(path, &len);
    CHECK(strcmp(text, expected_text) == 0, "text:\n%s\nexpected:\n%s", text, expected_text);
    printf("%s", text);
    free(text);

    w.json = 1;
    path = test_temp_path("uncertainty.json");
    HF_CALL(hessfit_atomic_write(path, write_it, &w));
    doc = gj_read_file(path);
    {
        const gj_value *params = gj_array(doc, "parameters"), *pairs_json = gj_array(doc, "correlations");
        const gj_value *svs = gj_array(doc, "singular_values"), *sloppy = gj_array(doc, "sloppy_directions");
        const gj_value *first;
        CHECK(gj_number(doc, "n") == 3 && gj_number(doc, "m") == 12 && gj_number(doc, "rank") == 2 &&
                  gj_number(doc, "loss") == 5.0 && gj_number(doc, "sigma2") == 0.5,
              "JSON header");
        CHECK(gj_get(doc, "sigma2_determined")->type == GJ_BOOL && gj_get(doc, "sigma2_determined")->number == 1,
              "sigma2_determined");
        CHECK(params->n == 3 && gj_number(&params->items[0], "standard_error") == 0.125 &&
                  strcmp(gj_string(&params->items[0], "name"), "bond k C1-F1") == 0 &&
                  gj_get(&params->items[2], "standard_error")->type == GJ_NULL &&
                  gj_get(&params->items[2], "name")->type == GJ_NULL &&
                  gj_get(&params->items[2], "in_null_direction")->number == 1 &&
                  gj_get(&params->items[0], "in_null_direction")->number == 0,
              "JSON parameters");
        CHECK(pairs_json->n == 1 && gj_number(&pairs_json->items[0], "i") == 0 &&
                  gj_number(&pairs_json->items[0], "j") == 1 && gj_number(&pairs_json->items[0], "correlation") == -0.84,
              "JSON correlations");
        CHECK(svs->n == 3 && svs->items[0].number == 1.25 && svs->items[2].number == 0.0, "JSON singular values");
        CHECK(sloppy->n == 2 && gj_get(&sloppy->items[0], "null")->number == 1 &&
                  gj_get(&sloppy->items[1], "null")->number == 0 && gj_number(&sloppy->items[1], "singular_value") == 0.5,
              "JSON sloppy directions");
        first = &gj_array(&sloppy->items[1], "components")->items[0];
        CHECK(gj_number(first, "index") == 1 && gj_number(first, "component") == 0.8 &&
                  strcmp(gj_string(first, "name"), "bond r0") == 0,
              "JSON components");
    }
    gj_free(doc);
    printf("JSON read back: every value as written\n");

    /* invalid arguments */
    u.direction_order = NULL;
    w.json = 0;
    HF_FAILS(hessfit_atomic_write(test_temp_path("bad.txt"), write_it, &w), HESSFIT_ERROR_INVALID_ARGUMENT);
    printf("test_report_uncertainty: OK\n");
    return 0;
}
