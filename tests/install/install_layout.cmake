# CTest script: `cmake --install` into a fresh prefix lays out what a user points OpenMM at, and
# the installed example runs from that prefix alone (relative rpaths, plugin dir, data).
# Arguments: -DBUILD_DIR=... -DPREFIX=...
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
foreach(f include/hessfit/HessianForce.h include/hessfit/HessianKernels.h include/hessfit/hessfit.h
          lib/libHessFitPlugin.so lib/libhessfit.so lib/libhessfit_core.so lib/plugins/libHessFitPluginReference.so
          bin/ch3f_frequencies share/hessfit/examples/sn2/ch3f-hessian.npy)
    if(NOT EXISTS "${PREFIX}/${f}")
        message(FATAL_ERROR "the install prefix lacks ${f}")
    endif()
endforeach()
# The math core (lib/libhessfit_core.so) is installed for the libraries that link it; its headers,
# and FlatHessianModel.h which includes them, are private to the project.
file(GLOB_RECURSE private_headers "${PREFIX}/include/hf_*.h" "${PREFIX}/include/FlatHessianModel.h")
if(private_headers)
    message(FATAL_ERROR "the install prefix holds private headers: ${private_headers}")
endif()
# lib/plugins holds the Reference kernel library and, per GPU platform P built, a small loader
# (libHessFitPlugin<P>.so) for lib/libHessFit<P>.so, which links the GPU runtime.
set(expected "${PREFIX}/lib/plugins/libHessFitPluginReference.so")
string(REPLACE "," ";" gpu_platforms "${GPU_PLATFORMS}")
foreach(p ${gpu_platforms})
    list(APPEND expected "${PREFIX}/lib/plugins/libHessFitPlugin${p}.so")
    if(NOT EXISTS "${PREFIX}/lib/libHessFit${p}.so")
        message(FATAL_ERROR "the install prefix lacks lib/libHessFit${p}.so")
    endif()
endforeach()
file(GLOB plugins "${PREFIX}/lib/plugins/*")
list(SORT plugins)
list(SORT expected)
if(NOT plugins STREQUAL expected)
    message(FATAL_ERROR "lib/plugins should hold exactly ${expected}, holds: ${plugins}")
endif()
execute_process(COMMAND "${PREFIX}/bin/ch3f_frequencies" --plugin-dir "${PREFIX}/lib/plugins"
                        --data "${PREFIX}/share/hessfit/examples/sn2"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed example failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "installed example ran from ${PREFIX}")
