"""Normal modes and harmonic frequencies (cm^-1) of a molecule of a HessianForce in a Context.

The Hessian block comes from HessianForce.getHessianBlocks, the masses from the Context's System,
the positions from its State; the analysis is the fitting layer's hessfit_vib_analyse
(fitting/hessian/hf_vib.c, the routine of examples/ch3f_frequencies.c): mass-weighting,
optionally translations and rotations projected out (rigid-body basis at the centre of mass),
LAPACK's dsyevd, and nu = sign(l) F sqrt(|l|) with F = frequencyFactor() (hessfit_units.h, CODATA
2018). Negative frequencies stand for imaginary ones.
"""
from collections import namedtuple

import numpy as np
import openmm

from .hessfit_swig import HessianForce, _vibAnalyse, _vibSelect

NormalModes = namedtuple("NormalModes", "frequencies modes num_external")
NormalModes.__doc__ = """All 3n modes of a molecule, in ascending eigenvalue order.

frequencies: (3n,) cm^-1; modes: (3n, 3n), row j the unit mass-weighted eigenvector of mode j
(coordinates particle, then x, y, z, in getMoleculeParticles order); num_external: the translations
and rotations projected out (6, 5 for a linear molecule, 0 without projection), whose modes stay
in the list near zero."""


def _find_force(system, force):
    if force is not None:
        return force
    found = [HessianForce.cast(f) for f in system.getForces() if HessianForce.isinstance(f)]
    if len(found) != 1:
        raise ValueError("the Context's System has %d HessianForces: pass force=" % len(found))
    return found[0]


def normal_modes(context, molecule=0, project=True, force=None):
    """All normal modes of one molecule of the Context's HessianForce (NormalModes).

    context: an openmm.Context whose System holds one HessianForce (or pass force=).
    molecule: the molecule's index in the force.
    project: project translations and rotations out of the mass-weighted Hessian first.
    """
    system = context.getSystem()
    force = _find_force(system, force)
    if not 0 <= molecule < force.getNumMolecules():
        raise IndexError("molecule %d: the force has %d" % (molecule, force.getNumMolecules()))
    particles = force.getMoleculeParticles(molecule)
    dim = 3 * len(particles)
    start = force.getHessianBlockOffset(molecule)
    hessian = force.getHessianBlocks(context)[start:start + dim * dim]
    masses = [system.getParticleMass(p).value_in_unit(openmm.unit.dalton) for p in particles]
    positions = context.getState(getPositions=True).getPositions(asNumpy=True).value_in_unit(openmm.unit.nanometer)
    coordinates = np.ascontiguousarray(positions[particles], dtype=float).ravel()
    frequencies, modes, num_external = _vibAnalyse(hessian, masses, coordinates, project)
    return NormalModes(frequencies, modes.reshape(dim, dim), num_external)


def frequencies(context, molecule=0, project=True, force=None):
    """The 3n - 6 (3n - 5 for a linear molecule) vibrational frequencies (cm^-1, ascending) of one
    molecule: the modes of largest magnitude (hessfit_vib_select), as examples/ch3f_frequencies.c
    keeps them. Arguments as normal_modes; without projection 6 external modes are dropped.
    """
    modes = normal_modes(context, molecule, project, force)
    dim = len(modes.frequencies)
    external = modes.num_external if project else min(6, dim)
    return _vibSelect(modes.frequencies, dim - external)
