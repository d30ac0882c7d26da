#ifndef HESSFIT_FORCEFIELD_H_
#define HESSFIT_FORCEFIELD_H_
/*
 * A force field as hessfit holds it: a list of typed parameters in canonical units, plus what
 * its file format needs to write it back unchanged except for fitted values.
 *
 * Canonical units and energy forms (q2mm's; the same "no 1/2" convention as HessianForce):
 *   bond      values = {k [kcal/mol/A^2], r0 [A]}                  E = k (r - r0)^2
 *             (an MM3* .fld adds mu [D], the line's bond moment: values = {k, r0, mu})
 *   angle     values = {k [kcal/mol/rad^2], theta0 [deg]}          E = k (theta - theta0)^2
 *   torsion   values = Fourier triples {k_1, phase_1, n_1, k_2, ...}: k [kcal/mol], phase [deg],
 *             n periodicity (integer valued)                       E = sum k (1 + cos(n phi - phase))
 *             (MM3's V1 V2 V3 are the triples {V1/2, 0, 1}, {V2/2, 180, 2}, {V3/2, 0, 3})
 *   improper  values = {k [kcal/mol/rad^2]} harmonic out-of-plane (MM3), or Fourier triples
 *             (AMBER IMPR); improper_form says which
 *   vdw       values = {r* [A] (half the minimum distance of a like pair), eps [kcal/mol]}
 *   charge    values = {q [e]}
 *   stretch-bend (MM3* .fld S-B table, code 3) values = {k_sb [mdyn/rad]}, MacroModel's own unit
 *             (E = F_SB k_sb (dr_1 + dr_2) dtheta, F_SB the .fld header's factor, 601.99392
 *             kJ/mol per mdyn A), so that the MM3* model's constant keeps the file's bits
 * Conversions from file units (MM3 mdyn/A x 71.96631, mdyn*A/rad^2 x 71.94) live in
 * hessfit_units.h.
 */
#include "hessfit_molecule.h"
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hessfit_param_kind {
    HESSFIT_PARAM_BOND = HESSFIT_TERM_BOND,
    HESSFIT_PARAM_ANGLE = HESSFIT_TERM_ANGLE,
    HESSFIT_PARAM_TORSION = HESSFIT_TERM_TORSION,
    HESSFIT_PARAM_IMPROPER = HESSFIT_TERM_IMPROPER,
    HESSFIT_PARAM_VDW,
    HESSFIT_PARAM_CHARGE,
    HESSFIT_PARAM_STRETCH_BEND, /* MM3* .fld only; no typed term has this kind (hessfit_mm3_build finds it) */
    HESSFIT_NUM_PARAM_KINDS
} hessfit_param_kind;

typedef enum hessfit_improper_form { HESSFIT_IMPROPER_HARMONIC = 0, HESSFIT_IMPROPER_FOURIER = 1 } hessfit_improper_form;

typedef enum hessfit_ff_format {
    HESSFIT_FF_MM3_FLD = 0,  /* MacroModel MM3* .fld */
    HESSFIT_FF_FRCMOD = 1,   /* AMBER frcmod */
    HESSFIT_FF_FORMAT_NONE = 2,
    HESSFIT_FF_FFXML = 3     /* OpenMM ForceField XML (read only; the fit exports fitted.xml) */
} hessfit_ff_format;

#define HESSFIT_FF_TYPE_LEN 8       /* type labels up to 7 characters */
#define HESSFIT_FF_MAX_VALUES 18    /* up to 6 Fourier triples */
/* The wildcard in stored type labels, whatever the file wrote ("00" in MM3, "X" in AMBER). */
#define HESSFIT_FF_WILDCARD "*"

typedef struct hessfit_ff_param {
    hessfit_param_kind kind;
    int n_types;                           /* 1 (vdw, charge), 2, 3 or 4 */
    char types[4][HESSFIT_FF_TYPE_LEN];         /* labels as in the file, wildcard as HESSFIT_FF_WILDCARD */
    int n_values;
    double values[HESSFIT_FF_MAX_VALUES];       /* canonical units, above */
    hessfit_improper_form improper_form;
    int line;         /* 1-based line in the file it was read from (q2mm's parameter id); 0 if new */
    int substructure; /* .fld: index into hessfit_forcefield.substructures; -1 for the main tables */
    char label[64];   /* the file's comment or label for the line ("C(sp2)-N"), may be "" */
    /** MM3* .fld main tables: the separator printed between types i and i+1 ('-' single, '=' double,
     * '%' triple bond, '*' any bond, '.' a bond without order (MacroModel's zero-order bond); 0 when
     * the file gives none, for out-of-plane lines, or for other formats: any bond). */
    char bond_marks[3];
    /** MM3* .fld main tables: the "Opt. Descriptor" columns as text (environment conditions such as
     * "O200 0000": atom 1 bears an O2; "1C200 0000": one continuation line follows), "" when blank
     * or every field is 0000 (no condition). Types alone cannot evaluate them: the matcher does on
     * the molecule's bonds (see hessfit_typing.h). */
    char descriptor[24];
} hessfit_ff_param;

