/*
 * test_platform_agreement (per GPU platform, argv[1]): that platform against the Reference platform
 * on a realistic training set -- the nine rh-enamide structures (468 atoms) typed with mm3.fld,
 * through the fit model with Lennard-Jones + Coulomb on (bonds, angles, torsions, impropers, 1-4
 * pairs and every plain nonbonded pair of each molecule), plus MM3* stretch-bends, bend-bends and
 * torsion-stretches on its angles and torsions (add_cross_terms), MM3* switched pairs
 * (add_switched_pairs) and 10-12 hydrogen bonds (add_hbonds) -- one Context per platform and
 * precision, every quantity the kernels compute, all molecules in each call:
 *
 *   energy and forces (OpenMM State), Hessian blocks, dE/dslot, tr(G^T dH/dslot) for a random G,
 *   y . d(grad E)/dslot for a random y, the molecule energies, sum_m w_m dE_m/dslot for random w,
 *   and a Hessian-space objective against the Jaguar QM Hessians (overlap-paired frequencies,
 *   eigenmatrix and Hessian elements at once): loss, dL/dslot, residuals and the pairing; then the
 *   frequency residuals' exact Jacobian for every molecule and slot (on a GPU platform its bilinear
 *   forms u^T dH/dslot u run on the device).
 *
 * The hydrogens of the first two molecules are reduced towards their nearest atoms (MacroModel's
 * reduced hydrogens, factor 0.923), so the map of the reduced particles is compared too.
 *
 * Every difference is relative to the largest entry of the Reference quantity (the energy: to the
 * sum of |molecule energies|). The GPU platform in double precision must agree to 1e-10 (and pair
 * every frequency target with the same mode); mixed and single precision to the bounds below, set
 * from the differences measured in one run (seed 0xA9EE3E47, PoCL on the CPU; listed there) times
 * about 5: float rounding depends on the order in which a device and its driver sum, which that
 * factor allows for; there is no independent source, the Reference platform is the reference.
 * Also on the GPU platform: the molecule energies sum to the energy. Exits 77 (skipped) for CUDA
 * without a device, and for Reference (nothing to compare).
 */
#include "hessfit_model.h"
#include "hessfit_objective.h"
#include "test_util.h"
#include <string.h>

#define RH_MOLS TEST_RH_MOLECULES
#define DOUBLE_TOL 1e-10

