// The C API: each function forwards to the C++ API inside a guard that turns
// exceptions into status codes and a thread-local message.
#include <marg/marg.h>

#include <marg/marg.hpp>
#include <marg/numeric/graph.hpp>

#include "../../numeric/src/memory/device_memory.hpp"
#include "c_guard.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace {

using marg::detail::c_api::fail;
using marg::detail::c_api::guarded;

marg::stream_view view(void* stream) {
  return marg::stream_view{stream};
}

// a host copy of `length` strided values in host, managed or device memory,
// each checked finite and non-negative; the caller has waited for the stream
template <class T>
std::vector<T> host_values(const char* function, const char* name, int length, const T* w,
                           int inc) {
  MARG_EXPECTS(length >= 1,
               marg::detail::bad_argument(function, (std::string("length of ") + name).c_str(),
                                          length, ">= 1"));
  MARG_EXPECTS(inc >= 1, marg::detail::bad_argument(
                             function, (std::string("stride of ") + name).c_str(), inc, ">= 1"));
  MARG_EXPECTS(w != nullptr, std::string(function) + ": " + name + " is null");
  std::vector<T> v(static_cast<std::size_t>(length));
  marg::detail::device::copy_strided(v.data(), sizeof(T), w, sizeof(T) * inc, sizeof(T), v.size());
  for (int i = 0; i < length; ++i)
    MARG_EXPECTS(std::isfinite(v[i]) && v[i] >= 0,
                 marg::detail::bad_real_argument(
                     function, (std::string(name) + "[" + std::to_string(i) + "]").c_str(),
                     static_cast<double>(v[i]), "finite and >= 0"));
  return v;
}

// log sum_j p_j q_{k-j} of the values as given (the numeric layer's rule: no
// normalization), summed in long double so that products below T's range count
template <class T>
marg_status log_prob_sum(const char* function, int m, const T* p, int incp, std::int64_t lower_x,
                         int n, const T* q, int incq, std::int64_t lower_y, std::int64_t k,
                         T* log_prob, void* stream) {
  return guarded([&] {
    MARG_EXPECTS(log_prob != nullptr, std::string(function) + ": log_prob is null");
    marg::synchronize(view(stream));
    const std::vector<T> a = host_values(function, "p", m, p, incp);
    const std::vector<T> b = host_values(function, "q", n, q, incq);
    // k - lower_x - lower_y in long double: no int64 overflow for any bounds
    const long double d = static_cast<long double>(k) - lower_x - lower_y;
    long double s = 0;
    if (d >= 0 && d <= static_cast<long double>(m) + n - 2) {
      const auto i = static_cast<std::int64_t>(d);
      const std::int64_t j0 = std::max<std::int64_t>(0, i - (n - 1));
      const std::int64_t j1 = std::min<std::int64_t>(m - 1, i);
      for (std::int64_t j = j0; j <= j1; ++j) s += static_cast<long double>(a[j]) * b[i - j];
    }
    *log_prob = s > 0 ? static_cast<T>(std::log(s)) : -std::numeric_limits<T>::infinity();
  });
}

// carries a failed status of a C callback through the C++ API
struct callback_failed {
  marg_status status;
};

// guarded, where fn may also end in a C callback's failed status (its
// message is already stored)
template <class F>
marg_status guarded_calls(F&& fn) noexcept {
  marg_status failed = MARG_SUCCESS;
  const marg_status st = guarded([&] {
    try {
      fn();
    } catch (const callback_failed& e) {
      failed = e.status;
    }
  });
  return st != MARG_SUCCESS ? st : failed;
}

}  // namespace

struct marg_graph {
  marg::call_graph graph;
};

