#!/usr/bin/env python3
# hessfit wrote this script for its tests (test_mm3_ffxml.c runs it with the repository's .venv).
"""Load the MM3* export of hessfit_mm3_ffxml_write in stock OpenMM and check it.

Usage: check_mm3_ffxml.py DIR [--no-nve]

DIR holds fitted.xml, fitted-<k>.pdb and reference.txt: per structure a line
"structure k n_atoms energy" (kJ/mol) and n_atoms lines "x y z fx fy fz" (nm, kJ/mol/nm), the
energy and forces of hessfit's HessianForce (the fit model) at those positions.

1. Every structure: ForceField(fitted.xml) + PDBFile(fitted-k.pdb), createSystem (NoCutoff, no
   constraints), the reference positions set (virtual sites computed by OpenMM), Reference platform:
   energy and forces equal HessianForce's to 1e-10 relative (forces: max |dF| / max |F|). The PDB's
   positions equal the reference to its 3 decimals.
   For structure 1 also the exported pair energy alone (a 2-particle copy of its CustomNonbondedForce)
   at r/R = 0.3 .. 0.6 against the formula, across the r^-12 wall below R/2, to 1e-12 relative.
2. NVE, structure 1: 10 ps of VerletIntegrator (0.5 fs) from the QM geometry with velocities of
   100 K (seeded), CPU platform; the same run with the van der Waals switch replaced by 1 (a smooth
   force: the integrator's own error) is the baseline. Prints the drift (slope of a straight line
   through E(t), times 10 ps) and the fluctuation (rms of E(t) about that line), kJ/mol, and checks
   |drift| <= the baseline's rms and rms <= 1.5 x the baseline's rms (NVE_BOUNDS). Not with --no-nve.

Exits 0 when every check passes, 1 when one fails, 77 when openmm cannot be imported.
"""
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from model_reference import read_reference  # noqa: E402

# The MM3* run against the smooth baseline run the same way (docs/mm3.md, "Export to OpenMM", has
# the measured numbers): |drift| <= drift_over_baseline_rms x the baseline's rms, rms <=
# rms_over_baseline x the baseline's rms.
NVE_BOUNDS = {"drift_over_baseline_rms": 1.0, "rms_over_baseline": 1.5}


def make_context(openmm, app, forcefield, pdb, switch=True, platform="Reference"):
    system = forcefield.createSystem(pdb.topology, nonbondedMethod=app.NoCutoff, constraints=None,
                                     removeCMMotion=False,
                                     residueTemplates={r: r.name for r in pdb.topology.residues()})
    if not switch:  # S = 1 in the pair force, and its true-distance correction (St - Sr) gone
        for force in system.getForces():
            if isinstance(force, openmm.CustomNonbondedForce):
                energy = force.getEnergyFunction()
                start = energy.index(" S = ")
                force.setEnergyFunction(energy[:start] + " S = 1;" + energy[energy.index(";", start + 1) + 1:])
            elif isinstance(force, openmm.CustomCompoundBondForce) and " St = " in force.getEnergyFunction():
                force.setEnergyFunction("0")
    integrator = openmm.VerletIntegrator(0.0005)
    return system, openmm.Context(system, integrator, openmm.Platform.getPlatformByName(platform))


