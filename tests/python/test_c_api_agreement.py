"""The Python module and the C API give the same numbers: the Hessian of one serialized System
bit for bit (tests/python/hessian_c_api.c) per platform, and CH3F's MM frequencies built as
examples/ch3f_frequencies.c builds them equal to what that program prints."""
import math
import os
import re
import subprocess

import numpy as np
import openmm as mm
import pytest

import hessfit
from conftest import SOURCE_DIR, make_context, water_like


def test_hessian_equals_the_c_api_bit_for_bit(platform, tmp_path):
    helper = os.environ.get("HESSFIT_TEST_C_API")
    if not helper:
        pytest.skip("HESSFIT_TEST_C_API (the hessian_c_api program) is not set")
    system, positions, force = water_like()
    context = make_context(system, positions, platform)
    hessian = force.getHessianBlocks(context)
    (tmp_path / "system.xml").write_text(mm.XmlSerializer.serialize(system))
    (tmp_path / "positions.txt").write_text("\n".join(" ".join(repr(float(v)) for v in p) for p in positions))
    out = tmp_path / "hessian.bin"
    subprocess.run([helper, str(tmp_path / "system.xml"), str(tmp_path / "positions.txt"), platform, str(out)],
                   check=True)
    from_c = np.fromfile(out, dtype=np.float64)
    assert from_c.shape == hessian.shape
    assert np.array_equal(from_c, hessian), np.abs(from_c - hessian).max()


def ch3f_in_python():
    """CH3F as examples/ch3f_frequencies.c builds it: one slot per typed parameter of q2mm's
    Seminario start, converted with hessfit_units.h's factors; monoisotopic masses."""
    data = os.path.join(SOURCE_DIR, "examples", "data", "sn2")
    lines = open(os.path.join(data, "ch3f-optimized.xyz")).read().split("\n")[2:7]
    elements = [line.split()[0] for line in lines]
    positions = np.array([[float(v) * 0.1 for v in line.split()[1:4]] for line in lines])
    types = {}
    for line in open(os.path.join(data, "ch3f-seminario-start.txt")):
        fields = line.split("#")[0].split()
        if fields and fields[0] in ("bond", "angle"):
            atoms, (k, x0) = tuple(fields[1:-2]), map(float, fields[-2:])
            types[atoms] = (k * 4.184, x0 * (math.pi / 180.0)) if fields[0] == "angle" else (k * (4.184 * 100.0), x0 * 0.1)
    mass = {"C": 12.0, "F": 18.99840316273, "H": 1.00782503223}
    system = mm.System()
    force = hessfit.HessianForce()
    slots = {atoms: (force.addParameter(k), force.addParameter(x0)) for atoms, (k, x0) in types.items()}
    for e in elements:
        system.addParticle(mass[e])
        force.addParticle(-1, -1, -1)
    centre = elements.index("C")
    others = [a for a in range(5) if a != centre]
    for a in others:
        force.addBond(centre, a, *slots.get(("C", elements[a])))
    for i, a in enumerate(others):
        for b in others[i + 1:]:
            key = (elements[a], "C", elements[b])
            force.addAngle(a, centre, b, *(slots.get(key) or slots[key[::-1]]))
    force.createExclusionsFromBonds([(centre, a) for a in others])
    system.addForce(force)
    return system, positions


def test_ch3f_frequencies_equal_the_c_example():
    example = os.environ.get("HESSFIT_TEST_CH3F_EXAMPLE")
    if not example:
        pytest.skip("HESSFIT_TEST_CH3F_EXAMPLE (the ch3f_frequencies program) is not set")
    printed = subprocess.run([example], check=True, capture_output=True, text=True).stdout
    rows = [line.split() for line in printed.splitlines() if re.match(r"^\s+\d\s+\d", line)]
    c_mm = np.array([float(row[4]) for row in rows])
    assert len(c_mm) == 9
    system, positions = ch3f_in_python()
    context = make_context(system, positions, "Reference")
    python_mm = hessfit.frequencies(context, project=False)  # the 9 of largest magnitude, as the example
    assert python_mm == pytest.approx(c_mm, abs=1.5e-6)  # the example prints 6 decimals
    projected = hessfit.frequencies(context)
    assert projected == pytest.approx(python_mm, abs=1e-3)
