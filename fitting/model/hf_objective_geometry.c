/*
 * The geometry part of the objective (hessfit_objective.h): bond lengths, angles and torsions of
 * the MM-minimised structures against the QM ones, with the exact parameter gradient by implicit
 * differentiation of the minimum.
 *
 * The minimised structures live in a second Context (an hf_model_evaluator over the molecules
 * from the first to the last one with a target), so that the model's own Context keeps the QM
 * geometry that the Hessian-space objectives and the energies are evaluated at; the second
 * Context keeps the minima of the best evaluation so far (lowest total loss, hf_geometry_part_keep),
 * and each minimisation starts from those: not from the last evaluation's, since an optimiser's
 * trial point far off can take the minima into another basin (a conformer change) that a warm start
 * would then keep for the points near the best one, making the loss depend on the path (measured on
 * rh-enamide in the MM3* form: back at the start point after a trial at ten times its line-search
 * step, 619982 instead of 111533; L-BFGS then stopped, finding no decrease).
 * Why a second Context rather than swapping positions in the one (it keeps the model's Context at
 * the QM geometry whatever the minimiser does, and the minima stay for the warm start), with the
 * measured costs: docs/fitting.md, "Geometry".
 *
 * One evaluation:
 *   1. push the slot table (hf_model_evaluator_sync);
 *   2. OpenMM's LocalEnergyMinimizer (L-BFGS) to an RMS force of HF_GEOMETRY_LBFGS_TOL;
 *   3. Newton steps per molecule with its analytic Hessian block H, in the complement of the
 *      rigid-body motions (B: orthonormal translations and rotations at the current geometry,
 *      P = 1 - B^T B): solve (P H P + s B^T B) dx = -P g, s = mean |H_ii|, by Cholesky; where
 *      that fails (not positive definite: not yet in the minimum's basin) add mu P (Levenberg,
 *      mu growing tenfold) and accept the step only when the molecule's energy does not rise
 *      (halving it otherwise). Near the minimum (largest gradient component below
 *      HF_GEOMETRY_NEWTON_TRUST) the full Newton step is taken: it converges quadratically, and
 *      there the energy change is below its round-off. Stop at HESSFIT_OBJ_GEOMETRY_GRADIENT_TOL, or
 *      where round-off stops the progress below HF_GEOMETRY_GRADIENT_FLOOR;
 *   4. measure every target at x* and r = w (target - value);
 *   5. with a gradient: b = dL/dx per molecule, (P H P + s B^T B) lambda = P b by the Cholesky
 *      factor at x* (which must exist: x* is then a strict minimum in the complement), y = lambda
 *      for every molecule, and ONE gradient contraction: dL/dslot = -y . d(grad E)/dslot.
 * On any failure the second Context goes back to the QM geometry (the next evaluation starts
 * afresh) and the error names the molecule.
 */
#define _POSIX_C_SOURCE 200809L
#include "hf_objective_internal.h"
#include "hf_model_internal.h"

#include "hessfit_vib.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HF_GEOMETRY_LBFGS_TOL 0.1        /* kJ/mol/nm, RMS force at which OpenMM's minimiser stops */
#define HF_GEOMETRY_LBFGS_MAX_ITER 20000
#define HF_GEOMETRY_NEWTON_MAX_STEPS 100
#define HF_GEOMETRY_NEWTON_TRUST 1e-3    /* kJ/mol/nm: below it, full Newton steps */
#define HF_GEOMETRY_GRADIENT_FLOOR 1e-7  /* kJ/mol/nm: below it, stalled progress is round-off */
#define HF_GEOMETRY_MAX_STEP_NM 0.05     /* largest displacement of one atom in one Newton step */
#define HF_GEOMETRY_LINE_SEARCH 40       /* halvings of a rejected step */
#define HF_GEOMETRY_MAX_KINKS 16         /* switch corners held as constraints per molecule */
#define HF_GEOMETRY_KINK_KEEP 1e-3       /* nm: a held corner farther than this from its pair is let go */
#define HF_GEOMETRY_KINK_TOL 1e-12       /* nm: a held corner's pair within this of it is on it */

struct hf_geometry_part {
    int n;
    hessfit_geometry_target *targets;
    double *qm_value, *mm_value;
    int n_mols;                  /* molecules with a target, ascending */
    int *mols;
    hf_model_evaluator ev;       /* molecules [ev.mol_begin, ev.mol_end) */
    int first_particle, n_particles;
    long long hessian_size;
    long long *block_offset;     /* per molecule of the evaluator */
    int max_dim;
    double *pos, *trial, *forces, *blocks, *energies, *old_energies, *y, *d_slot;
    int cap_slots;
    /* per molecule with targets: state of the Newton steps */
    double *gmax, *step, *alpha;
    unsigned char *done, *pending;
    double *start;               /* where each minimisation starts: the minima of the best evaluation, or the QM geometry */
    int start_is_qm;
    double best_loss;            /* the total loss of the evaluation whose minima are the start */
    int last_ok;                 /* the last evaluation succeeded: p->pos holds its minima */
    /* per molecule with targets: the switch corners held as constraints (hf_geometry_kinks.c) */
    hf_kink_pairs *kp;
    hf_kink *kinks;              /* HF_GEOMETRY_MAX_KINKS per molecule */
    int *n_kinks;
    /* work of one molecule */
    double *m, *m_projected, *bb, *basis, *g, *b, *coords_a, *ones;
    double *rows, *z;            /* kink rows dr'/dx (MAX_KINKS x dim), solves (dim x (MAX_KINKS + 1)) */
    hessfit_objective_geometry_stats stats;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void hf_geometry_part_destroy(hf_geometry_part *p)
{
    if (p == NULL)
        return;
    hf_model_evaluator_free(&p->ev);
    free(p->targets);
    free(p->qm_value);
    free(p->mm_value);
    free(p->mols);
    free(p->block_offset);
    free(p->pos);
    free(p->trial);
    free(p->forces);
    free(p->blocks);
    free(p->energies);
    free(p->old_energies);
    free(p->y);
    free(p->d_slot);
    free(p->gmax);
    free(p->step);
    free(p->alpha);
    free(p->done);
    free(p->pending);
    free(p->m);
    free(p->m_projected);
    free(p->bb);
    free(p->basis);
    free(p->g);
    free(p->b);
    free(p->coords_a);
    free(p->ones);
    free(p->start);
    hf_kink_pairs_free(p->kp);
    free(p->kinks);
    free(p->n_kinks);
    free(p->rows);
    free(p->z);
    free(p);
}

int hf_geometry_part_size(const hf_geometry_part *p)
{
    return p != NULL ? p->n : 0;
}

const hessfit_geometry_target *hf_geometry_part_target(const hf_geometry_part *p, int i)
{
    return p != NULL && i >= 0 && i < p->n ? &p->targets[i] : NULL;
}

static const char *kind_name(hessfit_geometry_kind kind)
{
    return kind == HESSFIT_GEOMETRY_BOND ? "bond" : kind == HESSFIT_GEOMETRY_ANGLE ? "angle" : "torsion";
}

/* Target t checked against the model and the QM molecule; its QM value. */
static hessfit_status check_target(const hessfit_model *model, const hessfit_molecule *qm, int n_mols, int i,
                              const hessfit_geometry_target *t, double *value)
{
    const int n_atoms = hf_geometry_kind_atoms(t->kind);
    if (n_atoms == 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d: unknown kind %d", i + 1, (int)t->kind);
    if (t->mol < 0 || t->mol >= hessfit_model_n_molecules(model) || t->mol >= n_mols)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d (%s): molecule %d outside 1..%d", i + 1,
                        kind_name(t->kind), t->mol + 1, hessfit_model_n_molecules(model));
    const hessfit_molecule *q = &qm[t->mol];
    const int n = hessfit_model_n_atoms(model, t->mol);
    if (q->coords == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d (%s): molecule %d%s%s%s has no "
                        "coordinates to take the target from", i + 1, kind_name(t->kind), t->mol + 1,
                        q->source ? " (" : "", q->source ? q->source : "", q->source ? ")" : "");
    if (q->n_atoms != n)
        return hessfit_error(HESSFIT_ERROR_COUNT, "objective: geometry target %d: the QM molecule %d has %d atoms, the model's %d",
                        i + 1, t->mol + 1, q->n_atoms, n);
    const double *x[4] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < n_atoms; k++) {
        if (t->atoms[k] < 0 || t->atoms[k] >= n)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d (%s of molecule %d): atom %d "
                            "outside 1..%d", i + 1, kind_name(t->kind), t->mol + 1, t->atoms[k] + 1, n);
        for (int j = 0; j < k; j++)
            if (t->atoms[j] == t->atoms[k])
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d (%s of molecule %d) repeats "
                                "atom %d", i + 1, kind_name(t->kind), t->mol + 1, t->atoms[k] + 1);
        x[k] = q->coords + 3 * (size_t)t->atoms[k];
    }
    if (!(isfinite(t->weight) && t->weight >= 0.0))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d: weight %g (must be finite and >= 0)",
                        i + 1, t->weight);
    double grad[12];
    if (hf_geometry_value(t->kind, x, value, grad) != 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d (%s of molecule %d, atoms %d %d%s): "
                        "undefined at the QM geometry (coincident or collinear atoms)", i + 1, kind_name(t->kind),
                        t->mol + 1, t->atoms[0] + 1, t->atoms[1] + 1, n_atoms > 2 ? " ..." : "");
    return HESSFIT_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

