#ifndef HF_FF_INTERNAL_H_
#define HF_FF_INTERNAL_H_
/*
 * Internal to fitting/forcefield: what the force-field file readers and writers share (hf_fld.c,
 * hf_frcmod.c, hf_ffxml.c; implemented in hf_ff_common.c unless said otherwise).
 */
#include <stddef.h>

#include "hessfit_atomic_file.h"
#include "hessfit_forcefield.h"
#include "hf_buf.h"

/* Force-field files are text of a few hundred kB; refuse anything beyond this. */
#define HF_FF_MAX_FILE_BYTES ((size_t)64 << 20)

/* Read path (plain or gzip, through hf_read_file) into ff->lines / ff->n_lines: one malloc'ed
 * string per line without its "\n" (a "\r" before the "\n" is kept, so that CRLF files write back
 * unchanged; a last line without "\n" is read like one with it). NUL bytes and lines longer than
 * HF_LINES_MAX_LINE bytes are errors naming path:line. Sets ff->path. On failure ff is freed. */
hessfit_status hf_ff_load_lines(const char *path, hessfit_forcefield *ff);

/* The start of a force-field reader: arguments checked (the message names reader), *ff zeroed,
 * path's lines loaded into *tmp (hf_ff_load_lines) with tmp->format = format. An empty file is
 * HESSFIT_ERROR_TRUNCATED "path:1: empty file<empty_note>" and leaves *tmp freed. */
hessfit_status hf_ff_read_begin(const char *reader, const char *path, hessfit_forcefield *ff, hessfit_ff_format format,
                           const char *empty_note, hessfit_forcefield *tmp);

/* "parameter <index> (<kind> <types...>, line <line>)" in out (size bytes), for messages. */
void hf_ff_describe_param(const hessfit_ff_param *p, int index, char *out, size_t size);

/* MM3 .fld (hf_fld.c): the index of the parameter that line `line` (1-based) continues -- a -2
 * table line with blank type columns and more descriptors, below the parameter line of the same
 * interaction code (possibly through further continuation lines) -- or -1 (not a continuation, or
 * ff not an .fld). mm3.fld line 115 continues the N2-H3 stretch of line 114. */
int hf_fld_param_continued_at(const hessfit_forcefield *ff, int line);

/* Append a copy of *param to ff->params (capacity in *cap, grown by doubling). */
hessfit_status hf_ff_add_param(hessfit_forcefield *ff, size_t *cap, const hessfit_ff_param *param);

/* Copy at most size - 1 bytes of s[0..n) into dst with leading and trailing whitespace removed. */
void hf_ff_copy_trimmed(char *dst, size_t size, const char *s, size_t n);

#endif
