// Lane per problem with mbarrier-counted staging and bulk output stores
// (sm_90 mbarriers and bulk copies): the per-lane compute of
// kernels/lane.cuh (R = 16 outputs per lane block, steps of 4 taps), but
// - cp.async copies by all threads, their completion counted on the stage's
//   mbarrier (a shared operand, batch stride 0, copied once and read by
//   broadcast): 16-byte copies for an operand whose rows are contiguous,
//   16-byte aligned runs of a multiple of 16 bytes; a gradient's x rows
//   (2n - 1 values, back to back) as one 16-byte run per group, read in
//   place by scalar loads; element copies for any other layout; x_0 sits at a 16-byte
//   aligned row offset because the output blocks start at js + R b with js
//   congruent to lead mod G (outputs before 0 are computed and dropped);
//   reversed taps (a convolution) are copied forward and each quad is
//   reversed in registers;
// - a block owns several groups (two for 16384 x 64) and two stages; the
//   first two groups are staged at once, then a copy warp refills a stage
//   when its group is computed and stores each group's output slab with one
//   bulk store (outputs contiguous) while the compute warps go on with the
//   next group (one store per row when the output rows are 16-byte runs
//   but the slab is padded): the compute warps never wait for each other,
//   only for their data (full), the copy warp for them (done), they for the
//   slab's store (free).
// Not installed.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "lane.cuh"

