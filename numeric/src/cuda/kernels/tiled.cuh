// Register-blocked direct correlation over a 2D tiling of the band.
//
// A block owns TJ consecutive outputs (its tile) and walks the taps that meet
// the tile inside the band, KC taps per stage. Each stage stages KC taps and
// the TJ + KC values of X they touch into shared memory (gathering strided
// and reversed operands, zero outside the band), prefetching the next stage
// into registers meanwhile. Warps are WJ (outputs) x WK (taps); a lane owns R
// consecutive outputs and, per chunk of K taps, reads its R + K window of X
// with 16-byte loads from a padded layout that keeps every quarter-warp on
// distinct banks, then does R*K FMAs from registers (taps are warp-wide
// broadcasts). Partial sums over the WK tap warps are reduced in shared
// memory; when the taps of a tile are split over CK blocks (a cluster along
// y), the partial tiles are summed through distributed shared memory in a
// fixed order: no atomics, deterministic. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cluster.cuh"
#include "correlation.cuh"

namespace marg::detail::cuda {

/// Tile sizes of one variant of the tiled kernel.
/// @tparam T element type
/// @tparam R_ consecutive outputs per lane
/// @tparam K_ taps per register chunk
/// @tparam WJ_ warps along the outputs
/// @tparam WK_ warps along the taps
/// @tparam KC_ taps per shared-memory stage
/// @tparam MinBlocks_ blocks per multiprocessor asked of the register allocator
template <class T, int R_, int K_, int WJ_, int WK_, int KC_, int MinBlocks_>
struct tiled_tuning {
  static constexpr int R = R_, K = K_, WJ = WJ_, WK = WK_, KC = KC_, min_blocks = MinBlocks_;
  /// elements per 16-byte shared load
  static constexpr int V = 16 / static_cast<int>(sizeof(T));
  /// outputs per block
  static constexpr int TJ = 32 * R * WJ;
  static constexpr int threads = 32 * WJ * WK;
  /// padding after every R elements: makes a lane's row stride an odd number
  /// of 16-byte units, so 8 lanes of a 16-byte load hit 8 distinct bank groups
  static constexpr int pad = (R / V) % 2 == 0 ? V : 0;
  static constexpr int row = R + pad;
  static constexpr int xs_len = (TJ + KC) / R * row;
  static constexpr int red_len = WK * (TJ / R) * row;
  static constexpr int union_len = xs_len > red_len ? xs_len : red_len;
  /// values each thread prefetches per stage
  static constexpr int nx = (TJ + KC + threads - 1) / threads;
  static constexpr int na = (KC + threads - 1) / threads;
  /// taps of one warp's contiguous run per stage
  static constexpr int KW = KC / WK;
  static_assert(R % V == 0 && K % V == 0 && KW % K == 0 && KW % R == 0, "tile shape");
  static_assert(TJ % threads == 0 || threads % 32 == 0, "block shape");
  /// @return the padded shared-memory index of logical element t
  __host__ __device__ static constexpr int phys(int t) { return t + pad * (t / R); }
};

/// float tiles: big problems, mid-size (and mid-size batches), small problems
using tiled_large_f = tiled_tuning<float, 16, 16, 2, 4, 512, 2>;
using tiled_mid_f = tiled_tuning<float, 8, 16, 1, 4, 256, 3>;
using tiled_small_f = tiled_tuning<float, 4, 16, 1, 4, 128, 4>;
/// double tiles (FP64 FMA is half the rate: fewer loads per FMA needed)
using tiled_large_d = tiled_tuning<double, 8, 8, 2, 4, 256, 3>;
using tiled_mid_d = tiled_tuning<double, 8, 8, 1, 4, 128, 3>;
using tiled_small_d = tiled_tuning<double, 4, 8, 1, 4, 64, 4>;

template <class T, int R_, int K_, int KC_, int WB_>
struct warp_tuning;  // kernels/warp.cuh

/// The tunings of one element type, by variant.
template <class T>
struct tiled_tunings;
template <>
struct tiled_tunings<float> {
  using warp = warp_tuning<float, 4, 16, 64, 8>;
  using small = tiled_small_f;
  using mid = tiled_mid_f;
  using large = tiled_large_f;
};
template <>
struct tiled_tunings<double> {
  using warp = warp_tuning<double, 4, 8, 64, 8>;
  using small = tiled_small_d;
  using mid = tiled_mid_d;
  using large = tiled_large_d;
};

template <class T>
struct vec16;
template <>
struct vec16<float> {
  using type = float4;
};
template <>
struct vec16<double> {
  using type = double2;
};

/// Loads N consecutive X values of one lane's padded rows into xw[First..),
/// logical offsets off.. from xrow (off, N compile-time after unrolling).
template <class T, class C, int First, int N>
__device__ __forceinline__ void load_window(const T* xrow, int off, T (&xw)[C::R + C::K]) {
  using vec_t = typename vec16<T>::type;
#pragma unroll
  for (int v = 0; v < N / C::V; ++v) {
    const int t = off + v * C::V;
    const vec_t w = *reinterpret_cast<const vec_t*>(xrow + t + C::pad * (t / C::R));
    if constexpr (C::V == 4) {
      xw[First + v * 4 + 0] = w.x, xw[First + v * 4 + 1] = w.y;
      xw[First + v * 4 + 2] = w.z, xw[First + v * 4 + 3] = w.w;
    } else {
      xw[First + v * 2 + 0] = w.x, xw[First + v * 2 + 1] = w.y;
    }
  }
}

/// A run of up to NC consecutive chunks of K taps against one lane's R
/// outputs: sacc[r] += sum_k taps[k] * X[r + k]. X is read from the lane's
/// padded rows starting at xrow (logical offset 0 = X of output 0, tap 0),
/// taps are warp-wide broadcasts. The lane's window of R + K values slides
/// by K from one chunk to the next, so a chunk that follows a computed one
/// loads only K new values (R + K after a skipped one). `active(q)` says
/// whether chunk q meets the band; nk: taps in the run.
template <class T, class C, int NC, class Active>
__device__ __forceinline__ void slide_chunks(const T* xrow, const T* taps, int nk, Active active,
                                             T (&sacc)[C::R]) {
  using vec_t = typename vec16<T>::type;
  T xw[C::R + C::K];
  bool have = false;  // xw[0..R) holds chunk q's first R values
#pragma unroll
  for (int q = 0; q < NC; ++q) {
    if (q * C::K >= nk) break;
    if (!active(q)) {
      have = false;
      continue;
    }
    if (!have) load_window<T, C, 0, C::R>(xrow, q * C::K, xw);
    load_window<T, C, C::R, C::K>(xrow, q * C::K + C::R, xw);
    T av[C::K];
#pragma unroll
    for (int v = 0; v < C::K / C::V; ++v) {
      const vec_t w = *reinterpret_cast<const vec_t*>(taps + q * C::K + v * C::V);
      if constexpr (C::V == 4) {
        av[v * 4 + 0] = w.x, av[v * 4 + 1] = w.y, av[v * 4 + 2] = w.z, av[v * 4 + 3] = w.w;
      } else {
        av[v * 2 + 0] = w.x, av[v * 2 + 1] = w.y;
      }
    }
#pragma unroll
    for (int kk = 0; kk < C::K; ++kk)
#pragma unroll
      for (int r = 0; r < C::R; ++r) sacc[r] = fma(av[kk], xw[r + kk], sacc[r]);
#pragma unroll
    for (int i = 0; i < C::R; ++i) xw[i] = xw[i + C::K];
    have = true;
  }
}

/// Largest tile (bytes) with a two-stage instantiation (small and mid tiles).
inline constexpr std::size_t two_stage_max_bytes = 2048;

/// The work of one block of the tiled kernel.
/// @tparam TwoStage blocks with exactly two stages fetch both before the
/// first compute (launch_tiled picks this instantiation only for launches
/// whose fullest blocks have two full stages)
template <class T, class C, bool TwoStage = false>
struct tiled_agent {
  using vec_t = typename vec16<T>::type;
  T* xs;  // staged X, padded rows (aliased by the reduction buffer)
  T* as;  // staged taps

