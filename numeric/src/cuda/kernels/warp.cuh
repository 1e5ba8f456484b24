// Warp per problem, for batches of small problems: each warp stages its own
// problem (taps and the X window of one output tile, KC taps per pass) in
// its own slice of shared memory and runs the register-blocked chunks of the
// tiled kernel over it, with no block-wide barrier. Many problems per block,
// one launch for the whole batch; a persistent grid where each warp loads its
// next pass while computing the current one. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../cuda_check.hpp"
#include "../stream.hpp"
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

/// One pass of a warp: problem b, output tile J0, taps k0 .. k0 + KC - 1 of
/// the tile's range klo..khi.
struct warp_pass {
  std::int64_t b, J0, k0, khi;
};

/// The first pass of tile J0 of problem b.
template <class T, class C>
__device__ warp_pass first_pass(const correlation_view<T>& c, std::int64_t b, std::int64_t J0) {
  const std::int64_t j_hi = dmin(J0 + C::TJ, c.lout) - 1;
  return {b, J0, dmax(0, c.lead - j_hi), dmin(c.la - 1, std::int64_t{c.lead} + c.lx - 1 - J0)};
}

/// Whether p is its tile's last pass (a tile with no taps has one pass).
template <class C>
__device__ bool last_pass(const warp_pass& p) {
  return p.k0 + C::KC > p.khi;
}

/// The pass after p: the next taps, else the next tile, else the next problem
/// (b + stride).
template <class T, class C>
__device__ warp_pass next_pass(const correlation_view<T>& c, const warp_pass& p,
                               std::int64_t stride) {
  if (!last_pass<C>(p)) return {p.b, p.J0, p.k0 + C::KC, p.khi};
  if (p.J0 + C::TJ < c.lout) return first_pass<T, C>(c, p.b, p.J0 + C::TJ);
  return first_pass<T, C>(c, p.b + stride, 0);
}

/// Loads pass p's taps and X window into registers (zeros outside the band).
template <class T, class C>
__device__ void fetch_pass(const correlation_view<T>& c, const warp_pass& p, int lane,
                           T (&rx)[(C::TJ + C::KC) / 32], T (&ra)[C::KC / 32]) {
  const T* a = c.a + p.b * c.a_batch;
  const T* x = c.x + p.b * c.x_batch;
#pragma unroll
  for (int i = 0; i < (C::TJ + C::KC) / 32; ++i) {
    const std::int64_t g = p.J0 + p.k0 + lane + i * 32 - c.lead;
    rx[i] = (g >= 0 && g < c.lx) ? x[g * c.x_step] : T(0);
  }
#pragma unroll
  for (int i = 0; i < C::KC / 32; ++i) {
    const std::int64_t k = p.k0 + lane + i * 32;
    ra[i] = k <= p.khi ? a[k * c.a_step] : T(0);
  }
}

/// Thin shell: warp w of block blk walks the passes of problems blk*WB + w,
/// + gridDim.x*WB, ... (a persistent grid), loading the next pass into
/// registers while it computes the current one; each finished tile goes out
/// through its shared slice as coalesced stores.
template <class T, class C>
__global__ void __launch_bounds__(32 * C::WB) kernel_banded_warp(const correlation_view<T> c) {
  await_previous_kernel();  // launched with early start (launch_warp)
  __shared__ __align__(16) T xs_all[C::WB][C::xs_len];
  __shared__ __align__(16) T as_all[C::WB][C::KC];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* xs = xs_all[warp];
  T* as = as_all[warp];
  const std::int64_t stride = std::int64_t{gridDim.x} * C::WB;
  warp_pass p = first_pass<T, C>(c, std::int64_t{blockIdx.x} * C::WB + warp, 0);
  if (p.b >= c.batch) return;
  constexpr int nx = (C::TJ + C::KC) / 32, na = C::KC / 32;
  T rx[nx], ra[na];
  fetch_pass<T, C>(c, p, lane, rx, ra);
  T acc[C::R];
#pragma unroll
  for (int r = 0; r < C::R; ++r) acc[r] = T(0);
  for (;;) {
    __syncwarp();  // the previous pass (and tile output) is consumed
#pragma unroll
    for (int i = 0; i < nx; ++i) xs[C::phys(lane + i * 32)] = rx[i];
#pragma unroll
    for (int i = 0; i < na; ++i) as[lane + i * 32] = ra[i];
    __syncwarp();
    const warp_pass n = next_pass<T, C>(c, p, stride);
    if (n.b < c.batch) fetch_pass<T, C>(c, n, lane, rx, ra);  // in flight during compute
    const int nk = static_cast<int>(dmax(0, dmin(C::KC, p.khi + 1 - p.k0)));
    T sacc[C::R];
#pragma unroll
    for (int r = 0; r < C::R; ++r) sacc[r] = T(0);
    slide_chunks<T, C, C::KC / C::K>(
        xs + lane * C::row, as, nk, [](int) { return true; }, sacc);
#pragma unroll
    for (int r = 0; r < C::R; ++r) acc[r] += sacc[r];
    if (last_pass<C>(p)) {
      // through shared memory: lane i then writes outputs i, i + 32, ...
      __syncwarp();
#pragma unroll
      for (int r = 0; r < C::R; ++r) xs[C::phys(lane * C::R + r)] = acc[r];
      __syncwarp();
      T* out = c.out + p.b * c.out_batch;
#pragma unroll
      for (int i = 0; i < C::R; ++i) {
        const std::int64_t j = p.J0 + lane + i * 32;
        if (j < c.lout) out[j * c.out_step] = xs[C::phys(lane + i * 32)];
      }
#pragma unroll
      for (int r = 0; r < C::R; ++r) acc[r] = T(0);
    }
    if (n.b >= c.batch) break;
    p = n;
  }
}

/// Launches the warp-per-problem kernel with tuning C.
/// @param c the correlation
/// @param stream the stream
template <class T, class C>
void launch_warp(const correlation_view<T>& c, cudaStream_t stream) {
  // persistent grid: as many blocks as fit at once, each warp walks several
  // problems (so that it can prefetch the next one)
  static thread_local int cached_device = -1, resident = 0;
  // no driver call with one visible device: the dispatch asks on every launch
  const int dev = current_device_id();
  if (dev != cached_device) {
    int sms = 0, per_sm = 0;
    MARG_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    MARG_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_banded_warp<T, C>,
                                                                32 * C::WB, 0));
    resident = std::max(1, sms * per_sm);
    cached_device = dev;
  }
  const std::int64_t blocks = (std::int64_t{c.batch} + C::WB - 1) / C::WB;
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(blocks, resident));
  launch_with(kernel_banded_warp<T, C>, dim3(grid), 32 * C::WB, 1, true, c, stream);
}

}  // namespace marg::detail::cuda
