/*
 * test_adjoint (per platform): the adjoint contractions of HessianForce through the C API,
 *     c_s(G) = tr(G^T dH/dp_s)      hessfit_force_get_hessian_contraction_derivatives
 *     d_s(y) = y . d(grad E)/dp_s   hessfit_force_get_gradient_contraction_derivatives,
 * for every term kind alone in a small molecule (bonds, Urey-Bradley, angles, periodic / OPLS / RB
 * torsions, periodic and harmonic impropers, plain LJ + Coulomb pairs with both combining rules,
 * exclusions with scaled 1-4 pairs, explicit pairs, MM3* pairs, MM3* bonds with distance scales,
 * stretch-bends, bend-bends (5 distinct particles or sharing an outer one), torsion-stretches), slots shared by several terms, on
 * random and near-degenerate geometries, and on a System of two molecules.
 *
 * For each geometry, with G random symmetric (entries in [-1, 1], block layout) and y random:
 *  (a) c_s(G) = central differences over the slot value of sum_ij G_ij H_ij, the analytic Hessian
 *      blocks at p_s +- dp (set_parameters + update_parameters_in_context), dp = 1e-6 |p_s|;
 *  (b) d_s(y) = -y . (F(p_s + dp) - F(p_s - dp)) / (2 dp), the analytic forces;
 *  (c) linearity: c(a G1 + b G2) = a c(G1) + b c(G2);
 *  (d) G = e_i e_j^T (not symmetric) for every entry (i, j) of every block gives dH_ij/dp_s: equal
 *      to the central difference of H_ij, the same for e_j e_i^T (dH/dp is symmetric), and
 *      sum_ij G_ij c(e_i e_j^T) = c(G) (the entries rebuild the whole contraction).
 * Tolerances: (a), (b), (d) 1e-7 relative to the scale of slot s's values: the larger of |c_s| and
 * the magnitude the difference quotient works with, sum |G_ij H_ij| / |p_s| (sum |y_i F_i| / |p_s|;
 * max |H| / |p_s| for single entries), floored at 1e-6 of the largest slot's scale. The central
 * difference has truncation error ~ (dp/p)^2 = 1e-12 relative and rounding eps / 1e-6 ~ 2e-10 of
 * that magnitude. (c) and the symmetry in (d) are pure rounding: 1e-12.
 * GPU platforms accumulate forces in fixed point (2^-32 kJ/mol/nm per component, as OpenMM's own
 * forces), so (b) there also allows sum |y_i| 2^-32 / step of force rounding, and the geometry with
 * forces beyond the fixed-point range (2^31 kJ/mol/nm, the pair at 0.08 nm) is Reference-only.
 *
 * Two molecules (bonds, angles, a periodic and an OPLS torsion, 1-4 pairs and plain pairs in A; a
 * star with a Urey-Bradley term and a harmonic improper in B; one shared table, B's particles
 * permuted): (a)-(d) on the pair; G with only A's block (or only B's) gives exactly the
 * contraction of A alone (B alone) in its own System, slots only the other molecule uses get
 * exactly 0; the same for y on one molecule's particles.
 *
 * A molecule of 40 atoms (plus one of 3) with plain pairs, exclusions, 1-4 pairs and bonds,
 * listed in a permuted order: (a)-(c) (the kernel's plain-pair loop runs in tiles of 32 atoms).
 *
 * Errors: wrong sizes of G, y and the output, NULL arrays, NaN / infinite entries of G or y (the
 * message names the entry), a force not in the Context, and undefined geometry (collinear dihedral
 * atoms, coincident nonbonded particles) giving HESSFIT_ERROR_GEOMETRY with the very message of
 * hessfit_force_get_hessian_blocks.
 */
#include "test_util.h"
#include "term_cases.h"
#include "two_molecules.h"
#include <string.h>

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)
#define MAXN 10
#define MAXDIM (3 * MAXN)
#define MAXSLOTS 40
#define MAXH (2 * 9 * 5 * 5) /* the Hessian size of the small Systems here (up to two 5-atom molecules) */
#define NRANDOM 3

static const char *platform_name = "Reference";
/* Forces come back in OpenMM's fixed point (every platform but Reference). */
static int fixed_point_forces(void) { return strcmp(platform_name, "Reference") != 0; }

/* ======================================================================================== */
/* Systems                                                                                   */
/* ======================================================================================== */

typedef struct {
    OpenMM_System *system;
    hessfit_force *force;
    OpenMM_Context *context;
    OpenMM_Integrator *integrator;
    int n, nslots, nmol;
    long long hsize;
    long long offset[3]; /* block offsets, molecule by molecule, and the total */
} Setup;

typedef void (*build_fn)(hessfit_force *force);

static void setup_create(Setup *s, int n, build_fn build, const double *pos) {
    s->n = n;
    s->system = OpenMM_System_create();
    for (int i = 0; i < n; i++)
        OpenMM_System_addParticle(s->system, i % 2 ? 1.008 : 12.011);
    HF_OK(hessfit_force_create(&s->force));
    build(s->force);
    HF_OK(hessfit_force_get_num_parameters(s->force, &s->nslots));
    CHECK(s->nslots <= MAXSLOTS, "too many slots");
    HF_OK(hessfit_force_get_num_molecules(s->force, &s->nmol));
    CHECK(s->nmol <= 2, "too many molecules");
    HF_OK(hessfit_force_get_hessian_size(s->force, &s->hsize));
    for (int m = 0; m <= s->nmol; m++)
        HF_OK(hessfit_force_get_hessian_block_offset(s->force, m, &s->offset[m]));
    CHECK(s->offset[s->nmol] == s->hsize, "block offsets do not end at the Hessian size");
    HF_OK(hessfit_force_add_to_system(s->force, s->system, NULL));
    s->context = test_create_context(s->system, platform_name, pos, n, 0.001, &s->integrator);
}

static void setup_destroy(Setup *s) {
    OpenMM_Context_destroy(s->context);
    OpenMM_Integrator_destroy(s->integrator);
    hessfit_force_destroy(s->force);
    OpenMM_System_destroy(s->system);
}

