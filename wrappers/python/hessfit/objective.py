"""The Hessian-space objective of a Context (C++ HessianObjective.h), from Python.

HessianForce.setHessianObjective(context, molecules, frequencyFactor=None) takes one
HessianObjectiveMolecule per molecule of the force; computeHessianObjective(context) then gives
(loss, dL/dslot, residuals) for all molecules in one kernel call. OpenMM units: Hessians in
kJ/mol/nm^2, masses in amu, mass-weighted Hessians in kJ/mol/nm^2/amu, frequencies in cm^-1.
"""
from dataclasses import dataclass, field
from typing import Sequence

from .hessfit_swig import HessianForce, frequencyFactor

NoFrequencies = 0   #: no frequency targets
PairByPosition = 1  #: candidates above frequencyThreshold at the first evaluation, paired in order
PairByOverlap = 2   #: maximum total eigenvector overlap with frequencyVectors, at every evaluation


@dataclass
class HessianObjectiveMolecule:
    """The objectives of one molecule (HessianObjectiveSpec::Molecule); every field is optional.

    masses: amu, one per particle in Hessian-block order (needed for frequencies and eigenmatrix).
    frequencyPairing, projectExternal, frequencyTargets (cm^-1), frequencyWeights,
    frequencyThreshold (cm^-1), frequencyVectors (targets x 3n, row-major, orthonormal):
    frequency targets. eigenVectors (k x 3n), eigenTargets, eigenWeights (k x k, lower triangle
    read): eigenmatrix elements. hessianTargets, hessianWeights ((3n)^2 each): Hessian elements.
    """
    masses: Sequence[float] = field(default_factory=list)
    frequencyPairing: int = NoFrequencies
    projectExternal: bool = False
    frequencyTargets: Sequence[float] = field(default_factory=list)
    frequencyWeights: Sequence[float] = field(default_factory=list)
    frequencyThreshold: float = 50.0
    frequencyVectors: Sequence[float] = field(default_factory=list)
    eigenVectors: Sequence[float] = field(default_factory=list)
    eigenTargets: Sequence[float] = field(default_factory=list)
    eigenWeights: Sequence[float] = field(default_factory=list)
    hessianTargets: Sequence[float] = field(default_factory=list)
    hessianWeights: Sequence[float] = field(default_factory=list)


def _set_hessian_objective(self, context, molecules, frequencyFactor=None):
    """Set the Context's Hessian-space objective: one HessianObjectiveMolecule per molecule.

    frequencyFactor: cm^-1 per sqrt(kJ/mol/nm^2/amu), hessfit.frequencyFactor() by default. The
    spec is checked (sizes, finite targets, weights >= 0, masses > 0, orthonormal vectors) and
    HessianForceException names the molecule, field and entry that is wrong.
    """
    molecules = list(molecules)
    for m, molecule in enumerate(molecules):
        if not isinstance(molecule, HessianObjectiveMolecule):
            raise TypeError("molecule %d of the objective is a %s, not a HessianObjectiveMolecule"
                            % (m, type(molecule).__name__))
    factor = _frequency_factor() if frequencyFactor is None else frequencyFactor
    self._setHessianObjective(context, molecules, factor)


_frequency_factor = frequencyFactor
HessianForce.setHessianObjective = _set_hessian_objective
