/*
 * test_reduced_particles (per platform): HessianForce's reduced particles (MacroModel's MM3*
 * reduced hydrogens), every term evaluated at x' = M x with x'_h = x_p + f (x_h - x_p).
 *
 * The System: molecule A, an ethane-like C0-C1 with hydrogens H2, H3 on C0 and H4, H5 on C1, and a
 * bridging hydrogen H6 bonded to C0 in the terms but reduced towards C1 (as MacroModel's bridging
 * hydrogens); MM3* bonds and angles, harmonic bonds and angles, two periodic torsions, three MM3*
 * pairs, three plain LJ + Coulomb pairs, the rest excluded; H2 -> C0, H4 -> C1, H6 -> C1 reduced with
 * factor 0.923. Molecule B, a water with its particles listed permuted (9, 7, 8), H8 -> O7 reduced
 * with factor 0.9. Some slots are shared by several terms.
 *
 * Asserts, on the platform given (argv[1], default Reference), against the same force without the
 * map ("plain") in a second Context at the positions M x built here by hand:
 *  (1) the energy and the molecule energies equal the plain ones (1e-12 relative);
 *  (2) forces = M^T F' and Hessian blocks = M^T H' M (dense products here; 1e-12 relative, plus
 *      2^-30 kJ/mol/nm where forces come back in fixed point), and both agree with central
 *      differences (forces: of the energy; Hessian: of the forces, step 1e-5 nm; 1e-6 relative);
 *  (3) dE/dslot equals the plain one and central differences over each slot; tr(G^T dH/dslot)
 *      equals the plain contraction of M G M^T and central differences of sum G_ij H_ij;
 *      y . d(grad E)/dslot equals the plain one of M y and -y . dF/dslot by central differences;
 *      sum_m w_m dE_m/dslot equals the plain one (all 1e-6 relative for differences, 1e-10 else);
 *  (4) the Hessian-space objective (frequencies paired by position with projection and masses,
 *      Hessian elements) has a gradient that agrees with central differences of its loss;
 *  (5) bad maps: particle out of range, partner in another molecule, a particle reduced twice, a
 *      reduced partner (hessfit_force_validate and Context creation name the reduced particle),
 *      and updateParametersInContext with a changed map gives the energy of a fresh Context.
 */
#include "hessfit_units.h"
#include "test_util.h"
#include <string.h>

#define N 10
#define DIM (3 * N)
#define MAXSLOTS 64
#define FACTOR 0.923

static const char *platform_name = "Reference";
static int fixed_point_forces(void) { return strcmp(platform_name, "Reference") != 0; }

/* the reduced particles: particle, partner, factor */
static const int reduced_particle[4] = {2, 4, 6, 8}, reduced_partner[4] = {0, 1, 1, 7};
static const double reduced_factor[4] = {FACTOR, FACTOR, FACTOR, 0.9};
#define N_REDUCED 4

static const int mol_a[7] = {0, 1, 2, 3, 4, 5, 6}, mol_b[3] = {9, 7, 8};

static int slot(hessfit_force *f, double v) {
    int s;
    HF_OK(hessfit_force_add_parameter(f, v, &s));
    return s;
}

