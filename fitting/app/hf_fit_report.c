/* QM against MM per molecule and per mode at two points of a training set's free values
 * (hf_fit_report.h). */
#include "hf_fit_report.h"
#include "hf_json_write.h"

#include "hessfit_units.h"
#include "hf_vec3.h"
#include "hessfit_vib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The QM side of one molecule's rows, fixed for both points. */
typedef struct {
    int n_atoms, dim;
    double *masses; /* n_atoms, amu (the model's particles) */
    int n_rows;
    int *qm_mode;   /* per row: the QM mode compared (see qm_index below), -1 unknown */
    double *qm_vec; /* n_rows x dim: the row's unit mass-weighted QM mode (NaN row: unknown) */
    double *qm_cm1, *weight;
    int first_target;    /* the molecule's first frequency target of the objective */
    long long residuals; /* where its residuals start */
    int n_targets;       /* its frequency targets */
} qm_rows;

static void rows_free(qm_rows *q)
{
    free(q->masses);
    free(q->qm_mode);
    free(q->qm_vec);
    free(q->qm_cm1);
    free(q->weight);
}

/*
 * Vibrational analysis of a Hartree/Bohr^2 Hessian: frequencies (cm^-1) and unit mass-weighted
 * modes (rows) in ascending eigenvalue order, and which of them are vibrations: with projection,
 * those outside the rigid-body span (its directions come out at eigenvalue ~0 and are dropped, as
 * the objective kernel does); without, all. vib[0..*n_vib) lists the vibrations in ascending order.
 */