hessfit_status hf_geometry_part_create(hessfit_model *model, const hessfit_molecule *qm, int n_mols, const hessfit_geometry_target *t, int n,
                                  hf_geometry_part **out)
{
    hessfit_status st = HESSFIT_SUCCESS;
    *out = NULL;
    if (n < 1 || t == NULL || qm == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry: %d targets%s", n,
                        qm == NULL ? " and no QM molecules" : "");
    hf_geometry_part *p = calloc(1, sizeof *p);
    if (p == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory");
    p->n = n;
    p->targets = malloc((size_t)n * sizeof *p->targets);
    p->qm_value = malloc((size_t)n * sizeof *p->qm_value);
    p->mm_value = malloc((size_t)n * sizeof *p->mm_value);
    p->mols = malloc((size_t)n * sizeof *p->mols);
    if (!p->targets || !p->qm_value || !p->mm_value || !p->mols) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for %d targets", n);
        goto done;
    }
    memcpy(p->targets, t, (size_t)n * sizeof *t);
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++) {
        st = check_target(model, qm, n_mols, i, &t[i], &p->qm_value[i]);
        p->mm_value[i] = NAN;
        p->mols[i] = t[i].mol;
    }
    if (st != HESSFIT_SUCCESS)
        goto done;
    qsort(p->mols, (size_t)n, sizeof *p->mols, cmp_int);
    for (int i = 0; i < n; i++)
        if (p->n_mols == 0 || p->mols[p->n_mols - 1] != p->mols[i])
            p->mols[p->n_mols++] = p->mols[i];
    const int lo = p->mols[0], hi = p->mols[p->n_mols - 1] + 1;
    p->first_particle = model->mol_first[lo];
    p->n_particles = model->mol_first[hi] - model->mol_first[lo];
    p->block_offset = malloc((size_t)(hi - lo + 1) * sizeof *p->block_offset);
    if (p->block_offset == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory");
        goto done;
    }
    p->block_offset[0] = 0;
    for (int m = lo; m < hi; m++) {
        const int na = hessfit_model_n_atoms(model, m);
        p->block_offset[m - lo + 1] = p->block_offset[m - lo] + 9LL * na * na;
        if (3 * na > p->max_dim)
            p->max_dim = 3 * na;
    }
    p->hessian_size = p->block_offset[hi - lo];
    const size_t np3 = 3 * (size_t)p->n_particles, d = (size_t)p->max_dim, k = (size_t)p->n_mols;
    p->pos = malloc(np3 * sizeof *p->pos);
    p->trial = malloc(np3 * sizeof *p->trial);
    p->forces = malloc(np3 * sizeof *p->forces);
    p->y = malloc(np3 * sizeof *p->y);
    p->blocks = malloc((size_t)p->hessian_size * sizeof *p->blocks);
    p->energies = malloc((size_t)(hi - lo) * sizeof *p->energies);
    p->old_energies = malloc((size_t)(hi - lo) * sizeof *p->old_energies);
    p->gmax = malloc(k * sizeof *p->gmax);
    p->step = malloc(k * d * sizeof *p->step);
    p->alpha = malloc(k * sizeof *p->alpha);
    p->done = malloc(k);
    p->pending = malloc(k);
    p->m = malloc(d * d * sizeof *p->m);
    p->m_projected = malloc(d * d * sizeof *p->m_projected);
    p->bb = malloc(d * d * sizeof *p->bb);
    p->basis = malloc(6 * d * sizeof *p->basis);
    p->g = malloc(d * sizeof *p->g);
    p->b = malloc(d * sizeof *p->b);
    p->coords_a = malloc(d * sizeof *p->coords_a);
    p->ones = malloc(d * sizeof *p->ones);
    p->start = malloc(np3 * sizeof *p->start);
    p->kinks = malloc(k * HF_GEOMETRY_MAX_KINKS * sizeof *p->kinks);
    p->n_kinks = calloc(k, sizeof *p->n_kinks);
    p->rows = malloc(HF_GEOMETRY_MAX_KINKS * d * sizeof *p->rows);
    p->z = malloc(d * (HF_GEOMETRY_MAX_KINKS + 1) * sizeof *p->z);
    if (!p->start || !p->kinks || !p->n_kinks || !p->rows || !p->z || !p->pos || !p->trial || !p->forces || !p->y || !p->blocks || !p->energies || !p->old_energies || !p->gmax ||
        !p->step || !p->alpha || !p->done || !p->pending || !p->m || !p->m_projected || !p->bb || !p->basis || !p->g || !p->b || !p->coords_a ||
        !p->ones) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for %d particles", p->n_particles);
        goto done;
    }
    for (size_t i = 0; i < d; i++)
        p->ones[i] = 1.0;
    memcpy(p->start, model->positions_nm + 3 * (size_t)p->first_particle, np3 * sizeof *p->start);
    p->start_is_qm = 1;
    p->best_loss = INFINITY;
    p->stats.n_molecules = p->n_mols;
    if ((st = hf_kink_pairs_build(model, lo, hi, &p->kp)) == HESSFIT_SUCCESS)
        st = hf_model_evaluator_build(model, lo, hi, &p->ev);
