#ifndef HESSFIT_HF_REDUCTION_H_
#define HESSFIT_HF_REDUCTION_H_
/*
 * The entry points of hf_core.h for a model with reduced particles (hf_reduction.c). Each public
 * entry point (hf_assemble.c, hf_contract.c) hands over to its hf_reduced_ twin when
 * model->n_reduced > 0; the twin maps its inputs, calls the entry point on the same model without
 * reduced particles and maps the results. Same arguments and returns as the entry points.
 */
#include "hf_core.h"

int hf_reduced_energy_forces(const hf_model *model, const double *table, const double *pos, double *energy,
                             double *forces, int *bad_term);
int hf_reduced_hessian_blocks(const hf_model *model, const double *table, const double *pos, double *blocks,
                              int *bad_term);
int hf_reduced_parameter_derivatives(const hf_model *model, const double *table, const double *pos, double *dedp,
                                     int *bad_term);
int hf_reduced_molecule_energies(const hf_model *model, const double *table, const double *pos, double *energies,
                                 int *bad_term);
int hf_reduced_molecule_energy_derivatives(const hf_model *model, const double *table, const double *pos,
                                           const double *weights, double *out, int *bad_term);
int hf_reduced_hessian_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                               const double *adjoint, const unsigned char *wanted, int n_wanted,
                                               double *out, int *bad_term);
int hf_reduced_gradient_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                                const double *y, double *out, int *bad_term);
int hf_reduced_bilinear_hessian_derivatives(const hf_model *model, const double *table, const double *pos, int m,
                                            int n_vectors, const double *vectors, int n_pairs, const int *pairs,
                                            const int *slot_row, int n_rows, double *out, int *bad_term);
/* u -> M u for n_vectors rows of molecule m's 3 n_m coordinates, in place (the vectors of
 * hf_reduced_bilinear_hessian_derivatives; hf_objective_jacobian_pairs hands them over mapped). */
void hf_reduced_map_molecule_vectors(const hf_model *model, int m, int n_vectors, double *vectors);

#endif
