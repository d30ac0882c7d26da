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

class OPENMM_EXPORT_HESSFIT HessianForce : public OpenMM::Force {
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
        PeriodicImproper, HarmonicImproper, Exclusion, Pair14, ExplicitPair, NumTermKinds
    };

    HessianForce();

    // ---- parameter table -------------------------------------------------------------------
    /** Append a slot holding value (in the unit of whatever term uses it). Returns its index. */
    int addParameter(double value);
    int getNumParameters() const;
    double getParameter(int slot) const;
    void setParameter(int slot, double value);
    /** Replace the whole table; the new table must have the same length. */
    void setParameters(const std::vector<double>& values);
    const std::vector<double>& getParameters() const;

    // ---- particles and molecules ------------------------------------------------------------
    /** Add a particle with its charge (e), sigma (nm) and epsilon (kJ/mol) slots (NoSlot = 0).
     *  The force must have exactly as many particles as the System. Returns the particle index. */
    int addParticle(int chargeSlot, int sigmaSlot, int epsilonSlot);
    int getNumParticles() const;
    void getParticleParameters(int index, int& chargeSlot, int& sigmaSlot, int& epsilonSlot) const;
    void setParticleParameters(int index, int chargeSlot, int sigmaSlot, int epsilonSlot);

    /** Declare a molecule: the particles it holds (any order; that order is the order of its
     *  Hessian block). If no molecule is ever added, all particles form one molecule. Once any
     *  molecule is added, every particle must belong to exactly one. Returns the molecule index. */
    int addMolecule(const std::vector<int>& particles);
    /** Number of molecules, counting the implicit all-particle molecule (1) when none was added. */
    int getNumMolecules() const;
    /** Particles of a molecule, in Hessian-block order. */
    std::vector<int> getMoleculeParticles(int index) const;
    /** True if molecules were declared explicitly with addMolecule(). */
    bool hasExplicitMolecules() const;

    // ---- bonded terms -----------------------------------------------------------------------
    /** E = k (r - r0)^2; k in kJ/mol/nm^2, r0 in nm. */
    int addBond(int p1, int p2, int kSlot, int r0Slot);
    void getBondParameters(int index, int& p1, int& p2, int& kSlot, int& r0Slot) const;
    void setBondParameters(int index, int p1, int p2, int kSlot, int r0Slot);
    int getNumBonds() const;

    /** Urey-Bradley 1-3 spring, E = k (r13 - r0)^2; k in kJ/mol/nm^2, r0 in nm. */
    int addUreyBradley(int p1, int p3, int kSlot, int r0Slot);
    void getUreyBradleyParameters(int index, int& p1, int& p3, int& kSlot, int& r0Slot) const;
    void setUreyBradleyParameters(int index, int p1, int p3, int kSlot, int r0Slot);
    int getNumUreyBradleys() const;

    /** E = k (theta - theta0)^2, theta the p1-p2-p3 angle; k in kJ/mol/rad^2, theta0 in rad. */
    int addAngle(int p1, int p2, int p3, int kSlot, int theta0Slot);
    void getAngleParameters(int index, int& p1, int& p2, int& p3, int& kSlot, int& theta0Slot) const;
    void setAngleParameters(int index, int p1, int p2, int p3, int kSlot, int theta0Slot);
    int getNumAngles() const;

    /** E = k (1 + cos(n phi - phase)); k in kJ/mol, phase in rad, periodicity n >= 1. */
    int addPeriodicTorsion(int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    void getPeriodicTorsionParameters(int index, int& p1, int& p2, int& p3, int& p4, int& periodicity, int& kSlot, int& phaseSlot) const;
    void setPeriodicTorsionParameters(int index, int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    int getNumPeriodicTorsions() const;

    /** OPLS-AA: E = V1/2 (1+cos phi) + V2/2 (1-cos 2phi) + V3/2 (1+cos 3phi) + V4/2 (1-cos 4phi);
     *  V_m in kJ/mol; vSlots[m-1] may be NoSlot. */
    int addOPLSTorsion(int p1, int p2, int p3, int p4, const std::vector<int>& vSlots);
    void getOPLSTorsionParameters(int index, int& p1, int& p2, int& p3, int& p4, std::vector<int>& vSlots) const;
    void setOPLSTorsionParameters(int index, int p1, int p2, int p3, int p4, const std::vector<int>& vSlots);
    int getNumOPLSTorsions() const;

    /** Ryckaert-Bellemans (as OpenMM's RBTorsionForce): E = sum_{m=0..5} C_m cos(phi - pi)^m;
     *  C_m in kJ/mol; cSlots has 6 entries, each may be NoSlot. */
    int addRBTorsion(int p1, int p2, int p3, int p4, const std::vector<int>& cSlots);
    void getRBTorsionParameters(int index, int& p1, int& p2, int& p3, int& p4, std::vector<int>& cSlots) const;
    void setRBTorsionParameters(int index, int p1, int p2, int p3, int p4, const std::vector<int>& cSlots);
    int getNumRBTorsions() const;

    /** Periodic improper: E = k (1 + cos(n phi - phase)) on the dihedral p1-p2-p3-p4; k kJ/mol, phase rad. */
    int addPeriodicImproper(int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    void getPeriodicImproperParameters(int index, int& p1, int& p2, int& p3, int& p4, int& periodicity, int& kSlot, int& phaseSlot) const;
    void setPeriodicImproperParameters(int index, int p1, int p2, int p3, int p4, int periodicity, int kSlot, int phaseSlot);
    int getNumPeriodicImpropers() const;

    /** Harmonic improper: E = k (phi - phi0)^2 with phi - phi0 wrapped to [-pi, pi]; k kJ/mol/rad^2, phi0 rad. */
    int addHarmonicImproper(int p1, int p2, int p3, int p4, int kSlot, int phi0Slot);
    void getHarmonicImproperParameters(int index, int& p1, int& p2, int& p3, int& p4, int& kSlot, int& phi0Slot) const;
    void setHarmonicImproperParameters(int index, int p1, int p2, int p3, int p4, int kSlot, int phi0Slot);
    int getNumHarmonicImpropers() const;

    // ---- nonbonded pairs --------------------------------------------------------------------
    void setCombiningRule(CombiningRule rule);
    CombiningRule getCombiningRule() const;
    /** Scale factors for 1-4 pairs (defaults 0.5 and 0.5, OPLS-AA). */
    void setCoulomb14Scale(double scale);
    double getCoulomb14Scale() const;
    void setLJ14Scale(double scale);
    double getLJ14Scale() const;

    /** Exclude the pair from the nonbonded sum (1-2 and 1-3 neighbours). */
    int addExclusion(int p1, int p2);
    void getExclusionParticles(int index, int& p1, int& p2) const;
    int getNumExclusions() const;
    /** A 1-4 pair: excluded from the plain sum, interacting with scaled combined parameters. */
    int addPair14(int p1, int p2);
    void getPair14Particles(int index, int& p1, int& p2) const;
    int getNumPairs14() const;
    /** An explicit pair (like a NonbondedForce exception): excluded from the plain sum, interacting
     *  with charge product chargeProdSlot (e^2), sigmaSlot (nm) and epsilonSlot (kJ/mol). */
    int addExplicitPair(int p1, int p2, int chargeProdSlot, int sigmaSlot, int epsilonSlot);
    void getExplicitPairParameters(int index, int& p1, int& p2, int& chargeProdSlot, int& sigmaSlot, int& epsilonSlot) const;
    void setExplicitPairParameters(int index, int p1, int p2, int chargeProdSlot, int sigmaSlot, int epsilonSlot);
    int getNumExplicitPairs() const;
    /** From a bond list: exclude 1-2 and 1-3 pairs and add 1-4 pairs (each pair once, nearest
     *  relation wins; pairs in rings closer than 1-4 are never 1-4). */
    void createExclusionsFromBonds(const std::vector<std::pair<int, int> >& bonds);

    // ---- reading a Context ------------------------------------------------------------------
    /** Push the parameter table and all terms into a Context without re-initialising it. Only the
     *  table is copied when the terms did not change, so a fit's step is cheap. The particle and
     *  molecule layout must not change. */
    void updateParametersInContext(OpenMM::Context& context);
    /** Total number of doubles in the concatenated Hessian blocks: sum over molecules of (3 n_m)^2. */
    long long getHessianSize() const;
    /** Offset of molecule m's block in the concatenated Hessian blocks. */
    long long getHessianBlockOffset(int molecule) const;
    /** Analytic Cartesian Hessian of this force's energy, kJ/mol/nm^2: one dense row-major
     *  (3 n_m) x (3 n_m) block per molecule, concatenated in molecule order; within a block the
     *  coordinates are ordered particle (in getMoleculeParticles order), then x, y, z. */
    void getHessianBlocks(OpenMM::Context& context, std::vector<double>& blocks) const;
    /** dE/d(slot) for every slot of the table, in kJ/mol per slot unit. The derivative with respect
     *  to a particle's epsilon is infinite where that epsilon is 0 and a partner's is not (the
     *  combined epsilon is sqrt(eps_i eps_j)): fit such parameters from a non-zero start. */
    void getParameterDerivatives(OpenMM::Context& context, std::vector<double>& derivatives) const;
    /** The adjoint route to parameter gradients of Hessian-space objectives: for every slot s,
     *      derivatives[s] = tr(G^T dH/dslot_s) = sum over molecules m, block entries ij of G_m,ij dH_m,ij/dslot_s,
     *  without forming any dH/dslot. adjoint holds G in the layout of getHessianBlocks (size
     *  getHessianSize(), one block per molecule); only its symmetric part matters. An objective
     *  L(H) has dL/dslot = tr(G^T dH/dslot) with G = dL/dH, e.g. G = sum_k c_k w_k w_k^T for a
     *  weighted sum of eigenvalues with eigenvectors w_k. derivatives are in kJ/mol/nm^2 times
     *  G's units, per slot unit. Throws HessianForceException: Size (wrong size), Value (a
     *  non-finite entry, named), Geometry (an undefined coordinate, as getHessianBlocks). Where a
     *  slot's dE/dslot is infinite (see getParameterDerivatives) the result is not finite. */
    void getHessianContractionDerivatives(OpenMM::Context& context, const std::vector<double>& adjoint,
                                          std::vector<double>& derivatives) const;
    /** The mixed second derivative contracted with a vector y, for every slot s:
     *      derivatives[s] = y . d(grad E)/dslot_s = -y . dF/dslot_s,
     *  what implicit differentiation of an optimised geometry needs. y has 3 entries per System
     *  particle (x, y, z in System order) and must be finite; derivatives are in kJ/mol/nm times
     *  y's units, per slot unit. Errors as getHessianContractionDerivatives. */
    void getGradientContractionDerivatives(OpenMM::Context& context, const std::vector<double>& y,
                                           std::vector<double>& derivatives) const;
    /** The energy (kJ/mol) of each molecule alone at the Context's positions: its terms and its
     *  nonbonded pairs. Molecules never interact, so the energies sum to this force's energy.
     *  energies is resized to getNumMolecules(). Throws HessianForceException Geometry as
     *  getHessianBlocks. */
    void getMoleculeEnergies(OpenMM::Context& context, std::vector<double>& energies) const;
    /** The adjoint route to the parameter gradient of any loss of the per-molecule energies: for
     *  every slot s,
     *      derivatives[s] = sum_m weights[m] dE_m/dslot_s,
     *  with weights[m] = dL/dE_m (one finite weight per molecule; a molecule of weight 0 adds
     *  exactly 0). derivatives are in kJ/mol times the weights' units, per slot unit. Throws
     *  HessianForceException Size (wrong count), Value (a non-finite weight, named), Geometry. */
    void getMoleculeEnergyDerivatives(OpenMM::Context& context, const std::vector<double>& weights,
                                      std::vector<double>& derivatives) const;

    // ---- Hessian-space objectives (HessianObjective.h) ---------------------------------------
    /** Set the Context's Hessian-space objective: per molecule frequencies (paired by position or
     *  by eigenvector overlap), eigenmatrix elements, Hessian elements, with targets and weights
     *  (OpenMM units, see HessianObjective.h). The spec is checked first: one Molecule per molecule
     *  of the force, sizes, finite targets, weights >= 0, masses > 0, orthonormal vectors
     *  (HessianForceException Size / Value naming the molecule, field and entry). Replaces an
     *  earlier objective; the objective belongs to this Context. */
    void setHessianObjective(OpenMM::Context& context, const HessianObjectiveSpec& spec) const;
    /** The loss L = sum r_i^2 of the Context's objective and dL/dslot for every slot (loss units
     *  per slot unit), for all molecules in one kernel call: the Hessian blocks, per molecule the
     *  eigen-decomposition and the adjoint G, then one tr(G^T dH/dslot) contraction. residuals,
     *  when not null, receives the r_i (getHessianObjectiveNumResiduals of them). Throws
     *  HessianForceException Value when no objective is set or an eigensolver fails, Geometry as
     *  getHessianBlocks. */
    double computeHessianObjective(OpenMM::Context& context, std::vector<double>& dLdslot,
                                   std::vector<double>* residuals = nullptr) const;
    /** The loss alone (no gradient), and the residuals when residuals is not null. */
    double computeHessianObjective(OpenMM::Context& context, std::vector<double>* residuals = nullptr) const;
    /** Residuals of the Context's objective (0 when none is set). */
    long long getHessianObjectiveNumResiduals(OpenMM::Context& context) const;
    /** For each frequency target (molecule by molecule) the MM mode index (ascending eigenvalue
     *  order of the molecule's mode list) it was paired with in the last evaluation; -1 when
     *  unpaired or before the first evaluation. */
    void getHessianObjectivePairing(OpenMM::Context& context, std::vector<int>& modes) const;

    bool usesPeriodicBoundaryConditions() const { return false; }

    /** Name of a term kind ("bond", "angle", ...), for messages. */
    static const char* termKindName(TermKind kind);
    /** How many particles and slots a term of this kind holds, and whether it has a periodicity. */
    static int getTermNumParticles(TermKind kind);
    static int getTermNumSlots(TermKind kind);
    static bool termHasPeriodicity(TermKind kind);

    // Internal storage, public for the platforms and the serialization proxy.
    struct Term {
        int particles[4];
        int slots[6];
        int periodicity;
    };
    const std::vector<Term>& getTerms(TermKind kind) const { return terms[kind]; }
    const std::vector<int>& getParticleSlots() const { return particleSlots; }  // 3 per particle
    const std::vector<std::vector<int> >& getExplicitMolecules() const { return molecules; }

protected:
    OpenMM::ForceImpl* createImpl() const;

private:
    HessianForceImpl& getImpl(OpenMM::Context& context) const;
    int addTerm(TermKind kind, const int* particles, int numParticles, const int* slots, int numSlots, int periodicity);
    void setTerm(TermKind kind, int index, const int* particles, int numParticles, const int* slots, int numSlots, int periodicity);
    const Term& getTerm(TermKind kind, int index) const;
    std::vector<double> parameters;
    std::vector<int> particleSlots;
    std::vector<std::vector<int> > molecules;
    std::vector<Term> terms[NumTermKinds];
    CombiningRule combiningRule;
    double coulomb14Scale, lj14Scale;
};

} // namespace HessFit

#endif
