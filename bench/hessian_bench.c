/*
 * hessian_bench: analytic Hessian (HessianForce) vs central finite differences of stock OpenMM
 * forces, on the Reference platform.
 *
 * Build and run (from the repository root):
 *
 *     cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2
 *     ./build/bin/hessian_bench                      # full run, Markdown table on stdout
 *     ./build/bin/hessian_bench --quick              # smoke run (fewer repeats)
 *     ./build/bin/hessian_bench --json bench.json    # also write the raw numbers
 *
 * Options: --plugin-dir DIR (default: the build tree's plugin dir), --repeats N (finite-difference
 * repeats at every size; analytic repeats are max(20, N) and at least 0.5 s of work, capped at
 * 100000),
 * --quick, --carbons LIST (comma-separated carbon counts, default 1,20,166), --step H (nm,
 * default 1e-4), --json FILE.
 *
 * Systems: linear alkanes C_nH_(2n+2), all-trans zig-zag (C-C 0.153 nm, C-H 0.109 nm, ideal
 * tetrahedral angles), n = 1, 20, 166 -> 5, 62, 500 atoms, every coordinate then displaced by a
 * uniform random amount in [-0.005, 0.005] nm (fixed seed). Stock forces with OPLS-AA alkane
 * parameters: HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce (OPLS Fourier series
 * as periodic terms), NonbondedForce NoCutoff with charges/sigma/epsilon and exceptions from
 * OpenMM_NonbondedForce_createExceptionsFromBonds (1-2 and 1-3 excluded, 1-4 scaled by 0.5).
 * Note: OpenMM's NonbondedForce combines sigma arithmetically (Lorentz-Berthelot), not
 * geometrically as OPLS-AA does; the benchmark only needs the two Systems to agree.
 *
 * A second System holds only the hessfit_force made by hessfit_force_create_from_system.
 *
 * Timed, per size (clock_gettime(CLOCK_MONOTONIC); median over repeats reported):
 *   analytic: OpenMM_Context_setPositions + hessfit_force_get_hessian_blocks (the full 3N x 3N
 *             block, since the converter declares one molecule);
 *   FD:       6N force evaluations on the stock System, exactly what q2mm's OpenMM backend
 *             (q2mm/backends/mm/openmm.py, _evaluate_hessian) and ForceBalance's OpenMM engine
 *             (src/openmmio.py, build_mass_weighted_hessian) do: for every Cartesian coordinate
 *             set positions with +h and with -h, getState(Forces), row = -(F+ - F-)/(2h); then
 *             symmetrise H = (H + H^T)/2. Both tools use h = 1e-4 nm, the default here.
 *   The FD loop here is plain C over the C API, so it is a lower bound on what those Python
 *   tools pay per Hessian (no Python, unit or NumPy overhead).
 *
 * Accuracy: max |H_fd - H_an| over all (3N)^2 entries, and that divided by max |H_an|; the
 * energies of the two Systems at the benchmark geometry (relative difference).
 *
 * Adjoint contractions (the fitting issue's gradients of Hessian-space objectives), timed like
 * the analytic Hessian on the same System, each in its own loop of setPositions + the call:
 *   hessfit_force_get_hessian_contraction_derivatives: tr(G dH/dslot) for every slot, G a random
 *       symmetric matrix in the Hessian-block layout (entries in [-1, 1], fixed seed);
 *   hessfit_force_get_gradient_contraction_derivatives: y . d(grad E)/dslot, y random in [-1, 1].
 * Reported as medians and as ratios to the analytic Hessian's median (the question: does the
 * gradient of a Hessian objective cost about as much as the Hessian itself?).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "hessfit.h"
#include "OpenMMCWrapper.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef HESSFIT_DEFAULT_PLUGIN_DIR
#define HESSFIT_DEFAULT_PLUGIN_DIR "build/lib/plugins"
#endif

#define PI 3.14159265358979323846
#define KCAL 4.184 /* kJ per kcal */

/* ---- OPLS-AA alkane parameters (CT, HC), converted to OpenMM's stock conventions ---------- */
/* bonds: OPLS E = K (r - r0)^2, K in kcal/mol/A^2  -> OpenMM k = 2 K * 4.184 * 100 (kJ/mol/nm^2) */
#define K_BOND_CC (2.0 * 268.0 * KCAL * 100.0)
#define R0_BOND_CC 0.1529
#define K_BOND_CH (2.0 * 340.0 * KCAL * 100.0)
#define R0_BOND_CH 0.1090
/* angles: OPLS E = K (theta - theta0)^2, K in kcal/mol/rad^2 -> OpenMM k = 2 K * 4.184 */
#define K_ANGLE_CCC (2.0 * 58.35 * KCAL)
#define T0_ANGLE_CCC (112.7 * PI / 180.0)
#define K_ANGLE_CCH (2.0 * 37.5 * KCAL)
#define T0_ANGLE_CCH (110.7 * PI / 180.0)
#define K_ANGLE_HCH (2.0 * 33.0 * KCAL)
#define T0_ANGLE_HCH (107.8 * PI / 180.0)
/* torsions: OPLS V1..V3 (kcal/mol); V_m/2 (1 +- cos m phi) = k (1 + cos(m phi - phase)), k = V_m/2 */
static const double V_CCCC[3] = {1.740, -0.157, 0.279};
static const double V_CCCH[3] = {0.0, 0.0, 0.366};
static const double V_HCCH[3] = {0.0, 0.0, 0.318};
/* nonbonded: charges (e), sigma (nm), epsilon (kJ/mol) */
#define Q_H 0.06
#define SIG_C 0.350
#define EPS_C (0.066 * KCAL)
#define SIG_H 0.250
#define EPS_H (0.030 * KCAL)
#define MASS_C 12.011
#define MASS_H 1.008

