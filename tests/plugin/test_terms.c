/*
 * test_terms (per platform): every term type of HessianForce, alone in a small molecule, checked
 * through the C API on random and near-degenerate geometries.
 *
 * For each geometry:
 *  (f) the energy equals the documented formula (HessianForce.h) evaluated independently here,
 *      with an independent IUPAC dihedral (1e-10 relative to the sum of |term energies|), and the
 *      OpenMM State (Context_getState) gives the same energy and forces as the hessfit call;
 *  (a) forces = -central differences of the energy;
 *  (b) the analytic Hessian (blocks scattered into the full 3N x 3N matrix by molecule layout) =
 *      -central differences of the analytic forces;
 *  (c) dE/dslot = central differences over the parameter table (set_parameters +
 *      update_parameters_in_context), relative step 1e-6;
 *  (d) the Hessian is symmetric (1e-12 relative) and translation invariant: for every row and
 *      every Cartesian direction b, sum over atoms of H[row][atom b] = 0 (1e-10 relative);
 *  (e) under a rigid rotation R about the origin: E unchanged (1e-12 relative), F -> R F and
 *      H -> R H R^T (1e-10 relative).
 *
 * Finite-difference steps and expected errors. The central difference of a smooth function with
 * step h has truncation error h^2/6 |f'''| ~ (h/L)^2/6 relative, where L is the length over which
 * the function changes by order itself, plus rounding eps |f| / h. For regular geometries
 * L ~ 0.1 nm and h = 1e-5 nm: ~1e-9 to 1e-8 relative (O(h^2 E''') ~ 1e-8 for the forces from the
 * energy, rounding eps E/h ~ 1e-11 E). Near a singular configuration (an angle at 179.9 or
 * 0.5 degrees, a bond of 0.002 nm) L shrinks to the distance d to that configuration (e.g.
 * r sin(0.1 deg) = 1.7e-4 nm) and a fixed h = 1e-5 nm would give (h/d)^2 ~ 3e-3: there the step is
 * h = 1e-5 nm * min(1, d / 0.1 nm), keeping h/d <= 1e-4 (and rounding eps d / h ~ 1e-12); d is
 * the smallest of the geometry's own distances to a singularity (particle-particle, and particle
 * from the line through two others) and, for the near-degenerate cases, the stated one. The
 * tolerance is 1e-6 relative to a scale that is the larger of the measured quantity's max and
 * what the neighbouring derivative implies over the length L (a zero force at a minimum does not
 * make the check meaningless). Parameters: step 1e-6 |p|, truncation ~1e-12, rounding
 * eps |E| / (1e-6 |p|) ~ 1e-10 of |E| / |p|; tolerance 1e-6 of max(|dE/dp|, |E| / |p|).
 *
 * Plus one System with TWO molecules (hessfit_force_add_molecule, the second listed in a
 * permuted order, both sharing typed parameter slots): block offsets and sizes, the second block
 * equal to the Hessian of that molecule alone in its own System, E/F/dE/dslot equal to the sums
 * of the separate molecules (no nonbonded interaction crosses molecules), forces of one molecule
 * independent of the other's positions, and (a)-(e) on the combined System.
 */
#include "test_util.h"
#include "term_cases.h"
#include "two_molecules.h"
#include <string.h>

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)
#define MAXN 10
#define MAXSLOTS 40
#define NRANDOM 4
/* OpenMM's ONE_4PI_EPS0 (SimTKOpenMMRealType.h), kJ nm / (mol e^2) */
#define COULOMB (1.0 / (4.0 * PI * (1e-6 * 8.8541878128e-12 / (1.602176634e-19 * 1.602176634e-19 * 6.02214076e23))))

static const char *platform_name = "Reference";

/* ======================================================================================== */
/* Small vector helpers and independent internal coordinates                                */
/* ======================================================================================== */

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void sub3(const double *a, const double *b, double *c) {
    for (int i = 0; i < 3; i++)
        c[i] = a[i] - b[i];
}
static void cross3(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}
static double norm3(const double *a) { return sqrt(dot3(a, a)); }

/* The distance to the nearest singular configuration that the geometry itself shows: the
 * smallest distance between two particles, or of a particle from the line through two others
 * (an angle or a dihedral's angle going linear). */
static double singular_distance(const double *pos, int n) {
    double m = test_min_pair_distance(pos, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = j + 1; k < n; k++) {
                if (i == j || i == k)
                    continue;
                double a[3], b[3], c[3];
                sub3(pos + 3 * i, pos + 3 * j, a);
                sub3(pos + 3 * k, pos + 3 * j, b);
                cross3(a, b, c);
                m = fmin(m, norm3(c) / norm3(b));
            }
    return m;
}

/* ======================================================================================== */
/* Systems                                                                                  */
/* ======================================================================================== */

typedef struct {
    OpenMM_System *system;
    hessfit_force *force;
    OpenMM_Context *context;
    OpenMM_Integrator *integrator;
    int n, nslots;
} Setup;

typedef void (*build_fn)(hessfit_force *force);

static void setup_create(Setup *s, int n, build_fn build, const double *pos) {
    s->n = n;
    s->system = OpenMM_System_create();
    for (int i = 0; i < n; i++)
        OpenMM_System_addParticle(s->system, i % 2 ? 1.008 : 12.011);
    HF_OK(hessfit_force_create(&s->force));
    build(s->force);
    int np = 0;
    HF_OK(hessfit_force_get_num_particles(s->force, &np));
    CHECK(np == n, "the builder added %d particles, expected %d", np, n);
    HF_OK(hessfit_force_get_num_parameters(s->force, &s->nslots));
    CHECK(s->nslots <= MAXSLOTS, "too many slots");
    HF_OK(hessfit_force_add_to_system(s->force, s->system, NULL));
    s->context = test_create_context(s->system, platform_name, pos, n, 0.001, &s->integrator);
}

static void setup_destroy(Setup *s) {
    OpenMM_Context_destroy(s->context);
    OpenMM_Integrator_destroy(s->integrator);
    hessfit_force_destroy(s->force);
    OpenMM_System_destroy(s->system);
}

static double energy_forces(Setup *s, const double *pos, double *forces) {
    double e = 0.0;
    test_set_positions(s->context, pos, s->n);
    HF_OK(hessfit_force_get_energy_forces(s->force, s->context, &e, forces));
    return e;
}

