#!/usr/bin/env python3
"""Writes the ORCA-layout .hess test files of hessfit (run once; the outputs are committed).

From examples/data/sn2 (q2mm examples, MIT): the CH3F and SN2-TS geometries (.xyz, Angstrom) and
Psi4 Hessians (.npy, Hartree/Bohr^2). The frequencies and normal modes written beside them are
computed here, independently of hessfit's C code: mass-weighting with monoisotopic masses,
projection of translations and rotations, numpy.linalg.eigh, nu = sign(l) F sqrt(|l|) with F from
CODATA 2018. The modes are unit Cartesian displacement vectors (mass-weighted eigenvector divided
by sqrt(mass), normalised, largest component positive); the six translations/rotations are listed
first with frequency 0 and zero vectors, as ORCA does.

  ch3f.hess    ORCA 5 layout: 5 columns a block, values %18.10E
  sn2-ts.hess  older ORCA layout: 6 columns a block, values %11.6f (one imaginary mode)

Usage (from the repository root): .venv/bin/python tests/data/orca/make_orca_hess.py
"""
import math
import os

import numpy as np

BOHR_A = 0.529177210903
HARTREE_J = 4.3597447222071e-18
BOHR_M = 5.29177210903e-11
AMU_KG = 1.66053906660e-27
C_CM_S = 299792458.0 * 100.0
FACTOR = math.sqrt(HARTREE_J / (BOHR_M ** 2 * AMU_KG)) / (2.0 * math.pi * C_CM_S)
MONOISOTOPIC = {"H": 1.00782503223, "C": 12.0, "F": 18.99840316273}
ENERGY = {"ch3f": -139.751112913417, "sn2-ts": -239.617572855815}  # Psi4, q2mm examples


def read_xyz(path):
    with open(path) as f:
        lines = f.read().splitlines()
    n = int(lines[0])
    sym, xyz = [], []
    for line in lines[2:2 + n]:
        t = line.split()
        sym.append(t[0])
        xyz.append([float(v) for v in t[1:4]])
    return sym, np.array(xyz)


def vibrations(hess, masses, xyz_bohr):
    n = len(masses)
    m3 = np.repeat(masses, 3)
    mw = hess / np.sqrt(np.outer(m3, m3))
    com = (masses[:, None] * xyz_bohr).sum(0) / masses.sum()
    r = xyz_bohr - com
    basis = []
    for k in range(3):
        t = np.zeros((n, 3))
        t[:, k] = 1.0
        basis.append((t * np.sqrt(masses)[:, None]).ravel())
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        basis.append((np.cross(e, r) * np.sqrt(masses)[:, None]).ravel())
    q, _ = np.linalg.qr(np.array(basis).T)
    p = np.eye(3 * n) - q @ q.T
    w, v = np.linalg.eigh(p @ mw @ p)
    external = np.argsort(np.abs(w))[:6]
    internal = [i for i in range(3 * n) if i not in set(external)]
    freqs = [0.0] * 6
    modes = [np.zeros(3 * n) for _ in range(6)]
    for i in internal:
        freqs.append(math.copysign(FACTOR * math.sqrt(abs(w[i])), w[i]))
        cart = v[:, i] / np.sqrt(m3)
        cart /= np.linalg.norm(cart)
        if cart[np.argmax(np.abs(cart))] < 0:
            cart = -cart
        modes.append(cart)
    return np.array(freqs), np.array(modes).T  # columns = modes


def blocks(matrix, width, fmt, colfmt):
    out = []
    rows, cols = matrix.shape
    for c0 in range(0, cols, width):
        cs = range(c0, min(cols, c0 + width))
        out.append(" " * 7 + "".join(colfmt % c for c in cs))
        for r in range(rows):
            out.append("%7d" % r + "".join(fmt % matrix[r, c] for c in cs))
    return out


def write(stem, width, fmt, colfmt, layout):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    sym, xyz = read_xyz(os.path.join(root, "examples/data/sn2/%s-optimized.xyz" % stem))
    hess = np.load(os.path.join(root, "examples/data/sn2/%s-hessian.npy" % stem))
    masses = np.array([MONOISOTOPIC[s] for s in sym])
    xyz_bohr = xyz / BOHR_A
    freqs, modes = vibrations(hess, masses, xyz_bohr)
    n3 = 3 * len(sym)
    lines = [
        "# hessfit wrote this file (tests/data/orca/make_orca_hess.py) in the ORCA .hess layout (%s)." % layout,
        "# Geometry and Hessian: examples/data/sn2/%s-optimized.xyz and -hessian.npy (Psi4 B3LYP/6-31+G(d)," % stem,
        "# q2mm examples, MIT, see examples/data/sn2/LICENSE); frequencies and unit Cartesian normal modes",
        "# computed from them with monoisotopic masses (the masses in $atoms).",
        "",
        "$orca_hessian_file",
        "",
        "$act_atom",
        "  0",
        "",
        "$act_coord",
        "  0",
        "",
        "$act_energy",
        "    %.12f" % ENERGY[stem],
        "",
        "$multiplicity",
        "  1",
        "",
        "$hessian",
        "%d" % n3,
    ]
    lines += blocks(hess, width, fmt, colfmt)
    lines += ["", "$vibrational_frequencies", "%d" % n3]
    lines += ["%5d %18.6f" % (i, f) for i, f in enumerate(freqs)]
    lines += ["", "$normal_modes", "%d %d" % (n3, n3)]
    lines += blocks(modes, width, fmt, colfmt)
    lines += ["", "#", "# The atoms: label  mass x y z (in bohrs)", "#", "$atoms", "%d" % len(sym)]
    lines += [" %-2s %12.8f %20.12f %20.12f %20.12f" % (s, m, *x) for s, m, x in zip(sym, masses, xyz_bohr)]
    lines += ["", "$actual_temperature", "  0.000000", "", "$frequency_scale_factor", "  1.000000", "", "$end", ""]
    with open(os.path.join(here, "%s.hess" % stem), "w") as f:
        f.write("\n".join(lines))
    print(stem, "frequencies:", " ".join("%.4f" % f for f in freqs[6:]))


write("ch3f", 5, "%19.10E", "%19d", "ORCA 5: 5 columns, %.10E")
write("sn2-ts", 6, "%11.6f", "%11d", "older ORCA: 6 columns, %11.6f")
