#ifndef HESSFIT_HESSIAN_FORCE_H_
#define HESSFIT_HESSIAN_FORCE_H_

/*
 * HessianForce: a molecular-mechanics force (harmonic / OPLS-AA bonded terms, Lennard-Jones and
 * Coulomb) whose energy, forces, analytic Cartesian Hessian and analytic derivatives of the
 * energy with respect to every parameter can be read from an OpenMM Context.
 *
 * Units are OpenMM's throughout: distances in nm, angles in rad, energies in kJ/mol, charges in
 * elementary charges, Hessians in kJ/mol/nm^2.
 *
 * Parameters live in one table of "slots" (doubles). Every term refers to its parameters by slot
 * index, so many terms can share one typed parameter; a fit changes the table and pushes it with
 * updateParametersInContext(), which never re-initialises the Context.
 *
 * Energy conventions (note: OpenMM's stock HarmonicBondForce/HarmonicAngleForce use k/2):
 *   bond, Urey-Bradley   E = k (r - r0)^2                     k: kJ/mol/nm^2, r0: nm
 *   angle                E = k (theta - theta0)^2             k: kJ/mol/rad^2, theta0: rad
 *   MM3* bond            E = k dr^2 (1 - 2.55 dr + 3.793125 dr^2), dr = r - r0 in Angstrom in the
 *                        polynomial (-25.5 dr + 379.3125 dr^2 with dr in nm)   k: kJ/mol/nm^2, r0: nm
 *   MM3* angle           E = k dt^2 (1 - 0.014 D + 5.6e-5 D^2 - 7.0e-7 D^3 + 2.2e-8 D^4), dt = theta -
 *                        theta0 in rad, D the same difference in degrees       k: kJ/mol/rad^2, theta0: rad
 *   MM3* pair            E = eps S(r) (184000 exp(-12 r/R) - 2.25 (R/r)^6) + ONE_4PI_EPS0 qq / r, S the
 *                        6-8 Angstrom switch (continuous,   R: nm, eps: kJ/mol, qq: e^2
 *                        its derivative is not); below r = R/2 the bracket is M (R/r)^12 of its
 *                        value there (Tinker's MM3 wall against the exp-6 collapse)
 *   MM3* stretch-bend    E = k (dra + drb) dtheta, dra = sa r_ij - r0a, drb = sb r_kj - r0b, dtheta =
 *                        theta_ijk - theta0 (j the centre)   k: kJ/mol/nm/rad, r0a, r0b: nm, theta0: rad
 *   MM3* bend-bend       E = k dtheta1 dtheta2, angles a-c-b and d-c-e at one centre c (sharing one outer
 *                        atom or none)                       k: kJ/mol/rad^2, theta01, theta02: rad
 *   MM3* torsion-stretch E = k (s r_jk - r0) (1 + cos 3 phi), phi the i-j-k-l dihedral   k: kJ/mol/nm, r0: nm
 * The distance scales s, sa, sb of the MM3* bond (whose dr is then s r - r0), stretch-bend and
 * torsion-stretch are per-term constants (default 1, not parameter slots): MacroModel's effective
 * length r' / f of a bond to a reduced hydrogen is the scale 1 / f.
 *   periodic torsion     E = k (1 + cos(n phi - phase))       k: kJ/mol, phase: rad, n >= 1
 *   OPLS torsion         E = sum_{m=1..4} V_m/2 (1 + (-1)^(m+1) cos(m phi))     V_m: kJ/mol
 *   Ryckaert-Bellemans   E = sum_{m=0..5} C_m cos(phi - pi)^m                   C_m: kJ/mol
 *   periodic improper    as periodic torsion (phi is the dihedral p1-p2-p3-p4)
 *   harmonic improper    E = k (phi - phi0)^2, phi - phi0 wrapped to [-pi, pi]  k: kJ/mol/rad^2
 *   Lennard-Jones        E = 4 eps ((sigma/r)^12 - (sigma/r)^6)                 sigma: nm, eps: kJ/mol
 *   Coulomb              E = ONE_4PI_EPS0 q_i q_j / r  (ONE_4PI_EPS0 = 138.935... kJ nm/mol/e^2)
 * Dihedrals follow the IUPAC sign convention used by OpenMM's PeriodicTorsionForce.
 *
 * Nonbonded pairs act between every two particles of the same molecule except excluded pairs;
 * particles of different molecules never interact, so one System can hold a whole training set
 * of isolated molecules. A "1-4 pair" is excluded from the plain sum and interacts instead with
 * its Coulomb term scaled by coulomb14Scale and its LJ term scaled by lj14Scale (OPLS default
 * 0.5 / 0.5). An "explicit pair" is excluded and interacts with its own charge product, sigma and
 * epsilon slots. There is no cutoff and no periodicity: these are isolated molecules.
 *
 * A slot index of -1 (NoSlot) means "this parameter is zero" wherever a slot is optional
 * (particle nonbonded parameters, OPLS V_m, RB C_m).
 *
 * Reduced particles (addReducedParticle, MacroModel's MM3* reduced hydrogens): a particle h with
 * partner p and factor f is seen by every term at x'_h = x_p + f (x_h - x_p). Everything the force
 * reports is the exact chain rule through that constant linear map x' = M x: forces M^T F',
 * Hessian blocks M^T H' M, contractions with M G M^T and M y; parameter derivatives and molecule
 * energies are those at x'.
 */

#include "openmm/Context.h"
#include "openmm/Force.h"
#include "openmm/Vec3.h"
#include "internal/windowsExportHessFit.h"
#include "HessianObjective.h"
#include <string>
#include <vector>

namespace HessFit {

class HessianForceImpl;
class HessianForceInternals;

/**
 * A molecular-mechanics force whose energy, forces, analytic Cartesian Hessian and analytic
 * parameter derivatives can be read from an OpenMM Context (see the top of this file for the
 * energy forms, the units and the parameter slot table).
 *
 * Every method that changes the force checks its arguments and throws HessianForceException
 * (an OpenMMException with a machine-readable code) naming the offending item: Index for an
 * out-of-range particle, slot, term or molecule, Value for a non-finite parameter or a bad
 * periodicity, Size for a wrong array length. Methods that read a Context throw NotInContext when
 * the force is not part of that Context's System.
 */
class OPENMM_EXPORT_HESSFIT HessianForce : public OpenMM::Force {
    friend class HessianForceInternals;
public:
    /** Slot index meaning "no parameter: the value is zero". */
    static constexpr int NoSlot = -1;

    /** How per-particle sigma and epsilon combine for a pair. Epsilon is always sqrt(eps_i eps_j). */
    enum CombiningRule {
        Geometric = 0,        /**< sigma_ij = sqrt(sigma_i sigma_j) (OPLS-AA) */
        LorentzBerthelot = 1  /**< sigma_ij = (sigma_i + sigma_j) / 2 (AMBER, OpenMM NonbondedForce) */
    };

    /** Term kinds, used to address a term in error messages and the C API. */
    enum TermKind {
        Bond = 0, UreyBradley, Angle, PeriodicTorsion, OPLSTorsion, RBTorsion,
        PeriodicImproper, HarmonicImproper, Exclusion, Pair14, ExplicitPair, MM3Bond, MM3Angle, MM3Pair,
        MM3StretchBend, MM3BendBend, MM3TorsionStretch, MM3SwitchedPair, HydrogenBond, NumTermKinds
    };
    /** The most particles a term joins (a bend-bend lists five: its angles' outer atoms and centre). */
    static constexpr int MaxTermParticles = 5;

    /**
     * Create an empty HessianForce: no parameters, particles or terms; the Geometric combining
     * rule and 1-4 scales of 0.5 (OPLS-AA).
     */
    HessianForce();

