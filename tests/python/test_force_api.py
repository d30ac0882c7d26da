"""The whole HessianForce API from Python: every term kind's add/get/set, the parameter table,
particles, molecules, reduced particles, settings, docstrings, cast/isinstance, serialization."""
import math

import numpy as np
import openmm as mm
import pytest

import hessfit
from hessfit import HessianForce


def test_is_an_openmm_force_with_docstrings():
    force = HessianForce()
    assert isinstance(force, mm.Force)
    assert "E = k (r - r0)^2" in HessianForce.addBond.__doc__
    assert "kJ/mol/nm^2" in HessianForce.getHessianBlocks.__doc__
    assert HessianForce.NoSlot == -1
    assert HessianForce.termKindName(HessianForce.MM3BendBend) == "MM3* bend-bend"
    assert HessianForce.getTermNumParticles(HessianForce.MM3BendBend) == 5


def test_parameter_table():
    force = HessianForce()
    assert [force.addParameter(v) for v in (1.0, 2.0, 3.0)] == [0, 1, 2]
    assert force.getNumParameters() == 3
    force.setParameter(1, 5.0)
    assert force.getParameter(1) == 5.0
    force.setParameters(np.array([7.0, 8.0, 9.0]))
    values = force.getParameters()
    assert isinstance(values, np.ndarray) and values.dtype == np.float64
    assert values.tolist() == [7.0, 8.0, 9.0]
    # units are stripped to OpenMM's
    force.setParameter(0, 1.5 * mm.unit.angstrom)
    assert force.getParameter(0) == pytest.approx(0.15)


def test_every_term_kind_round_trips():
    force = HessianForce()
    s = [force.addParameter(0.1 * (i + 1)) for i in range(8)]
    for _ in range(6):
        force.addParticle(s[0], s[1], s[2])
    assert force.getParticleParameters(3) == [s[0], s[1], s[2]]
    force.setParticleParameters(3, s[3], -1, s[4])
    assert force.getParticleParameters(3) == [s[3], -1, s[4]]
    cases = [
        # (add, get, set, count, particle args, other args)
        ("Bond", "Bonds", (0, 1), (s[0], s[1])),
        ("UreyBradley", "UreyBradleys", (0, 2), (s[0], s[1])),
        ("Angle", "Angles", (0, 1, 2), (s[2], s[3])),
        ("MM3Angle", "MM3Angles", (0, 1, 2), (s[2], s[3])),
        ("PeriodicTorsion", "PeriodicTorsions", (0, 1, 2, 3), (3, s[4], s[5])),
        ("PeriodicImproper", "PeriodicImpropers", (0, 1, 2, 3), (2, s[4], s[5])),
        ("HarmonicImproper", "HarmonicImpropers", (0, 1, 2, 3), (s[4], s[5])),
        ("MM3BendBend", "MM3BendBends", (0, 1, 2, 3, 4), (s[0], s[1], s[2])),
        ("MM3TorsionStretch", "MM3TorsionStretches", (0, 1, 2, 3), (s[0], s[1], 1.1)),
        ("MM3StretchBend", "MM3StretchBends", (0, 1, 2), (s[0], s[1], s[2], s[3], 1.05, 0.95)),
        ("MM3Bond", "MM3Bonds", (0, 1), (s[0], s[1], 1.0 / 0.923)),
        ("ExplicitPair", "ExplicitPairs", (0, 5), (s[5], s[6], s[7])),
        ("MM3Pair", "MM3Pairs", (1, 5), (s[5], s[6], s[7])),
        ("MM3SwitchedPair", "MM3SwitchedPairs", (2, 4, 1, 4), (s[5], s[6], s[7], 1.0 / 0.923, 1.0)),
        ("HydrogenBond", "HydrogenBonds", (1, 3), (s[0], s[1])),
    ]
    for kind, plural, particles, rest in cases:
        index = getattr(force, "add" + kind)(*particles, *rest)
        assert index == 0
        assert getattr(force, "getNum" + plural)() == 1
        got = getattr(force, "get" + kind + "Parameters")(0)
        assert list(got) == pytest.approx(list(particles) + list(rest)), kind
        shifted = tuple(p + 1 if p < 5 else p for p in particles)
        getattr(force, "set" + kind + "Parameters")(0, *shifted, *rest)
        assert list(getattr(force, "get" + kind + "Parameters")(0))[:len(particles)] == list(shifted), kind
    # terms with slot lists
    force.addOPLSTorsion(0, 1, 2, 3, [s[0], -1, s[1], s[2]])
    assert force.getOPLSTorsionParameters(0) == [0, 1, 2, 3, [s[0], -1, s[1], s[2]]]
    force.addRBTorsion(0, 1, 2, 3, np.array([s[0], s[1], -1, -1, s[2], s[3]]))
    force.setRBTorsionParameters(0, 1, 2, 3, 4, [s[0]] * 6)
    assert force.getRBTorsionParameters(0) == [1, 2, 3, 4, [s[0]] * 6]
    # exclusions and 1-4 pairs
    assert force.addExclusion(2, 4) == 0 and force.getExclusionParticles(0) == [2, 4]
    assert force.addPair14(2, 5) == 0 and force.getPair14Particles(0) == [2, 5]
    force.createExclusionsFromBonds([(0, 1), (1, 2)])
    assert force.getNumExclusions() == 4  # 2-4, then 0-1, 1-2 and 0-2


