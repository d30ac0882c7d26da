/*
 * test_molecule_energies (per platform): per-molecule energies and their weighted parameter
 * derivatives through the C API,
 *     E_m                       hessfit_force_get_molecule_energies
 *     d_s(w) = sum_m w_m dE_m/dp_s   hessfit_force_get_molecule_energy_derivatives,
 * on a System of three molecules that together use every term kind: A, a 6-atom chain (bonds of
 * two types, a Urey-Bradley term, angles, a periodic, an OPLS and an RB torsion, exclusions and
 * scaled 1-4 pairs from the bonds, plain LJ + Coulomb pairs and an explicit pair); B, a star with
 * a tail (bonds, angles, a periodic and a harmonic improper, 1-4 pairs); C, a second copy of A at
 * another geometry whose particles are in reverse System order and listed permuted. One shared
 * table; B's improper slots are B's alone.
 *
 *  (a) sum_m E_m = the force's energy (1e-12 relative);
 *  (b) E_m = the energy of a System holding molecule m alone (same table and terms), 1e-12;
 *  (c) d_s(w) for random weights = central differences of sum_m w_m E_m over the slot value
 *      (dp = 1e-6 |p_s|), 1e-7 relative to the slot's scale: max(|d_s|, sum_m |w_m E_m| / |p_s|),
 *      floored at 1e-6 of the largest (truncation ~ (dp/p)^2, rounding ~ eps / 1e-6 of that scale);
 *  (d) d_s(e_m) = dE/dp_s of molecule m's own System (hessfit_force_get_parameter_derivatives),
 *      and d_s(1, 1, 1) = the whole System's dE/dp_s, 1e-12;
 *  (e) weight 0 for B: B's improper slots get exactly 0; linearity d(a w1 + b w2), 1e-12;
 * both combining rules. Errors: wrong sizes, NULL arrays, NaN / infinite weights (named), a force
 * not in the Context, undefined geometry (HESSFIT_ERROR_GEOMETRY).
 *
 * hessfit_context_minimize (OpenMM's LocalEnergyMinimizer behind a status): every molecule's
 * energy falls and the RMS force ends below the tolerance; bad arguments and an undefined geometry
 * come back as statuses, not exceptions.
 */
#include "test_util.h"
#include <string.h>

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)
#define NA 6
#define NB 5
#define NMOL 3
#define NP (2 * NA + NB)

static const char *platform_name = "Reference";

enum { S_KB, S_R0, S_KB2, S_R02, S_KUB, S_RUB, S_KA, S_TH0, S_KT, S_PH, S_V1, S_V2, S_V3, S_C0, S_C1, S_C2, S_C3,
       S_KPI, S_PPI, S_KHI, S_PHI0, S_Q1, S_Q2, S_Q3, S_SIG1, S_SIG2, S_EPS1, S_EPS2, S_QQX, S_SIGX, S_EPSX, NUM_S };
static double values[NUM_S] = {2.0e5, 0.109, 1.4e5, 0.1529, 1.5e4, 0.235, 300.0, 1.93, 3.1, 0.4, 4.2, -1.3, -1.7,
                               9.28, 12.16, -13.12, -3.06, 4.6, PI, 60.0, 0 /* set from B's geometry */, 0.38, -0.52,
                               0.14, 0.33, 0.25, 0.6, 0.15, -0.21, 0.29, 0.4};
static const int only_b[] = {S_KPI, S_PPI, S_KHI, S_PHI0};
static const int a_pslots[NA][3] = {{S_Q1, S_SIG1, S_EPS1}, {S_Q2, S_SIG1, S_EPS1}, {S_Q3, S_SIG2, S_EPS2},
                                    {S_Q2, S_SIG1, S_EPS1}, {S_Q1, S_SIG2, S_EPS2}, {S_Q3, S_SIG2, HESSFIT_NO_SLOT}};
static const int b_pslots[NB][3] = {{S_Q2, S_SIG1, S_EPS1}, {S_Q1, S_SIG2, S_EPS2}, {S_Q1, S_SIG2, S_EPS2},
                                    {S_Q3, S_SIG1, S_EPS1}, {HESSFIT_NO_SLOT, S_SIG2, S_EPS2}};
