#ifndef HESSFIT_SEMINARIO_H_
#define HESSFIT_SEMINARIO_H_
/*
 * Bond and angle force constants from a QM Cartesian Hessian: the Seminario projection method
 * (J. M. Seminario, Int. J. Quantum Chem. 60, 1271 (1996)) as q2mm implements it, and the
 * modified Seminario method of A. E. A. Allen, M. C. Payne, D. J. Cole, J. Chem. Theory Comput.
 * 14, 5143 (2018).
 *
 * The projection. For atoms A, B let K^AB = -H_AB, the 3x3 block of the Hessian with the rows of
 * A and the columns of B (Hartree/Bohr^2). It is not symmetric in general; its eigenvalues l_i and
 * eigenvectors v_i (unit length, possibly complex: LAPACK dgeev, as numpy.linalg.eig) give the
 * stiffness of the A-B pair along a unit vector u as
 *     k_AB(u) = sum_i Re(l_i) |u . v_i|
 * (a complex pair contributes l |u.v| + conj(l) |u.conj(v)| = 2 Re(l) |u.v|, so the sum is real).
 *
 * Bonds, both methods:      k = s (k_AB(u_AB) + k_BA(u_AB)) / 2
 *   the mean of the two directions, u_AB the unit bond vector, s the scaling option (q2mm: 0.963).
 * Angles A-B-C (B the centre), original method (q2mm's "two springs in series"):
 *     1/k = 1 / (R_AB^2 k_AB(u_PA)) + 1 / (R_CB^2 k_CB(u_PC)),   times s,
 *   with R in Bohr, u_N = unit normal of the plane A B C, u_PA = u_N x u_BA and u_PC = u_BC x u_N
 *   the in-plane unit vectors perpendicular to B->A and B->C, and the blocks K^AB, K^CB (rows of
 *   the outer atom, columns of the centre, as q2mm). k is in Hartree/rad^2.
 * Angles, modified method (Allen et al.): each projection is divided by
 *     f_A = 1 + (1/n) sum_X |u_PA . u_PA(X)|^2
 *   over the n other angles A-B-X at the same centre that share the bond B-A (X a bonded
 *   neighbour of B, X != A, C; u_PA(X) the u_PA of the plane A B X); f_A = 1 when there is none.
 *   This shares the in-plane stiffness of bond B-A among all the angles that bend it. Neighbours X
 *   collinear with A-B (no plane) are left out of the mean. Bonds are as in the original method.
 *   Unlike Allen et al.'s program the result keeps its sign (no abs), and the scaling option is
 *   applied once (they apply the square of a frequency scaling factor: pass that as scaling).
 * Linear angles (sin(theta) < HESSFIT_SEMINARIO_LINEAR_SIN): the plane is undefined; the estimate is
 *   the mean of k over HESSFIT_SEMINARIO_LINEAR_SAMPLES planes through A-B-C evenly spaced about the
 *   axis (estimate.linear = 1). q2mm instead picks one plane from the Cartesian x or y axis (not
 *   rotation invariant); the old q2mm code gave NaN.
 *
 * Units and conventions. Every estimate carries k_au, the scaled spring constant d2E/dx2
 * (Hartree/Bohr^2 for bonds, Hartree/rad^2 for angles), which is what q2mm prints as
 * "legacy_force_constant_au", and k in hessfit's canonical units (kcal/mol/A^2, kcal/mol/rad^2)
 * for E = k (x - x0)^2, i.e. k = k_au * (unit conversion) / 2. The conversions are CODATA-exact
 * (hessfit_units.h) unless options.q2mm_units is set: then they are q2mm's rounded chain (below),
 * which differs by 1.4e-5 (bonds) and 3.5e-4 (angles) relative and is needed only to reproduce
 * q2mm's numbers.
 *
 * Transition states (options.ts):
 *   HESSFIT_SEMINARIO_TS_KEEP     the Hessian as given: bonds along the reaction coordinate come out
 *                            negative (q2mm's default).
 *   HESSFIT_SEMINARIO_TS_REPLACE  q2mm's invert_ts_curvature (Lime & Norrby, J. Comput. Chem. 36, 244
 *                            (2015)): the symmetrised Cartesian Hessian (not mass-weighted, not
 *                            projected) is diagonalised, its most negative eigenvalue is replaced
 *                            by options.ts_replacement (q2mm: 1.0 Hartree/Bohr^2), every other
 *                            negative eigenvalue by 0, and the Hessian rebuilt before projection.
 *   HESSFIT_SEMINARIO_TS_BLOCK_ABS each 3x3 projection uses |Re l_i| instead of Re l_i.
 *
 * Averaging over structures (hessfit_seminario_average): q2mm assigns every bond/angle of every
 * structure to a force-field line and gives that line the mean k and the mean geometry of its
 * instances. With HESSFIT_SEMINARIO_AVERAGE_POSITIVE (q2mm's invalid_policy "skip", and its old MM3
 * code) only estimates k > 0 enter the mean k; a line whose estimates are all <= 0 gets no k
 * (n_used = 0) and hessfit_seminario_apply keeps the force field's old constant -- this is why q2mm's
 * rh-enamide line 1866 (the forming C-H bond of a transition state) keeps 21.9463 mdyn/A. The
 * equilibrium value is always the mean over all instances. (The old q2mm MM3 code divided the sum
 * of the positive angle estimates by the count of ALL instances; that differs only for a line
 * with some but not all estimates <= 0, and is not reproduced.)
 * For MacroModel training sets q2mm projects each Jaguar Hessian with the .mmo coordinates (4
 * decimals; the Jaguar input's own coordinates move its constants by up to 4e-5 relative) and
 * averages the lengths and angles MacroModel PRINTED in the .mmo ("Actual" column), not those of
 * the coordinates: pass them as hessfit_seminario_instance.value to reproduce q2mm's equilibria (they
 * agree with the coordinates to the print precision, except for the angles about a partial
 * transition-state bond, where MacroModel's printed angle differs by up to 4 degrees).
 *
 * Everything is plain C; functions return an hessfit_status and name the offending item in
 * hessfit_last_error(). Atom indices are 0-based (messages print them 1-based, "atom 3").
 */
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_units.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- q2mm compatibility constants (used only with options.q2mm_units) -------------------- */
/* q2mm's constants.py: Hartree/Bohr^2 -> mdyn/A rounded to 15.569141 (CODATA 2018: 15.5689310)
 * and Hartree/rad^2 -> mdyn*A/rad^2 rounded to 4.3598 (CODATA: 4.3597447). Its canonical values
 * then use mdyn/A -> kcal/mol/A^2 = 0.5 x 602.2140857 / 4.184 = 71.9663104 (its MDYNA_TO_KJMOLA2,
 * from the CODATA 2014 Avogadro constant; the MM3 factor HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2
 * is 71.96631) and mdyn*A/rad^2 -> kcal/mol/rad^2 = MM3's 71.94
 * (HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2). */