    // ---- parameter table -------------------------------------------------------------------
    /**
     * Append a slot to the parameter table.
     *
     * @param value  the slot's value, in the unit of whatever term uses it; must be finite
     * @return the index of the new slot
     */
    int addParameter(double value);
    /**
     * Get the number of slots in the parameter table.
     */
    int getNumParameters() const;
    /**
     * Get the value of one slot.
     *
     * @param slot  the index of the slot
     * @return the slot's value
     */
    double getParameter(int slot) const;
    /**
     * Set the value of one slot. Call updateParametersInContext() to push it into a Context.
     *
     * @param slot   the index of the slot
     * @param value  the new value; must be finite
     */
    void setParameter(int slot, double value);
    /**
     * Replace the whole parameter table. Call updateParametersInContext() to push it into a Context.
     *
     * @param values  the new values, one per slot (the same length as the table); all finite
     */
    void setParameters(const std::vector<double>& values);
    /**
     * Get the whole parameter table.
     *
     * @return the value of every slot, in slot order
     */
    const std::vector<double>& getParameters() const;

    // ---- particles and molecules ------------------------------------------------------------
    /**
     * Add a particle. The force must have exactly as many particles as the System.
     *
     * @param chargeSlot   the slot of its charge (e), or NoSlot for zero
     * @param sigmaSlot    the slot of its Lennard-Jones sigma (nm), or NoSlot for zero
     * @param epsilonSlot  the slot of its Lennard-Jones epsilon (kJ/mol), or NoSlot for zero
     * @return the index of the particle that was added
     */
    int addParticle(int chargeSlot, int sigmaSlot, int epsilonSlot);
    /**
     * Get the number of particles.
     */
    int getNumParticles() const;
    /**
     * Get the nonbonded parameter slots of a particle.
     *
     * @param index             the index of the particle
     * @param[out] chargeSlot   the slot of its charge (NoSlot: zero)
     * @param[out] sigmaSlot    the slot of its sigma (NoSlot: zero)
     * @param[out] epsilonSlot  the slot of its epsilon (NoSlot: zero)
     */
    void getParticleParameters(int index, int& chargeSlot, int& sigmaSlot, int& epsilonSlot) const;
    /**
     * Set the nonbonded parameter slots of a particle.
     *
     * @param index        the index of the particle
     * @param chargeSlot   the slot of its charge (e), or NoSlot for zero
     * @param sigmaSlot    the slot of its sigma (nm), or NoSlot for zero
     * @param epsilonSlot  the slot of its epsilon (kJ/mol), or NoSlot for zero
     */
    void setParticleParameters(int index, int chargeSlot, int sigmaSlot, int epsilonSlot);

    /**
     * Declare a molecule. If no molecule is ever added, all particles form one molecule; once any
     * molecule is added, every particle must belong to exactly one (checked when a Context is
     * created).
     *
     * @param particles  the particles it holds, in any order; that order is the order of its
     *                   Hessian block
     * @return the index of the molecule that was added
     */
    int addMolecule(const std::vector<int>& particles);
    /**
     * Get the number of molecules, counting the implicit all-particle molecule (1) when none was
     * added.
     */
    int getNumMolecules() const;
    /**
     * Get the particles of a molecule.
     *
     * @param index  the index of the molecule
     * @return its particles, in Hessian-block order
     */
    std::vector<int> getMoleculeParticles(int index) const;
    /**
     * Get whether molecules were declared explicitly with addMolecule().
     */
    bool hasExplicitMolecules() const;

    // ---- bonded terms -----------------------------------------------------------------------
    /**
     * Add a harmonic bond, E = k (r - r0)^2.
     *
     * @param p1      the index of the first particle
     * @param p2      the index of the second particle
     * @param kSlot   the slot of k (kJ/mol/nm^2)
     * @param r0Slot  the slot of r0 (nm)
     * @return the index of the bond that was added
     */
    int addBond(int p1, int p2, int kSlot, int r0Slot);
    /**
     * Get the particles and slots of a bond.
     *
     * @param index        the index of the bond
     * @param[out] p1      the index of the first particle
     * @param[out] p2      the index of the second particle
     * @param[out] kSlot   the slot of k
     * @param[out] r0Slot  the slot of r0
     */
    void getBondParameters(int index, int& p1, int& p2, int& kSlot, int& r0Slot) const;
    /**
     * Set the particles and slots of a bond.
     *
     * @param index   the index of the bond
     * @param p1      the index of the first particle
     * @param p2      the index of the second particle
     * @param kSlot   the slot of k (kJ/mol/nm^2)
     * @param r0Slot  the slot of r0 (nm)
     */
    void setBondParameters(int index, int p1, int p2, int kSlot, int r0Slot);
    /**
     * Get the number of bonds.
     */
    int getNumBonds() const;

    /**
     * Add a Urey-Bradley 1-3 spring, E = k (r13 - r0)^2.
     *
     * @param p1      the index of the first particle
     * @param p3      the index of the third particle (the angle's far end)
     * @param kSlot   the slot of k (kJ/mol/nm^2)
     * @param r0Slot  the slot of r0 (nm)
     * @return the index of the term that was added
     */
    int addUreyBradley(int p1, int p3, int kSlot, int r0Slot);
    /**
     * Get the particles and slots of a Urey-Bradley term.
     *
     * @param index        the index of the term
     * @param[out] p1      the index of the first particle
     * @param[out] p3      the index of the third particle
     * @param[out] kSlot   the slot of k
     * @param[out] r0Slot  the slot of r0
     */
    void getUreyBradleyParameters(int index, int& p1, int& p3, int& kSlot, int& r0Slot) const;
    /**
     * Set the particles and slots of a Urey-Bradley term.
     *
     * @param index   the index of the term
     * @param p1      the index of the first particle
     * @param p3      the index of the third particle
     * @param kSlot   the slot of k (kJ/mol/nm^2)
     * @param r0Slot  the slot of r0 (nm)
     */
    void setUreyBradleyParameters(int index, int p1, int p3, int kSlot, int r0Slot);
    /**
     * Get the number of Urey-Bradley terms.
     */
    int getNumUreyBradleys() const;

    /**
     * Add a harmonic angle, E = k (theta - theta0)^2, theta the p1-p2-p3 angle.
     *
     * @param p1          the index of the first particle
     * @param p2          the index of the second (central) particle
     * @param p3          the index of the third particle
     * @param kSlot       the slot of k (kJ/mol/rad^2)
     * @param theta0Slot  the slot of theta0 (rad)
     * @return the index of the angle that was added
     */
    int addAngle(int p1, int p2, int p3, int kSlot, int theta0Slot);
    /**
     * Get the particles and slots of an angle.
     *
     * @param index            the index of the angle
     * @param[out] p1          the index of the first particle
     * @param[out] p2          the index of the central particle
     * @param[out] p3          the index of the third particle
     * @param[out] kSlot       the slot of k
     * @param[out] theta0Slot  the slot of theta0
     */
    void getAngleParameters(int index, int& p1, int& p2, int& p3, int& kSlot, int& theta0Slot) const;
    /**
     * Set the particles and slots of an angle.
     *
     * @param index       the index of the angle
     * @param p1          the index of the first particle
     * @param p2          the index of the central particle
     * @param p3          the index of the third particle
     * @param kSlot       the slot of k (kJ/mol/rad^2)
     * @param theta0Slot  the slot of theta0 (rad)
     */
    void setAngleParameters(int index, int p1, int p2, int p3, int kSlot, int theta0Slot);
    /**
     * Get the number of angles.
     */
    int getNumAngles() const;

