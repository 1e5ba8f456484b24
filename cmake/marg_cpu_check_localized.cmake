# cmake -DNM=<nm> -DOBJECT=<localized variant object> -DKEEP=<symbol> -P this:
# fails unless KEEP is the object's only global or weak definition (see
# marg_cpu_variants.cmake: any other would let the linker mix ISA variants)
execute_process(COMMAND ${NM} -g --defined-only ${OBJECT} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${NM} failed on ${OBJECT}")
endif()
string(REGEX REPLACE "[^\n]* [A-Za-z] " "" names "${out}")
string(STRIP "${names}" names)
if(NOT names STREQUAL KEEP)
  message(FATAL_ERROR "${OBJECT} defines global symbols other than ${KEEP}:\n${out}")
endif()
