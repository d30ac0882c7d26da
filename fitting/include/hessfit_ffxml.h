#ifndef HESSFIT_FFXML_H_
#define HESSFIT_FFXML_H_
/*
 * Export of a typed training set as an OpenMM ForceField XML file (openmm.app.ForceField).
 *
 * MM3* substructure parameters depend on context, not only on atom types, so the file does not
 * try to express the force field by types: it writes
 *   - one OpenMM atom type per atom of each molecule, named "<molecule>-<i>" (i the 0-based atom
 *     index; <molecule> the molecule's name with characters other than letters, digits, '_', '.',
 *     '+' replaced by '_', "mol<k>" when empty, "_<k>" appended when two molecules share a name),
 *     with class = the atom's force-field type, its element, and its average atomic mass
 *     (hessfit_elements.h, IUPAC standard atomic weight, as OpenMM's own force fields use);
 *   - one <Residue> template per molecule (named like the molecule; atoms "<Element><i>"; the bonds
 *     of its bond terms);
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
 *     the same dihedral; a term with the centre second or third is HESSFIT_ERROR_UNSUPPORTED.
 *   - terms with HESSFIT_MATCH_NO_TERM are left out, with an XML comment naming each.
 * Limitation: the templates describe only these training molecules. OpenMM picks a template by
 * matching the residue's graph, so a Topology must give each residue the same atoms and bonds
 * (and, for molecules whose graphs are the same, createSystem(..., residueTemplates=...) naming
 * the template); atoms related by symmetry may be matched to each other, which is harmless only
 * where their terms share parameters. No nonbonded force is written.
 *
 * Checks: every term's atoms in range and distinct, its parameter index valid and of its kind,
 * finite values, integer periodicities, angles and torsions along bonds of the molecule's bond
 * terms, impropers around an atom bonded to the other three, no two terms on the same atoms (OpenMM
 * would apply only one). Written atomically (temporary file + rename); nothing is written on error.
 */
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_typing.h"

#ifdef __cplusplus
extern "C" {
#endif

hessfit_status hessfit_ffxml_write(const char *path, const hessfit_forcefield *ff, const hessfit_molecule *mols,
                         const hessfit_typed_molecule *typed, int n_mols);

#ifdef __cplusplus
}
#endif
#endif
