// The device-side form of all three banded products: one batched valid-mode
// correlation
//   out_j = sum_{k < la} a_k X_{j+k},  j < lout,
// where X_t = x_{t - lead} inside [lead, lead + lx) and 0 elsewhere. The
// strides (and the reversal of the convolution's tap operand) live in the
// view, so kernels gather while staging into shared memory. Not installed.
#pragma once

#include <cstdint>

#include "../../detail/banded.hpp"

namespace marg::detail::cuda {

/// One batched correlation; problem b reads a + b*a_batch, x + b*x_batch and
/// writes out + b*out_batch.
template <class T>
struct correlation_view {
  const T* a;              ///< tap 0 (already offset for a reversed operand)
  std::int64_t a_step;     ///< elements between taps k and k+1 (negative: reversed)
  std::int64_t a_batch;    ///< elements between problems (0: shared operand)
  int la;                  ///< number of taps
  const T* x;              ///< x_0
  std::int64_t x_step;     ///< elements between x_t and x_{t+1}
  std::int64_t x_batch;    ///< elements between problems
  int lx;                  ///< length of x
  int lead;                ///< zeros in front of x
  T* out;                  ///< out_0
  std::int64_t out_step;   ///< elements between outputs
  std::int64_t out_batch;  ///< elements between problems
  int lout;                ///< outputs per problem
  int batch;               ///< number of problems
  /// where a tile kernel split without a cluster writes its partial tiles,
  /// split x batch x lout values (launch_cluster_tiles); nullptr otherwise
  T* partial = nullptr;
};

/// @return whether p is 16-byte aligned (what 16-byte vector loads and
///         copies need)
template <class T>
__host__ __device__ bool aligned16(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

/// @return the first tap of `c`'s taps row in memory order (a reversed row,
///         as a convolution's, starts at its last tap)
template <class T>
__host__ __device__ const T* taps_row(const correlation_view<T>& c) {
  return c.a_step < 0 ? c.a + std::int64_t{c.la - 1} * c.a_step : c.a;
}

/// @return the multiply-adds of one problem of `c` on the band: la lx for a
///         full convolution (lead = la - 1: every tap meets every x), la lout
///         for a gradient (lead 0: every output meets every tap); the two
///         forms correlation_of makes
template <class T>
__host__ __device__ std::int64_t band_macs(const correlation_view<T>& c) {
  return std::int64_t{c.la} * (c.lead > 0 ? c.lx : c.lout);
}

/// Maps a banded product onto a correlation.
/// convolve: taps = the shorter operand reversed, x = the longer, lead = taps - 1;
/// grad_p: taps = q, x = g; grad_q: taps = p, x = g (lead 0).
/// @param x the checked product
/// @return the same product as a correlation
template <class T>
correlation_view<T> correlation_of(const banded_args<T>& x) {
  correlation_view<T> c{};
  c.batch = x.batch;
  c.out = x.out;
  c.out_step = x.inc_out;
  c.out_batch = x.stride_out;
  if (x.op == banded_op::convolve) {
    const bool swap = x.m > x.n;
    const T* s = swap ? x.b : x.a;
    const int ls = swap ? x.n : x.m, inc_s = swap ? x.inc_b : x.inc_a;
    c.la = ls;
    c.a = s + std::int64_t{ls - 1} * inc_s;
    c.a_step = -std::int64_t{inc_s};
    c.a_batch = swap ? x.stride_b : x.stride_a;
    c.x = swap ? x.a : x.b;
    c.lx = swap ? x.m : x.n;
    c.x_step = swap ? x.inc_a : x.inc_b;
    c.x_batch = swap ? x.stride_a : x.stride_b;
    c.lead = ls - 1;
    c.lout = x.m + x.n - 1;
  } else {
    c.la = x.op == banded_op::grad_p ? x.n : x.m;
    c.a = x.b;
    c.a_step = x.inc_b;
    c.a_batch = x.stride_b;
    c.x = x.a;
    c.lx = x.m + x.n - 1;
    c.x_step = x.inc_a;
    c.x_batch = x.stride_a;
    c.lead = 0;
    c.lout = x.op == banded_op::grad_p ? x.m : x.n;
  }
  return c;
}

}  // namespace marg::detail::cuda