static int block_dim(const Setup *s, int m) {
    return (int) llround(sqrt((double) (s->offset[m + 1] - s->offset[m])));
}

static void set_table(Setup *s, const double *table) {
    HF_OK(hessfit_force_set_parameters(s->force, table, s->nslots));
    HF_OK(hessfit_force_update_parameters_in_context(s->force, s->context));
}

static void hessian_blocks(Setup *s, double *blocks) {
    HF_OK(hessfit_force_get_hessian_blocks(s->force, s->context, blocks, s->hsize));
}

static void forces(Setup *s, double *f) {
    double e = 0.0;
    HF_OK(hessfit_force_get_energy_forces(s->force, s->context, &e, f));
}

static void contract_hessian(Setup *s, const double *G, double *out) {
    HF_OK(hessfit_force_get_hessian_contraction_derivatives(s->force, s->context, G, s->hsize, out, s->nslots));
}

static void contract_gradient(Setup *s, const double *y, double *out) {
    HF_OK(hessfit_force_get_gradient_contraction_derivatives(s->force, s->context, y, 3 * s->n, out, s->nslots));
}

/* A random symmetric G in the block layout, entries in [-1, 1]. */
static void random_adjoint(const Setup *s, double *G) {
    for (int m = 0; m < s->nmol; m++) {
        const int d = block_dim(s, m);
        double *b = G + s->offset[m];
        for (int i = 0; i < d; i++)
            for (int j = i; j < d; j++)
                b[i * d + j] = b[j * d + i] = test_uniform(-1.0, 1.0);
    }
}

/* ======================================================================================== */
/* The checks of one geometry                                                                */
/* ======================================================================================== */

typedef struct {
    const char *name;
    int geometries;
    double hess_fd, grad_fd, linear, entry_fd, entry_sym, rebuild;
} Stats;

static void note(double *slot, double v) {
    if (v > *slot)
        *slot = v;
}

/* scale[k] = max(own[k], floor) with floor = 1e-6 max_k own[k] (see the header) */
static void floor_scales(double *scale, int n) {
    double top = 0.0;
    for (int k = 0; k < n; k++)
        top = fmax(top, scale[k]);
    for (int k = 0; k < n; k++)
        scale[k] = fmax(fmax(scale[k], 1e-6 * top), 1e-300);
}

static void check_entries(Setup *s, const double *G, const double *c, const double *dH, const double *hscale,
                          const double *pscale, double hmax, Stats *st, const char *label);

static double *alloc_doubles(long long n) {
    double *p = calloc((size_t) n, sizeof(double));
    CHECK(p != NULL, "out of memory (%lld doubles)", n);
    return p;
}

/* (a)-(c), and (d) when entries is set (it costs 2 (3n)^2 contractions) */
static void check_geometry(Setup *s, const double *pos, Stats *st, const char *label, int entries) {
    const int n = s->n, dim = 3 * n, ns = s->nslots;
    const long long hs = s->hsize;
    double *H0 = alloc_doubles(hs), *G = alloc_doubles(hs), *G2 = alloc_doubles(hs), *Gmix = alloc_doubles(hs);
    double *Hp = alloc_doubles(hs), *Hm = alloc_doubles(hs), *dH = alloc_doubles(entries ? ns * hs : 1);
    double *F0 = alloc_doubles(dim), *Fp = alloc_doubles(dim), *Fm = alloc_doubles(dim), *y = alloc_doubles(dim);
    double table[MAXSLOTS], tp[MAXSLOTS];
    double c[MAXSLOTS], d[MAXSLOTS], c2[MAXSLOTS], cmix[MAXSLOTS];
    double hscale[MAXSLOTS], gscale[MAXSLOTS], pscale[MAXSLOTS];
    st->geometries++;
    test_set_positions(s->context, pos, n);
    HF_OK(hessfit_force_get_parameters(s->force, table, ns));
    hessian_blocks(s, H0);
    forces(s, F0);
    random_adjoint(s, G);
    for (int i = 0; i < dim; i++)
        y[i] = test_uniform(-1.0, 1.0);
    contract_hessian(s, G, c);
    contract_gradient(s, y, d);

    /* (a), (b): central differences over every slot of sum G_ij H_ij and of -y . F */
    double sum_gh = 0.0, sum_yf = 0.0, sum_y = 0.0;
    for (long long i = 0; i < hs; i++)
        sum_gh += fabs(G[i] * H0[i]);
    for (int i = 0; i < dim; i++) {
        sum_yf += fabs(y[i] * F0[i]);
        sum_y += fabs(y[i]);
    }
    double fd_c[MAXSLOTS], fd_d[MAXSLOTS], force_rounding[MAXSLOTS];
    memcpy(tp, table, sizeof(double) * ns);
    for (int k = 0; k < ns; k++) {
        pscale[k] = table[k] != 0.0 ? fabs(table[k]) : 1.0;
        const double dp = 1e-6 * pscale[k];
        tp[k] = table[k] + dp;
        const double pp = tp[k];
        set_table(s, tp);
        hessian_blocks(s, Hp);
        forces(s, Fp);
        tp[k] = table[k] - dp;
        const double pm = tp[k];
        set_table(s, tp);
        hessian_blocks(s, Hm);
        forces(s, Fm);
        tp[k] = table[k];
        const double step = pp - pm; /* the step actually taken */
        fd_c[k] = fd_d[k] = 0.0;
        for (long long i = 0; i < hs; i++) {
            const double dh = (Hp[i] - Hm[i]) / step;
            if (entries)
                dH[k * hs + i] = dh;
            fd_c[k] += G[i] * dh;
        }
        for (int i = 0; i < dim; i++)
            fd_d[k] -= y[i] * (Fp[i] - Fm[i]) / step;
        force_rounding[k] = fixed_point_forces() ? sum_y * ldexp(1.0, -32) / step : 0.0;
        hscale[k] = fmax(fabs(c[k]), sum_gh / pscale[k]);
        gscale[k] = fmax(fabs(d[k]), sum_yf / pscale[k]);
    }
    set_table(s, table);
    floor_scales(hscale, ns);
    floor_scales(gscale, ns);
    double herr = 0.0, gerr = 0.0;
    for (int k = 0; k < ns; k++) {
        const double eh = fabs(c[k] - fd_c[k]) / hscale[k];
        const double eg = fmax(0.0, fabs(d[k] - fd_d[k]) - force_rounding[k]) / gscale[k];
        herr = fmax(herr, eh);
        gerr = fmax(gerr, eg);
        SOFT_CHECK(eh <= 1e-7, "%s [%s]: tr(G dH/dp_%d) = %.15g, central difference %.15g (rel %.2e)", st->name, label,
                   k, c[k], fd_c[k], eh);
        SOFT_CHECK(eg <= 1e-7, "%s [%s]: y . dgradE/dp_%d = %.15g, central difference %.15g (rel %.2e)", st->name,
                   label, k, d[k], fd_d[k], eg);
    }
    note(&st->hess_fd, herr);
    note(&st->grad_fd, gerr);

    /* (c) linearity in G */
    const double a = 0.7, b = -1.3;
    random_adjoint(s, G2);
    for (long long i = 0; i < hs; i++)
        Gmix[i] = a * G[i] + b * G2[i];
    contract_hessian(s, G2, c2);
    contract_hessian(s, Gmix, cmix);
    double lerr = 0.0;
    for (int k = 0; k < ns; k++)
        lerr = fmax(lerr, fabs(cmix[k] - (a * c[k] + b * c2[k])) / (hscale[k] * (fabs(a) + fabs(b))));
    note(&st->linear, lerr);
    SOFT_CHECK(lerr <= 1e-12, "%s [%s]: c(a G1 + b G2) differs from a c(G1) + b c(G2) by %.2e relative", st->name,
               label, lerr);

    if (entries)
        check_entries(s, G, c, dH, hscale, pscale, test_max_abs(H0, (size_t) hs), st, label);
    free(H0), free(G), free(G2), free(Gmix), free(Hp), free(Hm), free(dH), free(F0), free(Fp), free(Fm), free(y);
}