static int combining = HESSFIT_COMBINE_GEOMETRIC;

/* System particle of each molecule's local atom: A first, then B, then C backwards. */
static int particle_of(int mol, int local) {
    if (mol == 0)
        return local;
    if (mol == 1)
        return NA + local;
    return NA + NB + (NA - 1 - local);
}
static int num_atoms(int mol) { return mol == 1 ? NB : NA; }
static const int *slots_of(int mol, int local) { return mol == 1 ? b_pslots[local] : a_pslots[local]; }

typedef struct {
    OpenMM_System *system;
    hessfit_force *force;
    OpenMM_Context *context;
    OpenMM_Integrator *integrator;
    int n, nmol;
} Setup;

static int slot(hessfit_force *f, double value) {
    int s = -1;
    HF_OK(hessfit_force_add_parameter(f, value, &s));
    return s;
}

/* chain molecule (A or C): g maps local atoms to the force's particles */
static void add_chain(hessfit_force *f, const int *g) {
    int bonds[2 * (NA - 1)];
    for (int i = 0; i + 1 < NA; i++) {
        HF_OK(hessfit_force_add_bond(f, g[i], g[i + 1], i == 2 ? S_KB2 : S_KB, i == 2 ? S_R02 : S_R0, NULL));
        bonds[2 * i] = g[i];
        bonds[2 * i + 1] = g[i + 1];
    }
    HF_OK(hessfit_force_add_urey_bradley(f, g[0], g[2], S_KUB, S_RUB, NULL));
    for (int i = 0; i + 2 < NA; i++)
        HF_OK(hessfit_force_add_angle(f, g[i], g[i + 1], g[i + 2], S_KA, S_TH0, NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, g[0], g[1], g[2], g[3], 3, S_KT, S_PH, NULL));
    const int v[4] = {S_V1, S_V2, S_V3, HESSFIT_NO_SLOT};
    HF_OK(hessfit_force_add_opls_torsion(f, g[1], g[2], g[3], g[4], v, NULL));
    const int c[6] = {S_C0, S_C1, S_C2, S_C3, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT};
    HF_OK(hessfit_force_add_rb_torsion(f, g[2], g[3], g[4], g[5], c, NULL));
    HF_OK(hessfit_force_create_exclusions_from_bonds(f, bonds, NA - 1));
    /* (0, 4) and (1, 5) stay plain pairs; (0, 5) is explicit */
    HF_OK(hessfit_force_add_explicit_pair(f, g[0], g[5], S_QQX, S_SIGX, S_EPSX, NULL));
}

/* star molecule B: centre 0 with 1, 2, 3; 4 on 3 */
static void add_star(hessfit_force *f, const int *g) {
    int bonds[8];
    test_add_star_bonds_angles(f, g, S_KB, S_R0, S_KA, S_TH0, bonds);
    HF_OK(hessfit_force_add_periodic_improper(f, g[1], g[2], g[0], g[3], 2, S_KPI, S_PPI, NULL));
    HF_OK(hessfit_force_add_harmonic_improper(f, g[3], g[1], g[0], g[2], S_KHI, S_PHI0, NULL));
    HF_OK(hessfit_force_create_exclusions_from_bonds(f, bonds, 4));
}

static void add_molecule_terms(hessfit_force *f, int mol, const int *g) {
    if (mol == 1)
        add_star(f, g);
    else
        add_chain(f, g);
}

