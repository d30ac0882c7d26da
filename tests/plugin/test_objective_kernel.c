/*
 * test_objective_kernel (per platform): the Hessian-objective kernel through the C API
 * (hessfit_force_set_hessian_objective / hessfit_force_compute_hessian_objective), on a System of
 * two small molecules -- A: five atoms (bonds, angles, a periodic torsion, a harmonic improper,
 * nonbonded 1-4 pairs), B: four atoms (bonds, angles, an OPLS torsion) -- at a generic geometry.
 *
 *  (a) the loss and every residual against an independent evaluation in this file: the analytic
 *      Hessian blocks (hessfit_force_get_hessian_blocks) through the fitting layer's vibrational
 *      analysis (hessfit_vib_analyse, its own projection), eigenmatrix V A V^T and Hessian elements by
 *      plain loops, with the kernel's reported pairing; and that pairing checked: the overlap
 *      assignment reaches the best total overlap of all permutations (brute force), the position
 *      pairing takes the modes above the threshold at the first evaluation and keeps them;
 *  (b) dL/dslot against central differences over every slot (4-point stencil, the analytic
 *      Hessian at p +- h): A with overlap-paired, projected frequencies; B with position-paired,
 *      unprojected ones; eigenmatrix; Hessian elements; all together;
 *  (b') the gradient of every other slot alone (hessfit_force_set_hessian_objective_gradient_slots; the others 0):
 *      the listed slots' dL/dslot bit for bit as with every slot;
 *  (c) bad specs and calls: clear HESSFIT_ERROR_* naming the molecule, the field and the entry.
 */
#include "hessfit_fitting.h"
#include "test_util.h"
#include <string.h>

#define NA 5
#define NB 4
#define NP (NA + NB)
#define DA (3 * NA)
#define DB (3 * NB)
#define HSIZE (DA * DA + DB * DB)
#define MAXSLOTS 32

static const char *platform_name = "Reference";

typedef struct {
    OpenMM_System *system;
    hessfit_force *force;
    OpenMM_Integrator *integrator;
    OpenMM_Context *context;
    int n_slots;
    double masses[NP];
    double pos[3 * NP];
} Setup;

static int slot(hessfit_force *f, double value)
{
    int s;
    HF_OK(hessfit_force_add_parameter(f, value, &s));
    return s;
}

