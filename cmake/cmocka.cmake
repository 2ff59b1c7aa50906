# cmocka for every test directory, found once: through pkg-config where there is one, else its
# header and library directly (CMAKE_PREFIX_PATH, the system paths), so a machine with cmocka
# but without pkg-config (a GPU node's image, say) still builds the C suites. Defines the
# INTERFACE target gtstorage::cmocka, or nothing (with one message) when cmocka is missing.
include_guard(GLOBAL)

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(GTSTORAGE_CMOCKA_PC QUIET IMPORTED_TARGET cmocka)
endif()
add_library(gtstorage_cmocka INTERFACE)
if(TARGET PkgConfig::GTSTORAGE_CMOCKA_PC)
  target_link_libraries(gtstorage_cmocka INTERFACE PkgConfig::GTSTORAGE_CMOCKA_PC)
else()
  find_path(GTSTORAGE_CMOCKA_INCLUDE_DIR cmocka.h)
  find_library(GTSTORAGE_CMOCKA_LIBRARY cmocka)
  if(NOT GTSTORAGE_CMOCKA_INCLUDE_DIR OR NOT GTSTORAGE_CMOCKA_LIBRARY)
    message(WARNING "gtstorage: cmocka not found (install libcmocka-dev); the C, sync, "
                    "robustness and internal kernel tests are not built")
    return()
  endif()
  target_include_directories(gtstorage_cmocka INTERFACE ${GTSTORAGE_CMOCKA_INCLUDE_DIR})
  target_link_libraries(gtstorage_cmocka INTERFACE ${GTSTORAGE_CMOCKA_LIBRARY})
endif()
add_library(gtstorage::cmocka ALIAS gtstorage_cmocka)