/* mol < 0: all three molecules (C listed in permuted local order); else molecule mol alone */
static void setup_create(Setup *s, int mol, const double *pos_all) {
    s->system = OpenMM_System_create();
    HF_OK(hessfit_force_create(&s->force));
    for (int i = 0; i < NUM_S; i++)
        CHECK(slot(s->force, values[i]) == i, "slot numbering");
    HF_OK(hessfit_force_set_combining_rule(s->force, (hessfit_combining_rule) combining));
    HF_OK(hessfit_force_set_14_scales(s->force, 0.75, 0.3));
    double pos[3 * NP];
    if (mol < 0) {
        s->n = NP;
        int owner[NP][2];
        for (int m = 0; m < NMOL; m++)
            for (int a = 0; a < num_atoms(m); a++) {
                owner[particle_of(m, a)][0] = m;
                owner[particle_of(m, a)][1] = a;
            }
        for (int p = 0; p < NP; p++) {
            const int *ps = slots_of(owner[p][0], owner[p][1]);
            OpenMM_System_addParticle(s->system, 12.0);
            HF_OK(hessfit_force_add_particle(s->force, ps[0], ps[1], ps[2], NULL));
        }
        for (int m = 0; m < NMOL; m++) {
            int g[NA], list[NA];
            for (int a = 0; a < num_atoms(m); a++) {
                g[a] = particle_of(m, a);
                list[a] = particle_of(m, (a * 7 + 2) % num_atoms(m)); /* a permuted block order */
            }
            HF_OK(hessfit_force_add_molecule(s->force, list, num_atoms(m), NULL));
            add_molecule_terms(s->force, m, g);
        }
        memcpy(pos, pos_all, sizeof pos);
    } else {
        s->n = num_atoms(mol);
        int g[NA];
        for (int a = 0; a < s->n; a++) {
            const int *ps = slots_of(mol, a);
            OpenMM_System_addParticle(s->system, 12.0);
            HF_OK(hessfit_force_add_particle(s->force, ps[0], ps[1], ps[2], NULL));
            g[a] = a;
            memcpy(pos + 3 * a, pos_all + 3 * particle_of(mol, a), 3 * sizeof(double));
        }
        add_molecule_terms(s->force, mol, g);
    }
    HF_OK(hessfit_force_get_num_molecules(s->force, &s->nmol));
    HF_OK(hessfit_force_add_to_system(s->force, s->system, NULL));
    s->context = test_create_context(s->system, platform_name, pos, s->n, 0.001, &s->integrator);
}

static void setup_destroy(Setup *s) {
    OpenMM_Context_destroy(s->context);
    OpenMM_Integrator_destroy(s->integrator);
    hessfit_force_destroy(s->force);
    OpenMM_System_destroy(s->system);
}

static void set_table(Setup *s, const double *table) {
    HF_OK(hessfit_force_set_parameters(s->force, table, NUM_S));
    HF_OK(hessfit_force_update_parameters_in_context(s->force, s->context));
}

static double weighted_energy(Setup *s, const double *w) {
    double e[NMOL], sum = 0.0;
    HF_OK(hessfit_force_get_molecule_energies(s->force, s->context, e, s->nmol));
    for (int m = 0; m < s->nmol; m++)
        sum += w[m] * e[m];
    return sum;
}

static double rel_diff(const double *a, const double *b, int n) {
    return test_max_abs_diff(a, b, (size_t) n) / fmax(test_max_abs(b, (size_t) n), 1e-300);
}

/* positions of all three molecules (A and C chains, B a star 0.7 nm away) */
static void make_positions(double *pos) {
    double a[3 * NA], c[3 * NA], b[3 * NB];
    do
        test_random_chain(a, NA, 0.10, 0.15);
    while (test_min_pair_distance(a, NA) < 0.09);
    do
        test_random_chain(c, NA, 0.10, 0.15);
    while (test_min_pair_distance(c, NA) < 0.09);
    test_random_pose(a, NA);
    test_random_pose(c, NA);
    const double rb[4] = {0, 0.109, 0.101, 0.135};
    test_star(b, rb, 112 * DEG, 117 * DEG, 2.8);
    test_place(b, 4, 3, 0, 1, 0.096, 108 * DEG, 1.2);
    test_random_pose(b, NB);
    values[S_PHI0] = test_dihedral(b, 3, 1, 0, 2) + 0.4; /* the harmonic improper 0.4 rad from its minimum */
    for (int i = 0; i < NA; i++) {
        memcpy(pos + 3 * particle_of(0, i), a + 3 * i, 3 * sizeof(double));
        memcpy(pos + 3 * particle_of(2, i), c + 3 * i, 3 * sizeof(double));
    }
    for (int i = 0; i < NB; i++)
        memcpy(pos + 3 * particle_of(1, i), b + 3 * i, 3 * sizeof(double));
}

