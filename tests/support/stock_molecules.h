#ifndef HESSFIT_STOCK_MOLECULES_H_
#define HESSFIT_STOCK_MOLECULES_H_
/*
 * Small-molecule builder shared by the cross-validation tests (test_stock_crossval, test_torsions,
 * test_nonbonded, test_nve). Header-only, every function static.
 *
 *  - sm_add_chain() builds a chain molecule from its heavy atoms ("CCCC" = butane, "CCCO" =
 *    1-propanol, ...) with realistic bond lengths, angles and chosen backbone dihedrals, fills
 *    each heavy atom to its valence with hydrogens, and derives angles, proper torsions and the
 *    graph distance of every pair (a breadth-first search of its own, independent of the code
 *    under test). sm_add_ring() builds a saturated carbocycle (cyclopentane, ...).
 *  - sm_perturb() moves every coordinate by a uniform random amount.
 *  - sm_pair_create() makes the two Systems that are compared: one with OpenMM stock forces (each
 *    force in its own force group, run on OpenMM's Reference platform) and one holding only a
 *    hessfit_force built directly through the C API. The sm_add_* helpers add the same physics
 *    to both (stock HarmonicBond/HarmonicAngle use k/2, ours k: ours gets k_stock / 2).
 *  - sm_compare_energy_forces() and sm_fd_hessian() / sm_compare_hessian() do the checks.
 *
 * Molecules put into one System never interact on our side (HessianForce semantics); on the stock
 * side every cross-molecule pair gets a zero exception in the NonbondedForce.
 */
#include "test_util.h"
#include <string.h>

#define SM_MAX_ATOMS 64
#define SM_MAX_BONDS 96
#define SM_MAX_ANGLES 256
#define SM_MAX_TORSIONS 384
#define SM_FAR 4           /* graph distance >= 4 (1-5 and farther) */
#define SM_OTHER_MOL 255   /* the two atoms are in different molecules */

#define SM_PI 3.14159265358979323846
#define SM_DEG (SM_PI / 180.0)

typedef struct {
    int n;
    double pos[3 * SM_MAX_ATOMS];
    double mass[SM_MAX_ATOMS];
    char element[SM_MAX_ATOMS];
    int molecule[SM_MAX_ATOMS];
    int n_molecules;
    int mol_first[SM_MAX_ATOMS + 1];  /* atoms of molecule m: mol_first[m] .. mol_first[m+1]-1 */
    double charge[SM_MAX_ATOMS], sigma[SM_MAX_ATOMS], epsilon[SM_MAX_ATOMS];
    int n_bonds;
    int bonds[SM_MAX_BONDS][2];
    double bond_ref[SM_MAX_BONDS];    /* bond length of the unperturbed geometry, nm */
    int n_angles;
    int angles[SM_MAX_ANGLES][3];
    double angle_ref[SM_MAX_ANGLES];  /* angle of the unperturbed geometry, rad */
    int n_torsions;
    int torsions[SM_MAX_TORSIONS][4];
    unsigned char dist[SM_MAX_ATOMS][SM_MAX_ATOMS];  /* graph distance, capped at SM_FAR */
} sm_mol;

/* ---- small vector helpers ------------------------------------------------------------------- */
/* OPLS V1..V4 to Ryckaert-Bellemans C0..C5 (psi = phi - 180 deg, as RBTorsionForce). */
static inline void opls_to_rb(const double v[4], double c[6]) {
    c[0] = v[1] + 0.5 * (v[0] + v[2]);
    c[1] = 0.5 * (-v[0] + 3.0 * v[2]);
    c[2] = -v[1] + 4.0 * v[3];
    c[3] = -2.0 * v[2];
    c[4] = -4.0 * v[3];
    c[5] = 0.0;
}

