/*
 * The hessfit C API (wrappers/include/hessfit.h) over HessFit::HessianForce.
 *
 * Conventions of this file:
 *  - Every function body runs inside guarded(), which turns any C++ exception into a status:
 *    HessianForceException -> the hessfit_status with the same number, std::bad_alloc ->
 *    HESSFIT_ERROR_OUT_OF_MEMORY, any other OpenMMException (or anything else) ->
 *    HESSFIT_ERROR_OPENMM. Nothing ever propagates into C.
 *  - The message of a failure goes into a thread-local string, prefixed with the function's name.
 *    A successful call does NOT clear it (as hessfit.h documents: the message stays valid until
 *    the next failing call on the same thread); read it only right after a call that failed.
 *  - Required pointers are checked first (HESSFIT_ERROR_NULL_ARGUMENT naming the argument).
 *    An array may be NULL only when its length is 0. Optional outputs (term indices,
 *    force_index) may be NULL. On failure, outputs are left untouched, except that a
 *    hessfit_force** output is set to NULL.
 *  - OpenMM's C types are reinterpret_casts of the C++ objects (as in OpenMMCWrapper.h).
 */
#include "hessfit.h"
#include "HessianForce.h"
#include "HessianForceConverter.h"
#include "HessianForceException.h"
#include "internal/HessianForceImpl.h"
#include "openmm/Integrator.h"
#include "openmm/LocalEnergyMinimizer.h"
#include "openmm/Platform.h"
#include "openmm/Context.h"
#include "openmm/OpenMMException.h"
#include "openmm/State.h"
#include "openmm/System.h"
#include "openmm/serialization/XmlSerializer.h"
#include <algorithm>
#include <map>
#include <exception>
#include <new>
#include <sstream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

using HessFit::HessianForce;
using HessFit::HessianForceException;
using std::string;
using std::vector;

struct hessfit_force {
    HessFit::HessianForce* force;
    bool owned;  // true until a System takes the force (or never, for a wrapped foreign force)
    std::vector<double> hessian;  // reused between calls: a fit asks for the blocks again and again
    std::vector<double> adjoint;  // the same for an adjoint matrix G passed in
    std::vector<double> objectiveGradient, objectiveResiduals;  // reused by every objective evaluation
};

// The status numbers equal HessianForceException's codes.
static_assert((int) HESSFIT_ERROR_NULL_ARGUMENT == (int) HessianForceException::NullArgument, "status mismatch");
static_assert((int) HESSFIT_ERROR_INDEX == (int) HessianForceException::Index, "status mismatch");
static_assert((int) HESSFIT_ERROR_VALUE == (int) HessianForceException::Value, "status mismatch");
static_assert((int) HESSFIT_ERROR_SIZE == (int) HessianForceException::Size, "status mismatch");
static_assert((int) HESSFIT_ERROR_TOPOLOGY == (int) HessianForceException::Topology, "status mismatch");
static_assert((int) HESSFIT_ERROR_GEOMETRY == (int) HessianForceException::Geometry, "status mismatch");
static_assert((int) HESSFIT_ERROR_NOT_IN_CONTEXT == (int) HessianForceException::NotInContext, "status mismatch");
static_assert((int) HESSFIT_ERROR_UNSUPPORTED == (int) HessianForceException::Unsupported, "status mismatch");
static_assert((int) HESSFIT_ERROR_OWNERSHIP == (int) HessianForceException::Ownership, "status mismatch");

