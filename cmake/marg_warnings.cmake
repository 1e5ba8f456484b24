# -Wall -Wextra -Werror on the project's own targets (host and device code),
# plus the MARG_SANITIZE flags (marg_sanitizers.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/marg_sanitizers.cmake)

function(marg_set_warnings target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
  # Host code targets the compiler's baseline (any x86-64, any aarch64); the
  # CPU kernels are built per instruction set and picked at run time
  # (marg_cpu_variants.cmake). MARG_NATIVE: everything for this machine's CPU.
  if(MARG_NATIVE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-march=native>
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-march=native>)
  endif()
  # after the warning flags: it may turn off a warning that they turn on
  marg_apply_sanitizers(${target})
endfunction()