/* (d): c(e_i e_j^T) for every entry of every block against dH (the central differences, slot by
 * slot, ns x hs), its transpose, and the contraction c(G) rebuilt from the entries. */
static void check_entries(Setup *s, const double *G, const double *c, const double *dH, const double *hscale,
                          const double *pscale, double hmax, Stats *st, const char *label) {
    const int ns = s->nslots;
    const long long hs = s->hsize;
    double *E = alloc_doubles(hs), *centry = alloc_doubles(ns * hs), ce[MAXSLOTS], cet[MAXSLOTS], escale[MAXSLOTS];
    double serr = 0.0;
    for (int m = 0; m < s->nmol; m++) {
        const int bd = block_dim(s, m);
        const long long off = s->offset[m];
        for (int i = 0; i < bd; i++)
            for (int j = 0; j < bd; j++) {
                E[off + (long long) i * bd + j] = 1.0;
                contract_hessian(s, E, ce);
                E[off + (long long) i * bd + j] = 0.0;
                E[off + (long long) j * bd + i] = 1.0;
                contract_hessian(s, E, cet);
                E[off + (long long) j * bd + i] = 0.0;
                for (int k = 0; k < ns; k++) {
                    centry[k * hs + off + (long long) i * bd + j] = ce[k];
                    serr = fmax(serr, fabs(ce[k] - cet[k]) / fmax(fmax(fabs(ce[k]), hmax / pscale[k]), 1e-300));
                }
            }
    }
    double eerr = 0.0, rerr = 0.0;
    for (int k = 0; k < ns; k++) {
        escale[k] = fmax(test_max_abs(centry + k * hs, (size_t) hs), hmax / pscale[k]);
        double rebuilt = 0.0;
        for (long long i = 0; i < hs; i++) {
            const double e = fabs(centry[k * hs + i] - dH[k * hs + i]) / fmax(escale[k], 1e-300);
            eerr = fmax(eerr, e);
            rebuilt += G[i] * centry[k * hs + i];
        }
        rerr = fmax(rerr, fabs(rebuilt - c[k]) / hscale[k]);
    }
    note(&st->entry_fd, eerr);
    note(&st->entry_sym, serr);
    note(&st->rebuild, rerr);
    SOFT_CHECK(eerr <= 1e-7, "%s [%s]: c(e_i e_j^T) vs central differences of H_ij: %.2e relative", st->name, label,
               eerr);
    SOFT_CHECK(serr <= 1e-12, "%s [%s]: c(e_i e_j^T) != c(e_j e_i^T): %.2e relative", st->name, label, serr);
    SOFT_CHECK(rerr <= 1e-12, "%s [%s]: sum G_ij c(e_i e_j^T) != c(G): %.2e relative", st->name, label, rerr);
    free(E), free(centry);
}

static void print_stats(const Stats *st) {
    printf("%-28s %2d geoms | tr(G dH/dp)-fd %.1e  y.dgradE/dp-fd %.1e | linear %.1e", st->name, st->geometries,
           st->hess_fd, st->grad_fd, st->linear);
    if (st->entry_fd > 0.0)
        printf(" | e_i e_j^T: fd %.1e sym %.1e rebuild %.1e", st->entry_fd, st->entry_sym, st->rebuild);
    printf("\n");
    fflush(stdout);
}

/* ======================================================================================== */
/* The term cases                                                                            */
/* ======================================================================================== */

/* geometry k of a case into pos (label set); returns 0 when there are no more */
typedef int (*geometry_fn)(int k, double *pos, char *label, size_t len);

typedef struct {
    const char *name;
    int n;
    build_fn build;
    geometry_fn geometry;
} TermCase;

/* bonded chains: NRANDOM random ones, then the case's specials */
static int random_bonded(int k, int n, double *pos, char *label, size_t len) {
    test_random_chain(pos, n, 0.09, 0.16);
    test_random_pose(pos, n);
    snprintf(label, len, "random %d", k);
    return 1;
}

