// Lane per problem for rows too long for the other lane kernels (e.g. full
// convolutions of 512 and 512: a group of 32 problems stages 137 KB): the
// per-lane compute of kernels/lane.cuh (R = 16 outputs per lane block, steps
// of 4 taps, lane_bulk_block), with
// - one block of W = 16 warps per SM and one staging buffer, no group-sized
//   output slab: a lane block's sums go through a per-warp 32 x 17 slab to
//   stores of two problems' 16 outputs per instruction;
// - staging in K chunks per row from both ends inward, each counted on its
//   own mbarrier: a warp starts a lane block once the chunks it reads have
//   landed (a convolution's short blocks read only the rows' ends), so the
//   compute starts after about 1 / K of the load instead of all of it;
// - warp w owns blocks w, 2W - 1 - w, 3W - 1 - w and 3W + w of every 4W:
//   a full convolution's blocks grow and shrink linearly, so each warp gets
//   the same steps, and one of its blocks sits near an end of the rows.
// Against the pairs kernel (a warp per problem, lanes over its blocks) every
// lane runs one problem's exact band steps: no switch points, no rounding of
// the lanes' steps to whole passes. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "lane_bulk.cuh"

namespace marg::detail::cuda {

/// Shape constants of the long-row lane kernel.
struct lane_long_tuning {
  static constexpr int W = 16;            ///< warps per block (one block per SM)
  static constexpr int threads = 32 * W;  ///< threads per block
  static constexpr int K = 8;             ///< staging chunks per row
  static constexpr int po = 17;           ///< per-warp slab pitch (odd: conflict-free lanes)
  static constexpr int max_own = 8;       ///< lane blocks per warp (nblk <= W max_own)
  static constexpr int head = 128;        ///< bytes of the barriers in front of the buffer
};

/// Front boundary b(i) of chunk i of a row of n columns (K chunks from each
/// end): ceil(i n / 2K) rounded up to V, at most n; chunk i is columns
/// [b(i), b(i + 1)) and [max(b(K), n - b(i + 1)), max(b(K), n - b(i))).
template <class T>
__host__ __device__ constexpr int lane_long_bound(int i, int n) {
  constexpr int K = lane_long_tuning::K, V = 16 / static_cast<int>(sizeof(T));
  const int e = (i * n + 2 * K - 1) / (2 * K);
  const int r = (e + V - 1) / V * V;
  return r < n ? r : n;
}

/// @return the chunk that holds column j (0 <= j < n) of a row of n columns
template <class T>
__device__ __forceinline__ int lane_long_chunk(int j, int n) {
  constexpr int K = lane_long_tuning::K;
  const int mid = lane_long_bound<T>(K, n);
  int i = 0;
  if (j < mid) {
    while (i + 1 < K && j >= lane_long_bound<T>(i + 1, n)) ++i;
  } else {
    while (i + 1 < K && j < n - lane_long_bound<T>(i + 1, n)) ++i;
  }
  return i;
}

/// @return the last chunk that columns [lo, hi) of a row of n columns need
///         (-1: none inside the row)
template <class T>
__device__ __forceinline__ int lane_long_need(int lo, int hi, int n) {
  lo = lo > 0 ? lo : 0, hi = hi < n ? hi : n;
  if (lo >= hi) return -1;
  const int mid = lane_long_bound<T>(lane_long_tuning::K, n);
  int c = -1;
  if (lo < mid) c = lane_long_chunk<T>(hi < mid ? hi - 1 : mid - 1, n);
  if (hi > mid) {
    const int b = lane_long_chunk<T>(lo > mid ? lo : mid, n);
    c = b > c ? b : c;
  }
  return c;
}

/// Threads t < nt copy columns [e0, e1) of `rows` rows (see lane_copy_rows).
template <class T>
__device__ __forceinline__ void lane_long_copy(bool vec, int rows, int e0, int e1, const T* src,
                                               std::int64_t step, std::int64_t batch, T* dst,
                                               int pitch, int t, int nt) {
  if (e1 > e0)
    lane_copy_rows(vec, rows, e1 - e0, src + e0 * step, step, batch, dst + e0, pitch, t, nt);
}

/// The staging of group g: chunk by chunk, each thread's copies of chunk i
/// then an async arrival on bar[i] (.noinc: the barriers count the block's
/// threads), so bar[i] completes once chunks 0 .. i have landed.
template <class T>
__device__ void lane_long_stage(const correlation_view<T>& c, const lane_bulk_shape& s,
                                std::int64_t g, T* buf, std::uint64_t* bar) {
  using C = lane_tuning;
  constexpr int K = lane_long_tuning::K, nt = lane_long_tuning::threads;
  const int t = threadIdx.x;
  const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
  const std::int64_t b0 = g * C::P;
  const int ra = c.a_batch == 0 ? 1 : live, rx = c.x_batch == 0 ? 1 : live;
  const T* const sa = taps_row(c) + b0 * c.a_batch;
  const std::int64_t da = c.a_step < 0 ? -c.a_step : c.a_step;
  const T* const sx = c.x + b0 * c.x_batch;
  T* const xa = buf + C::P * s.pa + (c.lead - s.t_base);
  const int ma = lane_long_bound<T>(K, c.la), mx = lane_long_bound<T>(K, c.lx);
  for (int i = 0; i < K; ++i) {
    const int a0 = lane_long_bound<T>(i, c.la), a1 = lane_long_bound<T>(i + 1, c.la);
    const int x0 = lane_long_bound<T>(i, c.lx), x1 = lane_long_bound<T>(i + 1, c.lx);
    lane_long_copy(s.vec_a, ra, a0, a1, sa, da, c.a_batch, buf + s.off_a, s.pa, t, nt);
    lane_long_copy(s.vec_x, rx, x0, x1, sx, c.x_step, c.x_batch, xa, s.px, t, nt);
    const int a2 = max(ma, c.la - a1), a3 = max(ma, c.la - a0);
    const int x2 = max(mx, c.lx - x1), x3 = max(mx, c.lx - x0);
    lane_long_copy(s.vec_a, ra, a2, a3, sa, da, c.a_batch, buf + s.off_a, s.pa, t, nt);
    lane_long_copy(s.vec_x, rx, x2, x3, sx, c.x_step, c.x_batch, xa, s.px, t, nt);
    asm volatile(
        "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(lane_smem_addr(bar + i))
        : "memory");
  }
}

/// The last chunk that lane block j0 reads (-1: the block lies outside the
/// band; its sums are zeros).
template <class T, bool Rev>
__device__ __forceinline__ int lane_long_block_need(const correlation_view<T>& c,
                                                    const lane_bulk_shape& s, int j0) {
  constexpr int G = lane_tuning::G, R = lane_tuning::R;
  const int klo = max(0, c.lead - (j0 + R - 1));
  const int khi = min(c.la - 1, c.lead + c.lx - 1 - j0);
  if (klo > khi) return -1;
  const int k0 = klo / G * G, k1 = (khi / G + 1) * G;  // taps [k0, k1)
  // taps in memory order (a reversed row's tap k is memory element la - 1 - k)
  const int na =
      Rev ? lane_long_need<T>(c.la - k1, c.la - k0, c.la) : lane_long_need<T>(k0, k1, c.la);
  // the window reads X positions [j0 + k0, j0 + k1 + R) relative to lead
  const int nx = lane_long_need<T>(j0 + k0 - c.lead, j0 + k1 + R - c.lead, c.lx);
  (void)s;
  return na > nx ? na : nx;
}

/// @return block i of warp w's list (blocks w, 2W - 1 - w, 3W - 1 - w, 3W + w
///         of every 4W in turn; may be >= nblk)
__device__ __forceinline__ int lane_long_own(int w, int i) {
  constexpr int W = lane_long_tuning::W;
  const int q = i / 4, r = i % 4;
  const int local = r == 0 ? w : r == 1 ? 2 * W - 1 - w : r == 2 ? 3 * W - 1 - w : 3 * W + w;
  return 4 * W * q + local;
}

/// The kernel: block k computes groups k, k + gridDim.x, ... (one buffer:
/// a block barrier before each restaging); warp w its lane blocks in order
/// of the chunks they need.
template <class T, bool Rev>
__global__ void __launch_bounds__(lane_long_tuning::threads, 1)
    kernel_banded_lane_long(const correlation_view<T> c) {
  using C = lane_tuning;
  using L = lane_long_tuning;
  constexpr int R = C::R, K = L::K;
  extern __shared__ __align__(16) unsigned char lane_smem[];
  auto* const bar = reinterpret_cast<std::uint64_t*>(lane_smem);
  T* const buf = reinterpret_cast<T*>(lane_smem + L::head);
  lane_bulk_shape s = lane_bulk_shape_of(c);
  s.quads = false;  // lane_bulk_block writes element by element into the warp's slab
  const int len = s.buffer();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* const wslab = buf + len + warp * (32 * L::po);
  if (blockIdx.x >= s.groups) return;
  {
    // the rows' zero padding, once: stages copy only the operands' values
    auto* z = reinterpret_cast<uint4*>(buf);
    const int n16 = static_cast<int>(len * sizeof(T) / 16);
    for (int i = threadIdx.x; i < n16; i += L::threads) z[i] = make_uint4(0, 0, 0, 0);
  }
  if (threadIdx.x == 0) {
    for (int i = 0; i < K; ++i) lane_bar_init_count(bar + i, L::threads);
  }
  // the warp's blocks in order of the chunks they need (shape only: before
  // the wait): byte m of `ord` is the m-th block, nibble m of `nds` its
  // chunk + 1 (0: outside the band); unrolled, so nothing is indexed at run
  // time (no local memory)
  std::uint64_t ord = 0;
  std::uint32_t nds = 0;
  int n = 0;
  {
    int own[L::max_own], need[L::max_own];
#pragma unroll
    for (int i = 0; i < L::max_own; ++i) {
      own[i] = lane_long_own(warp, i);
      need[i] = own[i] < s.nblk ? lane_long_block_need<T, Rev>(c, s, s.js + R * own[i]) : K;
    }
    unsigned used = 0;
#pragma unroll
    for (int m = 0; m < L::max_own; ++m) {
      int bi = -1, bb = 0, bn = K;
#pragma unroll
      for (int i = 0; i < L::max_own; ++i) {
        const bool ok = own[i] < s.nblk && !(used >> i & 1u) && (bi < 0 || need[i] < bn);
        bi = ok ? i : bi, bb = ok ? own[i] : bb, bn = ok ? need[i] : bn;
      }
      if (bi >= 0) {
        used |= 1u << bi;
        ord |= static_cast<std::uint64_t>(bb) << (8 * m);
        nds |= static_cast<std::uint32_t>(bn + 1) << (4 * m);
        ++n;
      }
    }
  }
  await_previous_kernel();
  __syncthreads();  // zeros written, barriers initialized
  const T* const ta = buf + (c.a_batch == 0 ? 0 : lane * s.pa);
  const T* const tx = buf + C::P * s.pa + (c.x_batch == 0 ? 0 : lane * s.px);
  unsigned parity = 0;
  for (std::int64_t g = blockIdx.x; g < s.groups; g += gridDim.x, parity ^= 1) {
    if (g != blockIdx.x) __syncthreads();  // every warp is done with the buffer
    lane_long_stage(c, s, g, buf, bar);
    const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
    for (int m = 0; m < n; ++m) {
      const int j0 = s.js + R * static_cast<int>(ord >> (8 * m) & 0xFF);
      const int nd = static_cast<int>(nds >> (4 * m) & 0xF) - 1;
      if (nd >= 0) lane_bar_wait(bar + nd, parity);
      lane_bulk_block<T, Rev, false>(c, s, ta, tx, wslab + lane * L::po - j0, j0);
      __syncwarp();
      // lanes 0-15 store problem 2i, 16-31 problem 2i + 1: outputs j0 .. j0 + 15
      const int half = lane >> 4, r = lane & 15, j = j0 + r;
      if (j >= 0 && j < c.lout) {
        T* o = c.out + (g * C::P + half) * c.out_batch + std::int64_t{j} * c.out_step;
        const T* v = wslab + half * L::po + r;
        const std::int64_t ob = 2 * c.out_batch;
#pragma unroll 4
        for (int i = 0; i < 16; ++i, o += ob, v += 2 * L::po)
          if (2 * i + half < live) *o = *v;
      }
      __syncwarp();  // the slab is read before the next block writes it
    }
  }
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