/* The full 3n x 3n Hessian from the concatenated blocks, checking the layout on the way: the
 * offsets are the running sums of (3 n_m)^2 and every particle is in exactly one molecule. */
static void full_hessian(Setup *s, const double *pos, double *H) {
    const int dim = 3 * s->n;
    long long size = 0;
    int nmol = 0, seen[MAXN] = {0};
    test_set_positions(s->context, pos, s->n);
    HF_OK(hessfit_force_get_hessian_size(s->force, &size));
    HF_OK(hessfit_force_get_num_molecules(s->force, &nmol));
    double *blocks = malloc((size_t) size * sizeof(double));
    CHECK(blocks != NULL, "out of memory");
    HF_OK(hessfit_force_get_hessian_blocks(s->force, s->context, blocks, size));
    memset(H, 0, (size_t) dim * dim * sizeof(double));
    long long expected = 0;
    for (int m = 0; m < nmol; m++) {
        int list[MAXN], cnt = 0;
        long long offset = -1;
        HF_OK(hessfit_force_get_molecule_particles(s->force, m, list, MAXN, &cnt));
        HF_OK(hessfit_force_get_hessian_block_offset(s->force, m, &offset));
        CHECK(offset == expected, "molecule %d block at %lld, expected %lld", m, offset, expected);
        const int bd = 3 * cnt;
        for (int i = 0; i < cnt; i++) {
            CHECK(list[i] >= 0 && list[i] < s->n && !seen[list[i]], "molecule %d lists particle %d", m, list[i]);
            seen[list[i]] = 1;
        }
        for (int i = 0; i < cnt; i++)
            for (int a = 0; a < 3; a++)
                for (int j = 0; j < cnt; j++)
                    for (int b = 0; b < 3; b++)
                        H[(3 * list[i] + a) * dim + 3 * list[j] + b] = blocks[offset + (3 * i + a) * bd + 3 * j + b];
        expected += (long long) bd * bd;
    }
    CHECK(expected == size, "blocks cover %lld doubles, the Hessian size is %lld", expected, size);
    for (int i = 0; i < s->n; i++)
        CHECK(seen[i], "particle %d is in no molecule", i);
    free(blocks);
}

static void set_table(Setup *s, const double *table) {
    HF_OK(hessfit_force_set_parameters(s->force, table, s->nslots));
    HF_OK(hessfit_force_update_parameters_in_context(s->force, s->context));
}

/* ======================================================================================== */
/* The generic check of one geometry                                                         */
/* ======================================================================================== */

typedef struct {
    const char *name;
    int geometries;
    double formula, state, force, hess, param, sym, rowsum, rot_e, rot_f, rot_h;
} Stats;

/* Reference energy from the documented formula; *scale = sum of |term energies|. */
typedef double (*energy_fn)(const double *pos, const double *p, double *scale);

static void note(double *slot, double v) {
    if (v > *slot)
        *slot = v;
}

/* dlen: distance (nm) to the nearest singular configuration, or 0 to take it from the geometry
 * (singular_distance); capped at 0.1 nm. */