/* A: 0-1-2-3 chain with 4 on 1 (an improper centre); B: 5-6-7-8 chain. Parameters in OpenMM units. */
static void setup_create(Setup *s)
{
    static const double masses[NP] = {12.0, 14.003074, 1.007825, 15.994915, 1.007825, 15.994915, 12.0, 12.0, 18.998403};
    static const double pos[3 * NP] = {
        0.000, 0.000, 0.000, 0.151, 0.012, -0.004, 0.197, 0.118, 0.031, 0.224, -0.108, 0.027, 0.188, 0.018, -0.101,
        1.000, 0.000, 0.000, 1.143, 0.021, 0.011, 1.191, 0.139, -0.037, 1.329, 0.152, -0.018};
    memcpy(s->masses, masses, sizeof masses);
    memcpy(s->pos, pos, sizeof pos);
    s->system = OpenMM_System_create();
    for (int i = 0; i < NP; i++)
        OpenMM_System_addParticle(s->system, masses[i]);
    hessfit_force *f;
    HF_OK(hessfit_force_create(&f));
    const int kb1 = slot(f, 2.6e5), r1 = slot(f, 0.147), kb2 = slot(f, 3.1e5), r2 = slot(f, 0.108), kb3 = slot(f, 2.2e5);
    const int r3 = slot(f, 0.141), ka1 = slot(f, 330.0), t1 = slot(f, 1.93), ka2 = slot(f, 280.0), t2 = slot(f, 2.05);
    const int kt = slot(f, 4.5), ph = slot(f, 0.3), ki = slot(f, 60.0), phi0 = slot(f, 0.05);
    const int q1 = slot(f, 0.21), q2 = slot(f, -0.33), sg = slot(f, 0.31), ep = slot(f, 0.35);
    const int v1 = slot(f, 3.1), v2 = slot(f, -1.2), v3 = slot(f, 0.8);
    const int pslots[NP][3] = {{q1, sg, ep}, {q2, sg, ep}, {q1, sg, ep}, {q2, sg, ep}, {q1, sg, ep},
                               {HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT},
                               {HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT},
                               {HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT},
                               {HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT}};
    for (int i = 0; i < NP; i++)
        HF_OK(hessfit_force_add_particle(f, pslots[i][0], pslots[i][1], pslots[i][2], NULL));
    const int mol_a[NA] = {0, 1, 2, 3, 4}, mol_b[NB] = {8, 6, 5, 7}; /* B's block order permuted */
    HF_OK(hessfit_force_add_molecule(f, mol_a, NA, NULL));
    HF_OK(hessfit_force_add_molecule(f, mol_b, NB, NULL));
    HF_OK(hessfit_force_add_bond(f, 0, 1, kb1, r1, NULL));
    HF_OK(hessfit_force_add_bond(f, 1, 2, kb2, r2, NULL));
    HF_OK(hessfit_force_add_bond(f, 2, 3, kb3, r3, NULL));
    HF_OK(hessfit_force_add_bond(f, 1, 4, kb2, r2, NULL));
    HF_OK(hessfit_force_add_angle(f, 0, 1, 2, ka1, t1, NULL));
    HF_OK(hessfit_force_add_angle(f, 1, 2, 3, ka2, t2, NULL));
    HF_OK(hessfit_force_add_angle(f, 0, 1, 4, ka1, t1, NULL));
    HF_OK(hessfit_force_add_angle(f, 2, 1, 4, ka2, t2, NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 3, kt, ph, NULL));
    HF_OK(hessfit_force_add_harmonic_improper(f, 1, 0, 2, 4, ki, phi0, NULL));
    const int bonds_a[8] = {0, 1, 1, 2, 2, 3, 1, 4};
    HF_OK(hessfit_force_create_exclusions_from_bonds(f, bonds_a, 4));
    HF_OK(hessfit_force_add_bond(f, 5, 6, kb1, r1, NULL));
    HF_OK(hessfit_force_add_bond(f, 6, 7, kb3, r3, NULL));
    HF_OK(hessfit_force_add_bond(f, 7, 8, kb2, r3, NULL));
    HF_OK(hessfit_force_add_angle(f, 5, 6, 7, ka1, t1, NULL));
    HF_OK(hessfit_force_add_angle(f, 6, 7, 8, ka2, t2, NULL));
    const int v[4] = {v1, v2, v3, HESSFIT_NO_SLOT};
    HF_OK(hessfit_force_add_opls_torsion(f, 5, 6, 7, 8, v, NULL));
    HF_OK(hessfit_force_get_num_parameters(f, &s->n_slots));
    CHECK(s->n_slots <= MAXSLOTS, "%d slots", s->n_slots);
    HF_OK(hessfit_force_add_to_system(f, s->system, NULL));
    s->force = f;
    s->context = test_create_context(s->system, platform_name, s->pos, NP, 0.001, &s->integrator);
}

static void setup_destroy(Setup *s)
{
    OpenMM_Context_destroy(s->context);
    OpenMM_Integrator_destroy(s->integrator);
    hessfit_force_destroy(s->force);
    OpenMM_System_destroy(s->system);
}

static void set_table(Setup *s, const double *table)
{
    HF_OK(hessfit_force_set_parameters(s->force, table, s->n_slots));
    HF_OK(hessfit_force_update_parameters_in_context(s->force, s->context));
}

/* ---- the independent evaluation ------------------------------------------------------------ */

/* Masses and positions of one molecule in its block order. */
typedef struct {
    int n, dim;
    const int *particles;
    long long offset;
    double masses[NA];
    double pos[3 * NA];
} Mol;

static void molecule_of(const Setup *s, int m, Mol *mol)
{
    static const int a[NA] = {0, 1, 2, 3, 4}, b[NB] = {8, 6, 5, 7};
    mol->n = m == 0 ? NA : NB;
    mol->dim = 3 * mol->n;
    mol->particles = m == 0 ? a : b;
    mol->offset = m == 0 ? 0 : DA * DA;
    for (int i = 0; i < mol->n; i++) {
        mol->masses[i] = s->masses[mol->particles[i]];
        memcpy(mol->pos + 3 * i, s->pos + 3 * mol->particles[i], 3 * sizeof(double));
    }
}

/* The mode list the kernel uses: ascending eigenvalues (cm^-1 through F) and unit mass-weighted
 * vectors of A (project = 0) or of its vibrations (project = 1). Returns the count. */
