#ifndef HF_TRAINING_SET_H_
#define HF_TRAINING_SET_H_
/*
 * The training set of a `hessfit fit` input file (hessfit_config.h), loaded completely before any
 * work: shared by `hessfit fit`, `hessfit report` and `hessfit check`.
 *
 * Loading, in this order, each step failing with a message that names the input file:line (or the
 * structure, the force-field line) before anything is computed or written:
 *   1. the input file and its settings (objective, weight, ts, start, optimizer, bounds, limits,
 *      output directory);
 *   2. the force field (MM3* .fld or AMBER frcmod);
 *   3. the structures of every `structures` entry, in order; structures without atom types (QM
 *      files, .xyz) get their element symbols as types;
 *   4. the `hessian` entries, in order, one for each structure that has no Hessian of its own, in
 *      order. A .npy Hessian pairs with a structure read from an .xyz file (its geometry); any other
 *      Hessian file must hold the structure's atoms (count and elements) and its geometry becomes
 *      the structure's: the MM Hessians are taken at the QM geometry. A Hessian file whose geometry
 *      is not the structure's (an interatomic distance off by more than HF_TRAINING_SET_GEOMETRY_A,
 *      a sign of another structure or another atom order) is an error;
 *   4b. the `energy` entries: conformer groups (named, numbered in order of appearance), each
 *      structure at most once, its QM energy from the named file (which must hold an energy and
 *      the structure, as a Hessian file) or its own; then `energy-weight` (an unknown group is an
 *      error);
 *   4c. the `geometry` entries (structure numbers and atoms checked), and per structure its
 *      Hessian-space objective: the input's for a structure with a Hessian, none without one;
 *      every structure must have something to fit (a Hessian under a Hessian-space objective, an
 *      energy, or a geometry target);
 *   5. typing: topology from the file's bonds (or covalent radii), every term matched to a
 *      parameter, with the `no-term` and `prefer` entries (hessfit_typing.h); then the geometry
 *      targets (a structure's bonds, angles, torsions from its terms), `geometry-weight`;
 *   6. the fit model (one OpenMM Context for all molecules, hessfit_model.h) and the `free` entries,
 *      each of which must free at least one value some term uses;
 *   7. with a comparison force field (hessfit report --forcefield): it must be the input's force
 *      field with other values (same lines, kinds, types, periodicities); every value of a used
 *      parameter that differs from the input's is freed too (after the fit's own free values);
 *   8. the start: `start = seminario` replaces the free bond and angle values by q2mm's Seminario
 *      estimates (original method, q2mm's units and scaling, averaged per force-field parameter
 *      over every term of every structure that uses it), only the free values;
 *   9. bounds (q2mm's per-kind box unless `bounds = none`) and steps; a start value outside its
 *      box is an error naming the parameter;
 *  10. the objective (hessfit_objective.h) at the start values, with the energies and geometry
 *      targets, evaluated once when it has them (MM energies, minimised structures).
 */
#include "hessfit_config.h"
#include "hessfit_forcefield.h"
#include "hessfit_model.h"
#include "hessfit_molecule.h"
#include "hessfit_objective.h"
#include "hessfit_optimize.h"
#include "hessfit_typing.h"

#include <stddef.h>

/* Largest change of an interatomic distance (Angstrom) between a structure and the geometry of
 * the Hessian file paired with it. */
#define HF_TRAINING_SET_GEOMETRY_A 0.05

typedef struct hf_fit_settings {
    hessfit_model_form form;    /* `form`: mm3 (the default for an .fld) or harmonic */
    const char *objective_name; /* "frequencies", "frequencies-q2mm", "eigenmatrix", "hessian" */
    hessfit_objective_options objective;
    hessfit_opt_algorithm algorithm;
    int bounds;                /* 1: q2mm's boxes; 0: none */
    long long max_evaluations; /* default 1000 */
    double max_time;           /* seconds, 0: none */
    double ftol;               /* NLopt's ftol_rel, default 1e-8 */
    int start_seminario;
    int blocks;       /* `blocks`: the fixed evaluation blocks of the objective (hf_shards.h); default 1 */
    const char *platform;  /* `platform`: OpenMM's Reference (default), CPU, OpenCL or CUDA (into config) */
    const char *precision; /* `precision`: single, mixed or double (default; GPU platforms) */
    int device;            /* `device`: -1 auto (default), else the device index on every rank */
    char *output_dir; /* malloc'ed */
} hf_fit_settings;