namespace {

/** Sets this thread's message (hessfit_status.h) to "function: message"; never throws. */
hessfit_status fail(hessfit_status status, const char* function, const char* message) noexcept {
    return hessfit_error(status, "%s: %s", function, message);
}

/** An error detected by this file; guarded() turns it into its status. */
struct ApiError {
    hessfit_status status;
    string message;
};

[[noreturn]] void throwError(hessfit_status status, const string& message) {
    throw ApiError{status, message};
}

/**
 * OpenMM's message when a Context's platform lacks a kernel ("... does not support all required
 * kernels"), with what to do about HessianForce: a platform gets hessfit's kernels only if it is
 * registered when hessfit's plugin registers them, so OpenMM's plugins load first.
 */
string withKernelHint(const string& message) {
    if (message.find("required kernels") == string::npos)
        return message;
    return message + " (a System with a HessianForce needs hessfit's kernels for that platform: load OpenMM's "
                     "plugins first (OpenMM_Platform_loadPluginsFromDirectory of "
                     "OpenMM_Platform_getDefaultPluginsDirectory(), or $OPENMM_PLUGIN_DIR for a pip wheel), then "
                     "hessfit's plugin directory (<prefix>/lib/plugins); HessianForce runs on the Reference, CPU, "
                     "OpenCL and CUDA platforms)";
}

void requireArg(const void* pointer, const char* name) {
    if (pointer == nullptr)
        throwError(HESSFIT_ERROR_NULL_ARGUMENT, string("argument '") + name + "' is NULL");
}

/** An array argument: NULL is fine only when it has no entries. */
void requireArray(const void* pointer, long long length, const char* name) {
    if (pointer == nullptr && length > 0)
        throwError(HESSFIT_ERROR_NULL_ARGUMENT, string("argument '") + name + "' is NULL");
}

void requireSize(long long given, long long expected, const char* name, const char* what) {
    if (given != expected) {
        std::ostringstream m;
        m << "wrong size of '" << name << "': expected " << expected << " (" << what << "), given " << given;
        throwError(HESSFIT_ERROR_SIZE, m.str());
    }
}

HessianForce& forceOf(hessfit_force* handle) {
    requireArg(handle, "force");
    return *handle->force;
}

const HessianForce& forceOf(const hessfit_force* handle) {
    requireArg(handle, "force");
    return *handle->force;
}

OpenMM::Context& contextOf(OpenMM_Context* context) {
    requireArg(context, "context");
    return *reinterpret_cast<OpenMM::Context*>(context);
}

template <class F>
hessfit_status guarded(const char* function, F&& body) noexcept {
    try {
        body();
        return HESSFIT_SUCCESS;
    } catch (const ApiError& e) {
        return fail(e.status, function, e.message.c_str());
    } catch (const HessianForceException& e) {
        int code = (int) e.getCode();
        hessfit_status status = (code > 0 && code < (int) HESSFIT_ERROR_OPENMM) ? (hessfit_status) code : HESSFIT_ERROR_OPENMM;
        return fail(status, function, e.what());
    } catch (const std::bad_alloc&) {
        return fail(HESSFIT_ERROR_OUT_OF_MEMORY, function, "out of memory");
    } catch (const OpenMM::OpenMMException& e) {
        return fail(HESSFIT_ERROR_OPENMM, function, e.what());
    } catch (const std::exception& e) {
        return fail(HESSFIT_ERROR_OPENMM, function, e.what());
    } catch (...) {
        return fail(HESSFIT_ERROR_OPENMM, function, "unknown C++ exception");
    }
}

template <class T>
void setOptional(T* out, T value) {
    if (out != nullptr)
        *out = value;
}

/** Wrap a new owned force in a handle (deleting the force if the handle cannot be allocated). */
hessfit_force* newHandle(HessianForce* force, bool owned) {
    try {
        return new hessfit_force{force, owned, {}, {}, {}, {}};
    } catch (...) {
        if (owned)
            delete force;
        throw;
    }
}

/** True if the force object is one of the forces of the Context's System. */
bool contextHasForce(const OpenMM::Context& context, const HessianForce& force) {
    const OpenMM::System& system = context.getSystem();
    for (int i = 0; i < system.getNumForces(); i++)
        if (&system.getForce(i) == static_cast<const OpenMM::Force*>(&force))
            return true;
    return false;
}

/** Copies the slot derivatives out, checking the count the kernel returned. */
void copyDerivatives(const vector<double>& result, double* derivatives, int n) {
    if ((long long) result.size() != n) {
        std::ostringstream m;
        m << "internal error: the kernel returned " << result.size() << " derivatives, expected " << n;
        throwError(HESSFIT_ERROR_OPENMM, m.str());
    }
    std::copy(result.begin(), result.end(), derivatives);
}

/** A C array of `count` entries as a vector (NULL only with 0 entries; counts must be >= 0). */
template <class Count>
vector<double> arrayOf(const double* data, Count count, int molecule, const char* name) {
    if (count < 0) {
        std::ostringstream m;
        m << "molecule " << molecule << ": " << name << " count is negative (" << count << ")";
        throwError(HESSFIT_ERROR_SIZE, m.str());
    }
    if (data == nullptr && count > 0) {
        std::ostringstream m;
        m << "molecule " << molecule << ": " << name << " is NULL with " << count << " entries";
        throwError(HESSFIT_ERROR_NULL_ARGUMENT, m.str());
    }
    return count > 0 ? vector<double>(data, data + count) : vector<double>();
}

} // namespace

extern "C" {


const char *hessfit_version(void) {
    return HESSFIT_VERSION_STRING;
}

void hessfit_version_numbers(int *major, int *minor, int *patch) {
    setOptional(major, HESSFIT_VERSION_MAJOR);
    setOptional(minor, HESSFIT_VERSION_MINOR);
    setOptional(patch, HESSFIT_VERSION_PATCH);
}

// ---- lifetime ----------------------------------------------------------------------------------

hessfit_status hessfit_force_create(hessfit_force **force) {
    if (force != nullptr)
        *force = nullptr;
    return guarded(__func__, [&]() {
        requireArg(force, "force");
        *force = newHandle(new HessianForce(), true);
    });
}

hessfit_status hessfit_force_create_from_system(const OpenMM_System *system, hessfit_force **force) {
    if (force != nullptr)
        *force = nullptr;
    return guarded(__func__, [&]() {
        requireArg(system, "system");
        requireArg(force, "force");
        HessianForce* converted = HessFit::createHessianForceFromSystem(*reinterpret_cast<const OpenMM::System*>(system));
        *force = newHandle(converted, true);
    });
}

hessfit_status hessfit_force_create_from_openmm(OpenMM_Force *openmm_force, hessfit_force **force) {
    if (force != nullptr)
        *force = nullptr;
    return guarded(__func__, [&]() {
        requireArg(openmm_force, "openmm_force");
        requireArg(force, "force");
        OpenMM::Force* base = reinterpret_cast<OpenMM::Force*>(openmm_force);
        HessianForce* hf = dynamic_cast<HessianForce*>(base);
        if (hf == nullptr)
            throwError(HESSFIT_ERROR_VALUE, "the OpenMM_Force ('" + base->getName() + "') is not a HessianForce");
        *force = newHandle(hf, false);
    });
}

void hessfit_force_destroy(hessfit_force *force) {
    if (force == nullptr)
        return;
    if (force->owned)
        delete force->force;
    delete force;
}

OpenMM_Force *hessfit_force_as_openmm(hessfit_force *force) {
    if (force == nullptr)
        return nullptr;
    return reinterpret_cast<OpenMM_Force*>(static_cast<OpenMM::Force*>(force->force));
}

hessfit_status hessfit_force_add_to_system(hessfit_force *force, OpenMM_System *system, int *force_index) {
    return guarded(__func__, [&]() {
        requireArg(force, "force");
        requireArg(system, "system");
        if (!force->owned)
            throwError(HESSFIT_ERROR_OWNERSHIP, "the force already belongs to a System (or was not created by this handle)");
        int index = reinterpret_cast<OpenMM::System*>(system)->addForce(force->force);
        force->owned = false;
        setOptional(force_index, index);
    });
}

// ---- parameter table ---------------------------------------------------------------------------

hessfit_status hessfit_force_add_parameter(hessfit_force *force, double value, int *slot) {
    return guarded(__func__, [&]() {
        int s = forceOf(force).addParameter(value);
        setOptional(slot, s);
    });
}

hessfit_status hessfit_force_get_num_parameters(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumParameters();
    });
}

hessfit_status hessfit_force_set_parameters(hessfit_force *force, const double *values, int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        requireArray(values, n, "values");
        requireSize(n, f.getNumParameters(), "values", "the number of parameter slots");
        f.setParameters(vector<double>(values, values + n));
    });
}

