/*
 * The Python module of hessfit: HessianForce as an openmm.Force, built the way OpenMM's plugins
 * build theirs (SWIG against the interface files of the OpenMM wheel, openmm's SWIG module
 * %import-ed, so System.addForce takes a HessianForce and XmlSerializer round-trips it).
 *
 * Generated into the package hessfit as hessfit_swig.py + _hessfit_swig*.so; hessfit/__init__.py
 * loads the kernel plugins and re-exports what is here. The SWIG runtime must be the one of
 * openmm's own wrapper (SWIG_RUNTIME_VERSION "5", SWIG >= 4.4; wrappers/python/CMakeLists.txt
 * checks it), or the two modules cannot pass objects to each other.
 *
 * Python types: every array an argument takes may be any sequence or NumPy array (flattened in C
 * order; doubles may carry openmm.unit units, which are stripped to OpenMM's units); every array
 * a method fills comes back as a new 1-D numpy.ndarray of float64; C++ output references
 * (int&, double&) come back as return values (a tuple when there are several). C++ exceptions
 * become Python exceptions (hessfit/_errors.py): HessianForceException carries its code, and
 * other OpenMM errors are openmm.OpenMMException, each with the C++ message.
 */
%module(package="hessfit", docstring="hessfit's SWIG layer; import hessfit instead.") hessfit_swig

%import(module="openmm") "swig/OpenMMSwigHeaders.i"
%include "swig/typemaps.i"
%include "typemaps.i"
%include "std_string.i"

