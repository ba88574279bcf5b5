# test/packaging: ESP-IDF's first pass over a component, which runs its
# CMakeLists.txt in script mode (cmake -P) only to collect requirements; the
# stand-in registration writes them to TR_RECORD and returns, as ESP-IDF's
# does. Needs -DTR_SOURCE_DIR= -DTR_RECORD=.
set(ESP_PLATFORM 1)
set(CMAKE_BUILD_EARLY_EXPANSION 1)
macro(idf_component_register)
  cmake_parse_arguments(A "" "" "SRCS;INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES" ${ARGN})
  file(WRITE "${TR_RECORD}" "REQUIRES=${A_REQUIRES}\nPRIV_REQUIRES=${A_PRIV_REQUIRES}\n")
  return()
endmacro()
include("${TR_SOURCE_DIR}/CMakeLists.txt")
