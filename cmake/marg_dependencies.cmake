# Dependencies come from Debian packages only (see README).
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)

# jemalloc is linked statically from Debian's PIC archive and kept private.
# Debian builds it without a symbol prefix: its archive defines malloc, free,
# calloc, realloc, posix_memalign, ... and (jemalloc_cpp.pic.o) operator
# new/delete. Linked as is into a program, those would replace the program's
# own allocator. So, at configure time, a private copy is made:
#   1. jemalloc_cpp.pic.o (operator new/delete) is dropped;
#   2. every global symbol the archive defines is renamed with the prefix
#      marg_je_ (objcopy --redefine-syms), references inside the archive
#      included, so malloc becomes marg_je_malloc, mallocx marg_je_mallocx and
#      the internal je_* symbols marg_je_je_*; references to libc stay as they are;
#   3. its objects are extracted and become part of libmarg itself (a static
#      libmarg.a needs no jemalloc at link time; a shared libmarg links the
#      renamed archive with --exclude-libs so nothing of it is exported).
# numeric/src/memory/jemalloc.hpp maps the header's je_* names onto marg_je_*.
find_path(MARG_JEMALLOC_INCLUDE_DIR jemalloc/jemalloc.h REQUIRED)
find_library(MARG_JEMALLOC_PIC_LIBRARY NAMES libjemalloc_pic.a REQUIRED)

function(marg_make_private_jemalloc)
  set(dir ${CMAKE_BINARY_DIR}/marg_jemalloc)
  set(archive ${dir}/libmarg_jemalloc.a)
  set(stamp ${dir}/source.txt)
  # the copy is remade when the Debian archive changes (it triggers a reconfigure)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${MARG_JEMALLOC_PIC_LIBRARY})
  file(TIMESTAMP ${MARG_JEMALLOC_PIC_LIBRARY} src_time)
  set(id "${MARG_JEMALLOC_PIC_LIBRARY} ${src_time} v2")
  set(old_id "")
  if(EXISTS ${stamp})
    file(READ ${stamp} old_id)
  endif()
  if(NOT old_id STREQUAL id OR NOT EXISTS ${archive})
    foreach(tool CMAKE_NM CMAKE_AR CMAKE_OBJCOPY)
      if(NOT ${tool})
        message(FATAL_ERROR "libmarg: ${tool} is needed to make jemalloc private")
      endif()
    endforeach()
    file(REMOVE_RECURSE ${dir})
    file(MAKE_DIRECTORY ${dir}/objects)
    configure_file(${MARG_JEMALLOC_PIC_LIBRARY} ${dir}/copy.a COPYONLY)
    execute_process(COMMAND ${CMAKE_AR} d ${dir}/copy.a jemalloc_cpp.pic.o
                    RESULT_VARIABLE rc)
    execute_process(COMMAND ${CMAKE_NM} -g --defined-only ${dir}/copy.a
                    OUTPUT_VARIABLE syms RESULT_VARIABLE rc2)
    if(rc OR rc2)
      message(FATAL_ERROR "libmarg: cannot read ${MARG_JEMALLOC_PIC_LIBRARY}")
    endif()
    string(REGEX MATCHALL "[0-9a-fA-F]+ [A-Za-z] [^\n]+" lines "${syms}")
    set(names "")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[0-9a-fA-F]+ [A-Za-z] " "" name "${line}")
      list(APPEND names "${name}")
    endforeach()
    list(REMOVE_DUPLICATES names)
    list(TRANSFORM names REPLACE "^(.+)$" "\\1 marg_je_\\1")
    list(JOIN names "\n" map)
    file(WRITE ${dir}/rename.txt "${map}\n")
    execute_process(COMMAND ${CMAKE_OBJCOPY} --redefine-syms=${dir}/rename.txt
                            ${dir}/copy.a ${archive} RESULT_VARIABLE rc)
    if(rc)
      message(FATAL_ERROR "libmarg: objcopy failed on the jemalloc archive")
    endif()
    file(REMOVE ${dir}/copy.a)
    execute_process(COMMAND ${CMAKE_AR} x ${archive} WORKING_DIRECTORY ${dir}/objects
                    RESULT_VARIABLE rc)
    if(rc)
      message(FATAL_ERROR "libmarg: cannot extract ${archive}")
    endif()
    file(WRITE ${stamp} "${id}")
  endif()
  file(GLOB objects ${dir}/objects/*.o)
  set(MARG_JEMALLOC_PRIVATE_ARCHIVE ${archive} PARENT_SCOPE)
  set(MARG_JEMALLOC_PRIVATE_OBJECTS ${objects} PARENT_SCOPE)
endfunction()
marg_make_private_jemalloc()
