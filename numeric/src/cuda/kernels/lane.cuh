// Lane per problem, for large batches of small problems: a block stages 32
// problems (one group) in shared memory, and lane p of every warp computes
// problem p. All problems of a batch have one shape, so every lane runs the
// same loop: no divergence, no per-lane range tests, and the band's zero
// triangles are skipped per output block, not per lane. Warp w owns the
// output blocks w, w + 4, ... (interleaved, so the long middle blocks of a
// full convolution spread evenly over the warps).
//
// A lane's block is R consecutive outputs; per step of G = 4 taps it reads
// the 4 taps and the next 4 values of its X window (two 16-byte loads) and
// does 4 R FMAs from registers. The window is R + 4 values in U = R / 4 + 1
// register quarters that rotate by renaming (the step loop is unrolled U
// times), so sliding costs no moves. Rows are padded to an odd number of
// 16-byte units: 8 lanes of a 16-byte load hit 8 distinct bank groups.
//
// Persistent grid, two staging buffers: the next group's cp.async copies are
// in flight while the current group computes. Results go through a shared
// output slab as coalesced stores. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../cuda_check.hpp"
#include "async_copy.cuh"
#include "cluster.cuh"
#include "correlation.cuh"

namespace marg::detail::cuda {

/// Shape constants of the lane-per-problem kernel.
struct lane_tuning {
  static constexpr int P = 32;            ///< problems per group (one per lane)
  static constexpr int W = 4;             ///< warps per block
  static constexpr int threads = 32 * W;  ///< threads per block
  static constexpr int R = 16;            ///< consecutive outputs per lane block
  static constexpr int G = 4;             ///< taps per step
  static constexpr int U = R / G + 1;     ///< register quarters of the window
  static constexpr int max_taps = 256;    ///< longest tap row it takes
};

/// Shared-memory layout of one correlation in the lane kernel (elements).
struct lane_shape {
  int la4;     ///< taps staged per problem (la rounded up to G, zero-padded)
  int pa;      ///< taps row pitch
  int t_base;  ///< X index of a window row's element 0 (a multiple of G)
  int xlen;    ///< X values staged per problem
  int px;      ///< X row pitch
  int nblk;    ///< output blocks of R per problem
  int po;      ///< output row pitch
  int groups;  ///< groups of P problems
  /// @return elements of one staging buffer (taps and X rows of P problems)
  __host__ __device__ int buffer() const { return lane_tuning::P * (pa + px); }
  /// @return elements of shared memory the kernel uses
  __host__ __device__ std::int64_t total() const {
    return 2 * std::int64_t{buffer()} + std::int64_t{lane_tuning::P} * po;
  }
};

/// Row pitch >= n, a multiple of the 16-byte width V and an odd number of
/// 16-byte units (conflict-free 16-byte loads across lanes).
template <class T>
__host__ __device__ constexpr int lane_pitch(int n) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const int units = (n + V - 1) / V;
  return (units | 1) * V;
}

/// Largest multiple of G not above v (v may be negative).
__host__ __device__ constexpr int lane_floor_g(int v) {
  return v >= 0 ? v / lane_tuning::G * lane_tuning::G
                : -((-v + lane_tuning::G - 1) / lane_tuning::G * lane_tuning::G);
}

/// The layout of `c` (valid for c.la <= lane_tuning::max_taps).
template <class T>
__host__ __device__ lane_shape lane_shape_of(const correlation_view<T>& c) {
  using C = lane_tuning;
  lane_shape s{};
  s.la4 = (c.la + C::G - 1) / C::G * C::G;
  s.pa = lane_pitch<T>(s.la4);
  // a block at j0 reads X from j0 + G floor(klo / G) >= lead - R - 2 up to
  // j0 + G floor(khi / G) + R + 3 <= lead + lx + R + 2 (klo, khi: its taps)
  s.t_base = lane_floor_g(c.lead - C::R - 2);
  const int t_end = c.lead + c.lx + C::R + 3;
  s.xlen = (t_end - s.t_base + C::G - 1) / C::G * C::G;
  s.px = lane_pitch<T>(s.xlen);
  s.nblk = (c.lout + C::R - 1) / C::R;
  s.po = lane_pitch<T>(s.nblk * C::R);
  s.groups = (c.batch + C::P - 1) / C::P;
  return s;
}

