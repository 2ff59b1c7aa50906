# A GPU runner cannot pass by skipping: runs a device test with GTSTORAGE_TEST_REQUIRE_GPU=1 on
# the default backend (GTSTORAGE_DEVICE_BACKEND unset) and accepts exactly two outcomes:
#  - no usable device (this machine, CI): the test fails (not 0, not the skip code 77) and its
#    output says why (NO_DEVICE_REGEX);
#  - a usable device: the test ran its device suite (RAN_REGEX) and passed.
# Anything else fails: a skip, a pass that ran nothing on a device, a "no device" run that exits
# 0, or a suite that failed on a real device (a genuine failure, reported with its output).
# Variables: TEST (executable), ARGS (;-separated arguments), NO_DEVICE_REGEX, RAN_REGEX.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env GTSTORAGE_TEST_REQUIRE_GPU=1 --unset=GTSTORAGE_DEVICE_BACKEND
          --unset=GTSTORAGE_EMULATED_DEVICES ${TEST} ${ARGS}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
set(all "${out}\n${err}")
string(REGEX MATCH "[^\n]*(${NO_DEVICE_REGEX})[^\n]*" no_device_line "${all}")
if(rc STREQUAL "77")
  message(FATAL_ERROR "skipped (exit 77) although GTSTORAGE_TEST_REQUIRE_GPU=1:\n${all}")
elseif(no_device_line)
  if(rc STREQUAL "0")
    message(FATAL_ERROR "reported no device but exited 0 under GTSTORAGE_TEST_REQUIRE_GPU=1:\n${all}")
  endif()
  message(STATUS "no usable device: the run failed (exit ${rc}) as it must: ${no_device_line}")
elseif(NOT rc STREQUAL "0")
  message(FATAL_ERROR "the device suite failed (exit ${rc}):\n${all}")
elseif(NOT all MATCHES "${RAN_REGEX}")
  message(FATAL_ERROR "exited 0 without running the device suite (no '${RAN_REGEX}'), "
                      "although GTSTORAGE_TEST_REQUIRE_GPU=1:\n${all}")
else()
  message(STATUS "a device is present: the device suite ran and passed")
endif()
