/* The two-molecule HessianForce fixture (two_molecules.h). */
#include "two_molecules.h"
#include "test_util.h"
#include <string.h>

#define DEG (3.14159265358979323846 / 180.0)

static const double two_values[NUM_S] = {2.0e5, 0.109, 1.4e5, 0.1529, 300.0, 1.93, 3.1, 0.4, 4.2, -1.7, 1.5e4,
                                         0.215, 60.0, 0.05, 0.38, -0.52, 0.14, 0.33, 0.25, 0.6, 0.15};
/* charge, sigma and epsilon slots of each particle (local atom order) */
static const int a_pslots[NA][3] = {{S_Q1, S_SIG1, S_EPS1}, {S_Q2, S_SIG1, S_EPS1}, {S_Q3, S_SIG2, S_EPS2},
                                    {S_Q2, S_SIG1, S_EPS1}, {S_Q1, S_SIG2, S_EPS2}};
static const int b_pslots[NB][3] = {{S_Q2, S_SIG1, S_EPS1}, {S_Q1, S_SIG2, S_EPS2}, {S_Q1, S_SIG2, S_EPS2},
                                    {S_Q3, S_SIG1, S_EPS1}, {S_Q1, S_SIG2, S_EPS2}};
const int b_perm[NB] = {2, 0, 4, 1, 3};
const int b_list[NB] = {3, 0, 4, 2, 1};

void two_mol_add_table(hessfit_force *f) {
    for (int i = 0; i < NUM_S; i++) {
        int s = -1;
        HF_OK(hessfit_force_add_parameter(f, two_values[i], &s));
        CHECK(s == i, "slot numbering: value %d got slot %d", i, s);
    }
}

/* terms of molecule A with its local atom i at particle g[i] */
static void add_mol_a(hessfit_force *f, const int *g) {
    for (int i = 0; i + 1 < NA; i++)
        HF_OK(hessfit_force_add_bond(f, g[i], g[i + 1], i == 1 ? S_KB2 : S_KB, i == 1 ? S_R02 : S_R0, NULL));
    for (int i = 0; i + 2 < NA; i++)
        HF_OK(hessfit_force_add_angle(f, g[i], g[i + 1], g[i + 2], S_KA, S_TH0, NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, g[0], g[1], g[2], g[3], 3, S_KT, S_PH, NULL));
    const int v[4] = {S_V1, HESSFIT_NO_SLOT, S_V3, HESSFIT_NO_SLOT};
    HF_OK(hessfit_force_add_opls_torsion(f, g[1], g[2], g[3], g[4], v, NULL));
    int bonds[2 * (NA - 1)];
    for (int i = 0; i + 1 < NA; i++) {
        bonds[2 * i] = g[i];
        bonds[2 * i + 1] = g[i + 1];
    }
    HF_OK(hessfit_force_create_exclusions_from_bonds(f, bonds, NA - 1));
}

/* terms of molecule B with its local atom j at particle g[j] */
static void add_mol_b(hessfit_force *f, const int *g) {
    int bonds[8];
    test_add_star_bonds_angles(f, g, S_KB, S_R0, S_KA, S_TH0, bonds);
    HF_OK(hessfit_force_add_urey_bradley(f, g[1], g[3], S_KUB, S_RUB, NULL));
    HF_OK(hessfit_force_add_harmonic_improper(f, g[1], g[2], g[0], g[3], S_KI, S_PHI0, NULL));
    HF_OK(hessfit_force_create_exclusions_from_bonds(f, bonds, 4));
}

void two_mol_build_pair(hessfit_force *f) {
    two_mol_add_table(f);
    /* particles in global order: 0..NA-1 molecule A, then B's atoms at NA + b_perm[j] */
    for (int p = 0; p < NA + NB; p++) {
        const int *ps = NULL;
        if (p < NA)
            ps = a_pslots[p];
        else
            for (int j = 0; j < NB; j++)
                if (NA + b_perm[j] == p)
                    ps = b_pslots[j];
        HF_OK(hessfit_force_add_particle(f, ps[0], ps[1], ps[2], NULL));
    }
    int ga[NA], gb[NB], la[NA], lb[NB], index = -1;
    for (int i = 0; i < NA; i++)
        ga[i] = la[i] = i;
    for (int j = 0; j < NB; j++) {
        gb[j] = NA + b_perm[j];
        lb[j] = NA + b_perm[b_list[j]];
    }
    HF_OK(hessfit_force_add_molecule(f, la, NA, &index));
    CHECK(index == 0, "first molecule index %d", index);
    HF_OK(hessfit_force_add_molecule(f, lb, NB, &index));
    CHECK(index == 1, "second molecule index %d", index);
    add_mol_a(f, ga);
    add_mol_b(f, gb);
}

void two_mol_build_a_alone(hessfit_force *f) {
    two_mol_add_table(f);
    int g[NA];
    for (int i = 0; i < NA; i++) {
        HF_OK(hessfit_force_add_particle(f, a_pslots[i][0], a_pslots[i][1], a_pslots[i][2], NULL));
        g[i] = i;
    }
    add_mol_a(f, g);
}

void two_mol_build_b_alone(hessfit_force *f) {
    two_mol_add_table(f);
    int g[NB];
    for (int i = 0; i < NB; i++) {
        const int *ps = b_pslots[b_list[i]];
        HF_OK(hessfit_force_add_particle(f, ps[0], ps[1], ps[2], NULL));
        g[b_list[i]] = i;
    }
    add_mol_b(f, g);
}

void two_mol_random_positions(double pa[3 * NA], double pb[3 * NB]) {
    test_random_chain(pa, NA, 0.1, 0.15);
    test_random_pose(pa, NA);
    const double rb[4] = {0, 0.109, 0.101, 0.135};
    test_star(pb, rb, 112 * DEG, 117 * DEG, 2.8);
    test_place(pb, 4, 3, 0, 1, 0.096, 108 * DEG, 1.2);
    test_random_pose(pb, NB);
}

void two_mol_system_positions(const double pa[3 * NA], const double pb[3 * NB], double pab[3 * (NA + NB)],
                              double pbalone[3 * NB]) {
    memcpy(pab, pa, 3 * NA * sizeof(double));
    for (int j = 0; j < NB; j++)
        memcpy(pab + 3 * (NA + b_perm[j]), pb + 3 * j, 3 * sizeof(double));
    for (int i = 0; i < NB; i++)
        memcpy(pbalone + 3 * i, pb + 3 * b_list[i], 3 * sizeof(double));
}