static inline void sm_sub(const double *a, const double *b, double *c) { for (int k = 0; k < 3; k++) c[k] = a[k] - b[k]; }
static inline double sm_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void sm_cross(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}
static inline void sm_unit(double *a) {
    double l = sqrt(sm_dot(a, a));
    for (int k = 0; k < 3; k++) a[k] /= l;
}
static inline double sm_distance(const double *pos, int i, int j) {
    double d[3];
    sm_sub(pos + 3 * i, pos + 3 * j, d);
    return sqrt(sm_dot(d, d));
}
static inline double sm_angle(const double *pos, int i, int j, int k) {
    double a[3], b[3];
    sm_sub(pos + 3 * i, pos + 3 * j, a);
    sm_sub(pos + 3 * k, pos + 3 * j, b);
    return acos(sm_dot(a, b) / sqrt(sm_dot(a, a) * sm_dot(b, b)));
}
/* IUPAC dihedral i-j-k-l in (-pi, pi] (the convention of OpenMM's PeriodicTorsionForce). */
static inline double sm_dihedral(const double *pos, int i, int j, int k, int l) {
    double b1[3], b2[3], b3[3], n1[3], n2[3], m[3];
    sm_sub(pos + 3 * j, pos + 3 * i, b1);
    sm_sub(pos + 3 * k, pos + 3 * j, b2);
    sm_sub(pos + 3 * l, pos + 3 * k, b3);
    sm_cross(b1, b2, n1);
    sm_cross(b2, b3, n2);
    sm_cross(n1, n2, m);
    return atan2(sm_dot(m, b2) / sqrt(sm_dot(b2, b2)), sm_dot(n1, n2));
}
static inline double sm_uniform(double lo, double hi) { return lo + (hi - lo) * test_random(); }

/* Position of d with |c d| = r, angle b-c-d = theta, dihedral a-b-c-d = phi (rad). */
static inline void sm_place(const double *a, const double *b, const double *c, double r, double theta, double phi, double *d) {
    double bc[3], ab[3], n[3], m[3];
    sm_sub(c, b, bc);
    sm_unit(bc);
    sm_sub(b, a, ab);
    sm_cross(ab, bc, n);
    sm_unit(n);
    sm_cross(n, bc, m);
    double x = -r * cos(theta), y = r * sin(theta) * cos(phi), z = r * sin(theta) * sin(phi);
    for (int k = 0; k < 3; k++)
        d[k] = c[k] + x * bc[k] + y * m[k] + z * n[k];
}

/* ---- elements ------------------------------------------------------------------------------- */
static inline double sm_mass_of(char e) {
    switch (e) {
    case 'C': return 12.011;
    case 'N': return 14.007;
    case 'O': return 15.999;
    default: return 1.008;
    }
}
static inline int sm_valence(char e) { return e == 'C' ? 4 : e == 'N' ? 3 : e == 'O' ? 2 : 1; }
static inline double sm_bond_length(char a, char b) {
    if (a == 'H' || b == 'H') {
        char x = a == 'H' ? b : a;
        return x == 'C' ? 0.1090 : x == 'N' ? 0.1010 : 0.0945;
    }
    if (a == 'O' || b == 'O') return 0.1410;
    if (a == 'N' || b == 'N') return 0.1448;
    return 0.1529;
}

/* Realistic-magnitude nonbonded parameters with a random spread (OPLS-like sigma / epsilon). */
static inline void sm_nonbonded_params(sm_mol *m, int i) {
    char e = m->element[i];
    double s0 = e == 'C' ? 0.350 : e == 'N' ? 0.325 : e == 'O' ? 0.312 : 0.250;
    double e0 = e == 'C' ? 0.276 : e == 'N' ? 0.711 : e == 'O' ? 0.711 : 0.126;
    double q0 = e == 'C' ? -0.12 : e == 'N' ? -0.90 : e == 'O' ? -0.68 : 0.06;
    m->sigma[i] = s0 * sm_uniform(0.9, 1.1);
    m->epsilon[i] = e0 * sm_uniform(0.8, 1.2);
    m->charge[i] = q0 + sm_uniform(-0.15, 0.15);
}

static inline int sm_add_atom(sm_mol *m, char e, const double *x) {
    CHECK(m->n < SM_MAX_ATOMS, "too many atoms");
    int i = m->n++;
    m->element[i] = e;
    m->mass[i] = sm_mass_of(e);
    m->molecule[i] = m->n_molecules;
    for (int k = 0; k < 3; k++)
        m->pos[3 * i + k] = x[k];
    sm_nonbonded_params(m, i);
    return i;
}
static inline void sm_add_bond(sm_mol *m, int i, int j) {
    CHECK(m->n_bonds < SM_MAX_BONDS, "too many bonds");
    m->bonds[m->n_bonds][0] = i;
    m->bonds[m->n_bonds][1] = j;
    m->n_bonds++;
}

