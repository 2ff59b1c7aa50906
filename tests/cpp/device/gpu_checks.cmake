# Checks only a real GPU can answer (CTest label "gpu"; exit 77 = skipped without a device,
# a failure instead with GTSTORAGE_TEST_REQUIRE_GPU=1): kernels over more than 2^31 elements, a
# large tiled transpose, the predefined stream handles 1 and 2, CUDA 13 prefetch, a 2-D copy
# beyond the copy engine's pitch, and device -1 after the application's own cudaSetDevice (two
# CUDA runtimes in one process: the test's and the library's). tools/gpu-check.sh runs them,
# also under compute-sanitizer.
if(NOT GTSTORAGE_HAVE_CUDA)
  return()
endif()
add_executable(test_gpu_checks test_gpu_checks.cpp)
target_link_libraries(test_gpu_checks PRIVATE gtstorage_device_testlib gtstorage::gtstorage)
target_compile_options(test_gpu_checks PRIVATE -Wall -Wextra)
add_test(NAME gpu.checks COMMAND test_gpu_checks)
set_tests_properties(gpu.checks PROPERTIES LABELS "gpu;device" SKIP_RETURN_CODE 77 TIMEOUT 600)