namespace marg::detail::cuda {

/// Warps of the bulk lane kernel: 8 compute warps (one output block of R
/// each for a 64 x 64 convolution; 4 warps with a block barrier per group
/// are slower) and one copy warp.
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
  int po;      ///< output slab pitch (odd; quads: lout or an odd number of 16-byte units)
  int groups;  ///< groups of P problems
  bool vec_a;  ///< taps rows copied in 16-byte units (else element by element)
  bool vec_x;  ///< x rows copied in 16-byte units (else element by element)
  bool run_x;  ///< x rows of a group copied as one run, read in place (see lane_bulk_shape_of)
  bool quads;  ///< slab written in 16-byte quads (js = 0, lout a multiple of G)
  bool rot;    ///< quads in an order rotated by lane (an even number of units per row)
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

/// The bulk layout of `c`.
template <class T>
__host__ __device__ lane_bulk_shape lane_bulk_shape_of(const correlation_view<T>& c) {
  using C = lane_tuning;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
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
  // quads: 16-byte slab writes; pitch lout when the outputs can leave by one
  // bulk store per group (rows 16-byte runs back to back; rotated quads then
  // keep 16-byte writes of lanes p and p + 4 apart: 2-way bank conflicts at
  // lout = 64 instead of 8), else an odd number of 16-byte units
  s.quads = s.js == 0 && c.lout % C::G == 0;
  const bool packed = c.out_step == 1 && c.out_batch == c.lout && aligned16(c.out) &&
                      (std::int64_t{C::P} * c.lout * sizeof(T)) % 16 == 0;
  s.po = !s.quads ? c.lout | 1 : packed && c.lout % V == 0 ? c.lout : lane_pitch<T>(c.lout);
  s.rot = s.quads && s.po / V % 2 == 0;
  s.groups = (c.batch + C::P - 1) / C::P;
  s.vec_a = (c.a_step == 1 || c.a_step == -1) && c.la % V == 0 && c.a_batch % V == 0 &&
            aligned16(taps_row(c));
  s.vec_x = c.x_step == 1 && c.lx % V == 0 && c.x_batch % V == 0 && aligned16(c.x);
  // a gradient's x rows (2n - 1 values, back to back) are not 16-byte runs,
  // but a group's P rows are one aligned run: copied by 16-byte units and
  // read in place at row offset lx p with scalar loads (odd lx: conflict-free)
  // instead of element copies. No zero padding is needed when lead = 0, the
  // taps fill whole steps and every output below lout meets x inside its own
  // row (outputs past lout, dropped, read the next row); the last read of
  // row P - 1 stays below P px. X index = x index then (t_base 0).
  s.run_x = !s.vec_x && c.x_step == 1 && c.x_batch == c.lx && c.lx % 2 == 1 && c.lead == 0 &&
            c.a_step > 0 && c.la % C::G == 0 && c.lx >= c.lout + c.la - 1 && aligned16(c.x) &&
            C::P * c.lx + s.nblk * C::R + s.la4 <= C::P * s.px;
  return s;
}

/// @return the shared-memory address of p (for the async-proxy instructions)
__device__ __forceinline__ unsigned lane_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// mbarrier helpers.
__device__ __forceinline__ void lane_bar_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(lane_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void lane_bar_init_count(std::uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(lane_smem_addr(bar)), "r"(count)
               : "memory");
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

/// Starts one cp.async of Bytes bytes from global `from` to shared address d.
template <int Bytes>
__device__ __forceinline__ void lane_cp_async(unsigned d, const void* from) {
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(from) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(d), "l"(from), "n"(Bytes)
                 : "memory");
}

/// Threads t < nt (nt a multiple of 32) copy `rows` rows of `len` elements
/// (element step `step`) from src + p batch to dst + p pitch, one element
/// per cp.async: warp w takes rows w, w + nt / 32, ..., its lanes along the
/// row (pointer steps; a flattened index with a step per copy costs about
/// 33 instructions per copy).
template <class T>
__device__ __forceinline__ void lane_copy_elems(int rows, int len, const T* src, std::int64_t step,
                                                std::int64_t batch, T* dst, int pitch, int t,
                                                int nt) {
  const int lane = t % 32;
  const std::int64_t s32 = 32 * step;
  for (int p = t / 32; p < rows; p += nt / 32) {
    const T* from = src + p * batch + lane * step;
    unsigned d = lane_smem_addr(dst + p * pitch + lane);
#pragma unroll 4
    for (int k = lane; k < len; k += 32, from += s32, d += 32 * sizeof(T))
      lane_cp_async<static_cast<int>(sizeof(T))>(d, from);
  }
}

/// Thread t of nt issues the 16-byte cp.async copies t, t + nt, ... of
/// `rows` rows of `units` 16-byte units each, row p from src + p batch to
/// dst + p pitch (contiguous, aligned runs); one division at the start,
/// then pointer steps.
template <class T>
__device__ __forceinline__ void lane_copy_vec(int rows, int units, const T* src, std::int64_t batch,
                                              T* dst, int pitch, int t, int nt) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  // unit e = p units + k, stepped by nt = dp units + dk
  const int dp = nt / units, dk = nt - dp * units;
  int p = t / units, k = t - p * units;
  if (p >= rows) return;
  const T* from = src + p * batch + k * V;
  unsigned d = lane_smem_addr(dst + p * pitch + k * V);
  const std::int64_t step = dp * batch + dk * V, wrap = batch - units * V;
  const unsigned dstep = (dp * pitch + dk * V) * sizeof(T), dwrap = (pitch - units * V) * sizeof(T);
  for (;;) {
    lane_cp_async<16>(d, from);
    p += dp, k += dk, from += step, d += dstep;
    if (k >= units) k -= units, ++p, from += wrap, d += dwrap;
    if (p >= rows) break;
  }
}

/// Threads t < nt copy n contiguous elements from src (16-byte aligned) to
/// dst: 16-byte units, then the last n % V elements one by one.
template <class T>
__device__ __forceinline__ void lane_copy_run(int n, const T* src, T* dst, int t, int nt) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  if (n >= V) lane_copy_vec(1, n / V, src, 0, dst, 0, t, nt);
  for (int e = n / V * V + t; e < n; e += nt)
    lane_cp_async<static_cast<int>(sizeof(T))>(lane_smem_addr(dst + e), src + e);
}

/// Copies `rows` operand rows of `len` elements (element step `step`) into
/// shared rows of pitch `pitch`: 16-byte units when `vec`, else elements.
template <class T>
__device__ __forceinline__ void lane_copy_rows(bool vec, int rows, int len, const T* src,
                                               std::int64_t step, std::int64_t batch, T* dst,
                                               int pitch, int t, int nt) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  if (vec)
    lane_copy_vec(rows, len / V, src, batch, dst, pitch, t, nt);
  else
    lane_copy_elems(rows, len, src, step, batch, dst, pitch, t, nt);
}