done:
    if (st != HESSFIT_SUCCESS)
        hf_geometry_part_destroy(p);
    else
        *out = p;
    return st;
}

/* ---- the second Context ---------------------------------------------------------------------- */

static hessfit_status get_positions(hf_geometry_part *p, double *pos)
{
    return hf_model_context_get_positions(p->ev.context, p->n_particles, pos);
}

static void set_positions(hf_geometry_part *p, const double *pos)
{
    hf_model_context_set_positions(p->ev.context, p->n_particles, pos);
}

/* A hessfit failure on the way to the minima; an undefined geometry gets the likely reason. */
static hessfit_status minimisation_error(const hf_geometry_part *p, hessfit_status hs, const char *what)
{
    hf_model_hessfit_error(hs, what); /* hessfit_error may take the current message as an argument */
    return hessfit_error(hs, "objective: geometry: minimising the MM structures (a second Context of molecules "
                    "%d..%d, whose particles count from molecule %d's first atom, 0-based): %s%s", p->ev.mol_begin + 1,
                    p->ev.mol_end, p->ev.mol_begin + 1, hessfit_last_error(),
                    hs != HESSFIT_ERROR_GEOMETRY ? ""
                                                 : ". A structure driven to an exactly linear angle can have geometry "
                                                   "targets only where that angle's terms are smooth there: angle terms of "
                                                   "theta0 = 180 degrees, no stretch-bend or bend-bend on it");
}

/* Back to the QM geometry after a failure. */
static void restart_from_qm(hf_geometry_part *p, const hessfit_model *model)
{
    memset(p->n_kinks, 0, (size_t)p->n_mols * sizeof *p->n_kinks);
    set_positions(p, model->positions_nm + 3 * (size_t)p->first_particle);
}

/* Forces (and so g = -F), Hessian blocks and per-molecule energies at the Context's positions. */
static hessfit_status evaluate_state(hf_geometry_part *p, int hessian)
{
    hessfit_status hs;
    double e;
    const int n_ev_mols = p->ev.mol_end - p->ev.mol_begin;
    if ((hs = hessfit_force_get_energy_forces(p->ev.force, p->ev.context, &e, p->forces)) != HESSFIT_SUCCESS)
        return minimisation_error(p, hs, "hessfit_force_get_energy_forces");
    if ((hs = hessfit_force_get_molecule_energies(p->ev.force, p->ev.context, p->energies, n_ev_mols)) != HESSFIT_SUCCESS)
        return minimisation_error(p, hs, "hessfit_force_get_molecule_energies");
    if (hessian && (hs = hessfit_force_get_hessian_blocks(p->ev.force, p->ev.context, p->blocks, p->hessian_size)) !=
                       HESSFIT_SUCCESS)
        return minimisation_error(p, hs, "hessfit_force_get_hessian_blocks");
    return HESSFIT_SUCCESS;
}

/* ---- Newton steps ----------------------------------------------------------------------------- */

/* Local index (in the evaluator) of model molecule mol, its first particle (evaluator) and atoms. */
static void molecule_layout(const hf_geometry_part *p, const hessfit_model *model, int mol, int *local, int *first, int *n)
{
    *local = mol - p->ev.mol_begin;
    *first = model->mol_first[mol] - p->first_particle;
    *n = hessfit_model_n_atoms(model, mol);
}

/*
 * A = P (H + sum_i lambda_i d2r'_i/dx2) P + s B^T B (+ mu P) + s sum_i J_i^T J_i for molecule mol at
 * p->pos and its n_k held corners (J_i = dr'_i/dx into p->rows); p->basis / *n_ext: B; *scale:
 * s = mean |H_ii|. A corner's lambda d2r'/dx2 is its constraint's curvature in the Lagrangian's
 * Hessian K; s J^T J (an augmented Lagrangian) leaves the constrained solutions of K as they are
 * (solve_constrained) and makes A positive definite along the corner where the energy alone need
 * not be. In two steps, so that a Newton step that raises mu projects once:
 *   project_molecule  everything but the mu-dependent part into p->m_projected, B^T B into p->bb;
 *                     returns 0, or -1 with *st set when the basis or the projection failed;
 *   factor_damped     p->m = that + (s - mu) B^T B + mu 1 (= s B^T B + mu P) on the lower triangle,
 *                     factored by Cholesky (lower, row-major); returns LAPACK's info.
 */
static int project_molecule(hf_geometry_part *p, const hessfit_model *model, int mol, const hf_kink *kinks, int n_k,
                            int *n_ext, double *scale, hessfit_status *st)
{
    int local, first, n;
    molecule_layout(p, model, mol, &local, &first, &n);
    const int dim = 3 * n;
    const double *h = p->blocks + p->block_offset[local];
    double *m = p->m_projected, s = 0.0;
    *st = HESSFIT_SUCCESS;
    memcpy(m, h, (size_t)dim * dim * sizeof *m);
    for (int i = 0; i < dim; i++)
        s += fabs(h[(size_t)i * dim + i]);
    s = s > 0.0 ? s / dim : 1.0;
    *scale = s;
    for (int i = 0; i < n_k; i++)
        hf_kink_add_curvature(&kinks[i], kinks[i].lambda, dim, m);
    if ((*st = hessfit_vib_external_basis(p->ones, p->pos + 3 * (size_t)first, n, p->basis, n_ext)) != HESSFIT_SUCCESS ||
        (*st = hessfit_vib_project(m, p->basis, *n_ext, n)) != HESSFIT_SUCCESS)
        return -1;
    for (int i = 0; i < n_k; i++) {
        double *row = p->rows + (size_t)i * dim;
        hf_kink_row(&kinks[i], dim, row);
        for (int a = 0; a < dim; a++)
            for (int b = 0; b <= a; b++)
                m[(size_t)a * dim + b] += s * row[a] * row[b];
    }
    for (int i = 0; i < dim; i++)
        for (int j = 0; j <= i; j++) {
            double bb = 0.0;
            for (int r = 0; r < *n_ext; r++)
                bb += p->basis[(size_t)r * dim + i] * p->basis[(size_t)r * dim + j];
            p->bb[(size_t)i * dim + j] = bb;
        }
    return 0;
}