#define HESSFIT_Q2MM_HARTREE_PER_BOHR2_TO_MDYN_PER_A   15.569141
#define HESSFIT_Q2MM_HARTREE_PER_RAD2_TO_MDYN_A_PER_RAD2 4.3598
#define HESSFIT_Q2MM_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2 (0.5 * 602.2140857 / HESSFIT_KCAL_TO_KJ)
/* q2mm's DFT Hessian scaling (B3LYP/6-31G*, Scott & Radom 1996), the default options.scaling. */
#define HESSFIT_Q2MM_DFT_SCALING 0.963

/* An angle is treated as linear when sin(theta) is below this, and then averaged over this many
 * planes about its axis. */
#define HESSFIT_SEMINARIO_LINEAR_SIN 1e-6
#define HESSFIT_SEMINARIO_LINEAR_SAMPLES 360

typedef enum hessfit_seminario_method {
    HESSFIT_SEMINARIO_ORIGINAL = 0, /* Seminario 1996 as q2mm uses it */
    HESSFIT_SEMINARIO_MODIFIED = 1  /* Allen, Payne, Cole 2018 (needs the molecule's bonds) */
} hessfit_seminario_method;

typedef enum hessfit_seminario_ts {
    HESSFIT_SEMINARIO_TS_KEEP = 0,
    HESSFIT_SEMINARIO_TS_REPLACE = 1,
    HESSFIT_SEMINARIO_TS_BLOCK_ABS = 2
} hessfit_seminario_ts;

typedef enum hessfit_seminario_policy {
    HESSFIT_SEMINARIO_AVERAGE_ALL = 0,     /* every estimate enters the mean k, negative ones too */
    HESSFIT_SEMINARIO_AVERAGE_POSITIVE = 1 /* only k > 0; none: no k, keep the old constant */
} hessfit_seminario_policy;

