/*
 * test_linear_bend (per platform): a bend whose theta0 is 180 degrees at an EXACTLY linear geometry
 * (issue 11, item 4). theta is not differentiable there, but E = f(theta) with f'(pi) = 0 is smooth
 * in Cartesians (C^inf harmonic, C^2 MM3*): grad E = 0 and H = f''(pi) M, M the Hessian of cos theta
 * (hf_geometry.c's linear_angle). Two molecules, each with the bend harmonic (angle) and MM3*:
 *   - three atoms, arms 0.11 and 0.13 nm along a random axis (collinear up to rounding, |u x v| ~
 *     1e-17 <= HF_MIN_SINE, so the linear form is taken);
 *   - a nitrile H3C-C#N (6 atoms, C-C-N collinear) with its bonds and the H-C-C, H-C-H angles.
 * At the linear geometry and 1e-7 and 1e-4 rad off it (the end atom moved perpendicular):
 *   (a) energy and forces against stock OpenMM on Reference (HarmonicAngleForce, k_stock = 2k, or a
 *       CustomAngleForce with MacroModel's sextic; HarmonicBondForce for the bonds): 1e-10 relative,
 *       plus the stock's own error near linear (its theta = acos(cos theta) gives pi - theta = t to
 *       ~eps / t^2 relative). OpenMM's angle forces clamp |a x b| to 1e-6 nm^2, so 1e-7 rad off linear
 *       its forces are wrong (not compared); at exactly linear they are 0, as ours;
 *   (b) the analytic Hessian against central differences of the analytic forces (step 1e-7 nm:
 *       MM3*'s |t|^3 terms make the forces only C^1 at linear, an O(h) error ~ 2e-6 relative;
 *       tolerance 2e-5, 1e-6 for harmonic) and second central differences of the stock ENERGIES
 *       (step 1e-5 nm harmonic, 1e-6 nm MM3*; tolerance 1e-6, 1e-4 for MM3*'s O(h) error);
 *   (c) slot derivatives of the bend's k: dE/dk, tr(G dH/dk) for a random symmetric G,
 *       y . d(grad E)/dk for a random y, the Hessian objective's dL/dk (Hessian-element targets)
 *       and its Jacobian column (hessfit_force_compute_hessian_objective_jacobian), each against
 *       central differences in k (step 0.1 k: all are linear or quadratic in k); theta0's entries of the contractions,
 *       objective gradient and Jacobian are NaN at exactly linear (undefined: a cusp for theta0 !=
 *       pi), finite off linear; dE/dtheta0 = 0 there;
 *   (d) continuity: |H(t) - H(0)| / |H(0)| is O(t) (bound 20 t, plus 1e-8 for the rounding of
 *       pi - theta near linear). O(t) for the harmonic bend too: its E is C^inf but its third
 *       derivatives are not zero at linear (in the plane, end atom at (b + dx, dy):
 *       t^2 = atan(dy / (b + dx))^2, d3/(dy2 dx) = -4/b^3); MM3*'s |t|^3 terms add O(t) as well.
 *   (e) on a GPU platform, against the same force on Reference: energy 1e-12, forces 1e-9 (fixed-point
 *       accumulation), Hessian and contractions 1e-12 relative at exactly linear, 1e-12 + 1e-15 / t
 *       off it (the ordinary form's 1/sin theta amplifies rounding), theta0's NaN on both.
 * Errors (HESSFIT_ERROR_GEOMETRY naming the term): the bend with theta0 = 179 degrees at exactly
 * linear (a cusp); a stretch-bend at a linear angle.
 */
#include "test_util.h"
#include "term_cases.h"
#include <float.h>
#include <string.h>

#define PI 3.14159265358979323846
#define MAXN 6
#define FD_STEP 1e-7
#define EF_TOL 1e-10

enum { HARMONIC = 0, MM3 = 1 };
static const char *const kind_name[2] = {"harmonic", "MM3*"};
static const char *platform_name = "Reference";
static const char *mm3_expression =
    "k*d^2*(1 - 0.014*D + 5.6e-5*D^2 - 7.0e-7*D^3 + 2.2e-8*D^4); D = d*57.295779513082320876; d = theta - theta0";

