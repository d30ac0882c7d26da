#ifndef HESSFIT_MOLECULE_H_
#define HESSFIT_MOLECULE_H_
/*
 * The molecule model every structure reader fills: one structure with its elements and
 * coordinates and whatever else the file holds (Hessian, energy, charge and multiplicity, atom
 * types, bonds, frequencies and normal modes, the force-field line MacroModel used for each
 * term). Multi-structure files (.mmo, multi-molecule .mol2) give an hessfit_molecule_list.
 *
 * Units, whatever the file used: coordinates in Angstrom, Hessians in Hartree/Bohr^2 (full
 * symmetric 3N x 3N, row-major, atom-major x y z), energies in Hartree, frequencies in cm^-1
 * (negative = imaginary), charges in e. Atom indices are 0-based everywhere (files print them
 * 1-based; messages print them as the file does).
 *
 * Every reader opens plain and gzip-compressed files alike, reports the first problem with an
 * hessfit_status and a message naming file:line, never over-reads, and on failure leaves the output
 * zeroed with nothing to free.
 */
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds of bonded terms (also the kinds of force-field parameters, hessfit_forcefield.h). */
typedef enum hessfit_term_kind {
    HESSFIT_TERM_BOND = 0,     /* atoms i-j */
    HESSFIT_TERM_ANGLE = 1,    /* atoms i-j-k, j the centre */
    HESSFIT_TERM_TORSION = 2,  /* proper torsion i-j-k-l */
    HESSFIT_TERM_IMPROPER = 3, /* out-of-plane; atoms as the source orders them (MacroModel: centre 2nd) */
    HESSFIT_NUM_TERM_KINDS
} hessfit_term_kind;

/** "bond", "angle", "torsion", "improper"; "unknown" otherwise. */
const char *hessfit_term_kind_name(hessfit_term_kind kind);
/** Atoms in a term of that kind: 2, 3, 4, 4. */
int hessfit_term_kind_atoms(hessfit_term_kind kind);

/** A term as a program reported it with the force-field parameter it used (MacroModel .mmo:
 * "FF Line" column). */
typedef struct hessfit_reported_term {
    hessfit_term_kind kind;
    int atoms[4];        /* 0-based; unused slots -1 */
    int ff_line;         /* 1-based line of the force-field file (.fld) the program used; 0 if none */
    char source[24];     /* the program's label of where the parameter came from ("Subst", "O1", "A3") */
    double values[3];    /* the constants it printed: bond k r0, angle k th0, torsion V1 V2 V3,
                            improper k */
    double actual;       /* the geometry it printed for the term (bond A, angle or torsion deg);
                            NAN for impropers */
    int line;            /* line of the report (.mmo) where the term was printed */
} hessfit_reported_term;

typedef struct hessfit_molecule {
    char *name;               /* title / structure name ("" if the file has none) */
    char *source;             /* "path" or "path:line" where the structure starts */
    int n_atoms;
    int *atomic_numbers;      /* n_atoms */
    double *coords;           /* 3 n_atoms, Angstrom */
    char **atom_types;        /* n_atoms force-field type labels ("C2", "H1", "c3"), or NULL */
    char **atom_names;        /* n_atoms atom names (mol2 "C1"), or NULL */
    double *partial_charges;  /* n_atoms, e, or NULL */

    int bonds_known;          /* 1: the file gave the connectivity (bonds below, possibly none) */
    int n_bonds;
    int *bonds;               /* 2 n_bonds atom indices, i < j */
    double *bond_orders;      /* n_bonds (1, 2, 3, 1.5 aromatic), or NULL */

    double *hessian;          /* 3N x 3N Hartree/Bohr^2, symmetric, or NULL */
    int has_energy;
    double energy;            /* Hartree */
    int has_charge;
    int charge;               /* total charge, e */
    int multiplicity;         /* spin multiplicity 2S+1; 0 if the file does not say */

    int n_modes;              /* frequencies/normal modes printed by the QM program (0 if none) */
    double *frequencies;      /* n_modes, cm^-1 */
    double *modes;            /* n_modes x 3N displacements as printed (their normalisation), or NULL */

    int n_reported_terms;     /* terms with their force-field lines (MacroModel .mmo), or 0 */
    hessfit_reported_term *reported_terms;
} hessfit_molecule;

typedef struct hessfit_molecule_list {
    int n;
    hessfit_molecule *items;
} hessfit_molecule_list;