/// Threads t < nt of the block issue the cp.async copies of group g's rows
/// into `buf` (nothing for problems past the batch: their stale
/// rows give results never stored; a shared operand's row once, every lane
/// reads row 0) and an async arrival on `bar` each; one plain arrival after
/// a barrier of theirs completes the phase. (One bulk copy per 256-byte row,
/// issued by one warp, is slower.) Run:
/// x as one run per group (s.run_x).
template <bool Run, class T>
__device__ void lane_vec_stage(const correlation_view<T>& c, const lane_bulk_shape& s,
                               std::int64_t g, T* buf, std::uint64_t* bar, int t, int nt) {
  using C = lane_tuning;
  const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
  const std::int64_t b0 = g * C::P;
  // taps copied forward in memory order (reversed rows read backwards)
  lane_copy_rows(s.vec_a, c.a_batch == 0 ? 1 : live, c.la, taps_row(c) + b0 * c.a_batch,
                 c.a_step < 0 ? -c.a_step : c.a_step, c.a_batch, buf + s.off_a, s.pa, t, nt);
  if constexpr (Run)
    lane_copy_run(live * c.lx, c.x + b0 * c.x_batch, buf + C::P * s.pa, t, nt);
  else
    lane_copy_rows(s.vec_x, c.x_batch == 0 ? 1 : live, c.lx, c.x + b0 * c.x_batch, c.x_step,
                   c.x_batch, buf + C::P * s.pa + (c.lead - s.t_base), s.px, t, nt);
  // one arrival per staging thread once its copies landed (.noinc: the
  // barrier counts the staging threads, see the kernel)
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(lane_smem_addr(bar))
               : "memory");
}

/// One output block of one lane: outputs j0 .. j0 + R - 1 (those inside
/// [0, lout)) of its problem from its taps row `ta` and X row `tx`, written
/// to its slab row `to`. Edge: a block at the band's left edge leaves out
/// the quads that meet only the zero X in front of it (lane_steps' Edge;
/// the other products keep their order, so the results are the same).
template <class T, bool Rev, bool Run, bool Edge = false>
__device__ __forceinline__ void lane_bulk_block(const correlation_view<T>& c,
                                                const lane_bulk_shape& s, const T* ta, const T* tx,
                                                T* to, int j0) {
  using C = lane_tuning;
  constexpr int G = C::G, R = C::R;
  T acc[R];
  int k0 = 0;
  const int ng = lane_tap_range(c, j0, acc, k0);
  if (ng > 0) {
    const T* xw = tx + (j0 + k0 - (Run ? 0 : s.t_base));
    const T* aw = Rev ? ta + (s.la4 - G - k0) : ta + k0;
    if constexpr (Edge && !Run)
      lane_steps<T, Rev, false, true>(xw, aw, ng, acc, (c.lead - j0 - 3 - k0) / G >= 3);
    else
      lane_steps<T, Rev, Run>(xw, aw, ng, acc);
  }
  if (s.quads) {
    // j0 >= 0 (js = 0); lout is a multiple of G
    static_assert(R == 4 * G, "four quads per block");
    const int rq = s.rot ? threadIdx.x & 3 : 0;
#pragma unroll
    for (int i = 0; i < R / G; ++i) {
      const int q = (i + rq) & 3;
      if (j0 + R > c.lout && j0 + G * q >= c.lout) continue;
      T v[G];
#pragma unroll
      for (int e = 0; e < G; ++e)
        v[e] = q == 0 ? acc[e] : q == 1 ? acc[G + e] : q == 2 ? acc[2 * G + e] : acc[3 * G + e];
      lane_put4(to + j0 + G * q, v);
    }
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (j0 + r >= 0 && j0 + r < c.lout) to[j0 + r] = acc[r];
  }
}

/// How a group's outputs leave the slab.
enum class lane_out { elements, slab, rows };