    /**
     * Add an MM3* anharmonic bond (MacroModel's MM3* stretch),
     * E = k dr^2 (1 - 2.55 dr + 3.793125 dr^2) with dr = s r - r0 in Angstrom in the polynomial
     * (E = k d^2 (1 - 25.5 d + 379.3125 d^2) with d = s r - r0 in nm).
     *
     * @param p1             the index of the first particle
     * @param p2             the index of the second particle
     * @param kSlot          the slot of k (kJ/mol/nm^2)
     * @param r0Slot         the slot of r0 (nm)
     * @param distanceScale  s, a constant of the term (finite, > 0; MacroModel's 1/f for a reduced hydrogen)
     * @return the index of the MM3* bond that was added
     */
    int addMM3Bond(int p1, int p2, int kSlot, int r0Slot, double distanceScale = 1.0);
    /**
     * Get the particles and slots of an MM3* bond.
     *
     * @param index        the index of the MM3* bond
     * @param[out] p1      the index of the first particle
     * @param[out] p2      the index of the second particle
     * @param[out] kSlot   the slot of k
     * @param[out] r0Slot  the slot of r0
     */
    void getMM3BondParameters(int index, int& p1, int& p2, int& kSlot, int& r0Slot) const;
    /**
     * Get the particles, slots and distance scale of an MM3* bond.
     *
     * @param index               the index of the MM3* bond
     * @param[out] p1             the index of the first particle
     * @param[out] p2             the index of the second particle
     * @param[out] kSlot          the slot of k
     * @param[out] r0Slot         the slot of r0
     * @param[out] distanceScale  s
     */
    void getMM3BondParameters(int index, int& p1, int& p2, int& kSlot, int& r0Slot, double& distanceScale) const;
    /**
     * Set the particles, slots and distance scale of an MM3* bond.
     *
     * @param index          the index of the MM3* bond
     * @param p1             the index of the first particle
     * @param p2             the index of the second particle
     * @param kSlot          the slot of k (kJ/mol/nm^2)
     * @param r0Slot         the slot of r0 (nm)
     * @param distanceScale  s (finite, > 0)
     */
    void setMM3BondParameters(int index, int p1, int p2, int kSlot, int r0Slot, double distanceScale = 1.0);
    /**
     * Get the number of MM3* bonds.
     */
    int getNumMM3Bonds() const;

    /**
     * Add an MM3* anharmonic angle (MacroModel's MM3* bend),
     * E = k dt^2 (1 - 0.014 D + 5.6e-5 D^2 - 7.0e-7 D^3 + 2.2e-8 D^4), theta the p1-p2-p3 angle,
     * dt = theta - theta0 in rad and D the same difference in degrees.
     *
     * @param p1          the index of the first particle
     * @param p2          the index of the second (central) particle
     * @param p3          the index of the third particle
     * @param kSlot       the slot of k (kJ/mol/rad^2)
     * @param theta0Slot  the slot of theta0 (rad)
     * @return the index of the MM3* angle that was added
     */
    int addMM3Angle(int p1, int p2, int p3, int kSlot, int theta0Slot);
    /**
     * Get the particles and slots of an MM3* angle.
     *
     * @param index            the index of the MM3* angle
     * @param[out] p1          the index of the first particle
     * @param[out] p2          the index of the central particle
     * @param[out] p3          the index of the third particle
     * @param[out] kSlot       the slot of k
     * @param[out] theta0Slot  the slot of theta0
     */
    void getMM3AngleParameters(int index, int& p1, int& p2, int& p3, int& kSlot, int& theta0Slot) const;
    /**
     * Set the particles and slots of an MM3* angle.
     *
     * @param index       the index of the MM3* angle
     * @param p1          the index of the first particle
     * @param p2          the index of the central particle
     * @param p3          the index of the third particle
     * @param kSlot       the slot of k (kJ/mol/rad^2)
     * @param theta0Slot  the slot of theta0 (rad)
     */
    void setMM3AngleParameters(int index, int p1, int p2, int p3, int kSlot, int theta0Slot);
    /**
     * Get the number of MM3* angles.
     */
    int getNumMM3Angles() const;

    /**
     * Add an MM3* stretch-bend (MacroModel's), E = k (dra + drb) dtheta with dra = sa r_12 - r0a,
     * drb = sb r_32 - r0b and dtheta = theta - theta0, theta the p1-p2-p3 angle.
     *
     * @param p1          the index of the first particle
     * @param p2          the index of the second (central) particle
     * @param p3          the index of the third particle
     * @param kSlot       the slot of k (kJ/mol/nm/rad)
     * @param r0aSlot     the slot of r0a, the p1-p2 bond's reference length (nm)
     * @param r0bSlot     the slot of r0b, the p3-p2 bond's reference length (nm)
     * @param theta0Slot  the slot of theta0 (rad)
     * @param scaleA      sa, the p1-p2 bond's distance scale (finite, > 0)
     * @param scaleB      sb, the p3-p2 bond's distance scale (finite, > 0)
     * @return the index of the MM3* stretch-bend that was added
     */
    int addMM3StretchBend(int p1, int p2, int p3, int kSlot, int r0aSlot, int r0bSlot, int theta0Slot,
                          double scaleA = 1.0, double scaleB = 1.0);
    /**
     * Get the particles, slots and distance scales of an MM3* stretch-bend.
     *
     * @param index            the index of the MM3* stretch-bend
     * @param[out] p1          the index of the first particle
     * @param[out] p2          the index of the central particle
     * @param[out] p3          the index of the third particle
     * @param[out] kSlot       the slot of k
     * @param[out] r0aSlot     the slot of r0a
     * @param[out] r0bSlot     the slot of r0b
     * @param[out] theta0Slot  the slot of theta0
     * @param[out] scaleA      sa
     * @param[out] scaleB      sb
     */
    void getMM3StretchBendParameters(int index, int& p1, int& p2, int& p3, int& kSlot, int& r0aSlot, int& r0bSlot,
                                     int& theta0Slot, double& scaleA, double& scaleB) const;
    /**
     * Set the particles, slots and distance scales of an MM3* stretch-bend.
     *
     * @param index       the index of the MM3* stretch-bend
     * @param p1          the index of the first particle
     * @param p2          the index of the central particle
     * @param p3          the index of the third particle
     * @param kSlot       the slot of k (kJ/mol/nm/rad)
     * @param r0aSlot     the slot of r0a (nm)
     * @param r0bSlot     the slot of r0b (nm)
     * @param theta0Slot  the slot of theta0 (rad)
     * @param scaleA      sa (finite, > 0)
     * @param scaleB      sb (finite, > 0)
     */
    void setMM3StretchBendParameters(int index, int p1, int p2, int p3, int kSlot, int r0aSlot, int r0bSlot,
                                     int theta0Slot, double scaleA = 1.0, double scaleB = 1.0);
    /**
     * Get the number of MM3* stretch-bends.
     */
    int getNumMM3StretchBends() const;

    /**
     * Add an MM3* bend-bend (MacroModel's), E = k (theta1 - theta01) (theta2 - theta02), theta1 the
     * p1-centre-p3 angle and theta2 the p4-centre-p5 angle. The two angles share the centre and at
     * most one outer particle (p4 or p5 may be p1 or p3), so the term joins 4 or 5 particles.
     *
     * @param p1           the first outer particle of angle 1
     * @param centre       the central particle of both angles
     * @param p3           the second outer particle of angle 1
     * @param p4           the first outer particle of angle 2
     * @param p5           the second outer particle of angle 2
     * @param kSlot        the slot of k (kJ/mol/rad^2)
     * @param theta01Slot  the slot of theta01 (rad)
     * @param theta02Slot  the slot of theta02 (rad)
     * @return the index of the MM3* bend-bend that was added
     */
    int addMM3BendBend(int p1, int centre, int p3, int p4, int p5, int kSlot, int theta01Slot, int theta02Slot);
    /**
     * Get the particles and slots of an MM3* bend-bend.
     *
     * @param index             the index of the MM3* bend-bend
     * @param[out] p1           the first outer particle of angle 1
     * @param[out] centre       the central particle
     * @param[out] p3           the second outer particle of angle 1
     * @param[out] p4           the first outer particle of angle 2
     * @param[out] p5           the second outer particle of angle 2
     * @param[out] kSlot        the slot of k
     * @param[out] theta01Slot  the slot of theta01
     * @param[out] theta02Slot  the slot of theta02
     */
    void getMM3BendBendParameters(int index, int& p1, int& centre, int& p3, int& p4, int& p5, int& kSlot,
                                  int& theta01Slot, int& theta02Slot) const;
    /**
     * Set the particles and slots of an MM3* bend-bend.
     *
     * @param index        the index of the MM3* bend-bend
     * @param p1           the first outer particle of angle 1
     * @param centre       the central particle
     * @param p3           the second outer particle of angle 1
     * @param p4           the first outer particle of angle 2
     * @param p5           the second outer particle of angle 2
     * @param kSlot        the slot of k (kJ/mol/rad^2)
     * @param theta01Slot  the slot of theta01 (rad)
     * @param theta02Slot  the slot of theta02 (rad)
     */
    void setMM3BendBendParameters(int index, int p1, int centre, int p3, int p4, int p5, int kSlot, int theta01Slot,
                                  int theta02Slot);
    /**
     * Get the number of MM3* bend-bends.
     */
    int getNumMM3BendBends() const;