static void check_geometry(Setup *s, const double *pos0, double dlen, energy_fn ref, Stats *st, const char *label) {
    const int n = s->n, dim = 3 * n;
    const double rmin = singular_distance(pos0, n);
    if (dlen <= 0.0 || dlen > rmin)
        dlen = rmin;
    dlen = fmin(dlen, 0.1);
    const double h = 1e-5 * fmin(1.0, dlen / 0.1);
    double F0[3 * MAXN], Fs[3 * MAXN], Fp[3 * MAXN], Fm[3 * MAXN], pos[3 * MAXN];
    double *H0 = malloc(sizeof(double) * dim * dim), *Hr = malloc(sizeof(double) * dim * dim);
    CHECK(H0 && Hr, "out of memory");
    st->geometries++;

    /* energy, forces, Hessian; the OpenMM State path agrees */
    const double E0 = energy_forces(s, pos0, F0);
    full_hessian(s, pos0, H0);
    const double Es = test_energy_forces(s->context, -1, Fs, n);
    const double Fmax = test_max_abs(F0, dim), Hmax = test_max_abs(H0, (size_t) dim * dim);
    const double Fscale = fmax(Fmax, dlen * Hmax), Hscale = fmax(Hmax, Fmax / dlen);

    /* (f) the documented formula. The energy scale Eabs used by the relative checks is the
     * largest of |E|, the sum of |term energies|, and the energy changes over the length dlen
     * (dlen |F| and 1e-4 dlen^2 |H|, the latter ~ a displacement of 1e-2 dlen): at an exact
     * minimum (all bonds at r0) |E| ~ 1e-29 is rounding noise and cannot be a scale. */
    double table[MAXSLOTS], escale = 0.0;
    HF_OK(hessfit_force_get_parameters(s->force, table, s->nslots));
    double Eabs = fmax(fmax(fabs(E0), dlen * Fmax), 1e-4 * dlen * dlen * Hmax);
    const double Eref = ref ? ref(pos0, table, &escale) : 0.0;
    Eabs = fmax(Eabs, escale);
    if (ref) {
        const double err = fabs(E0 - Eref) / fmax(Eabs, 1e-300);
        note(&st->formula, err);
        SOFT_CHECK(err <= 1e-10, "%s [%s]: energy %.17g, documented formula gives %.17g (rel %.2e)", st->name,
                   label, E0, Eref, err);
    }
    {
        const double err = fmax(fabs(Es - E0) / fmax(Eabs, 1e-300), test_max_abs_diff(Fs, F0, dim) / fmax(Fscale, 1e-300));
        note(&st->state, err);
        SOFT_CHECK(err <= 1e-12, "%s [%s]: OpenMM State and hessfit_force_get_energy_forces differ (rel %.2e)", st->name,
                   label, err);
    }

    /* (a) forces = -dE/dx, (b) H = -dF/dx, both by central differences */
    double ferr = 0.0, herr = 0.0;
    memcpy(pos, pos0, sizeof(double) * dim);
    for (int j = 0; j < dim; j++) {
        pos[j] = pos0[j] + h;
        const double xp = pos[j];
        const double Ep = energy_forces(s, pos, Fp);
        pos[j] = pos0[j] - h;
        const double xm = pos[j];
        const double Em = energy_forces(s, pos, Fm);
        pos[j] = pos0[j];
        const double step = xp - xm; /* exact: the step actually taken */
        ferr = fmax(ferr, fabs(-(Ep - Em) / step - F0[j]));
        for (int i = 0; i < dim; i++)
            herr = fmax(herr, fabs(-(Fp[i] - Fm[i]) / step - H0[i * dim + j]));
    }
    ferr /= fmax(Fscale, 1e-300);
    herr /= fmax(Hscale, 1e-300);
    note(&st->force, ferr);
    note(&st->hess, herr);
    SOFT_CHECK(ferr <= 1e-6, "%s [%s]: forces vs -dE/dx: rel. error %.2e (h = %.2e nm, max|F| %.3e)", st->name, label,
               ferr, h, Fmax);
    SOFT_CHECK(herr <= 1e-6, "%s [%s]: Hessian vs -dF/dx: rel. error %.2e (h = %.2e nm, max|H| %.3e)", st->name, label,
               herr, h, Hmax);

    /* (d) symmetry and translation invariance */
    double serr = 0.0, rerr = 0.0;
    for (int i = 0; i < dim; i++) {
        for (int j = 0; j < dim; j++)
            serr = fmax(serr, fabs(H0[i * dim + j] - H0[j * dim + i]));
        for (int b = 0; b < 3; b++) {
            double sum = 0.0;
            for (int q = 0; q < n; q++)
                sum += H0[i * dim + 3 * q + b];
            rerr = fmax(rerr, fabs(sum));
        }
    }
    serr /= fmax(Hmax, 1e-300);
    rerr /= fmax(Hmax, 1e-300);
    note(&st->sym, serr);
    note(&st->rowsum, rerr);
    SOFT_CHECK(serr <= 1e-12, "%s [%s]: Hessian asymmetry %.2e relative", st->name, label, serr);
    SOFT_CHECK(rerr <= 1e-10, "%s [%s]: Hessian row sums %.2e relative (translation invariance)", st->name, label, rerr);

    /* (c) dE/dslot vs central differences over the table */
    {
        double dedp[MAXSLOTS], tp[MAXSLOTS], perr = 0.0;
        test_set_positions(s->context, pos0, n);
        HF_OK(hessfit_force_get_parameter_derivatives(s->force, s->context, dedp, s->nslots));
        memcpy(tp, table, sizeof(double) * s->nslots);
        for (int k = 0; k < s->nslots; k++) {
            const double pscale = table[k] != 0.0 ? fabs(table[k]) : 1.0, dp = 1e-6 * pscale;
            tp[k] = table[k] + dp;
            const double pp = tp[k];
            set_table(s, tp);
            const double Ep = energy_forces(s, pos0, NULL);
            tp[k] = table[k] - dp;
            const double pm = tp[k];
            set_table(s, tp);
            const double Em = energy_forces(s, pos0, NULL);
            tp[k] = table[k];
            const double fd = (Ep - Em) / (pp - pm);
            const double err = fabs(fd - dedp[k]) / fmax(fmax(fabs(dedp[k]), Eabs / pscale), 1e-300);
            perr = fmax(perr, err);
            SOFT_CHECK(err <= 1e-6, "%s [%s]: dE/dslot %d = %.12g, finite difference %.12g (rel %.2e)", st->name, label,
                       k, dedp[k], fd, err);
        }
        set_table(s, table);
        note(&st->param, perr);
    }

    /* (e) rigid rotation about the origin */
    {
        double axis[3] = {test_uniform(-1, 1), test_uniform(-1, 1), test_uniform(-1, 1)};
        if (norm3(axis) < 1e-3)
            axis[0] = 1.0;
        const double angle = test_uniform(0.3, 2 * PI - 0.3);
        double R[9], Fr[3 * MAXN], RF[3 * MAXN];
        for (int c = 0; c < 3; c++) { /* columns of R: the rotated unit vectors */
            double e[3] = {0, 0, 0};
            e[c] = 1.0;
            test_rotate(e, 1, axis, angle);
            for (int r = 0; r < 3; r++)
                R[3 * r + c] = e[r];
        }
        memcpy(pos, pos0, sizeof(double) * dim);
        test_rotate(pos, n, axis, angle);
        const double Er = energy_forces(s, pos, Fr);
        full_hessian(s, pos, Hr);
        memcpy(RF, F0, sizeof(double) * dim);
        test_rotate(RF, n, axis, angle);
        const double eerr = fabs(Er - E0) / fmax(Eabs, 1e-300);
        const double frot = test_max_abs_diff(Fr, RF, dim) / fmax(Fscale, 1e-300);
        double hrot = 0.0;
        for (int p = 0; p < n; p++)
            for (int q = 0; q < n; q++)
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        double v = 0.0; /* (R B R^T)_ab with B the (p, q) block of H0 */
                        for (int c = 0; c < 3; c++)
                            for (int d = 0; d < 3; d++)
                                v += R[3 * a + c] * H0[(3 * p + c) * dim + 3 * q + d] * R[3 * b + d];
                        hrot = fmax(hrot, fabs(Hr[(3 * p + a) * dim + 3 * q + b] - v));
                    }
        hrot /= fmax(Hscale, 1e-300);
        note(&st->rot_e, eerr);
        note(&st->rot_f, frot);
        note(&st->rot_h, hrot);
        SOFT_CHECK(eerr <= 1e-12, "%s [%s]: energy changed by %.2e relative under a rotation", st->name, label, eerr);
        SOFT_CHECK(frot <= 1e-10, "%s [%s]: forces do not rotate with the molecule: %.2e relative", st->name, label, frot);
        SOFT_CHECK(hrot <= 1e-10, "%s [%s]: Hessian does not rotate as R H R^T: %.2e relative", st->name, label, hrot);
    }
    free(H0);
    free(Hr);
}

static void print_stats(const Stats *st) {
    printf("%-26s %2d geoms | formula %.1e state %.1e | F-fd %.1e H-fd %.1e dEdp-fd %.1e | sym %.1e rowsum %.1e | "
           "rot E %.1e F %.1e H %.1e\n",
           st->name, st->geometries, st->formula, st->state, st->force, st->hess, st->param, st->sym, st->rowsum,
           st->rot_e, st->rot_f, st->rot_h);
    fflush(stdout);
}

/* ======================================================================================== */
/* The term cases                                                                            */
/* ======================================================================================== */

