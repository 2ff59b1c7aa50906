# Checks the layering of src/ against layers.txt (see CMakeLists.txt here).
#   cmake -DMODE=scopes|sources -DSRC_DIR=… -DTABLE=… -DSCOPES=… -DCXX=… -DWORK=… -P this
# MODE=sources fails on an include of a layer the including file's layer may not use, and on any
# relative include that climbs out of the file's directory ("../capi/x.hpp"), and on an include of
# a header kept for the tests and the bench (the device backend's tools interface) by a file
# outside its own layer: the library never calls that interface.
cmake_minimum_required(VERSION 3.25)

# ---- the table -----------------------------------------------------------------------------------
file(STRINGS ${TABLE} table_lines)
set(layers)
foreach(line IN LISTS table_lines)
  if(line MATCHES "^[ \t]*#" OR line MATCHES "^[ \t]*$")
    continue()
  endif()
  if(NOT line MATCHES "^([a-z_]+):(.*)$")
    message(FATAL_ERROR "${TABLE}: cannot read '${line}'")
  endif()
  set(layer ${CMAKE_MATCH_1})
  string(STRIP "${CMAKE_MATCH_2}" below)
  separate_arguments(below UNIX_COMMAND "${below}")
  list(APPEND layers ${layer})
  set(allowed_${layer} ${layer} ${below})
endforeach()
# What an include's first path component names: a layer, the public header or dlpack.h.
set(names ${layers} public dlpack)
function(name_of component out)
  if(component STREQUAL "gtstorage")
    set(${out} public PARENT_SCOPE)
  elseif(component IN_LIST layers OR component STREQUAL "dlpack")
    set(${out} ${component} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)  # a system or third-party header of another name
  endif()
endfunction()

set(failures 0)
# Headers only their own layer (and the tests and the bench, which are not under src/) include.
set(tests_only_headers "device/backend_tools.hpp")