    /**
     * Add an MM3* torsion-stretch (MacroModel's), E = k (s r_23 - r0) (1 + cos 3 phi), phi the
     * p1-p2-p3-p4 dihedral and r_23 the length of its central bond.
     *
     * @param p1             the index of the first particle
     * @param p2             the index of the second particle
     * @param p3             the index of the third particle
     * @param p4             the index of the fourth particle
     * @param kSlot          the slot of k (kJ/mol/nm)
     * @param r0Slot         the slot of r0 (nm)
     * @param distanceScale  s, the central bond's distance scale (finite, > 0)
     * @return the index of the MM3* torsion-stretch that was added
     */
    int addMM3TorsionStretch(int p1, int p2, int p3, int p4, int kSlot, int r0Slot, double distanceScale = 1.0);
    /**
     * Get the particles, slots and distance scale of an MM3* torsion-stretch.
     *
     * @param index               the index of the MM3* torsion-stretch
     * @param[out] p1             the index of the first particle
     * @param[out] p2             the index of the second particle
     * @param[out] p3             the index of the third particle
     * @param[out] p4             the index of the fourth particle
     * @param[out] kSlot          the slot of k
     * @param[out] r0Slot         the slot of r0
     * @param[out] distanceScale  s
     */
    void getMM3TorsionStretchParameters(int index, int& p1, int& p2, int& p3, int& p4, int& kSlot, int& r0Slot,
                                        double& distanceScale) const;
    /**
     * Set the particles, slots and distance scale of an MM3* torsion-stretch.
     *
     * @param index          the index of the MM3* torsion-stretch
     * @param p1             the index of the first particle
     * @param p2             the index of the second particle
     * @param p3             the index of the third particle
     * @param p4             the index of the fourth particle
     * @param kSlot          the slot of k (kJ/mol/nm)
     * @param r0Slot         the slot of r0 (nm)
     * @param distanceScale  s (finite, > 0)
     */
    void setMM3TorsionStretchParameters(int index, int p1, int p2, int p3, int p4, int kSlot, int r0Slot,
                                        double distanceScale = 1.0);
    /**
     * Get the number of MM3* torsion-stretches.
     */
    int getNumMM3TorsionStretches() const;

