#ifndef HESSFIT_HF_CORE_H_
#define HESSFIT_HF_CORE_H_
/*
 * The C math core (core/, libhessfit_core) of the Reference platform, also used by the GPU
 * platforms' host code and the fitting layer: energies, forces, analytic Cartesian Hessians and
 * parameter derivatives of a flattened HessianForce. OpenMM units (nm, rad, kJ/mol, e).
 *
 * Every term is a scalar function of one internal coordinate q (a distance, an angle or a
 * dihedral): E = f(q; p). The geometry layer gives q, dq/dx and d2q/dx2; the term layer gives
 * f, f', f'' and their derivatives with respect to the term's parameter slots. Then
 *     grad E = f' dq/dx,   H = f'' (dq/dx)(dq/dx)^T + f' d2q/dx2,
 *     dH/dp  = (df''/dp) (dq/dx)(dq/dx)^T + (df'/dp) d2q/dx2,
 * the last one being what adjoint parameter gradients of Hessian-space objectives need
 * (hf_contract.c: tr(G dH/dp) and y . d(grad E)/dp for every slot in one pass).
 * The MM3* cross terms (stretch-bend, bend-bend, torsion-stretch) are functions of two or three
 * coordinates q_c, with f_c = dE/dq_c, f_cd = d2E/dq_c dq_d and g_c, Hq_c per coordinate:
 *     grad E = sum_c f_c g_c,   H = sum_cd f_cd g_c g_d^T + sum_c f_c Hq_c,
 *     dH/dp  = sum_cd (df_cd/dp) g_c g_d^T + sum_c (df_c/dp) Hq_c   (hf_cross.c, their own path).
 */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Coulomb constant, kJ nm / (mol e^2): exactly OpenMM's ONE_4PI_EPS0 (SimTKOpenMMRealType.h). */
#define HF_ONE_4PI_EPS0 (1.0 / (4.0 * 3.14159265358979323846 * (1e-6 * 8.8541878128e-12 / (1.602176634e-19 * 1.602176634e-19 * 6.02214076e23))))

typedef enum {
    HF_TERM_BOND = 0,            /* atoms i,j;       slots k, r0;            E = k (r - r0)^2 */
    HF_TERM_ANGLE,               /* atoms i,j,k;     slots k, theta0;        E = k (theta - theta0)^2 */
    HF_TERM_PERIODIC,            /* atoms i,j,k,l;   slots k, phase;         E = scale k (1 + cos(n phi - phase)) */
    HF_TERM_RB,                  /* atoms i,j,k,l;   slots C0..C5;           E = sum C_m cos(phi - pi)^m */
    HF_TERM_HARMONIC_DIHEDRAL,   /* atoms i,j,k,l;   slots k, phi0;          E = k wrap(phi - phi0)^2 */
    HF_TERM_PAIR,                /* atoms i,j;       slots qq, sigma, eps;   E = LJ(sigma, eps) + C qq / r */
    HF_TERM_PAIR_COMBINED,       /* atoms i,j;       slots q_i, q_j, sigma_i, sigma_j, eps_i, eps_j, combined by the
                                    model's rule; Coulomb scaled by scale_coulomb, LJ by scale_lj */
    HF_TERM_MM3_BOND,            /* atoms i,j;       slots k, r0;            E = k d^2 (1 + c3 d + c4 d^2), d = r - r0 */
    HF_TERM_MM3_ANGLE,           /* atoms i,j,k;     slots k, theta0;        E = k d^2 (1 + a3 d + a4 d^2 + a5 d^3 + a6 d^4),
                                    d = theta - theta0 (both: MacroModel's MM3*, the HF_MM3_* coefficients below) */
    HF_TERM_MM3_PAIR,            /* atoms i,j;       slots R, eps, qq;       E = eps S(r) (A exp(-b r / R) - c (R / r)^6)
                                    + C qq / r (MacroModel's MM3* vdW; HF_MM3_BUCKINGHAM_*, HF_MM3_SWITCH_* below) */
    /* The cross terms: functions of two or three coordinates (hf_cross.c; r_scale: the term's
     * distance scales s, default 1) */
    HF_TERM_MM3_STRETCH_BEND,    /* atoms i,j,k;     slots k, r0a, r0b, theta0; E = k (dra + drb) dtheta,
                                    dra = s_a r_ij - r0a, drb = s_b r_kj - r0b, dtheta = theta_ijk - theta0 */
    HF_TERM_MM3_BEND_BEND,       /* atoms a,c,b,d,e; slots k, theta01, theta02; E = k dtheta1 dtheta2, angles a-c-b and
                                    d-c-e (d or e may be a or b: 4 or 5 distinct particles) */
    HF_TERM_MM3_TORSION_STRETCH, /* atoms i,j,k,l;   slots k, r0;            E = k (s r_jk - r0) (1 + cos 3 phi) */
    HF_TERM_MM3_PAIR_SWITCHED,   /* atoms i,j,u,v;   slots R, eps, qq;       E = eps S(r_s) B(r_ij) + C qq / r_ij: the MM3*
                                    pair with its switch on another distance r_s = |y_i - y_j|, y_i = x_u + s_i (x_i - x_u),
                                    y_j = x_v + s_j (x_j - x_v), s = r_scale (> 0; u = i or s = 1: y = x). A reduced
                                    particle i (factor f, partner p) with u = p, s_i = 1/f: y_i is i's TRUE position,
                                    MacroModel's switch distance. Two coordinates only for on < r_s < off; otherwise
                                    the one-coordinate MM3* pair on (i, j) with S = 1 or 0 (hf_term_uses_cross_path) */
    HF_TERM_HBOND_10_12,         /* atoms i,j;       slots C, D;             E = C / r^12 - D / r^10 (MacroModel's
                                    angle-independent 10-12 hydrogen bond, AMBER 1984's form; C in kJ/mol nm^12,
                                    D in kJ/mol nm^10; no cutoff: the caller lists the pairs) */
    HF_NUM_TERM_KINDS
} hf_term_kind;

