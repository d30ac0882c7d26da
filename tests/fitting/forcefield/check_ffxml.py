#!/usr/bin/env python3
# hessfit wrote this script for its tests (test_ffxml.c runs it).
"""Load an OpenMM ForceField XML written by hessfit_ffxml_write and print what OpenMM makes of it.

Usage: check_ffxml.py FILE.xml [POSITIONS]

Builds a Topology with one residue per <Residue> template of the file (its atoms and bonds, in the
template's order), calls ForceField.createSystem(nonbondedMethod=NoCutoff) with each residue
assigned its template by name, and prints one line per particle mass and per bond, angle and
torsion parameter of the System (repr of the doubles, OpenMM units: nm, rad, kJ/mol, dalton):

    atoms N
    mass i m
    bond i j length k
    angle i j k theta k
    torsion i j k l periodicity phase k
    custom_torsion_energy EXPRESSION
    custom_torsion i j k l v1 v2 ...   (per-torsion parameters in their declared order)
    force NAME                          (any other force)

POSITIONS: a text file with x y z in nm per atom, in that order; the energy of every force is then
printed as "energy NAME E" (Reference platform). Exits 77 when openmm cannot be imported.
"""
import sys
import xml.etree.ElementTree as ET


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    try:
        import openmm
        from openmm import app, unit
    except Exception as exc:  # ImportError, or a broken installation
        print("SKIP: cannot import openmm: %s" % exc)
        return 77
    path = argv[1]
    forcefield = app.ForceField(path)
    root = ET.parse(path).getroot()
    elements = {t.get("name"): t.get("element") for t in root.find("AtomTypes").findall("Type")}
    topology = app.Topology()
    chain = topology.addChain()
    templates = {}
    for rdef in root.find("Residues").findall("Residue"):
        residue = topology.addResidue(rdef.get("name"), chain)
        atoms = {}
        for adef in rdef.findall("Atom"):
            element = app.Element.getBySymbol(elements[adef.get("type")])
            atoms[adef.get("name")] = topology.addAtom(adef.get("name"), element, residue)
        for bdef in rdef.findall("Bond"):
            topology.addBond(atoms[bdef.get("atomName1")], atoms[bdef.get("atomName2")])
        templates[residue] = rdef.get("name")
    system = forcefield.createSystem(topology, nonbondedMethod=app.NoCutoff, residueTemplates=templates,
                                     removeCMMotion=False)

    nm = unit.nanometer
    kj = unit.kilojoule_per_mole
    print("atoms", system.getNumParticles())
    for i in range(system.getNumParticles()):
        print("mass", i, repr(system.getParticleMass(i).value_in_unit(unit.dalton)))
    for force in system.getForces():
        if isinstance(force, openmm.HarmonicBondForce):
            for b in range(force.getNumBonds()):
                i, j, length, k = force.getBondParameters(b)
                print("bond", i, j, repr(length.value_in_unit(nm)), repr(k.value_in_unit(kj / nm**2)))
        elif isinstance(force, openmm.HarmonicAngleForce):
            for a in range(force.getNumAngles()):
                i, j, k, theta, kk = force.getAngleParameters(a)
                print("angle", i, j, k, repr(theta.value_in_unit(unit.radian)),
                      repr(kk.value_in_unit(kj / unit.radian**2)))
        elif isinstance(force, openmm.PeriodicTorsionForce):
            for t in range(force.getNumTorsions()):
                i, j, k, l, n, phase, kk = force.getTorsionParameters(t)
                print("torsion", i, j, k, l, n, repr(phase.value_in_unit(unit.radian)), repr(kk.value_in_unit(kj)))
        elif isinstance(force, openmm.CustomTorsionForce):
            print("custom_torsion_energy", force.getEnergyFunction())
            for t in range(force.getNumTorsions()):
                i, j, k, l, values = force.getTorsionParameters(t)
                print("custom_torsion", i, j, k, l, " ".join(repr(float(v)) for v in values))
        else:
            print("force", type(force).__name__)

    if len(argv) > 2:
        with open(argv[2]) as f:
            rows = [line.split() for line in f if line.strip()]
        positions = [openmm.Vec3(float(x), float(y), float(z)) for x, y, z in rows] * nm
        forces = system.getForces()
        for group, force in enumerate(forces):
            force.setForceGroup(group)
        context = openmm.Context(system, openmm.VerletIntegrator(0.001),
                                 openmm.Platform.getPlatformByName("Reference"))
        context.setPositions(positions)
        for group, force in enumerate(forces):
            state = context.getState(getEnergy=True, groups={group})
            print("energy", type(force).__name__, repr(state.getPotentialEnergy().value_in_unit(kj)))
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