static int mode_list(const Mol *mol, const double *h, int project, double *freq, double *vectors)
{
    const int dim = mol->dim;
    double all_f[DA], all_v[DA * DA], basis[6 * DA];
    int n_ext = 0, count = 0;
    HF_CALL(hessfit_vib_analyse(h, mol->masses, mol->pos, mol->n, hessfit_frequency_factor_kj_mol_nm2_amu(),
                           project ? HESSFIT_VIB_PROJECT_EXTERNAL : 0, all_f, all_v, NULL));
    if (project)
        HF_CALL(hessfit_vib_external_basis(mol->masses, mol->pos, mol->n, basis, &n_ext));
    for (int j = 0; j < dim; j++) {
        double weight = 0.0;
        for (int r = 0; r < n_ext; r++) {
            double dot = 0.0;
            for (int i = 0; i < dim; i++)
                dot += basis[r * dim + i] * all_v[j * dim + i];
            weight += dot * dot;
        }
        if (weight > 0.5)
            continue;
        freq[count] = all_f[j];
        memcpy(vectors + count * dim, all_v + j * dim, dim * sizeof(double));
        count++;
    }
    CHECK(count == dim - n_ext, "%d modes of %d", count, dim);
    return count;
}

/* The objective of one molecule as plain arrays (what the test sets). */
typedef struct {
    hessfit_frequency_pairing pairing;
    int project, n_freq;
    double threshold;
    double freq_target[DA], freq_weight[DA], freq_vectors[DA * DA];
    int n_eig;
    double eig_vectors[DA * DA], eig_target[DA * DA], eig_weight[DA * DA];
    int hessian;
    double hess_target[DA * DA], hess_weight[DA * DA];
} Targets;

static void to_c_api(const Mol *mol, const Targets *t, hessfit_molecule_objective *o)
{
    hessfit_molecule_objective_init(o);
    o->masses = mol->masses;
    o->n_masses = mol->n;
    o->frequency_pairing = t->pairing;
    o->project_external = t->project;
    o->frequency_threshold = t->threshold;
    if (t->pairing != HESSFIT_NO_FREQUENCIES) {
        o->frequency_targets = t->freq_target;
        o->n_frequency_targets = t->n_freq;
        o->frequency_weights = t->freq_weight;
        o->n_frequency_weights = t->n_freq;
        if (t->pairing == HESSFIT_PAIR_BY_OVERLAP) {
            o->frequency_vectors = t->freq_vectors;
            o->n_frequency_vectors = (long long)t->n_freq * mol->dim;
        }
    }
    if (t->n_eig > 0) {
        o->eigen_vectors = t->eig_vectors;
        o->n_eigen_vectors = (long long)t->n_eig * mol->dim;
        o->eigen_targets = t->eig_target;
        o->n_eigen_targets = (long long)t->n_eig * t->n_eig;
        o->eigen_weights = t->eig_weight;
        o->n_eigen_weights = (long long)t->n_eig * t->n_eig;
    }
    if (t->hessian) {
        o->hessian_targets = t->hess_target;
        o->n_hessian_targets = (long long)mol->dim * mol->dim;
        o->hessian_weights = t->hess_weight;
        o->n_hessian_weights = (long long)mol->dim * mol->dim;
    }
}

/* Targets from a reference Hessian block (kJ/mol/nm^2) of the molecule, with noise and random
 * weights (some 0), for the kinds in `kinds` (1 frequencies, 2 eigenmatrix, 4 Hessian). */
static void make_targets(const Mol *mol, const double *h_ref, int kinds, hessfit_frequency_pairing pairing,
                         Targets *t)
{
    const int dim = mol->dim;
    double freq[DA], vec[DA * DA];
    memset(t, 0, sizeof *t);
    t->pairing = HESSFIT_NO_FREQUENCIES;
    if (kinds & 1) {
        t->pairing = pairing;
        t->project = pairing == HESSFIT_PAIR_BY_OVERLAP;
        const int n = mode_list(mol, h_ref, t->project, freq, vec);
        if (pairing == HESSFIT_PAIR_BY_OVERLAP) {
            t->n_freq = n;
            for (int k = 0; k < n; k++) {
                t->freq_target[k] = freq[k] * (1.0 + 0.05 * (test_random() - 0.5));
                t->freq_weight[k] = k == 1 ? 0.0 : 1e-3 * (0.5 + test_random());
            }
            memcpy(t->freq_vectors, vec, (size_t)n * dim * sizeof(double));
        } else { /* the reference's modes above 100 cm^-1, ascending, plus one more than there will be */
            t->threshold = 100.0;
            for (int k = 0; k < n; k++)
                if (freq[k] > t->threshold) {
                    t->freq_target[t->n_freq] = freq[k] * (1.0 + 0.05 * (test_random() - 0.5));
                    t->freq_weight[t->n_freq++] = 1e-3 * (0.5 + test_random());
                }
            t->freq_target[t->n_freq] = 5000.0;
            t->freq_weight[t->n_freq++] = 1e-3;
        }
    }
    if (kinds & 2) {
        const int n = mode_list(mol, h_ref, 0, freq, vec);
        const double f = hessfit_frequency_factor_kj_mol_nm2_amu();
        t->n_eig = n;
        memcpy(t->eig_vectors, vec, (size_t)n * dim * sizeof(double));
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                t->eig_target[a * n + b] = a == b ? hessfit_cm1_to_eigenvalue(freq[a], f) * 1.03 : 50.0 * (test_random() - 0.5);
                t->eig_weight[a * n + b] = (a + b) % 5 == 3 ? 0.0 : 1e-4 * test_random();
            }
    }
    if (kinds & 4) {
        t->hessian = 1;
        for (int i = 0; i < dim * dim; i++) {
            t->hess_target[i] = h_ref[i] * (1.0 + 0.1 * (test_random() - 0.5));
            t->hess_weight[i] = i % 7 == 2 ? 0.0 : 1e-5 * test_random();
        }
    }
}