extern "C" {

const char* marg_status_string(marg_status status) {
  switch (status) {
    case MARG_SUCCESS:
      return "success";
    case MARG_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case MARG_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case MARG_ERROR_CUDA:
      return "CUDA error";
    case MARG_ERROR_INTERNAL:
      return "internal error";
    case MARG_STATUS_MAX_ENUM:
      break;
  }
  return "unknown status";
}

const char* marg_last_error_message(void) {
  return marg::detail::c_api::last_error.c_str();
}

const char* marg_version(void) {
  return MARG_VERSION_STRING;
}

marg_status marg_set_backend(marg_backend backend) {
  return guarded([&] {
    switch (backend) {
      case MARG_BACKEND_AUTOMATIC:
        marg::set_backend(marg::backend::automatic);
        return;
      case MARG_BACKEND_CPU:
        marg::set_backend(marg::backend::cpu);
        return;
      case MARG_BACKEND_CUDA:
        marg::set_backend(marg::backend::cuda);
        return;
      case MARG_BACKEND_MAX_ENUM:
        break;
    }
    MARG_EXPECTS(false, marg::detail::bad_argument("marg_set_backend", "backend",
                                                   static_cast<std::int64_t>(backend),
                                                   "MARG_BACKEND_AUTOMATIC, _CPU or _CUDA"));
  });
}

marg_status marg_get_backend(marg_backend* backend) {
  return guarded([&] {
    MARG_EXPECTS(backend != nullptr, std::string("marg_get_backend: backend is null"));
    *backend =
        marg::current_backend() == marg::backend::cuda ? MARG_BACKEND_CUDA : MARG_BACKEND_CPU;
  });
}

marg_status marg_device_count(int* count) {
  return guarded([&] {
    MARG_EXPECTS(count != nullptr, std::string("marg_device_count: count is null"));
    *count = marg::device_count();
  });
}

const char* marg_cuda_unusable_reason(void) {
  return marg::cuda_unusable_reason();
}

marg_status marg_set_planner_mode(marg_planner_mode mode) {
  return guarded([&] {
    MARG_EXPECTS(
        mode == MARG_PLANNER_ESTIMATE || mode == MARG_PLANNER_MEASURE,
        marg::detail::bad_argument("marg_set_planner_mode", "mode", static_cast<std::int64_t>(mode),
                                   "MARG_PLANNER_ESTIMATE or _MEASURE"));
    marg::set_planner_mode(mode == MARG_PLANNER_MEASURE ? marg::planner_mode::measure
                                                        : marg::planner_mode::estimate);
  });
}

marg_status marg_get_planner_mode(marg_planner_mode* mode) {
  return guarded([&] {
    MARG_EXPECTS(mode != nullptr, std::string("marg_get_planner_mode: mode is null"));
    *mode = marg::current_planner_mode() == marg::planner_mode::measure ? MARG_PLANNER_MEASURE
                                                                        : MARG_PLANNER_ESTIMATE;
  });
}

marg_status marg_export_wisdom(const char* path) {
  return guarded([&] {
    MARG_EXPECTS(path != nullptr, std::string("marg_export_wisdom: path is null"));
    marg::export_wisdom(path);
  });
}

marg_status marg_import_wisdom(const char* path) {
  return guarded([&] {
    MARG_EXPECTS(path != nullptr, std::string("marg_import_wisdom: path is null"));
    marg::import_wisdom(path);
  });
}

marg_status marg_export_wisdom_text(char* text, size_t capacity, size_t* length) {
  return guarded([&] {
    MARG_EXPECTS(length != nullptr, std::string("marg_export_wisdom_text: length is null"));
    const std::string w = marg::wisdom_text();
    *length = w.size();
    MARG_EXPECTS(text != nullptr && capacity > w.size(),
                 "marg_export_wisdom_text: the text needs " + std::to_string(w.size() + 1) +
                     " bytes with its terminating 0, capacity is " + std::to_string(capacity));
    std::memcpy(text, w.c_str(), w.size() + 1);
  });
}

marg_status marg_import_wisdom_text(const char* text) {
  return guarded([&] {
    MARG_EXPECTS(text != nullptr, std::string("marg_import_wisdom_text: text is null"));
    marg::import_wisdom_text(text);
  });
}

marg_status marg_forget_wisdom(void) {
  return guarded([] { marg::forget_wisdom(); });
}

marg_status marg_capture(void* stream, marg_status (*calls)(void* user), void* user,
                         marg_graph** graph) {
  if (graph != nullptr) *graph = nullptr;
  return guarded_calls([&] {
    MARG_EXPECTS(calls != nullptr, "marg_capture: calls is null");
    MARG_EXPECTS(graph != nullptr, "marg_capture: graph is null");
    auto g = std::make_unique<marg_graph>();
    g->graph = marg::capture_calls(view(stream), [calls, user] {
      const marg_status s = calls(user);
      if (s != MARG_SUCCESS) throw callback_failed{s};
    });
    *graph = g.release();
  });
}

marg_status marg_graph_replay(const marg_graph* graph, void* stream) {
  return guarded_calls([&] {
    MARG_EXPECTS(graph != nullptr, "marg_graph_replay: graph is null");
    graph->graph.replay(view(stream));
  });
}

void marg_graph_destroy(marg_graph* graph) {
  delete graph;
}

marg_status marg_synchronize(void* stream) {
  return guarded([&] { marg::synchronize(view(stream)); });
}

marg_status marg_set_pool_limit(size_t bytes) {
  return guarded([&] { marg::set_pool_limit(bytes); });
}

marg_status marg_pool_stats(size_t* in_use, size_t* reserved, size_t* limit) {
  return guarded([&] {
    const marg::pool_statistics s = marg::pool_stats();
    if (in_use != nullptr) *in_use = s.bytes_in_use;
    if (reserved != nullptr) *reserved = s.bytes_reserved;
    if (limit != nullptr) *limit = s.limit;
  });
}

// one C function per C++ entry point and precision
#define MARG_C_SINGLE(cname, cxxname, T)                                                          \
  marg_status cname(int m, int n, const T* x, int incx, const T* y, int incy, T* out, int incout, \
                    void* stream) {                                                               \
    return guarded([&] { marg::cxxname<T>(m, n, x, incx, y, incy, out, incout, view(stream)); }); \
  }
#define MARG_C_BATCHED(cname, cxxname, T)                                                       \
  marg_status cname(int m, int n, const T* x, int incx, int64_t stridex, const T* y, int incy,  \
                    int64_t stridey, T* out, int incout, int64_t strideout, int batch,          \
                    void* stream) {                                                             \
    return guarded([&] {                                                                        \
      marg::cxxname<T>(m, n, x, incx, stridex, y, incy, stridey, out, incout, strideout, batch, \
                       view(stream));                                                           \
    });                                                                                         \
  }

MARG_C_SINGLE(marg_convolve_f32, convolve, float)
MARG_C_SINGLE(marg_convolve_f64, convolve, double)
MARG_C_SINGLE(marg_convolve_grad_p_f32, convolve_grad_p, float)
MARG_C_SINGLE(marg_convolve_grad_p_f64, convolve_grad_p, double)
MARG_C_SINGLE(marg_convolve_grad_q_f32, convolve_grad_q, float)
MARG_C_SINGLE(marg_convolve_grad_q_f64, convolve_grad_q, double)
MARG_C_BATCHED(marg_convolve_batched_f32, convolve_batched, float)
MARG_C_BATCHED(marg_convolve_batched_f64, convolve_batched, double)
MARG_C_BATCHED(marg_convolve_grad_p_batched_f32, convolve_grad_p_batched, float)
MARG_C_BATCHED(marg_convolve_grad_p_batched_f64, convolve_grad_p_batched, double)
MARG_C_BATCHED(marg_convolve_grad_q_batched_f32, convolve_grad_q_batched, float)
MARG_C_BATCHED(marg_convolve_grad_q_batched_f64, convolve_grad_q_batched, double)

MARG_C_SINGLE(marg_log_convolve_f32, log_convolve, float)
MARG_C_SINGLE(marg_log_convolve_f64, log_convolve, double)
MARG_C_BATCHED(marg_log_convolve_batched_f32, log_convolve_batched, float)
MARG_C_BATCHED(marg_log_convolve_batched_f64, log_convolve_batched, double)

// the log-space gradients read the forward result r as well
#define MARG_C_LOG_GRAD(cname, cxxname, T)                                                   \
  marg_status cname(int m, int n, const T* g, int incg, const T* a, int inca, const T* b,    \
                    int incb, const T* r, int incr, T* out, int incout, void* stream) {      \
    return guarded([&] {                                                                     \
      marg::cxxname<T>(m, n, g, incg, a, inca, b, incb, r, incr, out, incout, view(stream)); \
    });                                                                                      \
  }
MARG_C_LOG_GRAD(marg_log_convolve_grad_a_f32, log_convolve_grad_a, float)
MARG_C_LOG_GRAD(marg_log_convolve_grad_a_f64, log_convolve_grad_a, double)
MARG_C_LOG_GRAD(marg_log_convolve_grad_b_f32, log_convolve_grad_b, float)
MARG_C_LOG_GRAD(marg_log_convolve_grad_b_f64, log_convolve_grad_b, double)

marg_status marg_log_prob_sum_f32(int m, const float* p, int incp, int64_t lower_x, int n,
                                  const float* q, int incq, int64_t lower_y, int64_t k,
                                  float* log_prob, void* stream) {
  return log_prob_sum("marg_log_prob_sum_f32", m, p, incp, lower_x, n, q, incq, lower_y, k,
                      log_prob, stream);
}

marg_status marg_log_prob_sum_f64(int m, const double* p, int incp, int64_t lower_x, int n,
                                  const double* q, int incq, int64_t lower_y, int64_t k,
                                  double* log_prob, void* stream) {
  return log_prob_sum("marg_log_prob_sum_f64", m, p, incp, lower_x, n, q, incq, lower_y, k,
                      log_prob, stream);
}

// ---- Devices (issue 34) ------------------------------------------------------

marg_status marg_set_device(int device) {
  return guarded([&] { marg::set_device(device); });
}

marg_status marg_get_device(int* device) {
  return guarded([&] {
    MARG_EXPECTS(device != nullptr, std::string("marg_get_device: device is null"));
    *device = marg::current_device();
  });
}

marg_status marg_device_pool_stats(int device, size_t* in_use, size_t* reserved, size_t* limit) {
  return guarded([&] {
    const marg::pool_statistics s = marg::pool_stats(device);
    if (in_use != nullptr) *in_use = s.bytes_in_use;
    if (reserved != nullptr) *reserved = s.bytes_reserved;
    if (limit != nullptr) *limit = s.limit;
  });
}

marg_status marg_set_device_pool_limit(int device, size_t bytes) {
  return guarded([&] { marg::set_pool_limit(bytes, device); });
}

// ---- end of the device section ------------------------------------------------

}  // extern "C"
