# Runs sir at its defaults (CPU backend) and fails unless README.md holds the
# printed estimates verbatim between the markers
#   <!-- sir defaults: begin --> and <!-- sir defaults: end -->.
# With -DUPDATE=ON it writes them there instead (regenerating the figures).
#   cmake -DSIR=<path to sir> -DREADME=<README.md> [-DUPDATE=ON] -P readme_figures.cmake
execute_process(COMMAND ${SIR} --backend cpu --quiet OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "sir exited with ${_rc}:\n${_out}")
endif()
# from the log-likelihood line to the last warning or parameter line
string(REGEX MATCH "log marginal likelihood estimate:[^\n]*\n([^\n]+\n)*" _block "${_out}")
string(REGEX REPLACE "\n+$" "" _block "${_block}")
if(_block STREQUAL "")
  message(FATAL_ERROR "no estimates in the output of sir:\n${_out}")
endif()
set(_begin "<!-- sir defaults: begin -->")
set(_end "<!-- sir defaults: end -->")
file(READ ${README} _readme)
string(FIND "${_readme}" "${_begin}" _b)
string(FIND "${_readme}" "${_end}" _e)
if(_b LESS 0 OR _e LESS _b)
  message(FATAL_ERROR "${README} lacks the markers ${_begin} ... ${_end}")
endif()
string(LENGTH "${_begin}" _bl)
math(EXPR _start "${_b} + ${_bl}")
math(EXPR _len "${_e} - ${_start}")
string(SUBSTRING "${_readme}" ${_start} ${_len} _have)
set(_want "\n\n    ${_block}\n\n")
string(REPLACE "\n" "\n    " _indented "${_block}")
set(_want "\n\n    ${_indented}\n\n")
if(_have STREQUAL _want)
  message(STATUS "README figures match the program's output")
elseif(UPDATE)
  string(SUBSTRING "${_readme}" 0 ${_start} _head)
  string(SUBSTRING "${_readme}" ${_e} -1 _tail)
  file(WRITE ${README} "${_head}${_want}${_tail}")
  message(STATUS "README figures regenerated")
else()
  message(FATAL_ERROR "README figures are stale; regenerate them with\n"
                      "  cmake -DSIR=${SIR} -DREADME=${README} -DUPDATE=ON -P ${CMAKE_CURRENT_LIST_FILE}\n"
                      "--- README has\n${_have}\n--- sir prints\n${_want}")
endif()