def check_wall(openmm, system):
    """The exported pair energy on both sides of R/2 (the r^-12 wall below, hf_core.h) for one
    non-special, non-excluded pair of the system, the force alone in a 2-particle copy against the
    formula; returns a failure text or None."""
    force = next(f for f in system.getForces() if isinstance(f, openmm.CustomNonbondedForce))
    names = [force.getPerParticleParameterName(k) for k in range(force.getNumPerParticleParameters())]
    excluded = {tuple(sorted(force.getExclusionParticles(k))) for k in range(force.getNumExclusions())}
    special = None
    for k in range(force.getNumTabulatedFunctions()):
        if force.getTabulatedFunctionName(k) == "special":
            special = force.getTabulatedFunction(k).getFunctionParameters()  # (xsize, ysize, values)
    n = force.getNumParticles()
    pair = None
    for i in range(n):
        for j in range(i + 1, n):
            if (i, j) in excluded:
                continue
            pi, pj = (dict(zip(names, force.getParticleParameters(a))) for a in (i, j))
            if special is not None and special[2][int(pi["c"]) + special[0] * int(pj["c"])] != 0:
                continue
            if pi["eps"] > 0 and pj["eps"] > 0 and pi["q"] * pj["q"] != 0:
                pair = (i, j, pi, pj)
                break
        if pair:
            break
    if pair is None:
        return "no plain charged pair to check the wall on"
    i, j, pi, pj = pair
    copy = openmm.CustomNonbondedForce(force.getEnergyFunction())
    for name in names:
        copy.addPerParticleParameter(name)
    for k in range(force.getNumGlobalParameters()):
        copy.addGlobalParameter(force.getGlobalParameterName(k), force.getGlobalParameterDefaultValue(k))
    for k in range(force.getNumTabulatedFunctions()):
        copy.addTabulatedFunction(force.getTabulatedFunctionName(k),
                                  openmm.XmlSerializer.clone(force.getTabulatedFunction(k)))
    copy.addParticle([pi[name] for name in names])
    copy.addParticle([pj[name] for name in names])
    small = openmm.System()
    small.addParticle(1.0)
    small.addParticle(1.0)
    small.addForce(copy)
    context = openmm.Context(small, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName("Reference"))
    R, eps = pi["R"] + pj["R"], math.sqrt(pi["eps"] * pj["eps"])
    coulomb = float(re.search(r"\+ ([0-9.eE+-]+)\*q1\*q2/r;", force.getEnergyFunction()).group(1))  # as exported
    wall = (184000.0 * math.exp(-6.0) - 2.25 * 64.0) / 4096.0
    worst = 0.0
    for x in (0.3, 0.45, 0.4999, 0.5001, 0.6):  # r / R
        r = x * R
        context.setPositions([openmm.Vec3(0, 0, 0), openmm.Vec3(r, 0, 0)])
        e = context.getState(getEnergy=True).getPotentialEnergy()._value
        b = wall / x ** 12 if x < 0.5 else 184000.0 * math.exp(-12.0 * x) - 2.25 / x ** 6
        expected = eps * b + coulomb * pi["q"] * pj["q"] / r
        worst = max(worst, abs(e - expected) / abs(expected))
    print("the wall below R/2: particles %d, %d (R %.4f nm, eps %.4f kJ/mol), exported pair energy at r/R = 0.3 .. 0.6 "
          "against the formula: %.2e relative" % (i, j, R, eps, worst))
    return None if worst <= 1e-12 else "the exported pair energy on the wall: %.3g relative (1e-12)" % worst


