/* Optimiser checkpoints (hessfit_optimize.h): the plain-text file (every double as %.17g, written
 * atomically), its strict reader (every error names path:line), and resuming a handle. */
#include "hessfit_atomic_file.h"
#include "hf_optimize_internal.h"

#include "hf_buf.h"
#include "hf_lines.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HF_OPT_CHECKPOINT_VERSION 1

void hessfit_opt_checkpoint_free(hessfit_opt_checkpoint *checkpoint)
{
    if (checkpoint == NULL)
        return;
    free(checkpoint->x);
    memset(checkpoint, 0, sizeof *checkpoint);
}

static hessfit_status check_checkpoint(const char *what, const hessfit_opt_checkpoint *cp)
{
    if ((int)cp->algorithm < 0 || cp->algorithm >= HESSFIT_NUM_OPT_ALGORITHMS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: unknown algorithm %d", what, (int)cp->algorithm);
    if (cp->n < 1 || cp->n > HESSFIT_OPT_CHECKPOINT_MAX_N)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %d parameters (1 to %d allowed)", what, cp->n,
                        HESSFIT_OPT_CHECKPOINT_MAX_N);
    if (cp->x == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: x is NULL", what);
    for (int i = 0; i < cp->n; i++)
        if (!isfinite(cp->x[i]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: x[%d] is %g", what, i, cp->x[i]);
    if (!isfinite(cp->best_loss))
        return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: the best loss is %g", what, cp->best_loss);
    if (!(cp->lm_lambda >= 0.0) || isinf(cp->lm_lambda))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: the LM damping is %g (finite, >= 0; 0: none)", what,
                             cp->lm_lambda);
    if (cp->lm_lambda > 0.0 && !hessfit_opt_algorithm_is_least_squares(cp->algorithm))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: an LM damping in a checkpoint of %s", what,
                             hessfit_opt_algorithm_name(cp->algorithm));
    if (cp->evaluations < 0 || cp->cycle < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: negative count (evaluations %lld, cycle %d)", what,
                        cp->evaluations, cp->cycle);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_save_checkpoint(const char *path, const hessfit_opt_checkpoint *cp)
{
    hf_buf b = {0};
    hessfit_status st;
    if (path == NULL || cp == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_save_checkpoint: %s is NULL", path == NULL ? "path" : "checkpoint");
    st = check_checkpoint(path, cp);
    if (st != HESSFIT_SUCCESS)
        return st;
    st = hf_buf_printf(&b,
                          "# hessfit optimizer checkpoint (written by hessfit): the best point so far; continue with\n"
                          "# hessfit_optimize_load_checkpoint + hessfit_optimize_resume. Doubles as %%.17g (exact).\n"
                          "hessfit-checkpoint %d\nalgorithm %s\nn %d\nevaluations %lld\ncycle %d\nbest_loss %.17g\n",
                          HF_OPT_CHECKPOINT_VERSION, hessfit_opt_algorithm_name(cp->algorithm), cp->n, cp->evaluations,
                          cp->cycle, cp->best_loss);
    if (cp->lm_lambda > 0.0 && st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&b, "lm_lambda %.17g\n", cp->lm_lambda);
    for (int i = 0; i < cp->n && st == HESSFIT_SUCCESS; i++)
        st = hf_buf_printf(&b, "x %d %.17g\n", i, cp->x[i]);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&b, "end\n");
    if (st == HESSFIT_SUCCESS)
        st = hessfit_atomic_write_buffer(path, b.data, b.len);
    hf_buf_free(&b);
    return st;
}

/* The keys of the file, each once, in any order before "end" (x lines after n); the required ones
 * first, then the optional ones (lm_lambda: LM's, absent in older files). */
enum { KEY_ALGORITHM, KEY_N, KEY_EVALUATIONS, KEY_CYCLE, KEY_BEST_LOSS, NUM_REQUIRED_KEYS, KEY_LM_LAMBDA = NUM_REQUIRED_KEYS,
       NUM_KEYS };
static const char *const key_names[NUM_KEYS] = {"algorithm", "n", "evaluations", "cycle", "best_loss", "lm_lambda"};

static hessfit_status expect_fields(const char *path, int line, const char *key, int found, int expected)
{
    if (found == expected)
        return HESSFIT_SUCCESS;
    return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s' takes %d field%s, found %d", path, line, key, expected - 1,
                    expected - 1 == 1 ? "" : "s", found - 1);
}

static hessfit_status parse_line(const char *path, int line, char **tok, int ntok, hessfit_opt_checkpoint *cp, int *seen,
                            int *next_x, int *ended)
{
    hessfit_status st;
    long v;
    int key = -1;
    for (int k = 0; k < NUM_KEYS; k++)
        if (strcmp(tok[0], key_names[k]) == 0)
            key = k;
    if (key >= 0) {
        if (seen[key])
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: '%s' given a second time", path, line, tok[0]);
        st = expect_fields(path, line, tok[0], ntok, 2);
        if (st != HESSFIT_SUCCESS)
            return st;
        seen[key] = 1;
    }
    switch (key) {
    case KEY_ALGORITHM:
        st = hessfit_opt_algorithm_from_name(tok[1], &cp->algorithm);
        if (st != HESSFIT_SUCCESS)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unknown algorithm '%.40s'", path, line, tok[1]);
        return HESSFIT_SUCCESS;
    case KEY_N:
        st = hf_parse_int(tok[1], path, line, "parameter count n", 1, HESSFIT_OPT_CHECKPOINT_MAX_N, &v);
        if (st != HESSFIT_SUCCESS)
            return st;
        cp->n = (int)v;
        cp->x = malloc((size_t)cp->n * sizeof *cp->x); /* at most HESSFIT_OPT_CHECKPOINT_MAX_N doubles */
        if (cp->x == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for %d values", path, line, cp->n);
        return HESSFIT_SUCCESS;
    case KEY_EVALUATIONS:
        st = hf_parse_int(tok[1], path, line, "evaluation count", 0, LONG_MAX, &v);
        cp->evaluations = v;
        return st;
    case KEY_CYCLE:
        st = hf_parse_int(tok[1], path, line, "cycle", 0, INT_MAX, &v);
        cp->cycle = (int)v;
        return st;
    case KEY_BEST_LOSS: return hf_parse_double(tok[1], path, line, "best loss", &cp->best_loss);
    case KEY_LM_LAMBDA:
        st = hf_parse_double(tok[1], path, line, "LM damping", &cp->lm_lambda);
        if (st == HESSFIT_SUCCESS && !(cp->lm_lambda > 0.0))
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: the LM damping %g is not > 0", path, line, cp->lm_lambda);
        return st;
    default: break;
    }
    if (strcmp(tok[0], "x") == 0) {
        char what[48];
        st = expect_fields(path, line, "x", ntok, 3);
        if (st != HESSFIT_SUCCESS)
            return st;
        if (!seen[KEY_N])
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: an x line before the parameter count n", path, line);
        if (*next_x >= cp->n)
            return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: more than n = %d x values", path, line, cp->n);
        st = hf_parse_int(tok[1], path, line, "x index", 0, cp->n - 1, &v);
        if (st != HESSFIT_SUCCESS)
            return st;
        if (v != *next_x)
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: x index %ld where %d was expected", path, line, v, *next_x);
        snprintf(what, sizeof what, "x[%d]", *next_x);
        st = hf_parse_double(tok[2], path, line, what, &cp->x[*next_x]);
        if (st != HESSFIT_SUCCESS)
            return st;
        (*next_x)++;
        return HESSFIT_SUCCESS;
    }
    if (strcmp(tok[0], "end") == 0) {
        st = expect_fields(path, line, "end", ntok, 1);
        if (st != HESSFIT_SUCCESS)
            return st;
        for (int k = 0; k < NUM_REQUIRED_KEYS; k++)
            if (!seen[k])
                return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: 'end' without the '%s' line", path, line, key_names[k]);
        if (*next_x != cp->n)
            return hessfit_error(HESSFIT_ERROR_COUNT, "%s:%d: 'end' after %d of n = %d x values", path, line, *next_x, cp->n);
        if (seen[KEY_LM_LAMBDA] && !hessfit_opt_algorithm_is_least_squares(cp->algorithm))
            return hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: an 'lm_lambda' line in a checkpoint of %s", path, line,
                                 hessfit_opt_algorithm_name(cp->algorithm));
        *ended = 1;
        return HESSFIT_SUCCESS;
    }
    return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unknown line '%.40s'", path, line, tok[0]);
}

hessfit_status hessfit_optimize_load_checkpoint(const char *path, hessfit_opt_checkpoint *cp)
{
    hf_lines r;
    hessfit_status st;
    int seen[NUM_KEYS] = {0};
    int header = 0, ended = 0, next_x = 0, last_line = 0;
    if (path == NULL || cp == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_load_checkpoint: %s is NULL", path == NULL ? "path" : "checkpoint");
    memset(cp, 0, sizeof *cp);
    memset(&r, 0, sizeof r);
    st = hf_lines_open(&r, path);
    if (st != HESSFIT_SUCCESS)
        return st;
    for (;;) {
        char *tok[4];
        int ntok, eof;
        const char *s;
        st = hf_lines_next(&r, &eof);
        if (st != HESSFIT_SUCCESS || eof)
            break;
        last_line = r.line;
        s = hf_skip_space(r.buf);
        if (*s == '\0' || *s == '#')
            continue;
        if (ended) {
            st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: text after 'end'", path, r.line);
            break;
        }
        ntok = hf_split(r.buf, tok, 4);
        if (ntok > 4) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %d fields on a line (at most 3)", path, r.line, ntok);
            break;
        }
        if (!header) {
            long version;
            if (ntok != 2 || strcmp(tok[0], "hessfit-checkpoint") != 0) {
                st = hessfit_error(HESSFIT_ERROR_FORMAT, "%s:%d: not a hessfit checkpoint (its first line must be "
                              "'hessfit-checkpoint %d')", path, r.line, HF_OPT_CHECKPOINT_VERSION);
                break;
            }
            st = hf_parse_int(tok[1], path, r.line, "checkpoint version", 1, INT_MAX, &version);
            if (st == HESSFIT_SUCCESS && version != HF_OPT_CHECKPOINT_VERSION)
                st = hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s:%d: checkpoint version %ld (this hessfit reads version %d)",
                              path, r.line, version, HF_OPT_CHECKPOINT_VERSION);
            if (st != HESSFIT_SUCCESS)
                break;
            header = 1;
            continue;
        }
        st = parse_line(path, r.line, tok, ntok, cp, seen, &next_x, &ended);
        if (st != HESSFIT_SUCCESS)
            break;
    }
    hf_lines_close(&r);
    if (st == HESSFIT_SUCCESS && !ended) {
        if (!header)
            st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: no checkpoint in the file (empty?)", path, last_line);
        else
            st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the file ends before 'end' (%d of %d x values read)", path,
                          last_line, next_x, cp->n);
    }
    if (st != HESSFIT_SUCCESS)
        hessfit_opt_checkpoint_free(cp);
    return st;
}

