# Runs the SIR filter with 1 and with 3 host threads and fails unless the
# outputs are identical (the wall-time line aside): every per-particle loop
# and every batched call must cut its work into fixed chunks.
#   cmake -DSIR=<path to sir> [-DARGS="..."] -P same_for_any_thread_count.cmake
separate_arguments(_args UNIX_COMMAND "${ARGS}")
foreach(threads 1 3)
  set(ENV{MARG_NUM_THREADS} ${threads})
  execute_process(COMMAND ${SIR} ${_args} OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "sir with MARG_NUM_THREADS=${threads} exited with ${_rc}:\n${_out}")
  endif()
  string(REGEX REPLACE "wall time:[^\n]*" "" _out "${_out}")
  set(_out_${threads} "${_out}")
endforeach()
if(NOT _out_1 STREQUAL _out_3)
  message(FATAL_ERROR "sir output differs between 1 and 3 threads:\n--- 1\n${_out_1}\n--- 3\n${_out_3}")
endif()
message(STATUS "sir output identical for 1 and 3 threads")
