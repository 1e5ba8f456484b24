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
// register quarters that rotate by renaming (U steps unrolled per pass), so
// sliding costs no moves. Rows are padded to an odd number of 16-byte units:
// 8 lanes of a 16-byte load hit 8 distinct bank groups.
//
// Staging: cp.async of the operands' values only, element outer and problem
// inner (one pointer step per copy); the rows' zero padding is written once
// per block. One group per block when all groups fit at once (one buffer,
// more resident blocks); otherwise a persistent grid with two buffers, the
// next group's copies in flight during the current group's compute. Results
// go through a shared output slab as coalesced stores. Not installed.
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
  /// @param stages staging buffers (1 or 2)
  /// @return elements of shared memory the kernel uses
  __host__ __device__ std::int64_t total(int stages) const {
    return stages * std::int64_t{buffer()} + std::int64_t{lane_tuning::P} * po;
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

/// Loads G = 4 consecutive shared elements at any element offset into v
/// (four scalar loads; rows at an odd pitch keep them conflict-free).
template <class T>
__device__ __forceinline__ void lane_load4_any(const T* p, T (&v)[lane_tuning::G]) {
#pragma unroll
  for (int e = 0; e < lane_tuning::G; ++e) v[e] = p[e];
}

/// Stores G = 4 values v[0 .. 3] to consecutive shared elements (16-byte
/// aligned) at p.
template <class T>
__device__ __forceinline__ void lane_put4(T* p, const T* v) {
  if constexpr (sizeof(T) == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    *reinterpret_cast<double2*>(p) = make_double2(v[0], v[1]);
    *reinterpret_cast<double2*>(p + 2) = make_double2(v[2], v[3]);
  }
}

/// Problems of group g that warp `warp` owns (warp + W i, i < P / W) and
/// that lie inside the batch.
template <class T>
__device__ __forceinline__ int lane_live(const correlation_view<T>& c, std::int64_t g, int warp) {
  using C = lane_tuning;
  const std::int64_t left = c.batch - (g * C::P + warp);
  return static_cast<int>(dmax(0, dmin(C::P / C::W, (left + C::W - 1) / C::W)));
}

/// Calls f(i) for i < N, or for i < live when Full is false (a compile-time
/// trip count when the warp's problems are all inside the batch).
template <int N, bool Full, class F>
__device__ __forceinline__ void lane_each(int live, F&& f) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    if (Full || i < live) f(i);
}

/// Starts copying elements e < len of the warp's live problems (p = warp +
/// W i, b = g P + p) from src + b batch + e step to dst + p pitch + e.
/// Element outer, problem inner: one pointer step per copy.
template <bool Full, class T>
__device__ __forceinline__ void lane_copy_rows(int live, std::int64_t b0, int len, const T* src,
                                               std::int64_t step, std::int64_t batch, T* dst,
                                               int pitch) {
  using C = lane_tuning;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const T* s0 = src + b0 * batch + lane * step;
  T* d0 = dst + warp * pitch + lane;
  const std::int64_t sb = C::W * batch, se = 32 * step;
  const int db = C::W * pitch;
  for (int e = lane; e < len; e += 32, s0 += se, d0 += 32)
    lane_each<C::P / C::W, Full>(live, [&](int i) { async_copy(d0 + i * db, s0 + i * sb, true); });
}

