# Finds what the Python module (wrappers/python) needs and sets the default of HESSFIT_BUILD_PYTHON:
#   - a Python with NumPy whose `import openmm` uses the OpenMM that hessfit links (OPENMM_LIB_DIR);
#     the project's .venv/bin/python unless Python3_EXECUTABLE says otherwise;
#   - SWIG generating the same SWIG runtime version as openmm's own wrapper (_openmm*.so): the two
#     modules share one type table only then, so that a HessianForce is an openmm.Force and an
#     openmm.Context can be passed in. The openmm 8.6.1 wheel's wrapper is SWIG 4.5 (runtime "5");
#     Debian 12's swig is 4.1 (runtime "4"), so scripts/setup installs PyPI's swig into .venv.
# Sets HESSFIT_PYTHON_FOUND, HESSFIT_SWIG_EXECUTABLE, HESSFIT_PYTHON_WHY_NOT.
set(HESSFIT_PYTHON_FOUND OFF)
set(HESSFIT_PYTHON_WHY_NOT "")
if(NOT Python3_EXECUTABLE AND EXISTS "${CMAKE_SOURCE_DIR}/.venv/bin/python")
    set(Python3_EXECUTABLE "${CMAKE_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "Python for the hessfit module")
endif()
find_package(Python3 QUIET COMPONENTS Interpreter Development.Module NumPy)
find_program(HESSFIT_SWIG_EXECUTABLE swig HINTS "${CMAKE_SOURCE_DIR}/.venv/bin" DOC "SWIG for the Python module")

if(NOT Python3_Interpreter_FOUND OR NOT Python3_Development.Module_FOUND OR NOT Python3_NumPy_FOUND)
    set(HESSFIT_PYTHON_WHY_NOT "no Python 3 with its headers and NumPy")
elseif(NOT HESSFIT_SWIG_EXECUTABLE)
    set(HESSFIT_PYTHON_WHY_NOT "no swig (.venv/bin/pip install swig==4.5.0)")
else()
    execute_process(COMMAND "${Python3_EXECUTABLE}" -c
        "import glob, os, openmm, openmm.version as v; print(os.path.realpath(v.openmm_library_path)); print(glob.glob(os.path.join(os.path.dirname(openmm.__file__), '_openmm*'))[0])"
        OUTPUT_VARIABLE _hf_py_openmm RESULT_VARIABLE _hf_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND "${HESSFIT_SWIG_EXECUTABLE}" -swiglib
        OUTPUT_VARIABLE _hf_swiglib OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    get_filename_component(_hf_openmm_lib_real "${OPENMM_LIB_DIR}" REALPATH)
    if(NOT _hf_rc EQUAL 0)
        set(HESSFIT_PYTHON_WHY_NOT "${Python3_EXECUTABLE} cannot import openmm")
    else()
        string(REPLACE "\n" ";" _hf_py_openmm "${_hf_py_openmm}")
        list(GET _hf_py_openmm 0 _hf_py_openmm_lib)
        list(GET _hf_py_openmm 1 _hf_py_openmm_module)
        file(STRINGS "${_hf_swiglib}/swigrun.swg" _hf_swig_runtime REGEX "define SWIG_RUNTIME_VERSION")
        string(REGEX REPLACE ".*\"([0-9]+)\".*" "\\1" _hf_swig_runtime "${_hf_swig_runtime}")
        if(NOT DEFINED HESSFIT_OPENMM_SWIG_RUNTIME)
            file(STRINGS "${_hf_py_openmm_module}" _hf_openmm_runtime LIMIT_COUNT 1 REGEX "^swig_runtime_data[0-9]+$")
            string(REGEX REPLACE "swig_runtime_data" "" _hf_openmm_runtime "${_hf_openmm_runtime}")
            set(HESSFIT_OPENMM_SWIG_RUNTIME "${_hf_openmm_runtime}" CACHE INTERNAL "SWIG runtime of openmm's wrapper")
        endif()
        if(NOT _hf_py_openmm_lib STREQUAL _hf_openmm_lib_real)
            set(HESSFIT_PYTHON_WHY_NOT "${Python3_EXECUTABLE}'s openmm uses ${_hf_py_openmm_lib}, hessfit links ${_hf_openmm_lib_real}")
        elseif(NOT _hf_swig_runtime STREQUAL HESSFIT_OPENMM_SWIG_RUNTIME)
            set(HESSFIT_PYTHON_WHY_NOT "${HESSFIT_SWIG_EXECUTABLE} makes SWIG runtime ${_hf_swig_runtime}, openmm's wrapper has "
                "${HESSFIT_OPENMM_SWIG_RUNTIME} (.venv/bin/pip install swig==4.5.0)")
        else()
            set(HESSFIT_PYTHON_FOUND ON)
        endif()
    endif()
endif()