typedef struct hf_training_set_options {
    const char *compare_forcefield;    /* hessfit report --forcefield, or NULL */
    const char *output_dir;            /* --output: replaces the input's `output`, or NULL */
    const char *default_output_suffix; /* "<input stem><suffix>" beside the input: "-out" (fit) */
    int no_model;                      /* 1: stop before step 6 (no model, no free values, no objective: an
                                          MPI rank other than 0, which gets them from rank 0, hf_shards_load) */
} hf_training_set_options;

typedef struct hf_training_set {
    hessfit_config config;
    hf_fit_settings settings;
    hessfit_forcefield ff; /* as read, with the start values of the free values */
    int n_mols;
    hessfit_molecule *mols; /* the structures with their QM Hessians, at the QM geometry */
    char **labels;     /* "structure 2 'name' (path:line)" */
    hessfit_typed_molecule *typed;
    hessfit_model_options model_options; /* what the model was created with */
    hessfit_model *model;
    hessfit_objective *objective; /* NULL with no_model */
    int n_free;            /* all free values of the model */
    int *free_param, *free_value; /* n_free: free value i is ff.params[free_param[i]].values[free_value[i]] */
    int n_fit;             /* the first n_fit of them are the fit's (the `free` entries) */
    double *x_start;       /* n_free start values (canonical units) */
    double *x_compare;     /* n_free values of the comparison force field, or NULL */
    double *lower, *upper; /* n_fit bounds, or NULL with bounds = none */
    double *step;          /* n_fit steps (q2mm's, also without bounds) */
    int n_seminario;       /* parameters whose free values the Seminario start set */
    hessfit_objective_options *mol_objective; /* per structure: its Hessian-space objective */
    int n_energies;                /* energy targets (the `energy` entries, in order) */
    hessfit_energy_target *energies;
    int n_groups;                  /* conformer groups, named in order of appearance */
    char (*group_names)[48];
    int n_geometry;                /* geometry targets */
    hessfit_geometry_target *geometry;
} hf_training_set;

/* Load everything (above). On failure the set is freed and zeroed, nothing was written. It sets
 * OpenBLAS single-threaded for the process first: OpenBLAS's thread count (which mpirun's binding
 * of a process to a core changes) changes the last bits of the QM Hessians' analysis, and with it
 * every later result; so `hessfit fit` (on any number of MPI ranks), `report` and `check` compute
 * alike wherever they run. */
hessfit_status hf_training_set_load(const char *input, const hf_training_set_options *options, hf_training_set *set);
void hf_training_set_free(hf_training_set *set);

/* "LD_LBFGS" ... for messages; the free value i described: "line 81 bond C3-H1 k". */
void hf_training_set_describe_free(const hf_training_set *set, int i, char *out, size_t size);
/* Name and unit of value v of parameter p ("k", "kcal/mol/A^2"; "phase_2", "deg"). */
void hf_param_value_name(const hessfit_ff_param *p, int v, char *name, size_t size, const char **unit);
/* "C3-H1" */
void hf_param_types_text(const hessfit_ff_param *p, char *out, size_t size);

/* Load the hessfit OpenMM plugins (once): $HESSFIT_PLUGIN_DIR, else the directory beside the
 * program (<bin>/../lib/plugins, build and install trees alike), else the build tree's. */
hessfit_status hf_cli_load_plugins(void);
/* OpenMM's own plugins ($OPENMM_PLUGIN_DIR, else the OpenMM this build found) unless the platform is
 * registered already; an error when the platform is still missing then, with its plugin's failure.
 * Call it before hf_cli_load_plugins: hessfit's GPU kernels register with the platforms that exist
 * when they load. */
hessfit_status hf_cli_load_platform(const char *platform);
/* mkdir -p: path and its missing parents; an existing directory is fine. */
hessfit_status hf_cli_make_directory(const char *path);

#endif
