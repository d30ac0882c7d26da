/* The one-term-kind HessianForce molecules (term_cases.h). */
#include "term_cases.h"
#include "test_util.h"

#define PI 3.14159265358979323846

int add_slot(hessfit_force *f, double value) {
    int s = -1;
    HF_OK(hessfit_force_add_parameter(f, value, &s));
    return s;
}

/* A random unit vector: a point of the unit ball (not too near the centre), normalised. */
static void random_direction(double u[3]) {
    double n2;
    do {
        n2 = 0.0;
        for (int c = 0; c < 3; c++) {
            u[c] = test_uniform(-1.0, 1.0);
            n2 += u[c] * u[c];
        }
    } while (n2 < 0.01 || n2 > 1.0);
    for (int c = 0; c < 3; c++)
        u[c] /= sqrt(n2);
}

static void add_slots(hessfit_force *f, const double *values, int n) {
    for (int i = 0; i < n; i++)
        add_slot(f, values[i]);
}

static void add_bare_particles(hessfit_force *f, int n) {
    for (int i = 0; i < n; i++)
        HF_OK(hessfit_force_add_particle(f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
}

/* the C API's adders of two-particle and three-particle two-slot terms */
typedef hessfit_status (*add_bond_fn)(hessfit_force *, int, int, int, int, int *);
typedef hessfit_status (*add_angle_fn)(hessfit_force *, int, int, int, int, int, int *);

static void build_bonds_with(hessfit_force *f, add_bond_fn add) {
    const double v[4] = {1.8e5, 0.109, 1.3e5, 0.1529};
    add_slots(f, v, 4);
    add_bare_particles(f, 4);
    HF_OK(add(f, 0, 1, 0, 1, NULL));
    HF_OK(add(f, 1, 2, 2, 3, NULL));
    HF_OK(add(f, 2, 3, 0, 1, NULL));
}

void build_bond(hessfit_force *f) { build_bonds_with(f, hessfit_force_add_bond); }
void build_mm3_bond(hessfit_force *f) { build_bonds_with(f, hessfit_force_add_mm3_bond); }

double mm3_bond_energy(double k, double r, double r0) {
    const double d = r - r0, da = 10.0 * (r - r0); /* nm, Angstrom */
    return k * d * d * (1.0 - 2.55 * da + 3.793125 * da * da);
}

double mm3_angle_energy(double k, double theta, double theta0) {
    const double d = theta - theta0, dd = d * (180.0 / PI); /* rad, degrees */
    return k * d * d * (1.0 - 0.014 * dd + 5.6e-5 * dd * dd - 7.0e-7 * dd * dd * dd + 2.2e-8 * dd * dd * dd * dd);
}

/* ---- MM3* distance scales and cross terms ------------------------------------------------------ */

static const double mm3_bond_scales[3] = {1.0, MM3_REDUCED_H_SCALE, 1.05};

void build_mm3_bond_scaled(hessfit_force *f) {
    build_mm3_bond(f);
    for (int b = 1; b < 3; b++)
        HF_OK(hessfit_force_set_mm3_bond_distance_scale(f, b, mm3_bond_scales[b]));
}

double mm3_bonds_scaled_energy(const double *x, const double *p, double *scale) {
    const int atoms[3][2] = {{0, 1}, {1, 2}, {2, 3}}, slots[3] = {0, 2, 0};
    double e = 0.0;
    *scale = 0.0;
    for (int b = 0; b < 3; b++) {
        const double eb = mm3_bond_energy(p[slots[b]], mm3_bond_scales[b] * test_distance(x, atoms[b][0], atoms[b][1]),
                                          p[slots[b] + 1]);
        e += eb;
        *scale += fabs(eb);
    }
    return e;
}

static const struct {
    int atoms[3], slots[4];
    double sa, sb;
} stretch_bends[3] = {
    {{0, 1, 2}, {0, 1, 2, 3}, 1.0, MM3_REDUCED_H_SCALE},
    {{1, 2, 3}, {4, 2, 1, 5}, 1.0, 1.0},
    {{2, 3, 4}, {0, 1, 2, 3}, MM3_REDUCED_H_SCALE, 1.04},
};

void build_mm3_stretch_bend(hessfit_force *f) {
    const double v[6] = {600.0, 0.109, 0.1529, 1.911, -350.0, 2.0944}; /* kJ/mol/nm/rad, nm, nm, rad */
    add_slots(f, v, 6);
    add_bare_particles(f, 5);
    for (int t = 0; t < 3; t++) {
        const int *a = stretch_bends[t].atoms, *sl = stretch_bends[t].slots;
        HF_OK(hessfit_force_add_mm3_stretch_bend(f, a[0], a[1], a[2], sl[0], sl[1], sl[2], sl[3], stretch_bends[t].sa,
                                                 stretch_bends[t].sb, NULL));
    }
}

double mm3_stretch_bends_energy(const double *x, const double *p, double *scale) {
    double e = 0.0;
    *scale = 0.0;
    for (int t = 0; t < 3; t++) {
        const int *a = stretch_bends[t].atoms, *sl = stretch_bends[t].slots;
        const double dra = stretch_bends[t].sa * test_distance(x, a[0], a[1]) - p[sl[1]];
        const double drb = stretch_bends[t].sb * test_distance(x, a[2], a[1]) - p[sl[2]];
        const double et = p[sl[0]] * (dra + drb) * (test_angle(x, a[0], a[1], a[2]) - p[sl[3]]);
        e += et;
        *scale += fabs(et);
    }
    return e;
}

static const struct {
    int atoms[5], slots[3];
} bend_bends[4] = {
    {{1, 0, 2, 3, 4}, {0, 1, 2}}, /* 5 distinct particles */
    {{1, 0, 3, 4, 1}, {3, 2, 1}}, /* p5 = p1 */
    {{2, 0, 4, 2, 3}, {0, 1, 1}}, /* p4 = p1 */
    {{1, 0, 4, 4, 2}, {3, 1, 2}}, /* p4 = p3 */
};

void build_mm3_bend_bend(hessfit_force *f) {
    const double v[4] = {45.0, 1.911, 1.85, -30.0}; /* kJ/mol/rad^2, rad, rad */
    add_slots(f, v, 4);
    add_bare_particles(f, 5);
    for (int t = 0; t < 4; t++) {
        const int *a = bend_bends[t].atoms, *sl = bend_bends[t].slots;
        HF_OK(hessfit_force_add_mm3_bend_bend(f, a[0], a[1], a[2], a[3], a[4], sl[0], sl[1], sl[2], NULL));
    }
}

double mm3_bend_bends_energy(const double *x, const double *p, double *scale) {
    double e = 0.0;
    *scale = 0.0;
    for (int t = 0; t < 4; t++) {
        const int *a = bend_bends[t].atoms, *sl = bend_bends[t].slots;
        const double et = p[sl[0]] * (test_angle(x, a[0], a[1], a[2]) - p[sl[1]]) * (test_angle(x, a[3], a[1], a[4]) - p[sl[2]]);
        e += et;
        *scale += fabs(et);
    }
    return e;
}

void mm3_star5_positions(double *pos) {
    for (;;) {
        pos[0] = pos[1] = pos[2] = 0.0;
        for (int a = 1; a < 5; a++) {
            double u[3];
            random_direction(u);
            const double r = test_uniform(0.09, 0.16);
            for (int c = 0; c < 3; c++)
                pos[3 * a + c] = r * u[c];
        }
        int ok = 1;
        for (int a = 1; a < 5; a++)
            for (int b = a + 1; b < 5; b++) {
                const double t = test_angle(pos, a, 0, b);
                ok &= t > 45.0 * PI / 180.0 && t < 165.0 * PI / 180.0;
            }
        if (ok)
            break;
    }
    test_random_pose(pos, 5);
}

static const struct {
    int atoms[4], slots[2];
    double s;
} torsion_stretches[3] = {
    {{0, 1, 2, 3}, {0, 1}, 1.0},
    {{1, 2, 3, 4}, {2, 3}, MM3_REDUCED_H_SCALE},
    {{3, 2, 1, 0}, {2, 1}, 0.97},
};

void build_mm3_torsion_stretch(hessfit_force *f) {
    const double v[4] = {25.0, 0.1529, -15.0, 0.141}; /* kJ/mol/nm, nm */
    add_slots(f, v, 4);
    add_bare_particles(f, 5);
    for (int t = 0; t < 3; t++) {
        const int *a = torsion_stretches[t].atoms, *sl = torsion_stretches[t].slots;
        HF_OK(hessfit_force_add_mm3_torsion_stretch(f, a[0], a[1], a[2], a[3], sl[0], sl[1], torsion_stretches[t].s, NULL));
    }
}

double mm3_torsion_stretches_energy(const double *x, const double *p, double *scale) {
    double e = 0.0;
    *scale = 0.0;
    for (int t = 0; t < 3; t++) {
        const int *a = torsion_stretches[t].atoms, *sl = torsion_stretches[t].slots;
        const double phi = test_dihedral(x, a[0], a[1], a[2], a[3]);
        const double et = p[sl[0]] * (torsion_stretches[t].s * test_distance(x, a[1], a[2]) - p[sl[1]]) * (1.0 + cos(3.0 * phi));
        e += et;
        *scale += fabs(et);
    }
    return e;
}

void build_ub(hessfit_force *f) {
    const double v[4] = {2.5e4, 0.2179, 1.9e4, 0.2468};
    add_slots(f, v, 4);
    add_bare_particles(f, 4);
    HF_OK(hessfit_force_add_urey_bradley(f, 0, 2, 0, 1, NULL));
    HF_OK(hessfit_force_add_urey_bradley(f, 1, 3, 2, 3, NULL));
}

static void build_angles_with(hessfit_force *f, add_angle_fn add) {
    const double v[4] = {350.0, 1.911, 420.0, 2.0944};
    add_slots(f, v, 4);
    add_bare_particles(f, 5);
    HF_OK(add(f, 0, 1, 2, 0, 1, NULL));
    HF_OK(add(f, 1, 2, 3, 2, 3, NULL));
    HF_OK(add(f, 2, 3, 4, 0, 1, NULL));
}

void build_angle(hessfit_force *f) { build_angles_with(f, hessfit_force_add_angle); }
void build_mm3_angle(hessfit_force *f) { build_angles_with(f, hessfit_force_add_mm3_angle); }

void build_periodic(hessfit_force *f) {
    const double v[6] = {2.3, 0.35, 6.1, PI, 1.4, -1.2};
    add_slots(f, v, 6);
    add_bare_particles(f, 5);
    HF_OK(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 1, 0, 1, NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 2, 2, 3, NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 3, 4, 5, NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, 1, 2, 3, 4, 2, 2, 3, NULL));
}

void build_opls(hessfit_force *f) {
    const double v[6] = {5.4, -1.2, 3.3, 0.7, 2.0, -0.4};
    add_slots(f, v, 6);
    add_bare_particles(f, 5);
    const int v1[4] = {0, 1, 2, 3}, v2[4] = {4, HESSFIT_NO_SLOT, 2, 5};
    HF_OK(hessfit_force_add_opls_torsion(f, 0, 1, 2, 3, v1, NULL));
    HF_OK(hessfit_force_add_opls_torsion(f, 1, 2, 3, 4, v2, NULL));
}

void build_rb(hessfit_force *f) {
    const double c[8] = {9.28, 12.16, -13.12, -3.06, 26.24, -31.5, -4.2, 1.3};
    add_slots(f, c, 8);
    add_bare_particles(f, 5);
    const int c1[6] = {0, 1, 2, 3, 4, 5}, c2[6] = {0, 6, HESSFIT_NO_SLOT, 3, HESSFIT_NO_SLOT, 7};
    HF_OK(hessfit_force_add_rb_torsion(f, 0, 1, 2, 3, c1, NULL));
    HF_OK(hessfit_force_add_rb_torsion(f, 1, 2, 3, 4, c2, NULL));
}

void build_periodic_improper(hessfit_force *f) {
    const double v[4] = {4.6, PI, 1.1, 0.5};
    add_slots(f, v, 4);
    add_bare_particles(f, 4);
    HF_OK(hessfit_force_add_periodic_improper(f, 1, 2, 0, 3, 2, 0, 1, NULL));
    HF_OK(hessfit_force_add_periodic_improper(f, 3, 1, 0, 2, 3, 2, 3, NULL));
}

const double harmonic_improper_phi0[2] = {3.05, -3.0};

void build_harmonic_improper(hessfit_force *f) {
    const double v[4] = {80.0, harmonic_improper_phi0[0], 45.0, harmonic_improper_phi0[1]};
    add_slots(f, v, 4);
    add_bare_particles(f, 4);
    HF_OK(hessfit_force_add_harmonic_improper(f, 1, 2, 0, 3, 0, 1, NULL));
    HF_OK(hessfit_force_add_harmonic_improper(f, 3, 1, 0, 2, 2, 3, NULL));
}

static const double nb_values[7] = {0.42, 0.325, 0.71, -0.61, 0.29, 0.46, 0.19};
const int nb_particles[5][3] = {{0, 1, 2}, {3, 4, 5}, {0, 1, 2}, {6, 4, HESSFIT_NO_SLOT}, {HESSFIT_NO_SLOT, 1, 5}};
int nb_combining = HESSFIT_COMBINE_GEOMETRIC;

void add_nb_particles(hessfit_force *f) {
    add_slots(f, nb_values, 7);
    for (int i = 0; i < 5; i++)
        HF_OK(hessfit_force_add_particle(f, nb_particles[i][0], nb_particles[i][1], nb_particles[i][2], NULL));
}

void build_nb(hessfit_force *f) {
    add_nb_particles(f);
    HF_OK(hessfit_force_set_combining_rule(f, (hessfit_combining_rule) nb_combining));
}

void build_14(hessfit_force *f) {
    add_nb_particles(f);
    HF_OK(hessfit_force_set_combining_rule(f, HESSFIT_COMBINE_LORENTZ_BERTHELOT));
    HF_OK(hessfit_force_set_14_scales(f, PAIR14_COULOMB_SCALE, PAIR14_LJ_SCALE));
    const int excl[8][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 2}, {1, 3}, {2, 4}, {0, 4}};
    for (int i = 0; i < 8; i++)
        HF_OK(hessfit_force_add_exclusion(f, excl[i][0], excl[i][1], NULL));
    HF_OK(hessfit_force_add_pair14(f, 0, 3, NULL));
    HF_OK(hessfit_force_add_pair14(f, 4, 1, NULL));
}

