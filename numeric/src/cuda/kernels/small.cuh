// Batches of small problems (at most 2 G R outputs and max_taps taps each):
// G lanes per problem, 32 / G problems per warp, no block barrier, one
// problem per lane group and a grid that covers the whole batch, so that the
// loads of every resident problem are in flight together (cp.async straight
// into shared memory, zero-filled outside the band, issued before any
// compute). Lane l of a group owns two blocks of R outputs, l and l + G: in a
// full convolution of equal lengths the front block needs R(l + 1) taps and
// the back block about R(G - l), so every lane walks the same number of tap
// chunks (no band-triangle waste, no divergence). The two blocks run as one
// flattened loop; at the lane's switch step the accumulators are saved and
// the indices remapped. Outputs leave through shared memory as coalesced
// stores. Not installed.
//
// NOT DISPATCHED: correct (check_cuda variants with it behind the warp
// variant, 0 failures) but measured slower than kernels/warp.cuh on an H200
// (float 64 x 64 batches of 16384: 18.2 us against 15.6); see
// bench/notes/small.md. To try it, call launch_small from launch_warp where
// small_fits holds.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../cuda_check.hpp"
#include "correlation.cuh"
#include "tiled.cuh"

namespace marg::detail::cuda {

/// Shape of the small-problem kernel.
/// @tparam T element type
/// @tparam R_ consecutive outputs per block (a lane owns two blocks)
/// @tparam G_ lanes per problem
/// @tparam W_ warps per block
template <class T, int R_, int G_, int W_>
struct small_tuning {
  static constexpr int R = R_, G = G_, W = W_;
  /// taps per chunk
  static constexpr int K = 4;
  /// problems per warp
  static constexpr int P = 32 / G;
  /// elements per 16-byte shared load
  static constexpr int V = 16 / static_cast<int>(sizeof(T));
  /// padding after every R elements: lanes R apart hit distinct bank groups
  static constexpr int pad = (R / V) % 2 == 0 ? V : 0;
  /// largest problem the kernel takes
  static constexpr int max_out = 2 * G * R;
  static constexpr int max_taps = 128;
  static_assert(R % V == 0 && K % V == 0 && 32 % G == 0, "small tile shape");
  /// @return the padded shared index of logical element u
  __host__ __device__ static constexpr int phys(int u) { return u + pad * (u / R); }
};

/// The small-problem tuning of each element type.
template <class T>
using small_tuning_of = small_tuning<T, 8, 8, 4>;

/// Shared-memory layout of one problem (the same for every problem of a batch).
struct small_layout {
  int off;   ///< X index of staged element 0 (a multiple of 4)
  int xlen;  ///< staged X values (logical, a multiple of R)
  int alen;  ///< staged taps (logical, a multiple of R)
  int aoff;  ///< physical offset of the taps
  int per;   ///< physical elements per problem (a multiple of 16 bytes)
};

/// The layout of c's problems under tuning C.
template <class T, class C>
small_layout small_layout_of(const correlation_view<T>& c) {
  small_layout s{};
  // a block's first chunk starts less than R + K X values before the band
  s.off = std::max(0, c.lead - (C::R + C::K)) / C::K * C::K;
  // the last chunk reads R + K - 1 values from at most X index lead + lx - 1
  const int need = c.lead + c.lx + C::R + C::K - 1 - s.off;
  s.xlen = (need + C::R - 1) / C::R * C::R;
  s.alen = (c.la + C::R - 1) / C::R * C::R;
  s.aoff = C::phys(s.xlen);
  s.per = s.aoff + C::phys(s.alen);
  return s;
}

/// Whether the small kernel takes c under tuning C (and its shared bytes per block).
template <class T, class C>
bool small_fits(const correlation_view<T>& c, std::size_t* bytes) {
  if (c.lout > C::max_out || c.la > C::max_taps) return false;
  const small_layout s = small_layout_of<T, C>(c);
  *bytes = std::size_t{32} / C::G * C::W * s.per * sizeof(T);
  return *bytes <= 48 * 1024;
}

/// Asynchronous copy of one element into shared memory, zeros when !valid.
template <class T>
__device__ __forceinline__ void copy_async(T* dst, const T* src, bool valid) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src), "n"(sizeof(T)),
               "r"(valid ? static_cast<int>(sizeof(T)) : 0)
               : "memory");
}

/// Loads N logical elements from u (u % V == 0, so no run crosses padding)
/// of a padded shared row into w[First..).
template <class T, class C, int First, int N, int M>
__device__ __forceinline__ void small_load(const T* base, int u, T (&w)[M]) {
  using vec_t = typename vec16<T>::type;
#pragma unroll
  for (int v = 0; v < N / C::V; ++v) {
    const int t = u + v * C::V;
    const vec_t x = *reinterpret_cast<const vec_t*>(base + C::phys(t));
    if constexpr (C::V == 4) {
      w[First + v * 4 + 0] = x.x, w[First + v * 4 + 1] = x.y;
      w[First + v * 4 + 2] = x.z, w[First + v * 4 + 3] = x.w;
    } else {
      w[First + v * 2 + 0] = x.x, w[First + v * 2 + 1] = x.y;
    }
  }
}