static hessfit_status analyse(const double *hessian, const double *masses, const double *coords, int n, int project,
                         double *freq, double *modes, int *vib, int *n_vib)
{
    const size_t d = 3 * (size_t)n;
    double basis[6 * 3 * 64], *b = basis;
    int n_ext = 0;
    hessfit_status st = hessfit_vib_analyse(hessian, masses, coords, n, hessfit_frequency_factor_hartree_bohr2_amu(),
                                  project ? HESSFIT_VIB_PROJECT_EXTERNAL : 0u, freq, modes, NULL);
    if (st != HESSFIT_SUCCESS)
        return st;
    *n_vib = 0;
    if (!project) {
        for (size_t j = 0; j < d; j++)
            vib[(*n_vib)++] = (int)j;
        return HESSFIT_SUCCESS;
    }
    if (n > 64 && (b = malloc(6 * d * sizeof *b)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for a vibrational analysis of %d atoms", n);
    if ((st = hessfit_vib_external_basis(masses, coords, n, b, &n_ext)) == HESSFIT_SUCCESS)
        for (size_t j = 0; j < d; j++) {
            double weight = 0.0;
            for (int r = 0; r < n_ext; r++) {
                double dot = 0.0;
                for (size_t i = 0; i < d; i++)
                    dot += b[(size_t)r * d + i] * modes[j * d + i];
                weight += dot * dot;
            }
            if (weight <= 0.5)
                vib[(*n_vib)++] = (int)j;
        }
    if (b != basis)
        free(b);
    return st;
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* Indices 0..n-1 sorted by values (insertion sort: n is a molecule's 3N). */
static void sort_indices(int *idx, int n, const double *values)
{
    for (int i = 0; i < n; i++)
        idx[i] = i;
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i;
        while (j > 0 && values[idx[j - 1]] > values[v]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

/* Whether structure m has Hessian-space targets. */
static int has_hessian_targets(const hf_training_set *set, int m)
{
    const hessfit_objective_options *o = &set->mol_objective[m];
    return o->frequencies != HESSFIT_OBJ_FREQUENCIES_NONE || o->eigenmatrix || o->hessian;
}

static hessfit_status build_rows(hf_training_set *set, int m, int first_target, int n_targets, qm_rows *q)
{
    const hessfit_molecule *mol = &set->mols[m];
    const hessfit_objective_options *o = &set->mol_objective[m];
    const int n = mol->n_atoms, dim = 3 * n;
    if (!has_hessian_targets(set, m)) { /* no rows */
        memset(q, 0, sizeof *q);
        q->n_atoms = n;
        q->dim = dim;
        q->first_target = first_target;
        return HESSFIT_SUCCESS;
    }
    const size_t d = (size_t)dim;
    double *freq = malloc(d * sizeof *freq), *modes = malloc(d * d * sizeof *modes);
    double *pfreq = malloc(d * sizeof *pfreq), *pmodes = malloc(d * d * sizeof *pmodes), *shifted = NULL;
    int *vib = malloc(d * sizeof *vib), *pvib = malloc(d * sizeof *pvib), *order = malloc(d * sizeof *order);
    int *particles = malloc((size_t)n * sizeof *particles), n_vib = 0, n_pvib = 0, count = 0;
    hessfit_status st = HESSFIT_SUCCESS;
    memset(q, 0, sizeof *q);
    q->n_atoms = n;
    q->dim = dim;
    q->first_target = first_target;
    q->n_targets = n_targets;
    q->masses = malloc((size_t)n * sizeof *q->masses);
    if (!freq || !modes || !pfreq || !pmodes || !vib || !pvib || !order || !particles || !q->masses) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report of %s", set->labels[m]);
        goto done;
    }
    hessfit_status hs = hessfit_force_get_molecule_particles(hessfit_model_force(set->model), m, particles, n, &count);
    if (hs != HESSFIT_SUCCESS || count != n) {
        st = hs != HESSFIT_SUCCESS ? hessfit_error(hs, "report: the particles of %s: %s", set->labels[m], hessfit_last_error())
                                   : hessfit_error(HESSFIT_ERROR_SIZE, "report: %s has %d particles, expected %d",
                                              set->labels[m], count, n);
        goto done;
    }
    for (int a = 0; a < n; a++)
        q->masses[a] = OpenMM_System_getParticleMass(hessfit_model_system(set->model), particles[a]);
    if ((st = analyse(mol->hessian, q->masses, mol->coords, n, 1, pfreq, pmodes, pvib, &n_pvib)) != HESSFIT_SUCCESS)
        goto done;

    q->n_rows = o->frequencies == HESSFIT_OBJ_FREQUENCIES_NONE ? n_pvib : n_targets;
    q->qm_mode = malloc((size_t)(q->n_rows + 1) * sizeof *q->qm_mode);
    q->qm_vec = malloc(((size_t)q->n_rows + 1) * d * sizeof *q->qm_vec);
    q->qm_cm1 = malloc((size_t)(q->n_rows + 1) * sizeof *q->qm_cm1);
    q->weight = malloc((size_t)(q->n_rows + 1) * sizeof *q->weight);
    if (!q->qm_mode || !q->qm_vec || !q->qm_cm1 || !q->weight) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report of %s", set->labels[m]);
        goto done;
    }
    for (int k = 0; k < q->n_rows; k++) {
        q->qm_mode[k] = -1;
        for (size_t i = 0; i < d; i++)
            q->qm_vec[(size_t)k * d + i] = NAN;
        q->weight[k] = 0.0;
        q->qm_cm1[k] = NAN;
        if (o->frequencies != HESSFIT_OBJ_FREQUENCIES_NONE) {
            int mol_of;
            if ((st = hessfit_objective_frequency_target(set->objective, first_target + k, &mol_of, &q->qm_cm1[k],
                                                    &q->weight[k])) != HESSFIT_SUCCESS)
                goto done;
        }
    }
    if (o->frequencies == HESSFIT_OBJ_FREQUENCIES_Q2MM) {
        /* the targets: unprojected QM frequencies above the threshold, ascending (a replaced
         * reaction coordinate sorted in), as hessfit_objective.h builds them */
        if ((st = analyse(mol->hessian, q->masses, NULL, n, 0, freq, modes, vib, &n_vib)) != HESSFIT_SUCCESS)
            goto done;
        if ((shifted = malloc(d * sizeof *shifted)) == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report of %s", set->labels[m]);
            goto done;
        }
        memcpy(shifted, freq, d * sizeof *shifted);
        if (o->ts == HESSFIT_OBJ_TS_REPLACE && n_pvib > 0 && pfreq[pvib[0]] < 0.0)
            shifted[0] = hessfit_eigenvalue_to_cm1(o->ts_replace_eigenvalue, hessfit_frequency_factor_hartree_bohr2_amu());
        sort_indices(order, dim, shifted);
        int k = 0;
        for (int j = 0; j < dim; j++)
            if (shifted[order[j]] > o->frequency_threshold) {
                if (k < q->n_rows) {
                    q->qm_mode[k] = order[j];
                    memcpy(q->qm_vec + (size_t)k * d, modes + (size_t)order[j] * d, d * sizeof(double));
                }
                k++;
            }
        if (k != q->n_rows) /* not the objective's targets after all: leave the modes unknown */
            for (int r = 0; r < q->n_rows; r++)
                q->qm_mode[r] = -1;
    } else {
        for (int k = 0; k < q->n_rows && k < n_pvib; k++) {
            q->qm_mode[k] = k; /* the k-th vibration of the projected analysis */
            memcpy(q->qm_vec + (size_t)k * d, pmodes + (size_t)pvib[k] * d, d * sizeof(double));
            if (o->frequencies == HESSFIT_OBJ_FREQUENCIES_NONE)
                q->qm_cm1[k] = pfreq[pvib[k]];
        }
        if (q->n_rows != n_pvib)
            st = hessfit_error(HESSFIT_ERROR_COUNT, "report: %s: %d frequency targets, but %d projected QM vibrations",
                          set->labels[m], q->n_rows, n_pvib);
    }
done:
    free(freq);
    free(modes);
    free(pfreq);
    free(pmodes);
    free(shifted);
    free(vib);
    free(pvib);
    free(order);
    free(particles);
    if (st != HESSFIT_SUCCESS)
        rows_free(q);
    return st;
}

/* The MM side of molecule m's rows at the model's current values (after an evaluation). */
static hessfit_status fill_mm(hf_training_set *set, int m, const qm_rows *q, const int *pairing, const double *residuals,
                         int after, hessfit_report_mode *rows)
{
    const hessfit_objective_options *o = &set->mol_objective[m];
    if (q->n_rows == 0)
        return HESSFIT_SUCCESS;
    const size_t d = (size_t)q->dim;
    double *h = malloc(d * d * sizeof *h), *freq = malloc(d * sizeof *freq), *modes = malloc(d * d * sizeof *modes);
    int *vib = malloc(d * sizeof *vib), n_vib = 0;
    hessfit_status st;
    if (!h || !freq || !modes || !vib) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report of %s", set->labels[m]);
        goto done;
    }
    if ((st = hessfit_model_hessian(set->model, m, h)) != HESSFIT_SUCCESS)
        goto done;
    if (o->frequencies == HESSFIT_OBJ_FREQUENCIES_NONE) {
        /* the MM frequency along each QM mode: v^T A v, A = M^-1/2 H M^-1/2 */
        if ((st = hessfit_vib_mass_weight(h, q->masses, q->n_atoms, h)) != HESSFIT_SUCCESS)
            goto done;
        for (int k = 0; k < q->n_rows; k++) {
            const double *v = q->qm_vec + (size_t)k * d;
            double quotient = 0.0;
            for (size_t i = 0; i < d; i++)
                quotient += v[i] * dot(h + i * d, v, (int)d);
            const double nu = hessfit_eigenvalue_to_cm1(quotient, hessfit_frequency_factor_hartree_bohr2_amu());
            *(after ? &rows[k].mm_after_cm1 : &rows[k].mm_before_cm1) = nu;
            *(after ? &rows[k].mm_mode_after : &rows[k].mm_mode_before) = -1;
            *(after ? &rows[k].overlap_after : &rows[k].overlap_before) = NAN;
            *(after ? &rows[k].residual_after : &rows[k].residual_before) = 0.0;
        }
        goto done;
    }
    const int project = o->frequencies == HESSFIT_OBJ_FREQUENCIES_OVERLAP;
    if ((st = analyse(h, q->masses, set->mols[m].coords, q->n_atoms, project, freq, modes, vib, &n_vib)) != HESSFIT_SUCCESS)
        goto done;
    for (int k = 0; k < q->n_rows; k++) {
        const int j = pairing[q->first_target + k];
        const double r = residuals[q->residuals + k];
        double nu = NAN, overlap = NAN;
        if (j >= 0 && j < n_vib) {
            const double *mm = modes + (size_t)vib[j] * d, *qm = q->qm_vec + (size_t)k * d;
            nu = freq[vib[j]];
            if (!isnan(qm[0])) {
                const double c = dot(mm, qm, q->dim);
                overlap = c * c;
            }
        }
        *(after ? &rows[k].mm_after_cm1 : &rows[k].mm_before_cm1) = nu;
        *(after ? &rows[k].mm_mode_after : &rows[k].mm_mode_before) = j >= 0 && j < n_vib ? j : -1;
        *(after ? &rows[k].overlap_after : &rows[k].overlap_before) = overlap;
        *(after ? &rows[k].residual_after : &rows[k].residual_before) = r * r;
    }
done:
    free(h);
    free(freq);
    free(modes);
    free(vib);
    return st;
}

void hf_fit_comparison_free(hf_fit_comparison *c)
{
    if (c == NULL)
        return;
    free(c->molecules);
    free(c->modes);
    free(c->parameters);
    free(c->parameter_text);
    free(c->energies);
    free(c->geometry);
    free(c->stationarity);
    memset(c, 0, sizeof *c);
}

/* Kinds of the objectives' summary (the order of their rows). */
enum { KIND_FREQUENCIES, KIND_EIGENMATRIX, KIND_HESSIAN, KIND_ENERGIES, KIND_BONDS, KIND_ANGLES, KIND_TORSIONS,
       N_KINDS };

/* Per-kind sums over one evaluation's residuals. */
typedef struct {
    double loss[N_KINDS];
    long weighted[N_KINDS];
    double sq[N_KINDS]; /* sum (MM - QM)^2 over the weighted targets (frequencies: paired ones) */
    long n_sq[N_KINDS];
} kind_sums;

/* The energy and geometry rows' MM side at one point, from the objective's last evaluation. */
static hessfit_status fill_targets(hf_training_set *set, const double *r, int after, hf_fit_comparison *c, kind_sums *s)
{
    long long first_e, n_e, first_g, n_g;
    hessfit_status st;
    if ((st = hessfit_objective_part_range(set->objective, HESSFIT_OBJ_PART_ENERGIES, &first_e, &n_e)) != HESSFIT_SUCCESS ||
        (st = hessfit_objective_part_range(set->objective, HESSFIT_OBJ_PART_GEOMETRY, &first_g, &n_g)) != HESSFIT_SUCCESS)
        return st;
    const int n = (int)(n_e > n_g ? n_e : n_g);
    double *mm = malloc((size_t)(n > 0 ? n : 1) * sizeof *mm);
    if (mm == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report's targets");
    for (int part = 0; part < 2; part++) {
        hf_fit_target_row *rows = part == 0 ? c->energies : c->geometry;
        const int count = part == 0 ? c->n_energies : c->n_geometry;
        const long long first = part == 0 ? first_e : first_g;
        if (count == 0)
            continue;
        if (part == 0)
            st = hessfit_objective_energy_values(set->objective, NULL, mm);
        else
            st = hessfit_objective_geometry_values(set->objective, NULL, mm);
        if (st != HESSFIT_SUCCESS)
            break;
        for (int i = 0; i < count; i++) {
            hf_fit_target_row *row = &rows[i];
            const double res = r[first + i];
            const int kind = part == 0 ? KIND_ENERGIES : KIND_BONDS + row->kind;
            *(after ? &row->mm_after : &row->mm_before) = mm[i];
            *(after ? &row->residual_after : &row->residual_before) = res * res;
            s->loss[kind] += res * res;
            if (row->weight != 0.0 && !row->reference) {
                s->weighted[kind]++;
                s->sq[kind] += (res / row->weight) * (res / row->weight);
                s->n_sq[kind]++;
            }
        }
    }
    free(mm);
    return st;
}

/*
 * Molecule m at the model's current free values: its largest atomic force at the QM geometry, and
 * how far the MM minimum reached from there moves its bond and angle terms. A minimisation that
 * fails (an undefined coordinate on the way) leaves the shifts NaN: the report says "n/a" rather
 * than stop.
 */
static hessfit_status measure_stationarity(hf_training_set *set, int m, hessfit_report_stationarity *out)
{
    const hessfit_molecule *mol = &set->mols[m];
    const int n = mol->n_atoms;
    double *f = malloc(3 * (size_t)n * sizeof *f), *x = malloc(3 * (size_t)n * sizeof *x);
    hessfit_status st;
    memset(out, 0, sizeof *out);
    out->bond_shift = out->angle_shift = NAN;
    if (f == NULL || x == NULL) {
        free(f);
        free(x);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the stationarity of %s", set->labels[m]);
    }
    if ((st = hessfit_model_forces(set->model, m, f)) != HESSFIT_SUCCESS)
        goto done;
    for (int a = 0; a < n; a++) {
        const double fa = hf_norm3(f + 3 * a);
        if (out->max_force_atom == 0 || fa > out->max_force) {
            out->max_force = fa;
            out->max_force_atom = a + 1;
        }
    }
    if (hessfit_model_minimize(set->model, m, HF_FIT_MINIMIZE_TOLERANCE, x) != HESSFIT_SUCCESS) {
        hessfit_clear_error();
        goto done;
    }
    out->bond_shift = out->angle_shift = 0.0;
    for (int i = 0; i < set->typed[m].n_terms; i++) {
        const hessfit_typed_term *t = &set->typed[m].terms[i];
        const int *a = t->atoms;
        if (t->kind == HESSFIT_TERM_BOND) {
            const double d = fabs(hf_atom_distance(x, a[0], a[1]) - hf_atom_distance(mol->coords, a[0], a[1]));
            if (d > out->bond_shift || out->bond_atoms[0] == 0) {
                out->bond_shift = d;
                out->bond_atoms[0] = a[0] + 1;
                out->bond_atoms[1] = a[1] + 1;
            }
        } else if (t->kind == HESSFIT_TERM_ANGLE) {
            const double d = fabs(hf_atom_angle(x, a[0], a[1], a[2]) - hf_atom_angle(mol->coords, a[0], a[1], a[2])) * HESSFIT_RAD_TO_DEG;
            if (d > out->angle_shift || out->angle_atoms[0] == 0) {
                out->angle_shift = d;
                for (int k = 0; k < 3; k++)
                    out->angle_atoms[k] = a[k] + 1;
            }
        }
    }
done:
    free(f);
    free(x);
    return st;
}

void hf_fit_warn_stationarity(const hf_training_set *set, const hf_fit_comparison *c, int after, FILE *out)
{
    for (int m = 0; m < c->n_molecules && c->stationarity != NULL; m++) {
        const hessfit_report_stationarity *s = &c->stationarity[m][after];
        if (isnan(s->bond_shift)) {
            fprintf(out, "warning: %s: the MM minimisation from the QM geometry failed (an undefined coordinate on the "
                         "way): its stationarity is not known\n",
                    set->labels[m]);
            continue;
        }
        if (!(s->bond_shift > HF_FIT_STATIONARITY_BOND_A || s->angle_shift > HF_FIT_STATIONARITY_ANGLE_DEG))
            continue;
        int has_targets = 0;
        for (int i = 0; i < c->n_geometry && !has_targets; i++)
            has_targets = c->geometry[i].structure == m + 1;
        fprintf(out,
                "warning: %s: the QM geometry is far from a stationary point of the %s model: its minimum moves "
                "bond %d-%d by %.3f A and angle %d-%d-%d by %.1f deg (largest force at the QM geometry %.3g "
                "kcal/mol/A, atom %d). ",
                set->labels[m], after ? "fitted" : "starting", s->bond_atoms[0], s->bond_atoms[1], s->bond_shift,
                s->angle_atoms[0], s->angle_atoms[1], s->angle_atoms[2], s->angle_shift, s->max_force,
                s->max_force_atom);
        if (has_targets)
            fprintf(out, "Its geometry targets are in the fit, weighed against the other parts: raise `geometry-weight` "
                         "(docs/fitting.md) to hold this structure closer.\n");
        else
            fprintf(out, "Frequencies alone do not pin the equilibrium values: add geometry targets (`geometry = %d` or "
                         "`geometry = all` in the input, docs/fitting.md).\n",
                    m + 1);
    }
}

static hessfit_status evaluate_point(hf_training_set *set, const double *x, qm_rows *q, int after, hf_fit_comparison *c,
                                double *loss)
{
    const long long n_res = hessfit_objective_n_residuals(set->objective);
    const int n_targets = hessfit_objective_n_frequency_targets(set->objective);
    double *r = malloc((size_t)(n_res > 0 ? n_res : 1) * sizeof *r);
    int *pairing = malloc((size_t)(n_targets > 0 ? n_targets : 1) * sizeof *pairing);
    hessfit_status st;
    kind_sums s;
    memset(&s, 0, sizeof s);
    if (r == NULL || pairing == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %lld residuals", n_res);
        goto done;
    }
    if ((st = hessfit_objective_evaluate(set->objective, x, loss, NULL, r)) != HESSFIT_SUCCESS ||
        (st = hessfit_objective_pairing(set->objective, pairing)) != HESSFIT_SUCCESS)
        goto done;
    hessfit_report_mode *rows = c->modes;
    for (int m = 0; m < set->n_mols; m++) {
        const hessfit_objective_options *o = &set->mol_objective[m];
        const long long tri = (long long)q[m].dim * (q[m].dim + 1) / 2;
        long long at = q[m].residuals;
        if ((st = fill_mm(set, m, &q[m], pairing, r, after, rows)) != HESSFIT_SUCCESS)
            goto done;
        for (int k = 0; k < q[m].n_targets; k++, at++) {
            const double w = q[m].weight[k];
            s.loss[0] += r[at] * r[at];
            if (w != 0.0) {
                s.weighted[0]++;
                if (pairing[q[m].first_target + k] >= 0) {
                    s.sq[0] += (r[at] / w) * (r[at] / w);
                    s.n_sq[0]++;
                }
            }
        }
        for (int kind = 1; kind <= 2; kind++) {
            if (!(kind == 1 ? o->eigenmatrix : o->hessian))
                continue;
            for (long long i = 0; i < tri; i++, at++) {
                s.loss[kind] += r[at] * r[at];
                s.weighted[kind] += r[at] != 0.0;
            }
        }
        rows += q[m].n_rows;
    }
    if ((st = fill_targets(set, r, after, c, &s)) != HESSFIT_SUCCESS)
        goto done;
    for (int m = 0; m < set->n_mols && st == HESSFIT_SUCCESS; m++)
        st = measure_stationarity(set, m, &c->stationarity[m][after]);
    if (st != HESSFIT_SUCCESS)
        goto done;
    for (int k = 0; k < c->n_objectives; k++) {
        hessfit_report_objective *obj = &c->objectives[k];
        const int kind = c->objective_kind[k];
        double rmsd = kind == KIND_EIGENMATRIX || kind == KIND_HESSIAN
                          ? (s.weighted[kind] > 0 ? sqrt(s.loss[kind] / (double)s.weighted[kind]) : NAN)
                          : (s.n_sq[kind] > 0 ? sqrt(s.sq[kind] / (double)s.n_sq[kind]) : NAN);
        if (after) {
            obj->loss_after = s.loss[kind];
            obj->rmsd_after = rmsd;
        } else {
            obj->loss_before = s.loss[kind];
            obj->rmsd_before = rmsd;
            obj->n_weighted = s.weighted[kind];
        }
    }
done:
    free(r);
    free(pairing);
    return st;
}

static void add_kind(hf_fit_comparison *c, int kind, const char *name, const char *unit)
{
    c->objective_kind[c->n_objectives] = kind;
    c->objectives[c->n_objectives].kind = name;
    c->objectives[c->n_objectives].unit = unit;
    c->objectives[c->n_objectives].loss_after = c->objectives[c->n_objectives].rmsd_after = NAN;
    c->n_objectives++;
}

static void set_objective_kinds(const hf_training_set *set, hf_fit_comparison *c)
{
    const hessfit_objective_options *o = &set->settings.objective;
    int any = 0, geometry[3] = {0, 0, 0};
    for (int m = 0; m < set->n_mols; m++)
        any |= has_hessian_targets(set, m);
    c->n_objectives = 0;
    if (any && o->frequencies == HESSFIT_OBJ_FREQUENCIES_OVERLAP)
        add_kind(c, KIND_FREQUENCIES, "frequencies (projected, paired by eigenvector overlap)", "cm^-1");
    else if (any && o->frequencies == HESSFIT_OBJ_FREQUENCIES_Q2MM)
        add_kind(c, KIND_FREQUENCIES, "frequencies-q2mm (unprojected, above the threshold, by position)", "cm^-1");
    if (any && o->eigenmatrix)
        add_kind(c, KIND_EIGENMATRIX, "eigenmatrix (QM normal modes)", "weighted residual");
    if (any && o->hessian)
        add_kind(c, KIND_HESSIAN, "Hessian elements", "weighted residual");
    if (c->n_energies > 0)
        add_kind(c, KIND_ENERGIES, "relative energies (QM minimum of each group = 0)", "kcal/mol");
    for (int i = 0; i < c->n_geometry; i++)
        geometry[c->geometry[i].kind] = 1;
    if (geometry[HESSFIT_GEOMETRY_BOND])
        add_kind(c, KIND_BONDS, "bond lengths (MM-minimised)", "A");
    if (geometry[HESSFIT_GEOMETRY_ANGLE])
        add_kind(c, KIND_ANGLES, "angles (MM-minimised)", "deg");
    if (geometry[HESSFIT_GEOMETRY_TORSION])
        add_kind(c, KIND_TORSIONS, "torsions (MM-minimised)", "deg");
}

/* The QM side of the energy and geometry rows. */
static hessfit_status build_target_rows(hf_training_set *set, hf_fit_comparison *c)
{
    hessfit_status st;
    c->n_energies = hessfit_objective_n_energy_targets(set->objective);
    c->n_geometry = hessfit_objective_n_geometry_targets(set->objective);
    c->energies = calloc((size_t)c->n_energies + 1, sizeof *c->energies);
    c->geometry = calloc((size_t)c->n_geometry + 1, sizeof *c->geometry);
    double *qm = malloc((size_t)(c->n_energies > c->n_geometry ? c->n_energies : c->n_geometry) * sizeof *qm + 1);
    if (c->energies == NULL || c->geometry == NULL || qm == NULL) {
        free(qm);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report's targets");
    }
    if ((st = hessfit_objective_energy_values(set->objective, qm, NULL)) == HESSFIT_SUCCESS)
        for (int i = 0; i < c->n_energies && st == HESSFIT_SUCCESS; i++) {
            hessfit_energy_target t;
            hf_fit_target_row *row = &c->energies[i];
            if ((st = hessfit_objective_energy_target(set->objective, i, &t)) != HESSFIT_SUCCESS)
                break;
            row->structure = t.mol + 1;
            row->label = set->labels[t.mol];
            row->group = t.group >= 0 && t.group < set->n_groups ? set->group_names[t.group] : "";
            row->kind = -1;
            row->qm = qm[i];
            row->weight = t.weight;
            row->reference = qm[i] == 0.0;
            row->mm_before = row->mm_after = row->residual_before = row->residual_after = NAN;
        }
    if (st == HESSFIT_SUCCESS && (st = hessfit_objective_geometry_values(set->objective, qm, NULL)) == HESSFIT_SUCCESS)
        for (int i = 0; i < c->n_geometry && st == HESSFIT_SUCCESS; i++) {
            hessfit_geometry_target t;
            hf_fit_target_row *row = &c->geometry[i];
            if ((st = hessfit_objective_geometry_target(set->objective, i, &t)) != HESSFIT_SUCCESS)
                break;
            row->structure = t.mol + 1;
            row->label = set->labels[t.mol];
            row->kind = (int)t.kind;
            for (int a = 0; a < 4; a++)
                row->atoms[a] = t.atoms[a] >= 0 ? t.atoms[a] + 1 : 0;
            row->qm = qm[i];
            row->weight = t.weight;
            row->mm_before = row->mm_after = row->residual_before = row->residual_after = NAN;
        }
    free(qm);
    return st;
}

hessfit_status hf_fit_compare(hf_training_set *set, const double *x_before, const double *x_after, int n_parameters,
                         hf_fit_comparison *c)
{
    qm_rows *q = calloc((size_t)set->n_mols, sizeof *q);
    hessfit_status st = HESSFIT_SUCCESS;
    long n_rows = 0;
    long long residuals = 0;
    int target = 0;
    memset(c, 0, sizeof *c);
    if (q == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report");
    /* the QM side, and where each molecule's targets and residuals are */
    for (int m = 0; m < set->n_mols && st == HESSFIT_SUCCESS; m++) {
        int n_targets = 0;
        const long long tri = (long long)3 * set->mols[m].n_atoms * (3 * set->mols[m].n_atoms + 1) / 2;
        for (int k = target; k < hessfit_objective_n_frequency_targets(set->objective); k++) {
            int mol;
            if (hessfit_objective_frequency_target(set->objective, k, &mol, NULL, NULL) != HESSFIT_SUCCESS || mol != m)
                break;
            n_targets++;
        }
        if ((st = build_rows(set, m, target, n_targets, &q[m])) != HESSFIT_SUCCESS)
            break;
        q[m].residuals = residuals;
        residuals += n_targets + (set->mol_objective[m].eigenmatrix ? tri : 0) + (set->mol_objective[m].hessian ? tri : 0);
        target += n_targets;
        n_rows += q[m].n_rows;
    }
    long long first, n_kernel;
    if (st == HESSFIT_SUCCESS &&
        (st = hessfit_objective_part_range(set->objective, HESSFIT_OBJ_PART_HESSIAN, &first, &n_kernel)) == HESSFIT_SUCCESS &&
        residuals != n_kernel)
        st = hessfit_error(HESSFIT_ERROR_COUNT, "report: the objective has %lld Hessian-space residuals, the layout gives %lld",
                      n_kernel, residuals);
    if (st == HESSFIT_SUCCESS)
        st = build_target_rows(set, c);
    if (st != HESSFIT_SUCCESS)
        goto done;

    c->n_molecules = set->n_mols;
    c->molecules = calloc((size_t)set->n_mols, sizeof *c->molecules);
    c->modes = calloc((size_t)n_rows + 1, sizeof *c->modes);
    c->n_parameters = n_parameters;
    c->parameters = calloc((size_t)n_parameters + 1, sizeof *c->parameters);
    c->parameter_text = calloc((size_t)n_parameters + 1, sizeof *c->parameter_text);
    c->stationarity = calloc((size_t)set->n_mols, sizeof *c->stationarity);
    if (!c->molecules || !c->modes || !c->parameters || !c->parameter_text || !c->stationarity) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the report");
        goto done;
    }
    hessfit_report_mode *rows = c->modes;
    for (int m = 0; m < set->n_mols; m++) {
        c->molecules[m].name = set->mols[m].name != NULL && set->mols[m].name[0] ? set->mols[m].name : set->labels[m];
        c->molecules[m].source = set->mols[m].source;
        c->molecules[m].n_modes = q[m].n_rows;
        c->molecules[m].modes = rows;
        c->molecules[m].stationarity = c->stationarity[m];
        for (int after = 0; after <= 1; after++) { /* "after" stays unknown without x_after */
            hessfit_report_stationarity *u = &c->stationarity[m][after];
            u->max_force = u->bond_shift = u->angle_shift = NAN;
        }
        for (int k = 0; k < q[m].n_rows; k++) {
            rows[k].index = k;
            rows[k].qm_mode = q[m].qm_mode[k];
            rows[k].qm_cm1 = q[m].qm_cm1[k];
            rows[k].weight = q[m].weight[k];
            rows[k].mm_mode_after = -1;
            rows[k].mm_after_cm1 = rows[k].overlap_after = rows[k].residual_after = NAN;
        }
        rows += q[m].n_rows;
    }
    set_objective_kinds(set, c);
    c->loss_after = NAN;
    if ((st = evaluate_point(set, x_before, q, 0, c, &c->loss_before)) != HESSFIT_SUCCESS)
        goto done;
    if (x_after != NULL && (st = evaluate_point(set, x_after, q, 1, c, &c->loss_after)) != HESSFIT_SUCCESS)
        goto done;

    for (int i = 0; i < n_parameters; i++) {
        hessfit_report_parameter *p = &c->parameters[i];
        int param, value;
        const char *unit;
        if ((st = hessfit_model_free_parameter(set->model, i, &param, &value, NULL, NULL)) != HESSFIT_SUCCESS)
            goto done;
        const hessfit_ff_param *fp = &set->ff.params[param];
        snprintf(c->parameter_text[i][0], sizeof c->parameter_text[i][0], "%s", hessfit_param_kind_name(fp->kind));
        hf_param_types_text(fp, c->parameter_text[i][1], sizeof c->parameter_text[i][1]);
        hf_param_value_name(fp, value, c->parameter_text[i][2], sizeof c->parameter_text[i][2], &unit);
        p->ff_line = fp->line;
        p->kind = c->parameter_text[i][0];
        p->types = c->parameter_text[i][1];
        p->value_index = value;
        p->value_name = c->parameter_text[i][2];
        p->before = x_before[i];
        p->after = x_after != NULL ? x_after[i] : NAN;
        p->unit = unit;
    }
done:
    for (int m = 0; m < set->n_mols; m++)
        rows_free(&q[m]);
    free(q);
    if (st != HESSFIT_SUCCESS)
        hf_fit_comparison_free(c);
    return st;
}

void hf_fit_comparison_report(const hf_fit_comparison *c, hessfit_report *report)
{
    memset(report, 0, sizeof *report);
    report->n_molecules = c->n_molecules;
    report->molecules = c->molecules;
    report->n_objectives = c->n_objectives;
    report->objectives = c->objectives;
    report->n_parameters = c->n_parameters;
    report->parameters = c->parameters;
}

/* ---- targets.txt and targets.json --------------------------------------------------------------- */

static const char *const geometry_kind_names[3] = {"bond", "angle", "torsion"};

/* A number in a field of width characters, or "n/a" when it is not finite. */
static void put_number(hessfit_atomic_file *out, const char *format, double v, int width)
{
    if (isfinite(v))
        hessfit_atomic_file_printf(out, format, width, v);
    else
        hessfit_atomic_file_printf(out, "%*s", width, "n/a");
}

/* The number columns of a targets.txt row: QM, MM before, MM after (value_width wide), the weight
 * (weight_width wide) and the residuals before and after. */
static void put_row_numbers(hessfit_atomic_file *out, const hf_fit_target_row *r, int value_width, int weight_width)
{
    put_number(out, "%*.4f", r->qm, value_width);
    hessfit_atomic_file_printf(out, "  ");
    put_number(out, "%*.4f", r->mm_before, value_width);
    hessfit_atomic_file_printf(out, "  ");
    put_number(out, "%*.4f", r->mm_after, value_width);
    hessfit_atomic_file_printf(out, "  %*.4g  ", weight_width, r->weight);
    put_number(out, "%*.6g", r->residual_before, 14);
    hessfit_atomic_file_printf(out, "  ");
    put_number(out, "%*.6g", r->residual_after, 14);
}

static hessfit_status write_targets_text(hessfit_atomic_file *out, void *context)
{
    const hf_fit_comparison *c = context;
    if (c->n_energies > 0) {
        hessfit_atomic_file_printf(out, "Relative energies (kcal/mol; per group QM and MM relative to the structure of "
                                   "lowest QM energy, its reference)\n");
        hessfit_atomic_file_printf(out, "%-9s  %-16s  %12s  %12s  %12s  %10s  %14s  %14s\n", "structure", "group", "QM dE",
                              "MM before", "MM after", "weight", "residual bef.", "residual aft.");
        for (int i = 0; i < c->n_energies; i++) {
            const hf_fit_target_row *r = &c->energies[i];
            hessfit_atomic_file_printf(out, "%-9d  %-16s  ", r->structure, r->group);
            put_row_numbers(out, r, 12, 10);
            hessfit_atomic_file_printf(out, "%s  %s\n", r->reference ? "  (reference)" : "", r->label);
        }
        hessfit_atomic_file_printf(out, "\n");
    }
    if (c->n_geometry > 0) {
        hessfit_atomic_file_printf(out, "Geometry of the MM-minimised structures (bonds in A, angles and torsions in deg; "
                                   "torsion differences wrapped to (-180, 180])\n");
        hessfit_atomic_file_printf(out, "%-9s  %-7s  %-19s  %10s  %10s  %10s  %8s  %14s  %14s\n", "structure", "kind",
                              "atoms", "QM", "MM before", "MM after", "weight", "residual bef.", "residual aft.");
        for (int i = 0; i < c->n_geometry; i++) {
            const hf_fit_target_row *r = &c->geometry[i];
            char atoms[64];
            int n = 0;
            for (int a = 0; a < 4 && r->atoms[a] > 0; a++)
                n += snprintf(atoms + n, sizeof atoms - (size_t)n, a ? "-%d" : "%d", r->atoms[a]);
            hessfit_atomic_file_printf(out, "%-9d  %-7s  %-19s  ", r->structure, geometry_kind_names[r->kind], atoms);
            put_row_numbers(out, r, 10, 8);
            hessfit_atomic_file_printf(out, "\n");
        }
    }
    return hessfit_atomic_file_status(out);
}

/* The number members of a targets.json row: qm, mm_before and mm_after with unit_suffix on their
 * keys, then weight and the residuals before and after. */
static void put_row_members(hessfit_atomic_file *out, const hf_fit_target_row *r, const char *unit_suffix)
{
    const char *const names[3] = {"qm", "mm_before", "mm_after"};
    const double values[3] = {r->qm, r->mm_before, r->mm_after};
    for (int k = 0; k < 3; k++) {
        char key[32];
        snprintf(key, sizeof key, "%s%s", names[k], unit_suffix);
        hf_put_json_number_member(out, key, values[k]);
    }
    hf_put_json_number_member(out, "weight", r->weight);
    hf_put_json_number_member(out, "residual_before", r->residual_before);
    hf_put_json_number_member(out, "residual_after", r->residual_after);
}

static hessfit_status write_targets_json(hessfit_atomic_file *out, void *context)
{
    const hf_fit_comparison *c = context;
    hessfit_atomic_file_printf(out, "{\n  \"energies\": [");
    for (int i = 0; i < c->n_energies; i++) {
        const hf_fit_target_row *r = &c->energies[i];
        /* group names are letters, digits, _ - . (the input's check): no escaping needed */
        hessfit_atomic_file_printf(out, "%s\n    {\"structure\": %d, \"group\": \"%s\", \"reference\": %s", i ? "," : "",
                              r->structure, r->group, r->reference ? "true" : "false");
        put_row_members(out, r, "_kcal_mol");
        hessfit_atomic_file_printf(out, "}");
    }
    hessfit_atomic_file_printf(out, "%s],\n  \"geometry\": [", c->n_energies > 0 ? "\n  " : "");
    for (int i = 0; i < c->n_geometry; i++) {
        const hf_fit_target_row *r = &c->geometry[i];
        hessfit_atomic_file_printf(out, "%s\n    {\"structure\": %d, \"kind\": \"%s\", \"atoms\": [", i ? "," : "",
                              r->structure, geometry_kind_names[r->kind]);
        for (int a = 0; a < 4 && r->atoms[a] > 0; a++)
            hessfit_atomic_file_printf(out, "%s%d", a ? ", " : "", r->atoms[a]);
        hessfit_atomic_file_printf(out, "], \"unit\": \"%s\"", r->kind == HESSFIT_GEOMETRY_BOND ? "A" : "deg");
        put_row_members(out, r, "");
        hessfit_atomic_file_printf(out, "}");
    }
    hessfit_atomic_file_printf(out, "%s]\n}\n", c->n_geometry > 0 ? "\n  " : "");
    return hessfit_atomic_file_status(out);
}

hessfit_status hf_fit_write_targets(const char *dir, const hf_fit_comparison *c)
{
    char path[strlen(dir) + sizeof "/targets.json"];
    hessfit_status st;
    if (c->n_energies == 0 && c->n_geometry == 0)
        return HESSFIT_SUCCESS;
    snprintf(path, sizeof path, "%s/targets.txt", dir);
    if ((st = hessfit_atomic_write(path, write_targets_text, (void *)c)) != HESSFIT_SUCCESS)
        return st;
    snprintf(path, sizeof path, "%s/targets.json", dir);
    return hessfit_atomic_write(path, write_targets_json, (void *)c);
}

hessfit_status hf_fit_write_reports(const char *dir, const hessfit_report *report, const hf_fit_comparison *c)
{
    static const struct {
        const char *name;
        hessfit_status (*write)(const char *, const hessfit_report *);
    } outputs[] = {{"/report.txt", hessfit_report_write_text},
                   {"/report.json", hessfit_report_write_json},
                   {"/frequencies.svg", hessfit_svg_frequency_scatter}};
    char path[strlen(dir) + sizeof "/frequencies.svg"];
    hessfit_status st;
    for (size_t k = 0; k < sizeof outputs / sizeof outputs[0]; k++) {
        snprintf(path, sizeof path, "%s%s", dir, outputs[k].name);
        if ((st = outputs[k].write(path, report)) != HESSFIT_SUCCESS)
            return st;
    }
    return hf_fit_write_targets(dir, c);
}
