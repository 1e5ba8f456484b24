// Lane per problem with 16-byte staging and a bulk output store (sm_90
// mbarriers and bulk copies), for batches whose operand rows are
// contiguous, 16-byte aligned runs of a multiple of 16 bytes: the per-lane
// compute of kernels/lane.cuh (R = 16 outputs per lane block, steps of 4
// taps), but
// - 16-byte cp.async copies by all threads, their completion counted on the
//   stage's mbarrier (a shared operand, batch stride 0, copied once and read
//   by broadcast); x_0 sits at a 16-byte aligned row offset because the
//   output blocks start at js + R b with js congruent to lead mod G (outputs
//   before 0 are computed and dropped); reversed taps (a convolution) are
//   copied forward and each quad is reversed in registers;
// - a block owns several groups (two for 16384 x 64) and two stages; the
//   first two groups are staged at once, then a copy warp refills a stage
//   when its group is computed and stores each group's output slab with one
//   bulk store (outputs contiguous) while the compute warps go on with the
//   next group: the compute warps never wait for each other, only for their
//   data (full), the copy warp for them (done), they for the slab's store
//   (free).
// Not installed.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "lane.cuh"

namespace marg::detail::cuda {

/// Warps of the bulk lane kernel: 8 compute warps (one output block of R
/// each for a 64 x 64 convolution; 4 measured 12.2 against 11.7 us with a
/// block barrier per group) and one copy warp.
struct lane_bulk_tuning {
  static constexpr int W = 8;                  ///< compute warps per block
  static constexpr int threads = 32 * W + 32;  ///< threads per block (and the copy warp)
};

/// Shared-memory layout of one correlation in the bulk lane kernel.
struct lane_bulk_shape {
  int la4;     ///< taps per row, rounded up to G
  int off_a;   ///< row offset of the first copied tap (reversed taps: la4 - la)
  int pa;      ///< taps row pitch
  int js;      ///< start of output block 0 (in (-G, 0], congruent to lead mod G)
  int t_base;  ///< X index of a window row's element 0 (congruent to lead mod G)
  int px;      ///< X row pitch
  int nblk;    ///< output blocks of R per problem
  int po;      ///< output slab pitch (odd: conflict-free scalar writes)
  int groups;  ///< groups of P problems
  /// @return elements of one staging buffer (taps and X rows of P problems)
  __host__ __device__ int buffer() const { return lane_tuning::P * (pa + px); }
  /// @param stages staging buffers and output slabs (the kernel uses 2)
  /// @return bytes of shared memory the kernel uses (barriers first)
  template <class T>
  __host__ __device__ std::int64_t bytes(int stages) const {
    return 64 + stages * (std::int64_t{buffer()} + std::int64_t{lane_tuning::P} * po) *
                    static_cast<std::int64_t>(sizeof(T));
  }
};

/// The bulk layout of `c` (valid when lane_bulk_ok(c)).
template <class T>
__host__ __device__ lane_bulk_shape lane_bulk_shape_of(const correlation_view<T>& c) {
  using C = lane_tuning;
  lane_bulk_shape s{};
  s.la4 = (c.la + C::G - 1) / C::G * C::G;
  s.off_a = c.a_step < 0 ? s.la4 - c.la : 0;
  s.pa = lane_pitch<T>(s.la4);
  const int d = c.lead % C::G;
  s.js = d == 0 ? 0 : d - C::G;
  // a block at j0 reads X from j0 + G floor(klo / G) >= lead - R - 2 up to
  // j0 + G floor(khi / G) + R + 3 <= lead + lx + R + 2 (klo, khi: its taps)
  s.t_base = c.lead - (C::R + 2 + C::G - 1) / C::G * C::G;
  const int xlen = (c.lead + c.lx + C::R + 3 - s.t_base + C::G - 1) / C::G * C::G;
  s.px = lane_pitch<T>(xlen);
  s.nblk = (c.lout - s.js + C::R - 1) / C::R;
  s.po = c.lout | 1;
  s.groups = (c.batch + C::P - 1) / C::P;
  return s;
}

/// Whether every operand row of `c` is one contiguous, 16-byte aligned run
/// of a multiple of 16 bytes (the bulk kernel's copies).
/// @param c the correlation
/// @return true when the bulk lane kernel may stage `c`
template <class T>
bool lane_bulk_ok(const correlation_view<T>& c) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const auto aligned = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (c.a_step != 1 && c.a_step != -1) return false;
  const T* a_row = c.a_step < 0 ? c.a - (c.la - 1) : c.a;
  return c.la % V == 0 && c.a_batch % V == 0 && aligned(a_row) && c.x_step == 1 && c.lx % V == 0 &&
         c.x_batch % V == 0 && aligned(c.x) && c.lx > 0;
}

