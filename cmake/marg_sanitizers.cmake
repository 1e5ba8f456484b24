# Sanitizer builds (host code): MARG_SANITIZE is empty (default), a list of
# -fsanitize= values such as "address,undefined", or "thread".
#
# Compile flags go on each project target through marg_set_warnings
# (marg_apply_sanitizers below); link flags go on every target created after
# this file is included (add_link_options), so that libraries that do not
# call marg_set_warnings (marg, marg_shared) and every executable link the
# sanitizer runtime. UBSan findings abort (-fno-sanitize-recover) so that a
# finding fails its test. Device code is never instrumented: use
# compute-sanitizer for it (scripts/gpu-check).
set(MARG_SANITIZE "" CACHE STRING
    "Sanitizers for the project's host code: empty, address,undefined, address, undefined or thread")
set_property(CACHE MARG_SANITIZE PROPERTY STRINGS "" "address,undefined" "address" "undefined"
                                                  "thread")

set(_marg_sanitize_compile "")
set(_marg_sanitize_link "")
if(NOT MARG_SANITIZE STREQUAL "")
  string(REPLACE "," ";" _marg_sanitizers "${MARG_SANITIZE}")
  foreach(s IN LISTS _marg_sanitizers)
    if(NOT s MATCHES "^(address|undefined|thread|leak)$")
      message(FATAL_ERROR "MARG_SANITIZE: unknown sanitizer '${s}' (address, undefined, thread, leak)")
    endif()
  endforeach()
  if("thread" IN_LIST _marg_sanitizers AND ("address" IN_LIST _marg_sanitizers OR
                                            "leak" IN_LIST _marg_sanitizers))
    message(FATAL_ERROR "MARG_SANITIZE: thread cannot be combined with address or leak")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "MARG_SANITIZE needs GCC or Clang (found ${CMAKE_CXX_COMPILER_ID})")
  endif()
  set(_marg_sanitize_compile -fsanitize=${MARG_SANITIZE} -fno-omit-frame-pointer -g)
  set(_marg_sanitize_link -fsanitize=${MARG_SANITIZE})
  # GCC's flow analysis sees the sanitizers' checks as paths where libstdc++
  # objects (std::function in <regex>) are uninitialized: false positives
  # that -Werror would turn into errors
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND _marg_sanitize_compile -Wno-maybe-uninitialized)
  endif()
  if("undefined" IN_LIST _marg_sanitizers)
    list(APPEND _marg_sanitize_compile -fno-sanitize-recover=all)
    list(APPEND _marg_sanitize_link -fno-sanitize-recover=all)
  endif()
  add_link_options(${_marg_sanitize_link})
  message(STATUS "libmarg: sanitizers ${MARG_SANITIZE} (host code; device code not instrumented)")
endif()

# Adds the MARG_SANITIZE compile flags to one target (C, C++ and the host
# side of CUDA sources).
function(marg_apply_sanitizers target)
  if(_marg_sanitize_compile)
    list(JOIN _marg_sanitize_compile "," _marg_xcompiler)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:${_marg_sanitize_compile}>
      $<$<COMPILE_LANGUAGE:C>:${_marg_sanitize_compile}>
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_marg_xcompiler}>)
  endif()
endfunction()
