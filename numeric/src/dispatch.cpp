// Public numeric entry points: check arguments once, pick the backend, run.
#include <marg/numeric/backend.hpp>
#include <marg/numeric/cancel.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/environment.hpp>
#include <marg/numeric/error.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "detail/banded.hpp"

namespace marg {
namespace {

using detail::bad_argument;
using detail::banded_args;
using detail::banded_op;
using detail::name_of;
using detail::names_of;

// the largest element offset of a batched strided operand, or -1 when it
// overflows int64 or passes the address space (a batch stride can be any
// int64: (batch - 1) * stride must not be computed unchecked)
template <class T>
std::int64_t last_offset(std::int64_t length, int inc, std::int64_t stride, int batch) {
  std::int64_t across, within, last;
  if (__builtin_mul_overflow(std::int64_t{batch} - 1, stride, &across) ||
      __builtin_mul_overflow(length - 1, std::int64_t{inc}, &within) ||
      __builtin_add_overflow(across, within, &last) ||
      last >= PTRDIFF_MAX / static_cast<std::int64_t>(sizeof(T)))
    return -1;
  return last;
}

// half-open byte range spanned by a batched strided operand
struct span {
  std::uintptr_t lo, hi;
};

template <class T>
span span_of(const T* ptr, std::int64_t length, int inc, std::int64_t stride, int batch) {
  const std::int64_t last = (batch - 1) * stride + (length - 1) * inc;
  const auto lo = reinterpret_cast<std::uintptr_t>(ptr);
  return {lo, lo + static_cast<std::uintptr_t>(last + 1) * sizeof(T)};
}

bool overlaps(span x, span y) {
  return x.lo < y.hi && y.lo < x.hi;
}

// Checks everything a backend relies on; throws marg::invalid_argument.
template <class T>
void check(const banded_args<T>& x, bool batched) {
  const char* f = name_of(x.op, batched);
  const detail::operand_names nm = names_of(x.op);
  MARG_EXPECTS(x.m >= 1, bad_argument(f, "m", x.m, ">= 1"));
  MARG_EXPECTS(x.n >= 1, bad_argument(f, "n", x.n, ">= 1"));
  MARG_EXPECTS(std::int64_t{x.m} + x.n - 1 <= INT_MAX,
               std::string(f) + ": m + n - 1 = " + std::to_string(std::int64_t{x.m} + x.n - 1) +
                   " overflows int (m = " + std::to_string(x.m) + ", n = " + std::to_string(x.n) +
                   ")");
  MARG_EXPECTS(x.inc_a >= 1, bad_argument(f, nm.inc_a, x.inc_a, ">= 1"));
  MARG_EXPECTS(x.inc_b >= 1, bad_argument(f, nm.inc_b, x.inc_b, ">= 1"));
  MARG_EXPECTS(x.inc_out >= 1, bad_argument(f, nm.inc_out, x.inc_out, ">= 1"));
  MARG_EXPECTS(x.batch >= 0, bad_argument(f, "batch", x.batch, ">= 0"));
  MARG_EXPECTS(x.stride_a >= 0, bad_argument(f, nm.stride_a, x.stride_a, ">= 0"));
  MARG_EXPECTS(x.stride_b >= 0, bad_argument(f, nm.stride_b, x.stride_b, ">= 0"));
  MARG_EXPECTS(x.stride_out >= 0, bad_argument(f, nm.stride_out, x.stride_out, ">= 0"));
  if (x.batch == 0) return;  // nothing is read or written: pointers may be null
  MARG_EXPECTS(x.a != nullptr, std::string(f) + ": " + nm.a + " is null");
  MARG_EXPECTS(x.b != nullptr, std::string(f) + ": " + nm.b + " is null");
  MARG_EXPECTS(x.out != nullptr, std::string(f) + ": " + nm.out + " is null");
  const auto len = detail::lengths_of(x.op, x.m, x.n);
  // one problem's extent: both factors are below 2^31, so this cannot overflow
  const std::int64_t out_extent = (len.out - 1) * x.inc_out + 1;
  if (x.batch > 1) {
    MARG_EXPECTS(x.stride_out >= out_extent,
                 bad_argument(f, nm.stride_out, x.stride_out,
                              (">= (length - 1) * " + std::string(nm.inc_out) + " + 1 = " +
                               std::to_string(out_extent) + " so that outputs do not overlap")
                                  .c_str()));
  }
  const char* fits = "such that (batch - 1) * stride + (length - 1) * inc fits the address space";
  MARG_EXPECTS(last_offset<T>(len.a, x.inc_a, x.stride_a, x.batch) >= 0,
               bad_argument(f, nm.stride_a, x.stride_a, fits));
  MARG_EXPECTS(last_offset<T>(len.b, x.inc_b, x.stride_b, x.batch) >= 0,
               bad_argument(f, nm.stride_b, x.stride_b, fits));
  MARG_EXPECTS(last_offset<T>(len.out, x.inc_out, x.stride_out, x.batch) >= 0,
               bad_argument(f, nm.stride_out, x.stride_out, fits));
  const span out = span_of(x.out, len.out, x.inc_out, x.stride_out, x.batch);
  const span a = span_of(x.a, len.a, x.inc_a, x.stride_a, x.batch);
  const span b = span_of(x.b, len.b, x.inc_b, x.stride_b, x.batch);
  MARG_EXPECTS(!overlaps(out, a), std::string(f) + ": output " + nm.out + " overlaps input " +
                                      nm.a + " (outputs must not alias inputs)");
  MARG_EXPECTS(!overlaps(out, b), std::string(f) + ": output " + nm.out + " overlaps input " +
                                      nm.b + " (outputs must not alias inputs)");
}

template <class T>
void run(const banded_args<T>& x, bool batched, stream_view stream) {
  check(x, batched);
  check_environment();
  if (x.batch == 0) return;
  const cancel_scope* scope = cancel_scope::current();
  if (scope != nullptr) {
    // m * n < 2^62 (both below 2^31); the batch product saturates
    const std::int64_t per = std::int64_t{x.m} * x.n;
    const std::int64_t work = per > INT64_MAX / x.batch ? INT64_MAX : per * x.batch;
    scope->check_work(work, name_of(x.op, batched));
  }
#ifdef MARG_WITH_CUDA
  if (current_backend() == backend::cuda) {
    detail::cuda::run(x, stream);
    if (scope != nullptr) scope->throw_if_stopped();
    return;
  }
#else
  (void)stream;
#endif
  detail::cpu::run(x);
  // the CPU product skips its remaining blocks once a stop is requested
  if (scope != nullptr) scope->throw_if_stopped();
}

}  // namespace

template <class T>
void convolve(int m, int n, const T* p, int incp, const T* q, int incq, T* r, int incr,
              stream_view stream) {
  run<T>({banded_op::convolve, m, n, p, incp, 0, q, incq, 0, r, incr, 0, 1}, false, stream);
}

template <class T>
void convolve(int m, int n, const T* p, int incp, const T* q, int incq, T* r, int incr) {
  convolve<T>(m, n, p, incp, q, incq, r, incr, stream_view{});
}

template <class T>
void convolve_grad_p(int m, int n, const T* g, int incg, const T* q, int incq, T* gp, int incgp,
                     stream_view stream) {
  run<T>({banded_op::grad_p, m, n, g, incg, 0, q, incq, 0, gp, incgp, 0, 1}, false, stream);
}

template <class T>
void convolve_grad_p(int m, int n, const T* g, int incg, const T* q, int incq, T* gp, int incgp) {
  convolve_grad_p<T>(m, n, g, incg, q, incq, gp, incgp, stream_view{});
}

template <class T>
void convolve_grad_q(int m, int n, const T* g, int incg, const T* p, int incp, T* gq, int incgq,
                     stream_view stream) {
  run<T>({banded_op::grad_q, m, n, g, incg, 0, p, incp, 0, gq, incgq, 0, 1}, false, stream);
}

template <class T>
void convolve_grad_q(int m, int n, const T* g, int incg, const T* p, int incp, T* gq, int incgq) {
  convolve_grad_q<T>(m, n, g, incg, p, incp, gq, incgq, stream_view{});
}

template <class T>
void convolve_batched(int m, int n, const T* p, int incp, std::int64_t stridep, const T* q,
                      int incq, std::int64_t strideq, T* r, int incr, std::int64_t strider,
                      int batch, stream_view stream) {
  run<T>({banded_op::convolve, m, n, p, incp, stridep, q, incq, strideq, r, incr, strider, batch},
         true, stream);
}

template <class T>
void convolve_grad_p_batched(int m, int n, const T* g, int incg, std::int64_t strideg, const T* q,
                             int incq, std::int64_t strideq, T* gp, int incgp,
                             std::int64_t stridegp, int batch, stream_view stream) {
  run<T>({banded_op::grad_p, m, n, g, incg, strideg, q, incq, strideq, gp, incgp, stridegp, batch},
         true, stream);
}

template <class T>
void convolve_grad_q_batched(int m, int n, const T* g, int incg, std::int64_t strideg, const T* p,
                             int incp, std::int64_t stridep, T* gq, int incgq,
                             std::int64_t stridegq, int batch, stream_view stream) {
  run<T>({banded_op::grad_q, m, n, g, incg, strideg, p, incp, stridep, gq, incgq, stridegq, batch},
         true, stream);
}

#define MARG_INSTANTIATE(T)                                                                        \
  template void convolve<T>(int, int, const T*, int, const T*, int, T*, int);                      \
  template void convolve<T>(int, int, const T*, int, const T*, int, T*, int, stream_view);         \
  template void convolve_grad_p<T>(int, int, const T*, int, const T*, int, T*, int);               \
  template void convolve_grad_p<T>(int, int, const T*, int, const T*, int, T*, int, stream_view);  \
  template void convolve_grad_q<T>(int, int, const T*, int, const T*, int, T*, int);               \
  template void convolve_grad_q<T>(int, int, const T*, int, const T*, int, T*, int, stream_view);  \
  template void convolve_batched<T>(int, int, const T*, int, std::int64_t, const T*, int,          \
                                    std::int64_t, T*, int, std::int64_t, int, stream_view);        \
  template void convolve_grad_p_batched<T>(int, int, const T*, int, std::int64_t, const T*, int,   \
                                           std::int64_t, T*, int, std::int64_t, int, stream_view); \
  template void convolve_grad_q_batched<T>(int, int, const T*, int, std::int64_t, const T*, int,   \
                                           std::int64_t, T*, int, std::int64_t, int, stream_view);
MARG_INSTANTIATE(float)
MARG_INSTANTIATE(double)
#undef MARG_INSTANTIATE

}  // namespace marg