/* ---- geometry --------------------------------------------------------------------------- */
#define D_CC 0.153
#define D_CH 0.109
#define PERTURB_NM 0.005
#define SEED 20240611u

static void die(const char *fmt, const char *detail) {
    fprintf(stderr, "hessian_bench: ");
    fprintf(stderr, fmt, detail);
    fprintf(stderr, "\n");
    exit(1);
}

static void hf_check(hessfit_status status, const char *what) {
    if (status != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessian_bench: %s failed: %s: %s\n", what, hessfit_status_string(status),
                hessfit_last_error());
        exit(1);
    }
}

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n, size);
    if (!p)
        die("out of memory (%s)", "calloc");
    return p;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n) {
    double *s = xcalloc((size_t) n, sizeof *s);
    memcpy(s, v, (size_t) n * sizeof *s);
    qsort(s, (size_t) n, sizeof *s, cmp_double);
    double m = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

/* xorshift64*: a fixed, portable stream for the perturbation */
static uint64_t rng_state = SEED;
static double rng_uniform(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    uint64_t r = rng_state * 2685821657736338717ull;
    return (double) (r >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
}

typedef struct { double x, y, z; } V3;
static V3 v3(double x, double y, double z) { V3 r = {x, y, z}; return r; }
static V3 vsub(V3 a, V3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static V3 vadd(V3 a, V3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static V3 vscale(V3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
static V3 vunit(V3 a) { return vscale(a, 1.0 / sqrt(a.x * a.x + a.y * a.y + a.z * a.z)); }

/* ---- the alkane -------------------------------------------------------------------------- */
typedef struct {
    int ncarbon, natoms;
    int *is_carbon;  /* per atom */
    double *pos;     /* 3 natoms, nm (perturbed) */
    int nbonds;
    int *bonds;      /* 2 nbonds */
    int *nnb;        /* per atom: number of bonded neighbours */
    int (*nb)[4];    /* per atom: bonded neighbours */
} Alkane;

/* Backbone carbon i of the all-trans zig-zag in the xy plane; i = -1 and i = n are virtual
 * carbons continuing the chain, used to place the in-plane terminal hydrogens (anti to C2). */
static V3 backbone(int i) {
    double theta = acos(-1.0 / 3.0);
    double s = D_CC * sin(0.5 * theta), c = D_CC * cos(0.5 * theta);
    return v3(i * s, (i % 2 != 0) ? c : 0.0, 0.0);
}

static void add_bond(Alkane *m, int a, int b) {
    m->bonds[2 * m->nbonds] = a;
    m->bonds[2 * m->nbonds + 1] = b;
    m->nbonds++;
    m->nb[a][m->nnb[a]++] = b;
    m->nb[b][m->nnb[b]++] = a;
}

static void build_alkane(Alkane *m, int n) {
    int natoms = 3 * n + 2;
    m->ncarbon = n;
    m->natoms = natoms;
    m->is_carbon = xcalloc((size_t) natoms, sizeof *m->is_carbon);
    m->pos = xcalloc(3 * (size_t) natoms, sizeof *m->pos);
    m->bonds = xcalloc(2 * (size_t) natoms, sizeof *m->bonds);
    m->nnb = xcalloc((size_t) natoms, sizeof *m->nnb);
    m->nb = xcalloc((size_t) natoms, sizeof *m->nb);
    m->nbonds = 0;
    double alpha = 0.5 * acos(-1.0 / 3.0); /* half the tetrahedral angle */
    int atom = 0, prev_carbon = -1;
    for (int i = 0; i < n; i++) {
        int c = atom++;
        V3 pc = backbone(i);
        m->is_carbon[c] = 1;
        m->pos[3 * c] = pc.x, m->pos[3 * c + 1] = pc.y, m->pos[3 * c + 2] = pc.z;
        if (prev_carbon >= 0)
            add_bond(m, prev_carbon, c);
        V3 u1 = vunit(vsub(backbone(i - 1), pc)), u2 = vunit(vsub(backbone(i + 1), pc));
        V3 dirs[4];
        int nh = 0;
        if (i == 0)
            dirs[nh++] = u1;  /* terminal H in the virtual C(-1) direction */
        if (i == n - 1)
            dirs[nh++] = u2;  /* terminal H in the virtual C(n) direction */
        V3 b = vunit(vscale(vadd(u1, u2), -1.0));
        dirs[nh++] = vadd(vscale(b, cos(alpha)), v3(0, 0, sin(alpha)));
        dirs[nh++] = vadd(vscale(b, cos(alpha)), v3(0, 0, -sin(alpha)));
        for (int k = 0; k < nh; k++) {
            int h = atom++;
            V3 ph = vadd(pc, vscale(dirs[k], D_CH));
            m->pos[3 * h] = ph.x, m->pos[3 * h + 1] = ph.y, m->pos[3 * h + 2] = ph.z;
            add_bond(m, c, h);
        }
        prev_carbon = c;
    }
    if (atom != natoms)
        die("internal error building the alkane (%s)", "atom count");
    rng_state = SEED;
    for (int k = 0; k < 3 * natoms; k++)
        m->pos[k] += PERTURB_NM * (2.0 * rng_uniform() - 1.0);
}

static void free_alkane(Alkane *m) {
    free(m->is_carbon), free(m->pos), free(m->bonds), free(m->nnb), free(m->nb);
}

static void add_opls_torsion(OpenMM_PeriodicTorsionForce *f, int a, int b, int c, int d, const double *v) {
    for (int m = 1; m <= 3; m++) {
        if (v[m - 1] == 0.0)
            continue;
        double phase = (m % 2 == 0) ? PI : 0.0;
        OpenMM_PeriodicTorsionForce_addTorsion(f, a, b, c, d, m, phase, 0.5 * v[m - 1] * KCAL);
    }
}

/* The stock System; counts of terms are returned for the report. */
static OpenMM_System *build_stock_system(const Alkane *m, int *nangles, int *ntorsions) {
    OpenMM_System *sys = OpenMM_System_create();
    for (int i = 0; i < m->natoms; i++)
        OpenMM_System_addParticle(sys, m->is_carbon[i] ? MASS_C : MASS_H);

    OpenMM_HarmonicBondForce *bf = OpenMM_HarmonicBondForce_create();
    for (int k = 0; k < m->nbonds; k++) {
        int a = m->bonds[2 * k], b = m->bonds[2 * k + 1];
        int cc = m->is_carbon[a] && m->is_carbon[b];
        OpenMM_HarmonicBondForce_addBond(bf, a, b, cc ? R0_BOND_CC : R0_BOND_CH, cc ? K_BOND_CC : K_BOND_CH);
    }
    OpenMM_System_addForce(sys, (OpenMM_Force *) bf);

    OpenMM_HarmonicAngleForce *af = OpenMM_HarmonicAngleForce_create();
    *nangles = 0;
    for (int j = 0; j < m->natoms; j++)
        for (int x = 0; x < m->nnb[j]; x++)
            for (int y = x + 1; y < m->nnb[j]; y++) {
                int a = m->nb[j][x], c = m->nb[j][y];
                int ncarb = m->is_carbon[a] + m->is_carbon[c];
                double k = ncarb == 2 ? K_ANGLE_CCC : ncarb == 1 ? K_ANGLE_CCH : K_ANGLE_HCH;
                double t0 = ncarb == 2 ? T0_ANGLE_CCC : ncarb == 1 ? T0_ANGLE_CCH : T0_ANGLE_HCH;
                OpenMM_HarmonicAngleForce_addAngle(af, a, j, c, t0, k);
                (*nangles)++;
            }
    OpenMM_System_addForce(sys, (OpenMM_Force *) af);

    OpenMM_PeriodicTorsionForce *tf = OpenMM_PeriodicTorsionForce_create();
    *ntorsions = 0;
    for (int k = 0; k < m->nbonds; k++) {
        int b = m->bonds[2 * k], c = m->bonds[2 * k + 1];
        if (!(m->is_carbon[b] && m->is_carbon[c]))
            continue;
        for (int x = 0; x < m->nnb[b]; x++)
            for (int y = 0; y < m->nnb[c]; y++) {
                int a = m->nb[b][x], d = m->nb[c][y];
                if (a == c || d == b)
                    continue;
                int ncarb = m->is_carbon[a] + m->is_carbon[d];
                add_opls_torsion(tf, a, b, c, d, ncarb == 2 ? V_CCCC : ncarb == 1 ? V_CCCH : V_HCCH);
                (*ntorsions)++;
            }
    }
    OpenMM_System_addForce(sys, (OpenMM_Force *) tf);

    OpenMM_NonbondedForce *nf = OpenMM_NonbondedForce_create();
    OpenMM_NonbondedForce_setNonbondedMethod(nf, OpenMM_NonbondedForce_NoCutoff);
    for (int i = 0; i < m->natoms; i++) {
        if (m->is_carbon[i]) {
            int nh = 0;
            for (int x = 0; x < m->nnb[i]; x++)
                nh += !m->is_carbon[m->nb[i][x]];
            OpenMM_NonbondedForce_addParticle(nf, -Q_H * nh, SIG_C, EPS_C); /* CH4 -0.24, CH3 -0.18, CH2 -0.12 */
        } else {
            OpenMM_NonbondedForce_addParticle(nf, Q_H, SIG_H, EPS_H);
        }
    }
    OpenMM_BondArray *ba = OpenMM_BondArray_create(0);
    for (int k = 0; k < m->nbonds; k++)
        OpenMM_BondArray_append(ba, m->bonds[2 * k], m->bonds[2 * k + 1]);
    OpenMM_NonbondedForce_createExceptionsFromBonds(nf, ba, 0.5, 0.5);
    OpenMM_BondArray_destroy(ba);
    OpenMM_System_addForce(sys, (OpenMM_Force *) nf);
    return sys;
}

/* ---- OpenMM helpers ----------------------------------------------------------------------- */
static void fill_positions(OpenMM_Vec3Array *arr, const double *pos, int n) {
    for (int i = 0; i < n; i++) {
        OpenMM_Vec3 v = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]};
        OpenMM_Vec3Array_set(arr, i, v);
    }
}

static void get_forces(OpenMM_Context *ctx, double *forces, int n) {
    OpenMM_State *st = OpenMM_Context_getState(ctx, OpenMM_State_Forces, 0);
    const OpenMM_Vec3Array *f = OpenMM_State_getForces(st);
    for (int i = 0; i < n; i++) {
        const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(f, i);
        forces[3 * i] = v->x, forces[3 * i + 1] = v->y, forces[3 * i + 2] = v->z;
    }
    OpenMM_State_destroy(st);
}

static double get_energy(OpenMM_Context *ctx) {
    OpenMM_State *st = OpenMM_Context_getState(ctx, OpenMM_State_Energy, 0);
    double e = OpenMM_State_getPotentialEnergy(st);
    OpenMM_State_destroy(st);
    return e;
}

/* Central-difference Hessian from forces, q2mm / ForceBalance style; leaves the context at pos. */
static void fd_hessian(OpenMM_Context *ctx, OpenMM_Vec3Array *arr, const double *pos, int n, double h,
                       double *H, double *fp, double *fm) {
    int dim = 3 * n;
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < 3; d++) {
            int row = 3 * i + d;
            OpenMM_Vec3 v = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]};
            double *c = d == 0 ? &v.x : d == 1 ? &v.y : &v.z;
            double x0 = *c;
            *c = x0 + h;
            OpenMM_Vec3Array_set(arr, i, v);
            OpenMM_Context_setPositions(ctx, arr);
            get_forces(ctx, fp, n);
            *c = x0 - h;
            OpenMM_Vec3Array_set(arr, i, v);
            OpenMM_Context_setPositions(ctx, arr);
            get_forces(ctx, fm, n);
            *c = x0;
            OpenMM_Vec3Array_set(arr, i, v);
            double inv = 1.0 / (2.0 * h);
            for (int j = 0; j < dim; j++)
                H[(size_t) row * dim + j] = -(fp[j] - fm[j]) * inv;
        }
    }
    for (int r = 0; r < dim; r++)
        for (int c = r + 1; c < dim; c++) {
            double s = 0.5 * (H[(size_t) r * dim + c] + H[(size_t) c * dim + r]);
            H[(size_t) r * dim + c] = H[(size_t) c * dim + r] = s;
        }
    OpenMM_Context_setPositions(ctx, arr);
}