/* The force; with_map adds the reduced particles. */
static hessfit_force *build_force(int with_map) {
    hessfit_force *f;
    HF_OK(hessfit_force_create(&f));
    const int qc = slot(f, -0.21), qh = slot(f, 0.07), qo = slot(f, -0.8), qw = slot(f, 0.4);
    const int sc = slot(f, 0.35), sh = slot(f, 0.25), so = slot(f, 0.315), ec = slot(f, 0.28), eh = slot(f, 0.126);
    const int eo = slot(f, 0.64);
    for (int i = 0; i < N; i++) {
        const int carbon = i <= 1, oxygen = i == 7, water = i >= 7;
        HF_OK(hessfit_force_add_particle(f, carbon ? qc : oxygen ? qo : water ? qw : qh, carbon ? sc : oxygen ? so : sh,
                                         carbon ? ec : oxygen ? eo : eh, NULL));
    }
    HF_OK(hessfit_force_add_molecule(f, mol_a, 7, NULL));
    HF_OK(hessfit_force_add_molecule(f, mol_b, 3, NULL));
    /* A: bonds (C-H k and r0 shared by the harmonic ones) */
    const int kch = slot(f, 1.4e5), rch = slot(f, 0.109);
    HF_OK(hessfit_force_add_mm3_bond(f, 0, 1, slot(f, 1.9e5), slot(f, 0.1523), NULL));
    HF_OK(hessfit_force_add_bond(f, 0, 2, kch, rch, NULL));
    HF_OK(hessfit_force_add_mm3_bond(f, 0, 3, slot(f, 2.0e5), slot(f, 0.1105), NULL));
    HF_OK(hessfit_force_add_bond(f, 1, 4, kch, rch, NULL));
    HF_OK(hessfit_force_add_mm3_bond(f, 1, 5, slot(f, 2.05e5), slot(f, 0.1102), NULL));
    HF_OK(hessfit_force_add_bond(f, 0, 6, slot(f, 1.1e5), slot(f, 0.112), NULL));
    /* A: angles */
    const int kang = slot(f, 290.0), tang = slot(f, 1.91);
    HF_OK(hessfit_force_add_mm3_angle(f, 2, 0, 1, slot(f, 330.0), slot(f, 1.92), NULL));
    HF_OK(hessfit_force_add_angle(f, 3, 0, 1, kang, tang, NULL));
    HF_OK(hessfit_force_add_mm3_angle(f, 0, 1, 4, slot(f, 310.0), slot(f, 1.93), NULL));
    HF_OK(hessfit_force_add_angle(f, 5, 1, 0, kang, tang, NULL));
    HF_OK(hessfit_force_add_angle(f, 6, 0, 1, slot(f, 250.0), slot(f, 1.89), NULL));
    HF_OK(hessfit_force_add_angle(f, 2, 0, 3, slot(f, 280.0), slot(f, 1.88), NULL));
    /* A: torsions */
    HF_OK(hessfit_force_add_periodic_torsion(f, 2, 0, 1, 4, 3, slot(f, 1.3), slot(f, 0.1), NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, 3, 0, 1, 5, 3, slot(f, 0.9), slot(f, -0.2), NULL));
    /* A: 1-2 and 1-3 pairs excluded, three 1-4 pairs MM3*, the other three plain */
    static const int excl[15][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {1, 5}, {0, 6}, {1, 2}, {1, 3},
                                    {1, 6}, {0, 4}, {0, 5}, {2, 3}, {2, 6}, {3, 6}, {4, 5}};
    for (int e = 0; e < 15; e++)
        HF_OK(hessfit_force_add_exclusion(f, excl[e][0], excl[e][1], NULL));
    const int rhh = slot(f, 0.324), ehh = slot(f, 0.2);
    HF_OK(hessfit_force_add_mm3_pair(f, 2, 4, rhh, ehh, slot(f, 0.0049), NULL));
    HF_OK(hessfit_force_add_mm3_pair(f, 3, 5, rhh, ehh, slot(f, 0.0036), NULL));
    HF_OK(hessfit_force_add_mm3_pair(f, 6, 4, slot(f, 0.33), ehh, slot(f, 0.0042), NULL));
    /* B: a water with its H-H pair plain */
    HF_OK(hessfit_force_add_bond(f, 7, 8, slot(f, 2.3e5), slot(f, 0.0957), NULL));
    HF_OK(hessfit_force_add_mm3_bond(f, 7, 9, slot(f, 2.2e5), slot(f, 0.0962), NULL));
    HF_OK(hessfit_force_add_angle(f, 8, 7, 9, slot(f, 320.0), slot(f, 1.82), NULL));
    HF_OK(hessfit_force_add_exclusion(f, 7, 8, NULL));
    HF_OK(hessfit_force_add_exclusion(f, 7, 9, NULL));
    for (int r = 0; with_map && r < N_REDUCED; r++)
        HF_OK(hessfit_force_add_reduced_particle(f, reduced_particle[r], reduced_partner[r], reduced_factor[r], NULL));
    return f;
}