/** An MM3* substructure: parameters that apply where the SMILES-like pattern matches. Terms in
 * its parameter lines name atoms by their positions in the pattern ("1 2" = atoms 1 and 2). */
typedef struct hessfit_ff_substructure {
    char name[128];     /* the " C  ..." comment line */
    char pattern[256];  /* the " 9  ..." pattern line */
    int line;           /* line of the comment line */
} hessfit_ff_substructure;

/** MM3* atom-type equivalence: atoms of type `type` use the parameters of `equivalent` for the
 * kinds the file says (a .fld equivalence line). */
typedef struct hessfit_ff_equivalence {
    char type[HESSFIT_FF_TYPE_LEN];
    char equivalent[HESSFIT_FF_TYPE_LEN];
    int line;
} hessfit_ff_equivalence;

/** MM3* .fld: one line of a table as MacroModel reads it, in the file's own units, for what MacroModel's
 * energy needs beyond the fitted values (hessfit_mm3.h): the header factors, the bond moments and
 * bend-bend constants (3rd field of stretch and bend lines), the stretch-bend (code 3), special
 * van der Waals pair (6), hydrogen-bond (7) and torsion-stretch (8) tables and the van der Waals
 * table with its offsets, formal charges and descriptors. Every modelled parameter line also has
 * its row (param says which), substructure lines too. */
typedef struct hessfit_fld_row {
    /** '0' a header line " 0  KEY  eq  factor" (types[0] = KEY, values = {eq, factor}); '1'..'8' a
     * -2 table line of that interaction code; 'V' a van der Waals (-6) line. */
    char code;
    int alternative;                      /* 1 for an 'a' line (column 1) */
    int n_types;
    char types[4][HESSFIT_FF_TYPE_LEN];   /* as in hessfit_ff_param ("*" the wildcard; substructures:
                                             pattern positions "1", "2" or types) */
    char bond_marks[3];                   /* main tables: as in hessfit_ff_param (0 none) */
    char descriptor[24];                  /* main tables and vdW: as in hessfit_ff_param ("" none) */
    int n_values;
    /** The numeric fields in file units: table lines the three F10.4 fields (stretch r0 k mu; bend
     * theta0 k k_bb; S-B k_sb; torsion V1 V2 V3; out-of-plane angle k; special pair R eps; H-bond
     * C/100 D/100 (third); torsion-stretch K_ts); vdW lines R* eps offset charge. A blank field is
     * 0 and sets bit v of blank. */
    double values[4];
    unsigned blank;
    int param;          /* index of the hessfit_ff_param read from this line, -1 if none */
    int substructure;   /* index into hessfit_forcefield.substructures, -1 for the main part */
    int line;           /* 1-based */
} hessfit_fld_row;

typedef struct hessfit_forcefield {
    hessfit_ff_format format;
    char *path;                 /* file it was read from */
    int n_params;
    hessfit_ff_param *params;
    int n_substructures;
    hessfit_ff_substructure *substructures;
    int n_equivalences;
    hessfit_ff_equivalence *equivalences;
    /** MM3* .fld only (0 and NULL otherwise): every header, table and van der Waals line, in file
     * order (hessfit_fld_row). Not written back: the lines below are. */
    int n_fld_rows;
    hessfit_fld_row *fld_rows;
    /** OpenMM ForceField XML only: its NonbondedForce's coulomb14scale and lj14scale (has_14_scales
     * 1 when the file has a NonbondedForce), the fit's default `scale14`. */
    int has_14_scales;
    double coulomb14_scale, lj14_scale;
    /** OpenMM ForceField XML only: 1 for an OPLS-AA file (the root's combining_rule="geometric", as
     * foyer writes it, or atom types named "opls_...", as LigParGen and foyer name them), whose
     * Lennard-Jones combines geometrically although its NonbondedForce says nothing: the fit's
     * `combining` default. */
    int geometric_combining;
    /** The file's text, kept so that writing changes only the fitted values. */
    int n_lines;
    char **lines;
} hessfit_forcefield;

void hessfit_forcefield_free(hessfit_forcefield *ff);
/** "bond", "angle", "torsion", "improper", "vdw", "charge", "stretch-bend". */
const char *hessfit_param_kind_name(hessfit_param_kind kind);
/** Index of the parameter read from that line, or -1. For an MM3 .fld, a descriptor continuation
 * line (blank type columns below a parameter line of the same interaction code, e.g. mm3.fld
 * line 115 under the N2-H3 stretch of line 114) gives the parameter it continues, as MacroModel
 * reports such a line as the parameter's FF line; that parameter's own .line stays 114. */
