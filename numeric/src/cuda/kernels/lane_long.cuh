// Lane per problem for rows too long for the other lane kernels (e.g. full
// convolutions of 512 and 512: a group of 32 problems stages 137 KB): the
// per-lane compute of kernels/lane.cuh (R = 16 outputs per lane block, steps
// of 4 taps, lane_steps) and kernels/lane_bulk.cuh's layout, with
// - one block of W = 16 warps per SM and one staging buffer, no group-sized
//   output slab: a lane block's sums go through a per-warp 32 x 20 slab to
//   stores of two problems' 16 outputs per instruction (each lane storing
//   its own problem's outputs scatters the stores and is much slower);
// - staging in K chunks per row from both ends inward, each counted on its
//   own mbarrier: a warp starts a lane block once the chunks it reads have
//   landed (a convolution's short blocks read only the rows' ends; one
//   chunk instead of 8 makes every warp wait for the whole rows);
// - warp w owns blocks w, 2W - 1 - w, 3W - 1 - w and 3W + w of every 4W
//   (lane_long_plan_of): a full convolution's blocks grow and shrink
//   linearly, so each warp gets the same steps, and one of its blocks sits
//   near an end of the rows; it runs them in order of the chunks they read
//   (a shared queue of blocks is slower: its ends come out uneven).
// Against the pairs kernel (a warp per problem, lanes over its blocks) every
// lane runs one problem's exact band steps: no switch points, no rounding of
// the lanes' steps to whole passes. docs/kernel-notes.md has the
// measurements. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "lane_bulk.cuh"