static int geometry_bond(int k, double *pos, char *label, size_t len) {
    if (k < NRANDOM)
        return random_bonded(k, 4, pos, label, len);
    double r[4] = {0, 0.109, 0.1529, 0.109}, th[4] = {0, 0, 112 * DEG, 108 * DEG}, ph[4] = {0, 0, 0, 1.0};
    switch (k - NRANDOM) {
    case 0: snprintf(label, len, "all bonds at r0"); break;
    case 1: r[1] = 0.002; snprintf(label, len, "bond of 0.002 nm"); break;
    default: return 0;
    }
    test_chain(pos, 4, r, th, ph);
    test_random_pose(pos, 4);
    return 1;
}

/* angle geometries for a chain of n atoms: random, angle (0,1,2) at 179.9 and 0.5 deg, at theta0 */
static int angle_geometry(int k, int n, double theta0, double *pos, char *label, size_t len) {
    if (k < NRANDOM)
        return random_bonded(k, n, pos, label, len);
    const double r[5] = {0, 0.1093, 0.1229, 0.1410, 0.1010};
    double th[5] = {0, 0, 0, 118.0 * DEG, 104.5 * DEG}, ph[5] = {0, 0, 0, 0.9, -2.0};
    switch (k - NRANDOM) {
    case 0: th[2] = 179.9 * DEG; snprintf(label, len, "angle 179.9 deg"); break;
    case 1: th[2] = 0.5 * DEG; snprintf(label, len, "angle 0.5 deg"); break;
    case 2: th[2] = theta0; snprintf(label, len, "angle at theta0"); break;
    default: return 0;
    }
    test_chain(pos, n, r, th, ph);
    test_random_pose(pos, n);
    return 1;
}

static int geometry_ub(int k, double *pos, char *label, size_t len) { return angle_geometry(k, 4, 1.9, pos, label, len); }

static int geometry_angle(int k, double *pos, char *label, size_t len) {
    return angle_geometry(k, 5, 1.911, pos, label, len);
}

/* torsions on a 5-atom chain: random; exactly planar cis (0) and trans (180); an angle of 175 deg */
static int torsion_geometry(int k, double *pos, char *label, size_t len) {
    if (k < NRANDOM)
        return random_bonded(k, 5, pos, label, len);
    const double r[5] = {0, 0.1093, 0.1529, 0.1410, 0.1010};
    double th[5] = {0, 0, 111.0 * DEG, 118.0 * DEG, 109.5 * DEG}, ph[5] = {0, 0, 0, 0, 0};
    switch (k - NRANDOM) {
    case 0: ph[3] = 0.0; ph[4] = PI; snprintf(label, len, "planar phi = 0"); break;
    case 1: ph[3] = PI; ph[4] = 0.0; snprintf(label, len, "planar phi = 180"); break;
    case 2: th[2] = 175.0 * DEG; ph[3] = 1.1; ph[4] = -2.3; snprintf(label, len, "angle 175 deg"); break;
    default: return 0;
    }
    test_chain(pos, 5, r, th, ph);
    if (k - NRANDOM == 2)
        test_random_pose(pos, 5); /* the planar ones stay exactly planar */
    return 1;
}

/* impropers on a star (centre 0): random; planar trigonal (180); planar (0); near planar (179) */
static int star_geometry(int k, double *pos, char *label, size_t len) {
    const double r[4] = {0, 0.1012, 0.1093, 0.1229};
    if (k < NRANDOM) {
        double rr[4] = {0, test_uniform(0.09, 0.15), test_uniform(0.09, 0.15), test_uniform(0.09, 0.15)};
        test_star(pos, rr, test_uniform(95, 135) * DEG, test_uniform(95, 135) * DEG, test_uniform(-PI, PI));
        test_random_pose(pos, 4);
        snprintf(label, len, "random %d", k);
        return 1;
    }
    switch (k - NRANDOM) {
    case 0: test_star(pos, r, 120 * DEG, 120 * DEG, PI); snprintf(label, len, "planar trigonal (180)"); break;
    case 1: test_star(pos, r, 120 * DEG, 60 * DEG, 0.0); snprintf(label, len, "planar (0)"); break;
    case 2:
        test_star(pos, r, 118 * DEG, 121 * DEG, 179.0 * DEG);
        test_random_pose(pos, 4);
        snprintf(label, len, "near planar (179)");
        break;
    default: return 0;
    }
    return 1;
}

/* random stars away from the wrap point |phi - phi0| = pi (a kink); phi = -3.1 and 3.1 (across
 * the wrap from phi0 = 3.05), planar */
static int geometry_harmonic_improper(int k, double *pos, char *label, size_t len) {
    const double r[4] = {0, 0.1012, 0.1093, 0.1229};
    if (k < NRANDOM) {
        for (;;) {
            double rr[4] = {0, test_uniform(0.09, 0.15), test_uniform(0.09, 0.15), test_uniform(0.09, 0.15)};
            test_star(pos, rr, test_uniform(95, 135) * DEG, test_uniform(95, 135) * DEG, test_uniform(-PI, PI));
            if (fabs(test_wrap_pi(test_dihedral(pos, 1, 2, 0, 3) - harmonic_improper_phi0[0])) < PI - 0.1 &&
                fabs(test_wrap_pi(test_dihedral(pos, 3, 1, 0, 2) - harmonic_improper_phi0[1])) < PI - 0.1)
                break;
        }
        test_random_pose(pos, 4);
        snprintf(label, len, "random %d", k);
        return 1;
    }
    switch (k - NRANDOM) {
    case 0: test_star(pos, r, 120 * DEG, 120 * DEG, -3.1); snprintf(label, len, "phi = -3.1 (phi0 3.05)"); break;
    case 1: test_star(pos, r, 120 * DEG, 120 * DEG, 3.1); snprintf(label, len, "phi = 3.1"); break;
    case 2: test_star(pos, r, 120 * DEG, 120 * DEG, PI); snprintf(label, len, "planar, phi = +-pi"); break;
    default: return 0;
    }
    for (int t = 0; t < 2; t++) {
        const double phi = t == 0 ? test_dihedral(pos, 1, 2, 0, 3) : test_dihedral(pos, 3, 1, 0, 2);
        CHECK(fabs(test_wrap_pi(phi - harmonic_improper_phi0[t])) < PI - 0.05, "geometry %s is at the wrap point", label);
    }
    return 1;
}