hessfit_status hessfit_force_get_parameters(const hessfit_force *force, double *values, int n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArray(values, n, "values");
        requireSize(n, f.getNumParameters(), "values", "the number of parameter slots");
        const vector<double>& table = f.getParameters();
        for (int i = 0; i < n; i++)
            values[i] = table[i];
    });
}

// ---- particles and molecules -------------------------------------------------------------------

hessfit_status hessfit_force_add_particle(hessfit_force *force, int charge_slot, int sigma_slot, int epsilon_slot, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addParticle(charge_slot, sigma_slot, epsilon_slot));
    });
}

hessfit_status hessfit_force_add_molecule(hessfit_force *force, const int *particles, int n, int *index) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        if (n < 0)
            throwError(HESSFIT_ERROR_SIZE, "n is negative (" + std::to_string(n) + ")");
        requireArray(particles, n, "particles");
        vector<int> list(particles, particles + n);
        setOptional(index, f.addMolecule(list));
    });
}

hessfit_status hessfit_force_get_num_particles(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumParticles();
    });
}

hessfit_status hessfit_force_get_num_molecules(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMolecules();
    });
}

/* particles may be NULL with capacity 0 to query the count in *n (success). Otherwise a capacity
 * smaller than the count fails with HESSFIT_ERROR_SIZE, still setting *n to the count. */
hessfit_status hessfit_force_get_molecule_particles(const hessfit_force *force, int molecule, int *particles, int capacity, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        if (capacity < 0)
            throwError(HESSFIT_ERROR_SIZE, "capacity is negative (" + std::to_string(capacity) + ")");
        requireArray(particles, capacity, "particles");
        vector<int> list = f.getMoleculeParticles(molecule);
        int count = (int) list.size();
        if (particles == nullptr) {
            *n = count;
            return;
        }
        if (capacity < count) {
            *n = count;
            std::ostringstream m;
            m << "molecule " << molecule << " has " << count << " particles but capacity is " << capacity;
            throwError(HESSFIT_ERROR_SIZE, m.str());
        }
        for (int i = 0; i < count; i++)
            particles[i] = list[i];
        *n = count;
    });
}

// ---- terms -------------------------------------------------------------------------------------

hessfit_status hessfit_force_add_bond(hessfit_force *force, int p1, int p2, int k_slot, int r0_slot, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addBond(p1, p2, k_slot, r0_slot)); });
}

hessfit_status hessfit_force_add_urey_bradley(hessfit_force *force, int p1, int p3, int k_slot, int r0_slot, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addUreyBradley(p1, p3, k_slot, r0_slot)); });
}

hessfit_status hessfit_force_add_angle(hessfit_force *force, int p1, int p2, int p3, int k_slot, int theta0_slot, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addAngle(p1, p2, p3, k_slot, theta0_slot)); });
}

hessfit_status hessfit_force_add_mm3_bond(hessfit_force *force, int p1, int p2, int k_slot, int r0_slot, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addMM3Bond(p1, p2, k_slot, r0_slot)); });
}

hessfit_status hessfit_force_get_mm3_bond(const hessfit_force *force, int index, int *p1, int *p2, int *k_slot, int *r0_slot) {
    return guarded(__func__, [&]() {
        int q1, q2, k, r0;
        forceOf(force).getMM3BondParameters(index, q1, q2, k, r0);
        setOptional(p1, q1);
        setOptional(p2, q2);
        setOptional(k_slot, k);
        setOptional(r0_slot, r0);
    });
}

hessfit_status hessfit_force_set_mm3_bond(hessfit_force *force, int index, int p1, int p2, int k_slot, int r0_slot) {
    return guarded(__func__, [&]() { forceOf(force).setMM3BondParameters(index, p1, p2, k_slot, r0_slot); });
}

hessfit_status hessfit_force_get_num_mm3_bonds(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMM3Bonds();
    });
}

hessfit_status hessfit_force_add_mm3_angle(hessfit_force *force, int p1, int p2, int p3, int k_slot, int theta0_slot, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addMM3Angle(p1, p2, p3, k_slot, theta0_slot)); });
}

hessfit_status hessfit_force_get_mm3_angle(const hessfit_force *force, int index, int *p1, int *p2, int *p3, int *k_slot, int *theta0_slot) {
    return guarded(__func__, [&]() {
        int q1, q2, q3, k, t0;
        forceOf(force).getMM3AngleParameters(index, q1, q2, q3, k, t0);
        setOptional(p1, q1);
        setOptional(p2, q2);
        setOptional(p3, q3);
        setOptional(k_slot, k);
        setOptional(theta0_slot, t0);
    });
}

hessfit_status hessfit_force_set_mm3_angle(hessfit_force *force, int index, int p1, int p2, int p3, int k_slot, int theta0_slot) {
    return guarded(__func__, [&]() { forceOf(force).setMM3AngleParameters(index, p1, p2, p3, k_slot, theta0_slot); });
}

hessfit_status hessfit_force_get_num_mm3_angles(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMM3Angles();
    });
}

hessfit_status hessfit_force_set_mm3_bond_distance_scale(hessfit_force *force, int index, double distance_scale) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        int p1, p2, k, r0;
        f.getMM3BondParameters(index, p1, p2, k, r0);
        f.setMM3BondParameters(index, p1, p2, k, r0, distance_scale);
    });
}

hessfit_status hessfit_force_get_mm3_bond_distance_scale(const hessfit_force *force, int index, double *distance_scale) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(distance_scale, "distance_scale");
        int p1, p2, k, r0;
        f.getMM3BondParameters(index, p1, p2, k, r0, *distance_scale);
    });
}

hessfit_status hessfit_force_add_mm3_stretch_bend(hessfit_force *force, int p1, int p2, int p3, int k_slot, int r0a_slot,
                                                  int r0b_slot, int theta0_slot, double scale_a, double scale_b, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addMM3StretchBend(p1, p2, p3, k_slot, r0a_slot, r0b_slot, theta0_slot, scale_a, scale_b));
    });
}