/// How group g's outputs leave: one bulk store of the slab (full group, unit
/// output step, problems back to back, slab pitch = lout, 16-byte aligned),
/// one bulk store per row (rows of unit step that are 16-byte aligned runs,
/// slab rows too), or element stores by the compute warps.
template <class T>
__device__ __forceinline__ lane_out lane_out_of(const correlation_view<T>& c,
                                                const lane_bulk_shape& s, std::int64_t g) {
  using C = lane_tuning;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  if (c.out_step != 1 || !aligned16(c.out)) return lane_out::elements;
  if ((g + 1) * C::P <= c.batch && c.out_batch == c.lout && s.po == c.lout &&
      (std::int64_t{C::P} * c.lout * sizeof(T)) % 16 == 0)
    return lane_out::slab;
  if (c.lout % V == 0 && c.out_batch % V == 0 && s.po % V == 0) return lane_out::rows;
  return lane_out::elements;
}

/// The copy warp's part of group g's output: one bulk store of the slab,
/// or one per row (lane p: row p); when `reused` (a later group of the
/// block writes this slab), waits until the store has read the slab, then
/// frees it (`freed`). Otherwise the caller waits for the stores' reads
/// (lane_bulk_wait_read) before it exits.
template <class T>
__device__ __forceinline__ void lane_store_group(const correlation_view<T>& c,
                                                 const lane_bulk_shape& s, std::int64_t g,
                                                 const T* slab, int lane, std::uint64_t* freed,
                                                 bool reused = true) {
  using C = lane_tuning;
  const lane_out how = lane_out_of(c, s, g);
  if (how == lane_out::slab && lane == 0) {
    lane_bulk_store(c.out + g * C::P * c.lout, slab,
                    static_cast<unsigned>(C::P * c.lout * sizeof(T)));
    if (reused) lane_bulk_wait_read<0>();
  } else if (how == lane_out::rows && g * C::P + lane < c.batch) {
    // lane p stores row p
    lane_bulk_store(c.out + (g * C::P + lane) * c.out_batch, slab + lane * s.po,
                    static_cast<unsigned>(c.lout * sizeof(T)));
    if (reused) lane_bulk_wait_read<0>();
  }
  __syncwarp();
  if (reused && lane == 0) lane_bar_arrive(freed);
}

/// The compute warps' end of group g: element stores from the slab where
/// no bulk store fits (a part-full group, strided outputs), after a barrier
/// of theirs (the next writes of this slab come after the next group's
/// barrier), then one arrival per warp on `done`.
template <class T>
__device__ __forceinline__ void lane_finish_group(const correlation_view<T>& c,
                                                  const lane_bulk_shape& s, std::int64_t g,
                                                  const T* slab, int lane, std::uint64_t* done,
                                                  int team = 0) {
  using C = lane_tuning;
  constexpr int W = lane_bulk_tuning::W;
  if (lane_out_of(c, s, g) == lane_out::elements) {
    // the team's W warps (named barrier 1 + team)
    asm volatile("bar.sync %0, %1;\n" ::"r"(1 + team), "n"(W * 32) : "memory");
    const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
    for (int e = static_cast<int>(threadIdx.x) - team * W * 32; e < live * c.lout; e += W * 32) {
      const int p = e / c.lout, j = e - p * c.lout;
      c.out[(g * C::P + p) * c.out_batch + j * c.out_step] = slab[p * s.po + j];
    }
  }
  lane_fence_async();
  __syncwarp();
  if (lane == 0) lane_bar_arrive(done);
}