#define HF_MAX_TERM_SLOTS 6
#define HF_MAX_TERM_ATOMS 5      /* a bend-bend's a, c, b, d, e */
#define HF_NO_SLOT (-1)          /* the parameter is zero */

/* Below this sine (of a bond angle, or of the angles F,G and H,G of a dihedral) the coordinate is
 * taken as undefined: its gradient direction and its Hessian (~ 1/sin, 1/sin^2) are then
 * dominated by rounding (hf_geometry.c). */
#define HF_MIN_SINE 1e-12
/* pi: the angle of an exactly linear bend (hf_geometry.c). */
#define HF_PI 3.14159265358979323846
/* The period of a harmonic dihedral's wrapped difference (hf_terms.c). */
#define HF_TWO_PI 6.28318530717958647692

/*
 * MacroModel's MM3* anharmonic stretch and bend (hessfit's convention, no factor 1/2):
 *   bond   E = k dr^2 (1 - 2.55 dr + (7/12) 2.55^2 dr^2),                    dr = r - r0 in Angstrom
 *   angle  E = k dt^2 (1 - 0.014 D + 5.6e-5 D^2 - 7.0e-7 D^3 + 2.2e-8 D^4),  D = theta - theta0 in degrees
 * (dt in rad; the sextic 2.2e-8 is Tinker's MM3 and MacroModel's). The coefficients per Angstrom
 * and degree, then per nm and rad, the units the terms use (d = r - r0 in nm, theta - theta0 in
 * rad): E = k d^2 (1 + c3 d + c4 d^2) and E = k d^2 (1 + a3 d + a4 d^2 + a5 d^3 + a6 d^4).
 */
#define HF_MM3_BOND_CUBIC_PER_ANGSTROM (-2.55)
#define HF_MM3_BOND_QUARTIC_PER_ANGSTROM2 3.793125 /* (7/12) 2.55^2 */
#define HF_MM3_BOND_CUBIC (-25.5)        /* per nm: -2.55 per Angstrom x 10 */
#define HF_MM3_BOND_QUARTIC 379.3125     /* per nm^2: 3.793125 per Angstrom^2 x 100 (exact in binary) */
#define HF_MM3_ANGLE_CUBIC_PER_DEGREE (-0.014)
#define HF_MM3_ANGLE_QUARTIC_PER_DEGREE2 5.6e-5
#define HF_MM3_ANGLE_QUINTIC_PER_DEGREE3 (-7.0e-7)
#define HF_MM3_ANGLE_SEXTIC_PER_DEGREE4 2.2e-8
#define HF_DEGREES_PER_RADIAN (180.0 / 3.14159265358979323846)
#define HF_MM3_ANGLE_CUBIC (HF_MM3_ANGLE_CUBIC_PER_DEGREE * HF_DEGREES_PER_RADIAN)
#define HF_MM3_ANGLE_QUARTIC (HF_MM3_ANGLE_QUARTIC_PER_DEGREE2 * HF_DEGREES_PER_RADIAN * HF_DEGREES_PER_RADIAN)
#define HF_MM3_ANGLE_QUINTIC \
    (HF_MM3_ANGLE_QUINTIC_PER_DEGREE3 * HF_DEGREES_PER_RADIAN * HF_DEGREES_PER_RADIAN * HF_DEGREES_PER_RADIAN)
#define HF_MM3_ANGLE_SEXTIC                                                                                   \
    (HF_MM3_ANGLE_SEXTIC_PER_DEGREE4 * HF_DEGREES_PER_RADIAN * HF_DEGREES_PER_RADIAN * HF_DEGREES_PER_RADIAN * \
     HF_DEGREES_PER_RADIAN)