typedef struct {
    OpenMM_System *system;
    hessfit_force *force;
    OpenMM_Context *context;
    OpenMM_Integrator *integrator;
    int nslots;
    long long hsize, offset[3];
} Setup;

static const double masses[N] = {12.011, 12.011, 1.008, 1.008, 1.008, 1.008, 1.008, 15.999, 1.008, 1.008};

static void setup_create(Setup *s, int with_map, const double *pos) {
    s->system = OpenMM_System_create();
    for (int i = 0; i < N; i++)
        OpenMM_System_addParticle(s->system, masses[i]);
    s->force = build_force(with_map);
    HF_OK(hessfit_force_get_num_parameters(s->force, &s->nslots));
    CHECK(s->nslots <= MAXSLOTS, "too many slots (%d)", s->nslots);
    HF_OK(hessfit_force_get_hessian_size(s->force, &s->hsize));
    for (int m = 0; m <= 2; m++)
        HF_OK(hessfit_force_get_hessian_block_offset(s->force, m, &s->offset[m]));
    HF_OK(hessfit_force_add_to_system(s->force, s->system, NULL));
    s->context = test_create_context(s->system, platform_name, pos, N, 0.001, &s->integrator);
}

static void setup_destroy(Setup *s) {
    OpenMM_Context_destroy(s->context);
    OpenMM_Integrator_destroy(s->integrator);
    hessfit_force_destroy(s->force);
    OpenMM_System_destroy(s->system);
}

static double energy_forces(Setup *s, double *f) {
    double e = 0.0, scratch[DIM];
    HF_OK(hessfit_force_get_energy_forces(s->force, s->context, &e, f ? f : scratch));
    return e;
}

/* ---- the map and the dense System-order matrices ------------------------------------------- */

/* M (DIM x DIM, row-major): x' = M x. */
static void map_matrix(double *m) {
    memset(m, 0, sizeof(double) * DIM * DIM);
    for (int i = 0; i < DIM; i++)
        m[i * DIM + i] = 1.0;
    for (int r = 0; r < N_REDUCED; r++)
        for (int c = 0; c < 3; c++) {
            const int h = 3 * reduced_particle[r] + c, p = 3 * reduced_partner[r] + c;
            m[h * DIM + h] = reduced_factor[r];
            m[h * DIM + p] = 1.0 - reduced_factor[r];
        }
}

/* c = op(a) b op(d) for DIM x DIM matrices, op = transpose where asked. */
static void triple(const double *a, int ta, const double *b, const double *d, int td, double *c) {
    double t[DIM * DIM];
    for (int i = 0; i < DIM; i++)
        for (int j = 0; j < DIM; j++) {
            double sum = 0.0;
            for (int k = 0; k < DIM; k++)
                sum += (ta ? a[k * DIM + i] : a[i * DIM + k]) * b[k * DIM + j];
            t[i * DIM + j] = sum;
        }
    for (int i = 0; i < DIM; i++)
        for (int j = 0; j < DIM; j++) {
            double sum = 0.0;
            for (int k = 0; k < DIM; k++)
                sum += t[i * DIM + k] * (td ? d[j * DIM + k] : d[k * DIM + j]);
            c[i * DIM + j] = sum;
        }
}

