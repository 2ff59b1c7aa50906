# Test discovery for the cmocka suites: the tests a file runs are the tests it defines, so a test
# written but not listed cannot exist. gts_cmocka_tests(<target>) reads the target's source when
# CMake configures (an edit of it configures again) and writes <target>.tests.h into the build tree,
# which the source reaches through tests/c/cmocka_main.h. For each group of tests it defines a list
# macro taking the per-test fixture (a macro of one argument, the test function):
#
#   #define GTS_TESTS(fixture) fixture(first_test), fixture(second_test),
#
# A test is a definition on one line at the start of a line, `static void name(void** state) {`
# (`static` and the parameter's name optional, as in C++), or `M(name) {` where the file defines
# `#define M(name) static void name(void** state)`. Two comment markers, each on a line of its own:
#   gts-test-group: <group>   the tests after it, up to the next group marker, are GTS_TESTS_<group>
#                             (before any: GTS_TESTS)
#   gts-test-entry: <macro>   the next test is listed as <macro>(name) instead of with the fixture
#                             (cmocka_unit_test: no per-test fixture), the why after the name
# docs/architecture.md ("The cmocka test lists") shows the main() of each kind of file.
include_guard(GLOBAL)

function(gts_cmocka_tests target)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.(c|cpp)$")
  list(LENGTH sources count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "gts_cmocka_tests(${target}): one C or C++ source expected, not '${sources}'")
  endif()
  get_filename_component(source "${sources}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${source}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")

  set(id "[A-Za-z_][A-Za-z0-9_]*")
  set(signature "void[ \t]+(${id})[ \t]*\\([ \t]*void[ \t]*\\*\\*[ \t]*(${id})?[ \t]*\\)")
  set(marker "^[ \t]*(/\\*|//)[ \t]*gts-test-(group|entry):[ \t]*(${id})")
  # The source's lines as a list: the characters a CMake list treats specially ([, ], ;, \)
  # become '?', which no definition or marker holds.
  file(READ "${source}" content)
  string(REGEX REPLACE "[][;\\]" "?" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")

  set(definers "")  # the file's macros M(name) that define a test
  set(group "GTS_TESTS")
  set(groups "")
  set(entry "")
  foreach(line IN LISTS lines)
    set(name "")
    if(line MATCHES "^#define[ \t]+(${id})\\((${id})\\)[ \t]+(static[ \t]+)?${signature}[ \t]*$")
      if(CMAKE_MATCH_2 STREQUAL CMAKE_MATCH_4)
        list(APPEND definers "${CMAKE_MATCH_1}")
      endif()
    elseif(line MATCHES "^(static[ \t]+)?${signature}[ \t]*{")
      set(name "${CMAKE_MATCH_2}")
    elseif(line MATCHES "^(${id})\\((${id})\\)[ \t]*{" AND CMAKE_MATCH_1 IN_LIST definers)
      set(name "${CMAKE_MATCH_2}")
    elseif(line MATCHES "${marker}")
      if(NOT entry STREQUAL "")
        message(FATAL_ERROR "${shown}: 'gts-test-entry: ${entry}' is not followed by a test")
      endif()
      if(CMAKE_MATCH_2 STREQUAL "group")
        set(group "GTS_TESTS_${CMAKE_MATCH_3}")
      else()
        set(entry "${CMAKE_MATCH_3}")
      endif()
    endif()
    if(NOT name STREQUAL "")
      if(entry STREQUAL "")
        list(APPEND tests_${group} "fixture(${name})")
      else()
        list(APPEND tests_${group} "${entry}(${name})")
        set(entry "")
      endif()
      if(NOT group IN_LIST groups)
        list(APPEND groups "${group}")
      endif()
    endif()
  endforeach()
  if(NOT entry STREQUAL "")
    message(FATAL_ERROR "${shown}: 'gts-test-entry: ${entry}' is not followed by a test")
  endif()
  if(groups STREQUAL "")
    message(FATAL_ERROR "${shown}: no cmocka test found (tests/cmocka_tests.cmake says what one is)")
  endif()

  string(CONCAT text "/* The cmocka tests of ${shown} in source order, as tests/cmocka_tests.cmake\n"
                     " * found them when CMake configured (generated: edit the source, not this file). */\n")
  foreach(g IN LISTS groups)
    list(JOIN tests_${g} ", \\\n  " listed)
    string(APPEND text "#define ${g}(fixture) \\\n  ${listed},\n")
  endforeach()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/cmocka_tests")
  file(CONFIGURE OUTPUT "${dir}/${target}.tests.h" CONTENT "${text}" @ONLY)
  target_include_directories(${target} PRIVATE "${dir}" "${PROJECT_SOURCE_DIR}/tests/c")
  target_compile_definitions(${target} PRIVATE "GTS_TEST_LIST=\"${target}.tests.h\"")
endfunction()