/*
 * MacroModel's MM3* van der Waals ("MM3 Softcut Buckingham") with its 6-8 Angstrom switch, per pair
 * at distance r (nm), R = R*_i + R*_j (nm), eps = sqrt(eps_i eps_j) (kJ/mol):
 *   E = eps S(r) (A exp(-b r / R) - c (R / r)^6),  A = 184000, b = 12, c = 2.25,
 *   S(r) = 1 (r <= on), (off^2 - r^2) / (off^2 - on^2) (on < r < off), 0 (r >= off), on = 0.6 nm,
 *   off = 0.8 nm (MacroModel: on the TRUE distance of the atoms; HF_TERM_MM3_PAIR takes it on its own
 *   distance, HF_TERM_MM3_PAIR_SWITCHED on another one, e.g. that of the reduced hydrogens' true
 *   positions). S is only continuous: S' jumps at on and off, and so do the forces (MacroModel's form).
 * Below r = R / HF_MM3_BUCKINGHAM_WALL (R/2) the bracket is replaced by M (R / r)^12, M = (A exp(-b / 2)
 * - c 2^6) / 2^12 (the same value at R/2): Tinker's MM3 rule (ebuck.f, "switch from exponential to
 * R^12 at very short range"), since the exp-6 form turns over near 0.28 R and falls to -infinity (the
 * Buckingham catastrophe) where a minimisation from a strained start could otherwise fuse two atoms.
 * MacroModel's own soft cut cannot be recovered from its report (no pair there is closer than 0.668 R);
 * at and above R/2 the form is MacroModel's.
 * The term adds the Coulomb energy HF_ONE_4PI_EPS0 qq / r (constant dielectric, no cutoff).
 */
#define HF_MM3_BUCKINGHAM_A 184000.0
#define HF_MM3_BUCKINGHAM_B 12.0
#define HF_MM3_BUCKINGHAM_C 2.25
#define HF_MM3_BUCKINGHAM_WALL 2.0 /* R / r beyond which the r^-12 wall replaces the exp-6 form */
/* M = (A exp(-b / WALL) - c WALL^6) / WALL^12 (0.0761939...; needs <math.h>) */
#define HF_MM3_BUCKINGHAM_WALL_M                                                                           \
    ((HF_MM3_BUCKINGHAM_A * exp(-HF_MM3_BUCKINGHAM_B / HF_MM3_BUCKINGHAM_WALL) -                          \
      HF_MM3_BUCKINGHAM_C * pow(HF_MM3_BUCKINGHAM_WALL, 6.0)) /                                          \
     pow(HF_MM3_BUCKINGHAM_WALL, 12.0))
#define HF_MM3_SWITCH_ON 0.6  /* nm */
#define HF_MM3_SWITCH_OFF 0.8 /* nm */

typedef struct {
    int kind;                    /* hf_term_kind */
    int atoms[HF_MAX_TERM_ATOMS];/* system particle indices; unused entries -1 */
    int slots[HF_MAX_TERM_SLOTS];/* parameter slots; HF_NO_SLOT = zero; unused entries HF_NO_SLOT */
    int periodicity;             /* HF_TERM_PERIODIC: n >= 1 */
    double scale;                /* HF_TERM_PERIODIC: multiplies k (1 for periodic, 0.5 for OPLS V_m) */
    double phase;                /* HF_TERM_PERIODIC: used when slots[1] == HF_NO_SLOT (OPLS: 0 or pi) */
    double scale_coulomb;        /* HF_TERM_PAIR_COMBINED */
    double scale_lj;             /* HF_TERM_PAIR_COMBINED */
    double r_scale[2];           /* distance scales s (r_eff = s r): HF_TERM_MM3_BOND, HF_TERM_MM3_TORSION_STRETCH [0];
                                    HF_TERM_MM3_STRETCH_BEND [0] bond i-j, [1] bond k-j; HF_TERM_MM3_PAIR_SWITCHED s_i,
                                    s_j of its switch points; 1 otherwise */
} hf_term;

typedef enum { HF_COMBINE_GEOMETRIC = 0, HF_COMBINE_LORENTZ_BERTHELOT = 1 } hf_combining;

/* A reduced particle (MacroModel's reduced hydrogens; hf_reduction.c): every term sees it at
 * x'_particle = x_partner + factor (x_particle - x_partner). partner is not reduced itself, both lie
 * in one molecule, factor > 0 (validated by the caller). */
typedef struct {
    int particle, partner;
    double factor;
} hf_reduced_particle;

/*
 * A flattened force. The plain nonbonded sum runs over all pairs (a < b) of each molecule that are
 * not marked in that molecule's exclusion matrix; its per-particle slots are particle_slots.
 * Hessian blocks: molecule m's block is (3 n_m)^2 doubles, row-major, at block_offset[m];
 * coordinate order within it: local atom index (position in mol_atoms), then x, y, z.
 */
typedef struct {
    int n_particles;
    int n_slots;
    int combining;                   /* hf_combining */
    const int *particle_slots;       /* 3 per particle: charge, sigma, epsilon (HF_NO_SLOT = 0) */
    int n_molecules;
    const int *mol_offset;           /* n_molecules + 1 offsets into mol_atoms */
    const int *mol_atoms;            /* particle indices, molecule by molecule */
    const int *atom_mol;             /* per particle: its molecule */
    const int *atom_local;           /* per particle: its position within its molecule */
    const unsigned char *excluded;   /* per molecule m, an n_m x n_m row-major 0/1 matrix at
                                        excl_offset[m], symmetric, indexed by local atom index */
    const long long *excl_offset;    /* n_molecules */
    const long long *block_offset;   /* n_molecules + 1; block_offset[n_molecules] = total size */
    int n_terms;
    const hf_term *terms;
    /* Reduced particles (hf_reduction.c): every entry point evaluates the terms at x' = M x and maps
     * the results exactly (forces M^T F', Hessian blocks M^T H' M, adjoints M G M^T, y -> M y).
     * Grouped by molecule: molecule m's at reduced[reduced_offset[m] .. reduced_offset[m + 1]).
     * n_reduced = 0: none (reduced and reduced_offset may then be NULL; no extra work at all). */
    int n_reduced;
    const hf_reduced_particle *reduced;
    const int *reduced_offset;       /* n_molecules + 1 (when n_reduced > 0) */
} hf_model;

