#ifndef HESSFIT_HESSIAN_FORCE_CONVERTER_H_
#define HESSFIT_HESSIAN_FORCE_CONVERTER_H_

/*
 * Build a HessianForce equal to the stock forces of an OpenMM System.
 *
 * Supported (everything else is an error):
 *   HarmonicBondForce     stock E = k/2 (r - r0)^2       -> addBond with k/2
 *   HarmonicAngleForce    stock E = k/2 (theta - t0)^2   -> addAngle with k/2
 *   PeriodicTorsionForce  (periodicity >= 1)             -> addPeriodicTorsion
 *   RBTorsionForce                                       -> addRBTorsion (6 C_m slots)
 *   NonbondedForce        NoCutoff, direct space included, no parameter offsets and no global
 *                         parameters (at most one per System): per-particle charge/sigma/epsilon
 *                         slots with the LorentzBerthelot rule; each exception becomes an explicit
 *                         pair when chargeProd != 0 or epsilon != 0, otherwise an exclusion
 *   CMMotionRemover       ignored (it contributes no energy)
 * The bonded forces must not use periodic boundary conditions and the System must have no
 * virtual sites.
 *
 * Every parameter of every term (and every particle's charge, sigma and epsilon) gets a slot of
 * its own, in the order System force -> term -> parameter, particles first. No slot is shared, so
 * a fit that wants typed parameters should re-map slots afterwards. No molecule is declared: all
 * particles form one molecule, as the stock NonbondedForce couples every pair. Without a
 * NonbondedForce every particle is added with NoSlot (zero) charge, sigma and epsilon. The new
 * force is in group 0 with the default name; force groups of the stock forces are not copied.
 *
 * Errors: all problems found in the System are collected and reported together in one
 * HessianForceException(Unsupported), each naming the force's index and class, e.g.
 * "force 3 (CustomBondForce) is not supported". A parameter the HessianForce rejects (NaN or
 * infinite) is reported as the HessianForceException the force throws, prefixed with the term.
 */

#include "HessianForce.h"
#include "openmm/System.h"
#include "internal/windowsExportHessFit.h"

namespace HessFit {

/**
 * Create a HessianForce whose energy equals that of the System's stock forces (see the top of
 * this file for what is supported). Throws HessianForceException(Unsupported) listing every force
 * or setting it cannot represent.
 *
 * @param system  the System whose forces are converted; it is not changed
 * @return a new force, owned by the caller (e.g. to be added to a System, which then owns it)
 */
OPENMM_EXPORT_HESSFIT HessianForce* createHessianForceFromSystem(const OpenMM::System& system);

} // namespace HessFit

#endif
