"""An openmm.app workflow: PDB + ForceField -> System -> hessfit.convert_system -> Hessian ->
minimised geometry -> frequencies, per platform, against OpenMM's own forces."""
import os

import numpy as np
import openmm as mm
import openmm.app as app
import pytest

import hessfit
from hessfit import HessianForce
from conftest import make_context


def water_dimer():
    """Two flexible TIP3P waters from the openmm package's tip3p.pdb, NoCutoff."""
    pdb = app.PDBFile(os.path.join(os.path.dirname(app.__file__), "data", "tip3p.pdb"))
    modeller = app.Modeller(pdb.topology, pdb.positions)
    modeller.delete(list(modeller.topology.residues())[2:])
    forcefield = app.ForceField("tip3p.xml")
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.NoCutoff, constraints=None,
                                     rigidWater=False)
    positions = np.array(modeller.positions.value_in_unit(mm.unit.nanometer))
    return system, positions


def state(context):
    s = context.getState(getEnergy=True, getForces=True)
    return (s.getPotentialEnergy().value_in_unit(mm.unit.kilojoule_per_mole),
            s.getForces(asNumpy=True).value_in_unit(mm.unit.kilojoule_per_mole / mm.unit.nanometer).ravel())


def fd_hessian(context, x0, h=1e-6):
    """Central differences of the Context's forces around x0 (nm), symmetrised."""
    x0 = np.asarray(x0, dtype=float)
    numeric = np.zeros((x0.size, x0.size))
    for i in range(x0.size):
        g = []
        for sign in (1, -1):
            x = x0.ravel().copy()
            x[i] += sign * h
            context.setPositions(x.reshape(x0.shape))
            g.append(-state(context)[1])
        numeric[:, i] = (g[0] - g[1]) / (2 * h)
    context.setPositions(x0)
    return 0.5 * (numeric + numeric.T)


def test_converted_system_hessian_and_frequencies(platform):
    stock, positions = water_dimer()
    converted, force = hessfit.convert_system(stock)
    assert [type(f).__name__ for f in converted.getForces()] == ["Force"]  # the HessianForce alone
    assert HessianForce.cast(converted.getForce(0)).getNumBonds() == 4
    assert force.getNumAngles() == 2 and force.getCombiningRule() == HessianForce.LorentzBerthelot

    # OpenMM's own forces on Reference (the CPU platform's nonbonded kernels are single precision)
    stock_context = make_context(stock, positions, "Reference")
    context = make_context(converted, positions, platform)
    e_stock, f_stock = state(stock_context)
    e, f = state(context)
    assert e == pytest.approx(e_stock, abs=1e-9)  # |E| = 0.04 kJ/mol of terms of about 100
    assert np.abs(f - f_stock).max() <= 1e-9 * np.abs(f_stock).max()

    # the analytic Hessian against central differences of OpenMM's own forces
    hessian = force.getHessianBlocks(context).reshape(18, 18)
    numeric = fd_hessian(stock_context, positions)
    assert np.abs(hessian - numeric).max() <= 1e-6 * np.abs(hessian).max()

    # at a minimum: 12 real vibrations (6 intermolecular), the same as the vibrational routine gives for the
    # finite-difference Hessian of the stock forces there
    # (minimised on Reference: OpenMM's minimizer crashes on PoCL at this tolerance, stock forces too)
    reference = make_context(converted, positions, "Reference")
    mm.LocalEnergyMinimizer.minimize(reference, 1e-8, 0)
    minimum = reference.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(mm.unit.nanometer)
    context.setPositions(minimum)
    frequencies = hessfit.frequencies(context)
    modes = hessfit.normal_modes(context)
    assert len(frequencies) == 12 and modes.num_external == 6 and modes.modes.shape == (18, 18)
    assert np.allclose(modes.modes @ modes.modes.T, np.eye(18), atol=1e-10)
    assert frequencies.min() > 0 and 3000 < frequencies.max() < 4500
    numeric = fd_hessian(stock_context, minimum)
    masses = [stock.getParticleMass(i).value_in_unit(mm.unit.dalton) for i in range(6)]
    all_fd, _, _ = hessfit.hessfit_swig._vibAnalyse(numeric, masses,
                                                     np.array(minimum).ravel(), True)
    fd = hessfit.hessfit_swig._vibSelect(all_fd, 12)
    assert frequencies == pytest.approx(fd, rel=1e-5)