typedef struct {
    double pos[3 * MAXN];
    double dlen;      /* distance to the nearest singular configuration (0: from the geometry) */
    char label[64];
} Geometry;

/* geometry k of a case; returns 0 when there are no more */
typedef int (*geometry_fn)(int k, Geometry *g);

typedef struct {
    const char *name;
    int n;
    build_fn build;
    energy_fn energy;
    geometry_fn geometry;
} TermCase;

static double lj(double sigma, double eps, double r) {
    const double s6 = pow(sigma / r, 6);
    return 4.0 * eps * (s6 * s6 - s6);
}

/* ---- geometries shared by several cases ------------------------------------------------- */

/* bonded-scale chains of n atoms: NRANDOM random ones, then the specials the caller handles */
static int random_bonded_chain(int k, int n, Geometry *g) {
    test_random_chain(g->pos, n, 0.09, 0.16);
    test_random_pose(g->pos, n);
    g->dlen = 0.0;
    snprintf(g->label, sizeof g->label, "random %d", k);
    return 1;
}

/* torsion geometries for a 5-atom chain: random; planar cis (0 deg) and trans (180 deg) exactly;
 * an angle of 175 deg next to the dihedral. */
static int torsion_geometry(int k, Geometry *g) {
    if (k < NRANDOM)
        return random_bonded_chain(k, 5, g);
    const double r[5] = {0, 0.1093, 0.1529, 0.1410, 0.1010};
    double th[5] = {0, 0, 111.0 * DEG, 118.0 * DEG, 109.5 * DEG};
    double ph[5] = {0, 0, 0, 0, 0};
    g->dlen = 0.0;
    switch (k - NRANDOM) {
    case 0: /* everything in the plane z = 0; phi(0,1,2,3) = 0 exactly */
        ph[3] = 0.0;
        ph[4] = PI;
        snprintf(g->label, sizeof g->label, "planar phi = 0");
        break;
    case 1:
        ph[3] = PI;
        ph[4] = 0.0;
        snprintf(g->label, sizeof g->label, "planar phi = 180");
        break;
    case 2:
        th[2] = 175.0 * DEG;
        ph[3] = 1.1;
        ph[4] = -2.3;
        g->dlen = r[1] * sin(5.0 * DEG);
        snprintf(g->label, sizeof g->label, "angle 175 deg");
        break;
    default:
        return 0;
    }
    test_chain(g->pos, 5, r, th, ph);
    if (k - NRANDOM < 2) { /* kept unrotated so that the planarity is exact */
        const double phi = test_dihedral(g->pos, 0, 1, 2, 3);
        CHECK(phi == 0.0 || fabs(phi) == PI, "planar geometry is not exactly planar: phi = %.17g", phi);
    } else {
        test_random_pose(g->pos, 5);
    }
    return 1;
}

/* ---- bond --------------------------------------------------------------------------------- */
static double harmonic_energy(double k, double q, double q0) { return k * (q - q0) * (q - q0); }

/* build_bond's three bonds, each of energy form(k, r, r0) */
static double bonds_energy(const double *x, const double *p, double *scale, double (*form)(double, double, double)) {
    const double e[3] = {form(p[0], test_distance(x, 0, 1), p[1]), form(p[2], test_distance(x, 1, 2), p[3]),
                         form(p[0], test_distance(x, 2, 3), p[1])};
    *scale = fabs(e[0]) + fabs(e[1]) + fabs(e[2]);
    return e[0] + e[1] + e[2];
}
static double energy_bond(const double *x, const double *p, double *scale) {
    return bonds_energy(x, p, scale, harmonic_energy);
}
static double energy_mm3_bond(const double *x, const double *p, double *scale) {
    return bonds_energy(x, p, scale, mm3_bond_energy);
}
static int geometry_bond(int k, Geometry *g) {
    if (k < NRANDOM)
        return random_bonded_chain(k, 4, g);
    double r[4] = {0, 0.109, 0.1529, 0.109}, th[4] = {0, 0, 112 * DEG, 108 * DEG}, ph[4] = {0, 0, 0, 1.0};
    switch (k - NRANDOM) {
    case 0:
        snprintf(g->label, sizeof g->label, "all bonds at r0");
        g->dlen = 0.0;
        break;
    case 1:
        r[1] = 0.002;
        g->dlen = 0.002;
        snprintf(g->label, sizeof g->label, "bond of 0.002 nm");
        break;
    default:
        return 0;
    }
    test_chain(g->pos, 4, r, th, ph);
    test_random_pose(g->pos, 4);
    return 1;
}

/* ---- Urey-Bradley ------------------------------------------------------------------------ */
static double energy_ub(const double *x, const double *p, double *scale) {
    const double e0 = p[0] * pow(test_distance(x, 0, 2) - p[1], 2), e1 = p[2] * pow(test_distance(x, 1, 3) - p[3], 2);
    *scale = e0 + e1;
    return e0 + e1;
}

/* angle geometries for a chain of n atoms: random, angle (0,1,2) at 179.9, 0.5 deg, at theta0 */
static int angle_geometry(int k, int n, double theta0, Geometry *g) {
    if (k < NRANDOM)
        return random_bonded_chain(k, n, g);
    const double r[5] = {0, 0.1093, 0.1229, 0.1410, 0.1010};
    double th[5] = {0, 0, 0, 118.0 * DEG, 104.5 * DEG}, ph[5] = {0, 0, 0, 0.9, -2.0};
    switch (k - NRANDOM) {
    case 0:
        th[2] = 179.9 * DEG;
        snprintf(g->label, sizeof g->label, "angle 179.9 deg");
        break;
    case 1:
        th[2] = 0.5 * DEG;
        snprintf(g->label, sizeof g->label, "angle 0.5 deg");
        break;
    case 2:
        th[2] = theta0;
        snprintf(g->label, sizeof g->label, "angle at theta0");
        break;
    default:
        return 0;
    }
    /* the singular configurations are theta = 0 and 180 deg: the nearest one is
     * min(r1, r2) sin(theta) away */
    g->dlen = fmin(r[1], r[2]) * sin(th[2]);
    test_chain(g->pos, n, r, th, ph);
    test_random_pose(g->pos, n);
    return 1;
}
static int geometry_ub(int k, Geometry *g) { return angle_geometry(k, 4, 1.9, g); }

