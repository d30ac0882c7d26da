# Installs hessfit as a package others build against:
#   <prefix>/lib/cmake/hessfit/hessfitConfig.cmake, hessfitConfigVersion.cmake, hessfitTargets*.cmake
#     (find_package(hessfit CONFIG): imported targets hessfit::<name>, see hessfitConfig.cmake.in)
#   <prefix>/lib/pkgconfig/hessfit.pc (the C API: pkg-config --cflags --libs hessfit)
#
# A target joins the package with `EXPORT hessfitTargets` in its install(TARGETS) call. Its
# exported name is its target name without a "hessfit_" prefix (hessfit_fitting ->
# hessfit::fitting); the targets listed here get that short name.
include(CMakePackageConfigHelpers)

foreach(_hf_target hessfit_fitting hessfit_model hessfit_app hessfit_cli hessfit_core)
    if(TARGET ${_hf_target})
        string(REGEX REPLACE "^hessfit_" "" _hf_export_name ${_hf_target})
        set_target_properties(${_hf_target} PROPERTIES EXPORT_NAME ${_hf_export_name})
    endif()
endforeach()

set(HESSFIT_INSTALL_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/hessfit")
set(HESSFIT_INSTALL_INCLUDE_DIR "${CMAKE_INSTALL_INCLUDEDIR}/hessfit")
install(EXPORT hessfitTargets NAMESPACE hessfit:: DESTINATION "${HESSFIT_INSTALL_CMAKE_DIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/hessfitConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/cmake/hessfitConfig.cmake"
    INSTALL_DESTINATION "${HESSFIT_INSTALL_CMAKE_DIR}"
    PATH_VARS HESSFIT_INSTALL_INCLUDE_DIR HESSFIT_PLUGIN_SUBDIR)
# 0.x: a new minor version may change the API.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/hessfitConfigVersion.cmake"
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/hessfitConfig.cmake" "${PROJECT_BINARY_DIR}/cmake/hessfitConfigVersion.cmake"
        DESTINATION "${HESSFIT_INSTALL_CMAKE_DIR}")

# hessfit.pc finds the prefix from its own place (${pcfiledir}), so any --prefix works.
set(HESSFIT_INSTALL_PKGCONFIG_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
file(RELATIVE_PATH HESSFIT_PC_PREFIX_FROM_PCDIR "/hessfit-prefix/${HESSFIT_INSTALL_PKGCONFIG_DIR}" "/hessfit-prefix")
string(REGEX REPLACE "/$" "" HESSFIT_PC_PREFIX_FROM_PCDIR "${HESSFIT_PC_PREFIX_FROM_PCDIR}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/hessfit.pc.in" "${PROJECT_BINARY_DIR}/cmake/hessfit.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/cmake/hessfit.pc" DESTINATION "${HESSFIT_INSTALL_PKGCONFIG_DIR}")