hessfit_status hessfit_force_get_mm3_stretch_bend(const hessfit_force *force, int index, int *p1, int *p2, int *p3,
                                                  int *k_slot, int *r0a_slot, int *r0b_slot, int *theta0_slot,
                                                  double *scale_a, double *scale_b) {
    return guarded(__func__, [&]() {
        int q1, q2, q3, k, ra, rb, t0;
        double sa, sb;
        forceOf(force).getMM3StretchBendParameters(index, q1, q2, q3, k, ra, rb, t0, sa, sb);
        setOptional(p1, q1);
        setOptional(p2, q2);
        setOptional(p3, q3);
        setOptional(k_slot, k);
        setOptional(r0a_slot, ra);
        setOptional(r0b_slot, rb);
        setOptional(theta0_slot, t0);
        setOptional(scale_a, sa);
        setOptional(scale_b, sb);
    });
}

hessfit_status hessfit_force_set_mm3_stretch_bend(hessfit_force *force, int index, int p1, int p2, int p3, int k_slot,
                                                  int r0a_slot, int r0b_slot, int theta0_slot, double scale_a,
                                                  double scale_b) {
    return guarded(__func__, [&]() {
        forceOf(force).setMM3StretchBendParameters(index, p1, p2, p3, k_slot, r0a_slot, r0b_slot, theta0_slot, scale_a, scale_b);
    });
}

hessfit_status hessfit_force_get_num_mm3_stretch_bends(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMM3StretchBends();
    });
}

hessfit_status hessfit_force_add_mm3_bend_bend(hessfit_force *force, int p1, int centre, int p3, int p4, int p5, int k_slot,
                                               int theta01_slot, int theta02_slot, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addMM3BendBend(p1, centre, p3, p4, p5, k_slot, theta01_slot, theta02_slot));
    });
}

hessfit_status hessfit_force_get_mm3_bend_bend(const hessfit_force *force, int index, int *p1, int *centre, int *p3,
                                               int *p4, int *p5, int *k_slot, int *theta01_slot, int *theta02_slot) {
    return guarded(__func__, [&]() {
        int q1, c, q3, q4, q5, k, t1, t2;
        forceOf(force).getMM3BendBendParameters(index, q1, c, q3, q4, q5, k, t1, t2);
        setOptional(p1, q1);
        setOptional(centre, c);
        setOptional(p3, q3);
        setOptional(p4, q4);
        setOptional(p5, q5);
        setOptional(k_slot, k);
        setOptional(theta01_slot, t1);
        setOptional(theta02_slot, t2);
    });
}

hessfit_status hessfit_force_set_mm3_bend_bend(hessfit_force *force, int index, int p1, int centre, int p3, int p4, int p5,
                                               int k_slot, int theta01_slot, int theta02_slot) {
    return guarded(__func__, [&]() {
        forceOf(force).setMM3BendBendParameters(index, p1, centre, p3, p4, p5, k_slot, theta01_slot, theta02_slot);
    });
}

hessfit_status hessfit_force_get_num_mm3_bend_bends(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMM3BendBends();
    });
}

hessfit_status hessfit_force_add_mm3_torsion_stretch(hessfit_force *force, int p1, int p2, int p3, int p4, int k_slot,
                                                     int r0_slot, double distance_scale, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addMM3TorsionStretch(p1, p2, p3, p4, k_slot, r0_slot, distance_scale));
    });
}

hessfit_status hessfit_force_get_mm3_torsion_stretch(const hessfit_force *force, int index, int *p1, int *p2, int *p3,
                                                     int *p4, int *k_slot, int *r0_slot, double *distance_scale) {
    return guarded(__func__, [&]() {
        int q1, q2, q3, q4, k, r0;
        double sc;
        forceOf(force).getMM3TorsionStretchParameters(index, q1, q2, q3, q4, k, r0, sc);
        setOptional(p1, q1);
        setOptional(p2, q2);
        setOptional(p3, q3);
        setOptional(p4, q4);
        setOptional(k_slot, k);
        setOptional(r0_slot, r0);
        setOptional(distance_scale, sc);
    });
}

hessfit_status hessfit_force_set_mm3_torsion_stretch(hessfit_force *force, int index, int p1, int p2, int p3, int p4,
                                                     int k_slot, int r0_slot, double distance_scale) {
    return guarded(__func__, [&]() {
        forceOf(force).setMM3TorsionStretchParameters(index, p1, p2, p3, p4, k_slot, r0_slot, distance_scale);
    });
}

hessfit_status hessfit_force_get_num_mm3_torsion_stretches(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMM3TorsionStretches();
    });
}

hessfit_status hessfit_force_add_periodic_torsion(hessfit_force *force, int p1, int p2, int p3, int p4, int periodicity, int k_slot, int phase_slot, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addPeriodicTorsion(p1, p2, p3, p4, periodicity, k_slot, phase_slot));
    });
}

hessfit_status hessfit_force_add_opls_torsion(hessfit_force *force, int p1, int p2, int p3, int p4, const int v_slots[4], int *index) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        requireArg(v_slots, "v_slots");
        setOptional(index, f.addOPLSTorsion(p1, p2, p3, p4, vector<int>(v_slots, v_slots + 4)));
    });
}

hessfit_status hessfit_force_add_rb_torsion(hessfit_force *force, int p1, int p2, int p3, int p4, const int c_slots[6], int *index) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        requireArg(c_slots, "c_slots");
        setOptional(index, f.addRBTorsion(p1, p2, p3, p4, vector<int>(c_slots, c_slots + 6)));
    });
}

hessfit_status hessfit_force_add_periodic_improper(hessfit_force *force, int p1, int p2, int p3, int p4, int periodicity, int k_slot, int phase_slot, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addPeriodicImproper(p1, p2, p3, p4, periodicity, k_slot, phase_slot));
    });
}

hessfit_status hessfit_force_add_harmonic_improper(hessfit_force *force, int p1, int p2, int p3, int p4, int k_slot, int phi0_slot, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addHarmonicImproper(p1, p2, p3, p4, k_slot, phi0_slot));
    });
}

hessfit_status hessfit_force_add_exclusion(hessfit_force *force, int p1, int p2, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addExclusion(p1, p2)); });
}

hessfit_status hessfit_force_add_pair14(hessfit_force *force, int p1, int p2, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addPair14(p1, p2)); });
}

