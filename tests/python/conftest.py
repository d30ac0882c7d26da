"""Shared fixtures of the Python module's tests (run by CTest: tests/python/CMakeLists.txt).

HESSFIT_TEST_PLATFORMS (comma-separated, from CMake) lists the platforms the per-platform tests
run on; a platform OpenMM lacks, or CUDA without a device, is skipped. HESSFIT_SOURCE_DIR and
HESSFIT_BUILD_DIR locate the example data and the built C programs.
"""
import os

import numpy as np
import openmm as mm
import pytest

import hessfit

SOURCE_DIR = os.environ.get("HESSFIT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
PLATFORMS = [p for p in os.environ.get("HESSFIT_TEST_PLATFORMS", "Reference,CPU").split(",") if p]


def make_context(system, positions, platform_name):
    """A Context on the platform (double precision on GPU platforms), or pytest.skip where it cannot exist."""
    names = [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]
    if platform_name not in names:
        pytest.skip("OpenMM has no %s platform here" % platform_name)
    platform = mm.Platform.getPlatformByName(platform_name)
    properties = {"Precision": "double"} if platform_name in ("OpenCL", "CUDA") else {}
    try:
        context = mm.Context(system, mm.VerletIntegrator(0.001), platform, properties)
    except mm.OpenMMException as e:
        if platform_name == "CUDA":
            pytest.skip("CUDA: %s" % e)
        raise
    context.setPositions(positions)
    return context


@pytest.fixture(params=PLATFORMS)
def platform(request):
    return request.param


def water_like():
    """A bent triatomic (O-H bonds and the H-O-H angle, charges and LJ on) as a System with a
    HessianForce, its positions (nm) and the force."""
    system = mm.System()
    for mass in (15.999, 1.008, 1.008):
        system.addParticle(mass)
    force = hessfit.HessianForce()
    kb, r0 = force.addParameter(2.0e5), force.addParameter(0.09572)
    ka, t0 = force.addParameter(300.0), force.addParameter(1.824218)
    q_o, q_h = force.addParameter(-0.834), force.addParameter(0.417)
    sig, eps = force.addParameter(0.3), force.addParameter(0.5)
    force.addParticle(q_o, sig, eps)
    force.addParticle(q_h, sig, eps)
    force.addParticle(q_h, sig, eps)
    force.addBond(0, 1, kb, r0)
    force.addBond(0, 2, kb, r0)
    force.addAngle(1, 0, 2, ka, t0)
    force.createExclusionsFromBonds([(0, 1), (0, 2)])
    system.addForce(force)
    positions = np.array([[0.0, 0.0, 0.0], [0.1, 0.01, 0.0], [-0.03, 0.09, 0.01]])
    return system, positions, force