namespace marg::detail::cuda {

/// Shape constants of the long-row lane kernel.
struct lane_long_tuning {
  static constexpr int W = 16;            ///< warps per block (one block per SM)
  static constexpr int threads = 32 * W;  ///< threads per block
  static constexpr int K = 8;             ///< staging chunks per row
  /// per-warp slab pitch: an odd number of 16-byte units (conflict-free 16-byte writes)
  static constexpr int po = 20;
  static constexpr int tpr = 8;      ///< staging threads per operand row (2 x 32 rows)
  static constexpr int max_own = 8;  ///< lane blocks per warp (nblk <= W max_own)
  static constexpr int head = 128;   ///< bytes of the barriers in front of the buffer
  /// U-step passes per trip of the step loop: 2 is the fastest of 1, 2 and 4
  /// (docs/kernel-notes.md)
  static constexpr int passes = 2;
};

/// Host-built plan of the long-row kernel for one shape: the chunks' column
/// bounds and each warp's lane blocks in order of the chunks they need.
struct lane_long_plan {
  static constexpr int K = lane_long_tuning::K, W = lane_long_tuning::W;
  /// taps row (memory order) and x row: chunk i is columns [b[i], b[i + 1])
  /// from the front and [e[i + 1], e[i]) from the back (e[i] = max(b[K], n -
  /// b[i])); multiples of 16 bytes where the rows are copied by 16-byte units
  int ba[K + 1], ea[K + 1], bx[K + 1], ex[K + 1];
  std::uint64_t ord[W];  ///< byte m: warp w's m-th lane block
  std::uint32_t nds[W];  ///< nibble m: the last chunk it reads + 1 (0: none)
  int own[W];            ///< lane blocks of warp w
};

/// The staging of group g: threads 8 r .. 8 r + 7 copy row r (the taps rows
/// of the group's problems, then their x rows), chunk by chunk, each
/// thread's copies of chunk i followed by an async arrival on bar[i]
/// (.noinc: the barriers count the block's threads), so bar[i] completes
/// once chunks 0 .. i have landed everywhere. A chunk is ~1/16 of a row from
/// each end: 16-byte units (or elements) u = 8 sub, 8 sub + 8, ... of it.
template <class T>
__device__ void lane_long_stage(const correlation_view<T>& c, const lane_bulk_shape& s,
                                const lane_long_plan& pl, std::int64_t g, T* buf,
                                std::uint64_t* bar) {
  using C = lane_tuning;
  using L = lane_long_tuning;
  constexpr int K = L::K, V = 16 / static_cast<int>(sizeof(T));
  static_assert(L::threads == 2 * C::P * L::tpr, "one row per tpr threads");
  const int row = threadIdx.x / L::tpr, sub = threadIdx.x % L::tpr;
  const bool is_a = row < C::P;
  const int p = is_a ? row : row - C::P;
  const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
  const bool on = p < (is_a ? (c.a_batch == 0 ? 1 : live) : (c.x_batch == 0 ? 1 : live));
  const T* const src =
      is_a ? taps_row(c) + (g * C::P + p) * c.a_batch : c.x + (g * C::P + p) * c.x_batch;
  const std::int64_t step = is_a ? (c.a_step < 0 ? -c.a_step : c.a_step) : c.x_step;
  T* const dst =
      is_a ? buf + s.off_a + p * s.pa : buf + C::P * s.pa + (c.lead - s.t_base) + p * s.px;
  const bool vec = is_a ? s.vec_a : s.vec_x;
  const int unit = vec ? V : 1;
  // pointer steps per unit copied by this thread (8 units along the row)
  const std::int64_t ds = std::int64_t{L::tpr} * unit * (vec ? 1 : step);
  const auto copy = [&](int col, int n) {  // columns col .. col + n - 1
    const T* from = src + (col + sub * unit) * (vec ? 1 : step);
    unsigned to = lane_smem_addr(dst + col + sub * unit);
    for (int u = sub * unit; u < n;
         u += L::tpr * unit, from += ds, to += L::tpr * unit * static_cast<unsigned>(sizeof(T))) {
      if (vec)
        lane_cp_async<16>(to, from);
      else
        lane_cp_async<static_cast<int>(sizeof(T))>(to, from);
    }
  };
#pragma unroll
  for (int i = 0; i < K; ++i) {
    if (on) {
      const int b0 = is_a ? pl.ba[i] : pl.bx[i], b1 = is_a ? pl.ba[i + 1] : pl.bx[i + 1];
      const int e1 = is_a ? pl.ea[i + 1] : pl.ex[i + 1], e0 = is_a ? pl.ea[i] : pl.ex[i];
      copy(b0, b1 - b0);
      copy(e1, e0 - e1);
    }
    asm volatile(
        "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(lane_smem_addr(bar + i))
        : "memory");
  }
}

/// The kernel: block k computes groups k, k + gridDim.x, ... (one buffer:
/// a block barrier before each restaging); warp w its lane blocks in the
/// plan's order, each once the chunks it reads have landed.
template <class T, bool Rev>
__global__ void __launch_bounds__(lane_long_tuning::threads, 1)
    kernel_banded_lane_long(const correlation_view<T> c, const lane_long_plan pl) {
#if MARG_CUDA_HOPPER_CODE
  using C = lane_tuning;
  using L = lane_long_tuning;
  constexpr int R = C::R, K = L::K;
  extern __shared__ __align__(16) unsigned char lane_smem[];
  auto* const bar = reinterpret_cast<std::uint64_t*>(lane_smem);
  T* const buf = reinterpret_cast<T*>(lane_smem + L::head);
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  const int len = s.buffer();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* const wslab = buf + len + warp * (32 * L::po);
  if (blockIdx.x >= s.groups) return;
  {
    // the rows' zero padding, once (stages copy only the operands' values):
    // threads 8 r .. 8 r + 7 clear the ends of row r (as lane_long_stage)
    const int row = threadIdx.x / L::tpr, sub = threadIdx.x % L::tpr;
    const bool is_a = row < C::P;
    T* const dst = is_a ? buf + row * s.pa : buf + C::P * s.pa + (row - C::P) * s.px;
    const int v0 = is_a ? s.off_a : c.lead - s.t_base;  // the values' columns
    const int v1 = v0 + (is_a ? c.la : c.lx), n = is_a ? s.pa : s.px;
    for (int e = sub; e < v0; e += L::tpr) dst[e] = T(0);
    for (int e = v1 + sub; e < n; e += L::tpr) dst[e] = T(0);
  }
  if (threadIdx.x == 0) {
    for (int i = 0; i < K; ++i) lane_bar_init_count(bar + i, L::threads);
  }
  const std::uint64_t ord = pl.ord[warp];
  const std::uint32_t nds = pl.nds[warp];
  const int n = pl.own[warp];
  await_previous_kernel();
  __syncthreads();  // zeros written, barriers initialized
  const T* const ta = buf + (c.a_batch == 0 ? 0 : lane * s.pa);
  const T* const tx = buf + C::P * s.pa + (c.x_batch == 0 ? 0 : lane * s.px);
  unsigned parity = 0;
  for (std::int64_t g = blockIdx.x; g < s.groups; g += gridDim.x, parity ^= 1) {
    if (g != blockIdx.x) __syncthreads();  // every warp is done with the buffer
    lane_long_stage(c, s, pl, g, buf, bar);
    const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
    for (int m = 0; m < n; ++m) {
      const int j0 = s.js + R * static_cast<int>(ord >> (8 * m) & 0xFF);
      const int nd = static_cast<int>(nds >> (4 * m) & 0xF) - 1;
      if (nd >= 0) lane_bar_wait(bar + nd, parity);
      T acc[R];
      int k0 = 0;
      const int ng = lane_tap_range(c, j0, acc, k0);
      if (ng > 0) {
        // Edge: a block at the band's left edge leaves out the quads that
        // meet only the zero x in front of it (same results, lane_steps)
        lane_steps<T, Rev, false, true, L::passes>(tx + (j0 + k0 - s.t_base),
                                                   Rev ? ta + (s.la4 - C::G - k0) : ta + k0, ng,
                                                   acc, (c.lead - j0 - 3 - k0) / C::G >= 3);
      }
      T* const mine = wslab + lane * L::po;
#pragma unroll
      for (int r = 0; r < R; r += C::G) lane_put4(mine + r, acc + r);
      __syncwarp();
      // lanes 0-15 store problem 2i, 16-31 problem 2i + 1: outputs j0 .. j0 + 15
      const int half = lane >> 4, r = lane & 15, j = j0 + r;
      if (j >= 0 && j < c.lout) {
        T* o = c.out + (g * C::P + half) * c.out_batch + std::int64_t{j} * c.out_step;
        const T* v = wslab + half * L::po + r;
        const std::int64_t ob = 2 * c.out_batch;
        if (live == C::P) {
#pragma unroll
          for (int i = 0; i < 16; ++i, o += ob) *o = v[2 * L::po * i];
        } else {
          for (int i = 0; 2 * i + half < live; ++i, o += ob) *o = v[2 * L::po * i];
        }
      }
      __syncwarp();  // the slab is read before the next block writes it
    }
  }
#else
  __trap();  // needs sm_90: the dispatch runs it only there
#endif
}

/// Front bound b(i) of chunk i of a row of n columns: ceil(i n / 2K) rounded
/// up to v columns, at most n.
inline int lane_long_bound(int i, int n, int v) {
  const int k2 = 2 * lane_long_tuning::K;
  const int e = static_cast<int>((std::int64_t{i} * n + k2 - 1) / k2);
  return std::min(n, (e + v - 1) / v * v);
}

/// @return block i of warp w's list (blocks w, 2W - 1 - w, 3W - 1 - w and 3W +
///         w of every 4W in turn: a full convolution's blocks grow and shrink
///         linearly, so every warp gets the same steps)
inline int lane_long_own(int w, int i) {
  constexpr int W = lane_long_tuning::W;
  const int q = i / 4, r = i % 4;
  const int local = r == 0 ? w : r == 1 ? 2 * W - 1 - w : r == 2 ? 3 * W - 1 - w : 3 * W + w;
  return 4 * W * q + local;
}

/// The plan of `c` (requires lane_long_fits).
template <class T>
lane_long_plan lane_long_plan_of(const correlation_view<T>& c) {
  using L = lane_long_tuning;
  constexpr int K = L::K, R = lane_tuning::R, G = lane_tuning::G;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  lane_long_plan pl{};
  for (int i = 0; i <= K; ++i) pl.ba[i] = lane_long_bound(i, c.la, V);
  for (int i = 0; i <= K; ++i) pl.bx[i] = lane_long_bound(i, c.lx, V);
  for (int i = 0; i <= K; ++i) pl.ea[i] = std::max(pl.ba[K], c.la - pl.ba[i]);
  for (int i = 0; i <= K; ++i) pl.ex[i] = std::max(pl.bx[K], c.lx - pl.bx[i]);
  // the last chunk that columns [lo, hi) of a row of n columns read (-1: none);
  // chunks grow towards the middle from both ends
  const auto need = [](const int* b, const int* e, int n, int lo, int hi) {
    lo = std::max(lo, 0), hi = std::min(hi, n);
    if (lo >= hi) return -1;
    int last = -1;
    for (int i = 0; i < K; ++i)
      if ((lo < b[i + 1] && hi > b[i]) || (lo < e[i] && hi > e[i + 1])) last = i;
    return last;
  };
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  for (int w = 0; w < L::W; ++w) {
    int blk[L::max_own], nd[L::max_own], n = 0;
    for (int i = 0; i < L::max_own; ++i) {
      const int b = lane_long_own(w, i);
      if (b >= s.nblk) continue;
      const int j0 = s.js + R * b;
      const int klo = std::max(0, c.lead - (j0 + R - 1));
      const int khi = std::min(c.la - 1, c.lead + c.lx - 1 - j0);
      int last = -1;
      if (klo <= khi) {
        const int k0 = klo / G * G, k1 = (khi / G + 1) * G;  // taps [k0, k1)
        // taps in memory order (a reversed row's tap k is element la - 1 - k);
        // the window reads x [j0 + k0 - lead, j0 + k1 + R - lead)
        const int na = c.a_step < 0 ? need(pl.ba, pl.ea, c.la, c.la - k1, c.la - k0)
                                    : need(pl.ba, pl.ea, c.la, k0, k1);
        const int nx = need(pl.bx, pl.ex, c.lx, j0 + k0 - c.lead, j0 + k1 + R - c.lead);
        last = std::max(na, nx);
      }
      // insertion in order of the chunks
      int m = n++;
      for (; m > 0 && nd[m - 1] > last; --m) blk[m] = blk[m - 1], nd[m] = nd[m - 1];
      blk[m] = b, nd[m] = last;
    }
    pl.own[w] = n;
    for (int m = 0; m < n; ++m) {
      pl.ord[w] |= static_cast<std::uint64_t>(blk[m]) << (8 * m);
      pl.nds[w] |= static_cast<std::uint32_t>(nd[m] + 1) << (4 * m);
    }
  }
  return pl;
}

/// Bytes of shared memory the long-row lane kernel needs for `c`.
template <class T>
std::int64_t lane_long_bytes(const correlation_view<T>& c) {
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  return lane_long_tuning::head + (std::int64_t{s.buffer()} +
                                   std::int64_t{lane_long_tuning::W} * 32 * lane_long_tuning::po) *
                                      static_cast<std::int64_t>(sizeof(T));
}

/// Whether the long-row lane kernel can run `c`: at most W max_own lane
/// blocks and its shared memory within `max_smem` bytes.
template <class T>
bool lane_long_fits(const correlation_view<T>& c, std::int64_t max_smem) {
  using L = lane_long_tuning;
  if (c.lout <= 0 || c.la <= 0 || c.la > (1 << 16) || c.lx > (1 << 16)) return false;
  if (lane_bulk_shape_of(c).nblk > L::W * L::max_own) return false;
  return lane_long_bytes(c) <= max_smem;
}

}  // namespace marg::detail::cuda