hessfit_status hessfit_force_add_explicit_pair(hessfit_force *force, int p1, int p2, int charge_prod_slot, int sigma_slot, int epsilon_slot, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addExplicitPair(p1, p2, charge_prod_slot, sigma_slot, epsilon_slot));
    });
}

hessfit_status hessfit_force_add_mm3_pair(hessfit_force *force, int p1, int p2, int radius_slot, int epsilon_slot, int charge_prod_slot, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addMM3Pair(p1, p2, radius_slot, epsilon_slot, charge_prod_slot));
    });
}

hessfit_status hessfit_force_get_mm3_pair(const hessfit_force *force, int index, int *p1, int *p2, int *radius_slot, int *epsilon_slot, int *charge_prod_slot) {
    return guarded(__func__, [&]() {
        int q1, q2, r, e, qq;
        forceOf(force).getMM3PairParameters(index, q1, q2, r, e, qq);
        setOptional(p1, q1);
        setOptional(p2, q2);
        setOptional(radius_slot, r);
        setOptional(epsilon_slot, e);
        setOptional(charge_prod_slot, qq);
    });
}

hessfit_status hessfit_force_set_mm3_pair(hessfit_force *force, int index, int p1, int p2, int radius_slot, int epsilon_slot, int charge_prod_slot) {
    return guarded(__func__, [&]() { forceOf(force).setMM3PairParameters(index, p1, p2, radius_slot, epsilon_slot, charge_prod_slot); });
}

hessfit_status hessfit_force_get_num_mm3_pairs(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMM3Pairs();
    });
}

hessfit_status hessfit_force_add_mm3_switched_pair(hessfit_force *force, int p1, int p2, int anchor1, int anchor2,
                                                   int radius_slot, int epsilon_slot, int charge_prod_slot,
                                                   double switch_scale1, double switch_scale2, int *index) {
    return guarded(__func__, [&]() {
        setOptional(index, forceOf(force).addMM3SwitchedPair(p1, p2, anchor1, anchor2, radius_slot, epsilon_slot,
                                                             charge_prod_slot, switch_scale1, switch_scale2));
    });
}

hessfit_status hessfit_force_get_mm3_switched_pair(const hessfit_force *force, int index, int *p1, int *p2,
                                                   int *anchor1, int *anchor2, int *radius_slot, int *epsilon_slot,
                                                   int *charge_prod_slot, double *switch_scale1,
                                                   double *switch_scale2) {
    return guarded(__func__, [&]() {
        int q1, q2, a1, a2, r, e, qq;
        double s1, s2;
        forceOf(force).getMM3SwitchedPairParameters(index, q1, q2, a1, a2, r, e, qq, s1, s2);
        setOptional(p1, q1);
        setOptional(p2, q2);
        setOptional(anchor1, a1);
        setOptional(anchor2, a2);
        setOptional(radius_slot, r);
        setOptional(epsilon_slot, e);
        setOptional(charge_prod_slot, qq);
        setOptional(switch_scale1, s1);
        setOptional(switch_scale2, s2);
    });
}

hessfit_status hessfit_force_set_mm3_switched_pair(hessfit_force *force, int index, int p1, int p2, int anchor1,
                                                   int anchor2, int radius_slot, int epsilon_slot,
                                                   int charge_prod_slot, double switch_scale1, double switch_scale2) {
    return guarded(__func__, [&]() {
        forceOf(force).setMM3SwitchedPairParameters(index, p1, p2, anchor1, anchor2, radius_slot, epsilon_slot,
                                                    charge_prod_slot, switch_scale1, switch_scale2);
    });
}

hessfit_status hessfit_force_get_num_mm3_switched_pairs(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumMM3SwitchedPairs();
    });
}

hessfit_status hessfit_force_add_hydrogen_bond(hessfit_force *force, int p1, int p2, int c_slot, int d_slot, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addHydrogenBond(p1, p2, c_slot, d_slot)); });
}

hessfit_status hessfit_force_get_hydrogen_bond(const hessfit_force *force, int index, int *p1, int *p2, int *c_slot,
                                               int *d_slot) {
    return guarded(__func__, [&]() {
        int q1, q2, c, d;
        forceOf(force).getHydrogenBondParameters(index, q1, q2, c, d);
        setOptional(p1, q1);
        setOptional(p2, q2);
        setOptional(c_slot, c);
        setOptional(d_slot, d);
    });
}

hessfit_status hessfit_force_set_hydrogen_bond(hessfit_force *force, int index, int p1, int p2, int c_slot, int d_slot) {
    return guarded(__func__, [&]() { forceOf(force).setHydrogenBondParameters(index, p1, p2, c_slot, d_slot); });
}

hessfit_status hessfit_force_get_num_hydrogen_bonds(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumHydrogenBonds();
    });
}

hessfit_status hessfit_force_create_exclusions_from_bonds(hessfit_force *force, const int *bonds, int n_bonds) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        if (n_bonds < 0)
            throwError(HESSFIT_ERROR_SIZE, "n_bonds is negative (" + std::to_string(n_bonds) + ")");
        requireArray(bonds, n_bonds, "bonds");
        vector<std::pair<int, int> > list(n_bonds);
        for (int i = 0; i < n_bonds; i++)
            list[i] = std::make_pair(bonds[2 * i], bonds[2 * i + 1]);
        f.createExclusionsFromBonds(list);
    });
}

hessfit_status hessfit_force_add_reduced_particle(hessfit_force *force, int particle, int partner, double factor, int *index) {
    return guarded(__func__, [&]() { setOptional(index, forceOf(force).addReducedParticle(particle, partner, factor)); });
}

hessfit_status hessfit_force_get_reduced_particle(const hessfit_force *force, int index, int *particle, int *partner, double *factor) {
    return guarded(__func__, [&]() {
        int h, p;
        double f;
        forceOf(force).getReducedParticleParameters(index, h, p, f);
        setOptional(particle, h);
        setOptional(partner, p);
        setOptional(factor, f);
    });
}

hessfit_status hessfit_force_set_reduced_particle(hessfit_force *force, int index, int particle, int partner, double factor) {
    return guarded(__func__, [&]() { forceOf(force).setReducedParticleParameters(index, particle, partner, factor); });
}