static void run(void) {
    double pos[3 * NP];
    make_positions(pos);
    Setup all, alone[NMOL];
    setup_create(&all, -1, pos);
    CHECK(all.nmol == NMOL, "%d molecules", all.nmol);
    for (int m = 0; m < NMOL; m++)
        setup_create(&alone[m], m, pos);

    /* (a), (b) */
    double e[NMOL], total = 0.0, sum = 0.0, worst_alone = 0.0;
    HF_OK(hessfit_force_get_molecule_energies(all.force, all.context, e, NMOL));
    HF_OK(hessfit_force_get_energy_forces(all.force, all.context, &total, NULL));
    for (int m = 0; m < NMOL; m++) {
        double em = 0.0;
        HF_OK(hessfit_force_get_energy_forces(alone[m].force, alone[m].context, &em, NULL));
        CHECK_CLOSE(e[m], em, 1e-12, em, "molecule energy vs the molecule alone");
        worst_alone = fmax(worst_alone, fabs(e[m] - em) / fabs(em));
        sum += e[m];
    }
    CHECK_CLOSE(sum, total, 1e-12, total, "sum of molecule energies vs the energy");
    CHECK(fabs(e[0] - e[2]) > 1e-3 * fabs(e[0]), "A and C have the same energy: the geometries do not differ");

    /* (c) */
    double w[NMOL], d[NUM_S], table[NUM_S], scale[NUM_S], fd[NUM_S], worst_fd = 0.0;
    for (int m = 0; m < NMOL; m++)
        w[m] = test_uniform(-1.0, 1.0);
    HF_OK(hessfit_force_get_molecule_energy_derivatives(all.force, all.context, w, NMOL, d, NUM_S));
    double wsum = 0.0;
    for (int m = 0; m < NMOL; m++)
        wsum += fabs(w[m] * e[m]);
    double top = 0.0;
    memcpy(table, values, sizeof table);
    for (int s = 0; s < NUM_S; s++) {
        const double h = 1e-6 * fabs(values[s]);
        table[s] = values[s] + h;
        set_table(&all, table);
        const double ep = weighted_energy(&all, w);
        table[s] = values[s] - h;
        set_table(&all, table);
        const double em = weighted_energy(&all, w);
        table[s] = values[s];
        fd[s] = (ep - em) / (2 * h);
        scale[s] = fmax(fabs(d[s]), wsum / fabs(values[s]));
        top = fmax(top, scale[s]);
    }
    set_table(&all, values);
    for (int s = 0; s < NUM_S; s++) {
        const double err = fabs(d[s] - fd[s]) / fmax(scale[s], 1e-6 * top);
        CHECK(err <= 1e-7, "slot %d: sum_m w_m dE_m/dp %.12g vs central difference %.12g (%.2e of its scale)", s, d[s],
              fd[s], err);
        worst_fd = fmax(worst_fd, err);
    }

    /* (d) */
    double worst_unit = 0.0, dm[NUM_S], dalone[NUM_S];
    for (int m = 0; m < NMOL; m++) {
        double unit[NMOL] = {0.0, 0.0, 0.0};
        unit[m] = 1.0;
        HF_OK(hessfit_force_get_molecule_energy_derivatives(all.force, all.context, unit, NMOL, dm, NUM_S));
        HF_OK(hessfit_force_get_parameter_derivatives(alone[m].force, alone[m].context, dalone, NUM_S));
        const double r = rel_diff(dm, dalone, NUM_S);
        CHECK(r <= 1e-12, "weight e_%d vs molecule %d alone: %.2e relative", m, m, r);
        worst_unit = fmax(worst_unit, r);
    }
    const double ones[NMOL] = {1.0, 1.0, 1.0};
    HF_OK(hessfit_force_get_molecule_energy_derivatives(all.force, all.context, ones, NMOL, dm, NUM_S));
    HF_OK(hessfit_force_get_parameter_derivatives(all.force, all.context, dalone, NUM_S));
    const double r_all = rel_diff(dm, dalone, NUM_S);
    CHECK(r_all <= 1e-12, "weights 1 vs dE/dp of the System: %.2e relative", r_all);

    /* (e) */
    double w1[NMOL] = {0.7, 0.0, -1.3}, w2[NMOL], d1[NUM_S], d2[NUM_S], dmix[NUM_S], lin[NUM_S], wmix[NMOL];
    HF_OK(hessfit_force_get_molecule_energy_derivatives(all.force, all.context, w1, NMOL, d1, NUM_S));
    for (size_t i = 0; i < sizeof only_b / sizeof only_b[0]; i++)
        CHECK(d1[only_b[i]] == 0.0, "B has weight 0 but its slot %d got %g", only_b[i], d1[only_b[i]]);
    for (int m = 0; m < NMOL; m++) {
        w2[m] = test_uniform(-1.0, 1.0);
        wmix[m] = 2.5 * w1[m] - 0.75 * w2[m];
    }
    HF_OK(hessfit_force_get_molecule_energy_derivatives(all.force, all.context, w2, NMOL, d2, NUM_S));
    HF_OK(hessfit_force_get_molecule_energy_derivatives(all.force, all.context, wmix, NMOL, dmix, NUM_S));
    for (int s = 0; s < NUM_S; s++)
        lin[s] = 2.5 * d1[s] - 0.75 * d2[s];
    const double r_lin = rel_diff(dmix, lin, NUM_S);
    CHECK(r_lin <= 1e-12, "linearity: %.2e relative", r_lin);

    printf("%-14s E = %.6g kJ/mol: sum of molecules %.1e, vs alone %.1e | d vs central differences %.1e | "
           "e_m vs alone %.1e, ones vs dE/dp %.1e | linearity %.1e\n",
           combining == HESSFIT_COMBINE_GEOMETRIC ? "geometric" : "LB", total, fabs(sum - total) / fabs(total),
           worst_alone, worst_fd, worst_unit, r_all, r_lin);

    /* errors */
    if (combining == HESSFIT_COMBINE_GEOMETRIC) {
        double out[NUM_S], ww[NMOL] = {1.0, 2.0, 3.0}, ee[NMOL];
        hessfit_force *f = all.force;
        OpenMM_Context *ctx = all.context;
        HF_FAILS(hessfit_force_get_molecule_energies(f, ctx, ee, NMOL - 1), HESSFIT_ERROR_SIZE);
        CHECK(strstr(hessfit_last_error(), "'energies'") != NULL, "the message does not name 'energies'");
        HF_FAILS(hessfit_force_get_molecule_energies(f, ctx, NULL, NMOL), HESSFIT_ERROR_NULL_ARGUMENT);
        HF_FAILS(hessfit_force_get_molecule_energies(f, NULL, ee, NMOL), HESSFIT_ERROR_NULL_ARGUMENT);
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(f, ctx, ww, NMOL + 1, out, NUM_S), HESSFIT_ERROR_SIZE);
        CHECK(strstr(hessfit_last_error(), "'weights'") != NULL, "the message does not name 'weights'");
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(f, ctx, ww, NMOL, out, NUM_S - 1), HESSFIT_ERROR_SIZE);
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(f, ctx, NULL, NMOL, out, NUM_S),
                 HESSFIT_ERROR_NULL_ARGUMENT);
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(f, ctx, ww, NMOL, NULL, NUM_S),
                 HESSFIT_ERROR_NULL_ARGUMENT);
        ww[2] = NAN;
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(f, ctx, ww, NMOL, out, NUM_S), HESSFIT_ERROR_VALUE);
        CHECK(strstr(hessfit_last_error(), "molecule 2") != NULL && strstr(hessfit_last_error(), "nan") != NULL,
              "the message does not name molecule 2's NaN: %s", hessfit_last_error());
        ww[2] = -INFINITY;
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(f, ctx, ww, NMOL, out, NUM_S), HESSFIT_ERROR_VALUE);
        /* molecule A's own force on the whole System's Context */
        HF_FAILS(hessfit_force_get_molecule_energies(alone[0].force, ctx, ee, 1), HESSFIT_ERROR_NOT_IN_CONTEXT);
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(alone[0].force, ctx, ww, 1, out, NUM_S),
                 HESSFIT_ERROR_NOT_IN_CONTEXT);
        /* two coincident particles of B (bonded): undefined geometry */
        double bad[3 * NP];
        memcpy(bad, pos, sizeof bad);
        memcpy(bad + 3 * particle_of(1, 1), bad + 3 * particle_of(1, 0), 3 * sizeof(double));
        test_set_positions(ctx, bad, NP);
        ww[2] = 1.0;
        HF_FAILS(hessfit_force_get_molecule_energies(f, ctx, ee, NMOL), HESSFIT_ERROR_GEOMETRY);
        HF_FAILS(hessfit_force_get_molecule_energy_derivatives(f, ctx, ww, NMOL, out, NUM_S), HESSFIT_ERROR_GEOMETRY);
        HF_FAILS(hessfit_context_minimize(ctx, 1.0, 100), HESSFIT_ERROR_GEOMETRY);
        HF_FAILS(hessfit_context_minimize(NULL, 1.0, 100), HESSFIT_ERROR_NULL_ARGUMENT);
        HF_FAILS(hessfit_context_minimize(ctx, 0.0, 100), HESSFIT_ERROR_VALUE);
        HF_FAILS(hessfit_context_minimize(ctx, NAN, 100), HESSFIT_ERROR_VALUE);
        HF_FAILS(hessfit_context_minimize(ctx, 1.0, -1), HESSFIT_ERROR_VALUE);
    } else if (strcmp(platform_name, "OpenCL") == 0) {
        /* OpenMM 8.6.1's own minimiser kernel (getScale) crashes on PoCL even for a System of stock
         * HarmonicBondForce + HarmonicAngleForce only, so it is not run on OpenCL here. */
        printf("%-14s hessfit_context_minimize: not run on OpenCL (OpenMM's minimiser crashes on PoCL)\n", "");
    } else {
        /* the minimiser lowers every molecule's energy; the RMS force ends below the tolerance */
        double before[NMOL], after[NMOL], forces[3 * NP];
        HF_OK(hessfit_force_get_molecule_energies(all.force, all.context, before, NMOL));
        HF_OK(hessfit_context_minimize(all.context, 1e-2, 0));
        HF_OK(hessfit_force_get_molecule_energies(all.force, all.context, after, NMOL));
        double e = 0.0, rms = 0.0;
        HF_OK(hessfit_force_get_energy_forces(all.force, all.context, &e, forces));
        for (int i = 0; i < 3 * NP; i++)
            rms += forces[i] * forces[i];
        rms = sqrt(rms / (3 * NP));
        for (int m = 0; m < NMOL; m++)
            CHECK(after[m] < before[m], "molecule %d: energy %g -> %g after minimising", m, before[m], after[m]);
        CHECK(rms <= 1e-2, "RMS force %g kJ/mol/nm after minimising to 1e-2", rms);
        printf("%-14s hessfit_context_minimize: molecule energies %.4g %.4g %.4g -> %.4g %.4g %.4g kJ/mol, RMS force "
               "%.2g kJ/mol/nm\n", "", before[0], before[1], before[2], after[0], after[1], after[2], rms);
    }
    for (int m = 0; m < NMOL; m++)
        setup_destroy(&alone[m]);
    setup_destroy(&all);
}

int main(int argc, char **argv) {
    platform_name = test_platform_name(argc, argv);
    printf("platform %s\n", platform_name);
    test_seed(20240611ULL);
    combining = HESSFIT_COMBINE_GEOMETRIC;
    run();
    combining = HESSFIT_COMBINE_LORENTZ_BERTHELOT;
    run();
    printf("test_molecule_energies: all checks passed\n");
    return 0;
}