/* Blocks (the force's layout) <-> a dense System-order matrix (zero between molecules). */
static void blocks_to_dense(const Setup *s, const double *blocks, double *dense) {
    memset(dense, 0, sizeof(double) * DIM * DIM);
    const int *mols[2] = {mol_a, mol_b}, sizes[2] = {7, 3};
    for (int m = 0; m < 2; m++) {
        const int d = 3 * sizes[m];
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++)
                dense[(3 * mols[m][i / 3] + i % 3) * DIM + 3 * mols[m][j / 3] + j % 3] = blocks[s->offset[m] + i * d + j];
    }
}

static void dense_to_blocks(const Setup *s, const double *dense, double *blocks) {
    const int *mols[2] = {mol_a, mol_b}, sizes[2] = {7, 3};
    for (int m = 0; m < 2; m++) {
        const int d = 3 * sizes[m];
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++)
                blocks[s->offset[m] + i * d + j] = dense[(3 * mols[m][i / 3] + i % 3) * DIM + 3 * mols[m][j / 3] + j % 3];
    }
}

static void compare(const char *what, const double *got, const double *want, size_t n, double rel, double abs_extra) {
    const double diff = test_max_abs_diff(got, want, n), scale = test_max_abs(want, n);
    printf("  %-48s max |diff| %.3g (scale %.3g)\n", what, diff, scale);
    CHECK(scale > 0.0, "%s: all zero", what);
    CHECK(diff <= rel * scale + abs_extra, "%s differs: %.3g (scale %.3g)", what, diff, scale);
}

/* ---- (1)-(3) ---------------------------------------------------------------------------------- */

