# CTest script: build and run the programs of this folder against an installed hessfit, as a user
# would (the install_layout test installs the prefix first: it is this test's fixture).
#   MODE=cmake      configure this folder with CMAKE_PREFIX_PATH=<prefix> (find_package(hessfit)),
#                   build it and run both programs
#   MODE=pkgconfig  cc main.c $(pkg-config --cflags --libs hessfit) with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig,
#                   and run it with the plugin directory pkg-config names
# Arguments: -DMODE=... -DPREFIX=... -DSOURCE_DIR=<this folder> -DWORK_DIR=... -DC_COMPILER=... -DGENERATOR=...
foreach(f lib/cmake/hessfit/hessfitConfig.cmake lib/cmake/hessfit/hessfitConfigVersion.cmake
          lib/cmake/hessfit/hessfitTargets.cmake lib/pkgconfig/hessfit.pc include/hessfit/hessfit_version.h)
    if(NOT EXISTS "${PREFIX}/${f}")
        message(FATAL_ERROR "the install prefix lacks ${f}")
    endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs a command; fails the test with its output unless it exits 0 (and prints `expect`, if given).
function(run_step what expect)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR (expect AND NOT out MATCHES "${expect}"))
        message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
    endif()
    message(STATUS "${what}:\n${out}")
endfunction()

if(MODE STREQUAL "cmake")
    run_step("configure the consumer with find_package(hessfit)" ""
             "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}" -G "${GENERATOR}"
             "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCMAKE_C_COMPILER=${C_COMPILER}")
    run_step("build the consumer" "" "${CMAKE_COMMAND}" --build "${WORK_DIR}")
    file(READ "${WORK_DIR}/plugin_dir.txt" plugin_dir)
    run_step("run the C API consumer" "consumer passed" "${WORK_DIR}/consumer" "${plugin_dir}")
    run_step("run the fitting-library consumer" "fit consumer passed" "${WORK_DIR}/fit_consumer")
elseif(MODE STREQUAL "pkgconfig")
    find_program(PKG_CONFIG pkg-config)
    if(NOT PKG_CONFIG)
        message(FATAL_ERROR "pkg-config not found (Debian: pkgconf)")
    endif()
    set(ENV{PKG_CONFIG_PATH} "${PREFIX}/lib/pkgconfig")
    run_step("compile with pkg-config" ""
             sh -c "\"${C_COMPILER}\" -std=c11 -o \"${WORK_DIR}/consumer\" main.c $(\"${PKG_CONFIG}\" --cflags --libs hessfit)"
             WORKING_DIRECTORY "${SOURCE_DIR}")
    execute_process(COMMAND "${PKG_CONFIG}" --variable=plugindir hessfit OUTPUT_VARIABLE plugin_dir
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    run_step("run the pkg-config consumer" "consumer passed" "${WORK_DIR}/consumer" "${plugin_dir}")
else()
    message(FATAL_ERROR "MODE must be cmake or pkgconfig, not '${MODE}'")
endif()
