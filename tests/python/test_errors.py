"""Bad input gives a Python exception with hessfit's message, never a crash: wrong array shapes
and types, NaN, unknown particle, slot and molecule indices, a force not in the Context."""
import numpy as np
import openmm as mm
import pytest

import hessfit
from hessfit import ErrorCode, HessianForce, HessianForceException
from conftest import make_context, water_like


def test_argument_checks_raise_with_the_message():
    force = HessianForce()
    force.addParameter(1.0)
    with pytest.raises(ValueError) as e:
        force.setParameter(0, float("nan"))
    assert isinstance(e.value, HessianForceException) and isinstance(e.value, mm.OpenMMException)
    assert e.value.code == ErrorCode.Value and "slot 0" in str(e.value) and "nan" in str(e.value)
    with pytest.raises(IndexError) as e:
        force.getParameter(5)
    assert e.value.code == ErrorCode.Index and "5" in str(e.value)
    with pytest.raises(HessianForceException):
        force.addParameter(float("inf"))
    with pytest.raises(ValueError) as e:
        force.setParameters([1.0, 2.0])
    assert e.value.code == ErrorCode.Size
    with pytest.raises(ValueError):
        force.setParameters(np.zeros((1, 1)))  # a 1-D array is required
    with pytest.raises(TypeError):
        force.setParameters("abc")
    with pytest.raises(TypeError):
        force.addMolecule([0.5, 1])  # indices must be integers
    with pytest.raises(TypeError):
        force.addBond(0, 1.5, 0, 0)
    with pytest.raises(OverflowError):
        force.addMolecule([2 ** 40])
    with pytest.raises(ValueError):
        force.createExclusionsFromBonds([(0, 1, 2)])
    with pytest.raises(IndexError):
        force.addBond(-1, 0, 0, 0)
    with pytest.raises(IndexError):
        force.getBondParameters(0)
    with pytest.raises(HessianForceException) as e:
        force.addPeriodicTorsion(0, 1, 2, 3, 0, 0, 0)  # periodicity must be >= 1
    assert e.value.code == ErrorCode.Value
    with pytest.raises(HessianForceException):
        force.addReducedParticle(0, 1, float("nan"))


def test_context_errors(platform):
    system, positions, force = water_like()
    context = make_context(system, positions, platform)
    size = force.getHessianSize()
    for bad in (np.zeros(size - 1), np.zeros((size, 2))):
        with pytest.raises(ValueError) as e:
            force.getHessianContractionDerivatives(context, bad)
        assert e.value.code == ErrorCode.Size
    adjoint = np.zeros(size)
    adjoint[10] = np.nan
    with pytest.raises(ValueError, match="nan at entry 10"):
        force.getHessianContractionDerivatives(context, adjoint)
    with pytest.raises(ValueError):
        force.getGradientContractionDerivatives(context, np.zeros(5))
    with pytest.raises(ValueError):
        force.getMoleculeEnergyDerivatives(context, [np.inf])
    with pytest.raises(HessianForceException):
        force.computeHessianObjective(context)  # no objective set
    with pytest.raises(ValueError, match="molecule 0"):
        force.setHessianObjective(context, [hessfit.HessianObjectiveMolecule(masses=[1.0, -1.0, 1.0])])
    with pytest.raises(TypeError):
        force.setHessianObjective(context, [{"masses": [1.0]}])
    # a force that is not in the Context
    other = HessianForce()
    with pytest.raises(HessianForceException) as e:
        other.getHessianBlocks(context)
    assert e.value.code == ErrorCode.NotInContext
    # coincident particles: an undefined bond direction
    context.setPositions(np.zeros((3, 3)))
    with pytest.raises(HessianForceException) as e:
        force.getHessianBlocks(context)
    assert e.value.code == ErrorCode.Geometry


def test_unknown_particle_at_context_creation():
    system, positions, force = water_like()
    force.addBond(0, 7, 0, 1)  # particle 7 does not exist: found when a Context is made
    # openmm's own wrapper creates the Context: its OpenMMException carries hessfit's message
    with pytest.raises(mm.OpenMMException, match="bond 2 uses particle 7"):
        mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))


def test_converter_names_what_it_cannot_convert():
    system = mm.System()
    system.addParticle(1.0)
    system.addForce(mm.CustomExternalForce("x^2"))
    with pytest.raises(HessianForceException, match="CustomExternalForce") as e:
        hessfit.convert_system(system)
    assert e.value.code == ErrorCode.Unsupported


def test_vibrations_check_their_input():
    with pytest.raises(ValueError, match="Hessian"):
        hessfit.hessfit_swig._vibAnalyse(np.zeros(8), [1.0], np.zeros(3), True)
    with pytest.raises(ValueError):
        hessfit.hessfit_swig._vibAnalyse(np.full(9, np.nan), [1.0], np.zeros(3), False)
