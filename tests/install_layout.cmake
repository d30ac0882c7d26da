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
          lib/libHessFitPlugin.so lib/libhessfit.so lib/plugins/libHessFitPluginReference.so
          bin/ch3f_frequencies share/hessfit/examples/sn2/ch3f-hessian.npy)
    if(NOT EXISTS "${PREFIX}/${f}")
        message(FATAL_ERROR "the install prefix lacks ${f}")
    endif()
endforeach()
file(GLOB plugins "${PREFIX}/lib/plugins/*")
list(LENGTH plugins n)
if(NOT n EQUAL 1)
    message(FATAL_ERROR "lib/plugins should hold exactly the Reference kernel library, holds: ${plugins}")
endif()
execute_process(COMMAND "${PREFIX}/bin/ch3f_frequencies" --plugin-dir "${PREFIX}/lib/plugins"
                        --data "${PREFIX}/share/hessfit/examples/sn2"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed example failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "installed example ran from ${PREFIX}")