/* ---- angle ------------------------------------------------------------------------------- */
/* build_angle's three angles, each of energy form(k, theta, theta0) */
static double angles_energy(const double *x, const double *p, double *scale, double (*form)(double, double, double)) {
    const double e[3] = {form(p[0], test_angle(x, 0, 1, 2), p[1]), form(p[2], test_angle(x, 1, 2, 3), p[3]),
                         form(p[0], test_angle(x, 2, 3, 4), p[1])};
    *scale = fabs(e[0]) + fabs(e[1]) + fabs(e[2]);
    return e[0] + e[1] + e[2];
}
static double energy_angle(const double *x, const double *p, double *scale) {
    return angles_energy(x, p, scale, harmonic_energy);
}
static double energy_mm3_angle(const double *x, const double *p, double *scale) {
    return angles_energy(x, p, scale, mm3_angle_energy);
}
static int geometry_angle(int k, Geometry *g) { return angle_geometry(k, 5, 1.911, g); }

/* ---- periodic torsion --------------------------------------------------------------------- */
static double energy_periodic(const double *x, const double *p, double *scale) {
    const double phi = test_dihedral(x, 0, 1, 2, 3), psi = test_dihedral(x, 1, 2, 3, 4);
    const double e[4] = {p[0] * (1 + cos(1 * phi - p[1])), p[2] * (1 + cos(2 * phi - p[3])),
                         p[4] * (1 + cos(3 * phi - p[5])), p[2] * (1 + cos(2 * psi - p[3]))};
    *scale = fabs(e[0]) + fabs(e[1]) + fabs(e[2]) + fabs(e[3]);
    return e[0] + e[1] + e[2] + e[3];
}

/* ---- OPLS torsion ------------------------------------------------------------------------- */
static double opls(double phi, double V1, double V2, double V3, double V4, double *scale) {
    const double e[4] = {0.5 * V1 * (1 + cos(phi)), 0.5 * V2 * (1 - cos(2 * phi)), 0.5 * V3 * (1 + cos(3 * phi)),
                         0.5 * V4 * (1 - cos(4 * phi))};
    *scale += fabs(e[0]) + fabs(e[1]) + fabs(e[2]) + fabs(e[3]);
    return e[0] + e[1] + e[2] + e[3];
}
static double energy_opls(const double *x, const double *p, double *scale) {
    *scale = 0.0;
    return opls(test_dihedral(x, 0, 1, 2, 3), p[0], p[1], p[2], p[3], scale) +
           opls(test_dihedral(x, 1, 2, 3, 4), p[4], 0.0, p[2], p[5], scale);
}

/* ---- RB torsion --------------------------------------------------------------------------- */
static double rb(double phi, const double *c, double *scale) {
    const double y = cos(phi - PI);
    double e = 0.0, yp = 1.0;
    for (int m = 0; m < 6; m++) {
        e += c[m] * yp;
        *scale += fabs(c[m] * yp);
        yp *= y;
    }
    return e;
}
static double energy_rb(const double *x, const double *p, double *scale) {
    const double c2[6] = {p[0], p[6], 0.0, p[3], 0.0, p[7]};
    *scale = 0.0;
    return rb(test_dihedral(x, 0, 1, 2, 3), p, scale) + rb(test_dihedral(x, 1, 2, 3, 4), c2, scale);
}

/* ---- impropers on a star: centre 0, substituents 1, 2, 3 ---------------------------------- */
static double energy_periodic_improper(const double *x, const double *p, double *scale) {
    const double e0 = p[0] * (1 + cos(2 * test_dihedral(x, 1, 2, 0, 3) - p[1]));
    const double e1 = p[2] * (1 + cos(3 * test_dihedral(x, 3, 1, 0, 2) - p[3]));
    *scale = fabs(e0) + fabs(e1);
    return e0 + e1;
}
static int geometry_star(int k, Geometry *g) {
    const double r[4] = {0, 0.1012, 0.1093, 0.1229};
    g->dlen = 0.0;
    if (k < NRANDOM) {
        double rr[4] = {0, test_uniform(0.09, 0.15), test_uniform(0.09, 0.15), test_uniform(0.09, 0.15)};
        test_star(g->pos, rr, test_uniform(95, 135) * DEG, test_uniform(95, 135) * DEG, test_uniform(-PI, PI));
        test_random_pose(g->pos, 4);
        snprintf(g->label, sizeof g->label, "random %d", k);
        return 1;
    }
    switch (k - NRANDOM) {
    case 0:
        test_star(g->pos, r, 120 * DEG, 120 * DEG, PI);
        snprintf(g->label, sizeof g->label, "planar trigonal (180)");
        break;
    case 1:
        test_star(g->pos, r, 120 * DEG, 60 * DEG, 0.0);
        snprintf(g->label, sizeof g->label, "planar (0)");
        break;
    case 2:
        test_star(g->pos, r, 118 * DEG, 121 * DEG, 179.0 * DEG);
        test_random_pose(g->pos, 4);
        snprintf(g->label, sizeof g->label, "near planar (179)");
        break;
    default:
        return 0;
    }
    return 1;
}