/// Loads G = 4 consecutive shared elements (16-byte aligned) into v.
template <class T>
__device__ __forceinline__ void lane_load4(const T* p, T (&v)[lane_tuning::G]) {
  if constexpr (sizeof(T) == 4) {
    const float4 w = *reinterpret_cast<const float4*>(p);
    v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
  } else {
    const double2 w0 = *reinterpret_cast<const double2*>(p);
    const double2 w1 = *reinterpret_cast<const double2*>(p + 2);
    v[0] = w0.x, v[1] = w0.y, v[2] = w1.x, v[3] = w1.y;
  }
}

/// Copies row elements e = lane, lane + 32, ... < len of the warp's problems
/// (p = warp + W i) from src_of(b) + off(e) into dst + p * pitch + e, zero
/// where in(e) is false or the problem is past the batch. Element outer,
/// problem inner: the source offset and test are computed once per element.
template <class T, class Src, class Off, class In>
__device__ __forceinline__ void lane_stage_rows(const correlation_view<T>& c, std::int64_t g,
                                                int len, T* dst, int pitch, Src src_of, Off off,
                                                In in) {
  using C = lane_tuning;
  constexpr int per_warp = C::P / C::W;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t b0 = g * C::P + warp;
  const T* base[per_warp];
  bool live[per_warp];
#pragma unroll
  for (int i = 0; i < per_warp; ++i) {
    const std::int64_t b = b0 + i * C::W;
    live[i] = b < c.batch;
    base[i] = src_of(live[i] ? b : 0);
  }
  for (int e = lane; e < len; e += 32) {
    const bool ok = in(e);
    const std::int64_t o = ok ? off(e) : 0;
#pragma unroll
    for (int i = 0; i < per_warp; ++i)
      async_copy(dst + (warp + i * C::W) * pitch + e, base[i] + o, ok && live[i]);
  }
}

/// Issues the copies of group g into `buf` (taps rows, then X rows; zeros
/// outside the operands and for problems past the batch) and commits them.
template <class T>
__device__ void lane_stage(const correlation_view<T>& c, const lane_shape& s, std::int64_t g,
                           T* buf) {
  lane_stage_rows(
      c, g, s.la4, buf, s.pa, [&](std::int64_t b) { return c.a + b * c.a_batch; },
      [&](int e) { return e * c.a_step; }, [&](int e) { return e < c.la; });
  const int shift = s.t_base - c.lead;  // element e holds x_{e + shift}
  lane_stage_rows(
      c, g, s.xlen, buf + lane_tuning::P * s.pa, s.px,
      [&](std::int64_t b) { return c.x + b * c.x_batch; },
      [&](int e) { return (e + shift) * c.x_step; },
      [&](int e) { return e + shift >= 0 && e + shift < c.lx; });
  async_commit();
}

/// Calls f(std::integral_constant<int, i>) for i = 0 .. N - 1 (a loop whose
/// index is a compile-time constant in the body).
template <int N, class F>
__device__ __forceinline__ void lane_unroll(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }
  (std::make_integer_sequence<int, N>{});
}

/// Step u (mod U) of a block: loads the window's new quarter (X at xq) into
/// set (u + U - 1) % U and the taps at aq, then 4 R FMAs.
template <class T, int u>
__device__ __forceinline__ void lane_step(const T* xq, const T* aq,
                                          T (&q)[lane_tuning::U][lane_tuning::G],
                                          T (&acc)[lane_tuning::R]) {
  constexpr int G = lane_tuning::G, U = lane_tuning::U, R = lane_tuning::R;
  lane_load4(xq, q[(u + U - 1) % U]);
  T a4[G];
  lane_load4(aq, a4);
#pragma unroll
  for (int k = 0; k < G; ++k)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] += a4[k] * q[(u + (r + k) / G) % U][(r + k) % G];
}

