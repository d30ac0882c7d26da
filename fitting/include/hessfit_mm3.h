#ifndef HESSFIT_MM3_H_
#define HESSFIT_MM3_H_
/*
 * MacroModel's MM3* energy of one molecule, as MacroModel builds it from an .fld: every interaction
 * with its constants in MacroModel's units and, for each constant, where it comes from; and a plain
 * reference evaluator of that energy. docs/mm3.md has the rules, their evidence and the deviations
 * measured against MacroModel's own printed energies (tests/fitting/mm3/test_mm3_mmo.c).
 *
 * Units (MacroModel's): Angstrom, degrees, the .fld's own constants (mdyn/A, mdyn A/rad^2,
 * kcal/mol, Debye, e), energies in kJ/mol through the .fld header factors (STR, BND, ...).
 *
 * The model is one array per interaction kind (atoms 0-based, constants, their sources), meant to
 * be walked: hessfit_mm3_build fills it, hessfit_mm3_evaluate evaluates it, a fit model can turn
 * each array into force-field terms.
 */
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_typing.h"

#ifdef __cplusplus
extern "C" {
#endif

/** MM3's cross-term constants (Tinker params/mm3.prm, checked against MacroModel's printed energies):
 * bend-bend E = HESSFIT_MM3_BEND_BEND_UNIT F_BB k_bb1 k_bb2 D1 D2 (D in degrees; angangunit), and
 * torsion-stretch E = HESSFIT_MM3_TORSION_STRETCH_UNIT F_TS K_ts dr (1 + cos 3 phi) (dr in A;
 * strtorunit = -11.995 / 2). */
#define HESSFIT_MM3_BEND_BEND_UNIT (-0.02191418)
#define HESSFIT_MM3_TORSION_STRETCH_UNIT (-5.9975)
/** A bond moment's charges: q = +-mu / (HESSFIT_MM3_DEBYE_PER_E_A r0) (mu in D, r0 in A), MacroModel's
 * factor (4.803, not 1/0.2081943: fitted to its printed charges, docs/mm3.md). */
#define HESSFIT_MM3_DEBYE_PER_E_A 4.803

/** Where a constant comes from. */
typedef enum hessfit_mm3_origin {
    HESSFIT_MM3_FROM_PARAM = 0, /**< ff->params[index].values[value] * scale (a value the fit may change:
                                     stretch k, r0, mu; bend k, theta0; k_sb; torsion V; out-of-plane k) */
    HESSFIT_MM3_FROM_ROW = 1,   /**< ff->fld_rows[index].values[value] * scale (an .fld value not fitted) */
    HESSFIT_MM3_DERIVED = 2     /**< computed from other constants or fixed by a rule (rule says which) */
} hessfit_mm3_origin;

typedef struct hessfit_mm3_source {
    hessfit_mm3_origin origin;
    int index;         /**< param or row index; -1 when derived */
    int value;         /**< value index inside it; -1 when derived */
    double scale;      /**< constant = stored value * scale (1/71.96631 for stretch k, 2/n for shared V's) */
    int line;          /**< the .fld line, 0 when derived */
    const char *rule;  /**< static text: "" for a value read as it is, else how (derived, shared, exception) */
} hessfit_mm3_source;

/** Stretch: E = 1/2 F_STR k dr^2 (1 - 2.55 dr + 3.793125 dr^2), dr = r_eff - r0, r_eff = |x_a' - x_b'| / f. */
typedef struct hessfit_mm3_stretch {
    int atoms[2];      /**< where mu is not 0, atoms[0] is plus; else the typed term's order */
    double r0, k, mu;  /**< A, mdyn/A, Debye (values 1, 0, 2 of the stretch parameter) */
    /** The atom a positive moment makes positive (the line's first column); -1 only for a zero
     * moment whose line fits the bond both ways or neither (MacroModel cannot charge such a bond:
     * a non-zero moment there is an error). */
    int plus;
    double f;          /**< effective-length divisor: f of a reduced H in the bond, else 1 */
    hessfit_mm3_source src_r0, src_k, src_mu;
    int term;          /**< index of the typed term */
} hessfit_mm3_stretch;

/** Bend: E = 1/2 F_BND k dt^2 (1 - 0.014 D + 5.6e-5 D^2 - 7e-7 D^3 + 2.2e-8 D^4), dt in rad, D in deg. */
typedef struct hessfit_mm3_bend {
    int atoms[3];      /**< centre atoms[1] */
    double theta0, k;  /**< deg, mdyn A/rad^2 */
    hessfit_mm3_source src_theta0, src_k;
    int term;
} hessfit_mm3_bend;

/** Stretch-bend: E = F_SB k_sb (dr_1 + dr_2) dt (rad), dr_i of the bonds atoms[1]-atoms[0], atoms[1]-atoms[2]. */
typedef struct hessfit_mm3_stretch_bend {
    int atoms[3];
    double k_sb, theta0, r0[2], f[2]; /**< theta0 the bend's; r0 and f of the two bonds' stretches */
    hessfit_mm3_source src_k_sb, src_theta0, src_r0[2];
    int bend;          /**< index into hessfit_mm3_model.bends */
} hessfit_mm3_stretch_bend;

/** Bend-bend: E = -0.02191418 F_BB k_bb1 k_bb2 D_1 D_2 (deg), both angles at atoms[0]. */
typedef struct hessfit_mm3_bend_bend {
    int atoms[5];            /**< centre, the ends of angle 1, the ends of angle 2 */
    double k_bb[2], theta0[2]; /**< from each angle's MAIN-table bend line */
    hessfit_mm3_source src_k_bb[2], src_theta0[2];
    int bend[2];
} hessfit_mm3_bend_bend;

/** Torsion: E = F_TOR [V1 (1 + cos phi) + V2 (1 - cos 2 phi) + V3 (1 + cos 3 phi)]. */
typedef struct hessfit_mm3_torsion {
    int atoms[4];
    double v[3];       /**< kcal/mol, after any substructure sharing */
    hessfit_mm3_source src_v[3];
    int term;
} hessfit_mm3_torsion;

/** Torsion-stretch: E = F_TS (-11.995 / 2) K_ts dr_bc (1 + cos 3 phi), dr_bc of the central bond. */
typedef struct hessfit_mm3_torsion_stretch {
    int atoms[4];
    double k_ts, r0, f; /**< kcal/mol/A; r0 and f of the central bond's stretch */
    hessfit_mm3_source src_k_ts, src_r0;
    int torsion;       /**< index into hessfit_mm3_model.torsions */
} hessfit_mm3_torsion_stretch;

/** Out-of-plane: E = F_IMP k (1 - cos 2 phi), phi the dihedral atoms[0..3] = (a, centre, b, c). */
typedef struct hessfit_mm3_out_of_plane {
    int atoms[4];
    double k;          /**< mdyn A/rad^2 */
    hessfit_mm3_source src_k;
    int term;
} hessfit_mm3_out_of_plane;

/** A reduced hydrogen: x' = x_partner + f (x - x_partner), f = 1 + offset. */
typedef struct hessfit_mm3_reduced {
    int atom, partner;
    double f;
    hessfit_mm3_source src_offset;
} hessfit_mm3_reduced;

/** Per atom: the van der Waals line MacroModel uses and the charge. */
typedef struct hessfit_mm3_atom {
    double r_star, eps;      /**< A, kcal/mol */
    double formal_charge;    /**< e (4th column of its vdW line) */
    double charge;           /**< e: formal charge + its bond-moment charges */
    int vdw_row;             /**< the row of its van der Waals line */
    hessfit_mm3_source src_r_star, src_eps, src_formal;
} hessfit_mm3_atom;

/** A nonbonded pair (not 1-2, not 1-3; 1-4 unscaled):
 *   E_vdW = F_VDW eps S(r) (184000 exp(-12 r'/R) - 2.25 (R/r')^6), S on the TRUE distance r:
 *           1 (r <= 6), (64 - r^2)/28 (6 < r < 8), 0 (r >= 8) (MacroModel's 7 +- 1 A run setting);
 *           below r' = R/2 the bracket is M (R/r')^12 of its value there (Tinker's MM3 wall, hf_core.h);
 *   E_ele = F_ELE q_i q_j / r' (no cutoff). r' the reduced distance. */
typedef struct hessfit_mm3_pair {
    int atoms[2];
    double r, eps, qq;       /**< R = R*_i + R*_j (A), eps = sqrt(eps_i eps_j) (kcal/mol), or a special pair */
    hessfit_mm3_source src_r, src_eps;
    int is14;
} hessfit_mm3_pair;

/** MacroModel's "Maximum hydrogen bond distance" (A): a hydrogen bond is listed when its distance
 * is below it at the geometry the model is built at (hessfit_mm3_build), and then kept whatever
 * the distance (the list is fixed, so the energy stays smooth in a fit). */
#define HESSFIT_MM3_HBOND_CUTOFF 4.0

/** A hydrogen bond (MacroModel's "Angle-independent 10,12-Lennard Jones", code-7 lines of two atoms):
 *   E = F_HBD (C' / r'^12 - D' / r'^10), r' the reduced distance (A), C', D' the line's C/100 and
 *   D/100 columns (so C = 100 C' kcal/mol A^12 with F_HBD = 418.4 = 4.184 x 100).
 * One for every pair whose types (and descriptors) fit a 2-atom code-7 line (the first in file
 * order, either direction) that is 1-5 or farther apart (1-2, 1-3 and 1-4 are not: MacroModel
 * printed 0 for the one candidate of the rh-enamide set, a 1-4 H-N-C=O pair at 3.17 A, which as
 * a bond would give -0.023 kJ/mol); listed (it has energy in the model) when its atoms are closer
 * than HESSFIT_MM3_HBOND_CUTOFF at the built geometry. The export takes the cutoff at run time.
 * Added to the pair's van der Waals and electrostatic energy (docs/mm3.md). */
typedef struct hessfit_mm3_hbond {
    int atoms[2];            /**< the hydrogen (atomic number 1) first where there is one */
    int listed;              /**< true distance < HESSFIT_MM3_HBOND_CUTOFF at the built geometry */
    double c, d;             /**< C', D': kcal/mol A^12 / 100, kcal/mol A^10 / 100 */
    hessfit_mm3_source src_c, src_d;
} hessfit_mm3_hbond;

/** The .fld header factors to kJ/mol (hbd: 0 when the .fld has no HBD line, which is an error only
 * when a hydrogen bond is listed). */
typedef struct hessfit_mm3_factors {
    double str, bnd, tor, imp, sb, bb, ts, vdw, ele, hbd;
} hessfit_mm3_factors;

typedef struct hessfit_mm3_model {
    int n_atoms;
    hessfit_mm3_factors factor;
    int n_stretches, n_bends, n_stretch_bends, n_bend_bends, n_torsions, n_torsion_stretches, n_out_of_plane,
        n_reduced, n_pairs, n_hbonds; /**< n_hbonds: the 1-5-or-farther candidates, listed or not */
    int n_hbonds_listed;
    /** Pairs not 1-2 or 1-3 whose types fit a 2-atom code-7 line, before the 1-4 and distance
     * rules: how many hydrogen-bond candidates the rules examined (n_hbonds_listed of them are listed). */
    int n_hbond_candidates;
    hessfit_mm3_stretch *stretches;
    hessfit_mm3_bend *bends;
    hessfit_mm3_stretch_bend *stretch_bends;   /**< one per bend (k_sb 0 where MacroModel has none) */
    hessfit_mm3_bend_bend *bend_bends;
    hessfit_mm3_torsion *torsions;
    hessfit_mm3_torsion_stretch *torsion_stretches; /**< one per torsion (k_ts 0 without a code-8 line) */
    hessfit_mm3_out_of_plane *out_of_plane;
    hessfit_mm3_reduced *reduced;
    hessfit_mm3_atom *atoms;                   /**< n_atoms */
    hessfit_mm3_pair *pairs;
    hessfit_mm3_hbond *hbonds;
} hessfit_mm3_model;

/**
 * The MM3* model of mol (MacroModel atom types, bonds with orders incl. order 0) with its bonded
 * terms typed against ff (hessfit_assign_parameters; terms with HESSFIT_MATCH_NO_TERM contribute
 * nothing). Impropers take the atom order MacroModel printed when mol carries its report
 * (reported_terms), else (first neighbour, centre, second, third). Anything MacroModel would need
 * and ff lacks (a header factor, a van der Waals line, a stretch-bend line at a carbon centre, a
 * stretch for a stretch-bend or torsion-stretch) is an error naming the atoms, their types and the
 * table; *model is then empty.
 */
hessfit_status hessfit_mm3_build(const hessfit_molecule *mol, const hessfit_typed_molecule *typed,
                                 const hessfit_forcefield *ff, hessfit_mm3_model *model);
void hessfit_mm3_model_free(hessfit_mm3_model *model);

/** The energy kinds, in the order of MacroModel's breakdown. */
typedef enum hessfit_mm3_kind {
    HESSFIT_MM3_STRETCH = 0,
    HESSFIT_MM3_BEND,
    HESSFIT_MM3_TORSION,
    HESSFIT_MM3_OUT_OF_PLANE,
    HESSFIT_MM3_STRETCH_BEND,
    HESSFIT_MM3_BEND_BEND,
    HESSFIT_MM3_TORSION_STRETCH,
    HESSFIT_MM3_VDW,
    HESSFIT_MM3_ELECTROSTATIC,
    HESSFIT_MM3_HBOND,
    HESSFIT_MM3_NUM_KINDS
} hessfit_mm3_kind;

/** "stretch", "bend", "torsion", "out-of-plane", "stretch-bend", "bend-bend", "torsion-stretch",
 * "van der Waals", "electrostatic", "hydrogen bond". */
const char *hessfit_mm3_kind_name(hessfit_mm3_kind kind);
/** Interactions of that kind in model (pairs for both vdW and electrostatic). */
int hessfit_mm3_count(const hessfit_mm3_model *model, hessfit_mm3_kind kind);

/** The reduced geometry: x' = x for every atom but the reduced hydrogens (coords, out: 3 n_atoms). */
void hessfit_mm3_reduce(const hessfit_mm3_model *model, const double *coords, double *out);

/**
 * The van der Waals pair's kink at the switch's inner edge, where its true distance r is 6 A:
 * dE/dr(6+) - dE/dr(6-) = eps S'(6+) B(r'), S'(6+) = -12/28 per A, B(r') = 184000 exp(-12 r'/R) -
 * 2.25 (R/r')^6 at the pair's reduced distance r' (= r when neither atom is reduced), per A in
 * eps's unit for R, r' in A. S is continuous there but S' jumps from 0, so E has a corner; where
 * B(r') < 0 (every real pair near 6 A) the jump is positive, a convex corner, at which a minimum of
 * the whole energy can sit (hf_geometry_kinks.c). The outer edge (8 A) is a concave corner, never
 * a minimum.
 */
double hessfit_mm3_vdw_switch_kink(double r_star_sum, double eps, double r_reduced);

/**
 * The energy of model at coords (3 n_atoms, Angstrom), kJ/mol: totals[k] for each kind (may be
 * NULL), and, where per[k] is not NULL, the energy of each interaction of kind k (hessfit_mm3_count
 * entries). Returns the total (NAN when out of memory).
 */
double hessfit_mm3_evaluate(const hessfit_mm3_model *model, const double *coords, double totals[HESSFIT_MM3_NUM_KINDS],
                            double *const per[HESSFIT_MM3_NUM_KINDS]);

#ifdef __cplusplus
}
#endif
#endif
