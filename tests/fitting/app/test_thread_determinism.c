/*
 * test_thread_determinism: the Reference objective kernel runs its molecules in threads
 * (core/src/hf_objective.c); its results must not depend on how many, bit for bit.
 * Also (b), the kernel's finite gradient at a paired zero eigenvalue, on a fixture of its own.
 *
 *  (a) Through the C API, five molecules of 9 to 15 atoms (stock_molecules.h: cyclopentane,
 *      1-butanol, propane, butane, ethanol) with bonds, angles, periodic torsions and nonbonded
 *      pairs, and every kind of target: overlap-paired projected frequencies with Hessian
 *      elements, position-paired unprojected frequencies with the eigenmatrix, the eigenmatrix
 *      alone, all three together, and a molecule without targets. The targets come from the
 *      analytic Hessians at the start parameters (frequencies and Hessian scaled by random factors),
 *      the evaluation is at parameters moved by up to 5 %. With HESSFIT_NUM_THREADS = 1, 2, 3, 8
 *      (more threads than molecules) and 'two' (not a number: a warning, then OpenMP's count) the
 *      loss, dL/dslot, the residuals and the pairing are bit-identical (memcmp), the gradient
 *      also after the position-paired selection was made. And the molecules are independent:
 *      dL/dslot equals the sum, in molecule order, of those of five objectives with one molecule's
 *      targets each (==), the residuals are their residuals, and every loss is the sum of its
 *      squared residuals in order (==; the fit's report sums them so).
 *  (b) A frequency target paired (by position, selected at k > 0) with a mode whose eigenvalue is
 *      exactly 0 (a diatomic whose bond k then goes to 0, the Hessian 0): the frequency has no
 *      derivative there (dnu/dl = F / (2 sqrt|l|)); the kernel takes |l| as the eigenvalue of
 *      1 cm^-1, so the loss is w^2 t^2, dL/dk finite and not 0 (its sign is that of v^T dA/dk v for
 *      whichever unit vector the eigensolver returns for the zero matrix), dL/dr0 = 0 (k = 0), with
 *      1 and 2 threads alike. (A NaN gradient stopped an rh-enamide fit before.)
 *  (c) The hessfit program on the nine rh-enamide structures (468 atoms, 146 free values):
 *      12 L-BFGS evaluations of the overlap frequency objective and of frequencies-q2mm with
 *      HESSFIT_NUM_THREADS = 1 and 2 write the same checkpoint (best loss and every value as
 *      %.17g), byte for byte.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "stock_molecules.h"
#include "test_util.h"

#include <string.h>

#define N_MOLS 5
#define MAX_DIM (3 * 15)

typedef struct {
    sm_mol mol;
    sm_pair pair;
    int n_slots;
    long long hsize;
    double *start;        /* the start parameters */
} System;

/* Per molecule: the targets' storage (the objective keeps copies). */
typedef struct {
    int n, dim;
    double masses[15];
    double freq[MAX_DIM], freq_w[MAX_DIM], vectors[MAX_DIM * MAX_DIM];
    double eig_target[MAX_DIM * MAX_DIM], eig_w[MAX_DIM * MAX_DIM];
    double hess_target[MAX_DIM * MAX_DIM], hess_w[MAX_DIM * MAX_DIM];
    hessfit_molecule_objective obj;
} Targets;

/* What one evaluation gives. */
typedef struct {
    double loss;
    double *grad;
    double *res;
    long long n_res;
    int *pairing;
    int n_freq;
} Result;

