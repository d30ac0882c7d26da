"""The numbers from Python, per platform: energies follow parameter edits, the Hessian and the
parameter derivatives match central differences, the adjoint primitives and the objective match
what NumPy computes from the Hessian blocks."""
import numpy as np
import openmm as mm
import pytest

import hessfit
from conftest import make_context, water_like


def energy(context):
    return context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(mm.unit.kilojoule_per_mole)


def forces(context):
    f = context.getState(getForces=True).getForces(asNumpy=True)
    return f.value_in_unit(mm.unit.kilojoule_per_mole / mm.unit.nanometer).ravel()


def test_parameter_edits_change_the_energy(platform):
    system, positions, force = water_like()
    # bonds only: E = k sum (r - r0)^2, which NumPy computes independently
    for slot in (2, 4, 5, 6, 7):
        force.setParameter(slot, 0.0)
    context = make_context(system, positions, platform)
    r = [np.linalg.norm(positions[1] - positions[0]), np.linalg.norm(positions[2] - positions[0])]
    for k, r0 in ((2.0e5, 0.09572), (3.5e5, 0.1), (1.0e4, 0.08)):
        force.setParameters([k, r0, 0.0, 1.824218, 0.0, 0.0, 0.0, 0.0])
        force.updateParametersInContext(context)
        expected = sum(k * (ri - r0) ** 2 for ri in r)
        assert energy(context) == pytest.approx(expected, rel=1e-12)
        assert force.getMoleculeEnergies(context) == pytest.approx([expected], rel=1e-12)


def test_derivatives_match_central_differences(platform):
    system, positions, force = water_like()
    context = make_context(system, positions, platform)
    hessian = force.getHessianBlocks(context).reshape(9, 9)
    assert np.array_equal(hessian, hessian.T)
    h = 1e-6
    numeric = np.zeros((9, 9))
    for i in range(9):
        shifted = []
        for sign in (1, -1):
            x = positions.ravel().copy()
            x[i] += sign * h
            context.setPositions(x.reshape(3, 3))
            shifted.append(-forces(context))
        numeric[:, i] = (shifted[0] - shifted[1]) / (2 * h)
    context.setPositions(positions)
    scale = np.abs(hessian).max()
    assert np.abs(numeric - hessian).max() <= 1e-6 * scale

    derivatives = force.getParameterDerivatives(context)
    values = force.getParameters()
    for slot in range(force.getNumParameters()):
        step = 1e-6 * max(abs(values[slot]), 1e-3)
        e = []
        for sign in (1, -1):
            v = values.copy()
            v[slot] += sign * step
            force.setParameters(v)
            force.updateParametersInContext(context)
            e.append(energy(context))
        fd = (e[0] - e[1]) / (2 * step)
        assert derivatives[slot] == pytest.approx(fd, rel=1e-6, abs=1e-6 * np.abs(derivatives).max()), slot
    force.setParameters(values)
    force.updateParametersInContext(context)


def test_adjoint_primitives(platform):
    system, positions, force = water_like()
    context = make_context(system, positions, platform)
    rng = np.random.default_rng(7)
    adjoint = rng.standard_normal((9, 9))
    y = rng.standard_normal(9)
    contraction = force.getHessianContractionDerivatives(context, adjoint)  # a matrix is taken flattened
    gradient = force.getGradientContractionDerivatives(context, y)
    values = force.getParameters()
    for slot in range(force.getNumParameters()):
        step = 1e-5 * max(abs(values[slot]), 1e-2)
        hess, grad = [], []
        for sign in (1, -1):
            v = values.copy()
            v[slot] += sign * step
            force.setParameters(v)
            force.updateParametersInContext(context)
            hess.append(force.getHessianBlocks(context))
            grad.append(-forces(context))
        fd_hess = np.dot(adjoint.ravel(), (hess[0] - hess[1]) / (2 * step))
        fd_grad = np.dot(y, (grad[0] - grad[1]) / (2 * step))
        assert contraction[slot] == pytest.approx(fd_hess, rel=1e-5, abs=1e-7 * np.abs(contraction).max()), slot
        assert gradient[slot] == pytest.approx(fd_grad, rel=1e-5, abs=1e-5 * np.abs(gradient).max()), slot
    force.setParameters(values)
    force.updateParametersInContext(context)
    weights = force.getMoleculeEnergyDerivatives(context, [2.0])
    assert np.allclose(weights, 2.0 * force.getParameterDerivatives(context), rtol=1e-14, atol=0)


def test_hessian_objective(platform):
    system, positions, force = water_like()
    context = make_context(system, positions, platform)
    hessian = force.getHessianBlocks(context).reshape(9, 9)
    targets = hessian + 1.0
    weights = np.full((9, 9), 0.5)
    molecule = hessfit.HessianObjectiveMolecule(hessianTargets=targets, hessianWeights=weights)
    force.setHessianObjective(context, [molecule])
    assert force.getHessianObjectiveNumResiduals(context) == 45
    loss, dLdslot, residuals = force.computeHessianObjective(context)
    assert residuals == pytest.approx(np.full(45, 0.5), rel=1e-12)
    assert loss == pytest.approx(45 * 0.25, rel=1e-12)
    # dL/dH_ij = -2 w^2 (target - H) on the lower triangle: G for the contraction primitive
    adjoint = np.tril(-2.0 * weights ** 2 * (targets - hessian))
    assert dLdslot == pytest.approx(force.getHessianContractionDerivatives(context, adjoint), rel=1e-9)
    loss_only, none, _ = force.computeHessianObjective(context, False)
    assert none is None and loss_only == loss
    # the residual Jacobian of molecule 0 (residuals from the host: a GPU platform's H differs in the
    # last bits, 3e-11 of these residuals), and of the list [0] (the same call underneath)
    res, jac = force.computeHessianObjectiveJacobian(context, 0, [])
    res_list, jac_list = force.computeHessianObjectiveJacobian(context, [0], [])
    assert res == pytest.approx(residuals, abs=1e-9) and len(jac) == 45 * force.getNumParameters()
    assert np.array_equal(res_list, res) and np.array_equal(jac_list, jac)