static void check_against_plain(const double *pos) {
    double m[DIM * DIM], mpos[DIM];
    map_matrix(m);
    for (int i = 0; i < DIM; i++) {
        mpos[i] = 0.0;
        for (int k = 0; k < DIM; k++)
            mpos[i] += m[i * DIM + k] * pos[k];
    }
    Setup red, plain;
    setup_create(&red, 1, pos);
    setup_create(&plain, 0, mpos);
    const int ns = red.nslots;
    const double fixed = fixed_point_forces() ? 0x1p-30 : 0.0;
    printf("(1) energy and molecule energies at M x\n");
    double f[DIM], fp[DIM], want[DIM];
    const double e = energy_forces(&red, f), ep = energy_forces(&plain, fp);
    compare("energy", &e, &ep, 1, 1e-12, 0.0);
    double em[2], emp[2];
    HF_OK(hessfit_force_get_molecule_energies(red.force, red.context, em, 2));
    HF_OK(hessfit_force_get_molecule_energies(plain.force, plain.context, emp, 2));
    compare("molecule energies", em, emp, 2, 1e-12, 0.0);

    printf("(2) forces M^T F' and Hessian M^T H' M, and their central differences\n");
    for (int i = 0; i < DIM; i++) {
        want[i] = 0.0;
        for (int k = 0; k < DIM; k++)
            want[i] += m[k * DIM + i] * fp[k];
    }
    compare("forces vs M^T F'", f, want, DIM, 1e-12, 2 * fixed);
    double *h = malloc(sizeof(double) * (size_t) red.hsize), *hp = malloc(sizeof(double) * (size_t) red.hsize);
    double hd[DIM * DIM], hpd[DIM * DIM], hwant[DIM * DIM], hfd[DIM * DIM];
    CHECK(h && hp, "out of memory");
    HF_OK(hessfit_force_get_hessian_blocks(red.force, red.context, h, red.hsize));
    HF_OK(hessfit_force_get_hessian_blocks(plain.force, plain.context, hp, plain.hsize));
    blocks_to_dense(&red, h, hd);
    blocks_to_dense(&plain, hp, hpd);
    triple(m, 1, hpd, m, 0, hwant);
    compare("Hessian vs M^T H' M", hd, hwant, DIM * DIM, 1e-12, 0.0);
    for (int i = 0; i < DIM; i++)
        for (int j = 0; j < i; j++)
            CHECK(hd[i * DIM + j] == hd[j * DIM + i], "the Hessian is not exactly symmetric at (%d, %d)", i, j);
    /* central differences in x */
    const double step = 1e-5;
    double x[DIM], fplus[DIM], fminus[DIM], fdf[DIM];
    for (int i = 0; i < DIM; i++) {
        memcpy(x, pos, sizeof x);
        x[i] = pos[i] + step;
        test_set_positions(red.context, x, N);
        const double eplus = energy_forces(&red, fplus);
        x[i] = pos[i] - step;
        test_set_positions(red.context, x, N);
        const double eminus = energy_forces(&red, fminus);
        fdf[i] = -(eplus - eminus) / (2 * step);
        for (int j = 0; j < DIM; j++)
            hfd[j * DIM + i] = -(fplus[j] - fminus[j]) / (2 * step);
    }
    test_set_positions(red.context, pos, N);
    compare("forces vs central differences of E", f, fdf, DIM, 1e-6, 0.0);
    compare("Hessian vs central differences of F", hd, hfd, DIM * DIM, 1e-6, 2 * fixed / step);

    printf("(3) slot derivatives and contractions\n");
    double d[MAXSLOTS], dp[MAXSLOTS], dfd[MAXSLOTS], table[MAXSLOTS];
    HF_OK(hessfit_force_get_parameter_derivatives(red.force, red.context, d, ns));
    HF_OK(hessfit_force_get_parameter_derivatives(plain.force, plain.context, dp, ns));
    compare("dE/dslot vs plain", d, dp, (size_t) ns, 1e-10, 0.0);
    double w[2] = {0.7, -1.3}, dw[MAXSLOTS], dwp[MAXSLOTS];
    HF_OK(hessfit_force_get_molecule_energy_derivatives(red.force, red.context, w, 2, dw, ns));
    HF_OK(hessfit_force_get_molecule_energy_derivatives(plain.force, plain.context, w, 2, dwp, ns));
    compare("sum_m w_m dE_m/dslot vs plain", dw, dwp, (size_t) ns, 1e-10, 0.0);
    /* G random symmetric, y random; their mapped forms for the plain force */
    double gd[DIM * DIM], gmapped[DIM * DIM], y[DIM], my[DIM];
    double *g = malloc(sizeof(double) * (size_t) red.hsize), *gp = malloc(sizeof(double) * (size_t) red.hsize);
    CHECK(g && gp, "out of memory");
    test_seed(11);
    for (int mol = 0; mol < 2; mol++) {
        const int dd = mol == 0 ? 21 : 9;
        for (int i = 0; i < dd; i++)
            for (int j = i; j < dd; j++)
                g[red.offset[mol] + i * dd + j] = g[red.offset[mol] + j * dd + i] = test_uniform(-1.0, 1.0);
    }
    blocks_to_dense(&red, g, gd);
    triple(m, 0, gd, m, 1, gmapped);
    dense_to_blocks(&red, gmapped, gp);
    for (int i = 0; i < DIM; i++)
        y[i] = test_uniform(-1.0, 1.0);
    for (int i = 0; i < DIM; i++) {
        my[i] = 0.0;
        for (int k = 0; k < DIM; k++)
            my[i] += m[i * DIM + k] * y[k];
    }
    double c[MAXSLOTS], cp[MAXSLOTS], cfd[MAXSLOTS], yc[MAXSLOTS], ycp[MAXSLOTS], ycfd[MAXSLOTS];
    HF_OK(hessfit_force_get_hessian_contraction_derivatives(red.force, red.context, g, red.hsize, c, ns));
    HF_OK(hessfit_force_get_hessian_contraction_derivatives(plain.force, plain.context, gp, plain.hsize, cp, ns));
    compare("tr(G^T dH/dslot) vs plain with M G M^T", c, cp, (size_t) ns, 1e-10, 0.0);
    HF_OK(hessfit_force_get_gradient_contraction_derivatives(red.force, red.context, y, DIM, yc, ns));
    HF_OK(hessfit_force_get_gradient_contraction_derivatives(plain.force, plain.context, my, DIM, ycp, ns));
    compare("y . d(grad E)/dslot vs plain with M y", yc, ycp, (size_t) ns, 1e-10, 0.0);
    /* central differences over every slot */
    HF_OK(hessfit_force_get_parameters(red.force, table, ns));
    double sy = 0.0;
    for (int i = 0; i < DIM; i++)
        sy += fabs(y[i]);
    double worst_d = 0.0, worst_c = 0.0, worst_y = 0.0;
    for (int sl = 0; sl < ns; sl++) {
        const double p0 = table[sl], dpar = 1e-6 * fabs(p0);
        double ev[2], hv[2], fv[2][DIM];
        for (int k = 0; k < 2; k++) {
            table[sl] = p0 + (k == 0 ? dpar : -dpar);
            HF_OK(hessfit_force_set_parameters(red.force, table, ns));
            HF_OK(hessfit_force_update_parameters_in_context(red.force, red.context));
            ev[k] = energy_forces(&red, fv[k]);
            HF_OK(hessfit_force_get_hessian_blocks(red.force, red.context, h, red.hsize));
            hv[k] = 0.0;
            for (long long i = 0; i < red.hsize; i++)
                hv[k] += g[i] * h[i];
        }
        table[sl] = p0;
        dfd[sl] = (ev[0] - ev[1]) / (2 * dpar);
        cfd[sl] = (hv[0] - hv[1]) / (2 * dpar);
        ycfd[sl] = 0.0;
        for (int i = 0; i < DIM; i++)
            ycfd[sl] -= y[i] * (fv[0][i] - fv[1][i]) / (2 * dpar);
        /* scales: the value, and the magnitude the difference quotient works with */
        double gh = 0.0, yf = 0.0;
        blocks_to_dense(&red, h, hd);
        for (long long i = 0; i < red.hsize; i++)
            gh += fabs(g[i] * h[i]);
        for (int i = 0; i < DIM; i++)
            yf += fabs(y[i] * f[i]);
        const double ed = fabs(dfd[sl] - d[sl]) / fmax(fabs(d[sl]), fabs(e) / fabs(p0));
        const double cd = fabs(cfd[sl] - c[sl]) / fmax(fabs(c[sl]), gh / fabs(p0));
        const double yd = fabs(ycfd[sl] - yc[sl]) / fmax(fabs(yc[sl]), yf / fabs(p0) + sy * fixed / dpar);
        worst_d = fmax(worst_d, ed);
        worst_c = fmax(worst_c, cd);
        worst_y = fmax(worst_y, yd);
        CHECK(ed <= 1e-6, "slot %d: dE/dslot %.12g vs central difference %.12g", sl, d[sl], dfd[sl]);
        CHECK(cd <= 1e-6, "slot %d: tr(G^T dH/dslot) %.12g vs central difference %.12g", sl, c[sl], cfd[sl]);
        CHECK(yd <= 1e-6, "slot %d: y . d(grad E)/dslot %.12g vs central difference %.12g", sl, yc[sl], ycfd[sl]);
    }
    HF_OK(hessfit_force_set_parameters(red.force, table, ns));
    HF_OK(hessfit_force_update_parameters_in_context(red.force, red.context));
    printf("  central differences over %d slots: max rel. error dE/dslot %.3g, tr(G^T dH/dslot) %.3g, "
           "y . d(grad E)/dslot %.3g\n", ns, worst_d, worst_c, worst_y);
    free(h); free(hp); free(g); free(gp);
    setup_destroy(&red);
    setup_destroy(&plain);
}