void build_explicit(hessfit_force *f) {
    add_nb_particles(f);
    const int qq1 = add_slot(f, -0.35), s1 = add_slot(f, 0.31), e1 = add_slot(f, 0.55), qq2 = add_slot(f, 0.12),
              e2 = add_slot(f, 0.2), s2 = add_slot(f, 0.27);
    HF_OK(hessfit_force_add_explicit_pair(f, 0, 2, qq1, s1, e1, NULL));
    HF_OK(hessfit_force_add_explicit_pair(f, 3, 1, qq2, s1, e2, NULL));
    HF_OK(hessfit_force_add_explicit_pair(f, 0, 3, HESSFIT_NO_SLOT, s2, e1, NULL));
    HF_OK(hessfit_force_add_explicit_pair(f, 2, 4, qq1, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    const int excl[6][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 4}, {0, 4}};
    for (int i = 0; i < 6; i++)
        HF_OK(hessfit_force_add_exclusion(f, excl[i][0], excl[i][1], NULL));
}

/* (particles, slots as offsets from slot 7, distance band in nm) of build_mm3_pair's pairs */
static const struct {
    int i, j, slots[3];
    double lo, hi;
} mm3_pairs[4] = {
    {0, 1, {0, 1, 2}, 0.15, 0.19}, /* inside R/2 = 0.2 nm: the r^-12 wall */
    {3, 2, {3, 4, 5}, 0.63, 0.77}, /* in the switch */
    {1, 4, {6, 7, 2}, 0.85, 1.00}, /* beyond 0.8 nm: Coulomb only */
    {0, 2, {0, 4, 5}, 0.30, 0.55}, /* inside 0.6 nm, slots shared with the others */
};

void build_mm3_pair(hessfit_force *f) {
    add_nb_particles(f);
    const double v[8] = {0.40, 0.2, -0.1, 0.48, 0.35, 0.15, 0.38, 0.3}; /* R (nm), eps (kJ/mol), qq (e^2) */
    add_slots(f, v, 8);
    for (int t = 0; t < 4; t++)
        HF_OK(hessfit_force_add_mm3_pair(f, mm3_pairs[t].i, mm3_pairs[t].j, 7 + mm3_pairs[t].slots[0],
                                         7 + mm3_pairs[t].slots[1], 7 + mm3_pairs[t].slots[2], NULL));
    const int excl[6][2] = {{0, 3}, {0, 4}, {1, 2}, {1, 3}, {2, 4}, {3, 4}};
    for (int i = 0; i < 6; i++)
        HF_OK(hessfit_force_add_exclusion(f, excl[i][0], excl[i][1], NULL));
}

double mm3_pair_energy(double r, double R, double eps, double qq) { return mm3_switched_pair_energy(r, r, R, eps, qq); }

double mm3_switched_pair_energy(double r, double rs, double R, double eps, double qq) {
    const double ra = 10.0 * r, Ra = 10.0 * R, rsa = 10.0 * rs; /* Angstrom */
    const double s = rsa <= 6.0 ? 1.0 : rsa >= 8.0 ? 0.0 : (64.0 - rsa * rsa) / (64.0 - 36.0);
    const double coulomb = 1.0 / (4.0 * PI * (1e-6 * 8.8541878128e-12 / (1.602176634e-19 * 1.602176634e-19 * 6.02214076e23)));
    /* below R/2 the r^-12 wall of the exp-6 value there (Tinker's MM3 rule, hf_core.h) */
    const double wall = (184000.0 * exp(-6.0) - 2.25 * 64.0) / 4096.0 * pow(Ra / ra, 12);
    return eps * s * (Ra / ra > 2.0 ? wall : 184000.0 * exp(-12.0 * ra / Ra) - 2.25 * pow(Ra / ra, 6)) + coulomb * qq / r;
}

double mm3_pairs_energy(const double *x, const double *p, double *scale) {
    double e = 0.0;
    *scale = 0.0;
    for (int t = 0; t < 4; t++) {
        const double *q = p + 7;
        const double et = mm3_pair_energy(test_distance(x, mm3_pairs[t].i, mm3_pairs[t].j), q[mm3_pairs[t].slots[0]],
                                          q[mm3_pairs[t].slots[1]], q[mm3_pairs[t].slots[2]]);
        e += et;
        *scale += fabs(et);
    }
    return e;
}

void mm3_pair_positions(double *pos) {
    for (;;) {
        double u[4][3];
        for (int t = 0; t < 4; t++)
            random_direction(u[t]);
        /* 0 at the origin; 1, 2 from 0; 3 from 2; 4 from 1 (the bands of pairs 0, 3, 1, 2) */
        const double r01 = test_uniform(mm3_pairs[0].lo, mm3_pairs[0].hi), r02 = test_uniform(mm3_pairs[3].lo, mm3_pairs[3].hi);
        const double r23 = test_uniform(mm3_pairs[1].lo, mm3_pairs[1].hi), r14 = test_uniform(mm3_pairs[2].lo, mm3_pairs[2].hi);
        for (int c = 0; c < 3; c++) {
            pos[c] = 0.0;
            pos[3 + c] = r01 * u[0][c];
            pos[6 + c] = r02 * u[1][c];
            pos[9 + c] = pos[6 + c] + r23 * u[2][c];
            pos[12 + c] = pos[3 + c] + r14 * u[3][c];
        }
        if (test_min_pair_distance(pos, 5) >= 0.14)
            break;
    }
    test_random_pose(pos, 5);
}

/* ---- 10-12 hydrogen bonds ----------------------------------------------------------------------- */

static const int hbonds[4][4] = {{0, 1, 0, 1}, {2, 3, 2, 3}, {1, 2, 0, 3}, {0, 3, 2, 1}}; /* i, j, C slot, D slot */

void build_hbond(hessfit_force *f) {
    add_bare_particles(f, 4);
    const double v[4] = {418.4 * 90.0e-12, 418.4 * 40.0e-10, 418.4 * 42.5e-12, 418.4 * 10.0e-10};
    add_slots(f, v, 4);
    for (int t = 0; t < 4; t++)
        HF_OK(hessfit_force_add_hydrogen_bond(f, hbonds[t][0], hbonds[t][1], hbonds[t][2], hbonds[t][3], NULL));
}

double hbond_energy(double r, double c, double d) {
    const double ra = 10.0 * r, cp = c / 418.4e-12, dp = d / 418.4e-10;
    return 418.4 * (cp / pow(ra, 12) - dp / pow(ra, 10));
}

double hbonds_energy(const double *x, const double *p, double *scale) {
    double e = 0.0;
    *scale = 0.0;
    for (int t = 0; t < 4; t++) {
        const double et = hbond_energy(test_distance(x, hbonds[t][0], hbonds[t][1]), p[hbonds[t][2]], p[hbonds[t][3]]);
        e += et;
        *scale += fabs(et);
    }
    return e;
}

void hbond_positions(double *pos) {
    for (;;) {
        for (int c = 0; c < 3; c++)
            pos[c] = 0.0;
        for (int a = 1; a < 4; a++) { /* a chain 0-1-2-3 of random directions */
            double u[3];
            random_direction(u);
            const double r = test_uniform(0.14, 0.4);
            for (int c = 0; c < 3; c++)
                pos[3 * a + c] = pos[3 * (a - 1) + c] + r * u[c];
        }
        const double r03 = test_distance(pos, 0, 3);
        if (r03 >= 0.14 && r03 <= 0.4 && test_min_pair_distance(pos, 4) >= 0.13)
            break;
    }
    test_random_pose(pos, 4);
}

/* ---- MM3* switched pairs ------------------------------------------------------------------------ */

/* (particles, anchors, scales, slots, switch-distance band in nm) of build_mm3_switched_pair's pairs */
static const struct {
    int i, j, u, v;
    double si, sj;
    int slots[3];
    double lo, hi;
} switched_pairs[5] = {
    {0, 1, 2, 1, MM3_REDUCED_H_SCALE, 1.0, {0, 1, 2}, 0.62, 0.78},
    {3, 4, 3, 5, 1.0, 1.08, {3, 4, 5}, 0.0, 0.58},
    {1, 5, 1, 5, 1.0, 1.0, {0, 4, 2}, 0.82, 10.0},
    {0, 4, 2, 5, MM3_REDUCED_H_SCALE, 0.9, {3, 1, 5}, 0.62, 0.78},
    {2, 3, 1, 0, 1.2, 0.7, {0, 4, 5}, 0.62, 0.78},
};

void build_mm3_switched_pair(hessfit_force *f) {
    const double v[6] = {0.40, 0.2, -0.1, 0.48, 0.35, 0.15}; /* R (nm), eps (kJ/mol), qq (e^2) */
    add_slots(f, v, 6);
    add_bare_particles(f, 6);
    for (int t = 0; t < 5; t++)
        HF_OK(hessfit_force_add_mm3_switched_pair(f, switched_pairs[t].i, switched_pairs[t].j, switched_pairs[t].u,
                                                  switched_pairs[t].v, switched_pairs[t].slots[0],
                                                  switched_pairs[t].slots[1], switched_pairs[t].slots[2],
                                                  switched_pairs[t].si, switched_pairs[t].sj, NULL));
}

/* pair t's switch distance |y_i - y_j|, y = x_anchor + s (x - x_anchor) */
static double switch_distance(const double *x, int t) {
    double d2 = 0.0;
    for (int c = 0; c < 3; c++) {
        const double *xi = x + 3 * switched_pairs[t].i, *xu = x + 3 * switched_pairs[t].u;
        const double *xj = x + 3 * switched_pairs[t].j, *xv = x + 3 * switched_pairs[t].v;
        const double d = (xv[c] + switched_pairs[t].sj * (xj[c] - xv[c])) - (xu[c] + switched_pairs[t].si * (xi[c] - xu[c]));
        d2 += d * d;
    }
    return sqrt(d2);
}

double mm3_switched_pairs_energy(const double *x, const double *p, double *scale) {
    double e = 0.0;
    *scale = 0.0;
    for (int t = 0; t < 5; t++) {
        const int *sl = switched_pairs[t].slots;
        const double et = mm3_switched_pair_energy(test_distance(x, switched_pairs[t].i, switched_pairs[t].j),
                                                   switch_distance(x, t), p[sl[0]], p[sl[1]], p[sl[2]]);
        e += et;
        *scale += fabs(et);
    }
    return e;
}

void mm3_switched_pair_positions(double *pos) {
    for (;;) {
        for (int k = 0; k < 18; k++)
            pos[k] = test_uniform(0.0, 0.9);
        int ok = test_min_pair_distance(pos, 6) >= 0.2;
        for (int t = 0; t < 5 && ok; t++) {
            const double rs = switch_distance(pos, t);
            ok = rs > switched_pairs[t].lo && rs < switched_pairs[t].hi;
        }
        if (ok)
            break;
    }
    test_random_pose(pos, 6);
}