/* --dump-xml PREFIX: write PREFIX<atoms>-system.xml and PREFIX<atoms>-state.xml (stock System and
 * the benchmark positions), for bench/fd_python.py. */
static const char *dump_prefix;

static void write_text(const char *path, char *text) {
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write %s", path);
    fputs(text, f);
    fclose(f);
    free(text); /* the C API returns malloc'ed strings */
}

static void dump_xml(OpenMM_System *stock, OpenMM_Context *ctx, int natoms) {
    char path[4096];
    snprintf(path, sizeof path, "%s%d-system.xml", dump_prefix, natoms);
    write_text(path, OpenMM_XmlSerializer_serializeSystem(stock));
    OpenMM_State *st = OpenMM_Context_getState(ctx, OpenMM_State_Positions, 0);
    snprintf(path, sizeof path, "%s%d-state.xml", dump_prefix, natoms);
    write_text(path, OpenMM_XmlSerializer_serializeState(st));
    OpenMM_State_destroy(st);
}

/* ---- one size ------------------------------------------------------------------------------ */
typedef struct {
    int ncarbon, natoms, nbonds, nangles, ntorsions, nslots;
    int an_reps, fd_reps, hc_reps, gc_reps;
    double *an_times, *fd_times, *hc_times, *gc_times; /* seconds */
    double an_median, fd_median, speedup;
    double hc_median, gc_median; /* Hessian contraction tr(G dH/dp), gradient contraction y . d(grad E)/dp */
    double max_abs_err, max_abs_h, rel_err;
    int err_row_col[2];          /* where the largest |H_fd - H_an| is */
    double e_stock, e_hessfit, e_rel;
    double max_force_diff, max_abs_force;
} Result;

