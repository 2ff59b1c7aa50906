# gtstorage_static_copy(<target> <registry>): a STATIC library that is a copy of the library made
# of the object libraries of its layers (src/CMakeLists.txt) with the device registry <registry>,
# for the test programs that reach inside (the simulated runtime's control API, the backends):
# the shared library exports only gtstorage_* symbols.
function(gtstorage_static_copy target registry)
  add_library(${target} STATIC)
  target_link_libraries(${target} PUBLIC gtstorage_capi gtstorage_interop gtstorage_storage
    gtstorage_layout gtstorage_device ${registry} gtstorage_kernels gtstorage_memory
    gtstorage_common ${GTSTORAGE_EMULATED_OBJECTS} Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/third_party)
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  if(OpenMP_CXX_FOUND)
    target_link_libraries(${target} PUBLIC OpenMP::OpenMP_CXX)
  endif()
endfunction()