/// The kernel: block blk computes groups blk, blk + gridDim.x, ... through
/// two stages (staging buffer and output slab), with W compute warps and one
/// copy warp (the last). All threads stage the first two groups (full[st]:
/// copies landed); the copy warp waits for the compute warps of a group
/// (done[st]: W arrivals), refills the stage, stores the slab and, once the
/// store has read it, frees it (free[st]).
/// Compute warps never wait for each other: warp w takes output block w of
/// even groups and W - 1 - w of odd ones (every warp does the same work over
/// two groups of a full convolution). Run: s.run_x (x read in place, scalar
/// loads; a separate instance leaves the other shapes' code generation
/// untouched).
/// Float: a hint of 2 blocks per SM (the most its shared memory allows at
/// 16384 x 64) lets ptxas use 79-84 registers instead of 72 with 36-40
/// bytes of spills, which is faster.
template <class T, bool Rev, bool Run>
__global__ void __launch_bounds__(lane_bulk_tuning::threads, sizeof(T) == 4 ? 2 : 1)
    kernel_banded_lane_bulk(const correlation_view<T> c) {
#if MARG_CUDA_HOPPER_CODE
  using C = lane_tuning;
  constexpr int W = lane_bulk_tuning::W, threads = lane_bulk_tuning::threads;
  constexpr int S = 2;
  extern __shared__ __align__(16) unsigned char lane_smem[];
  // first[st]: the first S groups, staged by all threads; full[st]: refills
  // by the copy warp. Each counts its staging threads' async arrivals
  // (.noinc), so the phase completes when every copy has landed.
  auto* const full = reinterpret_cast<std::uint64_t*>(lane_smem);
  std::uint64_t* const done = full + S;
  std::uint64_t* const freed = full + 2 * S;
  std::uint64_t* const first = full + 3 * S;
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
      lane_bar_init_count(full + i, 32);
      lane_bar_init_count(done + i, W);
      lane_bar_init(freed + i);
      lane_bar_init_count(first + i, threads);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  lane_fence_async();
  await_previous_kernel();
  __syncthreads();
  // all threads stage the first two groups
  for (int i = 0; i < S && i < n_local; ++i)
    lane_vec_stage<Run>(c, s, g0 + i * std::int64_t{gridDim.x}, stages + i * len, first + i,
                        threadIdx.x, threads);
  if (warp == W) {
    for (int i = 0; i < n_local; ++i) {
      const std::int64_t g = g0 + i * std::int64_t{gridDim.x};
      const int st = i % S;
      const unsigned ph = static_cast<unsigned>((i / S) & 1);
      lane_bar_wait(done + st, ph);  // stage st read, slab st written
      if (i + S < n_local) {
        lane_vec_stage<Run>(c, s, g + S * std::int64_t{gridDim.x}, stages + st * len, full + st,
                            lane, 32);
      }
      lane_store_group(c, s, g, slabs + st * (C::P * s.po), lane, freed + st);
    }
    return;
  }
  for (int i = 0; i < n_local; ++i) {
    const int st = i % S;
    T* const to = slabs + st * (C::P * s.po) + lane * s.po;
    if (i < S)
      lane_bar_wait(first + st, 0);
    else
      lane_bar_wait(full + st, static_cast<unsigned>((i / S - 1) & 1));
    // the slab's store S groups back has read it
    if (i >= S) lane_bar_wait(freed + st, static_cast<unsigned>((i / S - 1) & 1));
    const T* ta = stages + st * len + (c.a_batch == 0 ? 0 : lane * s.pa);
    const T* tx = stages + st * len + C::P * s.pa +
                  (Run              ? lane * c.lx
                   : c.x_batch == 0 ? 0
                                    : lane * s.px);
    for (int blk = (i & 1) ? W - 1 - warp : warp; blk < s.nblk; blk += W)
      lane_bulk_block<T, Rev, Run>(c, s, ta, tx, to, s.js + blk * C::R);
    lane_finish_group(c, s, g0 + i * std::int64_t{gridDim.x}, slabs + st * (C::P * s.po), lane,
                      done + st);
  }
#else
  __trap();  // needs sm_90: the dispatch runs it only there
#endif
}

/// Tensor-copy staging of the bulk lane kernel (kernel_banded_lane_tma):
/// which copies stage a group, fixed on the host.
struct lane_tma_plan {
  int coord_a;     ///< first tap column of a taps box (-off_a: zeros in front)
  int coord_x;     ///< first x column of an X box (0); Run: P lx, a group's run
  int nbox;        ///< Run: 1-d boxes of box_run elements per group's x run
  unsigned bytes;  ///< bytes a group's copies deliver (the stage's transaction count)
  int shift;  ///< X row offset the X box is written from (its zero tail fills the next row's front)
  int len;    ///< elements of one stage (the X box's tail past the last row included)
  /// a block's first copies: groups 1, 2, ... once group 0's landed (else
  /// all at once; other orders are slower, see docs/kernel-notes.md)
  bool stagger;
};

