// Run-time choice of the CPU kernels' instruction set. banded_cpu.cpp and
// correlate.cpp are compiled once per ISA variant into objects whose only
// global symbol is their kernel_table (cmake/marg_cpu_variants.cmake);
// isa.cpp, compiled for the baseline, lists the variants built in, keeps
// those this CPU runs and picks the best, or the one MARG_CPU_ISA names.
// Not installed.
#pragma once

#include <span>
#include <string_view>

#include "../detail/banded.hpp"

namespace marg::detail::cpu {

/// The entry points of one ISA variant of the CPU kernels.
struct kernel_table {
  const char* name;  ///< "baseline", "x86_64_v3" or "native"
  void (*run_float)(const banded_args<float>&);
  void (*run_double)(const banded_args<double>&);
};

/// @return the variants this binary holds that this CPU can run, best first
/// (never empty: the baseline, or "native" in a MARG_NATIVE build)
std::span<const kernel_table* const> runnable_kernels() noexcept;

/// @return the variant named `name` if this CPU runs it, else nullptr
const kernel_table* find_kernels(std::string_view name) noexcept;

/// @return the variant in use: the one the environment variable MARG_CPU_ISA
/// names (read once, at the first call) when this CPU runs it, else the
/// first of runnable_kernels(); a name that is not runnable is reported once
/// on stderr
const kernel_table& selected_kernels() noexcept;

}  // namespace marg::detail::cpu
