# The source check of check_layering.cmake (MODE=sources) on scratch trees laid out like src/:
# it must pass on a clean tree and fail, naming the file, on an upward include ("capi/…" from
# storage) and on relative includes that climb out of the file's directory ("../capi/…",
# "./../memory/…", even towards a layer that is allowed), and on an include of the device
# backend's tools interface (tests and bench only) from another layer.
#   cmake -DCHECK=check_layering.cmake -DTABLE=layers.txt -DWORK=<dir> -P this
cmake_minimum_required(VERSION 3.25)
file(STRINGS ${TABLE} table_lines)
set(layers)
foreach(line IN LISTS table_lines)
  if(line MATCHES "^([a-z_]+):")
    list(APPEND layers ${CMAKE_MATCH_1})
  endif()
endforeach()

set(failures 0)
# run_case(NAME WANT_FAIL FILE CONTENT [NEEDLE]): a tree with one header per layer plus FILE
# (relative to src/) holding CONTENT; the check must fail (naming FILE and NEEDLE) or pass.
function(run_case name want_fail file content)
  set(src ${WORK}/${name}/src)
  file(REMOVE_RECURSE ${WORK}/${name})
  foreach(layer IN LISTS layers)
    file(WRITE ${src}/${layer}/${layer}.hpp "#pragma once\n")
  endforeach()
  file(WRITE ${src}/${file} "${content}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DMODE=sources -DSRC_DIR=${src} -DTABLE=${TABLE}
                  -P ${CHECK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \t\n]+" " " flat "${out}")  # messages are wrapped
  if(want_fail)
    set(named TRUE)
    if(ARGC GREATER 4 AND NOT flat MATCHES "${ARGV4}")
      set(named FALSE)
    endif()
    if(rc EQUAL 0 OR NOT flat MATCHES "src/${file}" OR NOT named)
      message(SEND_ERROR "${name}: the check should fail naming src/${file}:\n${out}")
      math(EXPR failures "${failures} + 1")
      set(failures ${failures} PARENT_SCOPE)
      return()
    endif()
  elseif(NOT rc EQUAL 0)
    message(SEND_ERROR "${name}: the check should pass:\n${out}")
    math(EXPR failures "${failures} + 1")
    set(failures ${failures} PARENT_SCOPE)
    return()
  endif()
  message(STATUS "${name}: ok (exit ${rc})")
endfunction()

run_case(clean FALSE storage/ok.cpp
  "#include \"storage/storage.hpp\"\n#include \"memory/memory.hpp\"\n#include <vector>\n")
run_case(upward TRUE storage/up.cpp "#include \"capi/capi.hpp\"\n" "may not use 'capi'")
run_case(relative_up TRUE storage/rel.cpp "#include \"../capi/capi.hpp\"\n"
  "relative include")
run_case(relative_allowed_layer TRUE storage/rel2.cpp "#include \"./../memory/memory.hpp\"\n"
  "relative include")
run_case(relative_nested TRUE device/gpu/nested.inl "#  include \"../../interop/interop.hpp\"\n"
  "relative include")
run_case(dot_slash_upward TRUE memory/dot.cpp "#include \"./storage/storage.hpp\"\n"
  "may not use 'storage'")
run_case(tests_only_header TRUE storage/tools.cpp "#include \"device/backend_tools.hpp\"\n"
  "tests and the bench only")
run_case(tests_only_header_own_layer FALSE device/own.cpp
  "#include \"device/backend_tools.hpp\"\n")
if(failures)
  message(FATAL_ERROR "${failures} self-test case(s) failed")
endif()
message(STATUS "the source check rejects upward and climbing relative includes, and the "
               "tests-only device tools interface outside src/device")