  // loads one stage (taps k0.., X from J0 + k0 - lead) into registers
  __device__ void fetch(const correlation_view<T>& c, const T* a, const T* x, std::int64_t J0,
                        std::int64_t k0, std::int64_t khi, T (&rx)[C::nx], T (&ra)[C::na]) const {
    gather_stage<C::threads, C::TJ + C::KC>(x, c.x_step, J0 + k0 - c.lead, c.lx, rx);
    gather_stage<C::threads, C::KC>(a, c.a_step, k0, khi + 1, ra);
  }

  __device__ void store(const T (&rx)[C::nx], const T (&ra)[C::na]) const {
#pragma unroll
    for (int i = 0; i < C::nx; ++i) {
      const int idx = threadIdx.x + i * C::threads;
      if (idx < C::TJ + C::KC) xs[C::phys(idx)] = rx[i];
    }
#pragma unroll
    for (int i = 0; i < C::na; ++i) {
      const int idx = threadIdx.x + i * C::threads;
      if (idx < C::KC) as[idx] = ra[i];
    }
  }

  // one stage: this warp's contiguous run of chunks (taps wk*KW .. +KW) against
  // its 32*R outputs; chunks where the warp sees only zeros of X are skipped
  __device__ void compute(const correlation_view<T>& c, std::int64_t J0, std::int64_t k0, int nk,
                          T (&acc)[C::R]) const {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wj = warp % C::WJ, wk = warp / C::WJ;
    const int lrow = wj * 32 + lane;  // the lane's row of R outputs in the tile
    // X index of the warp's first output at the run's first tap
    const std::int64_t tw = J0 + wj * 32 * C::R + k0 + wk * C::KW - c.lead;
    const std::int64_t lx = c.lx;
    const auto active = [&](int q) {
      const std::int64_t t0 = tw + q * C::K;
      return t0 + 32 * C::R + C::K - 2 >= 0 && t0 < lx;
    };
    const T* xrow = xs + (lrow + wk * C::KW / C::R) * C::row;
    if constexpr (sizeof(T) == 4) {
      // two-level sum: short chains per stage keep float rounding small
      T sacc[C::R];
#pragma unroll
      for (int r = 0; r < C::R; ++r) sacc[r] = T(0);
      slide_chunks<T, C, C::KW / C::K>(xrow, as + wk * C::KW, nk - wk * C::KW, active, sacc);
#pragma unroll
      for (int r = 0; r < C::R; ++r) acc[r] += sacc[r];
    } else {
      // double: one chain per stage run (positive terms: rounding grows like
      // sqrt(n) eps, far below 1e-12) frees the second level's registers
      slide_chunks<T, C, C::KW / C::K>(xrow, as + wk * C::KW, nk - wk * C::KW, active, acc);
    }
  }