static double energy_harmonic_improper(const double *x, const double *p, double *scale) {
    const double d0 = test_wrap_pi(test_dihedral(x, 1, 2, 0, 3) - p[1]), d1 = test_wrap_pi(test_dihedral(x, 3, 1, 0, 2) - p[3]);
    *scale = p[0] * d0 * d0 + p[2] * d1 * d1;
    return *scale;
}
static int harmonic_improper_wraps = 0; /* geometries where |phi - phi0| > pi for some improper */
static int geometry_harmonic_improper(int k, Geometry *g) {
    const double r[4] = {0, 0.1012, 0.1093, 0.1229};
    const double *phi0 = harmonic_improper_phi0;
    g->dlen = 0.0;
    if (k < NRANDOM) {
        /* random stars, rejecting those within 0.1 rad of the wrap point |phi - phi0| = pi, where
         * E has a kink and the finite differences are meaningless */
        for (;;) {
            double rr[4] = {0, test_uniform(0.09, 0.15), test_uniform(0.09, 0.15), test_uniform(0.09, 0.15)};
            test_star(g->pos, rr, test_uniform(95, 135) * DEG, test_uniform(95, 135) * DEG, test_uniform(-PI, PI));
            const double d0 = test_wrap_pi(test_dihedral(g->pos, 1, 2, 0, 3) - phi0[0]);
            const double d1 = test_wrap_pi(test_dihedral(g->pos, 3, 1, 0, 2) - phi0[1]);
            if (fabs(d0) < PI - 0.1 && fabs(d1) < PI - 0.1)
                break;
        }
        snprintf(g->label, sizeof g->label, "random %d", k);
    } else {
        switch (k - NRANDOM) {
        case 0:
            test_star(g->pos, r, 120 * DEG, 120 * DEG, -3.1);
            snprintf(g->label, sizeof g->label, "phi = -3.1 (phi0 = 3.05)");
            break;
        case 1:
            test_star(g->pos, r, 120 * DEG, 120 * DEG, 3.1);
            snprintf(g->label, sizeof g->label, "phi = 3.1");
            break;
        case 2:
            test_star(g->pos, r, 120 * DEG, 120 * DEG, PI);
            snprintf(g->label, sizeof g->label, "planar, phi = +-pi exactly");
            break;
        case 3:
            test_star(g->pos, r, 112 * DEG, 125 * DEG, -2.9);
            snprintf(g->label, sizeof g->label, "phi = -2.9");
            break;
        default:
            return 0;
        }
    }
    const double phis[2] = {test_dihedral(g->pos, 1, 2, 0, 3), test_dihedral(g->pos, 3, 1, 0, 2)};
    for (int t = 0; t < 2; t++) {
        CHECK(fabs(test_wrap_pi(phis[t] - phi0[t])) < PI - 0.05, "geometry %s is at the wrap point of improper %d", g->label, t);
        if (fabs(phis[t] - phi0[t]) > PI)
            harmonic_improper_wraps++;
    }
    if (k < NRANDOM || k - NRANDOM == 3)
        test_random_pose(g->pos, 4);
    return 1;
}

/* ---- nonbonded ------------------------------------------------------------------------------ */
/* Particle types (slots): A = (0 qA, 1 sA, 2 eA), B = (3 qB, 4 sB, 5 eB), 6 qC.
 * Particles: 0 A, 1 B, 2 A, 3 (qC, sB, no epsilon), 4 (no charge, sA, eB). */

static double pslot(const double *p, int s) { return s == HESSFIT_NO_SLOT ? 0.0 : p[s]; }

/* combined LJ + Coulomb of particles i, j with the given scales */
static double nb_pair(const double *x, const double *p, int i, int j, double sc, double slj, int rule, double *scale) {
    const double qi = pslot(p, nb_particles[i][0]), qj = pslot(p, nb_particles[j][0]);
    const double si = pslot(p, nb_particles[i][1]), sj = pslot(p, nb_particles[j][1]);
    const double ei = pslot(p, nb_particles[i][2]), ej = pslot(p, nb_particles[j][2]);
    const double sigma = rule == HESSFIT_COMBINE_GEOMETRIC ? sqrt(si * sj) : 0.5 * (si + sj);
    const double r = test_distance(x, i, j);
    const double ec = sc * COULOMB * qi * qj / r, el = slj * lj(sigma, sqrt(ei * ej), r);
    *scale += fabs(ec) + fabs(el);
    return ec + el;
}

static double energy_nb(const double *x, const double *p, double *scale) {
    double e = 0.0;
    *scale = 0.0;
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            e += nb_pair(x, p, i, j, 1.0, 1.0, nb_combining, scale);
    return e;
}
/* nonbonded-scale chains: every pair at least 0.25 nm apart (LJ's (h/r)^2 terms stay ~1e-7) */
static int geometry_nb(int k, Geometry *g) {
    if (k >= NRANDOM + 1)
        return 0;
    g->dlen = 0.0;
    if (k < NRANDOM) {
        do
            test_random_chain(g->pos, 5, 0.28, 0.42);
        while (test_min_pair_distance(g->pos, 5) < 0.25);
        test_random_pose(g->pos, 5);
        snprintf(g->label, sizeof g->label, "random %d", k);
    } else { /* the pair 1-2 (types B, A) at its LJ minimum 2^(1/6) sigma_AB */
        const double s12 = nb_combining == HESSFIT_COMBINE_GEOMETRIC ? sqrt(0.325 * 0.29) : 0.5 * (0.325 + 0.29);
        const double r[5] = {0, 0.33, pow(2.0, 1.0 / 6.0) * s12, 0.35, 0.31};
        const double th[5] = {0, 0, 120 * DEG, 150 * DEG, 100 * DEG}, ph[5] = {0, 0, 0, 2.5, -1.0};
        test_chain(g->pos, 5, r, th, ph);
        test_random_pose(g->pos, 5);
        CHECK(test_min_pair_distance(g->pos, 5) >= 0.25, "LJ-minimum geometry has a pair closer than 0.25 nm");
        snprintf(g->label, sizeof g->label, "pair 1-2 at its LJ minimum");
    }
    return 1;
}

/* 1-4 pairs: 5-chain, every 1-2 and 1-3 pair and (0,4) excluded, 1-4 pairs (0,3) and (1,4),
 * coulomb14Scale 0.75, lj14Scale 0.3, Lorentz-Berthelot. */
static double energy_14(const double *x, const double *p, double *scale) {
    *scale = 0.0;
    return nb_pair(x, p, 0, 3, PAIR14_COULOMB_SCALE, PAIR14_LJ_SCALE, HESSFIT_COMBINE_LORENTZ_BERTHELOT, scale) +
           nb_pair(x, p, 1, 4, PAIR14_COULOMB_SCALE, PAIR14_LJ_SCALE, HESSFIT_COMBINE_LORENTZ_BERTHELOT, scale);
}

static double explicit_pair(const double *x, int i, int j, double qq, double sigma, double eps, double *scale) {
    const double r = test_distance(x, i, j), ec = COULOMB * qq / r, el = lj(sigma, eps, r);
    *scale += fabs(ec) + fabs(el);
    return ec + el;
}
static double energy_explicit(const double *x, const double *p, double *scale) {
    *scale = 0.0;
    return explicit_pair(x, 0, 2, p[7], p[8], p[9], scale) + explicit_pair(x, 3, 1, p[10], p[8], p[11], scale) +
           explicit_pair(x, 0, 3, 0.0, p[12], p[9], scale) + explicit_pair(x, 2, 4, p[7], 0.0, 0.0, scale);
}

