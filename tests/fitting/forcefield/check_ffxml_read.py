#!/usr/bin/env python3
# hessfit wrote this script for its tests (test_ffxml_read.c runs it with the repository's .venv).
"""OpenMM's own reading of a ForceField XML against hessfit's (hessfit_ffxml_read + the fit model).

Usage: check_ffxml_read.py FORCEFIELD.xml DIR
       check_ffxml_read.py --gaff        (prints the path of openmmforcefields' gaff-2.11.xml, or exits 77)

DIR holds molecule.txt ("atom NAME ELEMENT TYPE CHARGE" per atom, "bond I J" per bond, 0-based) and
reference.txt (as check_ffxml_md.py reads it: the fit model's HessianForce energy and forces).
The molecule becomes one residue whose template (its types, charges and bonds) is added to
FORCEFIELD.xml; createSystem(NoCutoff, no constraints) on the Reference platform must give the
reference energy and forces to 1e-10 relative. Exits 0 when it does, 1 when not, 77 when openmm (or
openmmforcefields, for --gaff) cannot be imported.
"""
import io
import os
import sys


def main(argv):
    if len(argv) == 2 and argv[1] == "--gaff":
        try:
            import openmmforcefields
        except Exception as exc:
            print("SKIP: cannot import openmmforcefields: %s" % exc)
            return 77
        path = os.path.join(os.path.dirname(openmmforcefields.__file__), "ffxml", "amber", "gaff", "ffxml",
                            "gaff-2.11.xml")
        if not os.path.exists(path):
            print("SKIP: no %s" % path)
            return 77
        print(path)
        return 0
    if len(argv) != 3:
        print(__doc__)
        return 2
    try:
        import openmm
        from openmm import app
    except Exception as exc:
        print("SKIP: cannot import openmm: %s" % exc)
        return 77
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
    from model_reference import read_reference
    d = argv[2]
    atoms, bonds = [], []
    with open(d + "/molecule.txt") as f:
        for line in f:
            w = line.split()
            if w and w[0] == "atom":
                atoms.append((w[1], w[2], w[3], w[4]))
            elif w and w[0] == "bond":
                bonds.append((int(w[1]), int(w[2])))
    template = ["<ForceField>", " <Residues>", '  <Residue name="MOL">']
    template += ['   <Atom name="%s" type="%s" charge="%s"/>' % (a[0], a[2], a[3]) for a in atoms]
    template += ['   <Bond atomName1="%s" atomName2="%s"/>' % (atoms[i][0], atoms[j][0]) for i, j in bonds]
    template += ["  </Residue>", " </Residues>", "</ForceField>"]
    forcefield = app.ForceField(argv[1], io.StringIO("\n".join(template)))
    topology = app.Topology()
    residue = topology.addResidue("MOL", topology.addChain())
    made = [topology.addAtom(a[0], app.Element.getBySymbol(a[1]), residue) for a in atoms]
    for i, j in bonds:
        topology.addBond(made[i], made[j])
    system = forcefield.createSystem(topology, nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False,
                                     removeCMMotion=False)
    failures = []
    for index, energy, positions, forces in read_reference(d + "/reference.txt"):
        context = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("Reference"))
        context.setPositions([openmm.Vec3(*p) for p in positions])
        state = context.getState(getEnergy=True, getForces=True)
        e = state.getPotentialEnergy()._value
        f = [v._value for v in state.getForces()]
        de = abs(e - energy) / abs(energy)
        fmax = max(abs(c) for row in forces for c in row)
        df = max(abs(a - b) for i in range(len(positions)) for a, b in zip(f[i], forces[i])) / fmax
        terms = {type(x).__name__: getattr(x, g)() for x in system.getForces()
                 for g in ("getNumBonds", "getNumAngles", "getNumTorsions", "getNumParticles") if hasattr(x, g)}
        print("structure %d: OpenMM createSystem on %s %.12f, hessfit %.12f kJ/mol: energy %.2e, forces %.2e relative; "
              "%s" % (index, os.path.basename(argv[1]), e, energy, de, df,
                      ", ".join("%s %d" % kv for kv in sorted(terms.items()))))
        if de > 1e-10 or df > 1e-10:
            failures.append("structure %d: energy %.3g, forces %.3g relative (1e-10)" % (index, de, df))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