static void build(System *s)
{
    static const double dihedrals[] = {178.0, 63.0, -70.0};
    sm_init(&s->mol);
    sm_add_ring(&s->mol, 5, 0.0);
    sm_add_chain(&s->mol, "CCCO", dihedrals, 2.0);
    sm_add_chain(&s->mol, "CCC", dihedrals, 4.0);
    sm_add_chain(&s->mol, "CCCC", dihedrals + 1, 6.0);
    sm_add_chain(&s->mol, "CCO", dihedrals, 8.0);
    CHECK(s->mol.n_molecules == N_MOLS, "%d molecules", s->mol.n_molecules);
    sm_perturb(&s->mol, 0.004);
    sm_pair_create(&s->pair, &s->mol);
    sm_add_hf_particles(&s->pair, &s->mol, 1, 0);
    sm_add_bonds(&s->pair, &s->mol);
    sm_add_angles(&s->pair, &s->mol);
    sm_add_periodic_torsions(&s->pair, &s->mol);
    int bonds[2 * SM_MAX_BONDS];
    for (int b = 0; b < s->mol.n_bonds; b++) {
        bonds[2 * b] = s->mol.bonds[b][0];
        bonds[2 * b + 1] = s->mol.bonds[b][1];
    }
    HF_OK(hessfit_force_create_exclusions_from_bonds(s->pair.hf, bonds, s->mol.n_bonds));
    sm_add_stock(&s->pair, (OpenMM_Force *)sm_stock_nonbonded(&s->mol));
    sm_pair_open(&s->pair, "Reference", s->mol.pos, 0.001);
    HF_OK(hessfit_force_get_num_parameters(s->pair.hf, &s->n_slots));
    HF_OK(hessfit_force_get_hessian_size(s->pair.hf, &s->hsize));
    s->start = malloc((size_t)s->n_slots * sizeof *s->start);
    CHECK(s->start != NULL, "out of memory");
    HF_OK(hessfit_force_get_parameters(s->pair.hf, s->start, s->n_slots));
}

static void set_parameters(System *s, const double *p)
{
    HF_OK(hessfit_force_set_parameters(s->pair.hf, p, s->n_slots));
    HF_OK(hessfit_force_update_parameters_in_context(s->pair.hf, s->pair.our_ctx));
}

/* Targets from the Hessians at the current parameters. Molecule m gets kinds[m]: a bit mask of
 * 1 overlap-paired projected frequencies, 2 position-paired unprojected, 4 eigenmatrix, 8 Hessian. */
static void make_targets(System *s, const int kinds[N_MOLS], Targets t[N_MOLS])
{
    double *blocks = malloc((size_t)s->hsize * sizeof *blocks);
    CHECK(blocks != NULL, "out of memory");
    HF_OK(hessfit_force_get_hessian_blocks(s->pair.hf, s->pair.our_ctx, blocks, s->hsize));
    const double factor = hessfit_frequency_factor_kj_mol_nm2_amu();
    for (int m = 0; m < N_MOLS; m++) {
        Targets *tm = &t[m];
        const int first = s->mol.mol_first[m];
        long long offset;
        HF_OK(hessfit_force_get_hessian_block_offset(s->pair.hf, m, &offset));
        tm->n = s->mol.mol_first[m + 1] - first;
        tm->dim = 3 * tm->n;
        CHECK(tm->dim <= MAX_DIM, "molecule %d: %d atoms", m, tm->n);
        memcpy(tm->masses, s->mol.mass + first, (size_t)tm->n * sizeof(double));
        const int dim = tm->dim;
        const double *h = blocks + offset;
        double all_f[MAX_DIM], modes[MAX_DIM * MAX_DIM];
        HF_CALL(hessfit_vib_analyse(h, tm->masses, s->mol.pos + 3 * first, tm->n, factor, 0, all_f, modes, NULL));
        hessfit_molecule_objective_init(&tm->obj);
        tm->obj.masses = tm->masses;
        tm->obj.n_masses = tm->n;
        if (kinds[m] & 3) {
            /* the 3n - 6 highest modes: targets (scaled by 0.9 to 1.1) and, for overlap, vectors */
            const int nf = dim - 6;
            for (int k = 0; k < nf; k++) {
                tm->freq[k] = all_f[6 + k] * test_uniform(0.9, 1.1);
                tm->freq_w[k] = 0.001 * test_uniform(0.5, 1.5);
            }
            memcpy(tm->vectors, modes + 6 * dim, (size_t)nf * (size_t)dim * sizeof(double));
            tm->obj.frequency_pairing = kinds[m] & 1 ? HESSFIT_PAIR_BY_OVERLAP : HESSFIT_PAIR_BY_POSITION;
            tm->obj.project_external = kinds[m] & 1;
            tm->obj.frequency_targets = tm->freq;
            tm->obj.n_frequency_targets = nf;
            tm->obj.frequency_weights = tm->freq_w;
            tm->obj.n_frequency_weights = nf;
            if (kinds[m] & 1) {
                tm->obj.frequency_vectors = tm->vectors;
                tm->obj.n_frequency_vectors = (long long)nf * dim;
            }
        }
        if (kinds[m] & 4) {
            /* V = all modes; targets: their eigenvalues (scaled) on the diagonal, 0 off it */
            for (int a = 0; a < dim; a++)
                for (int b = 0; b < dim; b++) {
                    const double l = all_f[a] / factor;
                    tm->eig_target[a * dim + b] = a == b ? (l < 0 ? -l * l : l * l) * test_uniform(0.9, 1.1) : 0.0;
                    tm->eig_w[a * dim + b] = (a == b ? 0.1 : 0.05) * test_uniform(0.5, 1.5);
                }
            memcpy(tm->vectors, modes, (size_t)dim * (size_t)dim * sizeof(double));
            tm->obj.eigen_vectors = tm->vectors;
            tm->obj.n_eigen_vectors = (long long)dim * dim;
            tm->obj.eigen_targets = tm->eig_target;
            tm->obj.n_eigen_targets = (long long)dim * dim;
            tm->obj.eigen_weights = tm->eig_w;
            tm->obj.n_eigen_weights = (long long)dim * dim;
            CHECK(!(kinds[m] & 1), "overlap vectors and eigenmatrix vectors share storage in this test");
        }
        if (kinds[m] & 8) {
            for (int i = 0; i < dim * dim; i++) {
                tm->hess_target[i] = h[i] * test_uniform(0.9, 1.1);
                tm->hess_w[i] = 1e-3 * test_uniform(0.5, 1.5);
            }
            tm->obj.hessian_targets = tm->hess_target;
            tm->obj.n_hessian_targets = (long long)dim * dim;
            tm->obj.hessian_weights = tm->hess_w;
            tm->obj.n_hessian_weights = (long long)dim * dim;
        }
    }
    free(blocks);
}