if(MODE STREQUAL "sources")
  # Every directory of src/ is a layer of the table.
  file(GLOB entries LIST_DIRECTORIES true RELATIVE ${SRC_DIR} ${SRC_DIR}/*)
  foreach(entry IN LISTS entries)
    if(IS_DIRECTORY ${SRC_DIR}/${entry} AND NOT entry IN_LIST layers)
      message(SEND_ERROR "src/${entry}: a directory that is not a layer of ${TABLE}")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
  set(nfiles 0)
  foreach(layer IN LISTS layers)
    file(GLOB_RECURSE files ${SRC_DIR}/${layer}/*.cpp ${SRC_DIR}/${layer}/*.hpp
         ${SRC_DIR}/${layer}/*.h ${SRC_DIR}/${layer}/*.inl ${SRC_DIR}/${layer}/*.cu
         ${SRC_DIR}/${layer}/*.hip)
    foreach(file IN LISTS files)
      math(EXPR nfiles "${nfiles} + 1")
      file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]*/")
      foreach(inc IN LISTS includes)
        string(REGEX MATCH "[\"<]([^\">]*)[\">]" header "${inc}")
        set(path "${CMAKE_MATCH_1}")
        # A path that climbs ("../capi/x.hpp") is found next to the including file before the
        # include directories are searched, so it would bypass the layer's include scope:
        # includes name a layer ("capi/x.hpp") or a file of the same directory, never "..".
        if(path MATCHES "(^|/)\\.\\.(/|$)")
          file(RELATIVE_PATH rel ${SRC_DIR}/.. ${file})
          message(SEND_ERROR "${rel}: ${header} — a relative include that leaves the file's "
                             "directory; include \"<layer>/<file>\" (layer '${layer}' may use "
                             "${allowed_${layer}})")
          math(EXPR failures "${failures} + 1")
          continue()
        endif()
        string(REGEX REPLACE "^(\\./)+" "" path "${path}")
        if(path IN_LIST tests_only_headers AND NOT path MATCHES "^${layer}/")
          file(RELATIVE_PATH rel ${SRC_DIR}/.. ${file})
          message(SEND_ERROR "${rel}: ${header} — an interface for the tests and the bench "
                             "only; the library uses the backend's core, ordering() and "
                             "allocations()")
          math(EXPR failures "${failures} + 1")
          continue()
        endif()
        set(first "")
        if(path MATCHES "^([^/]*)/")
          set(first "${CMAKE_MATCH_1}")
        endif()
        name_of("${first}" name)
        if(name AND NOT name IN_LIST allowed_${layer})
          file(RELATIVE_PATH rel ${SRC_DIR}/.. ${file})
          message(SEND_ERROR "${rel}: ${header} — layer '${layer}' may not use '${name}' "
                             "(allowed: ${allowed_${layer}})")
          math(EXPR failures "${failures} + 1")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(failures)
    message(FATAL_ERROR "${failures} upward or undeclared includes")
  endif()
  message(STATUS "${nfiles} files of ${layers}: every include points down the table")
  return()
endif()

if(NOT MODE STREQUAL "scopes")
  message(FATAL_ERROR "MODE must be scopes or sources")
endif()

# ---- scopes: probes compiled with each layer's include directories ------------------------------
file(STRINGS ${SCOPES} scope_lines)
foreach(line IN LISTS scope_lines)
  string(FIND "${line}" "|" bar)
  string(SUBSTRING "${line}" 0 ${bar} layer)
  math(EXPR bar "${bar} + 1")
  string(SUBSTRING "${line}" ${bar} -1 dirs)
  set(flags_${layer})
  foreach(dir IN LISTS dirs)
    list(APPEND flags_${layer} -I${dir})
  endforeach()
endforeach()
# One header that each name stands for.
foreach(layer IN LISTS layers)
  file(GLOB headers RELATIVE ${SRC_DIR} ${SRC_DIR}/${layer}/*.hpp)
  list(SORT headers)
  list(GET headers 0 header_${layer})
endforeach()
set(header_public gtstorage/gtstorage.h)
set(header_dlpack dlpack/dlpack.h)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(compile source layer out_rc out_text)
  execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only ${flags_${layer}} ${source}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

foreach(layer IN LISTS layers)
  if(NOT DEFINED flags_${layer} AND layer IN_LIST OPTIONAL_LAYERS)
    message(STATUS "layer '${layer}' is not built here (optional): its scope is not checked")
    continue()
  endif()
  if(NOT DEFINED flags_${layer})
    message(SEND_ERROR "no include scope for layer '${layer}' in ${SCOPES}")
    math(EXPR failures "${failures} + 1")
    continue()
  endif()
  # Every name is visible exactly when the table allows it (__has_include searches as #include).
  set(probe "// layer ${layer}: allowed ${allowed_${layer}}\n")
  foreach(name IN LISTS names)
    if(name IN_LIST allowed_${layer})
      set(want 1)
      set(word reachable)
    else()
      set(want 0)
      set(word unreachable)
    endif()
    string(APPEND probe "#if __has_include(\"${header_${name}}\") != ${want}\n"
           "#error \"${layer}: ${header_${name}} (${name}) should be ${word}\"\n#endif\n")
  endforeach()
  file(WRITE ${WORK}/scope_${layer}.cpp "${probe}")
  compile(${WORK}/scope_${layer}.cpp ${layer} rc text)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "include scope of layer '${layer}' does not match ${TABLE}:\n${text}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()

# The case in words: a storage source that includes a capi header does not compile; the same
# source in capi's scope does (so the failure is the scope, not the source).
file(WRITE ${WORK}/storage_includes_capi.cpp
     "#include \"capi/handle_table.hpp\"\nint probe() { return 0; }\n")
compile(${WORK}/storage_includes_capi.cpp storage rc text)
if(rc EQUAL 0 OR NOT text MATCHES "capi/handle_table.hpp")
  message(SEND_ERROR "#include \"capi/handle_table.hpp\" compiled in the storage layer's scope "
                     "(rc ${rc}):\n${text}")
  math(EXPR failures "${failures} + 1")
endif()
compile(${WORK}/storage_includes_capi.cpp capi rc text)
if(NOT rc EQUAL 0)
  message(SEND_ERROR "the control probe does not compile in capi's scope:\n${text}")
  math(EXPR failures "${failures} + 1")
endif()

if(failures)
  message(FATAL_ERROR "${failures} layering failures")
endif()
message(STATUS "include scopes of ${layers} match ${TABLE}; an upward include fails to compile")
