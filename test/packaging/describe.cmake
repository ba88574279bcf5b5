# test/packaging: prints what port/dist/cmake/tinyring-sources.cmake says, for run.sh
# (cmake -P test/packaging/describe.cmake): "version V" and "flags F...".
include("${CMAKE_CURRENT_LIST_DIR}/../../port/dist/cmake/tinyring-sources.cmake")
string(REPLACE ";" " " _flags "${TINYRING_CORE_FLAGS}")
message("version ${TINYRING_VERSION}")
message("flags ${_flags}")
