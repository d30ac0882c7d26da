#!/usr/bin/env python3
"""Time the finite-difference Hessian the way Python fitting tools do it with OpenMM.

q2mm's OpenMM backend (q2mm/backends/mm/openmm.py, _evaluate_hessian) and ForceBalance's OpenMM
engine (src/openmmio.py, build_mass_weighted_hessian) both build the Cartesian Hessian from
central differences of forces with h = 1e-4 nm: for each of the 3N coordinates, setPositions at
+h and -h, getState(getForces=True).getForces(asNumpy=True) with unit conversion, one row
-(F+ - F-)/2h, then (H + H^T)/2. This script runs that loop through OpenMM's Python API on the
stock Systems that hessian_bench writes with --dump-xml, so the C benchmark's FD numbers can be
compared with what the Python tools pay per Hessian (interpreter, unit and NumPy overhead).

    ./build/bin/hessian_bench --dump-xml /tmp/hb-          # writes /tmp/hb-<atoms>-{system,state}.xml
    .venv/bin/python bench/fd_python.py /tmp/hb- 5 62 500  # prints median ms per FD Hessian

Reference platform; repeats as in hessian_bench (5 up to 62 atoms, 3 above; --repeats N).
"""
import argparse
import statistics
import time

import numpy as np
import openmm
from openmm import unit


def fd_hessian(context, positions_nm, step):
    n = positions_nm.shape[0]
    hessian = np.zeros((3 * n, 3 * n))
    force_unit = unit.kilojoule_per_mole / unit.nanometer
    for atom in range(n):
        for axis in range(3):
            plus = positions_nm.copy()
            minus = positions_nm.copy()
            plus[atom, axis] += step
            minus[atom, axis] -= step
            context.setPositions(plus * unit.nanometer)
            f_plus = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(force_unit)
            context.setPositions(minus * unit.nanometer)
            f_minus = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(force_unit)
            hessian[3 * atom + axis, :] = -((f_plus - f_minus) / (2.0 * step)).reshape(-1)
    context.setPositions(positions_nm * unit.nanometer)
    return 0.5 * (hessian + hessian.T)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", help="the --dump-xml PREFIX given to hessian_bench")
    parser.add_argument("atoms", nargs="+", type=int, help="system sizes (atoms) to time")
    parser.add_argument("--repeats", type=int, default=0)
    parser.add_argument("--step", type=float, default=1e-4, help="nm (default 1e-4)")
    args = parser.parse_args()
    platform = openmm.Platform.getPlatformByName("Reference")
    print(f"OpenMM {openmm.__version__} (Python API), Reference platform, h = {args.step} nm")
    print("| atoms | Python FD median ms | repeats |")
    print("|------:|--------------------:|--------:|")
    for natoms in args.atoms:
        with open(f"{args.prefix}{natoms}-system.xml") as f:
            system = openmm.XmlSerializer.deserialize(f.read())
        with open(f"{args.prefix}{natoms}-state.xml") as f:
            state = openmm.XmlSerializer.deserialize(f.read())
        context = openmm.Context(system, openmm.VerletIntegrator(0.001), platform)
        positions = np.array(state.getPositions(asNumpy=True).value_in_unit(unit.nanometer))
        context.setPositions(positions * unit.nanometer)
        context.getState(getForces=True)  # warm-up
        repeats = args.repeats or (5 if natoms <= 62 else 3)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fd_hessian(context, positions, args.step)
            times.append(time.perf_counter() - t0)
        print(f"| {natoms} | {1e3 * statistics.median(times):.4g} | {repeats} |", flush=True)


if __name__ == "__main__":
    main()
