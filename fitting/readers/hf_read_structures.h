#ifndef HF_READ_STRUCTURES_H_
#define HF_READ_STRUCTURES_H_
/*
 * Internal to the fitting layer: what the readers of multi-structure text files (hf_read_mmo.c,
 * hf_read_mol2.c) share -- the public entry point around a format's parser, the per-atom arrays
 * of a structure grown together, errors located at file:line, and a structure's "path:line"
 * source. The formats' own parsing stays in their files.
 */
#include <stddef.h>

#include "hessfit_molecule.h"
#include "hf_lines.h"

/* The last line of the file once hf_lines_next has reported the end (it counts one past it). */
int hf_lines_last_line(const hf_lines *r);

/* The thread's last error message (hf_grow's "too many bonds", say) again, prefixed with path:line. */
hessfit_status hf_error_located(hessfit_status st, const char *path, int line);

/* Room for one more structure in out (capacity *cap); what names them in the message ("molecules"). */
hessfit_status hf_structures_reserve(hessfit_molecule_list *out, size_t *cap, const char *what, const char *path, int line);

/* A per-atom array that grows with a structure's atomic numbers. */
typedef struct hf_atom_array {
    void **data;       /* the array (realloc'ed) */
    size_t atom_bytes; /* bytes per atom */
    size_t extra;      /* room for this many atoms beyond the capacity (a closing entry) */
} hf_atom_array;

/* Room for need atoms: *atomic_numbers grows by hf_grow (doubling; "atoms") and, when its capacity
 * changed, each of arrays[0..n) is realloc'ed to the new capacity (plus its extra); *cap_atoms is the
 * new capacity once all of them succeeded. Errors name path:line. */
hessfit_status hf_grow_atom_arrays(int **atomic_numbers, size_t *cap_atoms, size_t need, const hf_atom_array *arrays,
                              int n, const char *path, int line);

/* malloc'ed "path:line", the source of a structure that starts at line; NULL when out of memory. */
char *hf_source_at_line(const char *path, int line);

/* A format's parser: reads r to its end, appending the structures to out (capacity its own);
 * state is the format's, zeroed before the call and freed after it by the reader's free_state. */
typedef hessfit_status (*hf_structures_parser)(hf_lines *r, hessfit_molecule_list *out, void *state);

/* The public reader of a multi-structure file around parse: NULL arguments refused (the message
 * names reader), *list zeroed, path opened (plain or gzip), parsed, closed, state freed; on any
 * failure the structures read so far are freed and *list stays empty. state must be zeroed. */
hessfit_status hf_read_structures(const char *reader, const char *path, hessfit_molecule_list *list, hf_structures_parser parse,
                             void *state, void (*free_state)(void *state));

#endif
