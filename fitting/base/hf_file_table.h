#ifndef HF_FILE_TABLE_H_
#define HF_FILE_TABLE_H_
/*
 * Input files held in memory, so that one process reads them and others parse the same bytes
 * (MPI: rank 0 reads every input file of `hessfit fit` once and broadcasts them; docs/mpi.md).
 * Process-wide, not thread-safe; hf_lines_open and hf_read_file go through it:
 *   HF_FILES_DISK    (default) files are read from the file system, nothing is kept;
 *   HF_FILES_RECORD  every file opened is read whole from the file system (its bytes as stored,
 *                    compressed or not) into the table, and served from there;
 *   HF_FILES_MEMORY  files are served from the table only; a path it does not hold is an error.
 * Paths are compared as strings (the same input on every rank names its files alike).
 */
#include "hessfit_status.h"

#include <stddef.h>

typedef enum { HF_FILES_DISK = 0, HF_FILES_RECORD, HF_FILES_MEMORY } hf_files_mode;

void hf_files_set_mode(hf_files_mode mode);
/** The table as one buffer (malloc'ed): for each file its path, its size and its bytes. */
hessfit_status hf_files_pack(unsigned char **data, size_t *size);
/** Replaces the table by a packed one. */
hessfit_status hf_files_unpack(const unsigned char *data, size_t size);
/** Empties the table (the mode stays). */
void hf_files_clear(void);

/** For hf_lines.c: *gz (a gzFile) open on path from the table in the RECORD and MEMORY modes, or
 * NULL in the DISK mode (the caller opens the file itself). */
hessfit_status hf_files_open(const char *path, void **gz);

#endif
