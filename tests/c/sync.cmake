if(TARGET gtstorage::cmocka)
  add_executable(test_sync_state_machine test_sync_state_machine.c)
  target_link_libraries(test_sync_state_machine PRIVATE gtstorage gtstorage::cmocka)
  gts_cmocka_tests(test_sync_state_machine)
  add_test(NAME sync_state_machine COMMAND test_sync_state_machine emulated)
  set_tests_properties(sync_state_machine PROPERTIES LABELS "sync;device;emulated")
  # The same with the simulated runtime running queued work at once (work queued before its
  # input was ready then shows, where the deferred default shows missing waits).
  add_test(NAME sync_state_machine.eager COMMAND test_sync_state_machine emulated)
  set_tests_properties(sync_state_machine.eager PROPERTIES LABELS "sync;device;emulated"
                       ENVIRONMENT "GTSTORAGE_SIM_EXECUTION=eager")
  # The GPU suite: the same tests against the CUDA backend; skipped (77) without a GPU, a
  # failure instead with GTSTORAGE_TEST_REQUIRE_GPU=1 (tools/gpu-check.sh sets it).
  add_test(NAME sync_state_machine.cuda COMMAND test_sync_state_machine cuda)
  set_tests_properties(sync_state_machine.cuda PROPERTIES LABELS "sync;device;gpu"
                                                          SKIP_RETURN_CODE 77)
  # GTSTORAGE_TEST_REQUIRE_GPU=1 on the default backend ("auto"): without a device the run must
  # fail saying so, with one it must run the suite and pass (tests/cpp/device/require_gpu_check.cmake);
  # a skip or a pass without a device fails this test.
  add_test(NAME sync_state_machine.require_gpu
           COMMAND ${CMAKE_COMMAND} -DTEST=$<TARGET_FILE:test_sync_state_machine> -DARGS=auto
                   "-DNO_DEVICE_REGEX=no usable '[a-z]+' device" "-DRAN_REGEX=PASSED  . [0-9]+ test"
                   -P ${PROJECT_SOURCE_DIR}/tests/cpp/device/require_gpu_check.cmake)
  set_tests_properties(sync_state_machine.require_gpu PROPERTIES LABELS "sync;device" TIMEOUT 600)
endif()