  // one problem's tile; returns with the tile's partial sums at xs[phys(i)], i < TJ
  __device__ void run_tile(const correlation_view<T>& c, const T* a, const T* x, std::int64_t J0,
                           int kt, int ck) const {
    T acc[C::R];
#pragma unroll
    for (int r = 0; r < C::R; ++r) acc[r] = T(0);
    // taps that meet the tile inside the band, split over the ck blocks of the cluster
    const std::int64_t j_hi = dmin(J0 + C::TJ, c.lout) - 1;
    const std::int64_t klo = dmax(0, c.lead - j_hi);
    const std::int64_t khi = dmin(c.la - 1, std::int64_t{c.lead} + c.lx - 1 - J0);
    const std::int64_t nst = khi >= klo ? (khi - klo + C::KC) / C::KC : 0;
    const std::int64_t per = (nst + ck - 1) / ck;
    const std::int64_t s0 = dmin(nst, kt * per), s1 = dmin(nst, s0 + per);
    T rx[C::nx], ra[C::na];
    std::int64_t s = s0;
    if (s0 < s1) fetch(c, a, x, J0, klo + s0 * C::KC, khi, rx, ra);
    if constexpr (TwoStage) {
      // both fetches go out before the first compute: one L2 round trip
      // instead of two. A separate instantiation: the same branch in the one
      // kernel changes its code generation and slows other launches
      // (docs/kernel-notes.md)
      if (s1 - s0 == 2) {
        const std::int64_t k0 = klo + s0 * C::KC;
        T rx2[C::nx], ra2[C::na];
        fetch(c, a, x, J0, k0 + C::KC, khi, rx2, ra2);
        __syncthreads();  // xs may still be read (the previous problem's tile)
        store(rx, ra);
        __syncthreads();
        compute(c, J0, k0, static_cast<int>(dmin(C::KC, khi + 1 - k0)), acc);
#pragma unroll
        for (int i = 0; i < C::nx; ++i) rx[i] = rx2[i];
#pragma unroll
        for (int i = 0; i < C::na; ++i) ra[i] = ra2[i];
        ++s;
      }
    }
    for (; s < s1; ++s) {
      const std::int64_t k0 = klo + s * C::KC;
      __syncthreads();  // the previous stage is consumed
      store(rx, ra);
      __syncthreads();
      if (s + 1 < s1) fetch(c, a, x, J0, k0 + C::KC, khi, rx, ra);  // in flight during compute
      compute(c, J0, k0, static_cast<int>(dmin(C::KC, khi + 1 - k0)), acc);
    }
    // reduce over the WK tap warps: red[wk][output]
    __syncthreads();
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wj = warp % C::WJ, wk = warp / C::WJ;
    T* red = xs + wk * (C::TJ / C::R) * C::row + (wj * 32 + lane) * C::row;
#pragma unroll
    for (int v = 0; v < C::R / C::V; ++v) {
      vec_t w;
      if constexpr (C::V == 4) {
        w = make_float4(acc[v * 4], acc[v * 4 + 1], acc[v * 4 + 2], acc[v * 4 + 3]);
      } else {
        w = make_double2(acc[v * 2], acc[v * 2 + 1]);
      }
      *reinterpret_cast<vec_t*>(red + v * C::V) = w;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < C::TJ; i += C::threads) {
      T s = xs[C::phys(i)];
#pragma unroll
      for (int w = 1; w < C::WK; ++w) s += xs[w * (C::TJ / C::R) * C::row + C::phys(i)];
      xs[C::phys(i)] = s;  // each i has one owner thread
    }
  }
};

/// 32-bit shared-memory address of p (this block's window)
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
/// @return the shared::cluster address of `addr` (a shared address of this
/// block) in block `rank` of the cluster
__device__ __forceinline__ unsigned cluster_addr(unsigned addr, int rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
/// Asynchronous remote store of v to shared::cluster address `dst`, counted
/// as sizeof(T) bytes of transaction on the mbarrier at `bar` (same block as dst).
template <class T>
__device__ __forceinline__ void store_async(unsigned dst, T v, unsigned bar) {
  if constexpr (sizeof(T) == 4)
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(dst),
        "r"(__float_as_uint(v)), "r"(bar)
        : "memory");
  else
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(dst),
        "l"(__double_as_longlong(v)), "r"(bar)
        : "memory");
}