/// 1-d box of a group's x run (elements; a tensor box dimension is at most 256).
inline constexpr int lane_box_run = 256;

/// Bytes in front of kernel_banded_lane_tma's stages: its 3 S barriers,
/// rounded up so that tensor copies land 128-byte aligned.
/// @param stages S
/// @return the offset of the stages in dynamic shared memory
__host__ __device__ constexpr int lane_tma_head(int stages) {
  return (24 * stages + 127) / 128 * 128;
}

/// Starts a tensor copy of the 2-d box at (x0, x1) of `map` into shared dst,
/// counted on `bar` (bytes of the whole box, zero-filled parts included).
__device__ __forceinline__ void lane_tma_2d(void* dst, const CUtensorMap* map, int x0, int x1,
                                            std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(lane_smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x0), "r"(x1), "r"(lane_smem_addr(bar))
      : "memory");
}

/// Starts a tensor copy of the 1-d box at x0 of `map` into shared dst.
__device__ __forceinline__ void lane_tma_1d(void* dst, const CUtensorMap* map, int x0,
                                            std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2}], [%3];\n" ::"r"(lane_smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x0), "r"(lane_smem_addr(bar))
      : "memory");
}

/// Arrives on `bar` expecting `bytes` more of transactions this phase.
__device__ __forceinline__ void lane_bar_expect(std::uint64_t* bar, unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(lane_smem_addr(bar)),
      "r"(bytes)
      : "memory");
}

/// Issues the tensor copies of group g into `buf` (one thread): the taps
/// box (P rows of pa, zeros around the taps and past the batch) and the X
/// box (P rows of px) or, Run, the group's x run in 1-d boxes.
template <bool Run, class T>
__device__ __forceinline__ void lane_tma_stage(const lane_bulk_shape& s, const lane_tma_plan& pl,
                                               const CUtensorMap* ma, const CUtensorMap* mx,
                                               std::int64_t g, T* buf, std::uint64_t* bar) {
  using C = lane_tuning;
  lane_bar_expect(bar, pl.bytes);
  lane_tma_2d(buf, ma, pl.coord_a, static_cast<int>(g * C::P), bar);
  T* const xr = buf + C::P * s.pa;
  if constexpr (Run) {
    const int e0 = static_cast<int>(g) * pl.coord_x;  // the group's run: P lx elements
    for (int k = 0; k < pl.nbox; ++k)
      lane_tma_1d(xr + k * lane_box_run, mx, e0 + k * lane_box_run, bar);
  } else {
    lane_tma_2d(xr + pl.shift, mx, pl.coord_x, static_cast<int>(g * C::P), bar);
  }
}

