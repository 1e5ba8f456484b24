# The CPU kernels (numeric/src/cpu: register tiles, Eigen block-Toeplitz
# GEMMs) are compiled once per instruction set and chosen at run time
# (numeric/src/cpu/isa.cpp); the rest of the library targets the baseline
# of its architecture (any x86-64, any aarch64).
#
# Each variant's objects are partially linked into one relocatable object
# whose only global symbol is its kernel table (libmarg_cpu_kernels_<isa>);
# every other symbol is made local and its COMDAT groups are dropped. Inline
# and template code (Eigen, std::vector, our headers) compiled with
# -march=x86-64-v3 therefore never stands in for the baseline's copy of the
# same function: without this step the linker keeps one COMDAT copy per
# name, and the baseline path (or any other libmarg object) may call AVX2
# code. The variant's own code lives in namespace marg::detail::cpu::<isa>
# too, so that its symbol names differ even before they are localized.
#
#   MARG_NATIVE=ON   one variant, "native", compiled with -march=native
#   x86-64           "baseline" (x86-64) and "x86_64_v3" (AVX2, FMA, BMI2)
#   other            "baseline" alone (aarch64: NEON and FMA are baseline)

set(_marg_cpu_check ${CMAKE_CURRENT_LIST_DIR}/marg_cpu_check_localized.cmake)

# the ISA variants of this build: sets MARG_CPU_ISAS (names) and, for each
# name, MARG_CPU_FLAGS_<name> (compile options)
function(marg_cpu_isas)
  if(MARG_NATIVE)
    set(isas native)
    set(MARG_CPU_FLAGS_native -march=native PARENT_SCOPE)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(isas baseline x86_64_v3)
    set(MARG_CPU_FLAGS_baseline "" PARENT_SCOPE)
    set(MARG_CPU_FLAGS_x86_64_v3 -march=x86-64-v3 PARENT_SCOPE)
  else()
    set(isas baseline)
    set(MARG_CPU_FLAGS_baseline "" PARENT_SCOPE)
  endif()
  set(MARG_CPU_ISAS ${isas} PARENT_SCOPE)
endfunction()

# Compiles `sources` once per ISA variant into a localized object each;
# MARG_CPU_VARIANT_OBJECTS (a global property) lists them for libmarg/. The
# dispatcher `target` learns the names through MARG_CPU_HAVE_<isa>=1.
function(marg_add_cpu_variants target)
  marg_cpu_isas()
  set(objects)
  foreach(isa IN LISTS MARG_CPU_ISAS)
    set(lib marg_cpu_${isa})
    add_library(${lib} OBJECT ${ARGN})
    set_target_properties(${lib} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_definitions(${lib} PRIVATE MARG_CPU_ISA_NS=${isa} ${MARG_CPU_DEFINITIONS})
    target_link_libraries(${lib} PRIVATE marg_headers Eigen3::Eigen Threads::Threads)
    marg_set_warnings(${lib})
    # -fno-gnu-unique: static locals of inline functions (Eigen's cache sizes)
    # as plain weak symbols, which the localizing step below can make local
    target_compile_options(${lib} PRIVATE ${MARG_CPU_FLAGS_${isa}}
                                          $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
    target_compile_definitions(${target} PRIVATE MARG_CPU_HAVE_${isa}=1)

    set(merged ${CMAKE_CURRENT_BINARY_DIR}/${lib}.merged.o)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${lib}.o)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_LINKER} -r $<TARGET_OBJECTS:${lib}> -o ${merged}
      COMMAND ${CMAKE_OBJCOPY} --keep-global-symbol=libmarg_cpu_kernels_${isa}
              --remove-section=.group ${merged} ${out}
      COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DOBJECT=${out}
              -DKEEP=libmarg_cpu_kernels_${isa} -P ${_marg_cpu_check}
      DEPENDS ${lib} $<TARGET_OBJECTS:${lib}> ${_marg_cpu_check}
      COMMAND_EXPAND_LISTS VERBATIM
      COMMENT "Localizing the ${isa} CPU kernels")
    list(APPEND objects ${out})
  endforeach()
  add_custom_target(marg_cpu_variants DEPENDS ${objects})
  set_property(GLOBAL PROPERTY MARG_CPU_VARIANT_OBJECTS ${objects})
endfunction()