/* Sets the objective of the molecules whose bit is in `only` (the others get none). */
static void set_objective(System *s, const Targets t[N_MOLS], unsigned only)
{
    hessfit_molecule_objective objs[N_MOLS];
    for (int m = 0; m < N_MOLS; m++) {
        objs[m] = t[m].obj;
        if (!(only & (1u << m))) {
            hessfit_molecule_objective_init(&objs[m]);
            objs[m].masses = t[m].masses;
            objs[m].n_masses = t[m].n;
        }
    }
    HF_OK(hessfit_force_set_hessian_objective(s->pair.hf, s->pair.our_ctx, objs, N_MOLS,
                                              hessfit_frequency_factor_kj_mol_nm2_amu()));
}

static Result evaluate(System *s, const char *threads)
{
    Result r;
    memset(&r, 0, sizeof r);
    if (threads != NULL)
        CHECK(setenv("HESSFIT_NUM_THREADS", threads, 1) == 0, "setenv");
    else
        unsetenv("HESSFIT_NUM_THREADS");
    HF_OK(hessfit_force_get_hessian_objective_size(s->pair.hf, s->pair.our_ctx, &r.n_res, &r.n_freq));
    r.grad = malloc((size_t)s->n_slots * sizeof *r.grad);
    r.res = malloc((size_t)(r.n_res > 0 ? r.n_res : 1) * sizeof *r.res);
    r.pairing = malloc((size_t)(r.n_freq > 0 ? r.n_freq : 1) * sizeof *r.pairing);
    CHECK(r.grad && r.res && r.pairing, "out of memory");
    HF_OK(hessfit_force_compute_hessian_objective(s->pair.hf, s->pair.our_ctx, &r.loss, r.grad, s->n_slots, r.res,
                                                  r.n_res));
    if (r.n_freq > 0)
        HF_OK(hessfit_force_get_hessian_objective_pairing(s->pair.hf, s->pair.our_ctx, r.pairing, r.n_freq));
    unsetenv("HESSFIT_NUM_THREADS");
    return r;
}

static void result_free(Result *r)
{
    free(r->grad);
    free(r->res);
    free(r->pairing);
}