/* ---- nonbonded (term_cases.h's particles) -------------------------------------------------- */

/* random chains with every pair >= 0.25 nm apart; the pair 1-2 at its LJ minimum; a close
 * pair 0-1 at 0.08 nm (LJ repulsion ~1e9 times its well depth) */
static int geometry_nb(int k, double *pos, char *label, size_t len) {
    if (k < NRANDOM) {
        do
            test_random_chain(pos, 5, 0.28, 0.42);
        while (test_min_pair_distance(pos, 5) < 0.25);
        test_random_pose(pos, 5);
        snprintf(label, len, "random %d", k);
        return 1;
    }
    const double s12 = nb_combining == HESSFIT_COMBINE_GEOMETRIC ? sqrt(0.325 * 0.29) : 0.5 * (0.325 + 0.29);
    double r[5] = {0, 0.33, pow(2.0, 1.0 / 6.0) * s12, 0.35, 0.31};
    const double th[5] = {0, 0, 120 * DEG, 150 * DEG, 100 * DEG}, ph[5] = {0, 0, 0, 2.5, -1.0};
    switch (k - NRANDOM) {
    case 0: snprintf(label, len, "pair 1-2 at its LJ minimum"); break;
    case 1:
        if (fixed_point_forces())
            return 0; /* |F| ~ 1e10 kJ/mol/nm: beyond the fixed-point force range */
        r[1] = 0.08;
        snprintf(label, len, "pair 0-1 at 0.08 nm");
        break;
    default: return 0;
    }
    test_chain(pos, 5, r, th, ph);
    test_random_pose(pos, 5);
    return 1;
}

static void run_case(const TermCase *tc) {
    Stats st;
    memset(&st, 0, sizeof st);
    st.name = tc->name;
    double pos[3 * MAXN];
    char label[64];
    CHECK(tc->geometry(0, pos, label, sizeof label), "case %s has no geometry", tc->name);
    Setup s;
    setup_create(&s, tc->n, tc->build, pos);
    for (int k = 0; k == 0 || tc->geometry(k, pos, label, sizeof label); k++)
        check_geometry(&s, pos, &st, label, 1);
    setup_destroy(&s);
    print_stats(&st);
}

/* ======================================================================================== */
/* Two molecules                                                                             */
/* ======================================================================================== */

/* slots of two_molecules.h's table that only molecule A uses, and only B */
static const int only_a[] = {S_KB2, S_R02, S_KT, S_PH, S_V1, S_V3};
static const int only_b[] = {S_KUB, S_RUB, S_KI, S_PHI0};

/* max_k |a_k - b_k| / max_k |b_k| */
static double rel_diff(const double *a, const double *b, int n) {
    return test_max_abs_diff(a, b, (size_t) n) / fmax(test_max_abs(b, (size_t) n), 1e-300);
}

