# test/packaging: a firmware project's toolchain file for the Cortex-M4F
# (arm-none-eabi-gcc, newlib). The architecture flags come from the Makefile
# (TR_M4_ARCH in the environment = M4F_ARCH of core/core.mk), so
# this file adds no definition of its own.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
if("$ENV{TR_M4_ARCH}" STREQUAL "")
  message(FATAL_ERROR "TR_M4_ARCH (the Cortex-M4F flags) is not set")
endif()
set(CMAKE_C_FLAGS_INIT "$ENV{TR_M4_ARCH}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "$ENV{TR_M4_ARCH}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
