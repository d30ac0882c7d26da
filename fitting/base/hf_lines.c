/* The bounded line reader over zlib (plain and gzip files alike) and the token parsers. */
#include "hf_lines.h"

#include "hf_file_table.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* zlib buffers internally; a per-character gzgetc is fast enough for files of a few MB. */

hessfit_status hf_lines_open(hf_lines *r, const char *path)
{
    if (r == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hf_lines_open: %s is NULL", r == NULL ? "reader" : "path");
    memset(r, 0, sizeof *r);
    r->path = path;
    hessfit_status st = hf_files_open(path, &r->gz); /* held in memory (MPI), else NULL */
    if (st != HESSFIT_SUCCESS)
        return st;
    errno = 0;
    if (r->gz == NULL)
        r->gz = gzopen(path, "rb");
    if (r->gz == NULL)
        return hessfit_error(HESSFIT_ERROR_IO, "%s: cannot open: %s", path, errno ? strerror(errno) : "zlib could not open it");
    gzbuffer((gzFile)r->gz, 1 << 17);
    return HESSFIT_SUCCESS;
}

void hf_lines_close(hf_lines *r)
{
    if (r == NULL)
        return;
    if (r->gz != NULL)
        gzclose((gzFile)r->gz);
    free(r->buf);
    r->gz = NULL;
    r->buf = NULL;
    r->cap = r->len = 0;
}

void hf_lines_unread(hf_lines *r)
{
    r->pushed_back = 1;
}

static hessfit_status gz_failure(hf_lines *r)
{
    int errnum = 0;
    const char *msg = gzerror((gzFile)r->gz, &errnum);
    if (errnum == Z_BUF_ERROR || errnum == Z_DATA_ERROR)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s:%d: the compressed data are truncated or corrupt (%s)", r->path,
                        r->line, msg);
    return hessfit_error(HESSFIT_ERROR_IO, "%s:%d: read error (%s)", r->path, r->line, errnum == Z_ERRNO ? strerror(errno) : msg);
}