hessfit_status hessfit_force_get_num_reduced_particles(const hessfit_force *force, int *n) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(n, "n");
        *n = f.getNumReducedParticles();
    });
}

hessfit_status hessfit_force_set_combining_rule(hessfit_force *force, hessfit_combining_rule rule) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        if (rule != HESSFIT_COMBINE_GEOMETRIC && rule != HESSFIT_COMBINE_LORENTZ_BERTHELOT)
            throwError(HESSFIT_ERROR_VALUE, "unknown combining rule " + std::to_string((int) rule));
        f.setCombiningRule(rule == HESSFIT_COMBINE_GEOMETRIC ? HessianForce::Geometric : HessianForce::LorentzBerthelot);
    });
}

hessfit_status hessfit_force_set_14_scales(hessfit_force *force, double coulomb14_scale, double lj14_scale) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        // Set both or neither: validate on a scratch force first.
        HessianForce check;
        check.setCoulomb14Scale(coulomb14_scale);
        check.setLJ14Scale(lj14_scale);
        f.setCoulomb14Scale(coulomb14_scale);
        f.setLJ14Scale(lj14_scale);
    });
}

// ---- reading a Context -------------------------------------------------------------------------

hessfit_status hessfit_force_update_parameters_in_context(hessfit_force *force, OpenMM_Context *context) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        f.updateParametersInContext(c);
    });
}

hessfit_status hessfit_force_get_energy_forces(hessfit_force *force, OpenMM_Context *context, double *energy, double *forces) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArg(energy, "energy");
        if (!contextHasForce(c, f))
            throwError(HESSFIT_ERROR_NOT_IN_CONTEXT, "the force is not part of the Context's System");
        int types = OpenMM::State::Energy | (forces != nullptr ? OpenMM::State::Forces : 0);
        int groups = (int) (1u << (unsigned) f.getForceGroup());
        OpenMM::State state = c.getState(types, false, groups);
        if (forces != nullptr) {
            const vector<OpenMM::Vec3>& fv = state.getForces();
            for (size_t i = 0; i < fv.size(); i++)
                for (int k = 0; k < 3; k++)
                    forces[3 * i + k] = fv[i][k];
        }
        *energy = state.getPotentialEnergy();
    });
}

hessfit_status hessfit_force_get_hessian_size(const hessfit_force *force, long long *size) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(size, "size");
        *size = f.getHessianSize();
    });
}

hessfit_status hessfit_force_get_hessian_block_offset(const hessfit_force *force, int molecule, long long *offset) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(offset, "offset");
        *offset = f.getHessianBlockOffset(molecule);
    });
}

hessfit_status hessfit_force_get_hessian_blocks(hessfit_force *force, OpenMM_Context *context, double *blocks, long long size) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        long long expected = f.getHessianSize();
        requireArray(blocks, size, "blocks");
        requireSize(size, expected, "blocks", "the Hessian size, sum over molecules of (3 n_m)^2");
        vector<double>& result = force->hessian;
        f.getHessianBlocks(c, result);
        if ((long long) result.size() != expected) {
            std::ostringstream m;
            m << "internal error: the kernel returned " << result.size() << " Hessian entries, expected " << expected;
            throwError(HESSFIT_ERROR_OPENMM, m.str());
        }
        std::copy(result.begin(), result.end(), blocks);
    });
}

hessfit_status hessfit_force_get_parameter_derivatives(hessfit_force *force, OpenMM_Context *context, double *derivatives, int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArray(derivatives, n, "derivatives");
        requireSize(n, f.getNumParameters(), "derivatives", "the number of parameter slots");
        vector<double> result;
        f.getParameterDerivatives(c, result);
        if ((long long) result.size() != n) {
            std::ostringstream m;
            m << "internal error: the kernel returned " << result.size() << " derivatives, expected " << n;
            throwError(HESSFIT_ERROR_OPENMM, m.str());
        }
        std::copy(result.begin(), result.end(), derivatives);
    });
}

// ---- adjoint contractions -----------------------------------------------------------------------

hessfit_status hessfit_force_get_hessian_contraction_derivatives(hessfit_force *force, OpenMM_Context *context,
                                                                 const double *adjoint, long long size,
                                                                 double *derivatives, int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArray(adjoint, size, "adjoint");
        requireArray(derivatives, n, "derivatives");
        requireSize(size, f.getHessianSize(), "adjoint", "the Hessian size, sum over molecules of (3 n_m)^2");
        requireSize(n, f.getNumParameters(), "derivatives", "the number of parameter slots");
        vector<double>& g = force->adjoint;
        g.assign(adjoint, adjoint + size);
        vector<double> result;
        f.getHessianContractionDerivatives(c, g, result);
        copyDerivatives(result, derivatives, n);
    });
}

hessfit_status hessfit_force_get_gradient_contraction_derivatives(hessfit_force *force, OpenMM_Context *context,
                                                                  const double *y, int n_y,
                                                                  double *derivatives, int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArray(y, n_y, "y");
        requireArray(derivatives, n, "derivatives");
        requireSize(n_y, 3LL * f.getNumParticles(), "y", "3 * the number of particles");
        requireSize(n, f.getNumParameters(), "derivatives", "the number of parameter slots");
        vector<double> result;
        f.getGradientContractionDerivatives(c, vector<double>(y, y + n_y), result);
        copyDerivatives(result, derivatives, n);
    });
}

// ---- per-molecule energies -----------------------------------------------------------------------

hessfit_status hessfit_force_get_molecule_energies(hessfit_force *force, OpenMM_Context *context, double *energies, int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArray(energies, n, "energies");
        requireSize(n, f.getNumMolecules(), "energies", "the number of molecules");
        vector<double> result;
        f.getMoleculeEnergies(c, result);
        if ((long long) result.size() != n) {
            std::ostringstream m;
            m << "internal error: the kernel returned " << result.size() << " molecule energies, expected " << n;
            throwError(HESSFIT_ERROR_OPENMM, m.str());
        }
        std::copy(result.begin(), result.end(), energies);
    });
}

