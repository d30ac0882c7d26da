#ifndef HESSFIT_TEST_TWO_MOLECULES_H_
#define HESSFIT_TEST_TWO_MOLECULES_H_
/*
 * The two-molecule HessianForce fixture of test_terms and test_adjoint (linked into both): one
 * System holding two molecules that share one parameter table, and each molecule alone in its own
 * System, to compare blocks, energies, forces and derivatives.
 *  Molecule A: a 5-atom chain with bonds of two types, angles, a periodic and an OPLS torsion,
 *    charges + LJ, exclusions and 1-4 pairs from its bonds (the pair (0, 4) stays a plain pair).
 *  Molecule B: a star (centre 0 with 1, 2, 3; atom 4 on 3) with bonds, angles, a Urey-Bradley term,
 *    a harmonic improper, charges + LJ, exclusions and 1-4 pairs from its bonds.
 * The bond type, the angle type and the charges / LJ types are shared slots. In the pair System A is
 * particles 0..NA-1 in order; B's particles are permuted (b_perm) and its molecule lists them in
 * yet another order (b_list).
 */
#include "hessfit.h"

/* the slots of the shared table, numbered in this order by two_mol_add_table */
enum { S_KB, S_R0, S_KB2, S_R02, S_KA, S_TH0, S_KT, S_PH, S_V1, S_V3, S_KUB, S_RUB, S_KI, S_PHI0,
       S_Q1, S_Q2, S_Q3, S_SIG1, S_SIG2, S_EPS1, S_EPS2, NUM_S };
#define NA 5 /* atoms of molecule A */
#define NB 5 /* atoms of molecule B */

/* B's local atom j is particle NA + b_perm[j] of the pair System; B's molecule lists its local
 * atoms in the order b_list (the order of its Hessian block). */
extern const int b_perm[NB];
extern const int b_list[NB];

/* Adds the table's NUM_S parameters to f (checks they get slots 0..NUM_S-1). */
void two_mol_add_table(hessfit_force *f);
/* The pair System: the table, the NA + NB particles, molecules A and B (checks their indices 0
 * and 1), and both molecules' terms. */
void two_mol_build_pair(hessfit_force *f);
/* A alone: the table, A's particles in order and A's terms. */
void two_mol_build_a_alone(hessfit_force *f);
/* B alone: the table and B's terms, its particle i being B's local atom b_list[i] (so its implicit
 * molecule has the block order of B in the pair System). */
void two_mol_build_b_alone(hessfit_force *f);

/* Random geometries (nm) from test_random(): pa a random chain in a random pose; pb a star (bonds
 * 0.109, 0.101, 0.135 nm, angles 112 and 117 degrees) with atom 4 on atom 3, in a random pose. The
 * caller then moves B away from A. */
void two_mol_random_positions(double pa[3 * NA], double pb[3 * NB]);
/* From A's and B's positions: the pair System's (pab, with B at NA + b_perm[j]) and B alone's
 * (pbalone, particle i = B's local atom b_list[i]). */
void two_mol_system_positions(const double pa[3 * NA], const double pb[3 * NB], double pab[3 * (NA + NB)],
                              double pbalone[3 * NB]);

#endif