/* Angles, torsions, graph distances and reference geometry of the molecule started at first. */
static inline void sm_finish_molecule(sm_mol *m, int first, int first_bond) {
    int nb[SM_MAX_ATOMS][6], deg[SM_MAX_ATOMS];
    memset(deg, 0, sizeof deg);
    for (int b = first_bond; b < m->n_bonds; b++) {
        int i = m->bonds[b][0], j = m->bonds[b][1];
        CHECK(deg[i] < 6 && deg[j] < 6, "atom degree too high");
        nb[i][deg[i]++] = j;
        nb[j][deg[j]++] = i;
        m->bond_ref[b] = sm_distance(m->pos, i, j);
    }
    for (int j = first; j < m->n; j++)
        for (int a = 0; a < deg[j]; a++)
            for (int c = a + 1; c < deg[j]; c++) {
                CHECK(m->n_angles < SM_MAX_ANGLES, "too many angles");
                int *t = m->angles[m->n_angles];
                t[0] = nb[j][a]; t[1] = j; t[2] = nb[j][c];
                m->angle_ref[m->n_angles] = sm_angle(m->pos, t[0], t[1], t[2]);
                m->n_angles++;
            }
    for (int b = first_bond; b < m->n_bonds; b++) {
        int j = m->bonds[b][0], k = m->bonds[b][1];
        for (int a = 0; a < deg[j]; a++)
            for (int c = 0; c < deg[k]; c++) {
                int i = nb[j][a], l = nb[k][c];
                if (i == k || l == j || i == l)
                    continue;
                CHECK(m->n_torsions < SM_MAX_TORSIONS, "too many torsions");
                int *t = m->torsions[m->n_torsions++];
                t[0] = i; t[1] = j; t[2] = k; t[3] = l;
            }
    }
    /* graph distances by breadth-first search (capped at SM_FAR) */
    for (int s = first; s < m->n; s++) {
        for (int t = first; t < m->n; t++)
            m->dist[s][t] = SM_FAR;
        m->dist[s][s] = 0;
        int frontier[SM_MAX_ATOMS], nf = 1;
        frontier[0] = s;
        for (int d = 1; d < SM_FAR && nf > 0; d++) {
            int next[SM_MAX_ATOMS], nn = 0;
            for (int f = 0; f < nf; f++)
                for (int a = 0; a < deg[frontier[f]]; a++) {
                    int t = nb[frontier[f]][a];
                    if (m->dist[s][t] == SM_FAR && t != s) {
                        m->dist[s][t] = (unsigned char) d;
                        next[nn++] = t;
                    }
                }
            memcpy(frontier, next, sizeof(int) * nn);
            nf = nn;
        }
    }
    for (int s = 0; s < m->n; s++)
        for (int t = 0; t < m->n; t++)
            if (m->molecule[s] != m->molecule[t])
                m->dist[s][t] = SM_OTHER_MOL;
    m->n_molecules++;
    m->mol_first[m->n_molecules] = m->n;
}

static inline void sm_init(sm_mol *m) {
    memset(m, 0, sizeof *m);
}

/*
 * Append a chain molecule: heavy atoms heavy[0..] ('C', 'N', 'O'; at least 3) bonded in a row,
 * backbone dihedrals dihedral_deg[0..nheavy-4] (heavy k, k+1, k+2, k+3), each heavy atom filled to
 * its valence with hydrogens (staggered). Atom order: heavy atoms, then each heavy atom's
 * hydrogens in turn. The molecule is translated by `shift` nm along x.
 */
