"""A System with its stock forces replaced by one HessianForce (the C++ HessianForceConverter)."""
import openmm

from .hessfit_swig import createHessianForceFromSystem

# Forces the converter represents; CMMotionRemover contributes no energy and is dropped.
_CONVERTED = (openmm.HarmonicBondForce, openmm.HarmonicAngleForce, openmm.PeriodicTorsionForce,
              openmm.RBTorsionForce, openmm.NonbondedForce, openmm.CMMotionRemover)


def convert_system(system):
    """A copy of ``system`` whose stock forces are one HessianForce with the same energy.

    The HessianForce gives every parameter a slot of its own (particles' charge, sigma, epsilon
    first, then the terms in System order); HarmonicBondForce and HarmonicAngleForce k are halved
    (hessfit's E = k (x - x0)^2). Particles, masses, constraints and virtual sites are copied as
    they are. Raises HessianForceException (code Unsupported) naming every force or setting that
    cannot be represented (a NonbondedForce with a cutoff, a Custom force, ...); ``system`` is
    never changed. Returns (new_system, force): the force is owned by new_system.
    """
    force = createHessianForceFromSystem(system)
    converted = openmm.XmlSerializer.clone(system)
    for index in reversed(range(converted.getNumForces())):
        if isinstance(converted.getForce(index), _CONVERTED):
            converted.removeForce(index)
    converted.addForce(force)
    return converted, force
