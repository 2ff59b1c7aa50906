# The MPI drivers of the mini-model (model.f90, model.c), included by CMakeLists.txt where
# libgtstorage_mpi exists, and their tests on 1 and 4 processes.
find_package(MPI COMPONENTS C QUIET)
add_executable(gtstorage-example-model-c model.c)
target_link_libraries(gtstorage-example-model-c PRIVATE gtstorage::python gtstorage::mpi MPI::MPI_C)
target_compile_options(gtstorage-example-model-c PRIVATE -Wall -Wextra)
set_target_properties(gtstorage-example-model-c PROPERTIES OUTPUT_NAME model_c)
set(gts_model_drivers gtstorage-example-model-c)
if(TARGET gtstorage_python_fortran AND TARGET gtstorage_mpi_fortran)
  add_executable(gtstorage-example-model-f model.f90)
  target_link_libraries(gtstorage-example-model-f PRIVATE gtstorage_python_fortran
                                                          gtstorage_mpi_fortran MPI::MPI_Fortran)
  set_target_properties(gtstorage-example-model-f PROPERTIES OUTPUT_NAME model_f)
  list(APPEND gts_model_drivers gtstorage-example-model-f)
endif()

if(GTSTORAGE_BUILD_TESTS)
  foreach(driver IN LISTS gts_model_drivers)
    string(REPLACE "gtstorage-example-model-" "model_" name ${driver})
    foreach(variant cartesian next)
      foreach(np 1 4)
        set(test bridge.${name}_${variant}_np${np})
        add_test(NAME ${test}
                 COMMAND ${PROJECT_SOURCE_DIR}/tests/integration/bridge/with_venv.sh ${MPIEXEC_EXECUTABLE}
                         --oversubscribe ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:${driver}>
                         ${variant} 8)
        set_tests_properties(${test} PROPERTIES LABELS "bridge;python;mpi;example" TIMEOUT 300
          PROCESSORS 2 SKIP_RETURN_CODE 77 ENVIRONMENT "${gts_env}"
          PASS_REGULAR_EXPRESSION "${np} process\\(es\\), 8 steps.*OK: identical to the reference, halo untouched, zero copies")
      endforeach()
    endforeach()
  endforeach()
endif()