static inline void sm_add_chain(sm_mol *m, const char *heavy, const double *dihedral_deg, double shift) {
    int nh = (int) strlen(heavy), first = m->n, first_bond = m->n_bonds;
    CHECK(nh >= 3, "a chain needs at least 3 heavy atoms");
    double x[3] = {0, 0, 0};
    for (int i = 0; i < nh; i++) {
        /* angle at atom i-1: C-O-C 109.5 deg, else 111 deg */
        double theta = (i >= 2 && heavy[i - 1] == 'O') ? 109.5 * SM_DEG : 111.0 * SM_DEG;
        if (i == 0) {
            x[0] = x[1] = x[2] = 0.0;
        } else if (i == 1) {
            x[0] = sm_bond_length(heavy[0], heavy[1]);
        } else if (i == 2) {
            double r = sm_bond_length(heavy[1], heavy[2]);
            const double *p1 = m->pos + 3 * (first + 1);
            x[0] = p1[0] - r * cos(theta);
            x[1] = p1[1] + r * sin(theta);
            x[2] = 0.0;
        } else {
            sm_place(m->pos + 3 * (first + i - 3), m->pos + 3 * (first + i - 2), m->pos + 3 * (first + i - 1),
                     sm_bond_length(heavy[i - 1], heavy[i]), theta, dihedral_deg[i - 3] * SM_DEG, x);
        }
        int a = sm_add_atom(m, heavy[i], x);
        if (i > 0)
            sm_add_bond(m, a - 1, a);
    }
    for (int i = 0; i < nh; i++) {
        int a = first + i, nheavy = (i == 0 || i == nh - 1) ? 1 : 2;
        int nhyd = sm_valence(heavy[i]) - nheavy;
        double r = sm_bond_length(heavy[i], 'H');
        for (int h = 0; h < nhyd; h++) {
            if (nheavy == 1) {
                int b = i == 0 ? a + 1 : a - 1, c = i == 0 ? a + 2 : a - 2;
                double theta = heavy[i] == 'C' ? 110.7 * SM_DEG : 108.5 * SM_DEG;
                sm_place(m->pos + 3 * c, m->pos + 3 * b, m->pos + 3 * a, r, theta, (180.0 + 120.0 * h) * SM_DEG, x);
            } else {
                double u1[3], u2[3], bis[3], perp[3];
                sm_sub(m->pos + 3 * (a - 1), m->pos + 3 * a, u1);
                sm_sub(m->pos + 3 * (a + 1), m->pos + 3 * a, u2);
                sm_unit(u1);
                sm_unit(u2);
                for (int k = 0; k < 3; k++)
                    bis[k] = -(u1[k] + u2[k]);
                sm_unit(bis);
                sm_cross(u1, u2, perp);
                sm_unit(perp);
                double half = 0.5 * 109.5 * SM_DEG, sgn = h == 0 ? 1.0 : -1.0;
                for (int k = 0; k < 3; k++)
                    x[k] = m->pos[3 * a + k] + r * (nhyd == 1 ? bis[k] : cos(half) * bis[k] + sgn * sin(half) * perp[k]);
            }
            int hi = sm_add_atom(m, 'H', x);
            sm_add_bond(m, a, hi);
        }
    }
    for (int i = first; i < m->n; i++)
        m->pos[3 * i] += shift;
    sm_finish_molecule(m, first, first_bond);
}

/* Append a saturated carbocycle C_n H_2n (n = 5: cyclopentane), slightly puckered. */
static inline void sm_add_ring(sm_mol *m, int nring, double shift) {
    int first = m->n, first_bond = m->n_bonds;
    double rcc = 0.1529, R = rcc / (2.0 * sin(SM_PI / nring)), x[3];
    for (int i = 0; i < nring; i++) {
        double a = 2.0 * SM_PI * i / nring;
        x[0] = R * cos(a);
        x[1] = R * sin(a);
        x[2] = (nring % 2 && i == nring - 1) ? 0.0 : (i % 2 ? 0.02 : -0.02);  /* puckering */
        sm_add_atom(m, 'C', x);
        if (i > 0)
            sm_add_bond(m, first + i - 1, first + i);
    }
    sm_add_bond(m, first + nring - 1, first);
    for (int i = 0; i < nring; i++) {
        int a = first + i, p = first + (i + nring - 1) % nring, q = first + (i + 1) % nring;
        double u1[3], u2[3], bis[3], perp[3], half = 0.5 * 109.5 * SM_DEG;
        sm_sub(m->pos + 3 * p, m->pos + 3 * a, u1);
        sm_sub(m->pos + 3 * q, m->pos + 3 * a, u2);
        sm_unit(u1);
        sm_unit(u2);
        for (int k = 0; k < 3; k++)
            bis[k] = -(u1[k] + u2[k]);
        sm_unit(bis);
        sm_cross(u1, u2, perp);
        sm_unit(perp);
        for (int h = 0; h < 2; h++) {
            for (int k = 0; k < 3; k++)
                x[k] = m->pos[3 * a + k] + 0.109 * (cos(half) * bis[k] + (h ? -1.0 : 1.0) * sin(half) * perp[k]);
            int hi = sm_add_atom(m, 'H', x);
            sm_add_bond(m, a, hi);
        }
    }
    for (int i = first; i < m->n; i++)
        m->pos[3 * i] += shift;
    sm_finish_molecule(m, first, first_bond);
}

/* Move every coordinate by a uniform random amount in [-amp, amp] nm. */
static inline void sm_perturb(sm_mol *m, double amp) {
    for (int i = 0; i < 3 * m->n; i++)
        m->pos[i] += sm_uniform(-amp, amp);
}

/* Test geometry number geom of a molecule into pos: 0 is the molecule as built; the others are
 * perturbed by up to amp nm per coordinate and rigidly rotated at random. */