/* The calls timed on the hessfit_force System: each repetition is setPositions + one call. */
typedef enum { CALL_HESSIAN, CALL_HESSIAN_CONTRACTION, CALL_GRADIENT_CONTRACTION } TimedCall;

typedef struct {
    hessfit_force *hf;
    OpenMM_Context *ctx;
    OpenMM_Vec3Array *arr;
    double *blocks;        /* the Hessian blocks (hsize) */
    long long hsize;
    const double *adjoint; /* G (hsize) */
    const double *y;       /* 3 natoms */
    int ny;
    double *out;           /* nslots */
    int nslots;
} Calls;

static hessfit_status timed_call(const Calls *c, TimedCall which) {
    switch (which) {
    case CALL_HESSIAN:
        return hessfit_force_get_hessian_blocks(c->hf, c->ctx, c->blocks, c->hsize);
    case CALL_HESSIAN_CONTRACTION:
        return hessfit_force_get_hessian_contraction_derivatives(c->hf, c->ctx, c->adjoint, c->hsize, c->out, c->nslots);
    default:
        return hessfit_force_get_gradient_contraction_derivatives(c->hf, c->ctx, c->y, c->ny, c->out, c->nslots);
    }
}

static const char *call_name(TimedCall which) {
    return which == CALL_HESSIAN ? "hessfit_force_get_hessian_blocks"
         : which == CALL_HESSIAN_CONTRACTION ? "hessfit_force_get_hessian_contraction_derivatives"
                                             : "hessfit_force_get_gradient_contraction_derivatives";
}