/* ---- (4) the Hessian-space objective ------------------------------------------------------------ */

static void check_objective(const double *pos) {
    printf("(4) Hessian-space objective (frequencies with masses and projection, Hessian elements)\n");
    Setup s;
    setup_create(&s, 1, pos);
    const int ns = s.nslots;
    double *h = malloc(sizeof(double) * (size_t) s.hsize), *hw = malloc(sizeof(double) * (size_t) s.hsize);
    CHECK(h && hw, "out of memory");
    HF_OK(hessfit_force_get_hessian_blocks(s.force, s.context, h, s.hsize));
    /* Hessian-element targets: the Hessian scaled by 1.05, weights 1e-3 */
    for (long long i = 0; i < s.hsize; i++) {
        hw[i] = 1e-3;
        h[i] *= 1.05;
    }
    const double freq_a[6] = {900.0, 1100.0, 1300.0, 1450.0, 2900.0, 3000.0}, freq_b[3] = {1600.0, 3600.0, 3700.0};
    const double wa[6] = {1, 1, 1, 1, 1, 1}, wb[3] = {1, 1, 1};
    double mass_a[7], mass_b[3];
    for (int i = 0; i < 7; i++)
        mass_a[i] = masses[mol_a[i]];
    for (int i = 0; i < 3; i++)
        mass_b[i] = masses[mol_b[i]];
    hessfit_molecule_objective mo[2];
    for (int m = 0; m < 2; m++) {
        hessfit_molecule_objective_init(&mo[m]);
        mo[m].masses = m == 0 ? mass_a : mass_b;
        mo[m].n_masses = m == 0 ? 7 : 3;
        mo[m].frequency_pairing = HESSFIT_PAIR_BY_POSITION;
        mo[m].project_external = 1;
        mo[m].frequency_targets = m == 0 ? freq_a : freq_b;
        mo[m].n_frequency_targets = mo[m].n_frequency_weights = m == 0 ? 6 : 3;
        mo[m].frequency_weights = m == 0 ? wa : wb;
        mo[m].hessian_targets = h + s.offset[m];
        mo[m].hessian_weights = hw + s.offset[m];
        mo[m].n_hessian_targets = mo[m].n_hessian_weights = s.offset[m + 1] - s.offset[m];
    }
    HF_OK(hessfit_force_set_hessian_objective(s.force, s.context, mo, 2, hessfit_frequency_factor_kj_mol_nm2_amu()));
    double loss, grad[MAXSLOTS], table[MAXSLOTS];
    HF_OK(hessfit_force_compute_hessian_objective(s.force, s.context, &loss, grad, ns, NULL, 0));
    HF_OK(hessfit_force_get_parameters(s.force, table, ns));
    double gmax = test_max_abs(grad, (size_t) ns), worst = 0.0;
    CHECK(gmax > 0.0 && isfinite(gmax), "dL/dslot max %g", gmax);
    for (int sl = 0; sl < ns; sl++) {
        const double p0 = table[sl], dp = 1e-6 * fabs(p0);
        double l[2];
        for (int k = 0; k < 2; k++) {
            table[sl] = p0 + (k == 0 ? dp : -dp);
            HF_OK(hessfit_force_set_parameters(s.force, table, ns));
            HF_OK(hessfit_force_update_parameters_in_context(s.force, s.context));
            HF_OK(hessfit_force_compute_hessian_objective(s.force, s.context, &l[k], NULL, 0, NULL, 0));
        }
        table[sl] = p0;
        const double fd = (l[0] - l[1]) / (2 * dp);
        const double rel = fabs(fd - grad[sl]) / fmax(fabs(grad[sl]), fmax(1e-3 * gmax, 1e-9 * loss / fabs(p0)));
        worst = fmax(worst, rel);
        CHECK(rel <= 1e-5, "slot %d: dL/dslot %.12g vs central difference %.12g", sl, grad[sl], fd);
    }
    printf("  loss %.10g, max |dL/dslot| %.4g, central differences over %d slots: max rel. error %.3g\n", loss, gmax,
           ns, worst);
    free(h); free(hw);
    setup_destroy(&s);
}

