# Runs a program and checks its exit status and output. All parameters are -D definitions
# (nothing follows the script name, where cmake would parse the program's own options); lists
# are joined with "^^" (list elements must not contain ';').
#   cmake -DCMD=<program>^^<arg>... [-DRC=<n>] [-DMATCH=<regex>^^...] [-DNOMATCH=...]
#         [-DERRMATCH=...] -P run_check.cmake
# MATCH/NOMATCH apply to stdout, ERRMATCH to stderr. RC defaults to 0.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "^^" ";" _cmd "${CMD}")
string(REPLACE "^^" ";" _match "${MATCH}")
string(REPLACE "^^" ";" _nomatch "${NOMATCH}")
string(REPLACE "^^" ";" _errmatch "${ERRMATCH}")
if(NOT DEFINED RC)
  set(RC 0)
endif()
if(NOT _cmd)
  message(FATAL_ERROR "run_check.cmake: -DCMD= is missing")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)
run_program("${_cmd}" "${RC}" SEND_ERROR)
set(_out "${program_out}")
set(_err "${program_err}")
foreach(_re IN LISTS _match)
  if(NOT _out MATCHES "${_re}")
    message(SEND_ERROR "stdout does not match: ${_re}")
  endif()
endforeach()
foreach(_re IN LISTS _nomatch)
  if(_out MATCHES "${_re}")
    message(SEND_ERROR "stdout matches (but must not): ${_re}")
  endif()
endforeach()
foreach(_re IN LISTS _errmatch)
  if(NOT _err MATCHES "${_re}")
    message(SEND_ERROR "stderr does not match: ${_re}")
  endif()
endforeach()