/* Per-term scalar results: f(q), f'(q), f''(q) and their derivatives with respect to each of the
 * term's slots (index s refers to term->slots[s]; entries for HF_NO_SLOT are 0). */
typedef struct {
    double q, e, de, d2e;
    double de_dp[HF_MAX_TERM_SLOTS], dde_dp[HF_MAX_TERM_SLOTS], d2de_dp[HF_MAX_TERM_SLOTS];
} hf_term_value;

/* Geometry: the internal coordinate of n atoms (2: distance, 3: angle at the middle atom,
 * 4: IUPAC dihedral) with, if grad != NULL, its gradient (3n) and, if hess != NULL, its Hessian
 * (3n x 3n row-major); either may be NULL.
 * Returns 0, -1 when the coordinate is undefined (coincident atoms, an angle of 0, collinear
 * dihedral atoms), or HF_COORDINATE_LINEAR for an exactly linear angle (sine <= HF_MIN_SINE, cosine
 * < 0): theta is not differentiable there; q = pi, grad = 0 and hess = M, the Hessian of cos theta
 * there (M_aa = P/|a|^2, M_bb = P/|b|^2, M_ab = P/(|a||b|) over the arms a = x0 - x1, b = x2 - x1,
 * P = I - u u^T), which a bend with f'(pi) = 0 uses in place of d2q/dx2 with f''(pi) in place of
 * f' (hf_evaluate_term; hf_geometry.c's linear_angle has the derivation). */
#define HF_COORDINATE_LINEAR 1
int hf_coordinate(int n_atoms, const double *const x[4], double *q, double *grad, double *hess);

/* f, f', f'' and parameter derivatives of one term at coordinate value q. For pair terms q = r. */
void hf_term_scalar(const hf_model *model, const hf_term *term, const double *table, double q,
                    hf_term_value *out);

/* Energy (kJ/mol) and, if forces != NULL, forces ADDED to forces[3 n_particles] (kJ/mol/nm).
 * pos is 3 n_particles. Returns 0, or -1 on undefined geometry (term index in *bad_term). */
int hf_energy_forces(const hf_model *model, const double *table, const double *pos,
                     double *energy, double *forces, int *bad_term);

/* Hessian blocks (overwritten; size block_offset[n_molecules]), kJ/mol/nm^2. */
int hf_hessian_blocks(const hf_model *model, const double *table, const double *pos,
                      double *blocks, int *bad_term);

/* dE/dslot for every slot (overwritten; size n_slots), kJ/mol per slot unit. */
int hf_parameter_derivatives(const hf_model *model, const double *table, const double *pos,
                             double *dedp, int *bad_term);

/* energies[m] = the energy (kJ/mol) of molecule m: its terms and its plain nonbonded pairs
 * (overwritten; size n_molecules). They sum to hf_energy_forces' energy. */
int hf_molecule_energies(const hf_model *model, const double *table, const double *pos,
                         double *energies, int *bad_term);

/* out[s] = sum_m weights[m] dE_m/dslot_s for every slot (overwritten; size n_slots): the gradient of
 * any loss L(E_0..E_{M-1}) given weights[m] = dL/dE_m (n_molecules, finite). A molecule of weight 0
 * adds exactly 0. Fails exactly where hf_parameter_derivatives does. */
int hf_molecule_energy_derivatives(const hf_model *model, const double *table, const double *pos,
                                   const double *weights, double *out, int *bad_term);

/* Bad-term index used when the undefined geometry is in the plain nonbonded sum. */
#define HF_BAD_NONBONDED_PAIR (-2)
/* Bad-term index (with a return of -1) when the reduced particles' work arrays could not be
 * allocated (hf_reduction.c): out of memory, not a geometry. */
#define HF_BAD_OUT_OF_MEMORY (-3)

/*
 * Adjoint contractions (hf_contract.c), for every slot s (outputs overwritten; size n_slots):
 *
 *   hf_hessian_contraction_derivatives:  out[s] = tr(G^T dH/dp_s) = sum_m sum_ij G_m,ij dH_m,ij/dp_s
 *       adjoint = G in the layout of the Hessian blocks (block_offset[n_molecules] doubles); only
 *       the symmetric part of G matters (dH/dp is symmetric). out is in Hessian units (kJ/mol/nm^2)
 *       times G's units, per slot unit.
 *   hf_gradient_contraction_derivatives: out[s] = y . d(grad E)/dp_s
 *       y: 3 n_particles, system order. out is in kJ/mol/nm times y's units, per slot unit.
 *
 * Per term, with g = dq/dx and Hq = d2q/dx2 of its coordinate,
 *   tr(G^T dH/dp_s) = (df''/dp_s) g^T G g + (df'/dp_s) <G, Hq>,   y . d(grad E)/dp_s = (df'/dp_s) g . y,
 * O(term size^2) work per term; no Hessian is formed. Every term of the energy takes part (the
 * plain nonbonded pairs through the general term path, which has the slot derivatives). Where a
 * slot derivative is infinite (an epsilon of 0 whose partner's is not, see hf_terms.c) the result
 * is infinite or NaN, except that a term whose contraction weight is 0 adds exactly 0; theta0 of an
 * exactly linear bend (hf_evaluate_term) gives NaN whatever the weight (undefined there).
 * Return 0, or -1 on undefined geometry (term index, or HF_BAD_NONBONDED_PAIR, in *bad_term),
 * exactly where hf_parameter_derivatives fails (and hf_hessian_blocks, except that its fast pair
 * path skips pairs with zero energy, whose slot derivatives need not be zero).
 */
