#ifndef HESSFIT_HF_OBJECTIVE_INTERNAL_H_
#define HESSFIT_HF_OBJECTIVE_INTERNAL_H_
/* The targets of one molecule as the objective builds them (not installed). */
#include "hessfit.h"
#include "hessfit_objective.h"

/* One molecule's targets in plugin units (kJ/mol/nm^2, amu, cm^-1), owning its arrays; the
 * weights include the unit factor that makes every residual q2mm's (Hartree/Bohr^2 based). */
typedef struct {
    int n_atoms;
    HessFit_FrequencyPairing pairing;
    int project;
    double threshold;
    int n_freq;
    double *freq_target, *freq_weight, *freq_vectors; /* vectors: overlap pairing only */
    int n_eig;                                         /* 0 or 3 n_atoms */
    double *eig_vectors, *eig_target, *eig_weight;
    int hessian;
    double *hess_target, *hess_weight;
    int transition_state;                              /* the QM Hessian has a reaction coordinate */
} hf_objective_targets;

/* Targets of molecule mol (for messages) from its QM data: the Hessian (Hartree/Bohr^2) and the
 * coordinates (Angstrom), with the model's masses (amu). */
hf_status hf_objective_targets_build(const hf_molecule *qm, int mol, const double *masses,
                                     const hf_objective_options *opt, hf_objective_targets *t);
void hf_objective_targets_free(hf_objective_targets *t);

#endif