/* Loss and residuals of one molecule from its Hessian block h (kJ/mol/nm^2) and the kernel's pairing
 * of its frequency targets; appends the residuals at *r. */
static double reference_loss(const Mol *mol, const Targets *t, const double *h, const int *pairing, double **r)
{
    const int dim = mol->dim;
    double loss = 0.0, freq[DA], vec[DA * DA];
    if (t->pairing != HESSFIT_NO_FREQUENCIES) {
        mode_list(mol, h, t->project, freq, vec);
        for (int k = 0; k < t->n_freq; k++) {
            const double res = pairing[k] < 0 ? 0.0 : t->freq_weight[k] * (t->freq_target[k] - freq[pairing[k]]);
            loss += res * res;
            *(*r)++ = res;
        }
    }
    if (t->n_eig > 0) {
        const int k = t->n_eig;
        for (int a = 0; a < k; a++)
            for (int b = 0; b <= a; b++) {
                double e = 0.0; /* v_a^T M^-1/2 H M^-1/2 v_b */
                for (int i = 0; i < dim; i++)
                    for (int j = 0; j < dim; j++)
                        e += t->eig_vectors[a * dim + i] * h[i * dim + j] * t->eig_vectors[b * dim + j] /
                             sqrt(mol->masses[i / 3] * mol->masses[j / 3]);
                const double res = t->eig_weight[a * k + b] * (t->eig_target[a * k + b] - e);
                loss += res * res;
                *(*r)++ = res;
            }
    }
    if (t->hessian)
        for (int i = 0; i < dim; i++)
            for (int j = 0; j <= i; j++) {
                const double res = t->hess_weight[i * dim + j] * (t->hess_target[i * dim + j] - h[i * dim + j]);
                loss += res * res;
                *(*r)++ = res;
            }
    return loss;
}

/* ---- checks -------------------------------------------------------------------------------- */

static double loss_at(Setup *s, const double *table)
{
    double loss;
    set_table(s, table);
    HF_OK(hessfit_force_compute_hessian_objective(s->force, s->context, &loss, NULL, 0, NULL, 0));
    return loss;
}

/*
 * One objective: (a) loss and residuals against the independent evaluation, the pairing checks;
 * (b) dL/dslot against 4-point central differences over every slot.
 */