hessfit_status hessfit_optimize_get_checkpoint(const hessfit_optimize *opt, hessfit_opt_checkpoint *cp)
{
    if (opt == NULL || cp == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_get_checkpoint: %s is NULL", opt == NULL ? "opt" : "checkpoint");
    memset(cp, 0, sizeof *cp);
    if (!opt->have_best)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_get_checkpoint: no evaluation has succeeded yet");
    cp->x = malloc((size_t)opt->n * sizeof *cp->x);
    if (cp->x == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_optimize_get_checkpoint: no memory for %d values", opt->n);
    memcpy(cp->x, opt->best_user, (size_t)opt->n * sizeof *cp->x);
    cp->algorithm = opt->algorithm;
    cp->n = opt->n;
    cp->best_loss = opt->best_loss;
    cp->evaluations = opt->evaluations;
    cp->cycle = opt->cycles_done;
    cp->lm_lambda = hessfit_opt_algorithm_is_least_squares(opt->algorithm) ? opt->best_lm_lambda : 0.0;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_resume(hessfit_optimize *opt, const hessfit_opt_checkpoint *cp, double *x)
{
    hessfit_status st;
    if (opt == NULL || cp == NULL || x == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_resume: %s is NULL",
                        opt == NULL ? "opt" : cp == NULL ? "checkpoint" : "x");
    st = check_checkpoint("hessfit_optimize_resume", cp);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (cp->algorithm != opt->algorithm)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_resume: the checkpoint is of %s, this optimiser runs %s",
                        hessfit_opt_algorithm_name(cp->algorithm), hessfit_opt_algorithm_name(opt->algorithm));
    if (cp->n != opt->n)
        return hessfit_error(HESSFIT_ERROR_COUNT, "hessfit_optimize_resume: the checkpoint has %d parameters, this optimiser %d", cp->n,
                        opt->n);
    memcpy(x, cp->x, (size_t)cp->n * sizeof *x);
    opt->resume_pending = 1;
    opt->resume_evaluations = cp->evaluations;
    opt->resume_cycle = cp->cycle;
    opt->resume_loss = cp->best_loss;
    opt->resume_lm_lambda = cp->lm_lambda;
    return HESSFIT_SUCCESS;
}