int hf_hessian_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                       const double *adjoint, double *out, int *bad_term);
int hf_gradient_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                        const double *y, double *out, int *bad_term);

/* hf_hessian_contraction_derivatives for the wanted slots only: wanted[s] != 0 for the slots wanted
 * (n_wanted entries; a slot s >= n_wanted counts as wanted; wanted NULL: all). A term none of whose
 * slots is wanted is skipped, unevaluated, so the other slots' out[s] are 0 or partial; the wanted
 * ones are exactly hf_hessian_contraction_derivatives'. A skipped term's undefined geometry is not
 * reported. */
int hf_hessian_contraction_derivatives_of(const hf_model *model, const double *table, const double *pos,
                                          const double *adjoint, const unsigned char *wanted, int n_wanted,
                                          double *out, int *bad_term);

/*
 * Bilinear forms of the Hessian's slot derivatives (hf_bilinear.c), the rows of a residual Jacobian:
 * for molecule m, vectors (n_vectors rows of its 3 n_m coordinates, the block's order) and pairs
 * (2 per pair: the indices u_r, w_r of two vectors; a negative index gives a zero row),
 *     out[row(s) * n_pairs + r] = u_r^T (dH_m/dp_s) w_r     (overwritten; rows x n_pairs)
 * for the wanted slots: slot_row[s] the row of slot s, -1 for a slot not wanted (n_rows rows); slot_row
 * NULL: every slot, row(s) = s (n_slots rows). Slot-major, so that each term's update of one slot
 * streams over the pairs. One pass over m's terms (its plain nonbonded pairs included), skipping a
 * term none of whose slots is wanted: per term and vector g . v and Hq v, per pair two scalars.
 * Errors as hf_hessian_contraction_derivatives (HF_BAD_OUT_OF_MEMORY when scratch is missing).
 */
int hf_bilinear_hessian_derivatives(const hf_model *model, const double *table, const double *pos, int m,
                                    int n_vectors, const double *vectors, int n_pairs, const int *pairs,
                                    const int *slot_row, int n_rows, double *out, int *bad_term);

/* ---- the evaluation step shared by the assembly (hf_assemble.c) and the contractions ---------- */

/* The internal coordinate of the last term evaluated: consecutive terms on the same atoms (the
 * periodic components of one torsion, an OPLS torsion's V1..V4) reuse q, dq/dx and d2q/dx2.
 * Set n = 0 before the first use. */
typedef struct {
    int n, atoms[4], has_grad, has_hess;
    int linear;  /* hf_coordinate gave HF_COORDINATE_LINEAR: hess holds M, not d2q/dx2 */
    double q, grad[12], hess[144];
} hf_coordinate_cache;

/* The term's coordinate q with its gradient (3n, if want_grad) and Hessian (3n x 3n, if want_hess)
 * in the cache, then its f, f', f'' and slot derivatives in *value. Returns the number of atoms
 * n, or -1 when the geometry is undefined (or the kind is unknown or a cross kind). A switched
 * MM3* pair is evaluated here as the pair on its atoms i, j (n = 2) with S of its switch distance
 * and S' = 0: its value wherever hf_term_uses_cross_path is 0.
 * An exactly linear bend (HF_TERM_ANGLE, HF_TERM_MM3_ANGLE; HF_COORDINATE_LINEAR) is smooth where
 * f'(pi) = 0 exactly (theta0 = pi): then value->de = f''(pi) and value->dde_dp = df''/dslot (the
 * coefficients of M, which the cache holds in place of d2q/dx2, with dq/dx = 0), value->d2de_dp = 0,
 * and dde_dp = NaN for a slot whose df'(pi)/dslot != 0 (theta0): the derivative of the forces and
 * Hessian with respect to it is undefined there (for theta0 != pi the energy has a cusp). So every
 * composer of f'' g g^T + f' Hq and of its slot derivatives gets the limit without knowing, and NaN
 * in theta0's entry. f'(pi) != 0 gives -1 (a cusp). */
int hf_evaluate_term(const hf_model *model, const hf_term *term, const double *table, const double *pos,
                     int want_grad, int want_hess, hf_coordinate_cache *cache, hf_term_value *value);

/* The plain nonbonded pair (pa, pb) as an HF_TERM_PAIR_COMBINED term (every field set: scales 1,
 * slots q_a, q_b, sigma_a, sigma_b, eps_a, eps_b). Returns 0 when all six slots are HF_NO_SLOT
 * (the pair has no energy and no slot derivative), 1 otherwise. */
int hf_plain_pair_term(const hf_model *model, int pa, int pb, hf_term *pair);