static int factor_damped(hf_geometry_part *p, int dim, double s, double mu)
{
    for (int i = 0; i < dim; i++)
        for (int j = 0; j <= i; j++) {
            const size_t ij = (size_t)i * dim + j;
            p->m[ij] = p->m_projected[ij] + ((s - mu) * p->bb[ij] + (i == j ? mu : 0.0));
        }
    return (int)LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', dim, p->m, dim);
}

/* Both steps (above) with mu = 0: A factored in p->m; -1 with *st set on a failure of the first. */
static int factor_projected(hf_geometry_part *p, const hessfit_model *model, int mol, const hf_kink *kinks, int n_k,
                            int *n_ext, double *scale, hessfit_status *st)
{
    if (project_molecule(p, model, mol, kinks, n_k, n_ext, scale, st) != 0)
        return -1;
    return factor_damped(p, 3 * hessfit_model_n_atoms(model, mol), *scale, 0.0);
}

/* v <- P v for the molecule's B. */
/* Grows the per-slot scratch p->d_slot to n_slots entries (freeing a zero triple adds slots). */
static hessfit_status reserve_slots(hf_geometry_part *p, int n_slots)
{
    if (n_slots <= p->cap_slots)
        return HESSFIT_SUCCESS;
    double *grown = realloc(p->d_slot, (size_t)n_slots * sizeof *grown);
    if (grown == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for %d slots", n_slots);
    p->d_slot = grown;
    p->cap_slots = n_slots;
    return HESSFIT_SUCCESS;
}

static void project_vector(const double *basis, int n_ext, int dim, double *v)
{
    for (int r = 0; r < n_ext; r++) {
        double c = 0.0;
        for (int i = 0; i < dim; i++)
            c += basis[(size_t)r * dim + i] * v[i];
        for (int i = 0; i < dim; i++)
            v[i] -= c * basis[(size_t)r * dim + i];
    }
}

/*
 * With p->m = A factored (factor_projected, n_k corners, rows J in p->rows): the solution x of
 * [K J^T; J 0] [x; l] = [v; -c], K = A - s J^T J, into v (dim entries, projected), and l into
 * lambda (NULL: not wanted); c NULL for zeros. By (K + s J^T J) x + J^T l = v - s J^T c:
 * x = w - Z l with w = A^-1 (v - s J^T c), Z = A^-1 J^T, and J x = -c gives (J Z) l = J w + c.
 */
static hessfit_status solve_constrained(hf_geometry_part *p, int mol, int dim, int n_k, double s, const double *c, double *v,
                                        double *lambda)
{
    const int nr = n_k + 1;
    double sm[HF_GEOMETRY_MAX_KINKS * HF_GEOMETRY_MAX_KINKS], t[HF_GEOMETRY_MAX_KINKS];
    for (int i = 0; i < dim; i++) {
        double r = v[i];
        for (int j = 0; j < n_k; j++) {
            r -= c != NULL ? s * p->rows[(size_t)j * dim + i] * c[j] : 0.0;
            p->z[(size_t)i * nr + 1 + j] = p->rows[(size_t)j * dim + i];
        }
        p->z[(size_t)i * nr] = r;
    }
    int info = (int)LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', dim, nr, p->m, dim, p->z, nr);
    if (info != 0)
        return hessfit_error(HESSFIT_ERROR_LAPACK, "objective: geometry: molecule %d: LAPACKE_dpotrs info %d", mol + 1, info);
    for (int j = 0; j < n_k; j++) {
        const double *row = p->rows + (size_t)j * dim;
        t[j] = c != NULL ? c[j] : 0.0;
        for (int i = 0; i < dim; i++)
            t[j] += row[i] * p->z[(size_t)i * nr];
        for (int l = 0; l < n_k; l++) {
            double jz = 0.0;
            for (int i = 0; i < dim; i++)
                jz += row[i] * p->z[(size_t)i * nr + 1 + l];
            sm[j * n_k + l] = jz;
        }
    }
    if (n_k > 0 && (info = (int)LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n_k, 1, sm, n_k, t, 1)) != 0)
        return hessfit_error(HESSFIT_ERROR_LAPACK, "objective: geometry: molecule %d: the %d pair-switch corners held are not "
                             "independent (LAPACKE_dposv info %d)", mol + 1, n_k, info);
    for (int i = 0; i < dim; i++) {
        double x = p->z[(size_t)i * nr];
        for (int l = 0; l < n_k; l++)
            x -= p->z[(size_t)i * nr + 1 + l] * t[l];
        v[i] = x;
    }
    for (int l = 0; l < n_k && lambda != NULL; l++)
        lambda[l] = t[l];
    return HESSFIT_SUCCESS;
}

/* Whether pair `pair` is among the n first entries of list. */
static int listed(const int *list, int n, int pair)
{
    for (int i = 0; i < n; i++)
        if (list[i] == pair)
            return 1;
    return 0;
}

/*
 * The corners the step dx of molecule mol would cross (its pairs' linearised r' - on changing sign):
 * appended to the held ones (up to HF_GEOMETRY_MAX_KINKS), except those in `dropped`. Concave
 * corners (jump <= 0) never hold a minimum and are skipped. Returns how many were added.
 */
static int add_crossed(hf_geometry_part *p, const hessfit_model *model, int mol, const double *dx, hf_kink *held, int *n_held,
                       const int *dropped, int n_dropped)
{
    int begin, end, added = 0;
    hf_kink_pairs_range(p->kp, mol, &begin, &end);
    for (int pair = begin; pair < end && *n_held < HF_GEOMETRY_MAX_KINKS; pair++) {
        int known = listed(dropped, n_dropped, pair);
        for (int i = 0; i < *n_held && !known; i++)
            known = held[i].pair == pair;
        if (known)
            continue;
        hf_kink k;
        hf_kink_measure(p->kp, model, pair, p->pos, p->first_particle, &k);
        const double c1 = k.c + hf_kink_dot(&k, dx);
        if (k.jump <= 0.0 || (k.c > 0.0) == (c1 > 0.0))
            continue;
        k.lambda = 0.0;
        held[(*n_held)++] = k;
        added++;
    }
    return added;
}