    /**
     * Add a periodic torsion, E = k (1 + cos(n phi - phase)), phi the p1-p2-p3-p4 dihedral.
     *
     * @param p1           the index of the first particle
     * @param p2           the index of the second particle
     * @param p3           the index of the third particle
     * @param p4           the index of the fourth particle
     * @param periodicity  n, >= 1
     * @param kSlot        the slot of k (kJ/mol)
     * @param phaseSlot    the slot of the phase (rad)
     * @return the index of the torsion that was added
     */
    int addPeriodicTorsion(int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    /**
     * Get the particles, periodicity and slots of a periodic torsion.
     *
     * @param index             the index of the torsion
     * @param[out] p1           the index of the first particle
     * @param[out] p2           the index of the second particle
     * @param[out] p3           the index of the third particle
     * @param[out] p4           the index of the fourth particle
     * @param[out] periodicity  n
     * @param[out] kSlot        the slot of k
     * @param[out] phaseSlot    the slot of the phase
     */
    void getPeriodicTorsionParameters(int index, int& p1, int& p2, int& p3, int& p4, int& periodicity, int& kSlot, int& phaseSlot) const;
    /**
     * Set the particles, periodicity and slots of a periodic torsion.
     *
     * @param index        the index of the torsion
     * @param p1           the index of the first particle
     * @param p2           the index of the second particle
     * @param p3           the index of the third particle
     * @param p4           the index of the fourth particle
     * @param periodicity  n, >= 1
     * @param kSlot        the slot of k (kJ/mol)
     * @param phaseSlot    the slot of the phase (rad)
     */
    void setPeriodicTorsionParameters(int index, int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    /**
     * Get the number of periodic torsions.
     */
    int getNumPeriodicTorsions() const;

    /**
     * Add an OPLS-AA torsion,
     * E = V1/2 (1+cos phi) + V2/2 (1-cos 2phi) + V3/2 (1+cos 3phi) + V4/2 (1-cos 4phi).
     *
     * @param p1      the index of the first particle
     * @param p2      the index of the second particle
     * @param p3      the index of the third particle
     * @param p4      the index of the fourth particle
     * @param vSlots  4 slots: vSlots[m-1] holds V_m (kJ/mol), or NoSlot for zero
     * @return the index of the torsion that was added
     */
    int addOPLSTorsion(int p1, int p2, int p3, int p4, const std::vector<int>& vSlots);
    /**
     * Get the particles and slots of an OPLS torsion.
     *
     * @param index        the index of the torsion
     * @param[out] p1      the index of the first particle
     * @param[out] p2      the index of the second particle
     * @param[out] p3      the index of the third particle
     * @param[out] p4      the index of the fourth particle
     * @param[out] vSlots  the 4 slots of V1..V4 (NoSlot: zero)
     */
    void getOPLSTorsionParameters(int index, int& p1, int& p2, int& p3, int& p4, std::vector<int>& vSlots) const;
    /**
     * Set the particles and slots of an OPLS torsion.
     *
     * @param index   the index of the torsion
     * @param p1      the index of the first particle
     * @param p2      the index of the second particle
     * @param p3      the index of the third particle
     * @param p4      the index of the fourth particle
     * @param vSlots  the 4 slots of V1..V4 (kJ/mol), each may be NoSlot
     */
    void setOPLSTorsionParameters(int index, int p1, int p2, int p3, int p4, const std::vector<int>& vSlots);
    /**
     * Get the number of OPLS torsions.
     */
    int getNumOPLSTorsions() const;

    /**
     * Add a Ryckaert-Bellemans torsion (as OpenMM's RBTorsionForce),
     * E = sum_{m=0..5} C_m cos(phi - pi)^m.
     *
     * @param p1      the index of the first particle
     * @param p2      the index of the second particle
     * @param p3      the index of the third particle
     * @param p4      the index of the fourth particle
     * @param cSlots  6 slots: cSlots[m] holds C_m (kJ/mol), or NoSlot for zero
     * @return the index of the torsion that was added
     */
    int addRBTorsion(int p1, int p2, int p3, int p4, const std::vector<int>& cSlots);
    /**
     * Get the particles and slots of a Ryckaert-Bellemans torsion.
     *
     * @param index        the index of the torsion
     * @param[out] p1      the index of the first particle
     * @param[out] p2      the index of the second particle
     * @param[out] p3      the index of the third particle
     * @param[out] p4      the index of the fourth particle
     * @param[out] cSlots  the 6 slots of C0..C5 (NoSlot: zero)
     */
    void getRBTorsionParameters(int index, int& p1, int& p2, int& p3, int& p4, std::vector<int>& cSlots) const;
    /**
     * Set the particles and slots of a Ryckaert-Bellemans torsion.
     *
     * @param index   the index of the torsion
     * @param p1      the index of the first particle
     * @param p2      the index of the second particle
     * @param p3      the index of the third particle
     * @param p4      the index of the fourth particle
     * @param cSlots  the 6 slots of C0..C5 (kJ/mol), each may be NoSlot
     */
    void setRBTorsionParameters(int index, int p1, int p2, int p3, int p4, const std::vector<int>& cSlots);
    /**
     * Get the number of Ryckaert-Bellemans torsions.
     */
    int getNumRBTorsions() const;

    /**
     * Add a periodic improper, E = k (1 + cos(n phi - phase)) on the dihedral p1-p2-p3-p4.
     *
     * @param p1           the index of the first particle
     * @param p2           the index of the second particle
     * @param p3           the index of the third particle
     * @param p4           the index of the fourth particle
     * @param periodicity  n, >= 1
     * @param kSlot        the slot of k (kJ/mol)
     * @param phaseSlot    the slot of the phase (rad)
     * @return the index of the improper that was added
     */
    int addPeriodicImproper(int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    /**
     * Get the particles, periodicity and slots of a periodic improper.
     *
     * @param index             the index of the improper
     * @param[out] p1           the index of the first particle
     * @param[out] p2           the index of the second particle
     * @param[out] p3           the index of the third particle
     * @param[out] p4           the index of the fourth particle
     * @param[out] periodicity  n
     * @param[out] kSlot        the slot of k
     * @param[out] phaseSlot    the slot of the phase
     */
    void getPeriodicImproperParameters(int index, int& p1, int& p2, int& p3, int& p4, int& periodicity, int& kSlot, int& phaseSlot) const;
    /**
     * Set the particles, periodicity and slots of a periodic improper.
     *
     * @param index        the index of the improper
     * @param p1           the index of the first particle
     * @param p2           the index of the second particle
     * @param p3           the index of the third particle
     * @param p4           the index of the fourth particle
     * @param periodicity  n, >= 1
     * @param kSlot        the slot of k (kJ/mol)
     * @param phaseSlot    the slot of the phase (rad)
     */
    void setPeriodicImproperParameters(int index, int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    /**
     * Get the number of periodic impropers.
     */
    int getNumPeriodicImpropers() const;

    /**
     * Add a harmonic improper, E = k (phi - phi0)^2 with phi - phi0 wrapped to [-pi, pi], phi the
     * p1-p2-p3-p4 dihedral.
     *
     * @param p1        the index of the first particle
     * @param p2        the index of the second particle
     * @param p3        the index of the third particle
     * @param p4        the index of the fourth particle
     * @param kSlot     the slot of k (kJ/mol/rad^2)
     * @param phi0Slot  the slot of phi0 (rad)
     * @return the index of the improper that was added
     */
    int addHarmonicImproper(int p1, int p2, int p3, int p4, int kSlot, int phi0Slot);
    /**
     * Get the particles and slots of a harmonic improper.
     *
     * @param index          the index of the improper
     * @param[out] p1        the index of the first particle
     * @param[out] p2        the index of the second particle
     * @param[out] p3        the index of the third particle
     * @param[out] p4        the index of the fourth particle
     * @param[out] kSlot     the slot of k
     * @param[out] phi0Slot  the slot of phi0
     */
    void getHarmonicImproperParameters(int index, int& p1, int& p2, int& p3, int& p4, int& kSlot, int& phi0Slot) const;
    /**
     * Set the particles and slots of a harmonic improper.
     *
     * @param index     the index of the improper
     * @param p1        the index of the first particle
     * @param p2        the index of the second particle
     * @param p3        the index of the third particle
     * @param p4        the index of the fourth particle
     * @param kSlot     the slot of k (kJ/mol/rad^2)
     * @param phi0Slot  the slot of phi0 (rad)
     */
    void setHarmonicImproperParameters(int index, int p1, int p2, int p3, int p4, int kSlot, int phi0Slot);
    /**
     * Get the number of harmonic impropers.
     */
    int getNumHarmonicImpropers() const;

    // ---- nonbonded pairs --------------------------------------------------------------------
    /**
     * Set how per-particle sigmas combine for a pair (epsilons always combine geometrically).
     *
     * @param rule  Geometric or LorentzBerthelot
     */
    void setCombiningRule(CombiningRule rule);
    /**
     * Get how per-particle sigmas combine for a pair.
     */
    CombiningRule getCombiningRule() const;
    /**
     * Set the factor that scales the Coulomb energy of 1-4 pairs (default 0.5, OPLS-AA).
     *
     * @param scale  the factor; must be finite
     */
    void setCoulomb14Scale(double scale);
    /**
     * Get the factor that scales the Coulomb energy of 1-4 pairs.
     */
    double getCoulomb14Scale() const;
    /**
     * Set the factor that scales the Lennard-Jones energy of 1-4 pairs (default 0.5, OPLS-AA).
     *
     * @param scale  the factor; must be finite
     */
    void setLJ14Scale(double scale);
    /**
     * Get the factor that scales the Lennard-Jones energy of 1-4 pairs.
     */
    double getLJ14Scale() const;

    /**
     * Exclude a pair from the nonbonded sum (1-2 and 1-3 neighbours). A pair may be excluded, a
     * 1-4 pair or an explicit pair only once (checked when a Context is created).
     *
     * @param p1  the index of the first particle
     * @param p2  the index of the second particle
     * @return the index of the exclusion that was added
     */
    int addExclusion(int p1, int p2);
    /**
     * Get the particles of an exclusion.
     *
     * @param index    the index of the exclusion
     * @param[out] p1  the index of the first particle
     * @param[out] p2  the index of the second particle
     */
    void getExclusionParticles(int index, int& p1, int& p2) const;
    /**
     * Get the number of exclusions.
     */
    int getNumExclusions() const;
    /**
     * Add a 1-4 pair: excluded from the plain sum, interacting instead with the combined particle
     * parameters scaled by the 1-4 scales.
     *
     * @param p1  the index of the first particle
     * @param p2  the index of the second particle
     * @return the index of the pair that was added
     */
    int addPair14(int p1, int p2);
    /**
     * Get the particles of a 1-4 pair.
     *
     * @param index    the index of the pair
     * @param[out] p1  the index of the first particle
     * @param[out] p2  the index of the second particle
     */
    void getPair14Particles(int index, int& p1, int& p2) const;
    /**
     * Get the number of 1-4 pairs.
     */
    int getNumPairs14() const;
    /**
     * Add an explicit pair (like a NonbondedForce exception): excluded from the plain sum,
     * interacting with its own charge product, sigma and epsilon.
     *
     * @param p1              the index of the first particle
     * @param p2              the index of the second particle
     * @param chargeProdSlot  the slot of the charge product (e^2), or NoSlot for zero
     * @param sigmaSlot       the slot of sigma (nm), or NoSlot for zero
     * @param epsilonSlot     the slot of epsilon (kJ/mol), or NoSlot for zero
     * @return the index of the pair that was added
     */
    int addExplicitPair(int p1, int p2, int chargeProdSlot, int sigmaSlot, int epsilonSlot);
    /**
     * Get the particles and slots of an explicit pair.
     *
     * @param index                the index of the pair
     * @param[out] p1              the index of the first particle
     * @param[out] p2              the index of the second particle
     * @param[out] chargeProdSlot  the slot of the charge product (NoSlot: zero)
     * @param[out] sigmaSlot       the slot of sigma (NoSlot: zero)
     * @param[out] epsilonSlot     the slot of epsilon (NoSlot: zero)
     */
    void getExplicitPairParameters(int index, int& p1, int& p2, int& chargeProdSlot, int& sigmaSlot, int& epsilonSlot) const;
    /**
     * Set the particles and slots of an explicit pair.
     *
     * @param index           the index of the pair
     * @param p1              the index of the first particle
     * @param p2              the index of the second particle
     * @param chargeProdSlot  the slot of the charge product (e^2), or NoSlot for zero
     * @param sigmaSlot       the slot of sigma (nm), or NoSlot for zero
     * @param epsilonSlot     the slot of epsilon (kJ/mol), or NoSlot for zero
     */
    void setExplicitPairParameters(int index, int p1, int p2, int chargeProdSlot, int sigmaSlot, int epsilonSlot);
    /**
     * Get the number of explicit pairs.
     */
    int getNumExplicitPairs() const;
    /**
     * Add an MM3* pair (MacroModel's MM3* van der Waals and charge pair; like an explicit pair,
     * excluded from the plain sum), r the p1-p2 distance:
     * E = eps S(r) (184000 exp(-12 r / R) - 2.25 (R / r)^6) + ONE_4PI_EPS0 qq / r, with MacroModel's
     * 6-8 Angstrom switch S(r) = 1 (r <= 0.6 nm), (0.8^2 - r^2) / (0.8^2 - 0.6^2) (0.6 < r < 0.8 nm),
     * 0 (r >= 0.8 nm). S is continuous with its first derivative, not its second (the Hessian
     * jumps at 0.6 and 0.8 nm). Below r = R/2 the bracket is M (R / r)^12, M = (184000 exp(-6) -
     * 2.25 2^6) / 2^12 (its value at R/2; the force jumps there): Tinker's MM3 rule, a wall where the
     * exp-6 form would turn over near 0.28 R and fall without bound. The Coulomb part has no cutoff;
     * 1-4 scaling is the caller's.
     *
     * @param p1              the index of the first particle
     * @param p2              the index of the second particle
     * @param radiusSlot      the slot of R (nm, the pair's R*_i + R*_j; must be > 0)
     * @param epsilonSlot     the slot of eps (kJ/mol, the pair's sqrt(eps_i eps_j))
     * @param chargeProdSlot  the slot of the charge product qq (e^2)
     * @return the index of the MM3* pair that was added
     */
    int addMM3Pair(int p1, int p2, int radiusSlot, int epsilonSlot, int chargeProdSlot);
    /**
     * Get the particles and slots of an MM3* pair.
     *
     * @param index                the index of the MM3* pair
     * @param[out] p1              the index of the first particle
     * @param[out] p2              the index of the second particle
     * @param[out] radiusSlot      the slot of R
     * @param[out] epsilonSlot     the slot of eps
     * @param[out] chargeProdSlot  the slot of the charge product
     */
    void getMM3PairParameters(int index, int& p1, int& p2, int& radiusSlot, int& epsilonSlot, int& chargeProdSlot) const;
    /**
     * Set the particles and slots of an MM3* pair.
     *
     * @param index           the index of the MM3* pair
     * @param p1              the index of the first particle
     * @param p2              the index of the second particle
     * @param radiusSlot      the slot of R (nm; must be > 0)
     * @param epsilonSlot     the slot of eps (kJ/mol)
     * @param chargeProdSlot  the slot of the charge product qq (e^2)
     */
    void setMM3PairParameters(int index, int p1, int p2, int radiusSlot, int epsilonSlot, int chargeProdSlot);
    /**
     * Get the number of MM3* pairs.
     */
    int getNumMM3Pairs() const;
    /**
     * Add an MM3* pair whose 6-8 Angstrom switch is taken on another distance (MacroModel's MM3*,
     * which switches on the TRUE distance of two atoms while the pair itself acts on the reduced
     * hydrogens). Like an MM3* pair it is excluded from the plain sum; with r the p1-p2 distance
     * and r_s = |y_1 - y_2|, y_k = x_anchor_k + s_k (x_p_k - x_anchor_k):
     * E = eps S(r_s) (184000 exp(-12 r / R) - 2.25 (R / r)^6) + ONE_4PI_EPS0 qq / r, S as in
     * addMM3Pair. For a particle that is not reduced, anchor = the particle itself (y = its
     * position, any s); for a reduced particle (addReducedParticle, factor f, partner p), anchor = p
     * and s = 1 / f make y its true position, the distance MacroModel switches on. With r_s <= 0.6
     * nm it equals addMM3Pair's term exactly, beyond 0.8 nm only the Coulomb part is left; between,
     * S depends on the anchors too (forces and Hessian on all four particles).
     *
     * @param p1              the index of the first particle
     * @param p2              the index of the second particle
     * @param anchor1         the anchor of the first switch point (p1, or the partner of a reduced p1)
     * @param anchor2         the anchor of the second switch point
     * @param radiusSlot      the slot of R (nm, the pair's R*_i + R*_j; must be > 0)
     * @param epsilonSlot     the slot of eps (kJ/mol)
     * @param chargeProdSlot  the slot of the charge product qq (e^2)
     * @param switchScale1    s_1 (finite, > 0; 1 / f for a reduced p1)
     * @param switchScale2    s_2 (finite, > 0)
     * @return the index of the MM3* switched pair that was added
     */
    int addMM3SwitchedPair(int p1, int p2, int anchor1, int anchor2, int radiusSlot, int epsilonSlot,
                           int chargeProdSlot, double switchScale1 = 1.0, double switchScale2 = 1.0);
    /**
     * Get the particles, slots and switch scales of an MM3* switched pair.
     *
     * @param index               the index of the MM3* switched pair
     * @param[out] p1             the index of the first particle
     * @param[out] p2             the index of the second particle
     * @param[out] anchor1        the anchor of the first switch point
     * @param[out] anchor2        the anchor of the second switch point
     * @param[out] radiusSlot     the slot of R
     * @param[out] epsilonSlot    the slot of eps
     * @param[out] chargeProdSlot the slot of the charge product
     * @param[out] switchScale1   s_1
     * @param[out] switchScale2   s_2
     */
    void getMM3SwitchedPairParameters(int index, int& p1, int& p2, int& anchor1, int& anchor2, int& radiusSlot,
                                      int& epsilonSlot, int& chargeProdSlot, double& switchScale1,
                                      double& switchScale2) const;
    /**
     * Set the particles, slots and switch scales of an MM3* switched pair.
     *
     * @param index           the index of the MM3* switched pair
     * @param p1              the index of the first particle
     * @param p2              the index of the second particle
     * @param anchor1         the anchor of the first switch point
     * @param anchor2         the anchor of the second switch point
     * @param radiusSlot      the slot of R (nm; must be > 0)
     * @param epsilonSlot     the slot of eps (kJ/mol)
     * @param chargeProdSlot  the slot of the charge product qq (e^2)
     * @param switchScale1    s_1 (finite, > 0)
     * @param switchScale2    s_2 (finite, > 0)
     */
    void setMM3SwitchedPairParameters(int index, int p1, int p2, int anchor1, int anchor2, int radiusSlot,
                                      int epsilonSlot, int chargeProdSlot, double switchScale1 = 1.0,
                                      double switchScale2 = 1.0);
    /**
     * Get the number of MM3* switched pairs.
     */
    int getNumMM3SwitchedPairs() const;
    /**
     * Add a 10-12 hydrogen bond (MacroModel's angle-independent hydrogen bond, AMBER 1984's form),
     * r the p1-p2 distance: E = C / r^12 - D / r^10. It is added to whatever else acts on the pair
     * (it is not a nonbonded pair: the plain sum and any MM3* pair of p1, p2 stay); no cutoff.
     * A .fld's code-7 line with columns C', D' (kcal/mol A^12 / 100, kcal/mol A^10 / 100) gives
     * C = 418.4 C' * 1e-12 kJ/mol nm^12 and D = 418.4 D' * 1e-10 kJ/mol nm^10.
     *
     * @param p1     the index of the first particle (the hydrogen)
     * @param p2     the index of the second particle (the acceptor)
     * @param cSlot  the slot of C (kJ/mol nm^12)
     * @param dSlot  the slot of D (kJ/mol nm^10)
     * @return the index of the hydrogen bond that was added
     */
    int addHydrogenBond(int p1, int p2, int cSlot, int dSlot);
    /**
     * Get the particles and slots of a 10-12 hydrogen bond.
     *
     * @param index       the index of the hydrogen bond
     * @param[out] p1     the index of the first particle
     * @param[out] p2     the index of the second particle
     * @param[out] cSlot  the slot of C
     * @param[out] dSlot  the slot of D
     */
    void getHydrogenBondParameters(int index, int& p1, int& p2, int& cSlot, int& dSlot) const;
    /**
     * Set the particles and slots of a 10-12 hydrogen bond.
     *
     * @param index  the index of the hydrogen bond
     * @param p1     the index of the first particle
     * @param p2     the index of the second particle
     * @param cSlot  the slot of C (kJ/mol nm^12)
     * @param dSlot  the slot of D (kJ/mol nm^10)
     */
    void setHydrogenBondParameters(int index, int p1, int p2, int cSlot, int dSlot);
    /**
     * Get the number of 10-12 hydrogen bonds.
     */
    int getNumHydrogenBonds() const;
    /**
     * Exclude the 1-2 and 1-3 pairs of a bond graph and add its 1-4 pairs (each pair once, the
     * nearest relation wins, so pairs in rings closer than 1-4 are never 1-4).
     *
     * @param bonds  the bonds, as pairs of particle indices
     */
    void createExclusionsFromBonds(const std::vector<std::pair<int, int> >& bonds);

    // ---- reduced particles (MacroModel's reduced hydrogens) ----------------------------------
    /**
     * Reduce a particle towards a partner: every term of the force (the listed terms and the plain
     * nonbonded pairs) is evaluated at positions x' where
     *     x'_particle = x_partner + factor (x_particle - x_partner)
     * and every other particle is unchanged (MacroModel's MM3* moves a hydrogen towards the atom it
     * is bonded to, factor 0.923; the partner need not be bonded to it in this force). The map
     * x' = M x is linear and constant, so everything the force reports is exact for E(x) = E'(M x):
     * forces M^T F', Hessian blocks M^T H' M, parameter derivatives and molecule energies those of
     * E' at x', and the contractions are those of E' with the adjoint M G M^T and the vector M y.
     * Checked here: particle and partner >= 0 and distinct, factor finite and > 0 (1 changes
     * nothing); when a Context is created: both in range and in one molecule, a particle reduced at
     * most once, a partner not reduced itself (HessianForceException naming the reduced particle).
     *
     * @param particle  the index of the particle that moves
     * @param partner   the index of the particle it moves towards
     * @param factor    the fraction of the partner-particle vector kept (> 0)
     * @return the index of the reduced particle that was added
     */
    int addReducedParticle(int particle, int partner, double factor);
    /**
     * Get a reduced particle.
     *
     * @param index          the index of the reduced particle (as addReducedParticle returned)
     * @param[out] particle  the index of the particle that moves
     * @param[out] partner   the index of the particle it moves towards
     * @param[out] factor    the fraction of the partner-particle vector kept
     */
    void getReducedParticleParameters(int index, int& particle, int& partner, double& factor) const;
    /**
     * Set a reduced particle (push it into a Context with updateParametersInContext()).
     *
     * @param index     the index of the reduced particle
     * @param particle  the index of the particle that moves
     * @param partner   the index of the particle it moves towards
     * @param factor    the fraction of the partner-particle vector kept (> 0)
     */
    void setReducedParticleParameters(int index, int particle, int partner, double factor);
    /**
     * Get the number of reduced particles.
     */
    int getNumReducedParticles() const;

    // ---- reading a Context ------------------------------------------------------------------
    /**
     * Push the parameter table and all terms into a Context without re-initialising it. Only the
     * table is copied when the terms did not change, so a fit's step is cheap. The particle and
     * molecule layout must not change (HessianForceException Topology otherwise).
     *
     * @param context  a Context whose System holds this force
     */
    void updateParametersInContext(OpenMM::Context& context);
    /**
     * Get the total number of doubles in the concatenated Hessian blocks.
     *
     * @return the sum over molecules m of (3 n_m)^2
     */
    long long getHessianSize() const;
    /**
     * Get where a molecule's block starts in the concatenated Hessian blocks.
     *
     * @param molecule  the index of the molecule (getNumMolecules() gives the total size)
     * @return the offset of its block, in doubles
     */
    long long getHessianBlockOffset(int molecule) const;
    /**
     * Compute the analytic Cartesian Hessian of this force's energy at the Context's positions.
     *
     * @param context      a Context whose System holds this force
     * @param[out] blocks  kJ/mol/nm^2: one dense row-major (3 n_m) x (3 n_m) block per molecule,
     *                     concatenated in molecule order; within a block the coordinates are
     *                     ordered particle (in getMoleculeParticles order), then x, y, z.
     *                     Resized to getHessianSize().
     */
    void getHessianBlocks(OpenMM::Context& context, std::vector<double>& blocks) const;
    /**
     * Compute dE/d(slot) for every slot of the table at the Context's positions. The derivative
     * with respect to a particle's epsilon is infinite where that epsilon is 0 and a partner's is
     * not (the combined epsilon is sqrt(eps_i eps_j)): fit such parameters from a non-zero start.
     *
     * @param context           a Context whose System holds this force
     * @param[out] derivatives  kJ/mol per slot unit, one per slot
     */
    void getParameterDerivatives(OpenMM::Context& context, std::vector<double>& derivatives) const;
    /**
     * The adjoint route to parameter gradients of Hessian-space objectives: for every slot s,
     *     derivatives[s] = tr(G^T dH/dslot_s) = sum over molecules m, block entries ij of G_m,ij dH_m,ij/dslot_s,
     * without forming any dH/dslot. An objective L(H) has dL/dslot = tr(G^T dH/dslot) with
     * G = dL/dH, e.g. G = sum_k c_k w_k w_k^T for a weighted sum of eigenvalues with eigenvectors
     * w_k. Throws HessianForceException: Size (wrong size), Value (a non-finite entry, named),
     * Geometry (an undefined coordinate, as getHessianBlocks). Where a slot's dE/dslot is
     * infinite (see getParameterDerivatives) the result is not finite. An angle or MM3* angle of
     * theta0 = 180 degrees at an exactly linear geometry is evaluated in its smooth limit (grad E = 0,
     * H = f''(pi) times the Hessian of cos theta); its theta0 slot's entry is NaN there (the forces
     * and Hessian have no derivative in theta0 at that geometry), the others are exact.
     *
     * @param context           a Context whose System holds this force
     * @param adjoint           G in the layout of getHessianBlocks (getHessianSize() entries, one
     *                          block per molecule); only its symmetric part matters
     * @param[out] derivatives  kJ/mol/nm^2 times G's units, per slot unit, one per slot
     */
    void getHessianContractionDerivatives(OpenMM::Context& context, const std::vector<double>& adjoint,
                                          std::vector<double>& derivatives) const;
    /**
     * The mixed second derivative contracted with a vector y, for every slot s:
     *     derivatives[s] = y . d(grad E)/dslot_s = -y . dF/dslot_s,
     * what implicit differentiation of an optimised geometry needs. Errors as
     * getHessianContractionDerivatives.
     *
     * @param context           a Context whose System holds this force
     * @param y                 3 finite entries per System particle (x, y, z in System order)
     * @param[out] derivatives  kJ/mol/nm times y's units, per slot unit, one per slot
     */
    void getGradientContractionDerivatives(OpenMM::Context& context, const std::vector<double>& y,
                                           std::vector<double>& derivatives) const;
    /**
     * Compute the energy of each molecule alone at the Context's positions: its terms and its
     * nonbonded pairs. Molecules never interact, so the energies sum to this force's energy.
     * Throws HessianForceException Geometry as getHessianBlocks.
     *
     * @param context        a Context whose System holds this force
     * @param[out] energies  kJ/mol, one per molecule (resized to getNumMolecules())
     */
    void getMoleculeEnergies(OpenMM::Context& context, std::vector<double>& energies) const;
    /**
     * The adjoint route to the parameter gradient of any loss of the per-molecule energies: for
     * every slot s,
     *     derivatives[s] = sum_m weights[m] dE_m/dslot_s,
     * with weights[m] = dL/dE_m. Throws HessianForceException Size (wrong count), Value (a
     * non-finite weight, named), Geometry.
     *
     * @param context           a Context whose System holds this force
     * @param weights           one finite weight per molecule (a molecule of weight 0 adds exactly 0)
     * @param[out] derivatives  kJ/mol times the weights' units, per slot unit, one per slot
     */
    void getMoleculeEnergyDerivatives(OpenMM::Context& context, const std::vector<double>& weights,
                                      std::vector<double>& derivatives) const;

    // ---- Hessian-space objectives (HessianObjective.h) ---------------------------------------
    /**
     * Set the Context's Hessian-space objective: per molecule frequencies (paired by position or
     * by eigenvector overlap), eigenmatrix elements, Hessian elements, with targets and weights
     * (OpenMM units, see HessianObjective.h). The spec is checked first: one Molecule per molecule
     * of the force, sizes, finite targets, weights >= 0, masses > 0, orthonormal vectors
     * (HessianForceException Size / Value naming the molecule, field and entry). Replaces an
     * earlier objective; the objective belongs to this Context.
     *
     * @param context  a Context whose System holds this force
     * @param spec     the objective
     */
    void setHessianObjective(OpenMM::Context& context, const HessianObjectiveSpec& spec) const;
    /**
     * Evaluate the Context's objective with its gradient, for all molecules in one kernel call:
     * the Hessian blocks, per molecule the eigen-decomposition and the adjoint G, then one
     * tr(G^T dH/dslot) contraction. Throws HessianForceException Value when no objective is set
     * or an eigensolver fails, Geometry as getHessianBlocks.
     *
     * @param context        a Context whose System holds this force
     * @param[out] dLdslot   dL/dslot for every slot, loss units per slot unit
     * @param[out] residuals when not null, receives the r_i (getHessianObjectiveNumResiduals of them)
     * @return the loss L = sum r_i^2
     */
    double computeHessianObjective(OpenMM::Context& context, std::vector<double>& dLdslot,
                                   std::vector<double>* residuals = nullptr) const;
    /**
     * Evaluate the Context's objective without its gradient. Errors as the overload with dLdslot.
     *
     * @param context        a Context whose System holds this force
     * @param[out] residuals when not null, receives the r_i
     * @return the loss L = sum r_i^2
     */
    double computeHessianObjective(OpenMM::Context& context, std::vector<double>* residuals = nullptr) const;
    /**
     * Say which slots' dL/dslot computeHessianObjective must give exactly from now on in this
     * Context, e.g. those a fit's free values move; the other slots' entries are then 0 (the
     * Reference platform skips the terms none of whose slots is listed; the GPU platforms compute
     * every slot). Slots added to the table later count as listed. Kept across
     * setHessianObjective. Throws HessianForceException Size for a slot out of range, Value for
     * one listed twice.
     *
     * @param context  a Context whose System holds this force
     * @param slots    the slots (distinct, in range); empty: every slot (the default)
     */
    void setHessianObjectiveGradientSlots(OpenMM::Context& context, const std::vector<int>& slots) const;
    /**
     * Get the number of residuals of the Context's objective.
     *
     * @param context  a Context whose System holds this force
     * @return the residual count (0 when no objective is set)
     */
    long long getHessianObjectiveNumResiduals(OpenMM::Context& context) const;
    /**
     * Get which MM mode each frequency target was compared with in the last evaluation.
     *
     * @param context     a Context whose System holds this force
     * @param[out] modes  for each frequency target (molecule by molecule), the MM mode index
     *                    (ascending eigenvalue order of the molecule's mode list); -1 when
     *                    unpaired or before the first evaluation
     */
    void getHessianObjectivePairing(OpenMM::Context& context, std::vector<int>& modes) const;
    /**
     * Compute one molecule's residuals and their exact Jacobian with respect to every slot, at the
     * Context's positions and parameters: d r_i/dslot = -w_i d value_i/dslot with d value/dslot a
     * bilinear form u^T (dH/dslot) w of the molecule's Hessian derivative (frequencies: u = w =
     * M^-1/2 v of the paired mode, times dnu/dl; eigenmatrix: the fixed vectors; Hessian elements:
     * unit vectors), in one pass over its terms. Frequency targets keep the last evaluation's
     * pairing (evaluate first at the same parameters). Errors as computeHessianObjective, and Size
     * for a molecule out of range.
     *
     * @param context         a Context whose System holds this force
     * @param molecule        the molecule (0-based)
     * @param slots           the slots wanted (distinct, in range; empty: all); terms with none of them
     *                        are skipped
     * @param[out] residuals  the molecule's residuals (its slice of computeHessianObjective's)
     * @param[out] jacobian   slot-major: jacobian[k * residuals.size() + i] = d r_i / d slot_{slots[k]}
     *                        (all slots: k = s)
     */
    void computeHessianObjectiveJacobian(OpenMM::Context& context, int molecule, const std::vector<int>& slots,
                                         std::vector<double>& residuals, std::vector<double>& jacobian) const;
    /**
     * Compute the residuals and their exact Jacobian of several molecules in one call, the
     * molecules in threads (HESSFIT_NUM_THREADS, as computeHessianObjective); bit for bit the
     * one-molecule calls' results, concatenated, whatever the thread count. Frequency targets keep
     * the last evaluation's pairing. Errors as the one-molecule form's (the failing molecule at the
     * lowest list position), and Size for an empty list or a molecule out of range, Value for a
     * molecule listed twice.
     *
     * @param context         a Context whose System holds this force
     * @param molecules       the molecules (0-based, distinct, at least one), in any order
     * @param slots           the slots wanted (distinct, in range; empty: all)
     * @param[out] residuals  the listed molecules' residuals, concatenated in list order
     * @param[out] jacobian   the listed molecules' blocks, concatenated in list order; molecule m's
     *                        block is slot-major, block[k * n_m + i] = d r_i / d slot_{slots[k]} for
     *                        its n_m residuals (all slots: k = s), and starts at slots.size() (or the
     *                        slot count) times the residuals listed before it
     */
    void computeHessianObjectiveJacobian(OpenMM::Context& context, const std::vector<int>& molecules,
                                         const std::vector<int>& slots, std::vector<double>& residuals,
                                         std::vector<double>& jacobian) const;

    /**
     * Get whether this force uses periodic boundary conditions: never (isolated molecules).
     */
    bool usesPeriodicBoundaryConditions() const override { return false; }

    /**
     * Get the name of a term kind, for messages.
     *
     * @param kind  the term kind
     * @return "bond", "angle", ... ("unknown term" for a value outside TermKind)
     */
    static const char* termKindName(TermKind kind);
    /**
     * Get how many particles a term of a kind lists (a bend-bend lists 5, one of which may repeat).
     *
     * @param kind  the term kind
     * @return 2 to MaxTermParticles (0 for a value outside TermKind)
     */
    static int getTermNumParticles(TermKind kind);
    /**
     * Get how many distance scales (per-term constants, default 1) a term of a kind holds.
     *
     * @param kind  the term kind
     * @return 2 for the MM3* stretch-bend, 1 for the MM3* bond and torsion-stretch, 0 otherwise
     */
    static int getTermNumDistanceScales(TermKind kind);
    /**
     * Get how many parameter slots a term of a kind holds.
     *
     * @param kind  the term kind
     * @return 0 to 6 (0 for a value outside TermKind)
     */
    static int getTermNumSlots(TermKind kind);
    /**
     * Get whether a term of a kind has a periodicity (periodic torsions and impropers).
     *
     * @param kind  the term kind
     */
    static bool termHasPeriodicity(TermKind kind);

protected:
    /**
     * Create the ForceImpl (HessianForceImpl) of this force for a new Context.
     */
    OpenMM::ForceImpl* createImpl() const override;

private:
    /** One stored term (read by the implementation through HessianForceInternals). */
    struct Term {
        int particles[MaxTermParticles];
        int slots[6];
        int periodicity;
        double distanceScales[2];  // 1 where the kind has none
    };
    HessianForceImpl& getImpl(OpenMM::Context& context) const;
    int addTerm(TermKind kind, const int* particles, int numParticles, const int* slots, int numSlots, int periodicity,
                const double* distanceScales = nullptr);
    void setTerm(TermKind kind, int index, const int* particles, int numParticles, const int* slots, int numSlots,
                 int periodicity, const double* distanceScales = nullptr);
    const Term& getTerm(TermKind kind, int index) const;
    std::vector<double> parameters;
    std::vector<int> particleSlots;  // 3 per particle: charge, sigma, epsilon
    std::vector<std::vector<int> > molecules;
    std::vector<Term> terms[NumTermKinds];
    /** One reduced particle (addReducedParticle). */
    struct ReducedParticle {
        int particle, partner;
        double factor;
        bool operator==(const ReducedParticle& o) const {
            return particle == o.particle && partner == o.partner && factor == o.factor;
        }
    };
    std::vector<ReducedParticle> reducedParticles;
    CombiningRule combiningRule;
    double coulomb14Scale, lj14Scale;
};

} // namespace HessFit

#endif