def test_settings_molecules_reduced_particles():
    force = HessianForce()
    for _ in range(4):
        force.addParticle(-1, -1, -1)
    assert force.getNumMolecules() == 1 and not force.hasExplicitMolecules()
    force.addMolecule([1, 0])
    force.addMolecule(np.arange(2, 4))
    assert force.getNumMolecules() == 2 and force.getMoleculeParticles(0) == [1, 0]
    assert force.getHessianSize() == 2 * 36 and force.getHessianBlockOffset(1) == 36
    force.setCombiningRule(HessianForce.LorentzBerthelot)
    assert force.getCombiningRule() == HessianForce.LorentzBerthelot
    force.setCoulomb14Scale(0.8333)
    force.setLJ14Scale(0.5)
    assert (force.getCoulomb14Scale(), force.getLJ14Scale()) == (0.8333, 0.5)
    assert force.addReducedParticle(1, 0, 0.923) == 0
    force.setReducedParticleParameters(0, 3, 2, 0.9)
    assert force.getReducedParticleParameters(0) == [3, 2, 0.9]
    assert force.getNumReducedParticles() == 1
    assert not force.usesPeriodicBoundaryConditions()


def test_cast_and_serialization_round_trip():
    system = mm.System()
    for _ in range(3):
        system.addParticle(12.0)
    system.addForce(mm.HarmonicBondForce())
    force = HessianForce()
    k, r0, ka, t0 = (force.addParameter(v) for v in (1000.0, 0.15, 200.0, 1.9))
    for _ in range(3):
        force.addParticle(-1, -1, -1)
    force.addBond(0, 1, k, r0)
    force.addAngle(0, 1, 2, ka, t0)
    force.addMM3Bond(1, 2, k, r0, 1.08)
    force.setForceGroup(3)
    assert system.addForce(force) == 1
    assert not force.thisown  # the System owns it now
    back = system.getForce(1)
    assert HessianForce.isinstance(back) and not HessianForce.isinstance(system.getForce(0))
    assert HessianForce.cast(back).getNumBonds() == 1
    with pytest.raises(TypeError):
        HessianForce.cast(system.getForce(0))

    xml = mm.XmlSerializer.serialize(system)
    copy = mm.XmlSerializer.deserialize(xml)
    restored = HessianForce.cast(copy.getForce(1))
    assert restored.getForceGroup() == 3
    assert restored.getParameters().tolist() == [1000.0, 0.15, 200.0, 1.9]
    assert restored.getAngleParameters(0) == [0, 1, 2, ka, t0]
    assert restored.getMM3BondParameters(0) == [1, 2, k, r0, 1.08]
    assert mm.XmlSerializer.serialize(copy) == xml
    # a force serialized on its own
    alone = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(restored))
    assert HessianForce.cast(alone).getNumMM3Bonds() == 1


def test_constants_of_the_units_header():
    # hessfit_frequency_factor_kj_mol_nm2_amu: sqrt(1e3 / (1e-18 amu)) / (2 pi c) in cm^-1
    amu, c = 1.66053906660e-27, 299792458.0
    expected = math.sqrt(1e3 / 6.02214076e23 / 1e-18 / amu) / (2 * math.pi * c * 100.0)
    assert hessfit.frequencyFactor() == pytest.approx(expected, rel=1e-12)
