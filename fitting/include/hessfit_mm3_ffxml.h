#ifndef HESSFIT_MM3_FFXML_H_
#define HESSFIT_MM3_FFXML_H_
/*
 * Export of the MM3* model of a training set (hessfit_mm3_build, one model per structure) to
 * files stock OpenMM reads as they are: an OpenMM ForceField XML (openmm.app.ForceField) and one
 * PDB per structure (openmm.app.PDBFile), so that MD runs with the fitted MM3* energy without
 * hessfit's plugin. docs/mm3.md, "Export to OpenMM", has the layout, how to run MD with it and the
 * measured agreement with HessianForce.
 *
 * Templates. Constants that depend on more than the atom types (substructure lines, derived k_sb,
 * k_bb, K_ts, shared torsions, bond-moment charges) cannot come from type matching, so every atom
 * of every residue template has its own atom type ("M<t>-<atom name>", class = its MM3* type). One
 * template "M<t>" per distinct molecule: structures with the same atoms (elements, MM3* types, in
 * the same order) and bonds (orders included) share one, and must then have the same MM3* model to
 * the last bit (else HESSFIT_ERROR_UNSUPPORTED naming the first difference). Atom names are the
 * element and the 1-based atom number ("C3", "Rh1"); at most 4 characters (a PDB's).
 *
 * Reduced hydrogens (x' = x_P + f (x - x_P)) are OpenMM virtual sites: an extra massless particle
 * "E<n>" (n the hydrogen's number) per reduced hydrogen, <VirtualSite type="average2"> with weights
 * f on the hydrogen and 1 - f on its partner (excludeWith the hydrogen), bonded in the template to
 * every atom its hydrogen is bonded to and to the hydrogen itself (OpenMM matches a site to the
 * template's site of the same name, so that bond pins each hydrogen to its own site). Every MM3*
 * term uses the site instead of the hydrogen, as HessianForce's reduced particles do; the hydrogen
 * keeps its mass and no interaction. The PDBs hold the sites after the atoms (element column "EP":
 * PDBFile makes them extra particles, positioned at x') and CONECT records of every template bond.
 *
 * Forces (OpenMM units nm, rad, kJ/mol, e; the same expressions as HessianForce's terms):
 *   CustomBondForce        MM3* stretch k d^2 (1 - 25.5 d + 379.3125 d^2), d = s r - r0, s = 1/f
 *   CustomAngleForce       MM3* bend k d^2 (1 - 0.014 D + 5.6e-5 D^2 - 7e-7 D^3 + 2.2e-8 D^4)
 *   PeriodicTorsionForce   torsions V_n as k (1 + cos(n phi - phase)), phases 0, pi, 0
 *   CustomNonbondedForce   the MM3* pairs: van der Waals with the 0.6-0.8 nm switch on the
 *                          distance of the (reduced) particles (HessianForce's choice; MacroModel
 *                          takes the true distance) and Coulomb, per-particle R*, eps, q and pair
 *                          class c, exclusions of 1-2 and 1-3 (bondCutoff 2), 1-4 unscaled, no
 *                          cutoff. Special pairs (.fld code 6) come from Discrete2D tables indexed by
 *                          the classes (c = 1.. for the MM3* types in special pairs, 0 otherwise);
 *                          types whose pairs are special in one place and not in another are
 *                          HESSFIT_ERROR_UNSUPPORTED
 *   <Script>               what ForceField has no generator for: CustomCompoundBondForces for the
 *                          stretch-bends, bend-bends (5 particles, or 4 when the two angles share an
 *                          outer atom) and torsion-stretches, and the out-of-plane terms (their
 *                          dihedral has the centre second) added to the PeriodicTorsionForce; each
 *                          term placed by the residue's atom names when they are the template's (the
 *                          model's own atom order: the out-of-plane terms depend on it, and OpenMM's
 *                          matching may exchange symmetric atoms), else by the atoms' types
 * Every value is written in the fewest digits (15-17) that read back as the same double.
 *
 * Nothing is written on an error; each file is written atomically (temporary file + rename).
 */
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_typing.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Writes the MM3* model of mols[0..n_mols) (typed as typed[m] against ff, an MM3* .fld) to
 * xml_path, and molecule m's coordinates (Angstrom, with its virtual sites) and template as a PDB
 * to pdb_paths[m] (pdb_paths may be NULL, or an entry NULL, for no PDB). *n_templates (may be
 * NULL) gets the number of residue templates written.
 */
hessfit_status hessfit_mm3_ffxml_write(const char *xml_path, const char *const *pdb_paths, const hessfit_forcefield *ff,
                                       const hessfit_molecule *mols, const hessfit_typed_molecule *typed, int n_mols,
                                       int *n_templates);

#ifdef __cplusplus
}
#endif
#endif
