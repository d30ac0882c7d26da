#ifndef HESSFIT_FFXML_H_
#define HESSFIT_FFXML_H_
/*
 * Export of a typed training set as an OpenMM ForceField XML file (openmm.app.ForceField) and,
 * optionally, one PDB per molecule (openmm.app.PDBFile), files stock OpenMM runs MD with as they are.
 *
 * MM3* substructure parameters depend on context, not only on atom types, so the file does not
 * try to express the force field by types: it writes
 *   - one <Residue> template per distinct molecule: molecules whose entries below are the same
 *     text (the same atoms in the same order, types, bonds and every parameter, charges included:
 *     conformers of one molecule) share the template of the first of them. A template is named like
 *     that molecule (its name with characters other than letters, digits, '_', '.', '+' replaced
 *     by '_', "mol<k>" when empty, "_<k>" appended when two molecules share a name); atoms
 *     "<Element><i>" (i the 0-based atom index); the bonds of its bond terms;
 *   - one OpenMM atom type per atom of each template, named "<template>-<i>", with class = the
 *     atom's force-field type, its element, and its average atomic mass (hessfit_elements.h, IUPAC
 *     standard atomic weight, as OpenMM's own force fields use);
 *   - one explicit entry per term, using the per-atom types, so that matching is exact:
 *       HarmonicBondForce   <Bond>   length = r0 [nm], k = 2 k [kJ/mol/nm^2] (OpenMM's E = k/2 (r - r0)^2)
 *       HarmonicAngleForce  <Angle>  angle = theta0 [rad], k = 2 k [kJ/mol/rad^2]
 *       PeriodicTorsionForce <Proper> for torsions, <Improper> for Fourier impropers, every Fourier
 *                           triple as periodicityN, phaseN [rad], kN [kJ/mol]
 *       CustomTorsionForce  <Improper> for harmonic impropers, energy "k*d^2" with
 *                           d = |theta - theta0| wrapped to [0, pi] (hessfit's k wrap(phi - phi0)^2,
 *                           no 1/2), k [kJ/mol/rad^2], theta0 [rad] (0 for MM3 out-of-plane terms)
 *     Both torsion forces use ordering="charmm": without wildcards OpenMM then adds an improper as
 *     (type1, type2, type3, type4) with type1 the central atom, which the writer uses to reproduce
 *     the term's own atom order. An improper term must list its central atom (the one bonded to
 *     the other three) first or last: (c, a, b, d) is written as is, (a, b, d, c) as (c, d, b, a),
 *     the same dihedral; a term with the centre second or third is HESSFIT_ERROR_UNSUPPORTED, except
 *     that with a force field read from OpenMM ForceField XML a Fourier improper (a2, a3, c, a4) --
 *     OpenMM's order, which the typing gives it (hessfit_typing.h) -- is written as <Improper type1=c
 *     type2=a2 type3=a3 type4=a4> in a PeriodicTorsionForce with ordering="amber", which gives that
 *     dihedral back (the per-atom types are all different, so OpenMM swaps nothing).
 *   - terms with HESSFIT_MATCH_NO_TERM are left out, with an XML comment naming each;
 *   - with options->nonbonded (the fit model's nonbonded = on; hessfit_model.h), the model's
 *     nonbonded terms: a NonbondedForce with coulomb14scale and lj14scale the model's 1-4 scales
 *     and one <Atom> per atom type: charge = the molecule's partial charge [e], sigma = R* x
 *     HESSFIT_RSTAR_A_TO_LJ_SIGMA_NM [nm] and epsilon = eps x HESSFIT_KCAL_TO_KJ [kJ/mol] of the
 *     vdw parameter of the atom's force-field type (hessfit_forcefield_vdw_param), the conversion
 *     of the model's slots. ForceField excludes the 1-2 and 1-3 pairs of the template bonds and
 *     scales the 1-4 pairs (NonbondedForce::createExceptionsFromBonds: the nearest relation wins),
 *     the pair list HessianForce::createExclusionsFromBonds gives the model from the same bond
 *     terms. NonbondedForce combines by Lorentz-Berthelot; for geometric combining a <Script>
 *     moves the Lennard-Jones part into a CustomNonbondedForce (sigma_ij = sqrt(sigma_i sigma_j),
 *     eps_ij = sqrt(eps_i eps_j), the NonbondedForce's exceptions as its exclusions) and gives the
 *     1-4 exceptions the geometric sigma; it converts every NonbondedForce particle of the System,
 *     so a System mixing this file with a Lorentz-Berthelot force field is not what it means.
 *     Without options->nonbonded no nonbonded force is written, and the file's comment says so.
 * PDBs (options->pdb_paths[m] for molecule m, NULL for none): HETATM records with the molecule's
 * coordinates, residue name = its template's name cut to 3 characters, atom names the template's
 * (the element alone where longer than 4 characters), CONECT records of the template bonds.
 * Limitation: the templates describe only these training molecules. OpenMM picks a template by
 * matching the residue's graph, so a Topology must give each residue the same atoms and bonds;
 * molecules with the same graph but other parameters get templates of their own (the file's
 * comment names them), and createSystem(..., residueTemplates={residue: name}) must then name the
 * template; atoms related by symmetry may be matched to each other, which is harmless only where
 * their terms (and charges) share parameters.
 *
 * Checks: every term's atoms in range and distinct, its parameter index valid and of its kind,
 * finite values, integer periodicities, angles and torsions along bonds of the molecule's bond
 * terms, impropers around an atom bonded to the other three, no two terms on the same atoms (OpenMM
 * would apply only one); with nonbonded terms every atom's type with a vdw parameter of two finite
 * values, finite charges, 1-4 scales in [0, 1]. Every file is written atomically (temporary file +
 * rename); nothing is written on an error.
 */
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_typing.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the export adds to the bonded terms (NULL options: nothing, no PDBs). */
typedef struct hessfit_ffxml_options {
    int nonbonded;          /**< 1: the model's nonbonded force (its nonbonded = on); 0: none */
    int geometric;          /**< combining rule: 0 Lorentz-Berthelot, 1 geometric (the model's) */
    double coulomb14_scale; /**< the model's 1-4 scales, in [0, 1] */
    double lj14_scale;
    const char *const *pdb_paths; /**< NULL, or n_mols paths (an entry NULL: no PDB for that molecule) */
} hessfit_ffxml_options;

/**
 * Write the model of mols[0..n_mols) (typed as typed[m] against ff) to path, and the PDBs that
 * options asks for. *n_templates (may be NULL) gets the number of residue templates written.
 */
hessfit_status hessfit_ffxml_write(const char *path, const hessfit_forcefield *ff, const hessfit_molecule *mols,
                                   const hessfit_typed_molecule *typed, int n_mols, const hessfit_ffxml_options *options,
                                   int *n_templates);

#ifdef __cplusplus
}
#endif
#endif