int hessfit_forcefield_param_at_line(const hessfit_forcefield *ff, int line);

/** The vdw parameter of an atom type, as the fit model's nonbonded terms and the ForceField XML
 * export both take it: the last main-table (not substructure) vdw line of that exact type, else
 * the one equivalent type (.fld atom-type equivalences) that has one. *param gets its index.
 * HESSFIT_ERROR_INVALID_ARGUMENT names the type and the file when there is none, or when two
 * equivalent types have one. */
hessfit_status hessfit_forcefield_vdw_param(const hessfit_forcefield *ff, const char *type, int *param);

/** A force-field file by its extension: .fld (MM3*), .frcmod (AMBER) or .xml (OpenMM ForceField),
 * optionally .gz; HESSFIT_ERROR_UNSUPPORTED names the file otherwise. */
hessfit_status hessfit_forcefield_read(const char *path, hessfit_forcefield *ff);
/** Write ff in the format it was read from (hessfit_fld_write or hessfit_frcmod_write). */
hessfit_status hessfit_forcefield_write(const hessfit_forcefield *ff, const char *path);

/** MacroModel MM3* .fld: every parameter line of the main tables and of the substructures, the
 * vdW table, the atom-type equivalences, and every line again as an hessfit_fld_row. */
hessfit_status hessfit_fld_read(const char *path, hessfit_forcefield *ff);
/** Write ff (read by hessfit_fld_read, values possibly changed) to path: every line as read except
 * the numeric fields of parameters whose values changed, rewritten in the file's own fixed
 * columns and precision. Written atomically (temporary file + rename). */
hessfit_status hessfit_fld_write(const hessfit_forcefield *ff, const char *path);

/**
 * OpenMM ForceField XML (the files openmm.app.ForceField reads: openmmforcefields' GAFF, AMBER),
 * read into hessfit's canonical units (hessfit_units.h). Parameters are by atom class: an entry
 * naming typeN is stored under that type's class (AtomTypes: name, class, element, mass), "" (any
 * class) is the wildcard; molecules are typed by their atom types read as class names (a typed
 * mol2 with GAFF types, for which type and class are the same name).
 *   HarmonicBondForce <Bond>     length [nm], k [kJ/mol/nm^2, E = k/2 (r - r0)^2] -> {k/2, r0}
 *   HarmonicAngleForce <Angle>   angle [rad], k [kJ/mol/rad^2, E = k/2]            -> {k/2, theta0}
 *   PeriodicTorsionForce <Proper> periodicityN, phaseN [rad], kN [kJ/mol] -> one torsion of Fourier
 *                                triples; <Improper> the same as a Fourier improper, the central
 *                                atom first (class1), as OpenMM names it, with label = its
 *                                PeriodicTorsionForce's ordering ("default" or "amber"): the
 *                                typing gives such an improper OpenMM's atom order (hessfit_typing.h)
 *   NonbondedForce <Atom>        sigma [nm], epsilon [kJ/mol] -> vdw {R* = sigma 2^(1/6) / 2 [A],
 *                                eps}; coulomb14scale, lj14scale -> has_14_scales; charges come from
 *                                the structures (a <UseAttributeFromResidue>, residue templates and
 *                                per-type charges are not read); an OPLS-AA file (root
 *                                combining_rule="geometric", or "opls_" type names) sets
 *                                geometric_combining
 * Ignored: <Info>, <Residues> (templates), <Patches>. Refused with HESSFIT_ERROR_UNSUPPORTED naming
 * file:line and the element: every other force (LennardJonesForce and CustomNonbondedForce, which
 * OPLS-AA files as LigParGen writes them use for geometric combining; Custom*, CMAP, AMOEBA, GBSA),
 * <Script>, and PeriodicTorsionForce orderings other than "default" and "amber". Errors name
 * file:line and the element: malformed XML, a missing or non-numeric attribute, an undefined type,
 * a class or type longer than HESSFIT_FF_TYPE_LEN - 1 characters.
 */
hessfit_status hessfit_ffxml_read(const char *path, hessfit_forcefield *ff);

/** AMBER frcmod (MASS, BOND, ANGL, DIHE, IMPR, NONB) read and write. */
hessfit_status hessfit_frcmod_read(const char *path, hessfit_forcefield *ff);
hessfit_status hessfit_frcmod_write(const hessfit_forcefield *ff, const char *path);

#ifdef __cplusplus
}
#endif
#endif