/* One case: the force with its System and Context (our platform) and the stock System and Context
 * (Reference). The bend under test is (0, 1, 2) with slots k_slot, th_slot. */
typedef struct {
    int kind, n, n_slots, k_slot, th_slot;
    hessfit_force *f;
    OpenMM_System *sys, *stock_sys;
    OpenMM_Context *ctx, *stock_ctx;
    OpenMM_Integrator *integ, *stock_integ;
} lb_case;

static void unit(double *v) {
    const double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; i++)
        v[i] /= l;
}

static void random_unit(double *v) {
    for (int i = 0; i < 3; i++)
        v[i] = test_uniform(-1.0, 1.0);
    unit(v);
}

/* p, q: unit vectors perpendicular to e and to each other */
static void perpendicular(const double *e, double *p, double *q) {
    double r[3];
    random_unit(r);
    const double d = r[0] * e[0] + r[1] * e[1] + r[2] * e[2];
    for (int i = 0; i < 3; i++)
        p[i] = r[i] - d * e[i];
    unit(p);
    q[0] = e[1] * p[2] - e[2] * p[1];
    q[1] = e[2] * p[0] - e[0] * p[2];
    q[2] = e[0] * p[1] - e[1] * p[0];
}

/*
 * Positions: atoms 0-1-2 along axis e (arms la, lb from atom 1), atom 2 then turned by t about
 * atom 1 towards p (theta = pi - t); the nitrile's hydrogens 3-5 on atom 0 at 0.109 nm, H-C-C 110
 * degrees.
 */
static void place(int n, const double *e, const double *p, const double *q, double la, double lb, double t,
                  double *pos) {
    const double o[3] = {0.3, -0.2, 0.1};
    for (int i = 0; i < 3; i++) {
        pos[3 + i] = o[i];
        pos[i] = o[i] - la * e[i];
        pos[6 + i] = o[i] + lb * (cos(t) * e[i] + sin(t) * p[i]);
    }
    for (int h = 0; h < n - 3; h++) {
        const double phi = 2.0 * PI * h / 3.0, a = 110.0 * PI / 180.0;
        for (int i = 0; i < 3; i++)
            pos[3 * (3 + h) + i] =
                pos[i] + 0.109 * (cos(a) * e[i] + sin(a) * (cos(phi) * p[i] + sin(phi) * q[i]));
    }
}

/* The bend (0, 1, 2) of the given kind and theta0; for the nitrile (n = 6) its bonds and the
 * H-C-C and H-C-H angles, harmonic, r0 2 % off the geometry so that the bonds pull. */
