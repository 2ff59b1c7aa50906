# Included by the check scripts of this directory.
# run_program(<command list> <expected exit status> <severity>): runs the command, shows its
# output in the test's log and sets program_out and program_err (stdout, stderr) in the
# caller's scope; an exit status other than the expected one is reported with
# message(<severity>): SEND_ERROR lets the script go on checking, FATAL_ERROR stops it.
function(run_program cmd want severity)
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("---- stdout\n${out}---- stderr\n${err}---- exit status ${rc}")
  if(NOT "${rc}" STREQUAL "${want}")
    message(${severity} "exit status ${rc}, expected ${want}")
  endif()
  set(program_out "${out}" PARENT_SCOPE)
  set(program_err "${err}" PARENT_SCOPE)
endfunction()
