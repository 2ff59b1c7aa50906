# The header is the single source of the bindings: tools/gen_bindings.py generates the ctypes
# module bindings/python/gtstorage/_capi_generated.py and the Fortran include
# bindings/fortran/gtstorage_c_api.inc from include/gtstorage/gtstorage.h. Needs only Python.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "gtstorage: no Python 3; the bindings generator tests are not registered")
  return()
endif()

# The checked-in generated files are what the generator writes from the header now (it
# generates into a temporary directory and names every stale file).
add_test(NAME bindings.generated_up_to_date
  COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/gen_bindings.py --check)

# The generator itself: it stops with file:line on constructs it does not understand, and a
# field added to a scratch copy of the header shows up in both outputs.
add_test(NAME bindings.generator
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/test_gen_bindings.py)

set_tests_properties(bindings.generated_up_to_date bindings.generator PROPERTIES
  LABELS "bindings;python;fortran" TIMEOUT 120)