static void run_two_molecules(void) {
    Stats st;
    memset(&st, 0, sizeof st);
    st.name = "two molecules";
    double pa[3 * NA], pb[3 * NB], pab[3 * (NA + NB)], pbalone[3 * NB];
    two_mol_random_positions(pa, pb);
    for (int j = 0; j < NB; j++) /* B 0.6 nm away: the molecules would interact if pairs crossed */
        pb[3 * j] += 0.6;
    two_mol_system_positions(pa, pb, pab, pbalone);

    Setup sab, sa, sb;
    setup_create(&sab, NA + NB, two_mol_build_pair, pab);
    setup_create(&sa, NA, two_mol_build_a_alone, pa);
    setup_create(&sb, NB, two_mol_build_b_alone, pbalone);
    CHECK(sab.nmol == 2 && sab.offset[1] == 9 * NA * NA && sab.hsize == 9 * (NA * NA + NB * NB), "pair layout");

    /* (a)-(d) on the pair System */
    check_geometry(&sab, pab, &st, "A + B", 1);
    print_stats(&st);

    /* G in one block only: exactly the contraction of that molecule alone */
    static double G[MAXH], Ga[9 * NA * NA], Gb[9 * NB * NB];
    double cab[NUM_S], ca[NUM_S], cb[NUM_S];
    random_adjoint(&sa, Ga);
    random_adjoint(&sb, Gb);
    memset(G, 0, sizeof G);
    memcpy(G, Ga, sizeof Ga);
    contract_hessian(&sab, G, cab);
    contract_hessian(&sa, Ga, ca);
    const double ea = rel_diff(cab, ca, NUM_S);
    double za = 0.0, zb = 0.0;
    for (size_t i = 0; i < sizeof only_b / sizeof only_b[0]; i++)
        za = fmax(za, fabs(cab[only_b[i]]));
    memset(G, 0, sizeof G);
    memcpy(G + sab.offset[1], Gb, sizeof Gb);
    contract_hessian(&sab, G, cab);
    contract_hessian(&sb, Gb, cb);
    const double eb = rel_diff(cab, cb, NUM_S);
    for (size_t i = 0; i < sizeof only_a / sizeof only_a[0]; i++)
        zb = fmax(zb, fabs(cab[only_a[i]]));
    SOFT_CHECK(ea <= 1e-12, "G on A's block only: differs from A alone by %.2e relative", ea);
    SOFT_CHECK(eb <= 1e-12, "G on B's block only: differs from B alone by %.2e relative", eb);
    SOFT_CHECK(za == 0.0, "G on A's block only: a slot only B uses got %.3g", za);
    SOFT_CHECK(zb == 0.0, "G on B's block only: a slot only A uses got %.3g", zb);

    /* y on one molecule's particles only */
    double y[3 * (NA + NB)], ya[3 * NA], yb[3 * NB], dab[NUM_S], da[NUM_S], db[NUM_S];
    for (int i = 0; i < 3 * NA; i++)
        ya[i] = test_uniform(-1.0, 1.0);
    for (int i = 0; i < 3 * NB; i++)
        yb[i] = test_uniform(-1.0, 1.0);
    memset(y, 0, sizeof y);
    memcpy(y, ya, sizeof ya);
    contract_gradient(&sab, y, dab);
    contract_gradient(&sa, ya, da);
    const double ga = rel_diff(dab, da, NUM_S);
    double gza = 0.0, gzb = 0.0;
    for (size_t i = 0; i < sizeof only_b / sizeof only_b[0]; i++)
        gza = fmax(gza, fabs(dab[only_b[i]]));
    memset(y, 0, sizeof y);
    for (int i = 0; i < NB; i++) /* B-alone particle i is pair particle NA + b_perm[b_list[i]] */
        memcpy(y + 3 * (NA + b_perm[b_list[i]]), yb + 3 * i, 3 * sizeof(double));
    contract_gradient(&sab, y, dab);
    contract_gradient(&sb, yb, db);
    const double gb = rel_diff(dab, db, NUM_S);
    for (size_t i = 0; i < sizeof only_a / sizeof only_a[0]; i++)
        gzb = fmax(gzb, fabs(dab[only_a[i]]));
    SOFT_CHECK(ga <= 1e-12, "y on A only: differs from A alone by %.2e relative", ga);
    SOFT_CHECK(gb <= 1e-12, "y on B only: differs from B alone by %.2e relative", gb);
    SOFT_CHECK(gza == 0.0 && gzb == 0.0, "y on one molecule: a slot only the other uses got %.3g / %.3g", gza, gzb);
    printf("%-28s G on A only vs A alone %.1e, on B only vs B alone %.1e, other molecule's slots %g / %g | "
           "y: %.1e %.1e, other's slots %g / %g\n",
           "two molecules (no leak)", ea, eb, za, zb, ga, gb, gza, gzb);

    /* errors: sizes, NULL, non-finite entries, a force not in the Context */
    {
        double out[NUM_S], yy[3 * (NA + NB)];
        static double g[MAXH + 1];
        memset(g, 0, sizeof g);
        for (int i = 0; i < 3 * (NA + NB); i++)
            yy[i] = 0.1;
        hessfit_force *f = sab.force;
        OpenMM_Context *ctx = sab.context;
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, ctx, g, sab.hsize - 1, out, NUM_S), HESSFIT_ERROR_SIZE);
        CHECK(strstr(hessfit_last_error(), "'adjoint'") != NULL, "the size message does not name 'adjoint'");
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, ctx, g, sab.hsize + 1, out, NUM_S), HESSFIT_ERROR_SIZE);
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, ctx, g, sab.hsize, out, NUM_S - 1), HESSFIT_ERROR_SIZE);
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, ctx, NULL, sab.hsize, out, NUM_S),
                 HESSFIT_ERROR_NULL_ARGUMENT);
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, ctx, g, sab.hsize, NULL, NUM_S),
                 HESSFIT_ERROR_NULL_ARGUMENT);
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, NULL, g, sab.hsize, out, NUM_S),
                 HESSFIT_ERROR_NULL_ARGUMENT);
        /* NaN at row 4 (B's block-order particle 1, y), column 7 (particle 2, y) of B's block */
        const long long bad = sab.offset[1] + 4 * (3 * NB) + 7;
        g[bad] = NAN;
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, ctx, g, sab.hsize, out, NUM_S), HESSFIT_ERROR_VALUE);
        char expect[128];
        snprintf(expect, sizeof expect, "molecule 1, row 4 (particle %d y), column 7 (particle %d y)",
                 NA + b_perm[b_list[1]], NA + b_perm[b_list[2]]);
        CHECK(strstr(hessfit_last_error(), expect) != NULL && strstr(hessfit_last_error(), "nan") != NULL,
              "the NaN message does not name the entry (\"%s\"): %s", expect, hessfit_last_error());
        g[bad] = -INFINITY;
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(f, ctx, g, sab.hsize, out, NUM_S), HESSFIT_ERROR_VALUE);
        CHECK(strstr(hessfit_last_error(), "-inf") != NULL, "the message does not say -inf: %s", hessfit_last_error());
        g[bad] = 0.0;
        HF_OK(hessfit_force_get_hessian_contraction_derivatives(f, ctx, g, sab.hsize, out, NUM_S));
        CHECK(test_max_abs(out, NUM_S) == 0.0, "G = 0 gave a non-zero contraction");

        HF_FAILS(hessfit_force_get_gradient_contraction_derivatives(f, ctx, yy, 3 * (NA + NB) - 1, out, NUM_S),
                 HESSFIT_ERROR_SIZE);
        CHECK(strstr(hessfit_last_error(), "'y'") != NULL, "the size message does not name 'y'");
        HF_FAILS(hessfit_force_get_gradient_contraction_derivatives(f, ctx, yy, 3 * (NA + NB), out, NUM_S + 1),
                 HESSFIT_ERROR_SIZE);
        HF_FAILS(hessfit_force_get_gradient_contraction_derivatives(f, ctx, NULL, 3 * (NA + NB), out, NUM_S),
                 HESSFIT_ERROR_NULL_ARGUMENT);
        yy[3 * 7 + 2] = NAN;
        HF_FAILS(hessfit_force_get_gradient_contraction_derivatives(f, ctx, yy, 3 * (NA + NB), out, NUM_S),
                 HESSFIT_ERROR_VALUE);
        CHECK(strstr(hessfit_last_error(), "particle 7 z") != NULL, "the NaN message does not name particle 7 z: %s",
              hessfit_last_error());
        yy[3 * 7 + 2] = INFINITY;
        HF_FAILS(hessfit_force_get_gradient_contraction_derivatives(f, ctx, yy, 3 * (NA + NB), out, NUM_S),
                 HESSFIT_ERROR_VALUE);

        /* A's force on the pair System's Context: not part of it */
        static double gA[9 * NA * NA];
        double yA[3 * NA] = {0};
        HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(sa.force, ctx, gA, 9 * NA * NA, out, NUM_S),
                 HESSFIT_ERROR_NOT_IN_CONTEXT);
        HF_FAILS(hessfit_force_get_gradient_contraction_derivatives(sa.force, ctx, yA, 3 * NA, out, NUM_S),
                 HESSFIT_ERROR_NOT_IN_CONTEXT);
    }
    setup_destroy(&sab);
    setup_destroy(&sa);
    setup_destroy(&sb);
}