hessfit_status hessfit_force_get_molecule_energy_derivatives(hessfit_force *force, OpenMM_Context *context,
                                                             const double *weights, int n_weights,
                                                             double *derivatives, int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArray(weights, n_weights, "weights");
        requireArray(derivatives, n, "derivatives");
        requireSize(n_weights, f.getNumMolecules(), "weights", "the number of molecules");
        requireSize(n, f.getNumParameters(), "derivatives", "the number of parameter slots");
        vector<double> result;
        f.getMoleculeEnergyDerivatives(c, vector<double>(weights, weights + n_weights), result);
        copyDerivatives(result, derivatives, n);
    });
}

// ---- Hessian-space objectives -------------------------------------------------------------------

void hessfit_molecule_objective_init(hessfit_molecule_objective *molecule) {
    if (molecule == nullptr)
        return;
    *molecule = hessfit_molecule_objective();
    molecule->frequency_pairing = HESSFIT_NO_FREQUENCIES;
    molecule->frequency_threshold = 50.0;
}

hessfit_status hessfit_force_set_hessian_objective(hessfit_force *force, OpenMM_Context *context,
                                                   const hessfit_molecule_objective *molecules, int n_molecules,
                                                   double frequency_factor) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        if (n_molecules < 0)
            throwError(HESSFIT_ERROR_SIZE, "n_molecules is negative (" + std::to_string(n_molecules) + ")");
        requireArray(molecules, n_molecules, "molecules");
        HessFit::HessianObjectiveSpec spec;
        spec.frequencyFactor = frequency_factor;
        spec.molecules.resize(n_molecules);
        for (int i = 0; i < n_molecules; i++) {
            const hessfit_molecule_objective& src = molecules[i];
            HessFit::HessianObjectiveSpec::Molecule& dst = spec.molecules[i];
            dst.masses = arrayOf(src.masses, src.n_masses, i, "masses");
            dst.frequencyPairing = (HessFit::HessianObjectiveSpec::FrequencyPairing) src.frequency_pairing;
            dst.projectExternal = src.project_external != 0;
            dst.frequencyTargets = arrayOf(src.frequency_targets, src.n_frequency_targets, i, "frequency_targets");
            dst.frequencyWeights = arrayOf(src.frequency_weights, src.n_frequency_weights, i, "frequency_weights");
            dst.frequencyThreshold = src.frequency_threshold;
            dst.frequencyVectors = arrayOf(src.frequency_vectors, src.n_frequency_vectors, i, "frequency_vectors");
            dst.eigenVectors = arrayOf(src.eigen_vectors, src.n_eigen_vectors, i, "eigen_vectors");
            dst.eigenTargets = arrayOf(src.eigen_targets, src.n_eigen_targets, i, "eigen_targets");
            dst.eigenWeights = arrayOf(src.eigen_weights, src.n_eigen_weights, i, "eigen_weights");
            dst.hessianTargets = arrayOf(src.hessian_targets, src.n_hessian_targets, i, "hessian_targets");
            dst.hessianWeights = arrayOf(src.hessian_weights, src.n_hessian_weights, i, "hessian_weights");
        }
        f.setHessianObjective(c, spec);
    });
}

hessfit_status hessfit_force_compute_hessian_objective(hessfit_force *force, OpenMM_Context *context, double *loss,
                                                       double *dLdslot, int n, double *residuals, long long n_res) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArg(loss, "loss");
        requireArray(dLdslot, n, "dLdslot");
        requireArray(residuals, n_res, "residuals");
        if (dLdslot != nullptr)
            requireSize(n, f.getNumParameters(), "dLdslot", "the number of parameter slots");
        if (residuals != nullptr)
            requireSize(n_res, f.getHessianObjectiveNumResiduals(c), "residuals", "the objective's residual count");
        vector<double>* res = residuals != nullptr ? &force->objectiveResiduals : nullptr;
        double value;
        if (dLdslot != nullptr) {
            value = f.computeHessianObjective(c, force->objectiveGradient, res);
            copyDerivatives(force->objectiveGradient, dLdslot, n);
        } else {
            value = f.computeHessianObjective(c, res);
        }
        if (res != nullptr) {
            if ((long long) res->size() != n_res) {
                std::ostringstream m;
                m << "internal error: the kernel returned " << res->size() << " residuals, expected " << n_res;
                throwError(HESSFIT_ERROR_OPENMM, m.str());
            }
            std::copy(res->begin(), res->end(), residuals);
        }
        *loss = value;
    });
}

hessfit_status hessfit_force_set_hessian_objective_gradient_slots(hessfit_force *force, OpenMM_Context *context,
                                                                  const int *slots, int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArray(slots, n, "slots");
        if (n < 0)
            throwError(HESSFIT_ERROR_SIZE, "wrong size of 'slots': " + std::to_string(n) + " is negative");
        f.setHessianObjectiveGradientSlots(c, vector<int>(slots, slots + (slots != nullptr ? n : 0)));
    });
}

hessfit_status hessfit_force_get_hessian_objective_size(hessfit_force *force, OpenMM_Context *context,
                                                        long long *n_residuals, int *n_frequency_targets) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        const long long count = f.getHessianObjectiveNumResiduals(c);
        int targets = 0;
        if (count > 0) {
            vector<int> modes;
            f.getHessianObjectivePairing(c, modes);
            targets = (int) modes.size();
        }
        setOptional(n_residuals, count);
        setOptional(n_frequency_targets, targets);
    });
}

hessfit_status hessfit_force_get_hessian_objective_pairing(hessfit_force *force, OpenMM_Context *context, int *modes,
                                                           int n) {
    return guarded(__func__, [&]() {
        HessianForce& f = forceOf(force);
        OpenMM::Context& c = contextOf(context);
        requireArray(modes, n, "modes");
        vector<int> result;
        f.getHessianObjectivePairing(c, result);
        requireSize(n, (long long) result.size(), "modes", "the objective's frequency target count");
        std::copy(result.begin(), result.end(), modes);
    });
}