%{
#define SWIG_FILE_WITH_INIT
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "HessianForce.h"
#include "HessianForceConverter.h"
#include "HessianForceException.h"
#include "HessianObjective.h"
#include "OpenMM.h"
#include "OpenMMAmoeba.h"  /* every Force class openmm's SWIG headers declare */
#include "OpenMMDrude.h"
#include "openmm/RPMDIntegrator.h"
#include "openmm/RPMDMonteCarloBarostat.h"
#include "hessfit_status.h"
#include "hessfit_units.h"
#include "hessfit_vib.h"

#include <climits>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

/* A failed call of hessfit's C layer (hessfit_status, whose codes 1-9 are those of
 * HessianForceException), carried to the %exception handler below. */
struct HessfitStatusError : std::runtime_error {
    int code;
    HessfitStatusError(int code, const std::string& message) : std::runtime_error(message), code(code) {}
};

/* Raise hessfit._errors.make_error(code, message) (a HessianForceException of the code's class). */
static void hf_raise(int code, const char* message) {
    PyObject* module = PyImport_ImportModule("hessfit._errors");
    if (module == NULL)
        return;
    PyObject* exc = PyObject_CallMethod(module, "make_error", "is", code, message);
    Py_DECREF(module);
    if (exc == NULL)
        return;
    PyErr_SetObject((PyObject*) Py_TYPE(exc), exc);
    Py_DECREF(exc);
}

/* Raise openmm.OpenMMException(message), as openmm's own wrapper does for OpenMM's C++ errors. */
static void hf_raise_openmm(const char* message) {
    PyObject* module = PyImport_ImportModule("openmm");
    PyObject* cls = module != NULL ? PyObject_GetAttrString(module, "OpenMMException") : NULL;
    Py_XDECREF(module);
    PyErr_Clear();
    PyErr_SetString(cls != NULL ? cls : PyExc_Exception, message);
    Py_XDECREF(cls);
}

/* ---- NumPy <-> std::vector ------------------------------------------------------------------ */
static PyObject* hf_to_numpy(const std::vector<double>& v) {
    npy_intp n = (npy_intp) v.size();
    PyObject* a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (a != NULL && n > 0)
        std::memcpy(PyArray_DATA((PyArrayObject*) a), v.data(), v.size() * sizeof(double));
    return a;
}

static PyObject* hf_to_list(const std::vector<int>& v) {
    PyObject* list = PyList_New((Py_ssize_t) v.size());
    for (size_t i = 0; list != NULL && i < v.size(); i++)
        PyList_SET_ITEM(list, (Py_ssize_t) i, PyLong_FromLong(v[i]));
    return list;
}

/* Any array-like of real numbers (units stripped) -> doubles in C order. `anyShape`: a matrix is
 * taken flattened in C order (Hessian-layout arguments); otherwise it must be 1-D. False with a
 * TypeError or ValueError naming the argument. */
static bool hf_from_numpy(PyObject* input, std::vector<double>& out, const char* name, bool anyShape) {
    PyObject* stripped = Py_StripOpenMMUnits(input);
    if (stripped == NULL)
        return false;
    PyArrayObject* a = (PyArrayObject*) PyArray_FROMANY(stripped, NPY_DOUBLE, 0, 0, NPY_ARRAY_IN_ARRAY);
    Py_DECREF(stripped);
    if (a == NULL) {
        PyErr_Format(PyExc_TypeError, "%s must be an array of real numbers", name);
        return false;
    }
    bool ok = PyArray_NDIM(a) == 1 || (anyShape && PyArray_NDIM(a) > 1);
    if (!ok)
        PyErr_Format(PyArray_NDIM(a) == 0 ? PyExc_TypeError : PyExc_ValueError,
                     "%s must be a 1-D array, not of %d dimensions", name, PyArray_NDIM(a));
    else
        out.assign((const double*) PyArray_DATA(a), (const double*) PyArray_DATA(a) + PyArray_SIZE(a));
    Py_DECREF(a);
    return ok;
}

/* Any array-like of integers (bool and floats refused) -> ints in C order; `width` > 0 requires
 * shape (n, width), otherwise it must be 1-D. */
static bool hf_ints_from_numpy(PyObject* input, std::vector<int>& out, const char* name, int width) {
    PyArrayObject* a = (PyArrayObject*) PyArray_FROM_O(input);
    if (a == NULL)
        return false;
    bool ok = true;
    if (PyArray_NDIM(a) == 0) {
        PyErr_Format(PyExc_TypeError, "%s must be an array, not a scalar", name);
        ok = false;
    } else if (PyArray_SIZE(a) > 0 && (!PyArray_ISINTEGER(a) || PyArray_ISBOOL(a))) {
        PyErr_Format(PyExc_TypeError, "%s must hold integers (particle or slot indices)", name);
        ok = false;
    } else if (PyArray_SIZE(a) > 0 && (width > 0 ? PyArray_NDIM(a) != 2 || PyArray_DIM(a, 1) != width
                                                 : PyArray_NDIM(a) != 1)) {
        if (width > 0)
            PyErr_Format(PyExc_ValueError, "%s must have shape (n, %d)", name, width);
        else
            PyErr_Format(PyExc_ValueError, "%s must be a 1-D array", name);
        ok = false;
    }
    PyArrayObject* wide = ok ? (PyArrayObject*) PyArray_FROMANY((PyObject*) a, NPY_INT64, 0, 0,
                                                                NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST) : NULL;
    Py_DECREF(a);
    if (wide == NULL)
        return false;
    const long long* data = (const long long*) PyArray_DATA(wide);
    out.clear();
    for (npy_intp i = 0; ok && i < PyArray_SIZE(wide); i++) {
        if (data[i] < INT_MIN || data[i] > INT_MAX) {
            PyErr_Format(PyExc_OverflowError, "%s[%zd] = %lld does not fit in an int", name, (Py_ssize_t) i, data[i]);
            ok = false;
        } else {
            out.push_back((int) data[i]);
        }
    }
    Py_DECREF(wide);
    return ok;
}
%}

%init %{
    import_array();
%}