/* Repeats setPositions + the call at least min_reps times and for at least min_time s (at most
 * 100000 times); *times gets the malloc'ed timings (s). Returns the number of repeats. */
static int time_call(const Calls *c, TimedCall which, int min_reps, double min_time, double **times) {
    hf_check(timed_call(c, which), call_name(which)); /* warm-up */
    int cap = min_reps, reps = 0;
    double *t = xcalloc((size_t) cap, sizeof *t), t_total = 0.0;
    while ((reps < min_reps || t_total < min_time) && reps < 100000) {
        if (reps == cap) {
            cap *= 2;
            double *p = realloc(t, (size_t) cap * sizeof *p);
            if (!p)
                die("out of memory (%s)", "realloc");
            t = p;
        }
        double t0 = now_s();
        OpenMM_Context_setPositions(c->ctx, c->arr);
        hessfit_status st = timed_call(c, which);
        double t1 = now_s();
        hf_check(st, call_name(which));
        t[reps++] = t1 - t0;
        t_total += t1 - t0;
    }
    *times = t;
    return reps;
}

static void run_size(int ncarbon, int fd_reps, int an_min_reps, double an_min_time, double h, Result *r) {
    Alkane m;
    build_alkane(&m, ncarbon);
    int n = m.natoms, dim = 3 * n;
    memset(r, 0, sizeof *r);
    r->ncarbon = ncarbon;
    r->natoms = n;
    r->nbonds = m.nbonds;

    OpenMM_System *stock = build_stock_system(&m, &r->nangles, &r->ntorsions);
    hessfit_force *hf = NULL;
    hf_check(hessfit_force_create_from_system(stock, &hf), "hessfit_force_create_from_system");
    OpenMM_System *hsys = OpenMM_System_create();
    for (int i = 0; i < n; i++)
        OpenMM_System_addParticle(hsys, OpenMM_System_getParticleMass(stock, i));
    hf_check(hessfit_force_add_to_system(hf, hsys, NULL), "hessfit_force_add_to_system");

    OpenMM_Platform *platform = OpenMM_Platform_getPlatformByName("Reference");
    OpenMM_VerletIntegrator *int1 = OpenMM_VerletIntegrator_create(0.001);
    OpenMM_VerletIntegrator *int2 = OpenMM_VerletIntegrator_create(0.001);
    OpenMM_Context *cstock = OpenMM_Context_create_2(stock, (OpenMM_Integrator *) int1, platform);
    OpenMM_Context *chf = OpenMM_Context_create_2(hsys, (OpenMM_Integrator *) int2, platform);
    OpenMM_Vec3Array *arr = OpenMM_Vec3Array_create(n);
    fill_positions(arr, m.pos, n);
    OpenMM_Context_setPositions(cstock, arr);
    OpenMM_Context_setPositions(chf, arr);
    if (dump_prefix)
        dump_xml(stock, cstock, n);

    /* energies and forces of the two Systems */
    r->e_stock = get_energy(cstock);
    r->e_hessfit = get_energy(chf);
    r->e_rel = fabs(r->e_hessfit - r->e_stock) / fmax(fabs(r->e_stock), 1e-300);
    double *f1 = xcalloc((size_t) dim, sizeof *f1), *f2 = xcalloc((size_t) dim, sizeof *f2);
    get_forces(cstock, f1, n);
    get_forces(chf, f2, n);
    for (int k = 0; k < dim; k++) {
        r->max_force_diff = fmax(r->max_force_diff, fabs(f1[k] - f2[k]));
        r->max_abs_force = fmax(r->max_abs_force, fabs(f1[k]));
    }

    /* analytic Hessian: one block (the converter declares no molecule) */
    int nmol = 0;
    hf_check(hessfit_force_get_num_molecules(hf, &nmol), "hessfit_force_get_num_molecules");
    long long hsize = 0;
    hf_check(hessfit_force_get_hessian_size(hf, &hsize), "hessfit_force_get_hessian_size");
    double *blocks = xcalloc((size_t) hsize, sizeof *blocks);
    double *Han = xcalloc((size_t) dim * dim, sizeof *Han);
    hf_check(hessfit_force_get_hessian_blocks(hf, chf, blocks, hsize), "hessfit_force_get_hessian_blocks"); /* warm-up */
    int *parts = xcalloc((size_t) n, sizeof *parts);
    for (int mol = 0; mol < nmol; mol++) {
        int np = 0;
        long long off = 0;
        hf_check(hessfit_force_get_molecule_particles(hf, mol, parts, n, &np), "hessfit_force_get_molecule_particles");
        hf_check(hessfit_force_get_hessian_block_offset(hf, mol, &off), "hessfit_force_get_hessian_block_offset");
        int bd = 3 * np;
        for (int a = 0; a < bd; a++)
            for (int b = 0; b < bd; b++) {
                int ga = 3 * parts[a / 3] + a % 3, gb = 3 * parts[b / 3] + b % 3;
                Han[(size_t) ga * dim + gb] = blocks[off + (long long) a * bd + b];
            }
    }
    free(parts);

    /* the adjoint inputs: G random symmetric per molecule block, y random */
    hf_check(hessfit_force_get_num_parameters(hf, &r->nslots), "hessfit_force_get_num_parameters");
    double *adjoint = xcalloc((size_t) hsize, sizeof *adjoint), *y = xcalloc((size_t) dim, sizeof *y);
    double *out = xcalloc((size_t) r->nslots, sizeof *out);
    for (int mol = 0; mol < nmol; mol++) {
        long long off = 0, end = 0;
        hf_check(hessfit_force_get_hessian_block_offset(hf, mol, &off), "hessfit_force_get_hessian_block_offset");
        hf_check(hessfit_force_get_hessian_block_offset(hf, mol + 1, &end), "hessfit_force_get_hessian_block_offset");
        long long bd = (long long) llround(sqrt((double) (end - off)));
        for (long long a = 0; a < bd; a++)
            for (long long b = a; b < bd; b++)
                adjoint[off + a * bd + b] = adjoint[off + b * bd + a] = 2.0 * rng_uniform() - 1.0;
    }
    for (int k = 0; k < dim; k++)
        y[k] = 2.0 * rng_uniform() - 1.0;

    Calls calls = {hf, chf, arr, blocks, hsize, adjoint, y, dim, out, r->nslots};
    r->an_reps = time_call(&calls, CALL_HESSIAN, an_min_reps, an_min_time, &r->an_times);
    r->an_median = median(r->an_times, r->an_reps);
    r->hc_reps = time_call(&calls, CALL_HESSIAN_CONTRACTION, an_min_reps, an_min_time, &r->hc_times);
    r->hc_median = median(r->hc_times, r->hc_reps);
    r->gc_reps = time_call(&calls, CALL_GRADIENT_CONTRACTION, an_min_reps, an_min_time, &r->gc_times);
    r->gc_median = median(r->gc_times, r->gc_reps);
    free(adjoint), free(y), free(out);

    /* finite differences on the stock System */
    double *Hfd = xcalloc((size_t) dim * dim, sizeof *Hfd);
    double *fp = xcalloc((size_t) dim, sizeof *fp), *fm = xcalloc((size_t) dim, sizeof *fm);
    get_forces(cstock, fp, n); /* warm-up */
    r->fd_reps = fd_reps;
    r->fd_times = xcalloc((size_t) fd_reps, sizeof *r->fd_times);
    for (int k = 0; k < fd_reps; k++) {
        double t0 = now_s();
        fd_hessian(cstock, arr, m.pos, n, h, Hfd, fp, fm);
        r->fd_times[k] = now_s() - t0;
    }
    r->fd_median = median(r->fd_times, fd_reps);
    r->speedup = r->fd_median / r->an_median;

    /* accuracy */
    for (int a = 0; a < dim; a++)
        for (int b = 0; b < dim; b++) {
            size_t idx = (size_t) a * dim + b;
            double e = fabs(Hfd[idx] - Han[idx]);
            if (e > r->max_abs_err) {
                r->max_abs_err = e;
                r->err_row_col[0] = a, r->err_row_col[1] = b;
            }
            r->max_abs_h = fmax(r->max_abs_h, fabs(Han[idx]));
        }
    r->rel_err = r->max_abs_err / r->max_abs_h;

    free(f1), free(f2), free(fp), free(fm), free(blocks), free(Han), free(Hfd);
    OpenMM_Vec3Array_destroy(arr);
    OpenMM_Context_destroy(cstock);
    OpenMM_Context_destroy(chf);
    OpenMM_VerletIntegrator_destroy(int1);
    OpenMM_VerletIntegrator_destroy(int2);
    hessfit_force_destroy(hf);
    OpenMM_System_destroy(hsys);
    OpenMM_System_destroy(stock);
    free_alkane(&m);
}

