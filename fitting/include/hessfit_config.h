#ifndef HESSFIT_CONFIG_H_
#define HESSFIT_CONFIG_H_
/*
 * The input file of `hessfit fit`: what to fit, to which data, how.
 *
 * Format: one "key = value" per line; '#' starts a comment (to the end of the line); blank lines
 * are ignored; keys are case-sensitive; keys marked (repeatable) may appear several times, every
 * other key at most once. Relative paths are relative to the directory of the input file. An
 * unknown key, a repeated single key, a value of the wrong form or a missing required key is an
 * error naming file:line (or the key). docs/fitting.md documents every key with an example.
 *
 *   forcefield    = PATH        MM3* .fld or AMBER .frcmod (required)
 *   structures    = PATH        training structures: .mmo, .mol2, .fchk, .log, .in, .hess, .xyz
 *                               (repeatable; the molecules are taken in order)
 *   hessian       = PATH        a QM Hessian for the next structure without one, in order
 *                               (repeatable; .fchk .log .in .hess, or .npy with an .xyz structure)
 *   free          = WHAT        free parameters (repeatable): "bond k", "bond r0", "angle k",
 *                               "angle theta0", "torsion k", "improper k", "vdw r", "vdw eps",
 *                               "line N" (every value of the parameter on line N), "line N k" ...
 *   no-term       = PATTERN     a term declared without parameter: "torsion * RH * *" (repeatable)
 *   prefer        = LINE        settles an ambiguous type match (repeatable)
 *   objective     = KIND        frequencies (default), frequencies-q2mm, eigenmatrix, hessian, none
 *   weight        = W           weight of every datum of the objective (default per kind)
 *   ts            = skip|keep|replace   the QM reaction coordinate of a transition state: weight 0
 *                               (default, q2mm's), compared as is, or replaced by a positive target
 *                               (objective = none: no Hessian-space objective; energies / geometry only)
 *   energy        = GROUP N [FILE]   structure N (from 1) in the conformer group GROUP (a name of
 *                               letters, digits, _ - .), its QM energy from FILE (Jaguar .out,
 *                               Gaussian .log/.fchk, ORCA .hess) or from its own file (repeatable)
 *   energy-weight = W | GROUP W per kcal/mol, for every energy or one group (repeatable)
 *   geometry      = all | N [bonds] [angles] [torsions] | N bond A B | N angle A B C | N torsion A B C D
 *                               bond lengths, angles, torsions of the MM-minimised structure N against
 *                               its QM geometry (repeatable)
 *   geometry-weight = bond W | angle W | torsion W   per Angstrom / degree (repeatable)
 *   start         = forcefield|seminario   starting values (default forcefield)
 *   optimizer     = lm|trf|lbfgs|slsqp|nelder-mead|sbplx|grad-simp   (default lm)
 *   bounds        = q2mm|none   parameter bounds (default q2mm)
 *   max-evaluations = N         (default 1000)
 *   max-time      = SECONDS     (default 0: none)
 *   ftol          = X           relative loss tolerance (default 1e-8)
 *   output        = DIR         where the results go (default: "<input file stem>-out" beside it)
 */
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One "key = value" as read, with where it was. */
typedef struct hessfit_config_entry {
    char *key;
    char *value;   /* paths already resolved against the input file's directory */
    int line;
} hessfit_config_entry;

typedef struct hessfit_config {
    char *path;            /* the input file */
    int n_entries;
    hessfit_config_entry *entries;
} hessfit_config;

/** Read and check an input file: syntax, known keys, single keys at most once, required keys,
 * value forms of the enumerated and numeric keys and the word forms of energy, energy-weight,
 * geometry and geometry-weight (numbers, names, word counts; the FILE of energy is resolved as a
 * path: it must not contain blanks). */
hessfit_status hessfit_config_read(const char *path, hessfit_config *config);
void hessfit_config_free(hessfit_config *config);

/** The value of a single key, or fallback when absent. */
const char *hessfit_config_get(const hessfit_config *config, const char *key, const char *fallback);
/** Number of entries of a key and the i-th one (NULL past the end). */
int hessfit_config_count(const hessfit_config *config, const char *key);
const hessfit_config_entry *hessfit_config_entry_at(const hessfit_config *config, const char *key, int i);
/** A numeric key: HESSFIT_ERROR_PARSE naming file:line when the value is not a finite number in
 * [min, max]; fallback when absent. */
hessfit_status hessfit_config_number(const hessfit_config *config, const char *key, double min, double max, double fallback,
                           double *value);

#ifdef __cplusplus
}
#endif
#endif
