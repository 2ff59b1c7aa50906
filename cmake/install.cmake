# Installation and packaging: the header, libgtstorage.so with its SONAME symlinks, a CMake
# package (find_package(gtstorage CONFIG [COMPONENTS C Fortran CUDA HIP]) -> gtstorage::gtstorage,
# gtstorage::gtstorage_fortran) and the pkg-config files gtstorage.pc and gtstorage-fortran.pc.
# Included (OPTIONAL) at the end of the top-level CMakeLists.txt, after every target exists.
include(CMakePackageConfigHelpers)

set(GTSTORAGE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/gtstorage"
    CACHE STRING "Where the CMake package files of gtstorage are installed (relative to the prefix)")
set(GTSTORAGE_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where gtstorage.pc and gtstorage-fortran.pc are installed (relative to the prefix)")

# libgtstorage.so.X.Y.Z + libgtstorage.so.X (SONAME, runtime) + libgtstorage.so (dev namelink).
install(TARGETS gtstorage EXPORT gtstorageTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The libraries built on the C ABI, in the same export set when they are built: libgtstorage_mpi
# (component MPI) as gtstorage::mpi, and libgtstorage_python (component Python) as
# gtstorage::python, which links the Python it embeds (its libpython path is recorded in the
# library's NEEDED entry).
foreach(component IN ITEMS gtstorage_mpi:mpi gtstorage_embed:python)
  string(REPLACE ":" ";" component ${component})
  list(GET component 0 target)
  list(GET component 1 export_name)
  if(TARGET ${target})
    install(TARGETS ${target} EXPORT gtstorageTargets
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
      INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  endif()
endforeach()

# Every public header under include/ (gtstorage.h, gtstorage_experimental.h, gtstorage_mpi.h).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dev FILES_MATCHING PATTERN "*.h")

install(EXPORT gtstorageTargets NAMESPACE gtstorage:: FILE gtstorageTargets.cmake
  DESTINATION ${GTSTORAGE_INSTALL_CMAKEDIR} COMPONENT dev)

# Components (C, Fortran, CUDA, HIP) reflect what this build has; the Fortran module directory is
# recorded as gtstorage_Fortran_MODULE_DIR (relative to the package, so relocatable).
if(GTSTORAGE_HAVE_FORTRAN)
  set(GTSTORAGE_PACKAGE_FMODDIR "${GTSTORAGE_INSTALL_FORTRAN_MODDIR}")
else()
  set(GTSTORAGE_PACKAGE_FMODDIR "${CMAKE_INSTALL_INCLUDEDIR}")  # unused: no Fortran component
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gtstorageConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gtstorageConfig.cmake
  INSTALL_DESTINATION ${GTSTORAGE_INSTALL_CMAKEDIR}
  PATH_VARS GTSTORAGE_PACKAGE_FMODDIR)
# The SONAME changes with the major version only, so any 1.x satisfies a request for 1.y (y <= x).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gtstorageConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gtstorageConfig.cmake
              ${PROJECT_BINARY_DIR}/gtstorageConfigVersion.cmake
  DESTINATION ${GTSTORAGE_INSTALL_CMAKEDIR} COMPONENT dev)

# pkg-config: paths are relative to the .pc file (${pcfiledir}) so the installed tree stays valid
# under `cmake --install --prefix`, DESTDIR staging and relocation. The relative path from the
# pkgconfig directory back to the prefix depends on CMAKE_INSTALL_LIBDIR (lib, lib64, lib/<triplet>).
if(IS_ABSOLUTE "${GTSTORAGE_INSTALL_PKGCONFIGDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}"
   OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  # Absolute directories cannot be expressed relative to the .pc file: use them as they are.
  set(_gts_pc_absolute ON)
  set(GTSTORAGE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  cmake_path(ABSOLUTE_PATH CMAKE_INSTALL_LIBDIR BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}"
             OUTPUT_VARIABLE GTSTORAGE_PC_LIBDIR)
  cmake_path(ABSOLUTE_PATH CMAKE_INSTALL_INCLUDEDIR BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}"
             OUTPUT_VARIABLE GTSTORAGE_PC_INCLUDEDIR)
else()
  set(_gts_pc_absolute OFF)
  set(_gts_up "")
  set(_gts_pcdir "${GTSTORAGE_INSTALL_PKGCONFIGDIR}")
  while(NOT _gts_pcdir STREQUAL "" AND NOT _gts_pcdir STREQUAL ".")
    string(APPEND _gts_up "/..")
    cmake_path(GET _gts_pcdir PARENT_PATH _gts_pcdir)
  endwhile()
  set(GTSTORAGE_PC_PREFIX "\${pcfiledir}${_gts_up}")
  set(GTSTORAGE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(GTSTORAGE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  unset(_gts_up)
  unset(_gts_pcdir)
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/gtstorage.pc.in ${PROJECT_BINARY_DIR}/gtstorage.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gtstorage.pc DESTINATION ${GTSTORAGE_INSTALL_PKGCONFIGDIR}
  COMPONENT dev)

# gtstorage-fortran.pc, next to gtstorage.pc: the compiler-specific module directory (Cflags, and
# the variables fmoddir, fortran_compiler_id, fortran_compiler_version) and the Fortran library;
# it requires gtstorage (the module's bind(C) interfaces call libgtstorage directly).
if(TARGET gtstorage_fortran)
  if(_gts_pc_absolute OR IS_ABSOLUTE "${GTSTORAGE_INSTALL_FORTRAN_MODDIR}")
    cmake_path(ABSOLUTE_PATH GTSTORAGE_INSTALL_FORTRAN_MODDIR
               BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}" OUTPUT_VARIABLE GTSTORAGE_PC_FMODDIR)
  else()
    set(GTSTORAGE_PC_FMODDIR "\${prefix}/${GTSTORAGE_INSTALL_FORTRAN_MODDIR}")
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/gtstorage-fortran.pc.in
    ${PROJECT_BINARY_DIR}/gtstorage-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/gtstorage-fortran.pc
    DESTINATION ${GTSTORAGE_INSTALL_PKGCONFIGDIR} COMPONENT dev)
endif()

# gtstorage-mpi.pc: libgtstorage_mpi and its header (the MPI itself is the caller's: mpicc, or
# pkg-config ompi-c / mpich).
if(TARGET gtstorage_mpi)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/gtstorage-mpi.pc.in ${PROJECT_BINARY_DIR}/gtstorage-mpi.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/gtstorage-mpi.pc DESTINATION ${GTSTORAGE_INSTALL_PKGCONFIGDIR}
    COMPONENT dev)
endif()

# gtstorage-python.pc: libgtstorage_python and its header.
if(TARGET gtstorage_embed)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/gtstorage-python.pc.in
                 ${PROJECT_BINARY_DIR}/gtstorage-python.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/gtstorage-python.pc
    DESTINATION ${GTSTORAGE_INSTALL_PKGCONFIGDIR} COMPONENT dev)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dev OPTIONAL)
