#ifndef HESSFIT_TEST_TRIATOMICS_H
#define HESSFIT_TEST_TRIATOMICS_H
/*
 * A set of bent triatomics for the per-platform objective tests: n_mol molecules of an O and two H
 * masses, each two bonds and an angle on the same four slots (bond k 2e5 kJ/mol/nm^2, r0 0.0957 nm,
 * angle k 350 kJ/mol/rad^2, theta0 1.824 rad), each a molecule of the force, in a Context on a
 * platform at given positions (3 n_mol particles).
 */
#include "hessfit.h"

#define TRIATOMIC_SLOTS 4

/* the particles' masses, O H H (amu) */
extern const double triatomic_masses[3];

typedef struct {
    OpenMM_System *system;
    hessfit_force *force;
    OpenMM_Integrator *integrator;
    OpenMM_Context *context;
} triatomic_set;

/* Random positions (the test's seeded generator) for n_mol molecules into pos (9 n_mol, nm): bonds
 * 0.092-0.100 nm, the angle 1.75-1.95 rad, each molecule 0.5 nm further along x, randomly rotated. */
void triatomic_positions(double *pos, int n_mol);

/* One molecule's Hessian objective: its masses, n_freq position-paired frequency targets with their
 * weights (freq_targets NULL: none) and its 9 x 9 Hessian-element targets with their weights
 * (hess_targets NULL: none); the arrays must outlive the objective's use. */
void triatomic_objective(hessfit_molecule_objective *o, const double *freq_targets, const double *freq_weights, int n_freq,
                         const double *hess_targets, const double *hess_weights);

/* The set (test failures abort); pos: 9 n_mol coordinates, nm. */
void triatomic_set_create(triatomic_set *s, int n_mol, const char *platform, const double *pos);
void triatomic_set_destroy(triatomic_set *s);

#endif
