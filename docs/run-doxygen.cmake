# Runs Doxygen for the `docs` target:
#   cmake -DDOXYGEN=... -DDOXYFILE=... -DOUTPUT=... -DSOURCE=<repository> -P run-doxygen.cmake
# Doxygen reports undocumented members only in documented files, so every
# public header must carry a @file comment (checked here first).
# Doxygen writes every warning to OUTPUT/warnings.log and, with WARN_AS_ERROR =
# FAIL_ON_WARNINGS, exits non-zero after the run. On failure the warnings are
# printed and index.html removed, so that the next build runs Doxygen again.
file(GLOB_RECURSE headers ${SOURCE}/numeric/include/*.h* ${SOURCE}/distributions/include/*.h*
     ${SOURCE}/libmarg/include/*.h*)
set(missing "")
foreach(h IN LISTS headers)
  file(READ ${h} text)
  if(NOT text MATCHES "@file")
    string(APPEND missing "  ${h}\n")
  endif()
endforeach()
if(NOT missing STREQUAL "")
  file(REMOVE ${OUTPUT}/html/index.html)
  message(FATAL_ERROR "public headers without a @file comment (Doxygen would not check them):\n${missing}")
endif()

file(REMOVE ${OUTPUT}/warnings.log)
execute_process(COMMAND ${DOXYGEN} ${DOXYFILE} RESULT_VARIABLE rc)
set(warnings "")
if(EXISTS ${OUTPUT}/warnings.log)
  file(READ ${OUTPUT}/warnings.log warnings)
endif()
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  file(REMOVE ${OUTPUT}/html/index.html)
  message(FATAL_ERROR "Doxygen failed (exit ${rc}): undocumented or badly documented public "
                      "symbols:\n${warnings}")
endif()