static inline void sm_test_pose(const sm_mol *m, int geom, double amp, double *pos) {
    memcpy(pos, m->pos, sizeof(double) * 3 * m->n);
    if (geom == 0)
        return;
    for (int i = 0; i < 3 * m->n; i++)
        pos[i] += sm_uniform(-amp, amp);
    const double axis[3] = {sm_uniform(-1, 1), sm_uniform(-1, 1), 1.0};
    test_rotate(pos, m->n, axis, sm_uniform(0.0, 2.0 * SM_PI));
}

/* The two molecules of test_stock_crossval and test_mm3_stock: a gauche butane (14 atoms) and an
 * anti 1-propanol (12 atoms), shifted apart, with a random perturbation of 0.004 nm. */
static inline void sm_butane_propanol(sm_mol *m) {
    sm_init(m);
    const double butane_dihedral[1] = {-65.0};   /* gauche */
    const double propanol_dihedral[1] = {178.0}; /* anti */
    sm_add_chain(m, "CCCC", butane_dihedral, 0.0);
    sm_add_chain(m, "CCCO", propanol_dihedral, 1.2);
    CHECK(m->n == 26 && m->n_molecules == 2, "built %d atoms in %d molecules", m->n, m->n_molecules);
    CHECK(m->n_bonds == 13 + 11, "built %d bonds", m->n_bonds);
    sm_perturb(m, 0.004);
}

/* ---- the two Systems ------------------------------------------------------------------------ */
typedef struct {
    OpenMM_System *stock;   /* stock forces, force i in force group i */
    int n_stock_forces;
    OpenMM_System *ours;    /* the hessfit_force alone */
    hessfit_force *hf;
    int n;
    OpenMM_Context *stock_ctx, *our_ctx;  /* set by sm_pair_open */
    OpenMM_Integrator *stock_int, *our_int;
} sm_pair;

static inline void sm_pair_create(sm_pair *s, const sm_mol *m) {
    s->stock = OpenMM_System_create();
    s->ours = OpenMM_System_create();
    s->n_stock_forces = 0;
    s->n = m->n;
    for (int i = 0; i < m->n; i++) {
        OpenMM_System_addParticle(s->stock, m->mass[i]);
        OpenMM_System_addParticle(s->ours, m->mass[i]);
    }
    HF_OK(hessfit_force_create(&s->hf));
}

/* Add a stock force to the stock System in its own force group; returns the group. */
static inline int sm_add_stock(sm_pair *s, OpenMM_Force *f) {
    CHECK(s->n_stock_forces < 31, "too many stock forces");
    OpenMM_Force_setForceGroup(f, s->n_stock_forces);
    OpenMM_System_addForce(s->stock, f);
    return s->n_stock_forces++;
}

static inline int sm_slot(sm_pair *s, double value) {
    int slot;
    HF_OK(hessfit_force_add_parameter(s->hf, value, &slot));
    return slot;
}

/* Particles of the hessfit_force: per-atom charge/sigma/epsilon slots, or none (NoSlot) when
 * with_nonbonded is 0. Molecules are declared explicitly when the system has several, or when
 * reverse_order asks for a molecule with a permuted Hessian-block order (reversed atom list). */
static inline void sm_add_hf_particles(sm_pair *s, const sm_mol *m, int with_nonbonded, int reverse_order) {
    for (int i = 0; i < m->n; i++) {
        int q = HESSFIT_NO_SLOT, sg = HESSFIT_NO_SLOT, ep = HESSFIT_NO_SLOT, index;
        if (with_nonbonded) {
            q = sm_slot(s, m->charge[i]);
            sg = sm_slot(s, m->sigma[i]);
            ep = sm_slot(s, m->epsilon[i]);
        }
        HF_OK(hessfit_force_add_particle(s->hf, q, sg, ep, &index));
        CHECK(index == i, "particle index %d, expected %d", index, i);
    }
    if (m->n_molecules > 1 || reverse_order) {
        for (int mol = 0; mol < m->n_molecules; mol++) {
            int list[SM_MAX_ATOMS], cnt = 0, index;
            for (int i = m->mol_first[mol]; i < m->mol_first[mol + 1]; i++)
                list[cnt++] = i;
            if (reverse_order && mol % 2 == 1)
                for (int a = 0; a < cnt / 2; a++) {
                    int t = list[a];
                    list[a] = list[cnt - 1 - a];
                    list[cnt - 1 - a] = t;
                }
            HF_OK(hessfit_force_add_molecule(s->hf, list, cnt, &index));
            CHECK(index == mol, "molecule index %d, expected %d", index, mol);
        }
    }
}