/* ---- exceptions ------------------------------------------------------------------------------ */
%exception {
    try {
        $action
    } catch (const HessFit::HessianForceException& e) {
        hf_raise((int) e.getCode(), e.what());
        SWIG_fail;
    } catch (const HessfitStatusError& e) {
        hf_raise(e.code, e.what());
        SWIG_fail;
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
        SWIG_fail;
    } catch (const std::exception& e) {
        hf_raise_openmm(e.what());
        SWIG_fail;
    }
}

/* A Python error already set by a conversion inside _setHessianObjective stays as it is. */
%exception HessFit::HessianForce::_setHessianObjective {
    try {
        $action
    } catch (const HessFit::HessianForceException& e) {
        hf_raise((int) e.getCode(), e.what());
        SWIG_fail;
    } catch (const std::invalid_argument& e) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, e.what());
        SWIG_fail;
    } catch (const std::exception& e) {
        hf_raise_openmm(e.what());
        SWIG_fail;
    }
}

%exception HessFit::HessianForce::cast {
    try {
        $action
    } catch (const std::bad_cast&) {
        PyErr_SetString(PyExc_TypeError, "the force is not a HessianForce");
        SWIG_fail;
    }
}

/* ---- typemaps -------------------------------------------------------------------------------- */
/* every non-const int& / double& of this module is an output */
%apply int& OUTPUT { int& };
%apply double& OUTPUT { double& };

/* array inputs */
%typemap(in) const std::vector<double>& (std::vector<double> hf_doubles) {
    if (!hf_from_numpy($input, hf_doubles, "$1_name", false))
        SWIG_fail;
    $1 = &hf_doubles;
}
/* Hessian-layout arrays may be given as matrices (flattened in C order) */
%typemap(in) const std::vector<double>& adjoint (std::vector<double> hf_doubles),
             const std::vector<double>& hessian (std::vector<double> hf_doubles) {
    if (!hf_from_numpy($input, hf_doubles, "$1_name", true))
        SWIG_fail;
    $1 = &hf_doubles;
}
%typemap(typecheck, precedence=SWIG_TYPECHECK_DOUBLE_ARRAY) const std::vector<double>& {
    $1 = PySequence_Check($input) || PyArray_Check($input) ? 1 : 0;
}
%typemap(in) const std::vector<int>& (std::vector<int> hf_ints) {
    if (!hf_ints_from_numpy($input, hf_ints, "$1_name", 0))
        SWIG_fail;
    $1 = &hf_ints;
}
%typemap(typecheck, precedence=SWIG_TYPECHECK_INT32_ARRAY) const std::vector<int>& {
    $1 = PySequence_Check($input) || PyArray_Check($input) ? 1 : 0;
}
%typemap(in) const std::vector<std::pair<int, int> >& (std::vector<std::pair<int, int> > pairs) {
    std::vector<int> flat;
    if (!hf_ints_from_numpy($input, flat, "$1_name", 2))
        SWIG_fail;
    for (size_t i = 0; i + 1 < flat.size(); i += 2)
        pairs.push_back(std::make_pair(flat[i], flat[i + 1]));
    $1 = &pairs;
}

/* array outputs: a non-const vector reference becomes a return value */
%typemap(in, numinputs=0) std::vector<double>& (std::vector<double> temp) {
    $1 = &temp;
}
%typemap(argout) std::vector<double>& {
    %append_output(hf_to_numpy(*$1));
}
%typemap(in, numinputs=0) std::vector<int>& (std::vector<int> temp) {
    $1 = &temp;
}
%typemap(argout) std::vector<int>& {
    %append_output(hf_to_list(*$1));
}
%typemap(argout) const std::vector<double>& "";
%typemap(argout) const std::vector<int>& "";
%typemap(out) const std::vector<double>& {
    $result = hf_to_numpy(*$1);
}
%typemap(out) std::vector<int> {
    $result = hf_to_list($1);
}

/* ---- HessianForce ---------------------------------------------------------------------------- */
#define OPENMM_EXPORT_HESSFIT