/* ======================================================================================== */
/* A larger molecule: the plain-pair loop in several tiles                                   */
/* ======================================================================================== */

/*
 * Molecule 0: NBIG particles on a perturbed 4 x 4 x 3 grid (spacing 0.3 nm, every coordinate
 * moved by up to 0.03 nm), particle types of the nonbonded cases in turn, a chain of bonds
 * 0-1-...-(NBIG-1) (one shared slot pair) with exclusions and 1-4 pairs from it, listed in the
 * permuted order (7 i) mod NBIG; molecule 1: three particles with two bonds and an angle. NBIG is
 * larger than the Reference kernel's pair tile (32 atoms), so the pair loop crosses tiles.
 */
#define NBIG 40
static void build_big(hessfit_force *f) {
    add_nb_particles(f); /* slots 0..6; particles 0..4 */
    const int kb = add_slot(f, 3.0e4), r0 = add_slot(f, 0.3), ka = add_slot(f, 250.0), th0 = add_slot(f, 1.9);
    for (int i = 5; i < NBIG + 3; i++)
        HF_OK(hessfit_force_add_particle(f, nb_particles[i % 5][0], nb_particles[i % 5][1], nb_particles[i % 5][2], NULL));
    HF_OK(hessfit_force_set_combining_rule(f, HESSFIT_COMBINE_LORENTZ_BERTHELOT));
    int list[NBIG], bonds[2 * (NBIG + 1)];
    for (int i = 0; i < NBIG; i++)
        list[i] = (7 * i) % NBIG;
    HF_OK(hessfit_force_add_molecule(f, list, NBIG, NULL));
    const int small[3] = {NBIG + 2, NBIG, NBIG + 1};
    HF_OK(hessfit_force_add_molecule(f, small, 3, NULL));
    for (int i = 0; i + 1 < NBIG; i++) {
        HF_OK(hessfit_force_add_bond(f, i, i + 1, kb, r0, NULL));
        bonds[2 * i] = i;
        bonds[2 * i + 1] = i + 1;
    }
    HF_OK(hessfit_force_add_bond(f, NBIG, NBIG + 1, kb, r0, NULL));
    HF_OK(hessfit_force_add_bond(f, NBIG + 1, NBIG + 2, kb, r0, NULL));
    HF_OK(hessfit_force_add_angle(f, NBIG, NBIG + 1, NBIG + 2, ka, th0, NULL));
    bonds[2 * (NBIG - 1)] = NBIG;
    bonds[2 * (NBIG - 1) + 1] = NBIG + 1;
    bonds[2 * NBIG] = NBIG + 1;
    bonds[2 * NBIG + 1] = NBIG + 2;
    HF_OK(hessfit_force_create_exclusions_from_bonds(f, bonds, NBIG + 1));
}

static void run_big_molecule(void) {
    Stats st;
    memset(&st, 0, sizeof st);
    st.name = "40 + 3 atoms (pair tiles)";
    double pos[3 * (NBIG + 3)];
    for (int i = 0; i < NBIG; i++) {
        const int g[3] = {i % 4, (i / 4) % 4, i / 16};
        for (int c = 0; c < 3; c++)
            pos[3 * i + c] = 0.3 * g[c] + test_uniform(-0.03, 0.03);
    }
    const double tri[9] = {2.0, 2.0, 2.0, 2.29, 2.03, 2.0, 2.35, 2.31, 2.05};
    memcpy(pos + 3 * NBIG, tri, sizeof tri);
    Setup s;
    setup_create(&s, NBIG + 3, build_big, pos);
    CHECK(s.nmol == 2 && s.hsize == 9LL * (NBIG * NBIG + 9), "big layout");
    check_geometry(&s, pos, &st, "grid", 0);
    setup_destroy(&s);
    print_stats(&st);
}

/* ======================================================================================== */
/* Undefined geometry: the same error as the Hessian                                         */
/* ======================================================================================== */

/* The message after the "function_name: " prefix. */
static const char *message_body(const char *message) {
    const char *p = strstr(message, ": ");
    return p ? p + 2 : message;
}

static void check_same_geometry_error(Setup *s, const char *what) {
    static double blocks[MAXH], G[MAXH];
    double y[MAXDIM], out[MAXSLOTS];
    char expected[512];
    for (long long i = 0; i < s->hsize; i++)
        G[i] = 0.5;
    for (int i = 0; i < 3 * s->n; i++)
        y[i] = 0.5;
    HF_FAILS(hessfit_force_get_hessian_blocks(s->force, s->context, blocks, s->hsize), HESSFIT_ERROR_GEOMETRY);
    snprintf(expected, sizeof expected, "%s", message_body(hessfit_last_error()));
    HF_FAILS(hessfit_force_get_hessian_contraction_derivatives(s->force, s->context, G, s->hsize, out, s->nslots),
             HESSFIT_ERROR_GEOMETRY);
    CHECK(strcmp(message_body(hessfit_last_error()), expected) == 0, "%s: the Hessian says \"%s\", the contraction \"%s\"",
          what, expected, message_body(hessfit_last_error()));
    HF_FAILS(hessfit_force_get_gradient_contraction_derivatives(s->force, s->context, y, 3 * s->n, out, s->nslots),
             HESSFIT_ERROR_GEOMETRY);
    CHECK(strcmp(message_body(hessfit_last_error()), expected) == 0,
          "%s: the Hessian says \"%s\", the gradient contraction \"%s\"", what, expected, message_body(hessfit_last_error()));
}