/** The body of the two Jacobian calls (throws): the checks, the call, the copies out. */
static void computeJacobians(hessfit_force *force, OpenMM_Context *context, const int *molecules, int n_molecules,
                             const int *slots, int n_slots, double *residuals, long long n_res, double *jacobian,
                             long long n_jac) {
    HessianForce& f = forceOf(force);
    OpenMM::Context& c = contextOf(context);
    requireArray(molecules, n_molecules, "molecules");
    requireArray(slots, n_slots, "slots");
    requireArray(residuals, n_res, "residuals");
    requireArray(jacobian, n_jac, "jacobian");
    const vector<int> listed(molecules, molecules + (molecules != nullptr && n_molecules > 0 ? n_molecules : 0));
    const vector<int> wanted(slots, slots + (slots != nullptr ? n_slots : 0));
    vector<double> res, jac;
    f.computeHessianObjectiveJacobian(c, listed, wanted, res, jac);
    requireSize(n_res, (long long) res.size(), "residuals",
                n_molecules == 1 ? "the molecule's residual count" : "the listed molecules' residual count");
    requireSize(n_jac, (long long) jac.size(), "jacobian",
                n_molecules == 1 ? "the molecule's residual count times the slots wanted"
                                 : "the listed molecules' residual count times the slots wanted");
    std::copy(res.begin(), res.end(), residuals);
    std::copy(jac.begin(), jac.end(), jacobian);
}

hessfit_status hessfit_force_compute_hessian_objective_jacobian(hessfit_force *force, OpenMM_Context *context, int molecule,
                                                                const int *slots, int n_slots, double *residuals,
                                                                long long n_res, double *jacobian, long long n_jac) {
    return guarded(__func__, [&]() {
        computeJacobians(force, context, &molecule, 1, slots, n_slots, residuals, n_res, jacobian, n_jac);
    });
}

hessfit_status hessfit_force_compute_hessian_objective_jacobians(hessfit_force *force, OpenMM_Context *context,
                                                                 const int *molecules, int n_molecules, const int *slots,
                                                                 int n_slots, double *residuals, long long n_res,
                                                                 double *jacobian, long long n_jac) {
    return guarded(__func__, [&]() {
        computeJacobians(force, context, molecules, n_molecules, slots, n_slots, residuals, n_res, jacobian, n_jac);
    });
}

// ---- checking, Context creation, serialization -----------------------------------------------------

hessfit_status hessfit_force_validate(const hessfit_force *force, const OpenMM_System *system) {
    return guarded(__func__, [&]() {
        const HessianForce& f = forceOf(force);
        requireArg(system, "system");
        HessFit::HessianForceImpl::validate(f, reinterpret_cast<const OpenMM::System*>(system)->getNumParticles());
    });
}

hessfit_status hessfit_context_create(const OpenMM_System *system, OpenMM_Integrator *integrator,
                                      const char *platform_name, const char *precision, OpenMM_Context **context) {
    return hessfit_context_create_on_device(system, integrator, platform_name, precision, -1, context);
}

hessfit_status hessfit_context_create_on_device(const OpenMM_System *system, OpenMM_Integrator *integrator,
                                                const char *platform_name, const char *precision, int device_index,
                                                OpenMM_Context **context) {
    if (context != nullptr)
        *context = nullptr;
    return guarded(__func__, [&]() {
        requireArg(system, "system");
        requireArg(integrator, "integrator");
        requireArg(context, "context");
        if (device_index < -1 || (device_index >= 0 && platform_name == nullptr))
            throwError(HESSFIT_ERROR_INVALID_ARGUMENT, "device index " + std::to_string(device_index) +
                                                           (device_index < -1 ? ": must be >= 0, or -1 for the platform's choice"
                                                                              : " without a platform name"));
        const OpenMM::System& s = *reinterpret_cast<const OpenMM::System*>(system);
        OpenMM::Integrator& i = *reinterpret_cast<OpenMM::Integrator*>(integrator);
        OpenMM::Context* created;
        try {
            if (platform_name == nullptr) {
                created = new OpenMM::Context(s, i);
            } else {
                OpenMM::Platform& platform = OpenMM::Platform::getPlatformByName(platform_name);
                std::map<string, string> properties;
                const vector<string>& names = platform.getPropertyNames();
                const auto has = [&](const char* name) { return std::find(names.begin(), names.end(), name) != names.end(); };
                if (precision != nullptr && has("Precision"))
                    properties["Precision"] = precision;
                if (device_index >= 0 && !has("DeviceIndex"))
                    throwError(HESSFIT_ERROR_INVALID_ARGUMENT, string("device index ") + std::to_string(device_index) +
                                                                   ": the " + platform_name + " platform has no devices to choose from");
                if (device_index >= 0)
                    properties["DeviceIndex"] = std::to_string(device_index);
                created = new OpenMM::Context(s, i, platform, properties);
            }
        } catch (const HessianForceException&) {
            throw; /* keeps its own status (guarded) */
        } catch (const OpenMM::OpenMMException& e) {
            throwError(HESSFIT_ERROR_OPENMM, withKernelHint(e.what()));
        }
        *context = reinterpret_cast<OpenMM_Context*>(created);
    });
}

hessfit_status hessfit_system_deserialize(const char *xml, OpenMM_System **system) {
    if (system != nullptr)
        *system = nullptr;
    return guarded(__func__, [&]() {
        requireArg(xml, "xml");
        requireArg(system, "system");
        std::istringstream in(xml);
        OpenMM::System* read = OpenMM::XmlSerializer::deserialize<OpenMM::System>(in);
        *system = reinterpret_cast<OpenMM_System*>(read);
    });
}

hessfit_status hessfit_context_minimize(OpenMM_Context *context, double tolerance, int max_iterations) {
    return guarded(__func__, [&]() {
        OpenMM::Context& c = contextOf(context);
        if (!(tolerance > 0.0 && tolerance <= 1e300) || max_iterations < 0) {
            std::ostringstream m;
            m << "tolerance " << tolerance << " must be finite and > 0, max_iterations " << max_iterations
              << " must be >= 0";
            throwError(HESSFIT_ERROR_VALUE, m.str());
        }
        OpenMM::LocalEnergyMinimizer::minimize(c, tolerance, max_iterations);
    });
}

} // extern "C"
