# Robustness: a seeded random campaign of valid and invalid calls to every public entry point
# (cmocka: cmake/cmocka.cmake). Seed and length can be overridden with the
# environment variables GTSTORAGE_FUZZ_SEED and GTSTORAGE_FUZZ_STEPS (GTSTORAGE_FUZZ_TRACE=1
# prints every call, to turn a failing step into a reproducer).
if(TARGET gtstorage::cmocka)
  add_executable(test_random_bad_input test_random_bad_input.c)
  set_target_properties(test_random_bad_input PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON
                                                         C_EXTENSIONS OFF)
  target_compile_options(test_random_bad_input PRIVATE -Wall -Wextra)
  # dlpack.h only to call the exported tensors' deleters.
  target_include_directories(test_random_bad_input PRIVATE ${PROJECT_SOURCE_DIR}/third_party)
  target_link_libraries(test_random_bad_input PRIVATE gtstorage gtstorage::cmocka)
  gts_cmocka_tests(test_random_bad_input)
  add_test(NAME robustness.random_bad_input COMMAND test_random_bad_input)
  set_tests_properties(robustness.random_bad_input PROPERTIES LABELS "robustness;device"
                                                              TIMEOUT 300)
endif()
