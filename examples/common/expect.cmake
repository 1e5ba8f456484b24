# Runs an example and checks its exit status and output: a ctest helper.
#   cmake -DCMD="<program> <args>" -DRC=<status> [-DOUT="regex"] [-DERR="regex"]
#         [-DNOT_OUT="regex"] [-DSTDOUT_TO=<file>] [-DLINK_DIR=<dir> -DLINK_NAME=<name>
#         -DLINK_TO=<target>] -P expect.cmake
# LINK_*: makes <dir> afresh holding the symbolic link <name> -> <target>
# (e.g. a result file that is /dev/full, a disk with no space left).
separate_arguments(_cmd UNIX_COMMAND "${CMD}")
if(LINK_DIR)
  file(REMOVE_RECURSE ${LINK_DIR})
  file(MAKE_DIRECTORY ${LINK_DIR})
  file(CREATE_LINK ${LINK_TO} ${LINK_DIR}/${LINK_NAME} SYMBOLIC)
endif()
if(STDOUT_TO)
  execute_process(COMMAND ${_cmd} OUTPUT_FILE ${STDOUT_TO} ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  set(_out "")
else()
  execute_process(COMMAND ${_cmd} OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
endif()
set(_show "command: ${CMD}\nexit status: ${_rc}\n--- stdout\n${_out}\n--- stderr\n${_err}")
if(NOT "${_rc}" STREQUAL "${RC}")
  message(FATAL_ERROR "expected exit status ${RC}\n${_show}")
endif()
if(DEFINED OUT AND NOT _out MATCHES "${OUT}")
  message(FATAL_ERROR "stdout does not match '${OUT}'\n${_show}")
endif()
if(DEFINED ERR AND NOT _err MATCHES "${ERR}")
  message(FATAL_ERROR "stderr does not match '${ERR}'\n${_show}")
endif()
if(DEFINED NOT_OUT AND _out MATCHES "${NOT_OUT}")
  message(FATAL_ERROR "stdout matches '${NOT_OUT}'\n${_show}")
endif()
message(STATUS "as expected: exit status ${_rc}")