/* The Newton step of molecule k (index into p->mols) into p->step; *trusted: no damping was needed. */
static hessfit_status newton_step(hf_geometry_part *p, const hessfit_model *model, int k, int *trusted)
{
    const int mol = p->mols[k];
    int local, first, n, n_ext = 0, info;
    hessfit_status st;
    molecule_layout(p, model, mol, &local, &first, &n);
    const int dim = 3 * n;
    double *dx = p->step + (size_t)k * p->max_dim;
    double s = 1.0, mu = 0.0;
    hf_kink *held = p->kinks + (size_t)k * HF_GEOMETRY_MAX_KINKS;
    int *n_held = &p->n_kinks[k], dropped[4 * HF_GEOMETRY_MAX_KINKS], n_dropped = 0;
    /* active set: solve with the held corners; let go of the one whose multiplier lies farthest
     * outside its subgradient range (the minimum is then off that corner), else hold the corners
     * the step would cross, and solve again */
    for (int round = 0;; round++) {
        double c[HF_GEOMETRY_MAX_KINKS], lambda[HF_GEOMETRY_MAX_KINKS];
        if (project_molecule(p, model, mol, held, *n_held, &n_ext, &s, &st) != 0)
            return st;
        for (int attempt = 0;; attempt++) {
            info = factor_damped(p, dim, s, mu);
            if (info == 0)
                break;
            if (attempt > 16)
                return hessfit_error(HESSFIT_ERROR_LAPACK, "objective: geometry: molecule %d: no positive definite damped "
                                "Hessian (LAPACKE_dpotrf info %d)", mol + 1, info);
            mu = mu == 0.0 ? 1e-4 * s : 10.0 * mu;
        }
        for (int i = 0; i < dim; i++)
            dx[i] = p->forces[3 * (size_t)first + i]; /* -g */
        project_vector(p->basis, n_ext, dim, dx);
        for (int i = 0; i < *n_held; i++)
            c[i] = held[i].c;
        if ((st = solve_constrained(p, mol, dim, *n_held, s, c, dx, lambda)) != HESSFIT_SUCCESS)
            return st;
        if (n_dropped == 4 * HF_GEOMETRY_MAX_KINKS)
            break;
        int worst = -1;
        double worst_by = 0.0;
        for (int i = 0; i < *n_held; i++) {
            const double by = hf_kink_violation(&held[i], lambda[i]);
            if (by > 1e-9 * held[i].jump && by > worst_by) {
                worst = i;
                worst_by = by;
            }
        }
        if (worst >= 0) {
            dropped[n_dropped++] = held[worst].pair;
            held[worst] = held[--*n_held];
            continue;
        }
        for (int i = 0; i < *n_held; i++)
            held[i].lambda = lambda[i];
        if (round >= 2 * HF_GEOMETRY_MAX_KINKS || add_crossed(p, model, mol, dx, held, n_held, dropped, n_dropped) == 0)
            break;
    }
    *trusted = mu == 0.0;
    double largest = 0.0;
    for (int a = 0; a < n; a++)
        largest = fmax(largest, sqrt(dx[3 * a] * dx[3 * a] + dx[3 * a + 1] * dx[3 * a + 1] + dx[3 * a + 2] * dx[3 * a + 2]));
    if (largest > HF_GEOMETRY_MAX_STEP_NM)
        for (int i = 0; i < dim; i++)
            dx[i] *= HF_GEOMETRY_MAX_STEP_NM / largest;
    return HESSFIT_SUCCESS;
}

/*
 * The largest component of molecule k's gradient g at p->pos, less its held corners' part: the
 * corners are measured again (those farther than HF_GEOMETRY_KINK_KEEP from their edge let go), and
 * with the least-squares multipliers (J J^T) l = -J g the result is max |g + J^T l|. *on_corners:
 * every held pair within HF_GEOMETRY_KINK_TOL of its edge with l in its corner's range (else the
 * molecule is not at its minimum whatever the gradient).
 */
static double reduced_gradient(hf_geometry_part *p, const hessfit_model *model, int k, int *on_corners)
{
    const int mol = p->mols[k];
    int local, first, n;
    molecule_layout(p, model, mol, &local, &first, &n);
    const int dim = 3 * n;
    hf_kink *held = p->kinks + (size_t)k * HF_GEOMETRY_MAX_KINKS;
    int n_k = 0;
    for (int i = 0; i < p->n_kinks[k]; i++) {
        hf_kink kink;
        hf_kink_measure(p->kp, model, held[i].pair, p->pos, p->first_particle, &kink);
        kink.lambda = held[i].lambda;
        if (fabs(kink.c) <= HF_GEOMETRY_KINK_KEEP)
            held[n_k++] = kink;
    }
    p->n_kinks[k] = n_k;
    double *g = p->g, sm[HF_GEOMETRY_MAX_KINKS * HF_GEOMETRY_MAX_KINKS], l[HF_GEOMETRY_MAX_KINKS];
    for (int i = 0; i < dim; i++)
        g[i] = -p->forces[3 * (size_t)first + i];
    *on_corners = 1;
    if (n_k > 0) {
        for (int i = 0; i < n_k; i++) {
            hf_kink_row(&held[i], dim, p->rows + (size_t)i * dim);
            l[i] = -hf_kink_dot(&held[i], g);
            for (int j = 0; j < n_k; j++)
                sm[i * n_k + j] = hf_kink_dot(&held[i], p->rows + (size_t)j * dim);
        }
        if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n_k, 1, sm, n_k, l, 1) != 0)
            *on_corners = 0;
        for (int i = 0; i < n_k && *on_corners; i++) {
            *on_corners = fabs(held[i].c) <= HF_GEOMETRY_KINK_TOL && hf_kink_violation(&held[i], l[i]) <= 1e-9 * held[i].jump;
            for (int a = 0; a < dim; a++)
                g[a] += l[i] * p->rows[(size_t)i * dim + a];
        }
    }
    double largest = 0.0;
    for (int i = 0; i < dim; i++)
        largest = fmax(largest, fabs(g[i]));
    return largest;
}

/* Newton steps from the Context's positions until every molecule with targets is at its minimum;
 * on return p->pos, p->forces and p->blocks are those of the minima (and in the Context). */