/* ---- cross terms (hf_cross.c): E = f(q_1, .., q_m; p), m = 2 or 3 coordinates ---------------- */

#define HF_MAX_CROSS_COORDS 3
#define HF_MAX_CROSS_SLOTS 4

/* 1 for the kinds with a cross-term layout (HF_TERM_MM3_STRETCH_BEND .. _PAIR_SWITCHED). */
int hf_is_cross_kind(int kind);

/* 1 when the term takes the cross-term path at these positions: always for a cross kind, except
 * HF_TERM_MM3_PAIR_SWITCHED, which takes it only inside its switch range (on < r_s < off) and is
 * otherwise a one-coordinate term on its atoms i, j (hf_evaluate_term: S = 1, or 0 with the
 * Coulomb part alone; the same numbers as HF_TERM_MM3_PAIR with that S). */
int hf_term_uses_cross_path(const hf_term *term, const double *pos);

/* The atom entries of a term kind (2 to HF_MAX_TERM_ATOMS; a bend-bend's 5 entries may name one
 * particle twice); 0 for an unknown kind. */
int hf_term_atom_entries(int kind);

/* 1 when the term's coordinate (hf_evaluate_term's) is a distance: its Hessian is [[K, -K], [-K, K]]
 * with K_ij = hf_distance_hessian_entry, so callers skip the 6x6 (want_hess = 0). */
static inline int hf_term_is_distance(const hf_term *t)
{
    return t->kind == HF_TERM_MM3_PAIR_SWITCHED || hf_term_atom_entries(t->kind) == 2;
}

/* K_ij = (delta_ij - u_i u_j) / r of a distance r with gradient u on its first atom (inv_r = 1/r):
 * the same numbers as hf_coordinate's Hessian. */
static inline double hf_distance_hessian_entry(const double *u, double inv_r, int i, int j)
{
    return ((i == j ? 1.0 : 0.0) - u[i] * u[j]) * inv_r;
}

/* Coordinate c of a cross kind: its number of atoms n_c (2 distance, 3 angle, 4 dihedral; 4 for the
 * switch distance of HF_TERM_MM3_PAIR_SWITCHED, a distance between two points of its 4 entries)
 * with the term's atom entries it uses in entries[0..n_c-1]; 0 when c is beyond the kind's coordinates. */
int hf_cross_coordinate_atoms(int kind, int c, int *entries);

/* The scalar part of a cross term at coordinates q: E, f_c = dE/dq_c, f_cd = d2E/dq_c dq_d and
 * their derivatives with respect to the term's slots s < HF_MAX_CROSS_SLOTS (0 for HF_NO_SLOT). */
typedef struct {
    double e, f[HF_MAX_CROSS_COORDS], f2[HF_MAX_CROSS_COORDS][HF_MAX_CROSS_COORDS];
    double de_dp[HF_MAX_CROSS_SLOTS], df_dp[HF_MAX_CROSS_SLOTS][HF_MAX_CROSS_COORDS];
    double df2_dp[HF_MAX_CROSS_SLOTS][HF_MAX_CROSS_COORDS][HF_MAX_CROSS_COORDS];
} hf_cross_value;

void hf_cross_scalar(const hf_term *term, const double *table, const double *q, hf_cross_value *out);

/* One evaluated cross term: per coordinate c its atoms (entries), q_c, g_c = dq_c/dx (3 n_c) and,
 * if asked, Hq_c = d2q_c/dx2 ((3 n_c)^2), then the scalar part. A switched pair's switch distance
 * lists only its entries of non-zero weight (n_c = 2 to 4). */
typedef struct {
    int n_entries, n_coords;
    int n[HF_MAX_CROSS_COORDS], entries[HF_MAX_CROSS_COORDS][4];
    double q[HF_MAX_CROSS_COORDS], grad[HF_MAX_CROSS_COORDS][12], hess[HF_MAX_CROSS_COORDS][144];
    hf_cross_value v;
} hf_cross_eval;

/* Returns 0, or -1 when a coordinate is undefined (a linear angle, collinear dihedral atoms). */
int hf_evaluate_cross_term(const hf_term *term, const double *table, const double *pos, int want_hess,
                           hf_cross_eval *out);

/* The term's gradient (3 n_entries) and Hessian ((3 n_entries)^2, row-major; needs want_hess) over
 * its atom entries: grad = sum_c f_c g_c, H = sum_cd f_cd g_c g_d^T + sum_c f_c Hq_c. Either may be NULL. */
void hf_cross_gradient_hessian(const hf_cross_eval *ev, double *grad, double *hess);

/* ---- Hessian-space objectives (hf_objective.c) ------------------------------------------------ */
/*
 * The loss L = sum_i r_i^2, r_i = w_i (target_i - value_i), of frequency, eigenmatrix and Hessian-
 * element targets for every molecule, its gradient dL/dslot for every slot by the adjoint route
 * (one G per molecule, then one hf_hessian_contraction_derivatives call) and the residuals. The
 * meaning of every field and the residual layout are those of HessianObjectiveSpec
 * (plugin/include/HessianObjective.h); the caller has validated the spec.
 */
typedef enum { HF_PAIR_NONE = 0, HF_PAIR_BY_POSITION = 1, HF_PAIR_BY_OVERLAP = 2 } hf_frequency_pairing;