/// Spins until the phase of parity `phase` of this block's mbarrier `full` has
/// completed. The complete-tx operations that complete it are the peers'
/// st.async, releases at cluster scope made for threads of other CTAs: the
/// wait must acquire at cluster scope to synchronize with them (PTX memory
/// model: morally strong only when each scope holds the other thread); the
/// default .acquire.cta does not (docs/kernel-notes.md).
__device__ __forceinline__ void wait_pushed(unsigned long long* full, unsigned phase) {
  asm volatile(
      "{\n .reg .pred p;\n wait_full:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra wait_full;\n}" ::"r"(smem_u32(full)),
      "r"(phase)
      : "memory");
}

/// The tiled kernel's body: as run_cluster_tiles (cluster.cuh), but a split
/// tile is summed by pushing: every block sends each slice of its partial
/// tile to the slice's owner with asynchronous remote stores (st.async) that
/// count their bytes on the owner's mbarrier; the owner waits for its bytes
/// alone, then sums its ck slices locally in rank order (the order of
/// run_cluster_tiles: bitwise the same sums). No cluster-wide barrier on the
/// critical path: a release-ordered cluster barrier costs a large share of
/// a short call (docs/kernel-notes.md). The one barrier left (every block has
/// started and initialized its mbarrier before anyone sends) is arrived at
/// (relaxed) before the tile's work and waited for after it. Nobody touches
/// a peer after its own bytes arrived, so blocks exit without a barrier.
/// Split tiles only (gridDim.y > 1); the kernel runs unsplit ones through
/// run_cluster_tiles.
/// @param recv TJ + max_tap_split values of shared memory
/// @param full this block's mbarrier (shared memory)
template <class T, class C, class Agent>
__device__ __forceinline__ void run_pushed_tiles(const correlation_view<T>& c, const Agent& agent,
                                                 T* recv, unsigned long long* full) {
#if MARG_CUDA_HOPPER_CODE
  const std::int64_t J0 = std::int64_t{blockIdx.x} * C::TJ;
  const int ck = gridDim.y, kt = blockIdx.y;
  const int slice = (C::TJ + ck - 1) / ck;  // recv stride between senders
  const int lo = C::TJ * kt / ck, hi = C::TJ * (kt + 1) / ck;
  // bytes this block receives per problem: ck slices of its valid outputs
  const unsigned bytes = static_cast<unsigned>(ck * dmax(0, dmin(hi, c.lout - J0) - lo) *
                                               static_cast<std::int64_t>(sizeof(T)));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(full)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // the init is a warp-uniform instruction that racecheck attributes to lane
  // 31: without a warp barrier it flags thread 0's arrive below as a
  // warp-level RAW hazard on the mbarrier (both are thread 0's, in order)
  __syncwarp();
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  unsigned phase = 0;
  for (std::int64_t b = blockIdx.z; b < c.batch; b += gridDim.z, phase ^= 1) {
    const T* a = c.a + b * c.a_batch;
    const T* x = c.x + b * c.x_batch;
    T* out = c.out + b * c.out_batch;
    if (threadIdx.x == 0)
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(full)),
                   "r"(bytes)
                   : "memory");
    agent.run_tile(c, a, x, J0, kt, ck);
    __syncthreads();
    if (b == blockIdx.z) asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    for (int i = threadIdx.x; i < C::TJ && J0 + i < c.lout; i += C::threads) {
      const int q = ((i + 1) * ck - 1) / C::TJ;  // owner: C::TJ * q / ck <= i
      store_async(cluster_addr(smem_u32(recv + kt * slice + i - C::TJ * q / ck), q),
                  agent.xs[C::phys(i)], cluster_addr(smem_u32(full), q));
    }
    wait_pushed(full, phase);
    for (int i = lo + threadIdx.x; i < hi && J0 + i < c.lout; i += C::threads) {
      T s = 0;
      for (int q = 0; q < ck; ++q) s += recv[q * slice + i - lo];
      out[(J0 + i) * c.out_step] = s;
    }
    // another problem follows (batches beyond the grid): peers may send
    // into recv only once this block has read it
    if (b + gridDim.z < c.batch) cooperative_groups::this_cluster().sync();
    __syncthreads();
  }