static hessfit_status newton(hf_geometry_part *p, const hessfit_model *model)
{
    hessfit_status st;
    int steps = 0;
    memset(p->done, 0, (size_t)p->n_mols);
    for (int k = 0; k < p->n_mols; k++)
        p->gmax[k] = INFINITY;
    for (int iteration = 0;; iteration++) {
        if ((st = get_positions(p, p->pos)) != HESSFIT_SUCCESS || (st = evaluate_state(p, 1)) != HESSFIT_SUCCESS)
            return st;
        int all_done = 1;
        p->stats.max_gradient = 0.0;
        for (int k = 0; k < p->n_mols; k++) {
            const int mol = p->mols[k];
            int on_corners;
            const double g = reduced_gradient(p, model, k, &on_corners);
            if (!isfinite(g))
                return hessfit_error(HESSFIT_ERROR_NONFINITE, "objective: geometry: molecule %d: the MM gradient is not finite "
                                "during the minimisation", mol + 1);
            /* converged, or stalled at round-off (a step that no longer halves the gradient) */
            p->done[k] = on_corners && (g <= HESSFIT_OBJ_GEOMETRY_GRADIENT_TOL ||
                                        (g <= HF_GEOMETRY_GRADIENT_FLOOR && g > 0.5 * p->gmax[k]));
            p->gmax[k] = g;
            p->stats.max_gradient = fmax(p->stats.max_gradient, g);
            all_done &= p->done[k];
        }
        if (all_done)
            break;
        if (iteration == HF_GEOMETRY_NEWTON_MAX_STEPS) {
            for (int k = 0; k < p->n_mols; k++)
                if (!p->done[k])
                    return hessfit_error(HESSFIT_ERROR_GEOMETRY, "objective: geometry: molecule %d: no MM minimum after %d "
                                    "Newton steps (largest gradient component %.3g kJ/mol/nm)", p->mols[k] + 1,
                                    iteration, p->gmax[k]);
        }
        /* steps; molecules whose step is trusted take it whole, the others search along it */
        memcpy(p->old_energies, p->energies, (size_t)(p->ev.mol_end - p->ev.mol_begin) * sizeof *p->energies);
        memcpy(p->trial, p->pos, 3 * (size_t)p->n_particles * sizeof *p->trial);
        int any_pending = 0;
        for (int k = 0; k < p->n_mols; k++) {
            int trusted = 0;
            p->pending[k] = 0;
            if (p->done[k])
                continue;
            if ((st = newton_step(p, model, k, &trusted)) != HESSFIT_SUCCESS)
                return st;
            p->alpha[k] = 1.0;
            p->pending[k] = !(trusted && p->gmax[k] < HF_GEOMETRY_NEWTON_TRUST);
            any_pending |= p->pending[k];
            steps++;
        }
        for (int search = 0;; search++) {
            for (int k = 0; k < p->n_mols; k++) {
                int local, first, n;
                if (p->done[k])
                    continue;
                molecule_layout(p, model, p->mols[k], &local, &first, &n);
                for (int i = 0; i < 3 * n; i++)
                    p->trial[3 * (size_t)first + i] =
                        p->pos[3 * (size_t)first + i] + p->alpha[k] * p->step[(size_t)k * p->max_dim + i];
            }
            set_positions(p, p->trial);
            if (!any_pending)
                break;
            hessfit_status hs = hessfit_force_get_molecule_energies(p->ev.force, p->ev.context, p->energies,
                                                                    p->ev.mol_end - p->ev.mol_begin);
            if (hs != HESSFIT_SUCCESS)
                return minimisation_error(p, hs, "hessfit_force_get_molecule_energies");
            any_pending = 0;
            for (int k = 0; k < p->n_mols; k++) {
                const int local = p->mols[k] - p->ev.mol_begin;
                const double e0 = p->old_energies[local];
                if (!p->pending[k])
                    continue;
                if (p->energies[local] <= e0 + 1e-12 * fmax(1.0, fabs(e0))) {
                    p->pending[k] = 0;
                    continue;
                }
                if (search == HF_GEOMETRY_LINE_SEARCH)
                    return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry: molecule %d: no step along the Newton "
                                    "direction lowers the MM energy (largest gradient component %.3g kJ/mol/nm)",
                                    p->mols[k] + 1, p->gmax[k]);
                p->alpha[k] *= 0.5;
                any_pending = 1;
            }
        }
    }
    p->stats.last_newton_steps = steps;
    p->stats.corners = 0;
    for (int k = 0; k < p->n_mols; k++)
        p->stats.corners += p->n_kinks[k];
    p->stats.newton_steps += (unsigned long long)steps;
    return HESSFIT_SUCCESS;
}

/* ---- evaluation -------------------------------------------------------------------------------- */

