#!/usr/bin/env python3
# hessfit wrote this script for its tests (test_ffxml_md.c runs it with the repository's .venv).
"""Load the harmonic model's export (hessfit_ffxml_write with PDBs) in stock OpenMM and check it.

Usage: check_ffxml_md.py DIR

DIR holds fitted.xml, fitted-<k>.pdb and reference.txt: per structure a line
"structure k n_atoms energy" (kJ/mol) and n_atoms lines "x y z fx fy fz" (nm, kJ/mol/nm), the
energy and forces of hessfit's HessianForce (the fit model) at those positions.

Every structure, Reference platform (double precision):
1. ForceField(fitted.xml) + PDBFile(fitted-k.pdb), createSystem(nonbondedMethod=NoCutoff,
   constraints=None, rigidWater=False) as a user calls it (no residueTemplates): energy and forces at
   the reference positions equal HessianForce's to 1e-10 relative (forces: max |dF| / max |F|).
   Where the System has a NonbondedForce, its exceptions are the 1-2, 1-3 and 1-4 pairs of the
   PDB's bond graph (nearest relation first; the fit model's pair list, HessianForce's
   createExclusionsFromBonds), the 1-2 and 1-3 ones without charge product or epsilon; a
   CustomNonbondedForce (geometric combining) excludes the same pairs.
2. 10 ps of NVE: VerletIntegrator(0.5 fs) from the reference positions with velocities of 300 K
   (seeded). Bound (NVE_BOUND): Verlet conserves a shadow energy; for a harmonic mode of angular
   frequency w and energy E the true energy differs from it by at most (w dt)^2/4 E, so the total
   energy's range (max - min) stays below (w_max dt)^2/4 sum E = (w_max dt)^2/4 2 <Ekin> (equipartition
   of the vibrational energy, <Ekin> its time average), and the bound allows twice that for the
   anharmonic terms: max - min <= (w_max dt)^2 <Ekin> / 2 x 2. w_max comes from the System's
   own Hessian at the start (central differences of the forces, mass-weighted). The drift (slope of a
   straight line through E(t), times 10 ps) must stay below a tenth of that: Verlet has no secular
   drift for a smooth force.

Exits 0 when every check passes, 1 when one fails, 77 when openmm cannot be imported.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from model_reference import read_reference  # noqa: E402

DT_PS = 0.0005
STEPS = 20000
NVE_BOUND = {"range_factor": 2.0, "drift_over_range_bound": 0.1}


def graph_pairs(topology):
    """1-2 + 1-3 pairs and 1-4 pairs of the bond graph, nearest relation first."""
    nbr = {a.index: set() for a in topology.atoms()}
    for b in topology.bonds():
        nbr[b[0].index].add(b[1].index)
        nbr[b[1].index].add(b[0].index)
    excl, p14 = set(), set()
    for s in nbr:
        dist, front = {s: 0}, [s]
        for depth in (1, 2, 3):
            nxt = []
            for a in front:
                for b in nbr[a]:
                    if b not in dist:
                        dist[b] = depth
                        nxt.append(b)
            front = nxt
        for b, d in dist.items():
            if b > s:
                (excl if d <= 2 else p14).add((s, b))
    return excl, p14


def max_angular_frequency(openmm, context, system, positions):
    """sqrt of the largest eigenvalue of the mass-weighted Hessian (1/ps), central differences."""
    import numpy as np
    n = len(positions)
    h = 1e-5
    hess = np.zeros((3 * n, 3 * n))
    for i in range(3 * n):
        cols = []
        for sign in (1, -1):
            p = [list(v) for v in positions]
            p[i // 3][i % 3] += sign * h
            context.setPositions([openmm.Vec3(*v) for v in p])
            f = context.getState(getForces=True).getForces(asNumpy=True)._value
            cols.append(-f.reshape(-1))
        hess[:, i] = (cols[0] - cols[1]) / (2 * h)
    hess = 0.5 * (hess + hess.T)
    m = np.repeat([system.getParticleMass(i)._value for i in range(n)], 3)
    w2 = np.linalg.eigvalsh(hess / np.sqrt(np.outer(m, m)))
    context.setPositions([openmm.Vec3(*v) for v in positions])
    return math.sqrt(max(w2))


def nve(context, steps, every):
    integrator = context.getIntegrator()
    t, e, kin = [], [], []
    for k in range(steps // every + 1):
        if k > 0:
            integrator.step(every)
        s = context.getState(getEnergy=True)
        t.append(s.getTime()._value)
        kin.append(s.getKineticEnergy()._value)
        e.append(s.getPotentialEnergy()._value + kin[-1])
    n = len(t)
    mt, me = sum(t) / n, sum(e) / n
    slope = sum((a - mt) * (b - me) for a, b in zip(t, e)) / sum((a - mt) ** 2 for a in t)
    return slope * (t[-1] - t[0]), max(e) - min(e), sum(kin) / n


def main(argv):
    if len(argv) != 2:
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
    platform = openmm.Platform.getPlatformByName("Reference")
    for index, energy, positions, forces in read_reference(d + "/reference.txt"):
        pdb = app.PDBFile("%s/fitted-%d.pdb" % (d, index))
        n = len(positions)
        system = forcefield.createSystem(pdb.topology, nonbondedMethod=app.NoCutoff, constraints=None,
                                         rigidWater=False, removeCMMotion=False)
        context = openmm.Context(system, openmm.VerletIntegrator(DT_PS), platform)
        context.setPositions([openmm.Vec3(*p) for p in positions])
        state = context.getState(getEnergy=True, getForces=True)
        e = state.getPotentialEnergy()._value
        f = [v._value for v in state.getForces()]
        de = abs(e - energy) / abs(energy)
        fmax = max(abs(c) for row in forces for c in row)
        df = max(abs(a - b) for i in range(n) for a, b in zip(f[i], forces[i])) / fmax
        names = sorted(type(force).__name__ for force in system.getForces())
        print("structure %d: %d atoms, OpenMM %.12f HessianForce %.12f kJ/mol, energy %.2e, forces %.2e relative; %s"
              % (index, n, e, energy, de, df, ", ".join(names)))
        if de > 1e-10 or df > 1e-10:
            failures.append("structure %d: energy %.3g, forces %.3g relative (1e-10)" % (index, de, df))
        excl, p14 = graph_pairs(pdb.topology)
        for force in system.getForces():
            if isinstance(force, openmm.NonbondedForce):
                seen = set()
                for k in range(force.getNumExceptions()):
                    i, j, qq, s, eps = force.getExceptionParameters(k)
                    pair = (min(i, j), max(i, j))
                    seen.add(pair)
                    if pair in excl and (qq._value != 0 or eps._value != 0):
                        failures.append("structure %d: 1-2/1-3 pair %s interacts" % (index, pair))
                if seen != excl | p14:
                    failures.append("structure %d: exceptions %s, the bond graph's 1-2, 1-3, 1-4 pairs %s"
                                    % (index, sorted(seen), sorted(excl | p14)))
                print("  NonbondedForce: %d exceptions = %d 1-2/1-3 + %d 1-4 pairs of the bond graph, 1-4 scales "
                      "from the file" % (len(seen), len(excl), len(p14)))
            elif isinstance(force, openmm.CustomNonbondedForce):
                ex = set(tuple(sorted(force.getExclusionParticles(k))) for k in range(force.getNumExclusions()))
                if ex != excl | p14:
                    failures.append("structure %d: CustomNonbondedForce exclusions differ" % index)

        w_max = max_angular_frequency(openmm, context, system, positions)
        context.setVelocitiesToTemperature(300.0, 2024 + index)
        drift, spread, kin = nve(context, STEPS, 10)
        bound = NVE_BOUND["range_factor"] * (w_max * DT_PS) ** 2 * kin / 2.0
        print("  NVE 10 ps, 0.5 fs, Reference: drift %+.2e kJ/mol, max - min %.3e kJ/mol (bound %.3e = %.0f x "
              "(w_max dt)^2 <Ekin>/2, w_max %.1f /ps, <Ekin> %.2f kJ/mol), |drift| bound %.2e"
              % (drift, spread, bound, NVE_BOUND["range_factor"], w_max, kin,
                 NVE_BOUND["drift_over_range_bound"] * bound))
        if not (spread <= bound and abs(drift) <= NVE_BOUND["drift_over_range_bound"] * bound):
            failures.append("structure %d: NVE drift %.3g, range %.3g kJ/mol against the bound %.3g"
                            % (index, drift, spread, bound))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
