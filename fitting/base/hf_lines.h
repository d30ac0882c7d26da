#ifndef HF_LINES_H_
#define HF_LINES_H_
/*
 * Internal to the fitting layer: the bounded line reader every text reader uses, and the token
 * parsers that turn fields into numbers with messages naming file:line.
 *
 * Files are opened through zlib, so a gzip-compressed file (any name; "x.fchk.gz" included) reads
 * exactly like the plain file. Lines longer than HF_LINES_MAX_LINE bytes, NUL bytes and read or
 * decompression errors (a truncated .gz) are errors naming file:line, never a silent truncation.
 */
#include <stddef.h>

#include "hessfit_status.h"

#define HF_LINES_MAX_LINE 65536

typedef struct hf_lines {
    void *gz;          /* gzFile */
    const char *path;  /* not owned */
    int line;          /* number of the line in buf (1-based); 0 before the first read */
    char *buf;         /* the current line without "\n" / "\r\n"; valid until the next call */
    size_t len;        /* strlen(buf) */
    size_t cap;
    int pushed_back;   /* hf_lines_unread: the next hf_lines_next returns buf again */
} hf_lines;

/* Open path (plain or gzip). HESSFIT_ERROR_IO names the file and the reason. */
hessfit_status hf_lines_open(hf_lines *r, const char *path);
/* Read the next line into r->buf. *eof = 1 (and r->buf = "") when the file has no more lines. */
hessfit_status hf_lines_next(hf_lines *r, int *eof);
/* Make the next hf_lines_next return the current line again (one level only). */
void hf_lines_unread(hf_lines *r);
/* Close and free; safe on a zeroed or already closed reader. */
void hf_lines_close(hf_lines *r);

/* Read a whole file (plain or gzip) into memory: *data malloc'ed, NUL-terminated after *size
 * bytes; more than max_bytes decompressed bytes is HESSFIT_ERROR_OVERFLOW. */
hessfit_status hf_read_file(const char *path, size_t max_bytes, unsigned char **data, size_t *size);

/* 1 if s holds only whitespace. */
int hf_is_blank(const char *s);
/* s with leading whitespace skipped. */
const char *hf_skip_space(const char *s);
/* 1 if s starts with prefix (after skipping leading whitespace when skip_space). */
int hf_starts_with(const char *s, const char *prefix, int skip_space);
/* Strip trailing whitespace in place. */
void hf_rstrip(char *s);

/* Split s in place at whitespace; stores up to max token pointers and returns the number of
 * tokens found (which may exceed max: the count goes on, only max pointers are stored). */
int hf_split(char *s, char **tokens, int max);

/* A whole token as a finite double (Fortran 'D' exponents accepted: 1.0D-02). what names the
 * field in messages ("x coordinate"); errors HESSFIT_ERROR_PARSE or HESSFIT_ERROR_NONFINITE. */
hessfit_status hf_parse_double(const char *token, const char *path, int line, const char *what, double *value);
/* A whole token as an integer in [min, max]; HESSFIT_ERROR_PARSE otherwise (the message gives the range). */
hessfit_status hf_parse_int(const char *token, const char *path, int line, const char *what, long min, long max,
                       long *value);

/* malloc'ed copy of s (NULL and an HESSFIT_ERROR_OUT_OF_MEMORY message naming what on failure). */
char *hf_strdup(const char *s);

/* Grow *array (element size elem) so that it holds at least need elements; *cap is updated.
 * Doubles the capacity; HESSFIT_ERROR_OVERFLOW / HESSFIT_ERROR_OUT_OF_MEMORY name what. */
hessfit_status hf_grow(void **array, size_t *cap, size_t need, size_t elem, const char *what);

#endif