/// One block of R outputs of a lane: taps from k0 (a multiple of K), X from
/// logical staged index u0, n chunks.
struct small_segment {
  int k0, u0, n;
};

template <class T, class C>
__device__ small_segment small_segment_of(const correlation_view<T>& c, const small_layout& s,
                                          int j0) {
  const int klo = max(0, c.lead - (j0 + C::R - 1)) / C::K * C::K;
  const int khi = min(c.la - 1, c.lead + c.lx - 1 - j0);
  const int n = (j0 < c.lout && khi >= klo) ? (khi - klo) / C::K + 1 : 0;
  return {klo, j0 + klo - s.off, n};
}

/// Thin shell: warp w of block blk takes problems (blk W + w) P .. + P - 1,
/// lane group q = lane / G one of them.
template <class T, class C>
__global__ void __launch_bounds__(32 * C::W)
    kernel_banded_small(const correlation_view<T> c, const small_layout s) {
  extern __shared__ __align__(16) unsigned char small_smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* ws = reinterpret_cast<T*>(small_smem) + warp * C::P * s.per;
  const std::int64_t b0 = (std::int64_t{blockIdx.x} * C::W + warp) * C::P;
  if (b0 >= c.batch) return;
  const int np = static_cast<int>(dmin(C::P, c.batch - b0));
  // stage the warp's problems: every copy issued before any wait
  for (int q = 0; q < np; ++q) {
    const T* x = c.x + (b0 + q) * c.x_batch;
    const T* a = c.a + (b0 + q) * c.a_batch;
    T* xs = ws + q * s.per;
    for (int u = lane; u < s.xlen; u += 32) {
      const int g = u + s.off - c.lead;
      const bool in = g >= 0 && g < c.lx;
      copy_async(xs + C::phys(u), x + (in ? g * c.x_step : 0), in);
    }
    for (int k = lane; k < s.alen; k += 32) {
      const bool in = k < c.la;
      copy_async(xs + s.aoff + C::phys(k), a + (in ? k * c.a_step : 0), in);
    }
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncwarp();

  const int q = lane / C::G, l = lane % C::G;
  const T* xs = ws + q * s.per;
  const T* as = xs + s.aoff;
  // lane groups past the batch's end compute nothing
  const small_segment f = q < np ? small_segment_of<T, C>(c, s, l * C::R) : small_segment{};
  const small_segment bk =
      q < np ? small_segment_of<T, C>(c, s, (l + C::G) * C::R) : small_segment{};
  const int n = f.n + bk.n;
  T acc[C::R], front[C::R], xw[C::R + C::K];
#pragma unroll
  for (int r = 0; r < C::R; ++r) acc[r] = front[r] = T(0);
  int u = f.n > 0 ? f.u0 : bk.u0, k = f.n > 0 ? f.k0 : bk.k0;
  if (n > 0) small_load<T, C, 0, C::R>(xs, u, xw);
  for (int i = 0; i < n; ++i) {
    small_load<T, C, C::R, C::K>(xs, u + C::R, xw);
    T av[C::K];
    small_load<T, C, 0, C::K>(as, k, av);
#pragma unroll
    for (int kk = 0; kk < C::K; ++kk)
#pragma unroll
      for (int r = 0; r < C::R; ++r) acc[r] = fma(av[kk], xw[r + kk], acc[r]);
#pragma unroll
    for (int r = 0; r < C::R; ++r) xw[r] = xw[r + C::K];
    u += C::K;
    k += C::K;
    if (i + 1 == f.n) {
      // the lane's switch from its front block to its back block
#pragma unroll
      for (int r = 0; r < C::R; ++r) front[r] = acc[r], acc[r] = T(0);
      u = bk.u0;
      k = bk.k0;
      if (bk.n > 0) small_load<T, C, 0, C::R>(xs, u, xw);
    }
  }
  // through shared memory (the staged operands are consumed): coalesced stores
  __syncwarp();
  T* os = ws + q * s.per;
  const int jf = l * C::R, jb = (l + C::G) * C::R;
#pragma unroll
  for (int r = 0; r < C::R; ++r) {
    if (jf + r < c.lout) os[jf + r] = front[r];
    if (jb + r < c.lout) os[jb + r] = acc[r];
  }
  __syncwarp();
  for (int p = 0; p < np; ++p) {
    T* out = c.out + (b0 + p) * c.out_batch;
    const T* o = ws + p * s.per;
    for (int j = lane; j < c.lout; j += 32) out[j * c.out_step] = o[j];
  }
}

/// Launches the small-problem kernel (requires small_fits<T, C>(c, &bytes)).
/// @param c the correlation
/// @param bytes dynamic shared memory per block, from small_fits
/// @param stream the stream
template <class T, class C>
void launch_small(const correlation_view<T>& c, std::size_t bytes, cudaStream_t stream) {
  const small_layout s = small_layout_of<T, C>(c);
  const std::int64_t per_block = std::int64_t{C::W} * C::P;
  const unsigned grid = static_cast<unsigned>((std::int64_t{c.batch} + per_block - 1) / per_block);
  kernel_banded_small<T, C><<<grid, 32 * C::W, bytes, stream>>>(c, s);
  MARG_CHECK_LAUNCH(stream);
}

}  // namespace marg::detail::cuda