static void check_objective(Setup *s, const Targets t[2], const char *label)
{
    hessfit_molecule_objective spec[2];
    Mol mol[2];
    double table[MAXSLOTS], blocks[HSIZE], g[MAXSLOTS], loss, residuals[2 * (DA + DA * (DA + 1))];
    long long n_res = 0;
    int n_freq = 0, pairing[2 * DA];
    for (int m = 0; m < 2; m++) {
        molecule_of(s, m, &mol[m]);
        to_c_api(&mol[m], &t[m], &spec[m]);
    }
    HF_OK(hessfit_force_get_parameters(s->force, table, s->n_slots));
    HF_OK(hessfit_force_set_hessian_objective(s->force, s->context, spec, 2, hessfit_frequency_factor_kj_mol_nm2_amu()));
    HF_OK(hessfit_force_get_hessian_objective_size(s->force, s->context, &n_res, &n_freq));
    CHECK(n_res <= (long long)(sizeof residuals / sizeof residuals[0]), "%lld residuals", n_res);
    if (n_freq > 0) { /* nothing paired before the first evaluation */
        HF_OK(hessfit_force_get_hessian_objective_pairing(s->force, s->context, pairing, n_freq));
        for (int k = 0; k < n_freq; k++)
            CHECK(pairing[k] == -1, "%s: target %d paired before any evaluation", label, k);
    }
    HF_OK(hessfit_force_compute_hessian_objective(s->force, s->context, &loss, g, s->n_slots, residuals, n_res));
    if (n_freq > 0)
        HF_OK(hessfit_force_get_hessian_objective_pairing(s->force, s->context, pairing, n_freq));
    HF_OK(hessfit_force_get_hessian_blocks(s->force, s->context, blocks, HSIZE));

    /* (a) the independent evaluation */
    double ref_res[2 * (DA + DA * (DA + 1))], *r = ref_res, ref = 0.0, sum2 = 0.0;
    int at = 0;
    for (int m = 0; m < 2; m++) {
        ref += reference_loss(&mol[m], &t[m], blocks + mol[m].offset, pairing + at, &r);
        at += t[m].pairing != HESSFIT_NO_FREQUENCIES ? t[m].n_freq : 0;
    }
    CHECK(r - ref_res == n_res, "%s: %lld residuals, the reference has %d", label, n_res, (int)(r - ref_res));
    double res_err = 0.0, res_scale = 0.0;
    for (long long i = 0; i < n_res; i++) {
        res_err = fmax(res_err, fabs(residuals[i] - ref_res[i]));
        res_scale = fmax(res_scale, fabs(ref_res[i]));
        sum2 += residuals[i] * residuals[i];
    }
    CHECK_CLOSE(loss, ref, 1e-9, ref, "loss vs the independent evaluation");
    CHECK_CLOSE(sum2, loss, 1e-13, loss, "sum of squared residuals vs loss");
    CHECK(res_err <= 1e-8 * res_scale, "%s: residuals differ by %.3g (scale %.3g)", label, res_err, res_scale);

    /* the pairing: optimal overlap assignment; position pairing = the modes above the threshold */
    at = 0;
    for (int m = 0; m < 2; m++) {
        const Targets *tm = &t[m];
        if (tm->pairing == HESSFIT_PAIR_BY_OVERLAP) {
            double freq[DA], vec[DA * DA], score[DA * DA], kernel = 0.0;
            const int n = mode_list(&mol[m], blocks + mol[m].offset, 1, freq, vec), dim = mol[m].dim;
            CHECK(n == tm->n_freq && n <= 9, "%d modes, %d targets", n, tm->n_freq);
            for (int k = 0; k < n; k++)
                for (int j = 0; j < n; j++) {
                    double dot = 0.0;
                    for (int i = 0; i < dim; i++)
                        dot += tm->freq_vectors[k * dim + i] * vec[j * dim + i];
                    score[k * n + j] = dot * dot;
                }
            for (int k = 0; k < n; k++)
                kernel += score[k * n + pairing[at + k]];
            const double best = test_best_assignment(score, n);
            CHECK(fabs(kernel - best) <= 1e-10, "%s: overlap assignment total %.15g, best %.15g", label, kernel, best);
        } else if (tm->pairing == HESSFIT_PAIR_BY_POSITION) {
            double freq[DA], vec[DA * DA];
            const int n = mode_list(&mol[m], blocks + mol[m].offset, 0, freq, vec);
            int cand = 0;
            for (int j = 0; j < n; j++)
                if (freq[j] > tm->threshold) {
                    if (cand < tm->n_freq)
                        CHECK(pairing[at + cand] == j, "%s: target %d paired with %d, expected %d", label, cand,
                              pairing[at + cand], j);
                    cand++;
                }
            for (int k = cand; k < tm->n_freq; k++)
                CHECK(pairing[at + k] == -1, "%s: target %d beyond the %d candidates is paired", label, k, cand);
        }
        at += tm->pairing != HESSFIT_NO_FREQUENCIES ? tm->n_freq : 0;
    }

    /* (b) dL/dslot by central differences (the position pairing keeps its selection throughout) */
    double work[MAXSLOTS], err = 0.0, scale = 0.0;
    for (int i = 0; i < s->n_slots; i++)
        scale = fmax(scale, fabs(g[i]));
    for (int i = 0; i < s->n_slots; i++) {
        const double h = 1e-4 * fmax(fabs(table[i]), 1e-3);
        double l[4];
        static const double at4[4] = {2.0, 1.0, -1.0, -2.0};
        for (int k = 0; k < 4; k++) {
            memcpy(work, table, sizeof(double) * (size_t)s->n_slots);
            work[i] = table[i] + at4[k] * h;
            l[k] = loss_at(s, work);
        }
        const double fd = (8.0 * (l[1] - l[2]) - (l[0] - l[3])) / (12.0 * h);
        err = fmax(err, fabs(fd - g[i]) / fmax(fabs(g[i]), 1e-3 * scale));
    }
    set_table(s, table);
    if (n_freq > 0) { /* the overlap pairing did not switch during the differences */
        int after[2 * DA];
        double l2, g2[MAXSLOTS]; /* with the gradient, as the first time (the eigenvalues come from the same solver path) */
        HF_OK(hessfit_force_compute_hessian_objective(s->force, s->context, &l2, g2, s->n_slots, NULL, 0));
        HF_OK(hessfit_force_get_hessian_objective_pairing(s->force, s->context, after, n_freq));
        CHECK(l2 == loss && memcmp(after, pairing, sizeof(int) * (size_t)n_freq) == 0, "%s: not reproducible: %.17g vs %.17g, pairing %s", label, l2, loss, memcmp(after, pairing, sizeof(int) * (size_t)n_freq) ? "changed" : "same");
    }
    /* (b') the gradient of the listed slots alone (every other slot): the same numbers, bit for bit */
    int listed[MAXSLOTS], n_listed = 0;
    for (int i = 0; i < s->n_slots; i += 2)
        listed[n_listed++] = i;
    double l3, g3[MAXSLOTS];
    HF_OK(hessfit_force_set_hessian_objective_gradient_slots(s->force, s->context, listed, n_listed));
    HF_OK(hessfit_force_compute_hessian_objective(s->force, s->context, &l3, g3, s->n_slots, NULL, 0));
    CHECK(l3 == loss, "%s: the loss changed with the gradient slots: %.17g vs %.17g", label, l3, loss);
    for (int k = 0; k < n_listed; k++)
        CHECK(memcmp(&g3[listed[k]], &g[listed[k]], sizeof(double)) == 0, "%s: listed slot %d: %.17g vs %.17g", label,
              listed[k], g3[listed[k]], g[listed[k]]);
    for (int i = 1; i < s->n_slots; i += 2)
        CHECK(g3[i] == 0.0, "%s: slot %d is not listed and has %.17g, not 0", label, i, g3[i]);
    HF_FAILS(hessfit_force_set_hessian_objective_gradient_slots(s->force, s->context, (const int[]){0, s->n_slots}, 2),
             HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_set_hessian_objective_gradient_slots(s->force, s->context, (const int[]){1, 1}, 2),
             HESSFIT_ERROR_VALUE);
    HF_OK(hessfit_force_set_hessian_objective_gradient_slots(s->force, s->context, NULL, 0)); /* every slot again */
    HF_OK(hessfit_force_compute_hessian_objective(s->force, s->context, &l3, g3, s->n_slots, NULL, 0));
    CHECK(memcmp(g3, g, sizeof(double) * (size_t)s->n_slots) == 0, "%s: every slot again: not the same", label);
    printf("  %-44s loss %-12.6g %3lld residuals: vs independent %.2g (rel), dL/dslot vs FD max rel. error %.3g "
           "(max |g| %.3g)\n",
           label, loss, n_res, fabs(loss - ref) / ref, err, scale);
    CHECK(err <= 1e-6, "%s: gradient vs FD %.3g", label, err);
}