/* ---- (5) bad maps and a changed map -------------------------------------------------------------- */

static void expect_invalid(int particle, int partner, int twice, hessfit_status want, const char *part) {
    hessfit_force *f = build_force(0);
    OpenMM_System *system = OpenMM_System_create();
    for (int i = 0; i < N; i++)
        OpenMM_System_addParticle(system, masses[i]);
    if (twice)
        HF_OK(hessfit_force_add_reduced_particle(f, particle, partner, FACTOR, NULL));
    HF_OK(hessfit_force_add_reduced_particle(f, twice == 2 ? partner : particle, twice == 2 ? 3 : partner, FACTOR,
                                             NULL));
    test_expect_error(hessfit_force_validate(f, system), want, part, NULL, "an invalid map");
    hessfit_force_destroy(f);
    OpenMM_System_destroy(system);
}

static void check_bad_maps_and_update(const double *pos) {
    printf("(5) invalid maps and a changed map\n");
    expect_invalid(2, 10, 0, HESSFIT_ERROR_INDEX, "reduced particle 0 (particle 2, partner 10)");
    expect_invalid(8, 0, 0, HESSFIT_ERROR_TOPOLOGY, "joins molecules 1 and 0");
    expect_invalid(2, 0, 1, HESSFIT_ERROR_TOPOLOGY, "reduces particle 2 again");
    expect_invalid(2, 0, 2, HESSFIT_ERROR_TOPOLOGY, "which is itself reduced");

    /* a map changed through updateParametersInContext = a fresh Context with that map */
    Setup s, fresh;
    setup_create(&s, 1, pos);
    HF_OK(hessfit_force_set_reduced_particle(s.force, 1, 5, 1, 0.95));
    HF_OK(hessfit_force_update_parameters_in_context(s.force, s.context));
    setup_create(&fresh, 1, pos);
    HF_OK(hessfit_force_set_reduced_particle(fresh.force, 1, 5, 1, 0.95));
    OpenMM_Context_reinitialize(fresh.context, OpenMM_True);
    double f1[DIM], f2[DIM];
    const double e1 = energy_forces(&s, f1), e2 = energy_forces(&fresh, f2);
    compare("energy after a changed map vs a fresh Context", &e1, &e2, 1, 1e-13, 0.0);
    compare("forces after a changed map vs a fresh Context", f1, f2, DIM, 1e-13, 0.0);
    /* an invalid change is refused with the map named */
    HF_OK(hessfit_force_set_reduced_particle(s.force, 1, 4, 2, 0.95)); /* 2 is reduced particle 0 */
    test_expect_error(hessfit_force_update_parameters_in_context(s.force, s.context), HESSFIT_ERROR_TOPOLOGY,
                      "reduced particle 1", "itself reduced", "an invalid map in updateParametersInContext");
    setup_destroy(&s);
    setup_destroy(&fresh);
}

int main(int argc, char **argv) {
    platform_name = test_platform_name(argc, argv);
    test_load_plugins();
    test_require_platform(platform_name);
    printf("test_reduced_particles on %s\n", platform_name);
    /* nm: A ethane-like (H6 between C0 and C1), B a water 1 nm away */
    double pos[DIM] = {0.000, 0.000, 0.000,   0.153, 0.000, 0.000,   -0.037, 0.103, 0.000,
                       -0.036, -0.052, 0.089, 0.190, 0.051, 0.089,   0.189, -0.103, 0.002,
                       0.060, -0.060, -0.085, 1.000, 1.000, 1.000,   1.0957, 1.000, 1.000,
                       0.976, 1.0927, 1.000};
    test_seed(5);
    for (int i = 0; i < DIM; i++)
        pos[i] += 0.006 * (test_random() - 0.5);
    check_against_plain(pos);
    check_objective(pos);
    check_bad_maps_and_update(pos);
    printf("test_reduced_particles passed\n");
    return 0;
}
