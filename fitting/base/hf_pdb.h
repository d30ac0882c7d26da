#ifndef HF_PDB_H_
#define HF_PDB_H_
/* A PDB of one residue as openmm.app.PDBFile reads it: HETATM records (chain A, residue 1) and
 * CONECT records for the bonds, so that PDBFile's Topology has the residue template's bonds. Both
 * ForceField XML exports write theirs with it (hf_ffxml.c, hf_mm3_ffxml.c). */
#include "hf_buf.h"

/* One particle of the residue. */
typedef struct hf_pdb_atom {
    char name[16];       /* atom name, at most 4 characters */
    const char *element; /* element column (77-78): a symbol, or "EP" for an extra particle */
    double xyz[3];       /* Angstrom */
} hf_pdb_atom;

/* Append one HETATM record per atom (serials 1..n, residue name the first 3 characters of res), then
 * CONECT records for the n_pairs bonds pairs[2k], pairs[2k+1] (0-based atom indices; each atom's
 * partners in bond order, listed from both ends, at most four per record), then END. */
hessfit_status hf_pdb_put(hf_buf *b, const char *res, const hf_pdb_atom *atoms, int n, const int *pairs, int n_pairs);

#endif