/* ---- machine description ------------------------------------------------------------------- */
static void cpu_model(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t')
                    p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(buf, len, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: hessian_bench [--plugin-dir DIR] [--repeats N] [--quick] [--carbons LIST]\n"
            "                     [--step H_NM] [--json FILE] [--dump-xml PREFIX]\n"
            "  --plugin-dir DIR  directory holding the HessFit plugins (default %s)\n"
            "  --repeats N       finite-difference repeats at every size (default 5, 5, 3 for\n"
            "                    <=62 / >62 atoms); analytic repeats max(20, N) and >= 0.5 s\n"
            "  --quick           1 FD repeat, >= 3 analytic repeats (smoke test; timings noisy)\n"
            "  --carbons LIST    comma-separated alkane carbon counts (default 1,20,166)\n"
            "  --step H_NM       finite-difference step in nm (default 1e-4, as q2mm/ForceBalance)\n"
            "  --json FILE       also write the raw numbers as JSON\n"
            "  --dump-xml PREFIX write PREFIX<atoms>-system.xml / -state.xml (stock System and\n"
            "                    positions) for bench/fd_python.py\n",
            HESSFIT_DEFAULT_PLUGIN_DIR);
}

static int parse_int(const char *s, const char *opt) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1 || v > 1000000)
        die("bad value for %s", opt);
    return (int) v;
}