static hessfit_status minimise_and_measure(hf_geometry_part *p, hessfit_model *model, double *loss, double *residuals,
                                      int gradient, double *d_slot)
{
    hessfit_status st;
    hessfit_status hs;
    const int n_slots = hessfit_model_n_slots(model);
    if ((st = hf_model_evaluator_sync(model, &p->ev)) != HESSFIT_SUCCESS)
        return st;
    double t0 = now_s();
    if ((hs = hessfit_context_minimize(p->ev.context, HF_GEOMETRY_LBFGS_TOL, HF_GEOMETRY_LBFGS_MAX_ITER)) !=
        HESSFIT_SUCCESS)
        return minimisation_error(p, hs, "hessfit_context_minimize");
    double t1 = now_s();
    if ((st = newton(p, model)) != HESSFIT_SUCCESS)
        return st;
    double t2 = now_s();
    p->stats.seconds_minimizer += t1 - t0;
    p->stats.seconds_newton += t2 - t1;

    /* measure; b = dL/dx (per nm) into p->y, particle by particle */
    double sum = 0.0;
    memset(p->y, 0, 3 * (size_t)p->n_particles * sizeof *p->y);
    for (int i = 0; i < p->n; i++) {
        const hessfit_geometry_target *t = &p->targets[i];
        const int na = hf_geometry_kind_atoms(t->kind), first = model->mol_first[t->mol] - p->first_particle;
        double xa[12], grad[12];
        const double *x[4] = {NULL, NULL, NULL, NULL};
        for (int a = 0; a < na; a++) {
            for (int c = 0; c < 3; c++)
                xa[3 * a + c] = p->pos[3 * (size_t)(first + t->atoms[a]) + c] * HESSFIT_NM_TO_ANGSTROM;
            x[a] = xa + 3 * a;
        }
        if (hf_geometry_value(t->kind, x, &p->mm_value[i], grad) != 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d (%s of molecule %d): undefined "
                            "at the MM minimum (coincident or collinear atoms)", i + 1, kind_name(t->kind), t->mol + 1);
        const double r = t->weight * hf_geometry_difference(t->kind, p->qm_value[i], p->mm_value[i]);
        sum += r * r;
        if (residuals != NULL)
            residuals[i] = r;
        /* dL/dx = 2 r dr/dq dq/dx, dr/dq = -w; per nm = 10 per Angstrom */
        for (int a = 0; a < na; a++)
            for (int c = 0; c < 3; c++)
                p->y[3 * (size_t)(first + t->atoms[a]) + c] += -2.0 * r * t->weight * grad[3 * a + c] * HESSFIT_NM_TO_ANGSTROM;
    }
    *loss = sum;
    if (!gradient || n_slots == 0)
        return HESSFIT_SUCCESS;

    /* lambda per molecule: (P H P + s B^T B) lambda = P b, in place in p->y */
    t0 = now_s();
    for (int k = 0; k < p->n_mols; k++) {
        int local, first, n, n_ext = 0;
        double scale;
        const int mol = p->mols[k];
        molecule_layout(p, model, mol, &local, &first, &n);
        const hf_kink *held = p->kinks + (size_t)k * HF_GEOMETRY_MAX_KINKS;
        const int info = factor_projected(p, model, mol, held, p->n_kinks[k], &n_ext, &scale, &st);
        if (st != HESSFIT_SUCCESS)
            return st;
        if (info != 0)
            return hessfit_error(HESSFIT_ERROR_LAPACK, "objective: geometry: molecule %d: the MM structure found is not a strict "
                            "minimum (its Hessian, rigid-body motions projected out, is not positive definite: "
                            "LAPACKE_dpotrf info %d)", mol + 1, info);
        double *lambda = p->y + 3 * (size_t)first;
        project_vector(p->basis, n_ext, 3 * n, lambda);
        if ((st = solve_constrained(p, mol, 3 * n, p->n_kinks[k], scale, NULL, lambda, NULL)) != HESSFIT_SUCCESS)
            return st;
    }
    if ((st = reserve_slots(p, n_slots)) != HESSFIT_SUCCESS)
        return st;
    hs = hessfit_force_get_gradient_contraction_derivatives(p->ev.force, p->ev.context, p->y, 3 * p->n_particles,
                                                            p->d_slot, n_slots);
    if (hs != HESSFIT_SUCCESS)
        return hf_model_hessfit_error(hs, "hessfit_force_get_gradient_contraction_derivatives");
    for (int s = 0; s < n_slots; s++)
        d_slot[s] -= p->d_slot[s]; /* dL/dp = -lambda . d(grad E)/dp */
    p->stats.seconds_gradient += now_s() - t0;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_geometry_part_evaluate(hf_geometry_part *p, hessfit_model *model, double *loss, double *d_slot, double *residuals)
{
    /* d_slot changes only at the very end of a successful evaluation, so a failed one can be retried */
    memset(p->n_kinks, 0, (size_t)p->n_mols * sizeof *p->n_kinks);
    set_positions(p, p->start);
    hessfit_status st = minimise_and_measure(p, model, loss, residuals, d_slot != NULL, d_slot);
    if (st != HESSFIT_SUCCESS && !p->start_is_qm) { /* from the best minima it failed: once more from the QM geometry */
        restart_from_qm(p, model);
        st = minimise_and_measure(p, model, loss, residuals, d_slot != NULL, d_slot);
    }
    p->stats.evaluations++;
    p->last_ok = st == HESSFIT_SUCCESS;
    if (st != HESSFIT_SUCCESS) {
        char why[HESSFIT_ERROR_MESSAGE_SIZE];
        snprintf(why, sizeof why, "%s", hessfit_last_error());
        restart_from_qm(p, model);
        for (int i = 0; i < p->n; i++)
            p->mm_value[i] = NAN;
        return hessfit_error(st, "%s", why);
    }
    return HESSFIT_SUCCESS;
}

void hf_geometry_part_keep(hf_geometry_part *p, double total_loss)
{
    if (p == NULL || !p->last_ok || !(total_loss < p->best_loss))
        return;
    memcpy(p->start, p->pos, 3 * (size_t)p->n_particles * sizeof *p->start);
    p->start_is_qm = 0;
    p->best_loss = total_loss;
}

void hf_geometry_part_values(const hf_geometry_part *p, double *qm, double *mm)
{
    for (int i = 0; p != NULL && i < p->n; i++) {
        if (qm != NULL)
            qm[i] = p->qm_value[i];
        if (mm != NULL)
            mm[i] = p->mm_value[i];
    }
}

void hf_geometry_part_stats(const hf_geometry_part *p, hessfit_objective_geometry_stats *stats)
{
    if (p == NULL)
        memset(stats, 0, sizeof *stats);
    else
        *stats = p->stats;
}

/* ---- targets from a structure's terms ---------------------------------------------------------- */

/* Whether the angle a-b-c of the QM structure is within HESSFIT_OBJ_GEOMETRY_LINEAR_DEG of 180. */
static int nearly_linear(const hessfit_molecule *qm, int a, int b, int c)
{
    const double *x[4] = {qm->coords + 3 * (size_t)a, qm->coords + 3 * (size_t)b, qm->coords + 3 * (size_t)c, NULL};
    double theta;
    return hf_geometry_value(HESSFIT_GEOMETRY_ANGLE, x, &theta, NULL) != 0 || theta > 180.0 - HESSFIT_OBJ_GEOMETRY_LINEAR_DEG;
}

hessfit_status hessfit_objective_geometry_targets_of_terms(const hessfit_typed_molecule *typed, const hessfit_molecule *qm, int mol,
                                                 unsigned kinds, const double weight[3], hessfit_geometry_target **targets,
                                                 int *n)
{
    if (typed == NULL || qm == NULL || weight == NULL || targets == NULL || n == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_geometry_targets_of_terms: a NULL argument");
    if (qm->coords == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry: molecule %d%s%s%s has no coordinates to take "
                        "the targets from", mol + 1, qm->source ? " (" : "", qm->source ? qm->source : "",
                        qm->source ? ")" : "");
    for (int i = 0; i < typed->n_terms; i++) {
        const hessfit_typed_term *t = &typed->terms[i];
        hessfit_geometry_kind kind;
        if (t->kind == HESSFIT_TERM_BOND && (kinds & HESSFIT_OBJ_GEOMETRY_BONDS))
            kind = HESSFIT_GEOMETRY_BOND;
        else if (t->kind == HESSFIT_TERM_ANGLE && (kinds & HESSFIT_OBJ_GEOMETRY_ANGLES))
            kind = HESSFIT_GEOMETRY_ANGLE;
        else if (t->kind == HESSFIT_TERM_TORSION && (kinds & HESSFIT_OBJ_GEOMETRY_TORSIONS))
            kind = HESSFIT_GEOMETRY_TORSION;
        else
            continue;
        const int na = hf_geometry_kind_atoms(kind);
        int in_range = 1;
        for (int a = 0; a < na; a++)
            in_range &= t->atoms[a] >= 0 && t->atoms[a] < qm->n_atoms;
        if (!in_range)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry: molecule %d: term %d has an atom outside "
                            "1..%d", mol + 1, i + 1, qm->n_atoms);
        if ((kind == HESSFIT_GEOMETRY_ANGLE && nearly_linear(qm, t->atoms[0], t->atoms[1], t->atoms[2])) ||
            (kind == HESSFIT_GEOMETRY_TORSION && (nearly_linear(qm, t->atoms[0], t->atoms[1], t->atoms[2]) ||
                                             nearly_linear(qm, t->atoms[1], t->atoms[2], t->atoms[3]))))
            continue;
        hessfit_geometry_target *grown = realloc(*targets, (size_t)(*n + 1) * sizeof *grown);
        if (grown == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for %d targets", *n + 1);
        *targets = grown;
        hessfit_geometry_target *g = &grown[(*n)++];
        g->mol = mol;
        g->kind = kind;
        for (int a = 0; a < 4; a++)
            g->atoms[a] = a < na ? t->atoms[a] : -1;
        g->weight = weight[kind];
    }
    return HESSFIT_SUCCESS;
}

/* ---- the residual Jacobian -------------------------------------------------------------------- */

/* dr_i/dx of target i (per nm) at p->pos into v (the molecule's 3 n coordinates, zeroed first). */
static hessfit_status target_row(const hf_geometry_part *p, const hessfit_model *model, int i, int dim, double *v)
{
    const hessfit_geometry_target *t = &p->targets[i];
    const int na = hf_geometry_kind_atoms(t->kind), first = model->mol_first[t->mol] - p->first_particle;
    double xa[12], grad[12], value;
    const double *x[4] = {NULL, NULL, NULL, NULL};
    for (int a = 0; a < na; a++) {
        for (int c = 0; c < 3; c++)
            xa[3 * a + c] = p->pos[3 * (size_t)(first + t->atoms[a]) + c] * HESSFIT_NM_TO_ANGSTROM;
        x[a] = xa + 3 * a;
    }
    if (hf_geometry_value(t->kind, x, &value, grad) != 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry target %d (%s of molecule %d): undefined "
                        "at the MM minimum (coincident or collinear atoms)", i + 1, kind_name(t->kind), t->mol + 1);
    memset(v, 0, (size_t)dim * sizeof *v);
    for (int a = 0; a < na; a++) /* r = w (target - q): dr/dx = -w dq/dx, per nm = 10 per Angstrom */
        for (int c = 0; c < 3; c++)
            v[3 * t->atoms[a] + c] += -t->weight * grad[3 * a + c] * HESSFIT_NM_TO_ANGSTROM;
    return HESSFIT_SUCCESS;
}

/* out = y . d(grad E)/dslot for y zero but on molecule [first, first + dim/3) where it is v. */
static hessfit_status molecule_contraction(hf_geometry_part *p, int first, int dim, const double *v, int n_slots,
                                           double *out)
{
    memset(p->y, 0, 3 * (size_t)p->n_particles * sizeof *p->y);
    memcpy(p->y + 3 * (size_t)first, v, (size_t)dim * sizeof *v);
    const hessfit_status hs = hessfit_force_get_gradient_contraction_derivatives(p->ev.force, p->ev.context, p->y,
                                                                                 3 * p->n_particles, out, n_slots);
    return hs == HESSFIT_SUCCESS ? HESSFIT_SUCCESS
                                 : hf_model_hessfit_error(hs, "hessfit_force_get_gradient_contraction_derivatives");
}

/*
 * Per molecule, one of two exact routes, whichever needs fewer gradient contractions (each a
 * kernel pass over the second Context; the solves with the factor are cheap beside them):
 *   per-residual adjoints: lambda_i for each of its n_t targets, then y = lambda_i: n_t passes;
 *   per-coordinate rows: D = d(grad E)/dslot by y = e_c for each of its 3 n coordinates (3 n
 *     passes), then d r_i/dslot = -lambda_i^T D (a torsion-rich target set has n_t > 3 n).
 * (Per-free-value solves, d x_min / dp = -H^-1 d(grad E)/dp, would need D as well, and then a solve per
 * slot the molecule uses: never fewer passes than the cheaper of the two.)
 */
hessfit_status hf_geometry_part_jacobian(hf_geometry_part *p, hessfit_model *model, const int *used, int n_used,
                                         double *jac_t)
{
    hessfit_status st = HESSFIT_SUCCESS;
    const int n_slots = hessfit_model_n_slots(model);
    memset(jac_t, 0, (size_t)n_used * (size_t)p->n * sizeof *jac_t);
    if (!p->last_ok)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: geometry: the Jacobian needs a successful evaluation "
                        "at the same parameters first");
    if (n_slots == 0 || n_used == 0)
        return HESSFIT_SUCCESS;
    if ((st = reserve_slots(p, n_slots)) != HESSFIT_SUCCESS)
        return st;
    double *lambda = malloc((size_t)p->max_dim * sizeof *lambda), *unit = calloc((size_t)p->max_dim, sizeof *unit);
    double *d = NULL;
    if (lambda == NULL || unit == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for the Jacobian");
        goto done;
    }
    for (int k = 0; k < p->n_mols && st == HESSFIT_SUCCESS; k++) {
        int local, first, n, n_ext = 0, n_t = 0;
        double scale;
        const int mol = p->mols[k];
        molecule_layout(p, model, mol, &local, &first, &n);
        const int dim = 3 * n;
        for (int i = 0; i < p->n; i++)
            n_t += p->targets[i].mol == mol;
        const int by_coordinate = n_t > dim;
        if (by_coordinate) {
            if (d == NULL && (d = malloc((size_t)p->max_dim * (size_t)n_used * sizeof *d)) == NULL) {
                st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for the Jacobian");
                break;
            }
            for (int c = 0; c < dim && st == HESSFIT_SUCCESS; c++) {
                unit[c] = 1.0;
                st = molecule_contraction(p, first, dim, unit, n_slots, p->d_slot);
                unit[c] = 0.0;
                for (int k = 0; k < n_used; k++) /* D's row c on the used slots */
                    d[(size_t)c * n_used + k] = p->d_slot[used[k]];
            }
            if (st != HESSFIT_SUCCESS)
                break;
        }
        const hf_kink *held = p->kinks + (size_t)k * HF_GEOMETRY_MAX_KINKS;
        const int info = factor_projected(p, model, mol, held, p->n_kinks[k], &n_ext, &scale, &st);
        if (st != HESSFIT_SUCCESS)
            break;
        if (info != 0) {
            st = hessfit_error(HESSFIT_ERROR_LAPACK, "objective: geometry: molecule %d: the MM structure found is not a "
                          "strict minimum (LAPACKE_dpotrf info %d)", mol + 1, info);
            break;
        }
        for (int i = 0; i < p->n && st == HESSFIT_SUCCESS; i++) {
            if (p->targets[i].mol != mol)
                continue;
            if ((st = target_row(p, model, i, dim, lambda)) != HESSFIT_SUCCESS)
                break;
            project_vector(p->basis, n_ext, dim, lambda);
            if ((st = solve_constrained(p, mol, dim, p->n_kinks[k], scale, NULL, lambda, NULL)) != HESSFIT_SUCCESS)
                break;
            if (by_coordinate) { /* d r_i/dslot = -lambda_i^T D */
                cblas_dgemv(CblasRowMajor, CblasTrans, dim, n_used, -1.0, d, n_used, lambda, 1, 0.0, p->d_slot, 1);
                for (int k = 0; k < n_used; k++)
                    jac_t[(size_t)k * p->n + i] = p->d_slot[k];
            } else {
                if ((st = molecule_contraction(p, first, dim, lambda, n_slots, p->d_slot)) != HESSFIT_SUCCESS)
                    break;
                for (int k = 0; k < n_used; k++)
                    jac_t[(size_t)k * p->n + i] = -p->d_slot[used[k]];
            }
        }
    }
done:
    free(lambda);
    free(unit);
    free(d);
    return st;
}