/* MM3* pairs: random geometries with a pair inside 0.6 nm, one in the switch, one beyond 0.8 nm */
static int geometry_mm3_pair(int k, Geometry *g) {
    if (k >= NRANDOM)
        return 0;
    g->dlen = 0.0;
    mm3_pair_positions(g->pos);
    snprintf(g->label, sizeof g->label, "random %d", k);
    return 1;
}

/* MM3* switched pairs: random geometries with switch distances in every band */
static int geometry_mm3_switched_pair(int k, Geometry *g) {
    if (k >= NRANDOM)
        return 0;
    g->dlen = 0.0;
    mm3_switched_pair_positions(g->pos);
    snprintf(g->label, sizeof g->label, "random %d", k);
    return 1;
}

/* 10-12 hydrogen bonds: random geometries with every bond at 0.14-0.4 nm */
static int geometry_hbond(int k, Geometry *g) {
    if (k >= NRANDOM)
        return 0;
    g->dlen = 0.0;
    hbond_positions(g->pos);
    snprintf(g->label, sizeof g->label, "random %d", k);
    return 1;
}

/* MM3* bend-bend: random stars of 5 */
static int geometry_star5(int k, Geometry *g) {
    if (k >= NRANDOM)
        return 0;
    g->dlen = 0.0;
    mm3_star5_positions(g->pos);
    snprintf(g->label, sizeof g->label, "random %d", k);
    return 1;
}

/* ---- running one case ------------------------------------------------------------------------ */

static void run_case(const TermCase *c) {
    Stats st;
    memset(&st, 0, sizeof st);
    st.name = c->name;
    Geometry g;
    memset(&g, 0, sizeof g);
    CHECK(c->geometry(0, &g), "case %s has no geometry", c->name);
    Setup s;
    setup_create(&s, c->n, c->build, g.pos);
    for (int k = 0; k == 0 || c->geometry(k, &g); k++)
        check_geometry(&s, g.pos, g.dlen, c->energy, &st, g.label);
    setup_destroy(&s);
    print_stats(&st);
}

/* ======================================================================================== */
/* Two molecules in one System                                                               */
/* ======================================================================================== */

/* the fixture of two_molecules.h */
static void run_two_molecules(void) {
    Stats st;
    memset(&st, 0, sizeof st);
    st.name = "two molecules";
    double pa[3 * NA], pb[3 * NB], pab[3 * (NA + NB)], pbalone[3 * NB];
    two_mol_random_positions(pa, pb);
    /* move B so that its nearest atom is 0.3 nm from A: cross-molecule Coulomb would be tens of kJ/mol */
    double ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
    for (int i = 0; i < NA; i++)
        for (int c = 0; c < 3; c++)
            ca[c] += pa[3 * i + c] / NA;
    for (int i = 0; i < NB; i++)
        for (int c = 0; c < 3; c++)
            cb[c] += pb[3 * i + c] / NB;
    const double dir[3] = {0.6, -0.48, 0.64};
    for (double L = 0.0;; L += 0.005) {
        double dmin = 1e300;
        for (int j = 0; j < NB; j++) {
            double y[3];
            for (int c = 0; c < 3; c++)
                y[c] = pb[3 * j + c] - cb[c] + ca[c] + L * dir[c];
            for (int i = 0; i < NA; i++) {
                double d[3];
                sub3(y, pa + 3 * i, d);
                dmin = fmin(dmin, norm3(d));
            }
        }
        if (dmin >= 0.3) {
            for (int j = 0; j < NB; j++)
                for (int c = 0; c < 3; c++)
                    pb[3 * j + c] += -cb[c] + ca[c] + L * dir[c];
            break;
        }
    }
    two_mol_system_positions(pa, pb, pab, pbalone);

    Setup sab, sa, sb;
    setup_create(&sab, NA + NB, two_mol_build_pair, pab);
    setup_create(&sa, NA, two_mol_build_a_alone, pa);
    setup_create(&sb, NB, two_mol_build_b_alone, pbalone);

    /* layout */
    int nmol = 0, cnt = 0, list[MAXN];
    long long size = 0, off0 = -1, off1 = -1;
    HF_OK(hessfit_force_get_num_molecules(sab.force, &nmol));
    CHECK(nmol == 2, "%d molecules", nmol);
    HF_OK(hessfit_force_get_hessian_size(sab.force, &size));
    HF_OK(hessfit_force_get_hessian_block_offset(sab.force, 0, &off0));
    HF_OK(hessfit_force_get_hessian_block_offset(sab.force, 1, &off1));
    CHECK(off0 == 0 && off1 == 9LL * NA * NA && size == 9LL * (NA * NA + NB * NB),
          "offsets %lld, %lld, size %lld; expected 0, %d, %d", off0, off1, size, 9 * NA * NA, 9 * (NA * NA + NB * NB));
    HF_OK(hessfit_force_get_molecule_particles(sab.force, 1, list, MAXN, &cnt));
    CHECK(cnt == NB, "molecule 1 has %d particles", cnt);
    for (int i = 0; i < NB; i++)
        CHECK(list[i] == NA + b_perm[b_list[i]], "molecule 1 particle %d is %d, expected %d", i, list[i],
              NA + b_perm[b_list[i]]);

    /* blocks: A's and B's blocks equal those of the molecules alone */
    double *blocks = malloc((size_t) size * sizeof(double));
    double ha[9 * NA * NA], hb[9 * NB * NB];
    HF_OK(hessfit_force_get_hessian_blocks(sab.force, sab.context, blocks, size));
    HF_OK(hessfit_force_get_hessian_blocks(sa.force, sa.context, ha, 9 * NA * NA));
    HF_OK(hessfit_force_get_hessian_blocks(sb.force, sb.context, hb, 9 * NB * NB));
    const double ea = test_max_abs_diff(blocks, ha, 9 * NA * NA) / test_max_abs(ha, 9 * NA * NA);
    const double eb = test_max_abs_diff(blocks + off1, hb, 9 * NB * NB) / test_max_abs(hb, 9 * NB * NB);
    SOFT_CHECK(ea <= 1e-12, "molecule A's block differs from A alone by %.2e relative", ea);
    SOFT_CHECK(eb <= 1e-12, "molecule B's block differs from B alone by %.2e relative", eb);
    free(blocks);

    /* energy, forces, dE/dslot: sums of the separate molecules */
    double fab[3 * (NA + NB)], fa[3 * NA], fb[3 * NB], dab[NUM_S], da[NUM_S], db[NUM_S];
    const double eab = energy_forces(&sab, pab, fab), e_a = energy_forces(&sa, pa, fa), e_b = energy_forces(&sb, pbalone, fb);
    HF_OK(hessfit_force_get_parameter_derivatives(sab.force, sab.context, dab, NUM_S));
    HF_OK(hessfit_force_get_parameter_derivatives(sa.force, sa.context, da, NUM_S));
    HF_OK(hessfit_force_get_parameter_derivatives(sb.force, sb.context, db, NUM_S));
    const double escale = fabs(e_a) + fabs(e_b);
    const double eerr = fabs(eab - (e_a + e_b)) / escale;
    SOFT_CHECK(eerr <= 1e-12, "E(A+B) = %.17g but E(A) + E(B) = %.17g (rel %.2e): interactions cross molecules?", eab,
               e_a + e_b, eerr);
    double ferr = 0.0, fscale = fmax(test_max_abs(fa, 3 * NA), test_max_abs(fb, 3 * NB)), derr = 0.0, dscale = 0.0;
    for (int i = 0; i < 3 * NA; i++)
        ferr = fmax(ferr, fabs(fab[i] - fa[i]));
    for (int i = 0; i < NB; i++)
        for (int c = 0; c < 3; c++)
            ferr = fmax(ferr, fabs(fab[3 * (NA + b_perm[b_list[i]]) + c] - fb[3 * i + c]));
    for (int k = 0; k < NUM_S; k++) {
        derr = fmax(derr, fabs(dab[k] - da[k] - db[k]));
        dscale = fmax(dscale, fabs(da[k]) + fabs(db[k]));
    }
    ferr /= fscale;
    derr /= dscale;
    SOFT_CHECK(ferr <= 1e-12, "forces of A+B differ from those of A and B alone by %.2e relative", ferr);
    SOFT_CHECK(derr <= 1e-12, "dE/dslot of A+B differs from the sum over A and B alone by %.2e relative", derr);

    /* moving an atom of A does not change the forces on B */
    double moved[3 * (NA + NB)], fmoved[3 * (NA + NB)], cross = 0.0;
    memcpy(moved, pab, sizeof pab);
    moved[3 * 2] += 0.05;
    moved[3 * 2 + 1] -= 0.03;
    energy_forces(&sab, moved, fmoved);
    for (int i = 3 * NA; i < 3 * (NA + NB); i++)
        cross = fmax(cross, fabs(fmoved[i] - fab[i]));
    cross /= fscale;
    SOFT_CHECK(cross <= 1e-14, "moving an atom of A changed the forces on B by %.2e relative", cross);
    printf("%-26s blocks: A %.1e B %.1e | sums: E %.1e F %.1e dEdp %.1e | cross-molecule force change %.1e\n",
           "two molecules (layout)", ea, eb, eerr, ferr, derr, cross);

    /* and the generic checks on the combined System (the Hessian assembled from the blocks) */
    check_geometry(&sab, pab, 0.0, NULL, &st, "A + B");
    print_stats(&st);
    setup_destroy(&sab);
    setup_destroy(&sa);
    setup_destroy(&sb);
}