typedef struct {
    const double *masses;        /* n_m, amu (NULL when neither frequencies nor the eigenmatrix are used) */
    int pairing;                 /* hf_frequency_pairing */
    int project;                 /* frequencies: project translations and rotations out */
    int n_freq;
    const double *freq_target;   /* n_freq, cm^-1 */
    const double *freq_weight;   /* n_freq */
    double freq_threshold;       /* HF_PAIR_BY_POSITION: candidates above it (cm^-1) */
    const double *freq_vectors;  /* HF_PAIR_BY_OVERLAP: n_freq rows of 3 n_m */
    int n_eig;                   /* eigenmatrix vectors (0: none) */
    const double *eig_vectors;   /* n_eig rows of 3 n_m */
    const double *eig_target;    /* n_eig^2 row-major, lower triangle read */
    const double *eig_weight;
    const double *hess_target;   /* (3 n_m)^2 row-major, lower triangle read; NULL: no Hessian elements */
    const double *hess_weight;
} hf_objective_molecule;

typedef struct {
    int n_molecules;                          /* = the model's */
    const hf_objective_molecule *molecules;
    double frequency_factor;                  /* cm^-1 per sqrt(kJ/mol/nm^2/amu) */
    const unsigned char *gradient_slots;      /* the slots whose dL/dslot is wanted (n_gradient_slots
                                                 entries, as hf_hessian_contraction_derivatives_of's
                                                 wanted); NULL: every slot */
    int n_gradient_slots;
} hf_objective_spec;

/* Workspace and memory between evaluations (the position-paired selection, the last pairing). */
typedef struct hf_objective_state hf_objective_state;

/* NULL when out of memory. The state fits this model's molecules and this spec. */
hf_objective_state *hf_objective_state_create(const hf_model *model, const hf_objective_spec *spec);
void hf_objective_state_destroy(hf_objective_state *state);

/* What went wrong in hf_objective_compute. */
typedef struct {
    int bad_term;   /* HF_OBJECTIVE_GEOMETRY: the term (or HF_BAD_NONBONDED_PAIR) */
    int molecule;   /* HF_OBJECTIVE_EIGENSOLVER, HF_OBJECTIVE_NONFINITE: the molecule */
    int info;       /* HF_OBJECTIVE_EIGENSOLVER: LAPACK's info */
} hf_objective_error;

#define HF_OBJECTIVE_GEOMETRY (-1)     /* undefined geometry, as hf_hessian_blocks */
#define HF_OBJECTIVE_EIGENSOLVER (-2)  /* LAPACKE_dsyevd failed (info) */
#define HF_OBJECTIVE_NONFINITE (-3)    /* a molecule's Hessian block (or its modes) is not finite */

/*
 * One evaluation at (table, pos): *loss; dldslot (n_slots, overwritten; NULL: no gradient, no
 * contraction; with spec->gradient_slots only the wanted slots' entries are exact, the others 0 or
 * partial); residuals (NULL: not wanted). Returns 0 or one of the codes above.
 */
int hf_objective_compute(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                         hf_objective_state *state, double *loss, double *dldslot, double *residuals,
                         hf_objective_error *error);

/* For each frequency target (molecules concatenated) the MM mode it was compared with in the last
 * evaluation (ascending eigenvalue order of its mode list), -1 if none; n = the total targets. */
void hf_objective_state_pairing(const hf_objective_state *state, int *modes, int n);

/* The number of residuals of molecule m and the first one's index in the residual layout. */
long long hf_objective_state_molecule_residuals(const hf_objective_state *state, int m, long long *first);

/*
 * The residual Jacobian of the listed molecules' targets at (table, pos), in one call:
 * molecules[0..n_molecules) (distinct, in range; any order). For each listed molecule m, in list
 * order, its n_m residuals (the evaluation's values, n_m = hf_objective_state_molecule_residuals)
 * and its slot-major block jac_t[k * n_m + i] = d r_i / d slot_s for the wanted slots s = slots[k],
 * k < n_wanted (slots NULL: all, k = s); the molecules' residuals concatenated in residuals and
 * their blocks concatenated in jac_t (the block of list position p starts at n_rows times the
 * residuals listed before it; n_rows = n_wanted, or n_slots; overwritten). Exact:
 *   frequency k paired with mode j: -w_k F / (2 sqrt|l_j|) u_j^T dH/dp u_j, u_j = M^-1/2 v_j (the
 *       gradient's |l| floor; with the projection P v_j = v_j, so P drops out), 0 when unpaired;
 *   eigenmatrix (a, b): -w_ab u_a^T dH/dp u_b, u_a = M^-1/2 q_a (the fixed vectors);
 *   Hessian element (i, j): -w_ij dH_ij/dp,
 * all of a molecule in one hf_bilinear_hessian_derivatives pass. paired: the mode of every
 * frequency target of the model (molecules concatenated, as hf_objective_state_pairing; e.g. a
 * GPU evaluation's pairing); NULL: paired as an evaluation pairs now (the position-paired
 * selection made first if it is not made yet). The molecules run in threads as in
 * hf_objective_compute (HESSFIT_NUM_THREADS, OpenBLAS single-threaded meanwhile), each writing only
 * its own output ranges: the results are bit for bit those of one-molecule calls, whatever the
 * thread count. Returns 0, HF_OBJECTIVE_MEMORY, HF_OBJECTIVE_LIST (error->molecule: the list
 * position of a molecule out of range or listed twice; nothing computed), or the HF_OBJECTIVE_ code
 * of the failing molecule at the lowest list position (its error fields).
 */
