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
    HF_MODEL_TERM_HARMONIC_IMPROPER
} hf_model_term_kind;

typedef struct {
    int param;     /* force-field parameter, -1 for a constant slot (charge, improper phi0) */
    int value;     /* index into its values */
    double factor; /* slot = factor * canonical value */
} hf_model_slot;

typedef struct {
    hf_model_term_kind kind;
    int mol;
    int particles[4]; /* System particle indices; unused -1 */
    int slots[2];     /* k, then r0 / theta0 / phase / phi0 */
    int periodicity;  /* Fourier terms */
} hf_model_term;

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

    int n_terms, cap_terms;
    hf_model_term *terms;
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
/* Appends a term to the model's list. */
hessfit_status hf_model_append_term(hessfit_model *m, const hf_model_term *t);

/* The C API's failure st, its message prefixed with "fit model: <what>: <status text>: ". */
hessfit_status hf_model_hessfit_error(hessfit_status st, const char *what);

/* Build an evaluator for molecules [mol_begin, mol_end); frees it on failure. */
hessfit_status hf_model_evaluator_build(hessfit_model *m, int mol_begin, int mol_end, hf_model_evaluator *ev);
void hf_model_evaluator_free(hf_model_evaluator *ev);
/* Adds one model term to an evaluator's force (particles shifted to the evaluator's System). */
hessfit_status hf_model_evaluator_add_term(const hessfit_model *m, hf_model_evaluator *ev, const hf_model_term *t);
/* Pushes the model's table (and terms) into the evaluator's Context when its version is older. */
hessfit_status hf_model_evaluator_sync(hessfit_model *m, hf_model_evaluator *ev);

#endif