static void expect_identical(const Result *a, const Result *b, int n_slots, const char *what)
{
    CHECK(memcmp(&a->loss, &b->loss, sizeof a->loss) == 0, "%s: loss %.17g vs %.17g", what, a->loss, b->loss);
    CHECK(a->n_res == b->n_res && a->n_freq == b->n_freq, "%s: sizes", what);
    for (int i = 0; i < n_slots; i++)
        CHECK(memcmp(&a->grad[i], &b->grad[i], sizeof(double)) == 0, "%s: dL/dslot %d: %.17g vs %.17g", what, i,
              a->grad[i], b->grad[i]);
    for (long long i = 0; i < a->n_res; i++)
        CHECK(memcmp(&a->res[i], &b->res[i], sizeof(double)) == 0, "%s: residual %lld: %.17g vs %.17g", what, i,
              a->res[i], b->res[i]);
    CHECK(a->n_freq == 0 || memcmp(a->pairing, b->pairing, (size_t)a->n_freq * sizeof(int)) == 0, "%s: pairing",
          what);
}

/* Molecule m's residual count for its target kinds (make_targets). */
static long long residuals_of(const Targets *t, int kinds)
{
    const long long dim = t->dim, tri = dim * (dim + 1) / 2;
    return (kinds & 3 ? dim - 6 : 0) + (kinds & 4 ? tri : 0) + (kinds & 8 ? tri : 0);
}

/* The residual Jacobian of every molecule in one call (the list in reverse order), at each thread
 * count, equals the one-molecule calls' (made with 1 thread) concatenated in list order (memcmp). */
static void expect_jacobian_threads(System *s, const Targets t[N_MOLS], const int kinds[N_MOLS],
                                    const char *const *counts, int n_counts)
{
    int list[N_MOLS];
    long long n_res[N_MOLS], total = 0;
    for (int m = 0; m < N_MOLS; m++) {
        list[m] = N_MOLS - 1 - m;
        n_res[m] = residuals_of(&t[m], kinds[m]);
        total += n_res[m];
    }
    const size_t ns = (size_t)s->n_slots;
    double *res = malloc((size_t)total * sizeof *res), *jac = malloc((size_t)total * ns * sizeof *jac);
    double *want_res = malloc((size_t)total * sizeof *res), *want_jac = malloc((size_t)total * ns * sizeof *jac);
    CHECK(res && jac && want_res && want_jac, "out of memory");
    CHECK(setenv("HESSFIT_NUM_THREADS", "1", 1) == 0, "setenv");
    long long at = 0;
    for (int p = 0; p < N_MOLS; p++) {
        const int m = list[p];
        HF_OK(hessfit_force_compute_hessian_objective_jacobian(s->pair.hf, s->pair.our_ctx, m, NULL, 0, want_res + at,
                                                               n_res[m], want_jac + (size_t)at * ns,
                                                               n_res[m] * s->n_slots));
        at += n_res[m];
    }
    for (int c = 0; c < n_counts; c++) {
        CHECK(setenv("HESSFIT_NUM_THREADS", counts[c], 1) == 0, "setenv");
        HF_OK(hessfit_force_compute_hessian_objective_jacobians(s->pair.hf, s->pair.our_ctx, list, N_MOLS, NULL, 0, res,
                                                                total, jac, total * s->n_slots));
        CHECK(memcmp(res, want_res, (size_t)total * sizeof *res) == 0 &&
                  memcmp(jac, want_jac, (size_t)total * ns * sizeof *jac) == 0,
              "HESSFIT_NUM_THREADS=%s: the molecules' Jacobian in one call differs from the one-molecule calls'",
              counts[c]);
    }
    unsetenv("HESSFIT_NUM_THREADS");
    printf("  the Jacobian of all molecules in one call (%lld residuals x %d slots), HESSFIT_NUM_THREADS=", total,
           s->n_slots);
    for (int c = 0; c < n_counts; c++)
        printf("%s%s", counts[c], c + 1 < n_counts ? ", " : "");
    printf(": bit-identical to the one-molecule calls\n");
    free(res);
    free(jac);
    free(want_res);
    free(want_jac);
}