/* Overloads Python cannot tell apart, or that take C++ structs: wrapped by the %extend below. */
%ignore HessFit::HessianForce::getMM3BondParameters(int, int&, int&, int&, int&) const;
%ignore HessFit::HessianForce::setHessianObjective;
%ignore HessFit::HessianForce::computeHessianObjective;
%rename(computeHessianObjective) HessFit::HessianForce::computeHessianObjectiveTuple;
%ignore HessFit::HessianForce::createImpl;

%newobject HessFit::createHessianForceFromSystem;
%feature("docstring") HessFit::createHessianForceFromSystem
"createHessianForceFromSystem(system) -> HessianForce

A new HessianForce whose energy equals that of the System's stock forces (HarmonicBondForce,
HarmonicAngleForce with k/2 -> k, PeriodicTorsionForce, RBTorsionForce, NonbondedForce with
NoCutoff; CMMotionRemover ignored). The System is not changed. Raises HessianForceException
(Unsupported) naming every force or setting it cannot represent.";

%include "HessianForce.h"
%include "HessianForceConverter.h"

%extend HessFit::HessianForce {
    %feature("docstring") cast "cast(force) -> HessianForce

The HessianForce behind an openmm.Force read back from a System (System.getForce returns the
base class for plugin forces). Raises TypeError when the force is not a HessianForce.";
    static HessFit::HessianForce* cast(OpenMM::Force* force) {
        HessFit::HessianForce* hessian = dynamic_cast<HessFit::HessianForce*>(force);
        if (hessian == NULL)
            throw std::bad_cast();
        return hessian;
    }
    %feature("docstring") isinstance "isinstance(force) -> bool

Whether an openmm.Force is a HessianForce (HessianForce.cast would succeed).";
    static bool isinstance(OpenMM::Force* force) {
        return dynamic_cast<HessFit::HessianForce*>(force) != NULL;
    }

    %feature("docstring") computeHessianObjectiveTuple "computeHessianObjective(context, gradient=True) -> (loss, dLdslot, residuals)

Evaluate the Context's Hessian-space objective (set by setHessianObjective) for all molecules in
one kernel call: loss L = sum r_i^2, dL/dslot for every slot (None when gradient is False) and
the residuals r_i, as NumPy arrays.";
    PyObject* computeHessianObjectiveTuple(OpenMM::Context& context, bool gradient = true) const {
        std::vector<double> dLdslot, residuals;
        double loss = gradient ? $self->computeHessianObjective(context, dLdslot, &residuals)
                               : $self->computeHessianObjective(context, &residuals);
        PyObject* d = gradient ? hf_to_numpy(dLdslot) : (Py_INCREF(Py_None), Py_None);
        return Py_BuildValue("(dNN)", loss, d, hf_to_numpy(residuals));
    }

    %feature("docstring") _setHessianObjective "Use setHessianObjective (hessfit/objective.py).";
    void _setHessianObjective(OpenMM::Context& context, PyObject* molecules, double frequencyFactor) const {
        HessFit::HessianObjectiveSpec spec;
        spec.frequencyFactor = frequencyFactor;
        if (!PyList_Check(molecules))
            throw std::invalid_argument("molecules must be a list");
        for (Py_ssize_t m = 0; m < PyList_GET_SIZE(molecules); m++) {
            PyObject* item = PyList_GET_ITEM(molecules, m);
            HessFit::HessianObjectiveSpec::Molecule mol;
            std::vector<double>* arrays[] = {&mol.masses, &mol.frequencyTargets, &mol.frequencyWeights,
                &mol.frequencyVectors, &mol.eigenVectors, &mol.eigenTargets, &mol.eigenWeights,
                &mol.hessianTargets, &mol.hessianWeights};
            const char* names[] = {"masses", "frequencyTargets", "frequencyWeights", "frequencyVectors",
                "eigenVectors", "eigenTargets", "eigenWeights", "hessianTargets", "hessianWeights"};
            for (int k = 0; k < 9; k++) {
                PyObject* value = PyObject_GetAttrString(item, names[k]);
                bool ok = value != NULL && hf_from_numpy(value, *arrays[k], names[k], true);
                Py_XDECREF(value);
                if (!ok)
                    throw std::invalid_argument("");  /* the Python error is already set */
            }
            PyObject* pairing = PyObject_GetAttrString(item, "frequencyPairing");
            PyObject* project = PyObject_GetAttrString(item, "projectExternal");
            PyObject* threshold = PyObject_GetAttrString(item, "frequencyThreshold");
            bool ok = pairing != NULL && project != NULL && threshold != NULL;
            if (ok) {
                mol.frequencyPairing = (HessFit::HessianObjectiveSpec::FrequencyPairing) PyLong_AsLong(pairing);
                mol.projectExternal = PyObject_IsTrue(project) == 1;
                mol.frequencyThreshold = PyFloat_AsDouble(threshold);
                ok = PyErr_Occurred() == NULL;
            }
            Py_XDECREF(pairing);
            Py_XDECREF(project);
            Py_XDECREF(threshold);
            if (!ok)
                throw std::invalid_argument("");
            spec.molecules.push_back(mol);
        }
        $self->setHessianObjective(context, spec);
    }
}

