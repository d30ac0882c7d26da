#ifndef HESSFIT_HF_MODEL_INTERNAL_H_
#define HESSFIT_HF_MODEL_INTERNAL_H_
/* The fit model's state, shared by its source files (not installed). */
#include "hessfit_model.h"

#include <stddef.h>

/* HessianForce term kinds the model builds. */
typedef enum {
    HF_MODEL_TERM_BOND = 0,
    HF_MODEL_TERM_ANGLE,
    HF_MODEL_TERM_TORSION,           /* periodic torsion, one Fourier triple */
    HF_MODEL_TERM_PERIODIC_IMPROPER, /* periodic improper, one Fourier triple */
    HF_MODEL_TERM_HARMONIC_IMPROPER,
    /* the MM3* form (hf_model_mm3.c) */
    HF_MODEL_TERM_MM3_BOND,          /* slots k, r0; scale[0] the distance scale */
    HF_MODEL_TERM_MM3_ANGLE,         /* slots k, theta0 */
    HF_MODEL_TERM_MM3_STRETCH_BEND,  /* slots k, r0a, r0b, theta0; scale[0..1] the bonds' distance scales */
    HF_MODEL_TERM_MM3_BEND_BEND,     /* particles p1, centre, p3, p4, p5; slots k, theta01, theta02 */
    HF_MODEL_TERM_MM3_TORSION_STRETCH, /* slots k, r0; scale[0] the central bond's distance scale */
    HF_MODEL_TERM_MM3_PAIR           /* particles a, b, then the switch anchors u, v; slots R, eps, qq; scale[0..1] the
                                        switch scales (an MM3* switched pair where a or b is reduced: anchor its
                                        partner, scale 1/f, S on the true distance; else anchors a, b, scales 1: an
                                        MM3* pair) */,
    HF_MODEL_TERM_HBOND              /* particles hydrogen, acceptor; slots C, D (a 10-12 hydrogen bond) */
} hf_model_term_kind;

#define HF_MODEL_TERM_PARTICLES 5
#define HF_MODEL_TERM_SLOTS 4

typedef struct {
    int param;     /* force-field parameter, -1 for a constant or derived slot */
    int value;     /* index into its values */
    double factor; /* slot = factor * canonical value */
    int next;      /* the next slot of the same (param, value) (another factor), -1: none */
} hf_model_slot;

typedef struct {
    hf_model_term_kind kind;
    int mol;
    int particles[HF_MODEL_TERM_PARTICLES]; /* System particle indices; unused -1 */
    int slots[HF_MODEL_TERM_SLOTS];         /* k, then r0 / theta0 / phase / phi0 (the kinds above) */
    int periodicity;  /* Fourier terms */
    double scale[2];  /* MM3* distance scales */
} hf_model_term;

/* A reduced particle of the MM3* form (HessianForce::addReducedParticle). */
typedef struct {
    int particle, partner; /* System indices */
    double factor;
} hf_model_reduced;

/* The MM3* form's derived pair constants (hf_model_mm3.c): the charges from the bond moments and the
 * stretches' r0, q_a = formal_a + sum over its moment terms sign mu(param) / (4.803 r0(param)), each
 * pair's slot qq = qq_factor q_a q_b; and, unless a special-pair line fixes them, its slots
 * R = 0.1 (R*_a + R*_b) (nm) and eps = vdw_factor sqrt(eps_a eps_b) from the atoms' vdW parameters
 * (values R*, eps). Every oriented stretch has its two moment terms, also where mu is 0 (so a zero
 * moment can be freed); a stretch whose line does not orient it (hessfit_mm3_stretch.plus -1) is
 * listed in unoriented, and its moment cannot be freed. */
typedef struct {
    int atom;    /* System particle */
    int param;   /* the stretch parameter: mu its value 2 (D), r0 its value 1 (A) */
    double sign; /* +1 on the atom of the line's first column, -1 on the other */
} hf_model_moment;

typedef struct {
    int param;     /* the stretch parameter */
    int mol;       /* molecule index */
    int atoms[2];  /* System particles */
} hf_model_unoriented;

typedef struct {
    int a, b;               /* System particles */
    int qq_slot;
    int r_slot, eps_slot;   /* -1: constants (a special pair) */
} hf_model_mm3_pair;

typedef struct {
    double *formal;      /* per System particle (n_particles), e */
    double *charge;      /* per System particle, e: the current charges */
    int *vdw_param;      /* per System particle: its vdW parameter, -1 outside the MM3* form */
    int n_moments, cap_moments;
    hf_model_moment *moments;
    int n_unoriented, cap_unoriented;
    hf_model_unoriented *unoriented;
    int n_pairs, cap_pairs;
    hf_model_mm3_pair *pairs;
    double qq_factor;    /* F_ELE / (10 ONE_4PI_EPS0) */
    double vdw_factor;   /* F_VDW (kJ/mol per kcal/mol) */
} hf_model_mm3_derived;