/// Issues the copies of group g into `buf` and commits them: the taps and
/// x values only (the zero padding around them was written once), nothing
/// for problems past the batch (their stale rows give results never stored).
template <class T>
__device__ void lane_stage(const correlation_view<T>& c, const lane_shape& s, std::int64_t g,
                           T* buf) {
  using C = lane_tuning;
  const int warp = threadIdx.x / 32;
  const int live = lane_live(c, g, warp);
  const std::int64_t b0 = g * C::P + warp;
  T* const xrows = buf + C::P * s.pa + (c.lead - s.t_base);  // x_0 of problem 0
  if (live == C::P / C::W) {
    lane_copy_rows<true>(live, b0, c.la, c.a, c.a_step, c.a_batch, buf, s.pa);
    lane_copy_rows<true>(live, b0, c.lx, c.x, c.x_step, c.x_batch, xrows, s.px);
  } else {
    lane_copy_rows<false>(live, b0, c.la, c.a, c.a_step, c.a_batch, buf, s.pa);
    lane_copy_rows<false>(live, b0, c.lx, c.x, c.x_step, c.x_batch, xrows, s.px);
  }
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
/// set (u + U - 1) % U and the taps quad at aq (its order reversed when
/// Rev), then 4 R FMAs; Any: X at any element offset (scalar loads);
/// First: the accumulators before it are left out (their quads meet only
/// zero X this step, see lane_steps' Edge).
template <class T, int u, bool Rev = false, bool Any = false, int First = 0>
__device__ __forceinline__ void lane_step(const T* xq, const T* aq,
                                          T (&q)[lane_tuning::U][lane_tuning::G],
                                          T (&acc)[lane_tuning::R]) {
  constexpr int G = lane_tuning::G, U = lane_tuning::U, R = lane_tuning::R;
  if constexpr (Any)
    lane_load4_any(xq, q[(u + U - 1) % U]);
  else
    lane_load4(xq, q[(u + U - 1) % U]);
  T a4[G];
  lane_load4(aq, a4);
#pragma unroll
  for (int k = 0; k < G; ++k)
#pragma unroll
    for (int r = First; r < R; ++r)
      acc[r] += a4[Rev ? G - 1 - k : k] * q[(u + (r + k) / G) % U][(r + k) % G];
}

/// @return the first accumulator of step u of an edge block's first pass
///         (quads i < 3 - u meet only zero X there)
__host__ __device__ constexpr int lane_edge_first(int u) {
  return u < 3 ? lane_tuning::G * (3 - u) : 0;
}

/// The ng steps of one lane block: acc[r] += a_k X_(t + r + k) over the
/// block's taps, the window starting at xw (16-byte aligned unless Any),
/// the first step's taps quad at aw; Rev: taps stored forward and read
/// backwards (the quads step down, each reversed). Edge, with `edge` set:
/// the block's first steps meet zero X for quad i in steps < 3 - i (a
/// forward block crossing the band's left edge with its steps aligned so),
/// and its first pass (or its tail when it has fewer than U steps) leaves
/// those 6 quad-steps out (96 FFMA, lane_step's First = 4 (3 - u) at step u
/// < 3); the other products keep their order, so the results are the same.
/// Passes: U-step passes unrolled per loop trip (the same products in the
/// same order).
template <class T, bool Rev, bool Any = false, bool Edge = false, int Passes = 1>
__device__ __forceinline__ void lane_steps(const T* xw, const T* aw, int ng,
                                           T (&acc)[lane_tuning::R], bool edge = false) {
  constexpr int G = lane_tuning::G, U = lane_tuning::U;
  constexpr int da = Rev ? -G : G;  // taps pointer step per step
  // quarter i of the window at step n is register set (n + i) % U: the
  // first window's quarters 0 .. U - 2 into sets 0 .. U - 2
  T q[U][G];
#pragma unroll
  for (int i = 0; i < U - 1; ++i) {
    if constexpr (Any)
      lane_load4_any(xw + G * i, q[i]);
    else
      lane_load4(xw + G * i, q[i]);
  }
  xw += G * (U - 1);
  int n = 0;
  if constexpr (Edge) {
    if (edge && ng >= U) {
      lane_unroll<U>([&](auto u) {
        constexpr int v = decltype(u)::value;
        lane_step<T, v, Rev, Any, lane_edge_first(v)>(xw + G * v, aw + da * v, q, acc);
      });
      n = U, xw += G * U, aw += da * U;
    }
  }
  // Passes x U steps per loop trip (kernels/lane_long.cuh: 2), then
  if constexpr (Passes > 1)
    for (; n + Passes * U <= ng; n += Passes * U, xw += G * Passes * U, aw += da * Passes * U)
      lane_unroll<Passes * U>([&](auto u) {
        constexpr int v = decltype(u)::value;
        lane_step<T, v % U, Rev, Any>(xw + G * v, aw + da * v, q, acc);
      });
  // U steps per pass (the sets come back to where they were), then the rest
  for (; n + U <= ng; n += U, xw += G * U, aw += da * U)
    lane_unroll<U>([&](auto u) {
      constexpr int v = decltype(u)::value;
      lane_step<T, v, Rev, Any>(xw + G * v, aw + da * v, q, acc);
    });
  if constexpr (Edge) {
    if (edge && n == 0) {
      lane_unroll<U - 1>([&](auto u) {
        constexpr int v = decltype(u)::value;
        if (v < ng) lane_step<T, v, Rev, Any, lane_edge_first(v)>(xw + G * v, aw + da * v, q, acc);
      });
      return;
    }
  }
  lane_unroll<U - 1>([&](auto u) {
    constexpr int v = decltype(u)::value;
    if (n + v < ng) lane_step<T, v, Rev, Any>(xw + G * v, aw + da * v, q, acc);
  });
}

/// Set-up of the output block j0 .. j0 + R - 1: zeroes its accumulators and
/// finds the taps that meet an X value inside the band for some of its
/// outputs (shared by both lane kernels).
/// @param c the correlation
/// @param j0 the block's first output
/// @param acc the block's accumulators (zeroed)
/// @param k0 set to its first tap rounded down to G
/// @return its steps (groups of G taps; 0: the block lies outside the band)
template <class T>
__device__ __forceinline__ int lane_tap_range(const correlation_view<T>& c, int j0,
                                              T (&acc)[lane_tuning::R], int& k0) {
  constexpr int G = lane_tuning::G, R = lane_tuning::R;
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = T(0);
  const int klo = max(0, c.lead - (j0 + R - 1));
  const int khi = min(c.la - 1, c.lead + c.lx - 1 - j0);
  k0 = klo / G * G;
  return klo <= khi ? khi / G + 1 - klo / G : 0;
}

/// One output block of one lane: outputs j0 .. j0 + R - 1 of the lane's
/// problem from its taps row `ta` and X row `tx`, written to its output row.
template <class T>
__device__ __forceinline__ void lane_block(const correlation_view<T>& c, const lane_shape& s,
                                           const T* ta, const T* tx, T* to, int j0) {
  using C = lane_tuning;
  constexpr int G = C::G, R = C::R;
  T acc[R];
  int k0 = 0;
  const int ng = lane_tap_range(c, j0, acc, k0);
  if (ng > 0) lane_steps<T, false>(tx + (j0 + k0 - s.t_base), ta + k0, ng, acc);
#pragma unroll
  for (int r = 0; r < R; r += G) lane_put4(to + j0 + r, acc + r);
}

/// Writes the output rows of the warp's live problems of group g, lanes
/// along the row (coalesced for unit output steps); element outer, problem
/// inner.
template <bool Full, class T>
__device__ __forceinline__ void lane_store_rows(const correlation_view<T>& c, const lane_shape& s,
                                                int live, std::int64_t b0, const T* to) {
  using C = lane_tuning;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* o0 = c.out + b0 * c.out_batch + lane * c.out_step;
  const T* t0 = to + warp * s.po + lane;
  const std::int64_t ob = C::W * c.out_batch, oe = 32 * c.out_step;
  const int tb = C::W * s.po;
  for (int j = lane; j < c.lout; j += 32, o0 += oe, t0 += 32)
    lane_each<C::P / C::W, Full>(live, [&](int i) { o0[i * ob] = t0[i * tb]; });
}

/// Writes the output rows of group g from the shared slab `to`.
template <class T>
__device__ void lane_store(const correlation_view<T>& c, const lane_shape& s, std::int64_t g,
                           const T* to) {
  using C = lane_tuning;
  const int warp = threadIdx.x / 32;
  const int live = lane_live(c, g, warp);
  const std::int64_t b0 = g * C::P + warp;
  if (live == C::P / C::W)
    lane_store_rows<true>(c, s, live, b0, to);
  else
    lane_store_rows<false>(c, s, live, b0, to);
}

/// The kernel: block blk computes groups blk, blk + gridDim.x, ... with S
/// staging buffers (2: the next group's copies overlap the current group's
/// compute; 1: less shared memory, more resident blocks, for grids of one
/// group per block).
template <class T, int S>
__global__ void __launch_bounds__(lane_tuning::threads)
    kernel_banded_lane(const correlation_view<T> c) {
#if MARG_CUDA_HOPPER_CODE
  using C = lane_tuning;
  extern __shared__ __align__(16) unsigned char lane_smem[];
  T* const smem = reinterpret_cast<T*>(lane_smem);
  await_previous_kernel();  // launched with early start (launch_lane)
  const lane_shape s = lane_shape_of(c);
  std::int64_t g = blockIdx.x;
  if (g >= s.groups) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int len = s.buffer();
  T* const to = smem + S * len;
  // the zero padding of the buffers, written once: stages copy only the
  // operands' values
  for (int i = threadIdx.x; i < S * len; i += C::threads) smem[i] = T(0);
  __syncthreads();
  lane_stage(c, s, g, smem);
  for (int cur = 0;; cur = (cur + 1) % S) {
    const std::int64_t next = g + gridDim.x;
    if constexpr (S == 2) {
      // the other buffer was last read before the barrier that ended the
      // previous group's compute
      if (next < s.groups)
        lane_stage(c, s, next, smem + (cur ^ 1) * len);
      else
        async_commit();  // an empty group: one wait rule for every pass
      async_wait<1>();
    } else {
      async_wait<0>();
    }
    __syncthreads();  // group g staged; the output slab's last reads are done
    const T* ta = smem + cur * len + lane * s.pa;
    const T* tx = smem + cur * len + C::P * s.pa + lane * s.px;
    for (int blk = warp; blk < s.nblk; blk += C::W)
      lane_block(c, s, ta, tx, to + lane * s.po, blk * C::R);
    __syncthreads();
    if constexpr (S == 1) {
      if (next < s.groups) lane_stage(c, s, next, smem);  // runs during the stores
    }
    lane_store(c, s, g, to);
    if (next >= s.groups) break;
    g = next;
  }
#else
  __trap();  // needs sm_90: the dispatch runs it only there
#endif
}

/// Whether the lane kernel can run `c` on this device (its shared memory
/// with one staging buffer fits one block).
/// @param c the correlation
/// @param max_smem the device's opt-in shared memory per block, bytes
/// @return true when launch_lane may be used
template <class T>
bool lane_fits(const correlation_view<T>& c, int max_smem) {
  if (c.la > lane_tuning::max_taps || c.lout <= 0 || c.lx > (1 << 20)) return false;
  return lane_shape_of(c).total(1) * static_cast<std::int64_t>(sizeof(T)) <= max_smem;
}

}  // namespace marg::detail::cuda
