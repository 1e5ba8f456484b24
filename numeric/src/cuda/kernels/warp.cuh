// Warp per problem, for batches of small problems: each warp stages its own
// problem (taps and the X window of one output tile, KC taps per pass) in
// its own slice of shared memory and runs the register-blocked chunks of the
// tiled kernel over it, with no block-wide barrier. Many problems per block,
// one launch for the whole batch. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../cuda_check.hpp"
#include "correlation.cuh"
#include "tiled.cuh"

namespace marg::detail::cuda {

/// Tile sizes of the warp-per-problem kernel: a lane owns R outputs (one
/// output tile is 32 R), taps in chunks of K, KC taps staged per pass, WB
/// warps (problems) per block.
template <class T, int R_, int K_, int KC_, int WB_>
struct warp_tuning : tiled_tuning<T, R_, K_, 1, 1, KC_, 1> {
  static constexpr int WB = WB_;
};

/// Thin shell: warp w of block b takes problems b*WB + w, + gridDim.x*WB, ...
template <class T, class C>
__global__ void __launch_bounds__(32 * C::WB) kernel_banded_warp(const correlation_view<T> c) {
  __shared__ __align__(16) T xs_all[C::WB][C::xs_len];
  __shared__ __align__(16) T as_all[C::WB][C::KC];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* xs = xs_all[warp];
  T* as = as_all[warp];
  for (std::int64_t b = std::int64_t{blockIdx.x} * C::WB + warp; b < c.batch;
       b += std::int64_t{gridDim.x} * C::WB) {
    const T* a = c.a + b * c.a_batch;
    const T* x = c.x + b * c.x_batch;
    T* out = c.out + b * c.out_batch;
    for (std::int64_t J0 = 0; J0 < c.lout; J0 += C::TJ) {
      const std::int64_t j_hi = dmin(J0 + C::TJ, c.lout) - 1;
      const std::int64_t klo = dmax(0, c.lead - j_hi);
      const std::int64_t khi = dmin(c.la - 1, std::int64_t{c.lead} + c.lx - 1 - J0);
      T acc[C::R];
#pragma unroll
      for (int r = 0; r < C::R; ++r) acc[r] = T(0);
      for (std::int64_t k0 = klo; k0 <= khi; k0 += C::KC) {
        __syncwarp();  // the previous pass is consumed
        T rx[(C::TJ + C::KC) / 32], ra[C::KC / 32];
#pragma unroll
        for (int i = 0; i < (C::TJ + C::KC) / 32; ++i) {
          const std::int64_t g = J0 + k0 + lane + i * 32 - c.lead;
          rx[i] = (g >= 0 && g < c.lx) ? x[g * c.x_step] : T(0);
        }
#pragma unroll
        for (int i = 0; i < C::KC / 32; ++i) {
          const std::int64_t k = k0 + lane + i * 32;
          ra[i] = k <= khi ? a[k * c.a_step] : T(0);
        }
#pragma unroll
        for (int i = 0; i < (C::TJ + C::KC) / 32; ++i) xs[C::phys(lane + i * 32)] = rx[i];
#pragma unroll
        for (int i = 0; i < C::KC / 32; ++i) as[lane + i * 32] = ra[i];
        __syncwarp();
        const int nk = static_cast<int>(dmin(C::KC, khi + 1 - k0));
        T sacc[C::R];
#pragma unroll
        for (int r = 0; r < C::R; ++r) sacc[r] = T(0);
        for (int ci = 0; ci * C::K < nk; ++ci)
          chunk_fma<T, C>(xs + (lane + (ci * C::K) / C::R) * C::row, (ci * C::K) % C::R,
                          as + ci * C::K, sacc);
#pragma unroll
        for (int r = 0; r < C::R; ++r) acc[r] += sacc[r];
      }
#pragma unroll
      for (int r = 0; r < C::R; ++r) {
        const std::int64_t j = J0 + lane * C::R + r;
        if (j < c.lout) out[j * c.out_step] = acc[r];
      }
    }
  }
}

/// Launches the warp-per-problem kernel with tuning C.
/// @param c the correlation
/// @param stream the stream
template <class T, class C>
void launch_warp(const correlation_view<T>& c, cudaStream_t stream) {
  const std::int64_t blocks = (std::int64_t{c.batch} + C::WB - 1) / C::WB;
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(blocks, 1 << 30));
  kernel_banded_warp<T, C><<<grid, 32 * C::WB, 0, stream>>>(c);
  MARG_CHECK_LAUNCH(stream);
}

}  // namespace marg::detail::cuda