static void test_kernel(void)
{
    System s;
    Targets *t = calloc(N_MOLS, sizeof *t);
    CHECK(t != NULL, "out of memory");
    test_seed(20261121);
    build(&s);
    /* cyclopentane: overlap + Hessian; butanol: position + eigenmatrix; propane: eigenmatrix;
     * butane: position + eigenmatrix + Hessian; ethanol: none */
    static const int kinds[N_MOLS] = {1 | 8, 2 | 4, 4, 2 | 4 | 8, 0};
    make_targets(&s, kinds, t);
    double *moved = malloc((size_t)s.n_slots * sizeof *moved);
    CHECK(moved != NULL, "out of memory");
    for (int i = 0; i < s.n_slots; i++)
        moved[i] = s.start[i] * (1.0 + 0.05 * test_uniform(-1.0, 1.0));
    set_parameters(&s, moved);
    printf("kernel: %d molecules (%d to %d atoms, %d particles), %d slots\n", N_MOLS, t[4].n, t[0].n, s.mol.n,
           s.n_slots);

    /* the thread counts */
    set_objective(&s, t, (1u << N_MOLS) - 1);
    static const char *const counts[] = {"1", "2", "3", "8", "two"};
    Result one = evaluate(&s, counts[0]);
    double gmax = test_max_abs(one.grad, (size_t)s.n_slots);
    int nonzero = 0;
    for (int i = 0; i < s.n_slots; i++)
        nonzero += one.grad[i] != 0.0;
    printf("  HESSFIT_NUM_THREADS=1: loss %.17g, %lld residuals, %d frequency targets, max |dL/dslot| %.3g "
           "(%d of %d nonzero)\n", one.loss, one.n_res, one.n_freq, gmax, nonzero, s.n_slots);
    CHECK(one.loss > 0.0 && gmax > 0.0 && nonzero > s.n_slots / 2, "a trivial objective");
    for (size_t c = 1; c < sizeof counts / sizeof counts[0]; c++) {
        Result other = evaluate(&s, counts[c]);
        char what[64];
        snprintf(what, sizeof what, "HESSFIT_NUM_THREADS=%s vs 1", counts[c]);
        expect_identical(&one, &other, s.n_slots, what);
        printf("  %s: loss, %d dL/dslot, %lld residuals, %d pairings bit-identical\n", what, s.n_slots, other.n_res,
               other.n_freq);
        result_free(&other);
    }
    /* a second evaluation (the position-paired selection made) with 2 threads, and with 1 */
    Result again2 = evaluate(&s, "2"), again1 = evaluate(&s, "1");
    expect_identical(&again1, &again2, s.n_slots, "second evaluation, 2 vs 1 threads");
    expect_identical(&one, &again1, s.n_slots, "second evaluation vs first");
    printf("  a second evaluation: identical again (and to the first)\n");
    result_free(&again1);
    result_free(&again2);
    expect_jacobian_threads(&s, t, kinds, counts, (int)(sizeof counts / sizeof counts[0]));

    /* the molecules are independent: sums of one-molecule objectives, in molecule order */
    double *grad_sum = calloc((size_t)s.n_slots, sizeof *grad_sum);
    CHECK(grad_sum != NULL, "out of memory");
    long long res_at = 0;
    for (int m = 0; m < N_MOLS; m++) {
        set_objective(&s, t, 1u << m);
        Result single = evaluate(&s, "2");
        double squares = 0.0;
        for (long long i = 0; i < single.n_res; i++)
            squares += single.res[i] * single.res[i];
        CHECK(single.loss == squares, "molecule %d: loss %.17g, sum of squared residuals %.17g", m, single.loss,
              squares);
        for (int i = 0; i < s.n_slots; i++)
            grad_sum[i] += single.grad[i];
        for (long long i = 0; i < single.n_res; i++)
            CHECK(single.res[i] == one.res[res_at + i], "molecule %d: residual %lld: %.17g vs %.17g", m, i,
                  single.res[i], one.res[res_at + i]);
        res_at += single.n_res;
        printf("  molecule %d alone: loss %.17g, %lld residuals\n", m, single.loss, single.n_res);
        result_free(&single);
    }
    CHECK(res_at == one.n_res, "%lld residuals in the parts, %lld in all", res_at, one.n_res);
    double squares = 0.0;
    for (long long i = 0; i < one.n_res; i++)
        squares += one.res[i] * one.res[i];
    CHECK(squares == one.loss, "sum of the squared residuals %.17g vs the loss %.17g", squares, one.loss);
    for (int i = 0; i < s.n_slots; i++)
        CHECK(grad_sum[i] == one.grad[i], "slot %d: sum of the molecules' dL/dslot %.17g vs %.17g", i, grad_sum[i],
              one.grad[i]);
    printf("  every dL/dslot equals the sum over the molecules alone, the residuals theirs, each loss the sum of its "
           "squared residuals (==)\n");
    free(grad_sum);
    result_free(&one);
    free(moved);
    free(s.start);
    free(t);
    sm_pair_destroy(&s.pair);
}