static void run_objectives(void)
{
    Setup s;
    setup_create(&s);
    double table[MAXSLOTS], ref_table[MAXSLOTS], ref_blocks[HSIZE];
    HF_OK(hessfit_force_get_parameters(s.force, table, s.n_slots));
    /* the reference Hessians (the "QM" data): the same System with every parameter moved */
    for (int i = 0; i < s.n_slots; i++)
        ref_table[i] = table[i] * (1.0 + 0.2 * (test_random() - 0.5));
    set_table(&s, ref_table);
    HF_OK(hessfit_force_get_hessian_blocks(s.force, s.context, ref_blocks, HSIZE));
    set_table(&s, table);
    Mol mol[2];
    molecule_of(&s, 0, &mol[0]);
    molecule_of(&s, 1, &mol[1]);
    Targets t[2];
    static const struct {
        int kinds[2];
        const char *label;
    } cases[] = {{{1, 1}, "frequencies (A overlap, B position)"},
                 {{2, 2}, "eigenmatrix"},
                 {{4, 4}, "Hessian elements"},
                 {{7, 7}, "all kinds together"},
                 {{1, 0}, "A frequencies only (B without objective)"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        make_targets(&mol[0], ref_blocks, cases[c].kinds[0], HESSFIT_PAIR_BY_OVERLAP, &t[0]);
        make_targets(&mol[1], ref_blocks + DA * DA, cases[c].kinds[1], HESSFIT_PAIR_BY_POSITION, &t[1]);
        check_objective(&s, t, cases[c].label);
    }
    setup_destroy(&s);
}

/* ---- errors -------------------------------------------------------------------------------- */

static void expect_message(const char *part)
{
    CHECK(strstr(hessfit_last_error(), part) != NULL, "message lacks '%s': %s", part, hessfit_last_error());
}

static void run_errors(void)
{
    Setup s;
    setup_create(&s);
    Mol mol[2];
    double table[MAXSLOTS], blocks[HSIZE], loss, g[MAXSLOTS], r[8];
    int modes[4];
    molecule_of(&s, 0, &mol[0]);
    molecule_of(&s, 1, &mol[1]);
    HF_OK(hessfit_force_get_parameters(s.force, table, s.n_slots));
    HF_OK(hessfit_force_get_hessian_blocks(s.force, s.context, blocks, HSIZE));
    Targets t[2];
    make_targets(&mol[0], blocks, 7, HESSFIT_PAIR_BY_OVERLAP, &t[0]);
    make_targets(&mol[1], blocks + DA * DA, 1, HESSFIT_PAIR_BY_POSITION, &t[1]);
    hessfit_molecule_objective spec[2], bad[2];
    to_c_api(&mol[0], &t[0], &spec[0]);
    to_c_api(&mol[1], &t[1], &spec[1]);
    const double f = hessfit_frequency_factor_kj_mol_nm2_amu();

    HF_FAILS(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, NULL, 0, NULL, 0), HESSFIT_ERROR_VALUE);
    expect_message("no Hessian objective is set");
    HF_FAILS(hessfit_force_get_hessian_objective_pairing(s.force, s.context, modes, 1), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_set_hessian_objective(s.force, s.context, spec, 1, f), HESSFIT_ERROR_SIZE);
    expect_message("1 molecules but the force has 2");
    HF_FAILS(hessfit_force_set_hessian_objective(s.force, s.context, NULL, 2, f), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_set_hessian_objective(s.force, s.context, spec, 2, 0.0), HESSFIT_ERROR_VALUE);
    expect_message("frequencyFactor is 0");
    HF_FAILS(hessfit_force_set_hessian_objective(s.force, s.context, spec, 2, NAN), HESSFIT_ERROR_VALUE);

#define BAD(field_change, status, part)                                                            \
    do {                                                                                           \
        memcpy(bad, spec, sizeof bad);                                                             \
        field_change;                                                                              \
        HF_FAILS(hessfit_force_set_hessian_objective(s.force, s.context, bad, 2, f), status);     \
        expect_message(part);                                                                      \
    } while (0)

    double nan_masses[NA], zero_mass[NA], nan_targets[DA], neg_weights[DA], skew[DA * DA], nan_h[DA * DA];
    memcpy(nan_masses, mol[0].masses, sizeof nan_masses);
    nan_masses[3] = NAN;
    memcpy(zero_mass, mol[0].masses, sizeof zero_mass);
    zero_mass[2] = 0.0;
    memcpy(nan_targets, t[0].freq_target, sizeof nan_targets);
    nan_targets[4] = NAN;
    memcpy(neg_weights, t[0].freq_weight, sizeof neg_weights);
    neg_weights[2] = -1e-3;
    memcpy(skew, t[0].freq_vectors, sizeof skew);
    skew[DA + 3] += 0.01; /* row 1 no longer unit length nor orthogonal to the others */
    memcpy(nan_h, t[0].hess_target, sizeof nan_h);
    nan_h[17] = INFINITY;
    BAD(bad[0].n_masses = NA - 1, HESSFIT_ERROR_SIZE, "molecule 0: masses has 4 entries but needs 5");
    BAD(bad[0].masses = nan_masses, HESSFIT_ERROR_VALUE, "masses[3] is nan");
    BAD(bad[0].masses = zero_mass, HESSFIT_ERROR_VALUE, "masses[2] is 0 (must be finite and > 0)");
    BAD(bad[0].frequency_targets = nan_targets, HESSFIT_ERROR_VALUE, "frequencyTargets[4] is nan");
    BAD(bad[0].frequency_weights = neg_weights, HESSFIT_ERROR_VALUE, "frequencyWeights[2] is -0.001");
    BAD(bad[0].n_frequency_weights -= 1, HESSFIT_ERROR_SIZE, "frequencyWeights has 8 entries but needs 9");
    BAD(bad[0].n_frequency_vectors -= DA, HESSFIT_ERROR_SIZE, "frequencyVectors has");
    BAD(bad[0].frequency_vectors = skew, HESSFIT_ERROR_VALUE, "frequencyVectors: row");
    BAD(bad[0].frequency_pairing = (hessfit_frequency_pairing)5, HESSFIT_ERROR_VALUE, "frequencyPairing is 5");
    BAD(bad[0].frequency_pairing = HESSFIT_NO_FREQUENCIES, HESSFIT_ERROR_VALUE, "frequencyPairing is NoFrequencies");
    BAD((bad[1].frequency_threshold = NAN), HESSFIT_ERROR_VALUE, "molecule 1: frequencyThreshold is not finite");
    BAD((bad[1].frequency_vectors = t[0].freq_vectors, bad[1].n_frequency_vectors = 3), HESSFIT_ERROR_VALUE,
        "frequencyVectors are given but frequencyPairing is PairByPosition");
    BAD(bad[0].n_eigen_vectors -= 7, HESSFIT_ERROR_SIZE, "eigenVectors has 218 entries, not a positive multiple of 15");
    BAD(bad[0].eigen_vectors = skew, HESSFIT_ERROR_VALUE, "eigenVectors: row");
    BAD(bad[0].n_eigen_targets -= 1, HESSFIT_ERROR_SIZE, "eigenTargets has 224 entries but needs 225");
    BAD(bad[0].n_hessian_weights = 0, HESSFIT_ERROR_SIZE, "hessianWeights has 0 entries but needs 225");
    BAD(bad[0].hessian_targets = nan_h, HESSFIT_ERROR_VALUE, "hessianTargets[17] is inf");
    BAD(bad[0].n_masses = -1, HESSFIT_ERROR_SIZE, "molecule 0: masses count is negative");
    BAD(bad[0].frequency_targets = NULL, HESSFIT_ERROR_NULL_ARGUMENT, "molecule 0: frequency_targets is NULL");
    printf("  bad specs: every one refused with a message naming the field\n");

    /* a good objective, then bad calls */
    HF_OK(hessfit_force_set_hessian_objective(s.force, s.context, spec, 2, f));
    long long n_res;
    int n_freq;
    HF_OK(hessfit_force_get_hessian_objective_size(s.force, s.context, &n_res, &n_freq));
    CHECK(n_freq == t[0].n_freq + t[1].n_freq && n_res == n_freq + DA * (DA + 1) / 2 * 2,
          "%lld residuals, %d frequency targets", n_res, n_freq);
    HF_FAILS(hessfit_force_compute_hessian_objective(s.force, s.context, NULL, NULL, 0, NULL, 0),
             HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, g, s.n_slots - 1, NULL, 0),
             HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, NULL, 3, NULL, 0),
             HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, NULL, 0, r, 8), HESSFIT_ERROR_SIZE);
    expect_message("the objective's residual count");
    HF_FAILS(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, NULL, 0, NULL, 5),
             HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_hessian_objective_pairing(s.force, s.context, modes, 4), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_compute_hessian_objective(NULL, s.context, &loss, NULL, 0, NULL, 0),
             HESSFIT_ERROR_NULL_ARGUMENT);

    /* the objective belongs to one Context; a force outside it is refused */
    Setup other;
    setup_create(&other);
    HF_FAILS(hessfit_force_compute_hessian_objective(other.force, s.context, &loss, NULL, 0, NULL, 0),
             HESSFIT_ERROR_NOT_IN_CONTEXT);
    HF_FAILS(hessfit_force_compute_hessian_objective(other.force, other.context, &loss, NULL, 0, NULL, 0),
             HESSFIT_ERROR_VALUE);
    setup_destroy(&other);

    /* undefined geometry: the Hessian's own error */
    double collinear[3 * NP];
    memcpy(collinear, s.pos, sizeof collinear);
    for (int k = 0; k < 3; k++) /* atom 2 on the 1-3 line: the angle 1-2-3 is 180 degrees */
        collinear[6 + k] = 0.5 * (collinear[3 + k] + collinear[9 + k]);
    test_set_positions(s.context, collinear, NP);
    HF_FAILS(hessfit_force_get_hessian_blocks(s.force, s.context, blocks, HSIZE), HESSFIT_ERROR_GEOMETRY);
    char expected[1024];
    snprintf(expected, sizeof expected, "%s", strstr(hessfit_last_error(), "HessianForce:"));
    HF_FAILS(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, g, s.n_slots, NULL, 0),
             HESSFIT_ERROR_GEOMETRY);
    CHECK(strstr(hessfit_last_error(), expected) != NULL, "geometry message differs: %s vs %s", hessfit_last_error(),
          expected);
    test_set_positions(s.context, s.pos, NP);
    HF_OK(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, g, s.n_slots, NULL, 0));
    (void)table;
    setup_destroy(&s);
}

int main(int argc, char **argv)
{
    platform_name = test_platform_name(argc, argv);
    test_load_plugins();
    test_seed(20240917);
    printf("objectives on %s\n", platform_name);
    run_objectives();
    printf("errors\n");
    run_errors();
    printf("test_objective_kernel: all checks passed\n");
    return 0;
}
