#ifndef HF_MM3_INTERNAL_H_
#define HF_MM3_INTERNAL_H_
/*
 * Internal to fitting/mm3: how MacroModel finds the .fld lines the MM3* energy needs beyond the
 * typed terms (hf_mm3_match.c), and the constants of MM3*'s functional forms (hf_mm3_eval.c).
 */
#include "hessfit_forcefield.h"
#include "hessfit_mm3.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"

/* MM3's functional forms (Allinger 1989; Tinker params/mm3.prm; verified against MacroModel's
 * printed energies, ../shared/design/mm3star.md section 3). */
#define HF_MM3_CUBIC_STRETCH (-2.55)           /* 1/A */
#define HF_MM3_QUARTIC_STRETCH 3.793125        /* (7/12) 2.55^2, 1/A^2 */
#define HF_MM3_BEND_C3 (-0.014)                /* 1/deg, then 1/deg^2 ... */
#define HF_MM3_BEND_C4 5.6e-5
#define HF_MM3_BEND_C5 (-7.0e-7)
#define HF_MM3_BEND_C6 2.2e-8
#define HF_MM3_BEND_BEND HESSFIT_MM3_BEND_BEND_UNIT             /* hessfit_mm3.h */
#define HF_MM3_TORSION_STRETCH HESSFIT_MM3_TORSION_STRETCH_UNIT
#define HF_MM3_BUCK_A 184000.0
#define HF_MM3_BUCK_B 12.0
#define HF_MM3_BUCK_C 2.25
#define HF_MM3_BUCK_WALL 2.0                   /* R/r' beyond which the r^-12 wall replaces exp-6 (hf_core.h) */
#define HF_MM3_SWITCH_ON 6.0                   /* A, MacroModel's 7 +- 1 A van der Waals cutoff */
#define HF_MM3_SWITCH_OFF 8.0
#define HF_MM3_DEBYE_PER_E_A HESSFIT_MM3_DEBYE_PER_E_A  /* hessfit_mm3.h */

/* The molecule's bonds as adjacency lists with their orders (every bond, order 0 included). */
typedef struct hf_mm3_graph {
    const hessfit_molecule *mol;
    const hessfit_forcefield *ff;
    int *start; /* n_atoms + 1 */
    int *adj;
    double *order;
} hf_mm3_graph;

hessfit_status hf_mm3_graph_build(const hessfit_molecule *mol, const hessfit_forcefield *ff, hf_mm3_graph *g);
void hf_mm3_graph_free(hf_mm3_graph *g);
/* Order of bond a-b, -1 when not bonded. */
double hf_mm3_order(const hf_mm3_graph *g, int a, int b);
/* 1 if a .fld type label fits the atom: the same type, "*", a type the -5 equivalences make it
 * ("PX" for a P3), or an element wildcard ("C0": any carbon). */
int hf_mm3_type_fits(const hf_mm3_graph *g, const char *label, int atom);

/* The first main-table row of interaction code `code` whose types, bond marks and descriptors fit
 * atoms[0..n) in either direction (MacroModel's first match in file order; a '*' mark needs a bond
 * of non-zero order). Returns the row index, -1 when none fits; *reversed = 1 when it fits only
 * with atoms reversed. A descriptor hessfit cannot evaluate (continuation lines) on a row whose
 * types fit is an error naming the line. */
hessfit_status hf_mm3_first_row(const hf_mm3_graph *g, char code, const int *atoms, int n, int *row, int *reversed);

/* The first van der Waals row of the atom's type (or a type equivalent to it) whose Atm1
 * descriptor its neighbours satisfy; -1 when none. */
int hf_mm3_vdw_row(const hf_mm3_graph *g, int atom);
/* The first van der Waals row of exactly this type; -1 when none. */
int hf_mm3_vdw_row_of_type(const hessfit_forcefield *ff, const char *type);

/* For a substructure stretch row (types: pattern positions or types) laid on bond a-b: *first = the
 * atom at the row's first column, found by embedding the substructure's pattern. An error naming
 * the line when the pattern does not embed or both directions do. */
hessfit_status hf_mm3_substructure_first(const hf_mm3_graph *g, const hessfit_fld_row *row, int a, int b, int *first);

/* *applies = 1 when the substructure's pattern embeds somewhere in the molecule. */
hessfit_status hf_mm3_substructure_applies(const hf_mm3_graph *g, int substructure, int *applies);

#endif
