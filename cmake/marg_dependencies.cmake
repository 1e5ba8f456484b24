# Dependencies come from Debian packages only (see README).
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)

# jemalloc: libmarg's private copy, built once per build tree from Debian's
# source package. Debian's binary archive (libjemalloc_pic.a) cannot serve:
# it is compiled with the initial-exec TLS model, and a shared object holding
# it sets STATIC_TLS, so dlopen (Python, Julia, R, JNI) fails with "cannot
# allocate memory in static TLS block". Built here with
#   --with-jemalloc-prefix=marg_je_     public API marg_je_malloc, ... (never
#                                       the program's malloc)
#   --with-private-namespace=marg_je_   internal symbols prefixed as well, so
#                                       nothing clashes with another jemalloc
#                                       linked into the same program
#   --disable-initial-exec-tls          global-dynamic TLS: dlopen-safe
#   --disable-cxx                       no operator new/delete
# and Debian's own page-size settings (debian/rules). Its objects become part
# of libmarg.a (a program linking it needs no jemalloc); libmarg.so links the
# archive with --exclude-libs so nothing of it is exported.
#
# The source comes from MARG_JEMALLOC_SOURCE_DIR (an unpacked source tree,
# e.g. from `apt-get source jemalloc`) or, when that is empty, from
# `apt-get source jemalloc` run into the build tree, which needs a deb-src
# entry in APT's sources (scripts/common.sh adds one on Debian).
set(MARG_JEMALLOC_SOURCE_DIR "$ENV{MARG_JEMALLOC_SOURCE_DIR}" CACHE PATH
    "Unpacked jemalloc source tree (Debian's source package); empty: apt-get source")

function(marg_fetch_jemalloc_source dir out)
  file(GLOB found LIST_DIRECTORIES true ${dir}/jemalloc-*/configure)
  if(NOT found)
    find_program(MARG_APT_GET apt-get)
    if(NOT MARG_APT_GET)
      message(FATAL_ERROR "libmarg: no jemalloc source: set MARG_JEMALLOC_SOURCE_DIR to an "
                          "unpacked jemalloc 5.3 source tree (Debian: apt-get source jemalloc)")
    endif()
    file(REMOVE_RECURSE ${dir})
    file(MAKE_DIRECTORY ${dir})
    message(STATUS "libmarg: apt-get source jemalloc (into ${dir})")
    execute_process(COMMAND ${MARG_APT_GET} source -qq jemalloc WORKING_DIRECTORY ${dir}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
    file(GLOB found LIST_DIRECTORIES true ${dir}/jemalloc-*/configure)
    if(rc OR NOT found)
      message(FATAL_ERROR "libmarg: `apt-get source jemalloc` failed:\n${log}\n"
                          "APT needs a deb-src entry and dpkg-dev (scripts/common.sh sets both "
                          "up on Debian), or set MARG_JEMALLOC_SOURCE_DIR")
    endif()
  endif()
  list(GET found 0 configure)
  get_filename_component(src ${configure} DIRECTORY)
  set(${out} ${src} PARENT_SCOPE)
endfunction()

function(marg_make_private_jemalloc)
  set(dir ${CMAKE_BINARY_DIR}/marg_jemalloc)
  set(src "${MARG_JEMALLOC_SOURCE_DIR}")
  if(src STREQUAL "")
    marg_fetch_jemalloc_source(${dir}/source src)
  elseif(NOT EXISTS ${src}/configure)
    message(FATAL_ERROR "libmarg: MARG_JEMALLOC_SOURCE_DIR=${src} holds no jemalloc configure")
  endif()
  # Debian's page sizes: 4 KiB pages on x86, up to 64 KiB elsewhere (debian/rules)
  set(lg_page 16)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i[3-6]86)$")
    set(lg_page 12)
  endif()
  set(options --with-jemalloc-prefix=marg_je_ --with-private-namespace=marg_je_
              --disable-initial-exec-tls --disable-cxx --disable-doc
              --with-lg-page=${lg_page} --with-lg-hugepage=21)
  if(CMAKE_CROSSCOMPILING)
    # configure's --host: the toolchain's triple, else the compiler's own
    set(host ${CMAKE_C_COMPILER_TARGET})
    if(NOT host)
      execute_process(COMMAND ${CMAKE_C_COMPILER} -dumpmachine OUTPUT_VARIABLE host
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
    endif()
    list(APPEND options --host=${host})
  endif()
  set(build ${dir}/build)
  set(archive ${build}/lib/libjemalloc_pic.a)
  set(stamp ${dir}/built.txt)
  set(id "${src} ${CMAKE_C_COMPILER} ${options} -g0 v3")
  set(old_id "")
  if(EXISTS ${stamp})
    file(READ ${stamp} old_id)
  endif()
  if(NOT old_id STREQUAL id OR NOT EXISTS ${archive})
    include(ProcessorCount)
    ProcessorCount(jobs)
    if(jobs EQUAL 0)
      set(jobs 2)
    endif()
    file(REMOVE_RECURSE ${build} ${dir}/objects)
    file(MAKE_DIRECTORY ${build} ${dir}/objects)
    message(STATUS "libmarg: building the private jemalloc from ${src}")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env CC=${CMAKE_C_COMPILER}
                            ${src}/configure ${options}
                    WORKING_DIRECTORY ${build} RESULT_VARIABLE rc
                    OUTPUT_FILE ${dir}/configure.log ERROR_FILE ${dir}/configure.log)
    if(NOT rc)
      # EXTRA_CFLAGS comes last: no debug info (jemalloc asks for -g3, which
      # makes its archive 40 MB instead of 1.2 MB and slows every link)
      execute_process(COMMAND make -j${jobs} build_lib_static EXTRA_CFLAGS=-g0
                      WORKING_DIRECTORY ${build}
                      RESULT_VARIABLE rc OUTPUT_FILE ${dir}/make.log ERROR_FILE ${dir}/make.log)
    endif()
    if(rc OR NOT EXISTS ${archive})
      message(FATAL_ERROR "libmarg: building jemalloc failed; see ${dir}/configure.log "
                          "and ${dir}/make.log")
    endif()
    execute_process(COMMAND ${CMAKE_AR} x ${archive} WORKING_DIRECTORY ${dir}/objects
                    RESULT_VARIABLE rc)
    if(rc)
      message(FATAL_ERROR "libmarg: cannot extract ${archive}")
    endif()
    file(WRITE ${stamp} "${id}")
  endif()
  file(GLOB objects ${dir}/objects/*.o)
  set(MARG_JEMALLOC_INCLUDE_DIR ${build}/include PARENT_SCOPE)
  set(MARG_JEMALLOC_PRIVATE_ARCHIVE ${archive} PARENT_SCOPE)
  set(MARG_JEMALLOC_PRIVATE_OBJECTS ${objects} PARENT_SCOPE)
endfunction()
marg_make_private_jemalloc()
