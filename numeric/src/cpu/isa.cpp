// Run-time dispatch of the CPU kernels (isa.hpp). Compiled for the baseline:
// it runs on every CPU of the architecture, before any variant is chosen.
#include "isa.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

extern "C" {
#ifdef MARG_CPU_HAVE_native
extern const marg::detail::cpu::kernel_table libmarg_cpu_kernels_native;
#endif
#ifdef MARG_CPU_HAVE_x86_64_v3
extern const marg::detail::cpu::kernel_table libmarg_cpu_kernels_x86_64_v3;
#endif
#ifdef MARG_CPU_HAVE_baseline
extern const marg::detail::cpu::kernel_table libmarg_cpu_kernels_baseline;
#endif
}

namespace marg::detail::cpu {
namespace {

#ifdef MARG_CPU_HAVE_x86_64_v3
// what -march=x86-64-v3 lets the compiler use; __builtin_cpu_supports also
// checks that the OS saves the AVX registers (XCR0)
bool runs_x86_64_v3() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
         __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
}
#endif

struct kernel_list {
  const kernel_table* tables[3];
  std::size_t count = 0;
  kernel_list() noexcept : tables{} {
    // best first
#ifdef MARG_CPU_HAVE_native
    tables[count++] = &libmarg_cpu_kernels_native;
#endif
#ifdef MARG_CPU_HAVE_x86_64_v3
    if (runs_x86_64_v3()) tables[count++] = &libmarg_cpu_kernels_x86_64_v3;
#endif
#ifdef MARG_CPU_HAVE_baseline
    tables[count++] = &libmarg_cpu_kernels_baseline;
#endif
  }
};

const kernel_list& runnable() noexcept {
  static const kernel_list list;
  return list;
}

const kernel_table& choose() noexcept {
  const kernel_table& best = *runnable().tables[0];
  const char* env = std::getenv("MARG_CPU_ISA");
  if (env == nullptr || *env == '\0') return best;
  if (const kernel_table* t = find_kernels(env)) return *t;
  std::string names;
  for (const kernel_table* t : runnable_kernels()) names += std::string(" ") + t->name;
  std::fprintf(stderr,
               "libmarg: MARG_CPU_ISA=%s is not a CPU kernel variant this machine runs "
               "(runnable:%s); using %s\n",
               env, names.c_str(), best.name);
  return best;
}

}  // namespace

std::span<const kernel_table* const> runnable_kernels() noexcept {
  const kernel_list& l = runnable();
  return {l.tables, l.count};
}

const kernel_table* find_kernels(std::string_view name) noexcept {
  for (const kernel_table* t : runnable_kernels())
    if (name == t->name) return t;
  return nullptr;
}

const kernel_table& selected_kernels() noexcept {
  static const kernel_table& chosen = choose();
  return chosen;
}

template <class T>
void run(const banded_args<T>& args) {
  const kernel_table& k = selected_kernels();
  if constexpr (std::is_same_v<T, float>)
    k.run_float(args);
  else
    k.run_double(args);
}

template void run<float>(const banded_args<float>&);
template void run<double>(const banded_args<double>&);

}  // namespace marg::detail::cpu