static const char *const rh_jaguar[RH_MOLS] = {
    "1ZDMPfromJCTCSI_loner1", "2DMPEConformation1fromJCTCSI_isomer1", "3DMPEConformation2fromJCTCSI_isomer2",
    "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4",
    "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6",
    "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};

/* The quantities compared, in the order of the table printed. */
enum { Q_ENERGY, Q_FORCES, Q_HESSIAN, Q_DEDP, Q_HESS_CONTRACTION, Q_GRAD_CONTRACTION, Q_MOL_ENERGIES, Q_MOL_DERIVATIVES,
       Q_LOSS, Q_DLDP, Q_RESIDUALS, Q_JACOBIAN, NUM_Q };
static const char *const q_name[NUM_Q] = {"energy", "forces", "Hessian blocks", "dE/dslot", "tr(G^T dH/dslot)",
                                          "y.d(gradE)/dslot", "molecule energies", "sum w_m dE_m/dslot",
                                          "objective loss", "dL/dslot", "residuals", "d freq. residual/dslot"};

/* Bounds for mixed and single precision, about 5x the differences measured with PoCL on this CPU
 * with the MM3* cross terms on (mixed: 1.2e-8 energy, 2.1e-6 forces, 4.4e-6 Hessian, 1.5e-6
 * dE/dslot, 7.4e-6 and 7.1e-8 the contractions, 1.3e-7 and 6.4e-6 the molecule energies and their
 * weighted derivatives, 7.4e-8 loss, 5.3e-6 dL/dslot, 3.1e-6 residuals; single: 8.5e-8, 3.5e-6,
 * 1.3e-5, 1.8e-6, 9.6e-6, 1.4e-7, 3.9e-7, 5.6e-6, then 1.6e-3 loss, 8.3e-4 dL/dslot, 0.15
 * residuals; the frequency residuals' Jacobian, on its own frequency-only objective: mixed 2.8e-7,
 * single 9.7e-3, whose pairing of nearly degenerate modes can switch as below and swap their rows). The cross terms' Hessians carry f_c Hq_c with f_c = k (theta - theta0) (a bend-bend)
 * or k (dra + drb) (a stretch-bend): in float a coordinate difference of ~0.05 rad keeps ~1e-6 of
 * its relative accuracy, where a harmonic term's Hessian is dominated by 2 k g g^T. The term math is float in
 * both; mixed forms each term's difference vectors in double and runs the objective's
 * Hessian-space arithmetic in double, single runs that in float too: its eigenvectors are good to
 * ~1e-4, so the overlap pairing of nearly degenerate modes can switch (counted and printed) and a
 * switched target's residual changes by the modes' frequency difference. */
static const double mixed_tol[NUM_Q] = {2e-7, 1e-5, 2e-5, 1e-5, 4e-5, 5e-7, 1e-6, 5e-5, 5e-6, 5e-5, 2e-5, 1.5e-6};
static const double single_tol[NUM_Q] = {1e-6, 2e-5, 6e-5, 1e-5, 5e-5, 1e-6, 2e-6, 5e-5, 1e-2, 2e-2, 0.75, 5e-2};

typedef struct {
    hessfit_forcefield ff;
    hessfit_molecule_list mmo;
    hessfit_typed_molecule typed[RH_MOLS];
    hessfit_molecule qm[RH_MOLS];
    int n, n_slots;
    long long hsize;
    double *g, *y, *w; /* the random adjoint, vector and molecule weights shared by every run */
} training_set;

typedef struct {
    double energy, loss;
    double *forces, *blocks, *dedp, *hess_c, *grad_c, *mol_e, *mol_d, *dldp, *residuals, *jacobian;
    int *pairing;
    long long n_res, n_jac;
    int n_freq;
    double seconds;
} results;

static double *alloc_doubles(long long n) {
    double *p = calloc((size_t) (n > 0 ? n : 1), sizeof(double));
    CHECK(p != NULL, "out of memory");
    return p;
}

/* max |a - b| / max |b| */
static double rel_diff(const double *a, const double *b, long long n) {
    double d = 0.0, s = 0.0;
    for (long long i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return s > 0.0 ? d / s : d;
}

/* MacroModel's reduced hydrogens in the first two molecules: every hydrogen towards its nearest atom
 * (factor 0.923), pushed into the Context (the molecules' particles are consecutive, in order). */
static void add_reduced_hydrogens(const training_set *t, hessfit_force *f, OpenMM_Context *c) {
    int first = 0, count = 0;
    for (int m = 0; m < 2; m++) {
        const hessfit_molecule *mol = &t->mmo.items[m];
        for (int h = 0; h < mol->n_atoms; h++) {
            if (mol->atomic_numbers[h] != 1)
                continue;
            int nearest = -1;
            double best = INFINITY;
            for (int a = 0; a < mol->n_atoms; a++) {
                const double d = a == h ? INFINITY : test_distance(mol->coords, h, a);
                if (d < best) {
                    best = d;
                    nearest = a;
                }
            }
            HF_OK(hessfit_force_add_reduced_particle(f, first + h, first + nearest, 0.923, NULL));
            count++;
        }
        first += mol->n_atoms;
    }
    CHECK(count > 0, "no hydrogen to reduce");
    if (t->n == 0)
        printf("%d reduced hydrogens in molecules 0 and 1\n", count);
    HF_OK(hessfit_force_update_parameters_in_context(f, c));
}

/*
 * The MM3* cross terms on top of the fit model's terms, through the force's full update path: a
 * stretch-bend on every angle (bonds to hydrogen with the distance scale 1/0.923), a bend-bend on
 * every two angles at one centre (5 particles or sharing an outer one), a torsion-stretch on every
 * torsion; slots shared by all terms of a kind. The same terms for every platform.
 */
static void add_cross_terms(const training_set *t, hessfit_force *f, OpenMM_Context *c) {
    static const double values[9] = {40.0, 0.109, 0.152, 1.91, -20.0, 1.90, 1.95, 15.0, 0.150};
    int s[9], first = 0, counts[3] = {0, 0, 0};
    for (int i = 0; i < 9; i++)
        HF_OK(hessfit_force_add_parameter(f, values[i], &s[i]));
    for (int m = 0; m < RH_MOLS; m++) {
        const hessfit_typed_molecule *tm = &t->typed[m];
        const int *z = t->mmo.items[m].atomic_numbers;
        for (int i = 0; i < tm->n_terms; i++) {
            const int *a = tm->terms[i].atoms;
            if (tm->terms[i].kind == HESSFIT_TERM_TORSION) {
                HF_OK(hessfit_force_add_mm3_torsion_stretch(f, first + a[0], first + a[1], first + a[2], first + a[3], s[7],
                                                            s[8], 0.98, NULL));
                counts[2]++;
            }
            if (tm->terms[i].kind != HESSFIT_TERM_ANGLE)
                continue;
            HF_OK(hessfit_force_add_mm3_stretch_bend(f, first + a[0], first + a[1], first + a[2], s[0], s[1], s[2], s[3],
                                                     z[a[0]] == 1 ? 1.0 / 0.923 : 1.0, z[a[2]] == 1 ? 1.0 / 0.923 : 1.0,
                                                     NULL));
            counts[0]++;
            for (int j = i + 1; j < tm->n_terms; j++) {
                const int *b = tm->terms[j].atoms;
                if (tm->terms[j].kind != HESSFIT_TERM_ANGLE || b[1] != a[1])
                    continue;
                /* a second angle sharing both outer atoms would be the same angle */
                const int shared = (b[0] == a[0] || b[0] == a[2]) + (b[2] == a[0] || b[2] == a[2]);
                if (shared > 1)
                    continue;
                HF_OK(hessfit_force_add_mm3_bend_bend(f, first + a[0], first + a[1], first + a[2], first + b[0],
                                                      first + b[2], s[4], s[5], s[6], NULL));
                counts[1]++;
            }
        }
        first += t->mmo.items[m].n_atoms;
    }
    HF_OK(hessfit_force_update_parameters_in_context(f, c));
    static int printed = 0;
    if (!printed++)
        printf("MM3* cross terms added: %d stretch-bends, %d bend-bends, %d torsion-stretches\n", counts[0], counts[1],
               counts[2]);
}

/* The nearest atom of atom h (the partner add_reduced_hydrogens reduces a hydrogen towards). */
static int nearest_atom(const hessfit_molecule *mol, int h) {
    int nearest = -1;
    double best = INFINITY;
    for (int a = 0; a < mol->n_atoms; a++) {
        const double d = a == h ? INFINITY : test_distance(mol->coords, h, a);
        if (d < best) {
            best = d;
            nearest = a;
        }
    }
    return nearest;
}

/* The bond distances of every atom pair of mol (n x n, malloc'ed), by relaxation (n is small). */
static int *bond_hops(const hessfit_molecule *mol) {
    const int n = mol->n_atoms;
    int *hops = malloc((size_t) n * n * sizeof *hops);
    CHECK(hops != NULL, "out of memory");
    for (int i = 0; i < n * n; i++)
        hops[i] = i / n == i % n ? 0 : 1000;
    for (int b = 0; b < mol->n_bonds; b++)
        hops[mol->bonds[2 * b] * n + mol->bonds[2 * b + 1]] = hops[mol->bonds[2 * b + 1] * n + mol->bonds[2 * b]] = 1;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (hops[i * n + k] + hops[k * n + j] < hops[i * n + j])
                    hops[i * n + j] = hops[i * n + k] + hops[k * n + j];
    return hops;
}

/*
 * 10-12 hydrogen bonds in all molecules: every hydrogen with every N, O or P at least 3 bonds
 * away within 5 A (the rule of the MM3* model is narrower; here only the kernels are compared),
 * C and D of the .fld's H3-O2 line in two shared slots.
 */
static void add_hbonds(const training_set *t, hessfit_force *f, OpenMM_Context *c) {
    int s[2], first = 0, count = 0;
    HF_OK(hessfit_force_add_parameter(f, 418.4 * 42.5e-12, &s[0]));
    HF_OK(hessfit_force_add_parameter(f, 418.4 * 10.0e-10, &s[1]));
    for (int m = 0; m < RH_MOLS; m++) {
        const hessfit_molecule *mol = &t->mmo.items[m];
        int *hops = bond_hops(mol);
        for (int i = 0; i < mol->n_atoms; i++)
            for (int j = 0; j < mol->n_atoms; j++) {
                const int zj = mol->atomic_numbers[j];
                if (mol->atomic_numbers[i] != 1 || (zj != 7 && zj != 8 && zj != 15) ||
                    hops[i * mol->n_atoms + j] < 3 || test_distance(mol->coords, i, j) > 5.0)
                    continue;
                HF_OK(hessfit_force_add_hydrogen_bond(f, first + i, first + j, s[0], s[1], NULL));
                count++;
            }
        free(hops);
        first += mol->n_atoms;
    }
    HF_OK(hessfit_force_update_parameters_in_context(f, c));
    static int printed = 0;
    if (!printed++)
        printf("10-12 hydrogen bonds added: %d\n", count);
    CHECK(count >= 50, "only %d hydrogen bonds", count);
}

/*
 * MM3* switched pairs in the first two molecules (those with reduced hydrogens): every pair at
 * least 5 bonds apart (so no exclusion or 1-4 pair of the fit model), switched on the true distance
 * (a hydrogen's anchor its partner with scale 1/0.923); they leave the plain sum. Three slots shared.
 */
static void add_switched_pairs(const training_set *t, hessfit_force *f, OpenMM_Context *c) {
    int s[3], first = 0, counts[3] = {0, 0, 0};
    static const double values[3] = {0.36, 0.25, 0.04};
    for (int i = 0; i < 3; i++)
        HF_OK(hessfit_force_add_parameter(f, values[i], &s[i]));
    for (int m = 0; m < 2; m++) {
        const hessfit_molecule *mol = &t->mmo.items[m];
        const int n = mol->n_atoms;
        int *hops = bond_hops(mol);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                if (hops[i * n + j] < 5)
                    continue;
                const int hi = mol->atomic_numbers[i] == 1, hj = mol->atomic_numbers[j] == 1;
                HF_OK(hessfit_force_add_mm3_switched_pair(f, first + i, first + j, first + (hi ? nearest_atom(mol, i) : i),
                                                          first + (hj ? nearest_atom(mol, j) : j), s[0], s[1], s[2],
                                                          hi ? 1.0 / 0.923 : 1.0, hj ? 1.0 / 0.923 : 1.0, NULL));
                const double r = test_distance(mol->coords, i, j); /* Angstrom */
                counts[r <= 6.0 ? 0 : r < 8.0 ? 1 : 2]++;
            }
        free(hops);
        first += n;
    }
    HF_OK(hessfit_force_update_parameters_in_context(f, c));
    static int printed = 0;
    if (!printed++)
        printf("MM3* switched pairs added: %d inside 6 A, %d in the switch, %d beyond 8 A\n", counts[0], counts[1],
               counts[2]);
    CHECK(counts[0] > 0 && counts[1] > 0, "switched pairs: %d inside 6 A, %d in the switch", counts[0], counts[1]);
}

static void evaluate(training_set *t, const char *platform, const char *precision, results *r) {
    const double start = test_now_s();
    hessfit_model_options opt = hessfit_model_default_options();
    opt.platform = platform;
    opt.precision = precision;
    opt.nonbonded = 1;
    hessfit_model *model;
    HF_CALL(hessfit_model_create(&t->ff, t->mmo.items, t->typed, RH_MOLS, &opt, &model));
    hessfit_force *f = hessfit_model_force(model);
    OpenMM_Context *c = hessfit_model_context(model);
    add_reduced_hydrogens(t, f, c);
    add_cross_terms(t, f, c);
    add_switched_pairs(t, f, c);
    add_hbonds(t, f, c);
    if (t->n == 0) {
        t->n = hessfit_model_n_particles(model);
        HF_OK(hessfit_force_get_num_parameters(f, &t->n_slots));
        HF_OK(hessfit_force_get_hessian_size(f, &t->hsize));
        t->g = alloc_doubles(t->hsize);
        t->y = alloc_doubles(3 * t->n);
        t->w = alloc_doubles(RH_MOLS);
        for (long long i = 0; i < t->hsize; i++)
            t->g[i] = test_uniform(-1.0, 1.0);
        for (int i = 0; i < 3 * t->n; i++)
            t->y[i] = test_uniform(-1.0, 1.0);
        for (int m = 0; m < RH_MOLS; m++)
            t->w[m] = test_uniform(-2.0, 2.0);
    }
    r->forces = alloc_doubles(3 * t->n);
    r->blocks = alloc_doubles(t->hsize);
    r->dedp = alloc_doubles(t->n_slots);
    r->hess_c = alloc_doubles(t->n_slots);
    r->grad_c = alloc_doubles(t->n_slots);
    r->mol_e = alloc_doubles(RH_MOLS);
    r->mol_d = alloc_doubles(t->n_slots);
    r->dldp = alloc_doubles(t->n_slots);
    HF_OK(hessfit_force_get_energy_forces(f, c, &r->energy, r->forces));
    HF_OK(hessfit_force_get_hessian_blocks(f, c, r->blocks, t->hsize));
    HF_OK(hessfit_force_get_parameter_derivatives(f, c, r->dedp, t->n_slots));
    HF_OK(hessfit_force_get_hessian_contraction_derivatives(f, c, t->g, t->hsize, r->hess_c, t->n_slots));
    HF_OK(hessfit_force_get_gradient_contraction_derivatives(f, c, t->y, 3 * t->n, r->grad_c, t->n_slots));
    HF_OK(hessfit_force_get_molecule_energies(f, c, r->mol_e, RH_MOLS));
    HF_OK(hessfit_force_get_molecule_energy_derivatives(f, c, t->w, RH_MOLS, r->mol_d, t->n_slots));

    /* the objective: the fit layer builds the targets from the QM Hessians and sets them */
    hessfit_objective_options o[RH_MOLS];
    for (int m = 0; m < RH_MOLS; m++) {
        o[m] = hessfit_objective_default_options();
        o[m].frequencies = HESSFIT_OBJ_FREQUENCIES_OVERLAP;
        o[m].eigenmatrix = 1;
        o[m].hessian = 1;
    }
    hessfit_objective *obj;
    HF_CALL(hessfit_objective_create(model, t->qm, RH_MOLS, o, &obj));
    HF_OK(hessfit_force_get_hessian_objective_size(f, c, &r->n_res, &r->n_freq));
    r->residuals = alloc_doubles(r->n_res);
    r->pairing = calloc((size_t) r->n_freq + 1, sizeof(int));
    CHECK(r->pairing != NULL, "out of memory");
    HF_OK(hessfit_force_compute_hessian_objective(f, c, &r->loss, r->dldp, t->n_slots, r->residuals, r->n_res));
    HF_OK(hessfit_force_get_hessian_objective_pairing(f, c, r->pairing, r->n_freq));
    hessfit_objective_destroy(obj);

    /* the residual Jacobian of the frequencies alone (the eigenmatrix's and Hessian elements' 2 x 12,000
     * rows per molecule would take minutes on a CPU OpenCL device), every molecule, every slot: on a
     * GPU platform the bilinear forms u^T dH/dslot u run on the device */
    for (int m = 0; m < RH_MOLS; m++)
        o[m].eigenmatrix = o[m].hessian = 0;
    HF_CALL(hessfit_objective_create(model, t->qm, RH_MOLS, o, &obj));
    long long n_freq_res = 0;
    int n_freq = 0;
    HF_OK(hessfit_force_get_hessian_objective_size(f, c, &n_freq_res, &n_freq));
    double freq_loss = 0.0;
    HF_OK(hessfit_force_compute_hessian_objective(f, c, &freq_loss, NULL, 0, NULL, 0));
    int molecules[RH_MOLS];
    for (int m = 0; m < RH_MOLS; m++)
        molecules[m] = m;
    r->n_jac = n_freq_res * t->n_slots;
    r->jacobian = alloc_doubles(r->n_jac);
    double *jac_res = alloc_doubles(n_freq_res);
    HF_OK(hessfit_force_compute_hessian_objective_jacobians(f, c, molecules, RH_MOLS, NULL, 0, jac_res, n_freq_res,
                                                            r->jacobian, r->n_jac));
    free(jac_res);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
    r->seconds = test_now_s() - start;
}

static void free_results(results *r) {
    double *arrays[] = {r->forces,   r->blocks, r->dedp,      r->hess_c,  r->grad_c,
                        r->mol_e,    r->mol_d,  r->dldp,      r->residuals, r->jacobian};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(r->pairing);
}

/* diff[q] = the relative difference of quantity q between a run and the Reference run. */
static void compare(const training_set *t, const results *a, const results *ref, double diff[NUM_Q]) {
    double sum_abs = 0.0;
    for (int m = 0; m < RH_MOLS; m++)
        sum_abs += fabs(ref->mol_e[m]);
    CHECK(a->n_res == ref->n_res && a->n_freq == ref->n_freq, "objective sizes %lld/%d vs %lld/%d", a->n_res, a->n_freq,
          ref->n_res, ref->n_freq);
    diff[Q_ENERGY] = fabs(a->energy - ref->energy) / sum_abs;
    diff[Q_FORCES] = rel_diff(a->forces, ref->forces, 3 * t->n);
    diff[Q_HESSIAN] = rel_diff(a->blocks, ref->blocks, t->hsize);
    diff[Q_DEDP] = rel_diff(a->dedp, ref->dedp, t->n_slots);
    diff[Q_HESS_CONTRACTION] = rel_diff(a->hess_c, ref->hess_c, t->n_slots);
    diff[Q_GRAD_CONTRACTION] = rel_diff(a->grad_c, ref->grad_c, t->n_slots);
    diff[Q_MOL_ENERGIES] = rel_diff(a->mol_e, ref->mol_e, RH_MOLS);
    diff[Q_MOL_DERIVATIVES] = rel_diff(a->mol_d, ref->mol_d, t->n_slots);
    diff[Q_LOSS] = fabs(a->loss - ref->loss) / fabs(ref->loss);
    diff[Q_DLDP] = rel_diff(a->dldp, ref->dldp, t->n_slots);
    diff[Q_RESIDUALS] = rel_diff(a->residuals, ref->residuals, a->n_res);
    CHECK(a->n_jac == ref->n_jac, "Jacobian sizes %lld vs %lld", a->n_jac, ref->n_jac);
    diff[Q_JACOBIAN] = rel_diff(a->jacobian, ref->jacobian, a->n_jac);
}

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    if (strcmp(platform, "Reference") == 0) {
        printf("the Reference platform is what the GPU platforms are compared with: skipped\n");
        return TEST_SKIPPED;
    }
    test_seed(0xA9EE3E47ULL);
    training_set t;
    memset(&t, 0, sizeof t);
    test_type_rh_enamide(&t.ff, &t.mmo, t.typed);
    for (int m = 0; m < RH_MOLS; m++) {
        char rel[256];
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(rel), &t.qm[m]));
    }

    static const char *const precisions[3] = {"double", "mixed", "single"};
    results ref, run[3];
    evaluate(&t, "Reference", NULL, &ref);
    printf("rh-enamide, 9 molecules: %d atoms, %d slots, Hessian %lld doubles, %lld residuals, %d frequency targets\n",
           t.n, t.n_slots, t.hsize, ref.n_res, ref.n_freq);
    printf("Reference: energy %.12g kJ/mol, loss %.12g (%.2f s)\n", ref.energy, ref.loss, ref.seconds);
    double diff[3][NUM_Q];
    for (int p = 0; p < 3; p++) {
        evaluate(&t, platform, precisions[p], &run[p]);
        compare(&t, &run[p], &ref, diff[p]);
        double sum = 0.0;
        for (int m = 0; m < RH_MOLS; m++)
            sum += run[p].mol_e[m];
        CHECK_CLOSE(sum, run[p].energy, p == 0 ? 1e-12 : 1e-6, fabs(run[p].energy), "molecule energies vs energy");
        printf("%s %-6s: energy %.12g kJ/mol, loss %.12g (%.2f s)\n", platform, precisions[p], run[p].energy,
               run[p].loss, run[p].seconds);
    }
    printf("\n%-22s %12s %12s %12s   (max |%s - Reference| / max |Reference|)\n", "quantity", "double", "mixed",
           "single", platform);
    for (int q = 0; q < NUM_Q; q++)
        printf("%-22s %12.3g %12.3g %12.3g\n", q_name[q], diff[0][q], diff[1][q], diff[2][q]);
    int same_pairing[3] = {0, 0, 0};
    for (int p = 0; p < 3; p++)
        for (int k = 0; k < ref.n_freq; k++)
            same_pairing[p] += run[p].pairing[k] == ref.pairing[k];
    printf("%-22s %12d %12d %12d   (of %d targets, paired with the Reference's mode)\n", "frequency pairing",
           same_pairing[0], same_pairing[1], same_pairing[2], ref.n_freq);

    for (int q = 0; q < NUM_Q; q++) {
        CHECK(diff[0][q] <= DOUBLE_TOL, "double precision: %s differs by %.3g > %g", q_name[q], diff[0][q], DOUBLE_TOL);
        CHECK(diff[1][q] <= mixed_tol[q], "mixed precision: %s differs by %.3g > %g", q_name[q], diff[1][q], mixed_tol[q]);
        CHECK(diff[2][q] <= single_tol[q], "single precision: %s differs by %.3g > %g", q_name[q], diff[2][q],
              single_tol[q]);
    }
    CHECK(same_pairing[0] == ref.n_freq, "double precision paired %d of %d frequency targets alike", same_pairing[0],
          ref.n_freq);

    free_results(&ref);
    for (int p = 0; p < 3; p++)
        free_results(&run[p]);
    free(t.g);
    free(t.y);
    free(t.w);
    for (int m = 0; m < RH_MOLS; m++) {
        hessfit_typed_molecule_free(&t.typed[m]);
        hessfit_molecule_free(&t.qm[m]);
    }
    hessfit_molecule_list_free(&t.mmo);
    hessfit_forcefield_free(&t.ff);
    printf("test_platform_agreement: OK\n");
    return 0;
}