hessfit_status hf_lines_next(hf_lines *r, int *eof)
{
    size_t len = 0;
    int c;
    *eof = 0;
    if (r->pushed_back) {
        r->pushed_back = 0;
        return HESSFIT_SUCCESS;
    }
    if (r->cap == 0) {
        r->buf = malloc(256);
        if (r->buf == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a line", r->path);
        r->cap = 256;
    }
    r->line++;
    for (;;) {
        c = gzgetc((gzFile)r->gz);
        if (c == -1) {
            int errnum = 0;
            gzerror((gzFile)r->gz, &errnum);
            if (errnum != Z_OK && errnum != Z_STREAM_END)
                return gz_failure(r);
            if (len == 0)
                *eof = 1;
            break;
        }
        if (c == '\n')
            break;
        if (c == '\0')
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: NUL byte in a text file", r->path, r->line);
        if (len >= HF_LINES_MAX_LINE)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: line longer than %d bytes", r->path, r->line, HF_LINES_MAX_LINE);
        if (len + 1 >= r->cap) {
            char *b = realloc(r->buf, 2 * r->cap);
            if (b == NULL)
                return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s:%d: no memory for the line", r->path, r->line);
            r->buf = b;
            r->cap *= 2;
        }
        r->buf[len++] = (char)c;
    }
    if (len > 0 && r->buf[len - 1] == '\r')
        len--;
    r->buf[len] = '\0';
    r->len = len;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_read_file(const char *path, size_t max_bytes, unsigned char **data, size_t *size)
{
    gzFile gz;
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    if (path == NULL || data == NULL || size == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hf_read_file: an argument is NULL");
    *data = NULL;
    *size = 0;
    void *held = NULL;
    hessfit_status opened = hf_files_open(path, &held); /* held in memory (MPI), else NULL */
    if (opened != HESSFIT_SUCCESS)
        return opened;
    errno = 0;
    gz = held != NULL ? (gzFile)held : gzopen(path, "rb");
    if (gz == NULL)
        return hessfit_error(HESSFIT_ERROR_IO, "%s: cannot open: %s", path, errno ? strerror(errno) : "zlib could not open it");
    for (;;) {
        int got;
        size_t want;
        if (n + 1 >= cap) {
            size_t new_cap = cap ? 2 * cap : 65536;
            unsigned char *b;
            if (new_cap > max_bytes + 1)
                new_cap = max_bytes + 1;
            if (new_cap <= n + 1) {
                free(buf);
                gzclose(gz);
                return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: larger than the reader's limit of %zu bytes", path, max_bytes);
            }
            b = realloc(buf, new_cap);
            if (b == NULL) {
                free(buf);
                gzclose(gz);
                return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu bytes", path, new_cap);
            }
            buf = b;
            cap = new_cap;
        }
        want = cap - 1 - n;
        if (want > INT_MAX / 2)
            want = INT_MAX / 2;
        got = gzread(gz, buf + n, (unsigned)want);
        if (got < 0) {
            int errnum = 0;
            const char *msg = gzerror(gz, &errnum);
            hessfit_status st = hessfit_error(errnum == Z_BUF_ERROR || errnum == Z_DATA_ERROR ? HESSFIT_ERROR_TRUNCATED : HESSFIT_ERROR_IO,
                                    "%s: read error after %zu bytes (%s)", path, n, msg);
            free(buf);
            gzclose(gz);
            return st;
        }
        if (got == 0) {
            int errnum = 0;
            const char *msg = gzerror(gz, &errnum);
            if (errnum != Z_OK && errnum != Z_STREAM_END) {
                hessfit_status st = hessfit_error(HESSFIT_ERROR_TRUNCATED, "%s: the compressed data are truncated or corrupt (%s)",
                                        path, msg);
                free(buf);
                gzclose(gz);
                return st;
            }
            break;
        }
        n += (size_t)got;
    }
    gzclose(gz);
    if (buf == NULL) {
        buf = malloc(1);
        if (buf == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", path);
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return HESSFIT_SUCCESS;
}

int hf_is_blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return 0;
    return 1;
}

const char *hf_skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

int hf_starts_with(const char *s, const char *prefix, int skip_space)
{
    if (skip_space)
        s = hf_skip_space(s);
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

void hf_rstrip(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
}

int hf_split(char *s, char **tokens, int max)
{
    int n = 0;
    while (*s) {
        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        if (n < max)
            tokens[n] = s;
        n++;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s)
            *s++ = '\0';
    }
    return n;
}

hessfit_status hf_parse_double(const char *token, const char *path, int line, const char *what, double *value)
{
    char copy[128];
    char *end;
    size_t n = strlen(token);
    double v;
    if (n == 0 || n >= sizeof copy)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s '%.40s' is not a number", path, line, what, token);
    memcpy(copy, token, n + 1);
    for (size_t k = 0; k < n; k++)  /* Fortran double-precision exponent */
        if (copy[k] == 'D' || copy[k] == 'd')
            copy[k] = 'E';
    errno = 0;
    v = strtod(copy, &end);
    if (end == copy || *end != '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s '%.40s' is not a number", path, line, what, token);
    if (isnan(v) || isinf(v)) {
        if (errno == ERANGE)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s '%.40s' is out of the range of a double", path, line, what, token);
        return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s:%d: %s '%.40s' is not finite (NaN or Inf)", path, line, what, token);
    }
    *value = v;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_parse_int(const char *token, const char *path, int line, const char *what, long min, long max,
                       long *value)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(token, &end, 10);
    if (end == token || *end != '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s '%.40s' is not an integer", path, line, what, token);
    if (errno == ERANGE || v < min || v > max)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s '%.40s' is outside [%ld, %ld]", path, line, what, token, min, max);
    *value = v;
    return HESSFIT_SUCCESS;
}

char *hf_strdup(const char *s)
{
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (c == NULL) {
        hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for a string of %zu bytes", n);
        return NULL;
    }
    memcpy(c, s, n + 1);
    return c;
}

hessfit_status hf_grow(void **array, size_t *cap, size_t need, size_t elem, const char *what)
{
    size_t new_cap;
    void *b;
    if (need <= *cap)
        return HESSFIT_SUCCESS;
    new_cap = *cap ? *cap : 16;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2)
            return hessfit_error(HESSFIT_ERROR_OVERFLOW, "too many %s (%zu)", what, need);
        new_cap *= 2;
    }
    if (new_cap > SIZE_MAX / elem)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "too many %s (%zu)", what, need);
    b = realloc(*array, new_cap * elem);
    if (b == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %zu %s", new_cap, what);
    *array = b;
    *cap = new_cap;
    return HESSFIT_SUCCESS;
}