/// The bulk lane kernel with tensor-copy staging (TMA): as
/// kernel_banded_lane_bulk, but the copy warp's first lane stages every
/// group with two tensor copies (Run: the taps box and the x run's 1-d
/// boxes), their zero padding filled by the copies themselves (no zeroing,
/// no per-thread copy loops: those and the shape's set-up by every warp are
/// a large share of the forward's instructions), and the shape comes
/// from the host. full[st] counts the copies' bytes. The X box starts at x
/// column 0 and is written from row offset pl.shift (a 128-byte aligned
/// destination): its zero tail fills the next row's front, row 0's front is
/// zeroed once (a box from column t_base - lead with zeros in front is
/// slower back to back). Taken for 16-byte aligned operand rows
/// (launch_lane_tma).
/// Teams: teams of W compute warps, team h computing the block's groups h,
/// h + Teams, ... (Teams = 2, S = 4: one block per SM with up to 4 groups
/// staged in the order pl.stagger gives, instead of 2 blocks of 2 groups
/// each: faster for a gradient's run path and for 2 groups per SM,
/// slower for a forward of 4 groups per SM, see launch_lane_tma); S: stages
/// (a block of at most S groups never refills one).
template <class T, bool Rev, bool Run, int Teams = 1, int S = 2>
__global__ void __launch_bounds__(32 * lane_bulk_tuning::W * Teams + 32,
                                  sizeof(T) == 4 && Teams == 1 ? 2 : 1)
    kernel_banded_lane_tma(const correlation_view<T> c, const lane_bulk_shape s,
                           const lane_tma_plan pl, const __grid_constant__ CUtensorMap ma,
                           const __grid_constant__ CUtensorMap mx) {
#if MARG_CUDA_HOPPER_CODE
  using C = lane_tuning;
  constexpr int W = lane_bulk_tuning::W;
  static_assert(S % Teams == 0, "a stage belongs to one team");
  extern __shared__ __align__(128) unsigned char lane_smem[];
  auto* const full = reinterpret_cast<std::uint64_t*>(lane_smem);
  std::uint64_t* const done = full + S;
  std::uint64_t* const freed = full + 2 * S;
  constexpr int head = lane_tma_head(S);
  T* const stages = reinterpret_cast<T*>(lane_smem + head);
  const std::int64_t g0 = blockIdx.x;
  if (g0 >= s.groups) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int len = pl.len;
  T* const slabs = stages + S * len;
  const int n_local = static_cast<int>((s.groups - 1 - g0) / gridDim.x + 1);
  // the front of X row 0, which no box covers
  if (threadIdx.x < S * pl.shift)
    stages[threadIdx.x / pl.shift * len + C::P * s.pa + threadIdx.x % pl.shift] = T(0);
  if (threadIdx.x == 0) {
    for (int i = 0; i < S; ++i) {
      lane_bar_init(full + i);
      lane_bar_init_count(done + i, W);
      lane_bar_init(freed + i);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if (threadIdx.x == 32 * W * Teams) {
    // the descriptors' fetch overlaps the previous kernel's tail
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&ma))
                 : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&mx))
                 : "memory");
  }
  await_previous_kernel();
  __syncthreads();
  if (warp == W * Teams) {
    if (lane == 0)
      for (int i = 0; i < S && i < n_local; ++i) {
        // group 0 first on the DRAM
        if (pl.stagger && i > 0) lane_bar_wait(full, 0);
        lane_tma_stage<Run>(s, pl, &ma, &mx, g0 + i * std::int64_t{gridDim.x}, stages + i * len,
                            full + i);
      }
    for (int i = 0; i < n_local; ++i) {
      const std::int64_t g = g0 + i * std::int64_t{gridDim.x};
      const int st = i % S;
      lane_bar_wait(done + st, static_cast<unsigned>((i / S) & 1));  // stage read, slab written
      if (i + S < n_local && lane == 0)
        lane_tma_stage<Run>(s, pl, &ma, &mx, g + S * std::int64_t{gridDim.x}, stages + st * len,
                            full + st);
      // a slab no later group writes is not waited for here, so the next
      // store leaves at once (else a Teams-2 block's single copy warp stores
      // its groups one after another; docs/kernel-notes.md)
      lane_store_group(c, s, g, slabs + st * (C::P * s.po), lane, freed + st, i + S < n_local);
    }
    lane_bulk_wait_read<0>();  // the slabs stay until their stores have read them
    return;
  }
  const int team = warp / W, wt = warp % W;
  for (int i = team; i < n_local; i += Teams) {
    const int st = i % S;
    T* const to = slabs + st * (C::P * s.po) + lane * s.po;
    lane_bar_wait(full + st, static_cast<unsigned>((i / S) & 1));
    if (i >= S) lane_bar_wait(freed + st, static_cast<unsigned>((i / S - 1) & 1));
    const T* ta = stages + st * len + lane * s.pa;
    const T* tx = stages + st * len + C::P * s.pa + (Run ? lane * c.lx : lane * s.px);
    for (int blk = ((i / Teams) & 1) ? W - 1 - wt : wt; blk < s.nblk; blk += W)
      // float: edge quads left out (fewer instructions; double keeps them:
      // the change is benchmarked for float only)
      lane_bulk_block<T, Rev, Run, sizeof(T) == 4>(c, s, ta, tx, to, s.js + blk * C::R);
    lane_finish_group(c, s, g0 + i * std::int64_t{gridDim.x}, slabs + st * (C::P * s.po), lane,
                      done + st, team);
  }
#else
  __trap();  // needs sm_90: the dispatch runs it only there
#endif
}

}  // namespace marg::detail::cuda
