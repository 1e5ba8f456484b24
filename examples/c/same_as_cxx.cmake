# Runs `sir --no-move --replicates 1` (C++) and sir_day (C) with the same seed and particle
# count; fails unless both print the same log marginal likelihood (10
# significant digits, as sir writes it to summary.csv).
# cmake -DSIR=... -DSIR_C=... -DPARTICLES=N -DSEED=S -DWORK=DIR -P same_as_cxx.cmake
execute_process(COMMAND ${SIR} --no-move --replicates 1 --backend cpu --particles ${PARTICLES} --seed ${SEED}
                        --quiet --out ${WORK}
                RESULT_VARIABLE rc_cxx OUTPUT_QUIET)
if(NOT rc_cxx EQUAL 0)
  message(FATAL_ERROR "sir failed (${rc_cxx})")
endif()
file(STRINGS ${WORK}/summary.csv lines)
list(GET lines 1 row)
string(REPLACE "," ";" fields "${row}")
list(GET fields 0 ll_cxx)
execute_process(COMMAND ${SIR_C} --particles ${PARTICLES} --seed ${SEED}
                RESULT_VARIABLE rc_c OUTPUT_VARIABLE out_c)
if(NOT rc_c EQUAL 0)
  message(FATAL_ERROR "sir_day failed (${rc_c})")
endif()
string(REGEX MATCH "estimate: ([^\n]+)" _ "${out_c}")
set(ll_c ${CMAKE_MATCH_1})
message(STATUS "log likelihood: C++ ${ll_cxx}, C ${ll_c}")
if(NOT ll_c STREQUAL ll_cxx)
  message(FATAL_ERROR "the C day step gives ${ll_c}, the C++ example ${ll_cxx}")
endif()