/* ---- a paired mode at eigenvalue 0 ------------------------------------------------------------- */

static void test_zero_mode(void)
{
    const double pos[6] = {0.0, 0.0, 0.0, 0.1, 0.02, -0.01}, masses[2] = {12.0, 15.995};
    double target = 1500.0, weight = 0.001;
    OpenMM_System *system = OpenMM_System_create();
    hessfit_force *force;
    OpenMM_Integrator *integrator;
    int k_slot, r0_slot, index;
    HF_OK(hessfit_force_create(&force));
    for (int a = 0; a < 2; a++) {
        OpenMM_System_addParticle(system, masses[a]);
        HF_OK(hessfit_force_add_particle(force, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, &index));
    }
    HF_OK(hessfit_force_add_parameter(force, 2e5, &k_slot));
    HF_OK(hessfit_force_add_parameter(force, 0.11, &r0_slot));
    HF_OK(hessfit_force_add_bond(force, 0, 1, k_slot, r0_slot, NULL));
    HF_OK(hessfit_force_add_to_system(force, system, NULL));
    OpenMM_Context *context = test_create_context(system, "Reference", pos, 2, 0.001, &integrator);
    hessfit_molecule_objective obj;
    hessfit_molecule_objective_init(&obj);
    obj.masses = masses;
    obj.n_masses = 2;
    obj.frequency_pairing = HESSFIT_PAIR_BY_POSITION;
    obj.frequency_targets = &target;
    obj.n_frequency_targets = 1;
    obj.frequency_weights = &weight;
    obj.n_frequency_weights = 1;
    HF_OK(hessfit_force_set_hessian_objective(force, context, &obj, 1, hessfit_frequency_factor_kj_mol_nm2_amu()));
    double loss, grad[2], first_grad[2], first_loss = 0.0;
    int mode;
    HF_OK(hessfit_force_compute_hessian_objective(force, context, &loss, grad, 2, NULL, 0)); /* selects the stretch */
    HF_OK(hessfit_force_get_hessian_objective_pairing(force, context, &mode, 1));
    CHECK(mode == 5, "the stretch is mode %d, expected 5 (after five zero modes)", mode);
    const double zero[2] = {0.0, 0.11};
    HF_OK(hessfit_force_set_parameters(force, zero, 2));
    HF_OK(hessfit_force_update_parameters_in_context(force, context));
    for (int t = 1; t <= 2; t++) {
        CHECK(setenv("HESSFIT_NUM_THREADS", t == 1 ? "1" : "2", 1) == 0, "setenv");
        HF_OK(hessfit_force_compute_hessian_objective(force, context, &loss, grad, 2, NULL, 0));
        unsetenv("HESSFIT_NUM_THREADS");
        if (t == 1) {
            first_loss = loss;
            memcpy(first_grad, grad, sizeof grad);
        }
    }
    printf("zero mode: k = 0, the paired eigenvalue 0: loss %.17g (w^2 t^2 = %.17g), dL/dk %.6g, dL/dr0 %.6g\n",
           loss, weight * weight * target * target, grad[0], grad[1]);
    CHECK(loss == weight * weight * target * target, "loss %.17g", loss);
    CHECK(isfinite(grad[0]) && grad[0] != 0.0 && grad[1] == 0.0, "dL/dk %g, dL/dr0 %g", grad[0], grad[1]);
    CHECK(memcmp(&first_loss, &loss, sizeof loss) == 0 && memcmp(first_grad, grad, sizeof grad) == 0,
          "1 and 2 threads differ");
    OpenMM_Context_destroy(context);
    OpenMM_Integrator_destroy(integrator);
    hessfit_force_destroy(force);
    OpenMM_System_destroy(system);
}