static void build(lb_case *c, const char *platform, int kind, int n, double theta0, const double *pos) {
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->n = n;
    HF_OK(hessfit_force_create(&c->f));
    c->sys = OpenMM_System_create();
    c->stock_sys = OpenMM_System_create();
    int atoms[MAXN];
    for (int i = 0; i < n; i++) {
        HF_OK(hessfit_force_add_particle(c->f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
        OpenMM_System_addParticle(c->sys, i < 3 ? 12.0 : 1.0);
        OpenMM_System_addParticle(c->stock_sys, i < 3 ? 12.0 : 1.0);
        atoms[i] = i;
    }
    HF_OK(hessfit_force_add_molecule(c->f, atoms, n, NULL));
    const double k = kind == HARMONIC ? 310.0 : 260.0;
    c->k_slot = add_slot(c->f, k);
    c->th_slot = add_slot(c->f, theta0);
    OpenMM_HarmonicBondForce *bonds = OpenMM_HarmonicBondForce_create();
    OpenMM_HarmonicAngleForce *angles = OpenMM_HarmonicAngleForce_create();
    if (kind == HARMONIC) {
        HF_OK(hessfit_force_add_angle(c->f, 0, 1, 2, c->k_slot, c->th_slot, NULL));
        OpenMM_HarmonicAngleForce_addAngle(angles, 0, 1, 2, theta0, 2.0 * k);
    } else {
        HF_OK(hessfit_force_add_mm3_angle(c->f, 0, 1, 2, c->k_slot, c->th_slot, NULL));
        OpenMM_CustomAngleForce *mm3 = OpenMM_CustomAngleForce_create(mm3_expression);
        OpenMM_CustomAngleForce_addPerAngleParameter(mm3, "k");
        OpenMM_CustomAngleForce_addPerAngleParameter(mm3, "theta0");
        OpenMM_DoubleArray *pa = OpenMM_DoubleArray_create(0);
        OpenMM_DoubleArray_append(pa, k);
        OpenMM_DoubleArray_append(pa, theta0);
        OpenMM_CustomAngleForce_addAngle(mm3, 0, 1, 2, pa);
        OpenMM_DoubleArray_destroy(pa);
        OpenMM_System_addForce(c->stock_sys, (OpenMM_Force *) mm3);
    }
    if (n == 6) {
        const int bond_atoms[5][2] = {{0, 1}, {1, 2}, {0, 3}, {0, 4}, {0, 5}};
        for (int b = 0; b < 5; b++) {
            const double r0 = 1.02 * test_distance(pos, bond_atoms[b][0], bond_atoms[b][1]), kb = 2.0e5 + 1e4 * b;
            HF_OK(hessfit_force_add_bond(c->f, bond_atoms[b][0], bond_atoms[b][1], add_slot(c->f, kb), add_slot(c->f, r0),
                                         NULL));
            OpenMM_HarmonicBondForce_addBond(bonds, bond_atoms[b][0], bond_atoms[b][1], r0, 2.0 * kb);
        }
        const int angle_atoms[6][3] = {{3, 0, 1}, {4, 0, 1}, {5, 0, 1}, {3, 0, 4}, {3, 0, 5}, {4, 0, 5}};
        for (int a = 0; a < 6; a++) {
            const double th0 = a < 3 ? 1.90 : 1.88, ka = a < 3 ? 300.0 : 250.0;
            HF_OK(hessfit_force_add_angle(c->f, angle_atoms[a][0], angle_atoms[a][1], angle_atoms[a][2],
                                          add_slot(c->f, ka), add_slot(c->f, th0), NULL));
            OpenMM_HarmonicAngleForce_addAngle(angles, angle_atoms[a][0], angle_atoms[a][1], angle_atoms[a][2], th0,
                                               2.0 * ka);
        }
    }
    OpenMM_System_addForce(c->stock_sys, (OpenMM_Force *) bonds);
    OpenMM_System_addForce(c->stock_sys, (OpenMM_Force *) angles);
    HF_OK(hessfit_force_get_num_parameters(c->f, &c->n_slots));
    HF_OK(hessfit_force_add_to_system(c->f, c->sys, NULL));
    c->ctx = test_create_context(c->sys, platform, pos, n, 0.001, &c->integ);
    c->stock_ctx = test_create_context(c->stock_sys, "Reference", pos, n, 0.001, &c->stock_integ);
}

static void destroy(lb_case *c) {
    OpenMM_Context_destroy(c->ctx);
    OpenMM_Integrator_destroy(c->integ);
    OpenMM_Context_destroy(c->stock_ctx);
    OpenMM_Integrator_destroy(c->stock_integ);
    hessfit_force_destroy(c->f);
    OpenMM_System_destroy(c->sys);
    OpenMM_System_destroy(c->stock_sys);
}

static void set_positions(lb_case *c, const double *pos) {
    test_set_positions(c->ctx, pos, c->n);
    test_set_positions(c->stock_ctx, pos, c->n);
}

static double energy_forces(lb_case *c, double *forces) {
    double e;
    HF_OK(hessfit_force_get_energy_forces(c->f, c->ctx, &e, forces));
    return e;
}

static void set_slot(lb_case *c, int slot, double value) {
    double table[64];
    HF_OK(hessfit_force_get_parameters(c->f, table, c->n_slots));
    table[slot] = value;
    HF_OK(hessfit_force_set_parameters(c->f, table, c->n_slots));
    HF_OK(hessfit_force_update_parameters_in_context(c->f, c->ctx));
}

static void hessian(lb_case *c, double *h) {
    HF_OK(hessfit_force_get_hessian_blocks(c->f, c->ctx, h, (long long) 9 * c->n * c->n));
}

/* -(central differences of our forces) into fd (3n x 3n) */
static void fd_hessian(lb_case *c, const double *pos, double *fd) {
    const int d = 3 * c->n;
    double x[3 * MAXN], fp[3 * MAXN] = {0}, fm[3 * MAXN] = {0};
    for (int j = 0; j < d; j++) {
        memcpy(x, pos, (size_t) d * sizeof *x);
        x[j] = pos[j] + FD_STEP;
        test_set_positions(c->ctx, x, c->n);
        energy_forces(c, fp);
        x[j] = pos[j] - FD_STEP;
        test_set_positions(c->ctx, x, c->n);
        energy_forces(c, fm);
        for (int i = 0; i < d; i++)
            fd[i * d + j] = -(fp[i] - fm[i]) / (2.0 * FD_STEP);
    }
    test_set_positions(c->ctx, pos, c->n);
}

static double stock_energy_at(lb_case *c, double *x, int i, double di, int j, double dj) {
    const double xi = x[i], xj = x[j];
    x[i] += di;
    x[j] += dj;
    test_set_positions(c->stock_ctx, x, c->n);
    const double e = test_energy_forces(c->stock_ctx, -1, NULL, c->n);
    x[i] = xi;
    x[j] = xj;
    return e;
}

/* Second central differences of the stock energies, step h, into fd: OpenMM's angle forces clamp
 * |a x b| to 1e-6 nm^2 (ReferenceAngleBondIxn), so near linear only its energies are right. */
static void fd_stock_hessian(lb_case *c, const double *pos, double h, double *fd) {
    const int d = 3 * c->n;
    double x[3 * MAXN];
    memcpy(x, pos, (size_t) d * sizeof *x);
    for (int i = 0; i < d; i++)
        for (int j = 0; j <= i; j++)
            fd[i * d + j] = fd[j * d + i] =
                (stock_energy_at(c, x, i, h, j, h) - stock_energy_at(c, x, i, h, j, -h) -
                 stock_energy_at(c, x, i, -h, j, h) + stock_energy_at(c, x, i, -h, j, -h)) / (4.0 * h * h);
    test_set_positions(c->stock_ctx, pos, c->n);
}

/* |a x b| of the bend (0, 1, 2), nm^2: OpenMM's stock angle forces are exact only above 1e-6 */
static double bend_cross(const double *pos) {
    double a[3], b[3];
    for (int i = 0; i < 3; i++) {
        a[i] = pos[i] - pos[3 + i];
        b[i] = pos[6 + i] - pos[3 + i];
    }
    const double w[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    return sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
}

/* The Hessian objective with every lower-triangle element as a target (0, weight 1): loss,
 * dL/dslot (all slots) and residuals; the Jacobian column of slot s. */
static void set_objective(lb_case *c, double *zeros, double *ones) {
    hessfit_molecule_objective mo;
    hessfit_molecule_objective_init(&mo);
    const long long dd = 9LL * c->n * c->n;
    for (long long i = 0; i < dd; i++) {
        zeros[i] = 0.0;
        ones[i] = 1.0;
    }
    mo.hessian_targets = zeros;
    mo.n_hessian_targets = dd;
    mo.hessian_weights = ones;
    mo.n_hessian_weights = dd;
    HF_OK(hessfit_force_set_hessian_objective(c->f, c->ctx, &mo, 1, 1.0));
}

static double objective(lb_case *c, double *dl, double *res, long long n_res) {
    double loss;
    HF_OK(hessfit_force_compute_hessian_objective(c->f, c->ctx, &loss, dl, dl ? c->n_slots : 0, res, res ? n_res : 0));
    return loss;
}

static double frobenius(const double *a, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i] * a[i];
    return sqrt(s);
}

/* Everything of (a)-(c) at pos; the Hessian into h. linear: pos is exactly linear. */
static void check_geometry(lb_case *c, const double *pos, int linear, double *h, const char *what) {
    const int n = c->n, d = 3 * n, dd = d * d;
    const double tol_fd = c->kind == MM3 ? 2e-5 : 1e-6, tol_stock = c->kind == MM3 ? 1e-4 : 1e-6;
    set_positions(c, pos);
    double f[3 * MAXN] = {0}, fs[3 * MAXN];
    const double e = energy_forces(c, f);
    const double es = test_energy_forces(c->stock_ctx, -1, fs, n);
    int stock_finite = 1;
    for (int i = 0; i < d; i++)
        stock_finite &= isfinite(fs[i]);
    const double fscale = fmax(test_max_abs(f, (size_t) d), 1.0);
    const int stock_clamped = bend_cross(pos) < 1e-6;
    const double force_diff = test_max_abs_diff(f, fs, (size_t) d);
    CHECK_CLOSE(e, es, EF_TOL, fmax(fabs(es), 1.0), "energy vs stock");
    /* the stock angle is acos(cos theta): near linear its pi - theta has a relative error ~ eps / t^2 */
    const double t = M_PI - test_angle(pos, 0, 1, 2), stock_tol = EF_TOL + (linear ? 0.0 : 4.0 * DBL_EPSILON / (t * t));
    if (stock_finite && (!stock_clamped || linear))
        CHECK(force_diff <= stock_tol * fscale, "%s: forces vs stock: %.3g (tolerance %.3g)", what, force_diff,
              stock_tol * fscale);
    hessian(c, h);
    for (int i = 0; i < dd; i++)
        CHECK(isfinite(h[i]), "%s: Hessian entry %d is %g", what, i, h[i]);
    double fd[9 * MAXN * MAXN], fd_stock[9 * MAXN * MAXN];
    fd_hessian(c, pos, fd);
    fd_stock_hessian(c, pos, c->kind == MM3 ? 1e-6 : 1e-5, fd_stock);
    const double hscale = test_max_abs(h, (size_t) dd);
    const double err = test_max_abs_diff(h, fd, (size_t) dd) / hscale;
    const double err_stock = test_max_abs_diff(h, fd_stock, (size_t) dd) / hscale;
    printf("  %-8s %-14s E %.6g (stock %.6g), forces vs stock %.1e%s, Hessian vs FD(forces) %.2e, vs FD2(stock "
           "energies) %.2e\n",
           kind_name[c->kind], what, e, es, force_diff,
           !stock_finite ? " (stock NOT finite)" : stock_clamped && !linear ? " (stock clamps |a x b|: not compared)" : "",
           err, err_stock);
    CHECK(err <= tol_fd, "%s: Hessian vs FD of the forces: %.3g", what, err);
    CHECK(err_stock <= tol_stock, "%s: Hessian vs FD of the stock energies: %.3g", what, err_stock);

    /* (c) the bend's k and theta0 */
    double g[9 * MAXN * MAXN], y[3 * MAXN];
    for (int i = 0; i < d; i++) {
        y[i] = test_uniform(-1.0, 1.0);
        for (int j = 0; j <= i; j++)
            g[i * d + j] = g[j * d + i] = test_uniform(-1.0, 1.0);
    }
    double dedp[64], dh[64], dg[64];
    HF_OK(hessfit_force_get_parameter_derivatives(c->f, c->ctx, dedp, c->n_slots));
    HF_OK(hessfit_force_get_hessian_contraction_derivatives(c->f, c->ctx, g, dd, dh, c->n_slots));
    HF_OK(hessfit_force_get_gradient_contraction_derivatives(c->f, c->ctx, y, d, dg, c->n_slots));
    double zeros[9 * MAXN * MAXN], ones[9 * MAXN * MAXN], dl[64];
    const long long n_res = (long long) d * (d + 1) / 2;
    set_objective(c, zeros, ones);
    double res0[(3 * MAXN) * (3 * MAXN + 1) / 2], jac[2 * (3 * MAXN) * (3 * MAXN + 1) / 2];
    objective(c, dl, res0, n_res);
    const int jslots[2] = {c->k_slot, c->th_slot};
    HF_OK(hessfit_force_compute_hessian_objective_jacobian(c->f, c->ctx, 0, jslots, 2, res0, n_res, jac, 2 * n_res));
    /* central differences in k: E, tr(G H), -y . F and the residuals are linear in k, L quadratic,
     * so any step is exact up to rounding; 0.1 k keeps the GPU's fixed-point forces (resolution
     * ~2e-10 kJ/mol/nm) from mattering */
    const double k = c->kind == HARMONIC ? 310.0 : 260.0, dk = 0.1 * k;
    double fd_e[2], fd_gh[2], fd_yf[2], fd_l[2], res[2][(3 * MAXN) * (3 * MAXN + 1) / 2];
    for (int s = 0; s < 2; s++) {
        set_slot(c, c->k_slot, k + (s == 0 ? dk : -dk));
        double fk[3 * MAXN] = {0}, hk[9 * MAXN * MAXN];
        fd_e[s] = energy_forces(c, fk);
        hessian(c, hk);
        fd_gh[s] = 0.0;
        fd_yf[s] = 0.0;
        for (int i = 0; i < dd; i++)
            fd_gh[s] += g[i] * hk[i];
        for (int i = 0; i < d; i++)
            fd_yf[s] -= y[i] * fk[i];
        fd_l[s] = objective(c, NULL, res[s], n_res);
    }
    set_slot(c, c->k_slot, k);
    const double fde = (fd_e[0] - fd_e[1]) / (2 * dk), fdgh = (fd_gh[0] - fd_gh[1]) / (2 * dk);
    const double fdyf = (fd_yf[0] - fd_yf[1]) / (2 * dk), fdl = (fd_l[0] - fd_l[1]) / (2 * dk);
    double jac_err = 0.0, jac_scale = 1e-300;
    for (long long i = 0; i < n_res; i++) {
        const double fdr = (res[0][i] - res[1][i]) / (2 * dk);
        jac_err = fmax(jac_err, fabs(jac[i] - fdr));
        jac_scale = fmax(jac_scale, fabs(fdr));
    }
    const double gh_scale = fmax(fabs(fdgh), test_max_abs(g, (size_t) dd) * hscale / k);
    const double yf_scale = fmax(fabs(fdyf), fscale / k);
    printf("  %-8s %-14s d/dk: E %.3g (FD %.3g), tr(G dH) %.3g (FD rel %.1e), y.dgradE %.3g (FD %.3g), dL %.4g (FD rel "
           "%.1e), Jacobian (FD rel %.1e)\n",
           kind_name[c->kind], what, dedp[c->k_slot], fde, dh[c->k_slot], fabs(dh[c->k_slot] - fdgh) / gh_scale,
           dg[c->k_slot], fdyf, dl[c->k_slot], fabs(dl[c->k_slot] - fdl) / fabs(fdl), jac_err / jac_scale);
    CHECK_CLOSE(dedp[c->k_slot], fde, 1e-6, fmax(fabs(fde), fabs(e) / k + 1e-12), "dE/dk vs FD");
    CHECK_CLOSE(dh[c->k_slot], fdgh, 1e-6, gh_scale, "tr(G dH/dk) vs FD");
    CHECK_CLOSE(dg[c->k_slot], fdyf, 1e-6, yf_scale, "y . d(grad E)/dk vs FD");
    CHECK_CLOSE(dl[c->k_slot], fdl, 1e-6, fabs(fdl), "the objective's dL/dk vs FD");
    CHECK(jac_err <= 1e-6 * jac_scale, "%s: the Jacobian's k column vs FD: %.3g of %.3g", what, jac_err, jac_scale);
    /* theta0: undefined at exactly linear (NaN), defined off it; dE/dtheta0 = -f'(pi - theta0) = 0 */
    const int th = c->th_slot;
    int jac_nan = 1;
    for (long long i = 0; i < n_res; i++)
        jac_nan &= isnan(jac[n_res + i]) || jac[n_res + i] == 0.0;
    if (linear) {
        CHECK(dedp[th] == 0.0, "%s: dE/dtheta0 = %g at exactly linear (0 expected)", what, dedp[th]);
        CHECK(isnan(dh[th]) && isnan(dg[th]) && isnan(dl[th]) && isnan(jac[n_res]) && jac_nan,
              "%s: theta0's derivatives of the forces and Hessian at exactly linear: %g %g %g %g (NaN expected)", what,
              dh[th], dg[th], dl[th], jac[n_res]);
    } else {
        CHECK(isfinite(dh[th]) && isfinite(dg[th]) && isfinite(dl[th]) && isfinite(jac[n_res]),
              "%s: theta0's derivatives off linear: %g %g %g %g", what, dh[th], dg[th], dl[th], jac[n_res]);
    }
}

/* (e) a GPU platform against Reference (the same force built twice): energy, forces, Hessian and
 * both contractions at pos (theta0's entries NaN on both or neither). */
static void compare_with_reference(lb_case *c, lb_case *ref, const double *pos, double t, const char *what) {
    const int d = 3 * c->n, dd = d * d;
    double e[2], f[2][3 * MAXN], h[2][9 * MAXN * MAXN], dh[2][64], dg[2][64], g[9 * MAXN * MAXN], y[3 * MAXN];
    for (int i = 0; i < d; i++) {
        y[i] = cos(1.0 + i);
        for (int j = 0; j < d; j++)
            g[i * d + j] = cos(0.3 * (i + j) + 0.1 * i * j);
    }
    for (int k = 0; k < 2; k++) {
        lb_case *x = k == 0 ? c : ref;
        set_positions(x, pos);
        memset(f[k], 0, sizeof f[k]);
        e[k] = energy_forces(x, f[k]);
        hessian(x, h[k]);
        HF_OK(hessfit_force_get_hessian_contraction_derivatives(x->f, x->ctx, g, dd, dh[k], x->n_slots));
        HF_OK(hessfit_force_get_gradient_contraction_derivatives(x->f, x->ctx, y, d, dg[k], x->n_slots));
    }
    const double hs = test_max_abs(h[1], (size_t) dd), fd = test_max_abs_diff(f[0], f[1], (size_t) d);
    const double hd = test_max_abs_diff(h[0], h[1], (size_t) dd) / hs;
    double cd = 0.0;
    for (int s = 0; s < c->n_slots; s++) {
        CHECK(isnan(dh[0][s]) == isnan(dh[1][s]) && isnan(dg[0][s]) == isnan(dg[1][s]),
              "%s: slot %d undefined on one platform only: %g %g, %g %g", what, s, dh[0][s], dh[1][s], dg[0][s], dg[1][s]);
        if (!isnan(dh[1][s]))
            cd = fmax(cd, fabs(dh[0][s] - dh[1][s]) / fmax(fabs(dh[1][s]), hs));
        if (!isnan(dg[1][s]))
            cd = fmax(cd, fabs(dg[0][s] - dg[1][s]) / fmax(fabs(dg[1][s]), 1.0));
    }
    printf("  %-8s %-14s %s vs Reference: energy %.1e, forces %.1e, Hessian %.1e, contractions %.1e\n",
           kind_name[c->kind], what, platform_name, fabs(e[0] - e[1]), fd, hd, cd);
    CHECK_CLOSE(e[0], e[1], 1e-12, fmax(fabs(e[1]), 1.0), "energy vs Reference");
    CHECK(fd <= 1e-9 * fmax(test_max_abs(f[1], (size_t) d), 1.0), "%s: forces vs Reference %.3g", what, fd);
    /* off linear the ordinary form's 1/sin theta amplifies the rounding of the positions by 1/t */
    const double tol = 1e-12 + (t > 0.0 ? 1e-15 / t : 0.0);
    CHECK(hd <= tol, "%s: Hessian vs Reference %.3g", what, hd);
    CHECK(cd <= tol, "%s: contractions vs Reference %.3g", what, cd);
}

/* One molecule (n = 3 or 6), one kind: (a)-(d) at linear, 1e-7 and 1e-4 rad off; (e) on a GPU. */
static void check_case(int kind, int n) {
    double e[3], p[3], q[3], pos[3 * MAXN];
    random_unit(e);
    perpendicular(e, p, q);
    const double la = n == 6 ? 0.146 : 0.11, lb = n == 6 ? 0.116 : 0.13;
    place(n, e, p, q, la, lb, 0.0, pos);
    lb_case c;
    build(&c, platform_name, kind, n, PI, pos);
    const int gpu = strcmp(platform_name, "Reference") != 0 && strcmp(platform_name, "CPU") != 0;
    lb_case ref;
    if (gpu)
        build(&ref, "Reference", kind, n, PI, pos);
    printf("%s bend, %d atoms, theta0 = 180 degrees, on %s:\n", kind_name[kind], n, platform_name);
    static double h0[9 * MAXN * MAXN], h[9 * MAXN * MAXN];
    const int dd = 9 * n * n;
    check_geometry(&c, pos, 1, h0, "linear");
    if (gpu)
        compare_with_reference(&c, &ref, pos, 0.0, "linear");
    const double norm0 = frobenius(h0, dd);
    const double offsets[2] = {1e-7, 1e-4};
    for (int i = 0; i < 2; i++) {
        const double t = offsets[i];
        double x[3 * MAXN];
        place(n, e, p, q, la, lb, t, x);
        char what[32];
        snprintf(what, sizeof what, "%.0e rad off", t);
        check_geometry(&c, x, 0, h, what);
        if (gpu)
            compare_with_reference(&c, &ref, x, t, what);
        double diff[9 * MAXN * MAXN];
        for (int j = 0; j < dd; j++)
            diff[j] = h[j] - h0[j];
        const double rel = frobenius(diff, dd) / norm0;
        const double bound = 20.0 * t + 1e-8;
        printf("  %-8s %-14s |H(t) - H(linear)| / |H(linear)| = %.2e (bound %.1e)\n", kind_name[kind], what, rel,
               bound);
        CHECK(rel <= bound, "%s: Hessian continuity at t = %g: %.3g > %.3g", kind_name[kind], t, rel, bound);
    }
    destroy(&c);
    if (gpu)
        destroy(&ref);
}

/* The errors: theta0 = 179 degrees at exactly linear (a cusp), a stretch-bend at a linear angle. */
static void check_errors(void) {
    double e[3], p[3], q[3], pos[9];
    random_unit(e);
    perpendicular(e, p, q);
    place(3, e, p, q, 0.11, 0.13, 0.0, pos);
    for (int kind = 0; kind < 2; kind++) {
        lb_case c;
        build(&c, platform_name, kind, 3, 179.0 * PI / 180.0, pos);
        double en, hb[81];
        HF_FAILS(hessfit_force_get_energy_forces(c.f, c.ctx, &en, NULL), HESSFIT_ERROR_GEOMETRY);
        CHECK(strstr(hessfit_last_error(), "angle 0") != NULL || strstr(hessfit_last_error(), "MM3") != NULL,
              "the message names the term: %s", hessfit_last_error());
        CHECK(strstr(hessfit_last_error(), "theta0 is not 180") != NULL, "the message says why: %s", hessfit_last_error());
        HF_FAILS(hessfit_force_get_hessian_blocks(c.f, c.ctx, hb, 81), HESSFIT_ERROR_GEOMETRY);
        destroy(&c);
    }
    /* a stretch-bend on the linear angle (theta0 = 180 degrees: still a cusp, k (dra + drb) dtheta) */
    hessfit_force *f;
    HF_OK(hessfit_force_create(&f));
    const int atoms[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        HF_OK(hessfit_force_add_particle(f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    HF_OK(hessfit_force_add_molecule(f, atoms, 3, NULL));
    HF_OK(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 2, add_slot(f, 50.0), add_slot(f, 0.1), add_slot(f, 0.12),
                                             add_slot(f, PI), 1.0, 1.0, NULL));
    OpenMM_System *sys = OpenMM_System_create();
    for (int i = 0; i < 3; i++)
        OpenMM_System_addParticle(sys, 12.0);
    HF_OK(hessfit_force_add_to_system(f, sys, NULL));
    OpenMM_Integrator *integ;
    OpenMM_Context *ctx = test_create_context(sys, platform_name, pos, 3, 0.001, &integ);
    double en;
    HF_FAILS(hessfit_force_get_energy_forces(f, ctx, &en, NULL), HESSFIT_ERROR_GEOMETRY);
    CHECK(strstr(hessfit_last_error(), "stretch-bend") != NULL, "the message names the term: %s", hessfit_last_error());
    OpenMM_Context_destroy(ctx);
    OpenMM_Integrator_destroy(integ);
    hessfit_force_destroy(f);
    OpenMM_System_destroy(sys);
}

int main(int argc, char **argv) {
    platform_name = test_platform_name(argc, argv);
    printf("test_linear_bend on %s (stock on Reference)\n", platform_name);
    test_seed(0x11BE7DULL);
    for (int kind = 0; kind < 2; kind++) {
        check_case(kind, 3);
        check_case(kind, 6);
    }
    check_errors();
    printf("test_linear_bend: OK\n");
    return 0;
}