def nve(context, steps, every):
    """Total energies every `every` steps; the drift and the rms about a straight line."""
    integrator = context.getIntegrator()
    t, e = [], []
    for k in range(steps // every + 1):
        if k > 0:
            integrator.step(every)
        s = context.getState(getEnergy=True)
        t.append(s.getTime()._value)
        e.append(s.getPotentialEnergy()._value + s.getKineticEnergy()._value)
    n = len(t)
    mt, me = sum(t) / n, sum(e) / n
    slope = sum((a - mt) * (b - me) for a, b in zip(t, e)) / sum((a - mt) ** 2 for a in t)
    rms = math.sqrt(sum((b - me - slope * (a - mt)) ** 2 for a, b in zip(t, e)) / n)
    return slope * (t[-1] - t[0]), rms, max(e) - min(e)


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--no-nve"):
        print(__doc__)
        return 2
    try:
        import openmm
        from openmm import app
    except Exception as exc:  # ImportError, or a broken installation
        print("SKIP: cannot import openmm: %s" % exc)
        return 77
    d = argv[1]
    failures = []
    forcefield = app.ForceField(d + "/fitted.xml")
    worst_e = worst_f = worst_pdb = 0.0
    first = None
    for index, energy, positions, forces in read_reference(d + "/reference.txt"):
        pdb = app.PDBFile("%s/fitted-%d.pdb" % (d, index))
        n = len(positions)
        system, context = make_context(openmm, app, forcefield, pdb)
        n_sites = sum(1 for i in range(system.getNumParticles()) if system.isVirtualSite(i))
        pdb_xyz = [v._value for v in pdb.getPositions()]  # nm
        worst_pdb = max(worst_pdb, max(abs(a - b) for i in range(n) for a, b in zip(pdb_xyz[i], positions[i])))
        context.setPositions([openmm.Vec3(*p) for p in positions] + pdb_xyz[n:])
        context.computeVirtualSites()
        state = context.getState(getEnergy=True, getForces=True)
        e = state.getPotentialEnergy()._value
        f = [v._value for v in state.getForces()]
        de = abs(e - energy) / abs(energy)
        fmax = max(abs(c) for row in forces for c in row)
        df = max(abs(a - b) for i in range(n) for a, b in zip(f[i], forces[i])) / fmax
        kinds = {}
        for force in system.getForces():
            count = [getattr(force, g)() for g in ("getNumBonds", "getNumAngles", "getNumTorsions", "getNumParticles")
                     if hasattr(force, g)]
            kinds[type(force).__name__] = kinds.get(type(force).__name__, 0) + (count[0] if count else 0)
        print("structure %d: %d atoms + %d sites, OpenMM %.12f HessianForce %.12f kJ/mol, energy %.2e, forces %.2e "
              "relative; %s" % (index, n, n_sites, e, energy, de, df,
                                ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
        worst_e, worst_f = max(worst_e, de), max(worst_f, df)
        if de > 1e-10 or df > 1e-10:
            failures.append("structure %d: energy %.3g, forces %.3g relative (1e-10)" % (index, de, df))
        if first is None:
            first = (index, pdb, positions)
            wall_failure = check_wall(openmm, system)
            if wall_failure:
                failures.append(wall_failure)
    print("largest: energy %.2e, forces %.2e relative; PDB positions within %.2e nm" % (worst_e, worst_f, worst_pdb))
    if worst_pdb > 0.5e-4 + 1e-9:
        failures.append("PDB positions off by %.3g nm" % worst_pdb)

    if len(argv) == 3:  # --no-nve
        for f in failures:
            print("FAIL: " + f)
        return 1 if failures else 0

    # NVE: the MM3* switch's force kinks against a smooth baseline, the same run otherwise
    index, pdb, positions = first
    n = len(positions)
    results = {}
    for label, switch in (("baseline (switch = 1)", False), ("MM3*", True)):
        start = time.time()
        system, context = make_context(openmm, app, forcefield, pdb, switch, "CPU")
        context.setPositions([openmm.Vec3(*p) for p in positions] + [v._value for v in pdb.getPositions()][n:])
        context.computeVirtualSites()
        context.setVelocitiesToTemperature(100.0, 2024)
        drift, rms, spread = nve(context, 20000, 20)
        results[label] = (drift, rms)
        print("NVE 10 ps, 0.5 fs, structure %d, %s: drift %+.2e kJ/mol, rms %.2e kJ/mol, max - min %.2e kJ/mol "
              "(%.1f s)" % (index, label, drift, rms, spread, time.time() - start))
    drift, rms = results["MM3*"]
    base = results["baseline (switch = 1)"][1]
    print("NVE: MM3* |drift| / baseline rms %.2f (bound %.2f), rms / baseline rms %.2f (bound %.2f)"
          % (abs(drift) / base, NVE_BOUNDS["drift_over_baseline_rms"], rms / base, NVE_BOUNDS["rms_over_baseline"]))
    if abs(drift) > NVE_BOUNDS["drift_over_baseline_rms"] * base or rms > NVE_BOUNDS["rms_over_baseline"] * base:
        failures.append("NVE: drift %.3g, rms %.3g kJ/mol against the baseline's rms %.3g" % (drift, rms, base))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