/* Harmonic bonds: stock k_s in [2e5, 4e5] kJ/mol/nm^2 (E = k_s/2 dr^2), ours k = k_s/2. */
static inline void sm_add_bonds(sm_pair *s, const sm_mol *m) {
    OpenMM_HarmonicBondForce *f = OpenMM_HarmonicBondForce_create();
    for (int b = 0; b < m->n_bonds; b++) {
        double ks = sm_uniform(2e5, 4e5), r0 = m->bond_ref[b] * sm_uniform(0.98, 1.02);
        OpenMM_HarmonicBondForce_addBond(f, m->bonds[b][0], m->bonds[b][1], r0, ks);
        HF_OK(hessfit_force_add_bond(s->hf, m->bonds[b][0], m->bonds[b][1], sm_slot(s, 0.5 * ks), sm_slot(s, r0), NULL));
    }
    sm_add_stock(s, (OpenMM_Force *) f);
}

/* Harmonic angles: stock k_s in [300, 700] kJ/mol/rad^2, ours k_s/2. */
static inline void sm_add_angles(sm_pair *s, const sm_mol *m) {
    OpenMM_HarmonicAngleForce *f = OpenMM_HarmonicAngleForce_create();
    for (int a = 0; a < m->n_angles; a++) {
        const int *t = m->angles[a];
        double ks = sm_uniform(300.0, 700.0), th0 = m->angle_ref[a] + sm_uniform(-3.0, 3.0) * SM_DEG;
        OpenMM_HarmonicAngleForce_addAngle(f, t[0], t[1], t[2], th0, ks);
        HF_OK(hessfit_force_add_angle(s->hf, t[0], t[1], t[2], sm_slot(s, 0.5 * ks), sm_slot(s, th0), NULL));
    }
    sm_add_stock(s, (OpenMM_Force *) f);
}

/* Periodic torsions on every proper torsion: periodicities 1, 2, 3 (and 4 on every third torsion)
 * with k in [0.3, 4] kJ/mol and random non-zero phases in [0.2, 2 pi - 0.2]. Identical forms. */
static inline void sm_add_periodic_torsions(sm_pair *s, const sm_mol *m) {
    OpenMM_PeriodicTorsionForce *f = OpenMM_PeriodicTorsionForce_create();
    for (int t = 0; t < m->n_torsions; t++) {
        const int *p = m->torsions[t];
        int nmax = t % 3 == 0 ? 4 : 3;
        for (int n = 1; n <= nmax; n++) {
            double k = sm_uniform(0.3, 4.0), phase = sm_uniform(0.2, 2.0 * SM_PI - 0.2);
            OpenMM_PeriodicTorsionForce_addTorsion(f, p[0], p[1], p[2], p[3], n, phase, k);
            HF_OK(hessfit_force_add_periodic_torsion(s->hf, p[0], p[1], p[2], p[3], n, sm_slot(s, k), sm_slot(s, phase), NULL));
        }
    }
    sm_add_stock(s, (OpenMM_Force *) f);
}

/* A stock NonbondedForce, NoCutoff, no dispersion correction, with the atoms' charges / LJ
 * parameters and a zero exception for every pair of atoms in different molecules. */
static inline OpenMM_NonbondedForce *sm_stock_nonbonded(const sm_mol *m) {
    OpenMM_NonbondedForce *f = OpenMM_NonbondedForce_create();
    OpenMM_NonbondedForce_setNonbondedMethod(f, OpenMM_NonbondedForce_NoCutoff);
    OpenMM_NonbondedForce_setUseDispersionCorrection(f, OpenMM_False);
    for (int i = 0; i < m->n; i++)
        OpenMM_NonbondedForce_addParticle(f, m->charge[i], m->sigma[i], m->epsilon[i]);
    for (int i = 0; i < m->n; i++)
        for (int j = i + 1; j < m->n; j++)
            if (m->dist[i][j] == SM_OTHER_MOL)
                OpenMM_NonbondedForce_addException(f, i, j, 0.0, 1.0, 0.0, OpenMM_False);
    return f;
}

/* Add the hessfit_force to its System and open the two Contexts: stock on OpenMM's Reference
 * platform, ours on `platform`, both with a VerletIntegrator(dt_ps) and positions pos. */