#else
  __trap();  // split tiles need clusters: the dispatch splits only on sm_90
#endif
}

/// Largest tile (bytes) whose split is summed by pushing (run_pushed_tiles).
/// 2048 takes the small and mid tiles, whose calls are short enough for the
/// reduction's latency to matter (docs/kernel-notes.md).
inline constexpr std::size_t push_max_bytes = 2048;

/// Thin shell: one tile (blockIdx.x) x one tap split (blockIdx.y, the cluster
/// rank) x problems blockIdx.z, blockIdx.z + gridDim.z, ... (cluster.cuh)
template <class T, class C, bool TwoStage>
__global__ void __launch_bounds__(C::threads, C::min_blocks)
    kernel_banded_tiled(const correlation_view<T> c) {
  await_previous_kernel();  // launched with early start (launch_tiled)
  __shared__ __align__(16) T xs[C::union_len];
  __shared__ __align__(16) T as[C::KC];
  const tiled_agent<T, C, TwoStage> agent{xs, as};
  if constexpr (C::TJ * sizeof(T) <= push_max_bytes) {
    __shared__ __align__(16) T recv[C::TJ + max_tap_split];
    __shared__ __align__(8) unsigned long long full;
    if (gridDim.y > 1 && c.partial == nullptr) {
      run_pushed_tiles<T, C>(c, agent, recv, &full);
      return;
    }
  }
  run_cluster_tiles<C::TJ, C::threads>(c, agent, xs, [](int i) { return C::phys(i); });
}

/// Launches the tiled kernel with tuning C.
/// @param c the correlation
/// @param split blocks sharing the taps of one tile (1..max_tap_split)
/// @param stream the stream
template <class T, class C>
void launch_tiled(const correlation_view<T>& c, int split, cudaStream_t stream) {
  // early start (programmatic dependent launch) only for grids of one wave:
  // the next call's launch then hides behind this kernel; a grid of many
  // waves is slower with it, so many-wave grids launch without it
  // (docs/kernel-notes.md)
  const std::int64_t blocks =
      (std::int64_t{c.lout} + C::TJ - 1) / C::TJ * split * std::min(c.batch, 65535);
  const bool early = blocks <= std::int64_t{C::min_blocks} * multiprocessors();
  if constexpr (C::TJ * sizeof(T) <= two_stage_max_bytes) {
    // the fullest tile meets min(la, TJ + lx - 1) taps; its blocks get
    // ceil(stages / split) stages each
    const std::int64_t taps = std::min<std::int64_t>(c.la, std::int64_t{C::TJ} + c.lx - 1);
    const std::int64_t stages = (taps + C::KC - 1) / C::KC;
    if (taps >= 2 * C::KC && (stages + split - 1) / split == 2) {
      launch_cluster_tiles<C::TJ, C::threads>(kernel_banded_tiled<T, C, true>, c, split, stream,
                                              early);
      return;
    }
  }
  launch_cluster_tiles<C::TJ, C::threads>(kernel_banded_tiled<T, C, false>, c, split, stream,
                                          early);
}

}  // namespace marg::detail::cuda
