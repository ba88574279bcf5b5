# tinyring: install rules (top-level builds, or TINYRING_INSTALL=ON): the
# libraries, their headers under include/tinyring/, the CMake package
# (tinyringConfig.cmake, its version file, the exported targets) and
# tinyring.pc. Every path in the package and in tinyring.pc is relative to
# the file itself, so `cmake --install --prefix` may put them anywhere.
include(CMakePackageConfigHelpers)

set(_tr_pkgdir "${CMAKE_INSTALL_LIBDIR}/cmake/tinyring")
install(TARGETS ${_tr_targets} EXPORT tinyringTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
set(_tr_headers ${TINYRING_CORE_HEADERS})
if(TARGET tinyring_posix)
  list(APPEND _tr_headers ${TINYRING_POSIX_HEADERS})
endif()
if(TARGET tinyring_lwip)
  list(APPEND _tr_headers ${TINYRING_LWIP_HEADERS})
endif()
if(TR_CONFIG_FILE)
  list(APPEND _tr_headers "${_tr_config}")
endif()
install(FILES ${_tr_headers} DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tinyring")
install(EXPORT tinyringTargets NAMESPACE tinyring:: DESTINATION "${_tr_pkgdir}")

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/tinyringConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/tinyringConfig.cmake" INSTALL_DESTINATION "${_tr_pkgdir}")
# 0.x: a minor version may change the API
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/tinyringConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/tinyringConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/tinyringConfigVersion.cmake"
        DESTINATION "${_tr_pkgdir}")

# pkg-config, for host builds outside CMake: core, and the POSIX port if built
# (static libraries: the port first, then what it needs: pthreads)
set(TINYRING_PC_LIBS "-ltinyring")
if(TARGET tinyring_posix)
  string(STRIP "-ltinyring_posix -ltinyring ${CMAKE_THREAD_LIBS_INIT}" TINYRING_PC_LIBS)
endif()
# TR_CONFIG_FILE as -include: pkg-config's output is shell-quoted, and a
# quoted -DTR_CONFIG_FILE="..." keeps its backslashes in `cc $(pkg-config ...)`;
# the header read before every source sets the same limits (tr_config.h's
# defaults are all #ifndef)
set(TINYRING_PC_CFLAGS "")
if(TR_CONFIG_FILE)
  set(TINYRING_PC_CFLAGS " -include ${_tr_config_name}")
endif()
file(RELATIVE_PATH TINYRING_PC_PREFIX
     "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" TINYRING_PC_PREFIX "${TINYRING_PC_PREFIX}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/tinyring.pc.in"
               "${CMAKE_CURRENT_BINARY_DIR}/tinyring.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/tinyring.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