/* A torsion or Fourier improper typed term: where the terms of a zero triple go when it is freed. */
typedef struct {
    int mol;
    int particles[4];
    int param;
    int improper;
} hf_model_fourier_use;

/* A System, its HessianForce and a Context for a range of molecules. */
typedef struct {
    OpenMM_System *system;
    hessfit_force *force; /* handle; the System owns the force once it is added */
    OpenMM_Integrator *integrator;
    OpenMM_Context *context;
    int mol_begin, mol_end;
    int n_terms;                /* model terms it holds */
    unsigned long long version; /* table version it holds */
} hf_model_evaluator;

struct hessfit_model {
    hessfit_model_options opt;
    char *platform, *precision; /* copies of the option strings */
    char *ff_path;              /* for messages */
    hessfit_ff_format ff_format; /* an OpenMM ForceField XML's impropers keep their typed atom order */

    /* the force field's parameters (copies); values are the current canonical values */
    int n_params;
    hessfit_ff_param *params;
    int *param_uses;          /* terms (vdw: atoms) using each parameter */
    int *slot_of;             /* n_params x HESSFIT_FF_MAX_VALUES: slot or -1 */
    unsigned char *free_mark; /* n_params x HESSFIT_FF_MAX_VALUES: 1 when free */

    int n_slots, cap_slots;
    hf_model_slot *slots;
    double *table; /* current slot values */
    int zero_slot; /* the constant 0 (harmonic improper phi0), -1 until needed */
    int *constant_hash;       /* open addressing: slot index + 1 of a constant slot, 0 empty */
    size_t constant_hash_cap, n_constants;

    int n_terms, cap_terms;
    hf_model_term *terms;
    int n_reduced, cap_reduced;
    hf_model_reduced *reduced;
    hf_model_mm3_derived mm3; /* the MM3* form */
    int n_fourier_uses;
    hf_model_fourier_use *fourier_uses;

    /* molecules and particles */
    int n_mols;
    int *mol_first;           /* n_mols + 1 particle offsets */
    long long *block_offset;  /* n_mols + 1 offsets of the Hessian blocks */
    int n_particles;
    double *masses;           /* amu */
    double *positions_nm;     /* 3 per particle */
    int *particle_slots;      /* 3 per particle: charge, sigma, epsilon (HESSFIT_NO_SLOT when off) */
    int n_bonds;
    int *bonds;               /* 2 per bond, System indices, for the exclusions */

    int n_free, cap_free;
    int *free_param, *free_value;

    hf_model_evaluator main;  /* all molecules */
    hf_model_evaluator *side; /* n_mols, one molecule each, built on demand for energies */
    unsigned long long version; /* bumped whenever the table or the terms change */
    double *blocks_kj;        /* cached Hessian blocks (kJ/mol/nm^2) */
    int blocks_valid;
};

/* "file:line (kind types)" of parameter p, for messages. */
const char *hf_model_param_name(const hessfit_model *m, int p, char *buf, size_t cap);
/* The slot factor of value v of parameter p; 0 when v is not a slot value (a periodicity or out
 * of range). */
int hf_model_value_factor(const hessfit_ff_param *p, int v, double *factor);
/* Slot of value v of parameter p, created (factor * current value) when missing. */
hessfit_status hf_model_slot_for(hessfit_model *m, int p, int v, int *slot);
/* Slot = factor * value v of parameter p, for a factor other than hf_model_value_factor's (the
 * MM3* form's units and shares): found among the slots of (p, v), else created and chained. */
hessfit_status hf_model_slot_scaled(hessfit_model *m, int p, int v, double factor, int *slot);
/* A slot holding a constant (no parameter): the same value gives the same slot. */
hessfit_status hf_model_constant_slot(hessfit_model *m, double value, int *slot);
/* A slot whose value the model derives (the MM3* pair charges): param -1, value set by the caller. */
hessfit_status hf_model_derived_slot(hessfit_model *m, double value, int *slot);

/* The MM3* form (hf_model_mm3.c): molecule m's terms, reduced particles and charges from ff. */
hessfit_status hf_model_mm3_build_molecule(hessfit_model *m, const hessfit_forcefield *ff, const hessfit_molecule *mol,
                                           const hessfit_typed_molecule *typed, int mol_index, int first);
/* The derived slots (charges, pair R and eps) from the current parameter values. */
void hf_model_mm3_update_derived(hessfit_model *m);
/* Whether value v of parameter p can be free in the MM3* form when no slot holds it: vdW R* and eps
 * (the pairs' R and eps follow) and a stretch's bond moment (the charges follow), the latter an error
 * naming the bond when some stretch of p has no orientation. *derived = 1 for those values. */
