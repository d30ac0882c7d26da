#ifndef HESSFIT_TEST_TERM_CASES_H_
#define HESSFIT_TEST_TERM_CASES_H_
/*
 * The one-term-kind HessianForce molecules of test_terms and test_adjoint (linked into both): each
 * builder adds its parameter slots (numbered from 0 in the order its comment gives), its bare or
 * typed particles and its terms, with several terms sharing slots. The geometries stay in each
 * test (they differ: test_terms also needs the distance to the nearest singular configuration).
 */
#include "hessfit.h"

/* Adds a parameter of the given value; returns its slot. */
int add_slot(hessfit_force *f, double value);

/* bond, 4 atoms: slots 0 kA, 1 r0A, 2 kB, 3 r0B; bonds (0,1) A, (1,2) B, (2,3) A (shared type) */
void build_bond(hessfit_force *f);
/* MM3* bond, the same molecule, slots and terms as build_bond */
void build_mm3_bond(hessfit_force *f);
/* The MM3* energies written as MacroModel prints them, in Angstrom and degrees inside the
 * polynomial: k dr^2 (1 - 2.55 dr_A + 3.793125 dr_A^2) and
 * k dt^2 (1 - 0.014 D + 5.6e-5 D^2 - 7.0e-7 D^3 + 2.2e-8 D^4) (r, r0 in nm; theta, theta0 in rad). */
double mm3_bond_energy(double k, double r, double r0);
double mm3_angle_energy(double k, double theta, double theta0);
/* Urey-Bradley, 4 atoms: slots 0 kA, 1 r0A, 2 kB, 3 r0B; UB (0,2) A, (1,3) B */
void build_ub(hessfit_force *f);
/* angle, 5 atoms: slots 0 kA, 1 theta0A = 1.911, 2 kB, 3 theta0B; angles (0,1,2) A, (1,2,3) B, (2,3,4) A */
void build_angle(hessfit_force *f);
/* MM3* angle, the same molecule, slots and terms as build_angle */
void build_mm3_angle(hessfit_force *f);
/* periodic torsion, 5 atoms: slots 0 k1, 1 phase1, 2 k2, 3 phase2, 4 k3, 5 phase3; (0,1,2,3)
 * n = 1, 2, 3; (1,2,3,4) n = 2 sharing k2 / phase2. Every phase is non-zero. */
void build_periodic(hessfit_force *f);
/* OPLS torsion, 5 atoms: slots 0..3 V1..V4, 4 V1b, 5 V4b; (0,1,2,3) {V1, V2, V3, V4}; (1,2,3,4)
 * {V1b, none, V3, V4b} */
void build_opls(hessfit_force *f);
/* RB torsion, 5 atoms: slots 0..5 C0..C5, 6 C1b, 7 C5b; (0,1,2,3) {C0..C5}; (1,2,3,4) {C0, C1b,
 * none, C3, none, C5b} */
void build_rb(hessfit_force *f);
/* periodic improper on a star (centre 0, substituents 1, 2, 3): slots 0 kA, 1 phaseA, 2 kB,
 * 3 phaseB; (1,2,0,3) n = 2, (3,1,0,2) n = 3 */
void build_periodic_improper(hessfit_force *f);
/* harmonic improper on a star: slots 0 kA, 1 phi0A, 2 kB, 3 phi0B (harmonic_improper_phi0);
 * (1,2,0,3) A, (3,1,0,2) B */
extern const double harmonic_improper_phi0[2];
void build_harmonic_improper(hessfit_force *f);

/* Nonbonded, 5 particles of types (slots) A = (0 qA, 1 sA, 2 eA), B = (3 qB, 4 sB, 5 eB), 6 qC:
 * particles 0 A, 1 B, 2 A, 3 (qC, sB, no epsilon), 4 (no charge, sA, eB). nb_particles[i] are
 * particle i's charge, sigma and epsilon slots. */
extern const int nb_particles[5][3];
/* Adds the slots 0..6 and the particles 0..4. */
void add_nb_particles(hessfit_force *f);
/* the combining rule build_nb sets (a hessfit_combining_rule; the caller sets it between cases) */
extern int nb_combining;
/* plain LJ + Coulomb between every pair, combining rule nb_combining */
void build_nb(hessfit_force *f);
/* 1-4 pairs: every 1-2 and 1-3 pair and (0,4) excluded, 1-4 pairs (0,3) and (4,1) with these
 * scales, Lorentz-Berthelot */
#define PAIR14_COULOMB_SCALE 0.75
#define PAIR14_LJ_SCALE 0.3
void build_14(hessfit_force *f);
/* explicit pairs (0,2) {qq1, s1, e1}, (3,1) {qq2, s1, e2}, (0,3) {none, s2, e1} (pure LJ), (2,4)
 * {qq1, none, none} (pure Coulomb); every other pair excluded. Slots after the particle types:
 * 7 qq1, 8 s1, 9 e1, 10 qq2, 11 e2, 12 s2. */
void build_explicit(hessfit_force *f);
/* MM3* pairs on the nonbonded particles, slots after the particle types 7 RA, 8 epsA, 9 qq1,
 * 10 RB, 11 epsB, 12 qq2, 13 RC, 14 epsC: (0,1) {RA, epsA, qq1} inside 0.6 nm, (3,2) {RB, epsB, qq2}
 * in the 0.6-0.8 nm switch, (1,4) {RC, epsC, qq1} beyond 0.8 nm (Coulomb only), (0,2) {RA, epsB, qq2}
 * inside 0.6 nm; every other pair excluded. */
void build_mm3_pair(hessfit_force *f);
/* MacroModel's MM3* pair energy written in Angstrom inside the vdW part (r, R in nm; eps kJ/mol;
 * qq e^2): eps S (184000 exp(-12 r/R) - 2.25 (R/r)^6) + ONE_4PI_EPS0 qq / r, S the 6-8 A switch. */
double mm3_pair_energy(double r, double R, double eps, double qq);
/* build_mm3_pair's energy at x with the slot values p; *scale: the sum of |pair energies| */
double mm3_pairs_energy(const double *x, const double *p, double *scale);
/* Random positions of build_mm3_pair's 5 particles, each MM3* pair in its distance band (at least
 * 0.03 nm from 0.6 and 0.8 nm), every pair >= 0.25 nm apart, in a random pose. */
void mm3_pair_positions(double *pos);

#endif