int main(int argc, char **argv) {
    const char *plugin_dir = HESSFIT_DEFAULT_PLUGIN_DIR, *json_path = NULL;
    dump_prefix = NULL;
    int repeats = 0, quick = 0;
    double h = 1e-4;
    int carbons[16] = {1, 20, 166}, ncarb = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--plugin-dir") && has_next) {
            plugin_dir = argv[++i];
        } else if (!strcmp(a, "--dump-xml") && has_next) {
            dump_prefix = argv[++i];
        } else if (!strcmp(a, "--json") && has_next) {
            json_path = argv[++i];
        } else if (!strcmp(a, "--repeats") && has_next) {
            repeats = parse_int(argv[++i], "--repeats");
        } else if (!strcmp(a, "--step") && has_next) {
            char *end;
            h = strtod(argv[++i], &end);
            if (*end || !(h > 0.0) || h > 0.01)
                die("bad value for %s", "--step");
        } else if (!strcmp(a, "--carbons") && has_next) {
            char *list = argv[++i], *save = NULL;
            ncarb = 0;
            for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (ncarb == 16)
                    die("too many sizes in %s", "--carbons");
                carbons[ncarb++] = parse_int(tok, "--carbons");
            }
            if (ncarb == 0)
                die("empty list for %s", "--carbons");
        } else {
            usage(stderr);
            die("unknown or incomplete option %s", a);
        }
    }

    OpenMM_StringArray *loaded = OpenMM_Platform_loadPluginsFromDirectory(plugin_dir);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    for (int i = 0; i < OpenMM_StringArray_getSize(failures); i++)
        fprintf(stderr, "hessian_bench: plugin load failure: %s\n", OpenMM_StringArray_get(failures, i));
    if (OpenMM_StringArray_getSize(loaded) < 1 || OpenMM_StringArray_getSize(failures) > 0)
        die("could not load the HessFit plugins from %s (use --plugin-dir)", plugin_dir);
    OpenMM_StringArray_destroy(loaded);
    OpenMM_StringArray_destroy(failures);

    char cpu[256], date[64];
    cpu_model(cpu, sizeof cpu);
    time_t tnow = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&tnow));
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);

    printf("<!-- hessian_bench: OpenMM %s, Reference platform, FD step h = %g nm (central differences\n"
           "     of forces, 6N evaluations, symmetrised), medians over repeats; CPU: %s; nproc: %ld; %s -->\n\n",
           OpenMM_Platform_getOpenMMVersion(), h, cpu, nproc, date);
    fflush(stdout);

    Result *res = xcalloc((size_t) ncarb, sizeof *res);
    for (int s = 0; s < ncarb; s++) {
        int natoms = 3 * carbons[s] + 2;
        int fd_reps = repeats ? repeats : (natoms > 62 ? 3 : 5);
        int an_reps = repeats > 20 ? repeats : 20;
        double an_time = 0.5;
        if (quick) {
            fd_reps = 1;
            an_reps = 3;
            an_time = 0.05;
        }
        fprintf(stderr, "hessian_bench: C%dH%d (%d atoms): %d FD repeats (%d force evaluations each)...\n",
                carbons[s], 2 * carbons[s] + 2, natoms, fd_reps, 6 * natoms);
        run_size(carbons[s], fd_reps, an_reps, an_time, h, &res[s]);
        Result *r = &res[s];
        fprintf(stderr,
                "  bonds %d, angles %d, torsions %d; E_stock %.10g kJ/mol, E_hessfit %.10g kJ/mol, "
                "rel. diff %.2e; max |F_stock - F_hessfit| %.2e kJ/mol/nm (max |F| %.3g)\n"
                "  analytic %d repeats, median %.4f ms; FD %d repeats, median %.2f ms; "
                "max err at (%d, %d)\n"
                "  %d slots: tr(G dH/dp) %d repeats, median %.4f ms; y . d(grad E)/dp %d repeats, median %.4f ms\n",
                r->nbonds, r->nangles, r->ntorsions, r->e_stock, r->e_hessfit, r->e_rel, r->max_force_diff,
                r->max_abs_force, r->an_reps, 1e3 * r->an_median, r->fd_reps, 1e3 * r->fd_median,
                r->err_row_col[0], r->err_row_col[1], r->nslots, r->hc_reps, 1e3 * r->hc_median, r->gc_reps,
                1e3 * r->gc_median);
    }

    printf("| atoms | analytic median ms | FD median ms | speedup | max \\|H_fd - H_an\\| (kJ/mol/nm^2) | relative |\n");
    printf("|------:|-------------------:|-------------:|--------:|---------------------------------:|---------:|\n");
    for (int s = 0; s < ncarb; s++) {
        Result *r = &res[s];
        printf("| %d | %.4g | %.4g | %.0fx | %.2e | %.1e |\n", r->natoms, 1e3 * r->an_median, 1e3 * r->fd_median,
               r->speedup, r->max_abs_err, r->rel_err);
    }
    printf("\nAdjoint contractions vs the analytic Hessian blocks (same System, medians; ratio = time / "
           "Hessian time):\n\n");
    printf("| atoms | slots | Hessian blocks ms | tr(G dH/dp) ms | ratio | y . d(grad E)/dp ms | ratio |\n");
    printf("|------:|------:|------------------:|---------------:|------:|--------------------:|------:|\n");
    for (int s = 0; s < ncarb; s++) {
        Result *r = &res[s];
        printf("| %d | %d | %.4g | %.4g | %.2f | %.4g | %.2f |\n", r->natoms, r->nslots, 1e3 * r->an_median,
               1e3 * r->hc_median, r->hc_median / r->an_median, 1e3 * r->gc_median, r->gc_median / r->an_median);
    }
    printf("\nEnergy check (stock System vs converted hessfit_force System):\n\n");
    printf("| atoms | E stock (kJ/mol) | E HessFit (kJ/mol) | relative difference | max \\|F diff\\| (kJ/mol/nm) |\n");
    printf("|------:|-----------------:|-------------------:|--------------------:|-------------------------:|\n");
    for (int s = 0; s < ncarb; s++) {
        Result *r = &res[s];
        printf("| %d | %.10g | %.10g | %.1e | %.1e |\n", r->natoms, r->e_stock, r->e_hessfit, r->e_rel,
               r->max_force_diff);
    }
    printf("\nRepeats (analytic / FD / Hessian contraction / gradient contraction): ");
    for (int s = 0; s < ncarb; s++)
        printf("%s%d atoms %d/%d/%d/%d", s ? ", " : "", res[s].natoms, res[s].an_reps, res[s].fd_reps, res[s].hc_reps,
               res[s].gc_reps);
    printf("; max |H_an| (kJ/mol/nm^2): ");
    for (int s = 0; s < ncarb; s++)
        printf("%s%.4g", s ? ", " : "", res[s].max_abs_h);
    printf("\n");

    if (json_path) {
        FILE *f = fopen(json_path, "w");
        if (!f)
            die("cannot write %s", json_path);
        fprintf(f, "{\n  \"openmm_version\": \"%s\",\n  \"platform\": \"Reference\",\n  \"cpu\": \"%s\",\n"
                   "  \"nproc\": %ld,\n  \"date\": \"%s\",\n  \"fd_step_nm\": %.17g,\n  \"perturbation_nm\": %.17g,\n"
                   "  \"seed\": %u,\n  \"results\": [\n",
                OpenMM_Platform_getOpenMMVersion(), cpu, nproc, date, h, PERTURB_NM, SEED);
        for (int s = 0; s < ncarb; s++) {
            Result *r = &res[s];
            fprintf(f,
                    "    {\"carbons\": %d, \"atoms\": %d, \"bonds\": %d, \"angles\": %d, \"torsions\": %d,\n"
                    "     \"analytic_median_s\": %.9g, \"fd_median_s\": %.9g, \"speedup\": %.6g,\n"
                    "     \"max_abs_err\": %.9g, \"max_abs_hessian\": %.9g, \"relative_err\": %.9g,\n"
                    "     \"energy_stock\": %.17g, \"energy_hessfit\": %.17g, \"energy_relative_diff\": %.9g,\n"
                    "     \"max_force_diff\": %.9g,\n     \"slots\": %d, \"hessian_contraction_median_s\": %.9g,"
                    " \"gradient_contraction_median_s\": %.9g,\n     \"analytic_times_s\": [",
                    r->ncarbon, r->natoms, r->nbonds, r->nangles, r->ntorsions, r->an_median, r->fd_median,
                    r->speedup, r->max_abs_err, r->max_abs_h, r->rel_err, r->e_stock, r->e_hessfit, r->e_rel,
                    r->max_force_diff, r->nslots, r->hc_median, r->gc_median);
            for (int k = 0; k < r->an_reps; k++)
                fprintf(f, "%s%.9g", k ? ", " : "", r->an_times[k]);
            fprintf(f, "],\n     \"fd_times_s\": [");
            for (int k = 0; k < r->fd_reps; k++)
                fprintf(f, "%s%.9g", k ? ", " : "", r->fd_times[k]);
            fprintf(f, "],\n     \"hessian_contraction_times_s\": [");
            for (int k = 0; k < r->hc_reps; k++)
                fprintf(f, "%s%.9g", k ? ", " : "", r->hc_times[k]);
            fprintf(f, "],\n     \"gradient_contraction_times_s\": [");
            for (int k = 0; k < r->gc_reps; k++)
                fprintf(f, "%s%.9g", k ? ", " : "", r->gc_times[k]);
            fprintf(f, "]}%s\n", s + 1 < ncarb ? "," : "");
        }
        fprintf(f, "  ]\n}\n");
        fclose(f);
    }
    for (int s = 0; s < ncarb; s++)
        free(res[s].an_times), free(res[s].fd_times), free(res[s].hc_times), free(res[s].gc_times);
    free(res);
    return 0;
}