static inline void sm_pair_open(sm_pair *s, const char *platform, const double *pos, double dt_ps) {
    HF_OK(hessfit_force_add_to_system(s->hf, s->ours, NULL));
    s->stock_ctx = test_create_context(s->stock, "Reference", pos, s->n, dt_ps, &s->stock_int);
    s->our_ctx = test_create_context(s->ours, platform, pos, s->n, dt_ps, &s->our_int);
}

static inline void sm_pair_set_positions(sm_pair *s, const double *pos) {
    test_set_positions(s->stock_ctx, pos, s->n);
    test_set_positions(s->our_ctx, pos, s->n);
}

static inline void sm_pair_destroy(sm_pair *s) {
    OpenMM_Context_destroy(s->stock_ctx);
    OpenMM_Context_destroy(s->our_ctx);
    OpenMM_Integrator_destroy(s->stock_int);
    OpenMM_Integrator_destroy(s->our_int);
    hessfit_force_destroy(s->hf);
    OpenMM_System_destroy(s->stock);
    OpenMM_System_destroy(s->ours);
}

/* ---- comparisons ---------------------------------------------------------------------------- */
/* Energy and forces of the hessfit_force (on its own Context) against the sum of the stock forces.
 * Energy scale: max(sum over stock force groups of |E_group|, energy_floor) (no cancellation
 * between forces hides an error); force scale: max(max |F_stock|, force_floor). Returns the
 * relative errors in *rel_e, *rel_f. */
static inline void sm_compare_energy_forces(const sm_pair *s, double energy_floor, double force_floor, double *rel_e,
                                            double *rel_f) {
    int n = s->n;
    OpenMM_Context *stock_ctx = s->stock_ctx, *our_ctx = s->our_ctx;
    double *fs = malloc(sizeof(double) * 3 * n), *fo = malloc(sizeof(double) * 3 * n);
    double es = test_energy_forces(stock_ctx, -1, fs, n), eo, escale = energy_floor, esum = 0.0;
    for (int g = 0; g < s->n_stock_forces; g++)
        esum += fabs(test_energy_forces(stock_ctx, 1 << g, NULL, n));
    escale = fmax(escale, esum);
    HF_OK(hessfit_force_get_energy_forces(s->hf, our_ctx, &eo, fo));
    /* the whole-Context energy must be the same as the force's own */
    double eall = test_energy_forces(our_ctx, -1, NULL, n);
    CHECK_CLOSE(eall, eo, 1e-13, fmax(fabs(eo), escale), "Context energy vs hessfit_force_get_energy_forces");
    double fscale = fmax(test_max_abs(fs, 3 * (size_t) n), force_floor);
    *rel_e = fabs(eo - es) / fmax(escale, 1e-300);
    *rel_f = test_max_abs_diff(fo, fs, 3 * (size_t) n) / fmax(fscale, 1e-300);
    free(fs);
    free(fo);
}

/*
 * Central-difference Hessian of the energy from the forces of ctx, over the atoms list (block
 * order): H[(a,x),(b,y)] = -(F_{b,y}(x + h e_{a,x}) - F_{b,y}(x - h e_{a,x})) / (2 h).
 * pos (3 n) is restored in the Context at the end. H is (3 na)^2, row-major.
 */
static inline void sm_fd_hessian(OpenMM_Context *ctx, const double *pos, int n, const int *atoms, int na, double h, double *H) {
    double *x = malloc(sizeof(double) * 3 * n), *fp = malloc(sizeof(double) * 3 * n),
           *fm = malloc(sizeof(double) * 3 * n);
    memcpy(x, pos, sizeof(double) * 3 * n);
    int dim = 3 * na;
    for (int a = 0; a < na; a++)
        for (int c = 0; c < 3; c++) {
            int idx = 3 * atoms[a] + c;
            x[idx] = pos[idx] + h;
            test_set_positions(ctx, x, n);
            test_energy_forces(ctx, -1, fp, n);
            x[idx] = pos[idx] - h;
            test_set_positions(ctx, x, n);
            test_energy_forces(ctx, -1, fm, n);
            x[idx] = pos[idx];
            for (int b = 0; b < na; b++)
                for (int d = 0; d < 3; d++)
                    H[(3 * a + c) * dim + 3 * b + d] = -(fp[3 * atoms[b] + d] - fm[3 * atoms[b] + d]) / (2.0 * h);
        }
    test_set_positions(ctx, pos, n);
    free(x);
    free(fp);
    free(fm);
}

/*
 * Compare every Hessian block of the hessfit_force with central differences (step h) of the stock
 * forces. Each block's error is max |H_analytic - H_fd| / max(max |H_fd|, h_floor). Also checks
 * that the blocks are finite and symmetric (to 1e-12 relative) and that the concatenated size and
 * offsets are consistent. Returns the largest relative error over blocks in *max_rel.
 */
