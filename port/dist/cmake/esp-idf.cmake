# tinyring as an ESP-IDF component: the root CMakeLists.txt includes this
# under ESP_PLATFORM (ESP-IDF treats the directory as the component, so put
# the checkout under components/ or name it in EXTRA_COMPONENT_DIRS).
# Kconfig (beside CMakeLists.txt) chooses the transport: none, or the lwIP
# port against ESP-IDF's own lwIP and its lwipopts.h.
include("${CMAKE_CURRENT_LIST_DIR}/tinyring-sources.cmake")

set(_tr_srcs ${TINYRING_CORE_SOURCES})
if(CONFIG_TINYRING_TRANSPORT_LWIP)
  list(APPEND _tr_srcs ${TINYRING_LWIP_SOURCES})
endif()
# Requirements may not depend on Kconfig (ESP-IDF expands them first), so
# lwip is always a private requirement; only tr_lwip.c includes its headers.
idf_component_register(SRCS ${_tr_srcs}
                       INCLUDE_DIRS "${TINYRING_ROOT}/core/include"
                       PRIV_INCLUDE_DIRS "${TINYRING_ROOT}/core"
                       PRIV_REQUIRES lwip)
# reached in the build proper (idf_component_register returns early while
# ESP-IDF only collects requirements)
target_compile_options(${COMPONENT_LIB} PRIVATE ${TINYRING_CORE_FLAGS})
if(CONFIG_TINYRING_TRANSPORT_LWIP)
  tinyring_lwip_header_dir("${CMAKE_CURRENT_BINARY_DIR}/tinyring-lwip-include")
  target_include_directories(${COMPONENT_LIB} PUBLIC "${CMAKE_CURRENT_BINARY_DIR}/tinyring-lwip-include")
endif()