/* ---- the hessfit program on rh-enamide --------------------------------------------------------- */

static char *fit_checkpoint(const char *hessfit, const char *input, const char *name, const char *threads)
{
    char args[4096];
    const char *dir = test_temp_path(name);
    CHECK(setenv("HESSFIT_NUM_THREADS", threads, 1) == 0, "setenv");
    snprintf(args, sizeof args, "fit '%s' --output '%s'", input, dir);
    test_run_result r = test_run_program(hessfit, args);
    unsetenv("HESSFIT_NUM_THREADS");
    char what[128];
    snprintf(what, sizeof what, "%s, HESSFIT_NUM_THREADS=%s", name, threads);
    test_expect_exit(&r, 0, NULL, what);
    CHECK(strstr(r.out, "in 12 evaluations") != NULL, "%s: %.2000s", what, r.out);
    free(r.out);
    char path[4200];
    snprintf(path, sizeof path, "%s/checkpoint.txt", dir);
    return test_load_file(path, NULL);
}

static void test_program(const char *argv0)
{
    const char *hessfit = test_program_path(argv0, "hessfit");
    static const char *const objectives[] = {"frequencies", "frequencies-q2mm"};
    printf("hessfit fit on rh-enamide, 12 evaluations\n");
    char *examples = test_source_path_dup("examples");
    char *base = test_load_file(test_source_path("examples/rh-enamide.fit"), NULL);
    for (int k = 0; k < 2; k++) {
        /* the example's training set and free values (its relative paths made absolute), this
         * objective, 12 evaluations */
        char *text = malloc(strlen(base) + 64 * strlen(examples) + 256), *out = text, name[64];
        CHECK(text != NULL, "out of memory");
        for (const char *line = base; *line != '\0';) {
            const size_t len = strcspn(line, "\n");
            if (strncmp(line, "objective", 9) == 0 || strncmp(line, "max-evaluations", 15) == 0) {
            } else if (strstr(line, " = data/") != NULL && (size_t)(strstr(line, " = data/") - line) < len) {
                const size_t key = (size_t)(strstr(line, " = data/") - line) + 3;
                out += sprintf(out, "%.*s%s/%.*s\n", (int)key, line, examples, (int)(len - key), line + key);
            } else {
                out += sprintf(out, "%.*s\n", (int)len, line);
            }
            line += len + (line[len] == '\n');
        }
        sprintf(out, "objective = %s\nmax-evaluations = 12\n", objectives[k]);
        snprintf(name, sizeof name, "rh-%s.fit", objectives[k]);
        const char *input_path = test_write_text(name, text);
        free(text);
        char out1[64], out2[64];
        snprintf(out1, sizeof out1, "rh-%s-1", objectives[k]);
        snprintf(out2, sizeof out2, "rh-%s-2", objectives[k]);
        char *cp1 = fit_checkpoint(hessfit, input_path, out1, "1");
        char *cp2 = fit_checkpoint(hessfit, input_path, out2, "2");
        CHECK(strcmp(cp1, cp2) == 0, "%s: the checkpoints differ:\n--- 1 thread\n%s\n--- 2 threads\n%s", objectives[k],
              cp1, cp2);
        const char *loss = strstr(cp1, "best_loss ");
        CHECK(loss != NULL, "no best_loss");
        printf("  %s: checkpoints after 1 and 2 threads identical (%zu bytes, %.*s)\n", objectives[k], strlen(cp1),
               (int)strcspn(loss, "\n"), loss);
        free(cp1);
        free(cp2);
    }
    free(examples);
    free(base);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_load_plugins();
    test_kernel();
    test_zero_mode();
    test_program(argv[0]);
    printf("test_thread_determinism: all checks passed\n");
    return 0;
}