int main(int argc, char **argv) {
    platform_name = test_platform_name(argc, argv);
    printf("test_terms on platform %s\n", platform_name);
    test_seed(20240611ULL);
    static const TermCase cases[] = {
        {"bond", 4, build_bond, energy_bond, geometry_bond},
        {"Urey-Bradley", 4, build_ub, energy_ub, geometry_ub},
        {"angle", 5, build_angle, energy_angle, geometry_angle},
        {"MM3* bond", 4, build_mm3_bond, energy_mm3_bond, geometry_bond},
        {"MM3* angle", 5, build_mm3_angle, energy_mm3_angle, geometry_angle},
        {"MM3* bond, scaled", 4, build_mm3_bond_scaled, mm3_bonds_scaled_energy, geometry_bond},
        {"MM3* stretch-bend", 5, build_mm3_stretch_bend, mm3_stretch_bends_energy, geometry_angle},
        {"MM3* bend-bend", 5, build_mm3_bend_bend, mm3_bend_bends_energy, geometry_star5},
        {"MM3* torsion-stretch", 5, build_mm3_torsion_stretch, mm3_torsion_stretches_energy, torsion_geometry},
        {"periodic torsion n=1,2,3", 5, build_periodic, energy_periodic, torsion_geometry},
        {"OPLS torsion", 5, build_opls, energy_opls, torsion_geometry},
        {"RB torsion", 5, build_rb, energy_rb, torsion_geometry},
        {"periodic improper", 4, build_periodic_improper, energy_periodic_improper, geometry_star},
        {"harmonic improper", 4, build_harmonic_improper, energy_harmonic_improper, geometry_harmonic_improper},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    CHECK(harmonic_improper_wraps >= 2, "only %d harmonic-improper geometries exercised the wrap", harmonic_improper_wraps);

    nb_combining = HESSFIT_COMBINE_GEOMETRIC;
    const TermCase nb_geometric = {"LJ+Coulomb geometric", 5, build_nb, energy_nb, geometry_nb};
    run_case(&nb_geometric);
    nb_combining = HESSFIT_COMBINE_LORENTZ_BERTHELOT;
    const TermCase nb_lb = {"LJ+Coulomb Lorentz-Berth.", 5, build_nb, energy_nb, geometry_nb};
    run_case(&nb_lb);
    const TermCase pairs14 = {"1-4 pairs (0.75/0.3, LB)", 5, build_14, energy_14, geometry_nb};
    run_case(&pairs14);
    nb_combining = HESSFIT_COMBINE_GEOMETRIC;
    const TermCase explicit_pairs = {"explicit pairs", 5, build_explicit, energy_explicit, geometry_nb};
    run_case(&explicit_pairs);
    const TermCase mm3_pairs = {"MM3* pairs", 5, build_mm3_pair, mm3_pairs_energy, geometry_mm3_pair};
    run_case(&mm3_pairs);
    const TermCase switched = {"MM3* switched pairs", 6, build_mm3_switched_pair, mm3_switched_pairs_energy,
                               geometry_mm3_switched_pair};
    run_case(&switched);
    const TermCase hbond = {"10-12 hydrogen bonds", 4, build_hbond, hbonds_energy, geometry_hbond};
    run_case(&hbond);

    run_two_molecules();

    return test_soft_finish("test_terms");
}