/** Free everything a molecule owns and zero it (safe on a zeroed or already freed molecule). */
void hessfit_molecule_free(hessfit_molecule *mol);
void hessfit_molecule_list_free(hessfit_molecule_list *list);

/** Give a molecule without atom types its element symbols as types ("C", "H", "Cl"), so that
 * structures from QM files (xyz, fchk, Jaguar) can be typed against a force field written in
 * element types. HESSFIT_ERROR_INVALID_ARGUMENT when it already has types (nothing is replaced). */
hessfit_status hessfit_molecule_set_element_types(hessfit_molecule *mol);

/** Deep copy of src into *dst. */
hessfit_status hessfit_molecule_copy(const hessfit_molecule *src, hessfit_molecule *dst);

/**
 * Internal consistency of a molecule (after a reader or a hand-built one): n_atoms > 0, known
 * elements, finite coordinates and Hessian, a symmetric Hessian (|H_ij - H_ji| <= 1e-8 max|H|),
 * bond indices in range and not repeated, mode count <= 3N. what names it in messages.
 */
hessfit_status hessfit_molecule_check(const hessfit_molecule *mol, const char *what);

/* ---- readers ------------------------------------------------------------------------------ */
/**
 * The format is chosen by name ("fchk", "gaussian-log", "jaguar-in", "jaguar-out", "orca-hess",
 * "mmo", "mol2", "xyz") or, when format is NULL, from the file name (a trailing .gz is ignored;
 * any case): .fchk .fch, .log, .in (Jaguar), .out (Jaguar), .hess, .mmo, .mol2, .xyz. An unknown
 * extension or name is HESSFIT_ERROR_UNSUPPORTED naming the file and the known formats. A Psi4 .npy
 * Hessian needs its .xyz geometry too: hessfit_npy_xyz_read.
 */
hessfit_status hessfit_molecules_read(const char *path, const char *format, hessfit_molecule_list *list);
/** The same for a file that must hold exactly one structure (HESSFIT_ERROR_COUNT names the file
 * otherwise). */
hessfit_status hessfit_molecule_read(const char *path, const char *format, hessfit_molecule *mol);
/** The list of format names above, comma-separated, for messages and --help. */
const char *hessfit_molecule_formats(void);

/** Gaussian formatted checkpoint: atomic numbers, "Current cartesian coordinates" (Bohr), the
 * "Cartesian Force Constants" lower triangle, "Total Energy", charge, multiplicity. */
hessfit_status hessfit_fchk_read(const char *path, hessfit_molecule *mol);
/** Gaussian log: the last "Standard orientation", frequencies and normal modes (HPModes or the
 * default 3-column format), charge, multiplicity, SCF energy; the Hessian from the archive
 * block (NImag/Hessian section, lower triangle) when present. */
hessfit_status hessfit_gaussian_log_read(const char *path, hessfit_molecule *mol);
/** Jaguar input: &zmat coordinates (Angstrom), &hess lower triangle in column blocks
 * (Hartree/Bohr^2), charge and multiplicity from &gen when given. */
hessfit_status hessfit_jaguar_in_read(const char *path, hessfit_molecule *mol);
/** Jaguar output: geometry, frequencies and normal modes, energy. */
hessfit_status hessfit_jaguar_out_read(const char *path, hessfit_molecule *mol);
/** ORCA .hess: $atoms (element, mass, Bohr coordinates), $hessian (column blocks),
 * $vibrational_frequencies, $normal_modes, $act_energy when present. */
hessfit_status hessfit_orca_hess_read(const char *path, hessfit_molecule *mol);
/** MacroModel .mmo: every structure, with atom types, coordinates, connectivity, charges and each
 * bond, angle, torsion and improper with the force-field line it used. */
hessfit_status hessfit_mmo_read(const char *path, hessfit_molecule_list *list);
/** Tripos mol2: every @<TRIPOS>MOLECULE, atom names, types, charges, coordinates, bonds. */
hessfit_status hessfit_mol2_read(const char *path, hessfit_molecule_list *list);
/** .xyz (one frame) as a molecule (see hessfit_xyz_read). */
hessfit_status hessfit_xyz_molecule_read(const char *path, hessfit_molecule *mol);
/** Psi4-style: a .xyz geometry and a .npy Hessian (float64, 3N x 3N, Hartree/Bohr^2). */
hessfit_status hessfit_npy_xyz_read(const char *xyz_path, const char *npy_path, hessfit_molecule *mol);

#ifdef __cplusplus
}
#endif
#endif