/* ---- the fitting layer's vibrational analysis (fitting/hessian/hf_vib.c) --------------------- */
%inline %{
/** cm^-1 per sqrt(kJ/mol/nm^2/amu): nu = sign(l) F sqrt(|l|) for an eigenvalue l of a mass-weighted
 *  OpenMM Hessian (hessfit_frequency_factor_kj_mol_nm2_amu of hessfit_units.h). */
double frequencyFactor() {
    return hessfit_frequency_factor_kj_mol_nm2_amu();
}

/** hessfit_vib_analyse on one (3n)^2 Hessian in kJ/mol/nm^2 (masses in amu, coordinates in nm):
 *  all 3n frequencies (cm^-1, ascending eigenvalues), the mass-weighted modes (rows) and the
 *  number of external coordinates projected out. */
void _vibAnalyse(const std::vector<double>& hessian, const std::vector<double>& masses,
                 const std::vector<double>& coordinates, bool project, std::vector<double>& frequencies,
                 std::vector<double>& modes, int& numExternal) {
    size_t n = masses.size(), dim = 3 * n;
    if (n == 0 || hessian.size() != dim * dim || (project && coordinates.size() != dim))
        throw HessfitStatusError(HESSFIT_ERROR_SIZE, "vibrational analysis: " + std::to_string(n) + " masses need a " +
                                 std::to_string(dim) + " x " + std::to_string(dim) + " Hessian (got " +
                                 std::to_string(hessian.size()) + " entries) and " + std::to_string(dim) +
                                 " coordinates (got " + std::to_string(coordinates.size()) + ")");
    frequencies.resize(dim);
    modes.resize(dim * dim);
    numExternal = 0;
    hessfit_status st = hessfit_vib_analyse(hessian.data(), masses.data(), project ? coordinates.data() : NULL, (int) n,
                                            hessfit_frequency_factor_kj_mol_nm2_amu(),
                                            project ? HESSFIT_VIB_PROJECT_EXTERNAL : 0u, frequencies.data(),
                                            modes.data(), &numExternal);
    if (st != HESSFIT_SUCCESS)
        throw HessfitStatusError(st, hessfit_last_error());
}

/** hessfit_vib_select: the numKeep values of largest magnitude, in ascending order. */
void _vibSelect(const std::vector<double>& values, int numKeep, std::vector<double>& selected) {
    selected.resize(numKeep > 0 ? (size_t) numKeep : 0);
    hessfit_status st = hessfit_vib_select(values.data(), (int) values.size(), numKeep, selected.data());
    if (st != HESSFIT_SUCCESS)
        throw HessfitStatusError(st, hessfit_last_error());
}
%}