/// One output block of one lane: outputs j0 .. j0 + R - 1 of the lane's
/// problem from its taps row `ta` and X row `tx`, written to its output row.
template <class T>
__device__ __forceinline__ void lane_block(const correlation_view<T>& c, const lane_shape& s,
                                           const T* ta, const T* tx, T* to, int j0) {
  using C = lane_tuning;
  constexpr int G = C::G, U = C::U, R = C::R;
  T acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = T(0);
  // taps that meet an X value inside the band for some output of the block
  const int klo = max(0, c.lead - (j0 + R - 1));
  const int khi = min(c.la - 1, c.lead + c.lx - 1 - j0);
  if (klo <= khi) {
    const int ng = khi / G + 1 - klo / G;  // steps (groups of G taps)
    const T* xw = tx + (j0 + klo / G * G - s.t_base);
    const T* aw = ta + klo / G * G;
    // quarter i of the window at step n is register set (n + i) % U: the
    // first window's quarters 0 .. U - 2 into sets 0 .. U - 2
    T q[U][G];
#pragma unroll
    for (int i = 0; i < U - 1; ++i) lane_load4(xw + G * i, q[i]);
    xw += G * (U - 1);
    int n = 0;
    // U steps per pass (the sets come back to where they were), then the rest
    for (; n + U <= ng; n += U, xw += G * U, aw += G * U)
      lane_unroll<U>([&](auto u) {
        constexpr int v = decltype(u)::value;
        lane_step<T, v>(xw + G * v, aw + G * v, q, acc);
      });
    lane_unroll<U - 1>([&](auto u) {
      constexpr int v = decltype(u)::value;
      if (n + v < ng) lane_step<T, v>(xw + G * v, aw + G * v, q, acc);
    });
  }
#pragma unroll
  for (int r = 0; r < R; r += G) {
    if constexpr (sizeof(T) == 4) {
      *reinterpret_cast<float4*>(to + j0 + r) =
          make_float4(acc[r], acc[r + 1], acc[r + 2], acc[r + 3]);
    } else {
      *reinterpret_cast<double2*>(to + j0 + r) = make_double2(acc[r], acc[r + 1]);
      *reinterpret_cast<double2*>(to + j0 + r + 2) = make_double2(acc[r + 2], acc[r + 3]);
    }
  }
}

/// Writes the output rows of group g: warp w stores problems w, w + W, ...,
/// lanes along the row (coalesced for unit output steps); element outer,
/// problem inner.
template <class T>
__device__ void lane_store(const correlation_view<T>& c, const lane_shape& s, std::int64_t g,
                           const T* to) {
  using C = lane_tuning;
  constexpr int per_warp = C::P / C::W;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t b0 = g * C::P + warp;
  const int live = static_cast<int>(
      dmax(0, dmin(per_warp, (c.batch - b0 + C::W - 1) / C::W)));  // problems past the batch: none
  T* const out = c.out + b0 * c.out_batch;
  const std::int64_t step = std::int64_t{C::W} * c.out_batch;
  for (int j = lane; j < c.lout; j += 32) {
    T* o = out + std::int64_t{j} * c.out_step;
    const T* t = to + warp * s.po + j;
#pragma unroll
    for (int i = 0; i < per_warp; ++i)
      if (i < live) o[i * step] = t[i * C::W * s.po];
  }
}

/// The kernel: block blk computes groups blk, blk + gridDim.x, ...
template <class T>
__global__ void __launch_bounds__(lane_tuning::threads)
    kernel_banded_lane(const correlation_view<T> c) {
  using C = lane_tuning;
  extern __shared__ __align__(16) unsigned char lane_smem[];
  T* const smem = reinterpret_cast<T*>(lane_smem);
  await_previous_kernel();  // launched with early start (launch_lane)
  const lane_shape s = lane_shape_of(c);
  std::int64_t g = blockIdx.x;
  if (g >= s.groups) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int len = s.buffer();
  T* const to = smem + 2 * len;
  lane_stage(c, s, g, smem);
  for (int cur = 0;; cur ^= 1) {
    const std::int64_t next = g + gridDim.x;
    // the other buffer was last read before the barrier that ended the
    // previous group's compute
    if (next < s.groups)
      lane_stage(c, s, next, smem + (cur ^ 1) * len);
    else
      async_commit();  // an empty group: one wait rule for every pass
    async_wait<1>();
    __syncthreads();  // group g staged; the output slab's last reads are done
    const T* ta = smem + cur * len + lane * s.pa;
    const T* tx = smem + cur * len + C::P * s.pa + lane * s.px;
    for (int blk = warp; blk < s.nblk; blk += C::W)
      lane_block(c, s, ta, tx, to + lane * s.po, blk * C::R);
    __syncthreads();
    lane_store(c, s, g, to);
    if (next >= s.groups) break;
    g = next;
  }
}

/// Whether the lane kernel can run `c` on this device (its shared memory
/// fits one block).
/// @param c the correlation
/// @param max_smem the device's opt-in shared memory per block, bytes
/// @return true when launch_lane may be used
template <class T>
bool lane_fits(const correlation_view<T>& c, int max_smem) {
  if (c.la > lane_tuning::max_taps || c.lout <= 0 || c.lx > (1 << 20)) return false;
  return lane_shape_of(c).total() * static_cast<std::int64_t>(sizeof(T)) <= max_smem;
}

}  // namespace marg::detail::cuda