static inline void sm_compare_hessian(const sm_pair *s, const double *pos, double h, double h_floor, double *max_rel) {
    OpenMM_Context *stock_ctx = s->stock_ctx, *our_ctx = s->our_ctx;
    long long size;
    int nmol;
    HF_OK(hessfit_force_get_hessian_size(s->hf, &size));
    HF_OK(hessfit_force_get_num_molecules(s->hf, &nmol));
    double *blocks = malloc(sizeof(double) * (size_t) size);
    HF_OK(hessfit_force_get_hessian_blocks(s->hf, our_ctx, blocks, size));
    long long expected_offset = 0;
    *max_rel = 0.0;
    for (int mol = 0; mol < nmol; mol++) {
        int atoms[SM_MAX_ATOMS], na;
        long long off;
        HF_OK(hessfit_force_get_molecule_particles(s->hf, mol, atoms, SM_MAX_ATOMS, &na));
        HF_OK(hessfit_force_get_hessian_block_offset(s->hf, mol, &off));
        CHECK(off == expected_offset, "block %d offset %lld, expected %lld", mol, off, expected_offset);
        int dim = 3 * na;
        expected_offset += (long long) dim * dim;
        double *fd = malloc(sizeof(double) * (size_t) dim * dim);
        sm_fd_hessian(stock_ctx, pos, s->n, atoms, na, h, fd);
        const double *ha = blocks + off;
        double scale = fmax(test_max_abs(fd, (size_t) dim * dim), h_floor);
        for (int i = 0; i < dim * dim; i++)
            CHECK(isfinite(ha[i]), "block %d entry %d is %g", mol, i, ha[i]);
        double err = test_max_abs_diff(ha, fd, (size_t) dim * dim) / scale, asym = 0.0;
        for (int i = 0; i < dim; i++)
            for (int j = 0; j < i; j++)
                asym = fmax(asym, fabs(ha[i * dim + j] - ha[j * dim + i]));
        CHECK(asym <= 1e-12 * scale, "block %d is not symmetric: max |H - H^T| = %.3g (scale %.3g)", mol, asym, scale);
        *max_rel = fmax(*max_rel, err);
        free(fd);
    }
    CHECK(expected_offset == size, "Hessian size %lld, sum of blocks %lld", size, expected_offset);
    free(blocks);
}

/* The checks of test_stock_crossval and test_mm3_stock: at n_geom poses of m (sm_test_pose with
 * amplitude 0.006 nm), energy and forces against the stock side to ef_tol relative and every
 * Hessian block against central differences of the stock forces (step h) to fd_tol; prints a line
 * per pose and the worst of each. */
static inline void sm_check_poses(sm_pair *s, const sm_mol *m, int n_geom, double h, double fd_tol, double ef_tol) {
    double worst_e = 0, worst_f = 0, worst_h = 0;
    double pos[3 * SM_MAX_ATOMS];
    for (int geom = 0; geom < n_geom; geom++) {
        sm_test_pose(m, geom, 0.006, pos);
        sm_pair_set_positions(s, pos);
        double rel_e, rel_f, rel_h;
        sm_compare_energy_forces(s, 0.0, 0.0, &rel_e, &rel_f);
        sm_compare_hessian(s, pos, h, 0.0, &rel_h);
        printf("  geometry %d: energy %.17g kJ/mol, rel. error energy %.3g, forces %.3g, Hessian vs FD %.3g\n", geom,
               test_energy_forces(s->stock_ctx, -1, NULL, s->n), rel_e, rel_f, rel_h);
        CHECK(rel_e <= ef_tol, "geometry %d: energy relative error %.3g > %g", geom, rel_e, ef_tol);
        CHECK(rel_f <= ef_tol, "geometry %d: force relative error %.3g > %g", geom, rel_f, ef_tol);
        CHECK(rel_h <= fd_tol, "geometry %d: Hessian relative error vs FD %.3g > %g (h = %g nm)", geom, rel_h, fd_tol, h);
        worst_e = fmax(worst_e, rel_e);
        worst_f = fmax(worst_f, rel_f);
        worst_h = fmax(worst_h, rel_h);
    }
    printf("max relative errors: energy %.3g, forces %.3g (tol %g); Hessian vs central FD (h = %g nm) %.3g (tol %g)\n",
           worst_e, worst_f, ef_tol, h, worst_h, fd_tol);
}

#endif