/*
 * The objective's eigenproblem for a GPU platform that solves on the host (platforms/common,
 * CommonHostEigensolver): count symmetric matrices, matrix k of dims[k] x dims[k] at matrices[k]
 * (only the lower triangle of its column-major layout is read, so a row-major symmetric matrix
 * serves as it is), each diagonalised in place by LAPACK's divide and conquer (?syevd, as
 * hf_objective_compute): values[k] receives its eigenvalues ascending and, with vectors, matrices[k]
 * its unit eigenvectors as columns, that is as rows of a row-major matrix. info[k]: LAPACK's info
 * (0: success; a failure, out of memory included, is the caller's to report). The matrices run in
 * threads (HESSFIT_NUM_THREADS, OpenBLAS single-threaded meanwhile); each result is the same at any
 * thread count. The _float form is the same in single precision (?ssyevd).
 */
void hf_symmetric_eigen_list(int count, const int *dims, double *const *matrices, double *const *values, int vectors,
                             int *info);
void hf_symmetric_eigen_list_float(int count, const int *dims, float *const *matrices, float *const *values,
                                   int vectors, int *info);

#define HF_OBJECTIVE_MEMORY (-4)
#define HF_OBJECTIVE_LIST (-5)
int hf_objective_jacobian(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                          hf_objective_state *state, const int *molecules, int n_molecules, const int *paired,
                          const int *slots, int n_wanted, double *residuals, double *jac_t, hf_objective_error *error);

/*
 * For a device that forms the bilinear forms itself (platforms/common's Jacobian kernel): what
 * hf_objective_jacobian hands to hf_bilinear_hessian_derivatives for each listed molecule, so that
 *     d r_i / d slot_s = coef_i u_a^T (dH/dslot_s) u_b,  (a, b) = pairs[2i], pairs[2i + 1],
 * with coef_i = 0 giving exactly 0 and a negative index or n_vectors = 0 a zero row. The vectors
 * are rows over the molecule's 3 n_m coordinates (dim) with the reduced particles' entries already
 * mapped (M u), so that they contract with the terms' Hessians at the reduced positions directly.
 */
typedef struct {
    int dim;            /* 3 n_m */
    int n_vectors;      /* rows of vectors (0: every row of the molecule is zero) */
    long long n_pairs;  /* the molecule's residuals */
    double *vectors;    /* n_vectors x dim */
    int *pairs;         /* 2 per residual */
    double *coef;       /* per residual */
} hf_jacobian_pairs;

/* The list call of hf_objective_jacobian up to the bilinear forms: residuals as there, and
 * pairs[p] (n_molecules of them, overwritten; free with hf_jacobian_pairs_free) for list position p.
 * Same arguments, threads and returns; on failure nothing is left allocated. */
int hf_objective_jacobian_pairs(const hf_model *model, const double *table, const double *pos,
                                const hf_objective_spec *spec, hf_objective_state *state, const int *molecules,
                                int n_molecules, const int *paired, double *residuals, hf_jacobian_pairs *pairs,
                                hf_objective_error *error);
void hf_jacobian_pairs_free(hf_jacobian_pairs *pairs, int n);

/* ---- helpers of the objective (hf_rigid_body.c, hf_assignment.c) ------------------------------- */

/* A rotation whose remainder after Gram-Schmidt is below this fraction of the largest rotation
 * vanishes (the axis of a linear molecule; coordinates noisy at 1e-6 relative still count as
 * linear). */
#define HF_RIGID_ROTATION_TOLERANCE 1e-5

/* Orthonormal rows (basis: 6 rows of 3 n_atoms, row-major; the kept rows first, the rest zero)
 * spanning the translations and the infinitesimal rotations about the centre of mass in
 * mass-weighted coordinates: t_k = sqrt(m_a) e_k, r_k = sqrt(m_a) e_k x (x_a - x_com). Rotations
 * that vanish (a linear molecule's axis, a single atom) are dropped. atoms: the molecule's
 * particle indices into pos (NULL: atom a is particle a). masses: n_atoms, positive.
 * Returns the number of rows (6, 5 or 3). */
int hf_rigid_body_basis(int n_atoms, const int *atoms, const double *pos, const double *masses, double *basis);

/* An assignment of rows to distinct columns maximising sum_k score[k][col_of_row[k]] (score:
 * rows x cols, row-major, 1 <= rows <= cols, finite), by shortest augmenting paths (the Hungarian
 * method: O(rows^2 cols) worst case, one O(cols) scan per row when its best column is still free).
 * work: at least rows + 2 cols + 3 doubles; iwork: at least 3 (cols + 1) ints. Returns 0, or -1
 * when a score is not finite (col_of_row is then incomplete). */
int hf_assign_max_score(int rows, int cols, const double *score, int *col_of_row, double *work, int *iwork);

#ifdef __cplusplus
}
#endif
#endif
