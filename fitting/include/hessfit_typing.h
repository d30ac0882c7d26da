#ifndef HESSFIT_TYPING_H_
#define HESSFIT_TYPING_H_
/*
 * Topology of a molecule (bonds, angles, torsions, impropers, 1-4 pairs) and the matching of its
 * terms to force-field parameters.
 *
 * Matching is explicit and auditable: every term records the parameter it matched and the rule
 * that matched it; a term that matches nothing is an error naming the term and its atom types,
 * unless the user chose "no term" for it (hessfit_typing_options.no_term), which is recorded as such.
 * There is no fallback to a parameter of other types.
 *
 * Matching by types (HESSFIT_MATCH_TYPES / EQUIVALENCE / WILDCARD; the full rules in hf_typing.c):
 *   - candidates are main-table parameters whose types fit (exact, equivalent, wildcard), whose
 *     MM3 .fld bond marks fit the molecule's bond orders ('-' 1, 1.5 or 0; '=' 2 or 1.5; '%' 3;
 *     '.' 0; '*' or none any; orders the molecule does not give are not checked), and whose MM3
 *     environment descriptor does not fail ("O200 0000": atom 1 bears an O2 besides the term's own
 *     atoms; "00" any; an element wildcard "C0" any carbon);
 *   - ranked by fewest wildcards, fewest equivalence substitutions, then condition: satisfied
 *     (the more attached atoms required the better) before none before not evaluated (descriptors
 *     with continuation lines, whose meaning is not documented: the detail says so);
 *   - the best candidates with equal values: the first in file order, the others named in the
 *     detail; with different values the term is AMBIGUOUS, an error naming the term, its types and
 *     the lines, unless a "prefer LINE" pattern names exactly one of them. Never a silent pick.
 * For an MM3 .fld, hessfit_forcefield_param_at_line maps a descriptor continuation line to the
 * parameter it continues, so a report naming it (MacroModel: mm3.fld 115 for 114) matches.
 */
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hessfit_topology_options {
    /** Use the file's connectivity when the molecule has it (default 1). */
    int use_file_bonds;
    /** Bond when r <= tolerance * (r_cov(i) + r_cov(j)) (default 1.3, q2mm's). */
    double bond_tolerance;
    /** A looser tolerance for transition states (used when > 0 instead of bond_tolerance). */
    double ts_bond_tolerance;
} hessfit_topology_options;

/** The defaults above. */
hessfit_topology_options hessfit_topology_default_options(void);

typedef struct hessfit_topology {
    int n_atoms;
    int n_bonds;
    int *bonds;        /* 2 per bond, i < j, sorted */
    int n_angles;
    int *angles;       /* 3 per angle i j k, j the centre, i < k */
    int n_torsions;
    int *torsions;     /* 4 per proper torsion i j k l, j < k */
    int n_impropers;
    int *impropers;    /* 4 per improper: the three neighbours then the centre of a 3-connected atom */
    int n_pairs14;
    int *pairs14;      /* 2 per 1-4 pair (not also 1-2 or 1-3), i < j */
} hessfit_topology;

hessfit_status hessfit_topology_build(const hessfit_molecule *mol, const hessfit_topology_options *options, hessfit_topology *topo);
void hessfit_topology_free(hessfit_topology *topo);

/** How a term found its parameter. */
typedef enum hessfit_match_rule {
    HESSFIT_MATCH_NO_TERM = 0,   /* the user chose no parameter for this term */
    HESSFIT_MATCH_FF_LINE,       /* the force-field line the MM program reported (.mmo) */
    HESSFIT_MATCH_TYPES,         /* exact atom types (either direction) */
    HESSFIT_MATCH_EQUIVALENCE,   /* types after the force field's atom-type equivalences */
    HESSFIT_MATCH_WILDCARD,      /* a parameter with wildcard types */
    HESSFIT_NUM_MATCH_RULES
} hessfit_match_rule;

const char *hessfit_match_rule_name(hessfit_match_rule rule);

typedef struct hessfit_typed_term {
    hessfit_term_kind kind;
    int atoms[4];           /* 0-based; unused -1 */
    int param;              /* index into the force field's params; -1 for HESSFIT_MATCH_NO_TERM */
    hessfit_match_rule rule;
    char detail[96];        /* how, in words (truncated to fit): "ff line 114 (continued on 115) via mmo line
                               880 (O1)", "types C2 C2; O200 0000 holds", "types N2 H3; 114 ranks below:
                               1C200 0000 not evaluated", "wildcard * C2 C2 *; first of 955/970 (same
                               values)", "wildcard * C2 N2 *; 952/978 differ: pattern 7 prefers 952",
                               "...; bond orders unknown", "no-term pattern 2 'bond RH *'" */
} hessfit_typed_term;

typedef struct hessfit_typed_molecule {
    int n_terms;
    hessfit_typed_term *terms;
} hessfit_typed_molecule;

typedef struct hessfit_typing_options {
    /** Patterns of terms the user declares as having no parameter: "bond RH H1", "torsion * C2 N2 *"
     * (kind then atom types, * any type; impropers name the centre first). Terms that match no
     * parameter and match one get HESSFIT_MATCH_NO_TERM.
     * The same list takes "prefer LINE" entries: LINE (a line of a main-table bonded parameter of
     * the force field, else an error) settles every tie of different values it is part of; it
     * never promotes a worse candidate, and two prefer entries naming members of one tie leave it
     * ambiguous. */
    int n_no_term;
    const char *const *no_term;
} hessfit_typing_options;

/** Match every bonded term of topo (from mol) to a parameter of ff. Fails (HESSFIT_ERROR_INVALID_ARGUMENT,
 * typed left empty) when a term matches nothing and no pattern covers it, or when a term is
 * ambiguous; the message names the first such term and counts the others. */
hessfit_status hessfit_assign_parameters(const hessfit_molecule *mol, const hessfit_topology *topo, const hessfit_forcefield *ff,
                               const hessfit_typing_options *options, hessfit_typed_molecule *typed);
void hessfit_typed_molecule_free(hessfit_typed_molecule *typed);

#ifdef __cplusplus
}
#endif
#endif