typedef struct hessfit_seminario_options {
    hessfit_seminario_method method;  /* default HESSFIT_SEMINARIO_ORIGINAL */
    hessfit_seminario_ts ts;          /* default HESSFIT_SEMINARIO_TS_KEEP */
    double ts_replacement;       /* Hartree/Bohr^2, > 0, for HESSFIT_SEMINARIO_TS_REPLACE (default 1.0) */
    double scaling;              /* > 0, multiplies every k (default HESSFIT_Q2MM_DFT_SCALING) */
    int q2mm_units;              /* 1: q2mm's rounded conversions (default 0: CODATA) */
    hessfit_seminario_policy policy;  /* averaging (default HESSFIT_SEMINARIO_AVERAGE_POSITIVE) */
} hessfit_seminario_options;

/** The defaults above: original method, as-is Hessian, scaling 0.963, CODATA units, positive-only
 * averaging. */
hessfit_seminario_options hessfit_seminario_default_options(void);
/** q2mm's recipe exactly: the defaults with q2mm_units = 1. */
hessfit_seminario_options hessfit_seminario_q2mm_options(void);
/** HESSFIT_ERROR_INVALID_ARGUMENT (naming the field) for an enum out of range or a scaling /
 * ts_replacement that is not finite and > 0. */
hessfit_status hessfit_seminario_check_options(const hessfit_seminario_options *options);

/** k_au -> mdyn/A (bonds) or mdyn*A/rad^2 (angles), and k_au -> canonical kcal/mol/A^2 or
 * kcal/mol/rad^2 for E = k (x - x0)^2 (half the spring constant), in the chosen convention.
 * NaN for a kind other than bond or angle. */
double hessfit_seminario_au_to_mdyn(hessfit_term_kind kind, int q2mm_units);
double hessfit_seminario_au_to_canonical(hessfit_term_kind kind, int q2mm_units);

typedef struct hessfit_seminario_estimate {
    hessfit_term_kind kind;   /* HESSFIT_TERM_BOND or HESSFIT_TERM_ANGLE */
    int atoms[3];        /* i j, or i j k with j the centre; -1 unused */
    double k_au;         /* scaled spring constant: Hartree/Bohr^2 or Hartree/rad^2 */
    double k;            /* canonical kcal/mol/A^2 or kcal/mol/rad^2 (E = k (x - x0)^2) */
    double k_mdyn;       /* mdyn/A or mdyn*A/rad^2 (the spring constant, as MM3 files hold it) */
    double value;        /* the geometry: r in A, theta in degrees */
    /** Bonds: the two directional projections k_AB, k_BA (Hartree/Bohr^2, unscaled).
     * Angles: the two in-plane projections k_AB(u_PA), k_CB(u_PC) (Hartree/Bohr^2, unscaled,
     * before the modified method's division; mean over the planes for a linear angle). */
    double projection[2];
    double factor[2];    /* modified method: f_A, f_C (1 otherwise; mean over planes if linear) */
    int linear;          /* angle treated as linear (averaged over planes) */
} hessfit_seminario_estimate;

/** The per-molecule estimator: the molecule's coordinates and Hessian (after the TS treatment),
 * its bonds (modified method) and the options. Opaque; one per molecule. */
typedef struct hessfit_seminario hessfit_seminario;

/**
 * Prepare estimates for mol: needs mol->hessian (3N x 3N, Hartree/Bohr^2), finite coordinates
 * and Hessian; the modified method also needs mol->bonds_known (the connectivity gives each
 * centre's neighbours). The molecule is copied; it may be freed afterwards. Errors:
 * HESSFIT_ERROR_NULL_ARGUMENT, HESSFIT_ERROR_INVALID_ARGUMENT (no Hessian, no atoms, no bonds for the
 * modified method, bad options, bond indices out of range), HESSFIT_ERROR_NONFINITE (naming the atom or
 * Hessian element), HESSFIT_ERROR_LAPACK (TS replacement eigensolver), HESSFIT_ERROR_OUT_OF_MEMORY.
 */
hessfit_status hessfit_seminario_create(const hessfit_molecule *mol, const hessfit_seminario_options *options, hessfit_seminario **out);
void hessfit_seminario_free(hessfit_seminario *s);
int hessfit_seminario_n_atoms(const hessfit_seminario *s);
/** The options it was created with. */
const hessfit_seminario_options *hessfit_seminario_get_options(const hessfit_seminario *s);