/// @return the shared-memory address of p (for the async-proxy instructions)
__device__ __forceinline__ unsigned lane_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// mbarrier helpers.
__device__ __forceinline__ void lane_bar_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(lane_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void lane_bar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(lane_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void lane_bar_wait(std::uint64_t* bar, unsigned parity) {
  const unsigned a = lane_smem_addr(bar);
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!done);
}

/// Bulk store of `bytes` from shared src to global dst, committed as one group.
__device__ __forceinline__ void lane_bulk_store(void* dst, const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
               "r"(lane_smem_addr(src)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// Waits until at most N bulk store groups still read shared memory.
template <int N>
__device__ __forceinline__ void lane_bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

/// Orders this thread's generic shared-memory accesses before later
/// async-proxy ones (the bulk stores from shared memory).
__device__ __forceinline__ void lane_fence_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Thread t of nt issues the 16-byte copies t, t + nt, ... of `rows` rows
/// of `chunks` units each, row p from src + p batch to dst + p pitch.
template <class T>
__device__ __forceinline__ void lane_vec_rows(int rows, int chunks, const T* src,
                                              std::int64_t batch, T* dst, int pitch, int t,
                                              int nt) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  // chunk e = p chunks + k, stepped by nt without a division per copy
  const int dp = nt / chunks, dk = nt - dp * chunks;
  int p = t / chunks, k = t - p * chunks;
  for (; p < rows; p += dp, k += dk) {
    if (k >= chunks) k -= chunks, ++p;
    if (p >= rows) break;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                     lane_smem_addr(dst + p * pitch + k * V)),
                 "l"(src + p * batch + k * V)
                 : "memory");
  }
}

/// Threads t < nt of the block issue the 16-byte cp.async copies of group
/// g's rows into `buf` (nothing for problems past the batch: their stale
/// rows give results never stored; a shared operand's row once, every lane
/// reads row 0) and an async arrival on `bar` each; one plain arrival after
/// a barrier of theirs completes the phase. (One bulk copy per 256-byte row,
/// issued by one warp, measured 10.4 against 8.9 us for 16384x64.)
template <class T>
__device__ void lane_vec_stage(const correlation_view<T>& c, const lane_bulk_shape& s,
                               std::int64_t g, T* buf, std::uint64_t* bar, int t, int nt) {
  using C = lane_tuning;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
  const std::int64_t b0 = g * C::P;
  const T* a0 = (c.a_step < 0 ? c.a - (c.la - 1) : c.a) + b0 * c.a_batch;
  lane_vec_rows(c.a_batch == 0 ? 1 : live, c.la / V, a0, c.a_batch, buf + s.off_a, s.pa, t, nt);
  lane_vec_rows(c.x_batch == 0 ? 1 : live, c.lx / V, c.x + b0 * c.x_batch, c.x_batch,
                buf + C::P * s.pa + (c.lead - s.t_base), s.px, t, nt);
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" ::"r"(lane_smem_addr(bar))
               : "memory");
}

/// One output block of one lane: outputs j0 .. j0 + R - 1 (those inside
/// [0, lout)) of its problem from its taps row `ta` and X row `tx`, written
/// to its slab row `to`.
template <class T, bool Rev>
__device__ __forceinline__ void lane_bulk_block(const correlation_view<T>& c,
                                                const lane_bulk_shape& s, const T* ta, const T* tx,
                                                T* to, int j0) {
  using C = lane_tuning;
  constexpr int G = C::G, R = C::R;
  T acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = T(0);
  const int klo = max(0, c.lead - (j0 + R - 1));
  const int khi = min(c.la - 1, c.lead + c.lx - 1 - j0);
  if (klo <= khi)
    lane_steps<T, Rev>(tx + (j0 + klo / G * G - s.t_base),
                       Rev ? ta + (s.la4 - G - klo / G * G) : ta + klo / G * G,
                       khi / G + 1 - klo / G, acc);
  if (j0 >= 0 && j0 + R <= c.lout) {
#pragma unroll
    for (int r = 0; r < R; ++r) to[j0 + r] = acc[r];
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (j0 + r >= 0 && j0 + r < c.lout) to[j0 + r] = acc[r];
  }
}

/// Whether group g's outputs leave by one bulk store: full group, unit output
/// step, problems back to back, slab pitch = lout, 16-byte aligned.
template <class T>
__device__ __forceinline__ bool lane_bulk_out(const correlation_view<T>& c,
                                              const lane_bulk_shape& s, std::int64_t g) {
  using C = lane_tuning;
  return (g + 1) * C::P <= c.batch && c.out_step == 1 && c.out_batch == c.lout && s.po == c.lout &&
         reinterpret_cast<std::uintptr_t>(c.out) % 16 == 0 &&
         (std::int64_t{C::P} * c.lout * sizeof(T)) % 16 == 0;
}

