# Runs the SIR filter as one process and with `mpirun -np 2` and `-np 3` and
# fails unless they print the same (the wall-time and MPI lines aside) and
# write the same filter.csv and params.csv: the filter is the same for any
# number of ranks.
#   cmake -DSIR=<sir> -DMPIEXEC=<mpirun> -DWORK=<folder> [-DARGS="..."] -P same_for_any_rank_count.cmake
separate_arguments(_args UNIX_COMMAND "${ARGS}")
# CI runs as root in a container; Open MPI refuses root without these
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
# shared memory between the ranks of this host, without CMA (containers forbid it)
set(ENV{OMPI_MCA_btl} self,vader)
set(ENV{OMPI_MCA_btl_vader_single_copy_mechanism} none)
set(ENV{OMPI_MCA_pml} ob1)
file(REMOVE_RECURSE ${WORK})
foreach(np 1 2 3)
  if(np EQUAL 1)
    set(_cmd ${SIR})
  else()
    set(_cmd ${MPIEXEC} --oversubscribe -np ${np} ${SIR})
    # one thread per rank on the 2 cores of CI
    set(ENV{MARG_NUM_THREADS} 1)
  endif()
  execute_process(COMMAND ${_cmd} ${_args} --out ${WORK}/np${np} OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "sir with ${np} ranks exited with ${_rc}:\n${_out}\n${_err}")
  endif()
  string(REGEX REPLACE "wall time:[^\n]*" "" _out "${_out}")
  string(REGEX REPLACE "MPI: [^\n]*\n" "" _out "${_out}")
  set(_out_${np} "${_out}")
  file(READ ${WORK}/np${np}/filter.csv _filter_${np})
  file(READ ${WORK}/np${np}/params.csv _params_${np})
  if(NOT np EQUAL 1)
    foreach(what out filter params)
      if(NOT _${what}_1 STREQUAL _${what}_${np})
        message(FATAL_ERROR "sir's ${what} differs between 1 process and ${np} ranks:\n"
                            "--- 1\n${_${what}_1}\n--- ${np}\n${_${what}_${np}}")
      endif()
    endforeach()
  endif()
endforeach()
string(REGEX MATCH "log marginal likelihood estimate:[^\n]*" _ll "${_out_1}")
message(STATUS "sir output identical for 1 process, 2 and 3 ranks (${_ll})")