static void run_undefined_geometry(void) {
    /* atoms 0, 1, 2 of the torsions exactly on the x axis */
    const double collinear[15] = {0, 0, 0, 0.11, 0, 0, 0.26, 0, 0, 0.3, 0.12, 0, 0.42, 0.15, 0.07};
    Setup s;
    setup_create(&s, 5, build_periodic, collinear);
    check_same_geometry_error(&s, "collinear torsion");
    setup_destroy(&s);
    /* the MM3* cross terms there: a linear angle (stretch-bend), collinear dihedral atoms
     * (torsion-stretch); a bend-bend star whose angle 1-0-2 is linear. The message names the term. */
    const double linear_star[15] = {0, 0, 0, 0.11, 0, 0, -0.1, 0, 0, 0.02, 0.1, 0.01, -0.03, -0.02, 0.1};
    const struct {
        build_fn build;
        const double *pos;
        const char *name;
    } cross[3] = {{build_mm3_stretch_bend, collinear, "MM3* stretch-bend 0"},
                  {build_mm3_torsion_stretch, collinear, "MM3* torsion-stretch 0"},
                  {build_mm3_bend_bend, linear_star, "MM3* bend-bend 0"}};
    for (int c = 0; c < 3; c++) {
        setup_create(&s, 5, cross[c].build, cross[c].pos);
        check_same_geometry_error(&s, cross[c].name);
        CHECK(strstr(hessfit_last_error(), cross[c].name) != NULL, "the geometry error \"%s\" does not name %s",
              hessfit_last_error(), cross[c].name);
        setup_destroy(&s);
    }
    /* two nonbonded particles on top of each other */
    double pos[15];
    test_random_chain(pos, 5, 0.28, 0.42);
    memcpy(pos + 3 * 2, pos, 3 * sizeof(double));
    nb_combining = HESSFIT_COMBINE_GEOMETRIC;
    setup_create(&s, 5, build_nb, pos);
    check_same_geometry_error(&s, "coincident pair");
    setup_destroy(&s);
    printf("%-28s collinear torsion, MM3* cross terms, coincident pair: HESSFIT_ERROR_GEOMETRY, the Hessian's message\n",
           "undefined geometry");
}

/* MM3* pairs (term_cases.h): a pair inside 0.6 nm, one in the switch, one beyond 0.8 nm */
static int geometry_mm3_pair(int k, double *pos, char *label, size_t len) {
    if (k >= NRANDOM)
        return 0;
    mm3_pair_positions(pos);
    snprintf(label, len, "random %d", k);
    return 1;
}

/* 10-12 hydrogen bonds (term_cases.h): every bond at 0.14-0.4 nm */
static int geometry_hbond(int k, double *pos, char *label, size_t len) {
    if (k >= NRANDOM)
        return 0;
    hbond_positions(pos);
    snprintf(label, len, "random %d", k);
    return 1;
}

/* MM3* switched pairs (term_cases.h): switch distances inside 0.6 nm, in the switch and beyond */
static int geometry_mm3_switched_pair(int k, double *pos, char *label, size_t len) {
    if (k >= NRANDOM)
        return 0;
    mm3_switched_pair_positions(pos);
    snprintf(label, len, "random %d", k);
    return 1;
}

static int geometry_star5(int k, double *pos, char *label, size_t len) {
    if (k >= NRANDOM)
        return 0;
    mm3_star5_positions(pos);
    snprintf(label, len, "random %d", k);
    return 1;
}

int main(int argc, char **argv) {
    platform_name = test_platform_name(argc, argv);
    printf("test_adjoint on platform %s\n", platform_name);
    test_seed(20241121ULL);
    static const TermCase cases[] = {
        {"bond", 4, build_bond, geometry_bond},
        {"Urey-Bradley", 4, build_ub, geometry_ub},
        {"angle", 5, build_angle, geometry_angle},
        {"MM3* bond", 4, build_mm3_bond, geometry_bond},
        {"MM3* angle", 5, build_mm3_angle, geometry_angle},
        {"MM3* bond, scaled", 4, build_mm3_bond_scaled, geometry_bond},
        {"MM3* stretch-bend", 5, build_mm3_stretch_bend, geometry_angle},
        {"MM3* bend-bend", 5, build_mm3_bend_bend, geometry_star5},
        {"MM3* torsion-stretch", 5, build_mm3_torsion_stretch, torsion_geometry},
        {"periodic torsion n=1,2,3", 5, build_periodic, torsion_geometry},
        {"OPLS torsion", 5, build_opls, torsion_geometry},
        {"RB torsion", 5, build_rb, torsion_geometry},
        {"periodic improper", 4, build_periodic_improper, star_geometry},
        {"harmonic improper", 4, build_harmonic_improper, geometry_harmonic_improper},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    nb_combining = HESSFIT_COMBINE_GEOMETRIC;
    const TermCase nb_geometric = {"LJ+Coulomb geometric", 5, build_nb, geometry_nb};
    run_case(&nb_geometric);
    nb_combining = HESSFIT_COMBINE_LORENTZ_BERTHELOT;
    const TermCase nb_lb = {"LJ+Coulomb Lorentz-Berth.", 5, build_nb, geometry_nb};
    run_case(&nb_lb);
    const TermCase pairs14 = {"excl. + 1-4 pairs (LB)", 5, build_14, geometry_nb};
    run_case(&pairs14);
    nb_combining = HESSFIT_COMBINE_GEOMETRIC;
    const TermCase explicit_pairs = {"explicit pairs", 5, build_explicit, geometry_nb};
    run_case(&explicit_pairs);
    const TermCase mm3_pairs = {"MM3* pairs", 5, build_mm3_pair, geometry_mm3_pair};
    run_case(&mm3_pairs);
    const TermCase switched = {"MM3* switched pairs", 6, build_mm3_switched_pair, geometry_mm3_switched_pair};
    run_case(&switched);
    const TermCase hbond = {"10-12 hydrogen bonds", 4, build_hbond, geometry_hbond};
    run_case(&hbond);

    run_two_molecules();
    run_big_molecule();
    run_undefined_geometry();

    return test_soft_finish("test_adjoint");
}