/// The kernel: block blk computes groups blk, blk + gridDim.x, ... through
/// two stages (staging buffer and output slab), with W compute warps and one
/// copy warp (the last). All threads stage the first two groups (full[st]:
/// copies landed); the copy warp waits for the compute warps of a group
/// (done[st]: W arrivals), refills the stage, stores the slab and, once the
/// store has read it, frees it (free[st]).
/// Compute warps never wait for each other: warp w takes output block w of
/// even groups and W - 1 - w of odd ones (every warp does the same work over
/// two groups of a full convolution).
template <class T, bool Rev>
__global__ void __launch_bounds__(lane_bulk_tuning::threads)
    kernel_banded_lane_bulk(const correlation_view<T> c) {
  using C = lane_tuning;
  constexpr int W = lane_bulk_tuning::W, threads = lane_bulk_tuning::threads;
  constexpr int S = 2;
  extern __shared__ __align__(16) unsigned char lane_smem[];
  auto* const full = reinterpret_cast<std::uint64_t*>(lane_smem);
  std::uint64_t* const done = full + S;
  std::uint64_t* const freed = full + 2 * S;
  T* const stages = reinterpret_cast<T*>(lane_smem + 64);
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  const std::int64_t g0 = blockIdx.x;
  if (g0 >= s.groups) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int len = s.buffer();
  T* const slabs = stages + S * len;
  const int n_local = static_cast<int>((s.groups - 1 - g0) / gridDim.x + 1);
  {
    auto* z = reinterpret_cast<uint4*>(stages);
    const int n16 = static_cast<int>(S * len * sizeof(T) / 16);
    for (int i = threadIdx.x; i < n16; i += threads) z[i] = make_uint4(0, 0, 0, 0);
  }
  if (threadIdx.x == 0) {
    for (int i = 0; i < S; ++i) {
      lane_bar_init(full + i);
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(lane_smem_addr(done + i)),
                   "r"(W)
                   : "memory");
      lane_bar_init(freed + i);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  lane_fence_async();
  await_previous_kernel();
  __syncthreads();
  // all threads stage the first two groups
  for (int i = 0; i < S && i < n_local; ++i)
    lane_vec_stage(c, s, g0 + i * std::int64_t{gridDim.x}, stages + i * len, full + i, threadIdx.x,
                   threads);
  __syncthreads();
  if (threadIdx.x == 0)
    for (int i = 0; i < S && i < n_local; ++i) lane_bar_arrive(full + i);
  if (warp == W) {
    for (int i = 0; i < n_local; ++i) {
      const std::int64_t g = g0 + i * std::int64_t{gridDim.x};
      const int st = i % S;
      const unsigned ph = static_cast<unsigned>((i / S) & 1);
      lane_bar_wait(done + st, ph);  // stage st read, slab st written
      if (i + S < n_local) {
        lane_vec_stage(c, s, g + S * std::int64_t{gridDim.x}, stages + st * len, full + st, lane,
                       32);
        __syncwarp();
        if (lane == 0) lane_bar_arrive(full + st);
      }
      if (lane == 0 && lane_bulk_out(c, s, g)) {
        lane_bulk_store(c.out + g * C::P * c.lout, slabs + st * (C::P * s.po),
                        static_cast<unsigned>(C::P * c.lout * sizeof(T)));
        lane_bulk_wait_read<0>();
      }
      if (lane == 0) lane_bar_arrive(freed + st);
    }
    return;
  }
  for (int i = 0; i < n_local; ++i) {
    const int st = i % S;
    const unsigned ph = static_cast<unsigned>((i / S) & 1);
    T* const to = slabs + st * (C::P * s.po) + lane * s.po;
    lane_bar_wait(full + st, ph);
    // the slab's store S groups back has read it
    if (i >= S) lane_bar_wait(freed + st, static_cast<unsigned>((i / S - 1) & 1));
    const T* ta = stages + st * len + (c.a_batch == 0 ? 0 : lane * s.pa);
    const T* tx = stages + st * len + C::P * s.pa + (c.x_batch == 0 ? 0 : lane * s.px);
    for (int blk = (i & 1) ? W - 1 - warp : warp; blk < s.nblk; blk += W)
      lane_bulk_block<T, Rev>(c, s, ta, tx, to, s.js + blk * C::R);
    const std::int64_t g = g0 + i * std::int64_t{gridDim.x};
    if (!lane_bulk_out(c, s, g)) {
      // element stores by the compute warps (a part-full group, strided
      // outputs) after a barrier of theirs; the next writes of this slab
      // come after the next group's barrier
      asm volatile("bar.sync 1, %0;\n" ::"n"(W * 32) : "memory");
      const T* slab = slabs + st * (C::P * s.po);
      const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
      for (int e = threadIdx.x; e < live * c.lout; e += W * 32) {
        const int p = e / c.lout, j = e - p * c.lout;
        c.out[(g * C::P + p) * c.out_batch + j * c.out_step] = slab[p * s.po + j];
      }
    }
    lane_fence_async();
    __syncwarp();
    if (lane == 0) lane_bar_arrive(done + st);
  }
}

}  // namespace marg::detail::cuda