hessfit_status hf_model_mm3_derived_value(const hessfit_model *m, int p, int v, int *derived);
/* d_free += the derived slots' part of the chain rule, d_slot per slot unit. */
hessfit_status hf_model_mm3_derived_gradient(const hessfit_model *m, const double *d_slot, double *d_free);
/* The derived part of the slot chain C[s][j] = d slot_s / d x_j one slot at a time (the Jacobian's
 * chain, hf_objective_jacobian.c): per slot its pairs, per particle its moment terms, and scratch
 * that each row leaves zero. Same numbers as hf_model_mm3_derived_gradient of the unit vector e_s. */
typedef struct {
    int any;                          /* whether any free value is one the derived slots follow */
    int *slot_begin, *slot_pairs;     /* per slot (n_slots + 1 offsets): the pairs whose qq, R or eps it is */
    int *atom_begin, *atom_moments;   /* per particle: its moment terms */
    double *dq, *dp;                  /* per particle, 2 per parameter: zero between rows */
    int *touched;
    unsigned char *seen;
} hf_model_mm3_chain;
hessfit_status hf_model_mm3_chain_init(const hessfit_model *m, hf_model_mm3_chain *ch);
/* d_free += the derived slots' part of the chain rule for d_slot = e_s. */
void hf_model_mm3_chain_row(const hessfit_model *m, hf_model_mm3_chain *ch, int s, double *d_free);
void hf_model_mm3_chain_free(hf_model_mm3_chain *ch);
/* wanted[s] = 1 for the derived slots a free value feeds (as the chain rule does): the pairs' qq
 * when a bond r0 or moment is free (q = moment / r0), their R and eps when a vdW value is. */
void hf_model_mm3_mark_gradient_slots(const hessfit_model *m, unsigned char *wanted);
void hf_model_mm3_free(hessfit_model *m);
/* C = d slot / d x one row at a time: row s (n_free) is hessfit_model_slot_gradient_to_free of the
 * unit vector e_s, in O(the slot's uses) rather than O(model) (hf_model_free.c). */
typedef struct {
    int *free_of; /* n_params x HESSFIT_FF_MAX_VALUES: the free index of (param, value), -1 */
    hf_model_mm3_chain mm3;
} hf_model_slot_chain;
hessfit_status hf_model_slot_chain_init(const hessfit_model *m, hf_model_slot_chain *ch);
/* d_free (n_free, overwritten) = row s of C. */
void hf_model_slot_chain_row(const hessfit_model *m, hf_model_slot_chain *ch, int s, double *d_free);
void hf_model_slot_chain_free(hf_model_slot_chain *ch);
/* The slots whose dL/dslot reaches a free value (hessfit_model_slot_gradient_to_free reads no other
 * slot): each free value's slots, and the MM3* derived slots when a free value feeds them; decided
 * by structure, not by the current values. *slots (malloc'ed, ascending, the caller frees) and *n. */
hessfit_status hf_model_gradient_slots(const hessfit_model *m, int **slots, int *n);
/* The error for a free value whose derivative (gradient entry or Jacobian column) is NaN: the
 * plugin's mark of an undefined derivative, that of theta0 of an angle term at an exactly linear
 * geometry (docs/mm3.md "linear"): HESSFIT_ERROR_INVALID_ARGUMENT naming that angle (not GEOMETRY, which
 * an LM run takes as an undefined trial point and steps back from), HESSFIT_ERROR_NONFINITE naming
 * another free value; where: the caller. */
hessfit_status hf_model_undefined_derivative(const hessfit_model *m, int free_index, const char *where);
/* Appends a term to the model's list. */
hessfit_status hf_model_append_term(hessfit_model *m, const hf_model_term *t);

/* The C API's failure st, its message prefixed with "fit model: <what>: <status text>: ". */
hessfit_status hf_model_hessfit_error(hessfit_status st, const char *what);

/* Build an evaluator for molecules [mol_begin, mol_end); frees it on failure. */
hessfit_status hf_model_evaluator_build(hessfit_model *m, int mol_begin, int mol_end, hf_model_evaluator *ev);
void hf_model_evaluator_free(hf_model_evaluator *ev);
/* Adds one model term to an evaluator's force (particles shifted to the evaluator's System). */
hessfit_status hf_model_evaluator_add_term(const hessfit_model *m, hf_model_evaluator *ev, const hf_model_term *t);
/* The positions of a Context of n particles, nm, 3 per particle: set, and read back (an error
 * when the Context holds another count). */
void hf_model_context_set_positions(OpenMM_Context *context, int n, const double *pos_nm);
hessfit_status hf_model_context_get_positions(OpenMM_Context *context, int n, double *pos_nm);
/* Pushes the model's table (and terms) into the evaluator's Context when its version is older. */
hessfit_status hf_model_evaluator_sync(hessfit_model *m, hf_model_evaluator *ev);

#endif
