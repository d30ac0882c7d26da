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
/* MacroModel's distance scale of a bond to a reduced hydrogen, 1 / 0.923 (r_eff = r / f) */
#define MM3_REDUCED_H_SCALE (1.0 / 0.923)
/* MM3* bond with distance scales: build_mm3_bond, then bond 1 scaled by MM3_REDUCED_H_SCALE and
 * bond 2 by 1.05 (hessfit_force_set_mm3_bond_distance_scale); its energy at x with slot values p */
void build_mm3_bond_scaled(hessfit_force *f);
double mm3_bonds_scaled_energy(const double *x, const double *p, double *scale);
/* MM3* stretch-bend, 5-atom chain: slots 0 kA, 1 r0a, 2 r0b, 3 theta0A, 4 kB, 5 theta0B;
 * (0,1,2) {kA, r0a, r0b, theta0A} scales (1, MM3_REDUCED_H_SCALE); (1,2,3) {kB, r0b, r0a, theta0B}
 * scales (1, 1); (2,3,4) {kA, r0a, r0b, theta0A} scales (MM3_REDUCED_H_SCALE, 1.04) */
void build_mm3_stretch_bend(hessfit_force *f);
double mm3_stretch_bends_energy(const double *x, const double *p, double *scale);
/* MM3* bend-bend on a star of 5 (centre 0, substituents 1..4): slots 0 kA, 1 theta01, 2 theta02,
 * 3 kB; (1,0,2 | 3,0,4) {kA, theta01, theta02} with 5 distinct particles, and three sharing an
 * outer particle: (1,0,3 | 4,0,1) {kB, theta02, theta01}, (2,0,4 | 2,0,3) {kA, theta01, theta01},
 * (1,0,4 | 4,0,2) {kB, theta01, theta02} */
void build_mm3_bend_bend(hessfit_force *f);
double mm3_bend_bends_energy(const double *x, const double *p, double *scale);
/* Random positions of build_mm3_bend_bend's star: substituents at 0.09-0.16 nm, every angle
 * between two of them in 45-165 deg, in a random pose. */
void mm3_star5_positions(double *pos);
/* MM3* torsion-stretch, 5-atom chain: slots 0 kA, 1 r0A, 2 kB, 3 r0B; (0,1,2,3) {kA, r0A} s = 1;
 * (1,2,3,4) {kB, r0B} s = MM3_REDUCED_H_SCALE; (3,2,1,0) {kB, r0A} s = 0.97 */
void build_mm3_torsion_stretch(hessfit_force *f);
double mm3_torsion_stretches_energy(const double *x, const double *p, double *scale);
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
/* The same with the switch S taken at rs instead of r (an MM3* switched pair). */
double mm3_switched_pair_energy(double r, double rs, double R, double eps, double qq);
/* MM3* switched pairs on 6 bare particles, slots 0 RA, 1 epsA, 2 qq1, 3 RB, 4 epsB, 5 qq2:
 * (0,1) anchors (2,1) scales (MM3_REDUCED_H_SCALE, 1) {RA, epsA, qq1}, switch distance in 0.6-0.8 nm;
 * (3,4) anchors (3,5) scales (1, 1.08) {RB, epsB, qq2}, switch distance inside 0.6 nm;
 * (1,5) anchors (1,5) {RA, epsB, qq1}, switch distance beyond 0.8 nm (Coulomb only);
 * (0,4) anchors (2,5) scales (MM3_REDUCED_H_SCALE, 0.9) {RB, epsA, qq2}, in 0.6-0.8 nm;
 * (2,3) anchors (1,0) scales (1.2, 0.7) {RA, epsB, qq2}, in 0.6-0.8 nm (anchors are other pair's atoms). */
void build_mm3_switched_pair(hessfit_force *f);
/* build_mm3_switched_pair's energy at x with the slot values p; *scale: the sum of |pair energies| */
double mm3_switched_pairs_energy(const double *x, const double *p, double *scale);
/* Random positions of build_mm3_switched_pair's 6 particles, each switch distance in its band (at
 * least 0.02 nm from 0.6 and 0.8 nm), every pair >= 0.2 nm apart, in a random pose. */
void mm3_switched_pair_positions(double *pos);
/* 10-12 hydrogen bonds on 4 bare particles, slots 0 C1, 1 D1, 2 C2, 3 D2 (kJ/mol nm^12, nm^10; the
 * .fld rows H1-O3 90/40 and H3-O2 42.5/10 as 418.4 C' 1e-12, 418.4 D' 1e-10): (0,1) {C1, D1},
 * (2,3) {C2, D2}, (1,2) {C1, D2}, (0,3) {C2, D1}. */
void build_hbond(hessfit_force *f);
/* MacroModel's energy of one such hydrogen bond written in its own units: 418.4 (C'/r^12 - D'/r^10)
 * with r in Angstrom and C' = C / (418.4e-12), D' = D / (418.4e-10) (r in nm; C, D as above). */
double hbond_energy(double r, double c, double d);
/* build_hbond's energy at x with the slot values p; *scale: the sum of |bond energies| */
double hbonds_energy(const double *x, const double *p, double *scale);
/* Random positions of build_hbond's 4 particles, every hydrogen bond at 0.14-0.4 nm (repulsive
 * wall, minimum near 0.16-0.2 nm and tail), every pair >= 0.13 nm apart, in a random pose. */
void hbond_positions(double *pos);
/* Random positions of build_mm3_pair's 5 particles, each MM3* pair in its distance band (at least
 * 0.03 nm from 0.6 and 0.8 nm), every pair >= 0.25 nm apart, in a random pose. */
void mm3_pair_positions(double *pos);

#endif
