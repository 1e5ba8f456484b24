#include <marg/numeric/backend.hpp>
#include <marg/numeric/error.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "detail/banded.hpp"
#include "detail/environment.hpp"

namespace marg {
namespace {

// set_backend's choice; -1: none yet (MARG_BACKEND, else automatic)
std::atomic<int> requested{-1};

// MARG_NUM_THREADS, else the hardware concurrency; a bad value gives the
// hardware concurrency here (cpu_threads cannot throw) and an exception from
// every computing call (check_environment)
int initial_cpu_threads() {
  const detail::env_setting& e = detail::environment(detail::env_var::num_threads);
  if (e.present && e.error.empty()) return static_cast<int>(e.value);
  return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int>& threads_setting() {
  static std::atomic<int> threads{initial_cpu_threads()};
  return threads;
}

}  // namespace

bool cuda_compiled() noexcept {
#ifdef MARG_WITH_CUDA
  return true;
#else
  return false;
#endif
}

#ifdef MARG_WITH_CUDA
namespace detail::cuda {
const char* unusable_reason() noexcept;  // src/cuda/device.cu
}
#endif

const char* cuda_unusable_reason() noexcept {
#ifdef MARG_WITH_CUDA
  return detail::cuda::unusable_reason();
#else
  return "this build of libmarg has no CUDA backend";
#endif
}

int device_count() {
#ifdef MARG_WITH_CUDA
  // probed once: no driver or no GPU counts as zero devices
  static const int count = detail::cuda::device_count();
  return count;
#else
  return 0;
#endif
}

void set_backend(backend b) {
  MARG_EXPECTS(b == backend::automatic || b == backend::cpu || b == backend::cuda,
               detail::bad_argument("marg::set_backend", "b", static_cast<std::int64_t>(b),
                                    "automatic, cpu or cuda"));
  if (b == backend::cuda)
    MARG_EXPECTS(
        *cuda_unusable_reason() == '\0',
        std::string("marg::set_backend: b = cuda, but the CUDA backend cannot run here: ") +
            cuda_unusable_reason());
  detail::env_override(detail::env_var::backend);
  requested.store(static_cast<int>(b));
}

backend requested_backend() {
  if (const int r = requested.load(); r >= 0) return static_cast<backend>(r);
  detail::env_check(detail::env_var::backend);
  const detail::env_setting& e = detail::environment(detail::env_var::backend);
  if (!e.present) return backend::automatic;
  const auto b = static_cast<backend>(e.value);
  MARG_EXPECTS(b != backend::cuda || *cuda_unusable_reason() == '\0',
               std::string("environment variable MARG_BACKEND = 'cuda', but the CUDA backend "
                           "cannot run here: ") +
                   cuda_unusable_reason() + " (use cpu or automatic, or unset it)");
  return b;
}

backend current_backend() {
  switch (requested_backend()) {
    case backend::cpu:
      return backend::cpu;
    case backend::cuda:
      return backend::cuda;
    case backend::automatic:
      break;
  }
  if (device_count() == 0) return backend::cpu;
  if (*cuda_unusable_reason() == '\0') return backend::cuda;
  // a GPU is there but cannot run this build: said once, as the CPU is
  // then much slower than the user may expect
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fprintf(stderr, "libmarg: the CUDA backend cannot run here, computing on the CPU: %s\n",
                 cuda_unusable_reason());
  return backend::cpu;
}

namespace detail {
#ifdef MARG_WITH_CUDA
namespace cuda {
void launch_invalid_for_testing();
}
#endif

// Test hook (declared by the tests, not in a header): a failing kernel launch
// through the library's own launch check.
void inject_cuda_launch_error_for_testing() {
#ifdef MARG_WITH_CUDA
  cuda::launch_invalid_for_testing();
#else
  throw marg::invalid_argument("inject_cuda_launch_error_for_testing: no CUDA backend");
#endif
}
}  // namespace detail

void set_cpu_threads(int threads) {
  MARG_EXPECTS(threads >= 1,
               detail::bad_argument("marg::set_cpu_threads", "threads", threads, ">= 1"));
  detail::env_override(detail::env_var::num_threads);
  threads_setting().store(threads);
}

int cpu_threads() noexcept {
  return threads_setting().load();
}

}  // namespace marg