/**
 * Estimates for bond i-j and angle i-j-k (j the centre). Errors name the term:
 * HESSFIT_ERROR_INVALID_ARGUMENT for an atom index out of range, a repeated atom, coincident atoms
 * (distance below 1e-6 A), or a singular series combination (k_AB(u_PA) R_AB^2 = -k_CB R_CB^2);
 * HESSFIT_ERROR_LAPACK if dgeev fails. On failure *out is untouched.
 */
hessfit_status hessfit_seminario_bond(const hessfit_seminario *s, int i, int j, hessfit_seminario_estimate *out);
hessfit_status hessfit_seminario_angle(const hessfit_seminario *s, int i, int j, int k, hessfit_seminario_estimate *out);
/** The same by kind (bond: atoms[0..1], angle: atoms[0..2]); other kinds HESSFIT_ERROR_UNSUPPORTED. */
hessfit_status hessfit_seminario_term(const hessfit_seminario *s, hessfit_term_kind kind, const int *atoms, hessfit_seminario_estimate *out);

/* ---- averaging over structures -------------------------------------------------------------- */

/** One instance of a parameter: a term of one molecule and the group (force-field parameter) it
 * belongs to, e.g. group = the .fld line the MM program reported for it. */
typedef struct hessfit_seminario_instance {
    int molecule;        /* index into the estimators given to hessfit_seminario_average */
    hessfit_term_kind kind;   /* bond or angle */
    int atoms[3];
    int group;           /* >= 0 */
    /** The geometry to average for the equilibrium value (A or degrees), e.g. the value the MM
     * program printed; NaN: use the estimate's own value (from the coordinates). */
    double value;
} hessfit_seminario_instance;

typedef struct hessfit_seminario_group {
    int group;
    hessfit_term_kind kind;
    int n_instances;     /* all instances (the equilibrium value is their mean) */
    int n_used;          /* instances whose k entered the mean (all, or the k > 0 ones) */
    int n_nonpositive;   /* instances with k <= 0 */
    double k_au;         /* mean of the used k_au; NaN when n_used = 0 */
    double k;            /* canonical mean; NaN when n_used = 0 */
    double k_mdyn;       /* mdyn/A or mdyn*A/rad^2 mean; NaN when n_used = 0 */
    double value;        /* mean equilibrium value, A or degrees */
    double k_min, k_max; /* canonical extremes over all instances */
} hessfit_seminario_group;

/**
 * Estimate every instance with estimators[instance.molecule] and average per group (sorted by
 * group id; *groups malloc'ed, free() it). All estimators must share the same options (the first
 * one's policy and units are used; differing options are HESSFIT_ERROR_INVALID_ARGUMENT). A group whose
 * instances mix bonds and angles is HESSFIT_ERROR_INVALID_ARGUMENT naming the group. If estimates is
 * not NULL it receives the n_instances per-instance estimates in input order.
 */
hessfit_status hessfit_seminario_average(hessfit_seminario *const *estimators, int n_estimators,
                               const hessfit_seminario_instance *instances, int n_instances,
                               hessfit_seminario_estimate *estimates, hessfit_seminario_group **groups, int *n_groups);

/* hessfit_seminario_apply flags. */
/* Change only parameters of .fld substructures whose name line ends with the word OPT (q2mm's
 * mark of the parameters to fit; it estimates nothing else). */
#define HESSFIT_SEMINARIO_APPLY_OPT_ONLY 1u

/** 1 if parameter p of ff lies in a substructure whose " C  name" line ends with the word "OPT". */
int hessfit_seminario_param_marked_opt(const hessfit_forcefield *ff, const hessfit_ff_param *p);

/**
 * Put group results into a force field read from an MM3 .fld (group id = the file line): the
 * parameter read from that line gets values[1] = the mean equilibrium value and, when
 * n_used > 0, values[0] = the mean canonical k; with n_used = 0 the old constant stays. Groups
 * on a line that holds no parameter (MacroModel may report the continuation line of a two-line
 * parameter) and, with HESSFIT_SEMINARIO_APPLY_OPT_ONLY, groups of parameters outside OPT
 * substructures are left out and counted in *n_skipped. A parameter of another kind than its group
 * is HESSFIT_ERROR_INVALID_ARGUMENT naming the line (nothing is changed then). *n_changed and
 * *n_skipped may be NULL. hessfit_fld_write then rewrites only the changed lines' numbers.
 */
hessfit_status hessfit_seminario_apply(hessfit_forcefield *ff, const hessfit_seminario_group *groups, int n_groups, unsigned flags,
                             int *n_changed, int *n_skipped);

#ifdef __cplusplus
}
#endif
#endif
