// The batched correlation on FP64 tensor cores (mma.sync .f64): sm_90's
// m16n8k8 and m16n8k16 shapes, or each step as m8n8k4 steps (sm_80 on).
//
// Toeplitz x Hankel form: for a tile of 128 consecutive outputs from J,
//   D[r][c] = out_{J + r + 16c} = sum_s A[r][s] B[s][c],
//   A[r][s] = a_{s-r} (taps, Toeplitz, 0 outside 0..la-1),
//   B[s][c] = X_{J + 16c + s} (Hankel, row pitch 16).
// For one k-step s0..s0+KM the tap fragment A is the same for every tile, so
// a warp loads it once and multiplies it into NT tiles (NT accumulators); the
// X fragment B is the one load per mma. The k order inside an mma is free:
// k-slot t + 4i of lane (g, t) is mapped to s = 2t + (i % 2) + 8(i / 2), so a
// lane reads its B values as 16-byte pairs X[J + 16g + s0 + 8h + 2t + {0, 1}]
// (rows XOR-swizzled so that each quarter-warp hits 8 distinct bank groups)
// and its A values as 16-byte pairs of taps (a second copy of the taps shifted
// by one keeps the pairs of odd rows aligned).
//
// Blocks: WJ warps along the outputs (NT tiles each) x WK warps along the
// taps. Stages of KC values of s (taps a[k0-16 .. k0+KC) and the TJ + KC
// values of X they meet) are staged in shared memory, gathering strided,
// reversed and broadcast operands, the next stage prefetched into registers.
// The WK partial tiles are summed in shared memory in warp order; when the s
// range of a tile is split over a cluster, the partial tiles are summed
// through distributed shared memory in rank order: deterministic, no atomics.
// Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cluster.cuh"
#include "correlation.cuh"

namespace marg::detail::cuda {

/// Tile sizes of one variant of the FP64 tensor-core kernel.
/// @tparam KM_ k of the mma shape (m16n8k8 or m16n8k16)
/// @tparam NT_ 128-output tiles per warp (sharing each tap fragment)
/// @tparam WJ_ warps along the outputs
/// @tparam WK_ warps along the taps
/// @tparam KC_ values of s per shared-memory stage
/// @tparam MinBlocks_ blocks per multiprocessor asked of the register allocator
/// @tparam Sm90_ true: sm_90's m16n8kKM instruction; false: the same step as
///         m8n8k4 instructions, which every device from sm_80 on has
template <int KM_, int NT_, int WJ_, int WK_, int KC_, int MinBlocks_, bool Sm90_ = true>
struct mma_f64_tuning {
  static constexpr int KM = KM_, NT = NT_, WJ = WJ_, WK = WK_, KC = KC_, min_blocks = MinBlocks_;
  static constexpr bool sm90 = Sm90_;
  /// outputs per block
  static constexpr int TJ = 128 * NT * WJ;
  static constexpr int threads = 32 * WJ * WK;
  /// values of s of one warp's run per stage
  static constexpr int KW = KC / WK;
  static constexpr int xs_len = TJ + KC;
  /// taps a[k0 - 16 + i], i < ta_len
  static constexpr int ta_len = KC + 16;
  /// where the shifted tap copy starts: 10 doubles after ta0's end, so that
  /// the 16-byte pairs of a quarter-warp's even rows (ta0, bank groups
  /// K - p + t) and odd rows (ta1, K - p + t + 4) never share a bank group
  static constexpr int ta1_at = xs_len + ta_len + 10;
  static constexpr int stage_len = ta1_at + ta_len;
  static constexpr int red_len = WK * TJ;
  static constexpr int smem_len = stage_len > red_len ? stage_len : red_len;
  /// values each thread prefetches per stage
  static constexpr int nx = (xs_len + threads - 1) / threads;
  static constexpr int na = (ta_len + threads - 1) / threads;
  static_assert(KM == 8 || KM == 16, "mma shape");
  static_assert(KW % KM == 0 && KC % 32 == 0 && (ta1_at - xs_len) % 16 == 10, "tile shape");
};

/// Tuning C's tiles in m8n8k4 steps, for devices without sm_90's shapes.
template <class C>
using mma_f64_m8n8k4 =
    mma_f64_tuning<C::KM, C::NT, C::WJ, C::WK, C::KC, C::min_blocks, /*Sm90_=*/false>;

/// The swizzled shared-memory index of staged X value i: bit 3 flips with
/// bit 4, so the 16-byte pairs 16g + 8h + 2t of a quarter-warp (g = 2p, 2p+1,
/// t < 4) fall on 8 distinct bank groups. Pairs (even i) stay contiguous.
__host__ __device__ constexpr int mma_f64_swizzle(int i) {
  return i ^ (((i >> 4) & 1) << 3);
}

/// D += A B on one m16n8kKM FP64 tensor-core step. The fragments: a[2i] is
/// row g and a[2i + 1] row g + 8 of k-slot t + 4i, b[i] k-slot t + 4i,
/// d[0..1] row g and d[2..3] row g + 8 (lane = 4g + t).
/// @tparam KM k of the step (8 or 16)
/// @tparam Sm90 true: one sm_90 m16n8kKM instruction; false: 2 KM / 4
///         m8n8k4 instructions (rows g and g + 8 times each k-slot group),
///         in the k order of the sm_90 step's fragments
template <int KM, bool Sm90>
__device__ __forceinline__ void dmma(double (&d)[4], const double (&a)[KM / 2],
                                     const double (&b)[KM / 4]) {
  if constexpr (!Sm90) {
#pragma unroll
    for (int i = 0; i < KM / 4; ++i) {
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                   : "+d"(d[0]), "+d"(d[1])
                   : "d"(a[2 * i]), "d"(b[i]));
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                   : "+d"(d[2]), "+d"(d[3])
                   : "d"(a[2 * i + 1]), "d"(b[i]));
    }
  } else if constexpr (KM == 16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  }
}

/// The work of one block of the FP64 tensor-core kernel.
template <class C>
struct mma_f64_agent {
  double* xs;   // staged X, swizzled (aliased by the reduction buffer)
  double* ta0;  // staged taps: ta0[i] = a[k0 - 16 + i]
  double* ta1;  // the same shifted by one: ta1[i] = a[k0 - 15 + i]

  // loads one stage (s from k0) into registers
  __device__ void fetch(const correlation_view<double>& c, const double* a, const double* x,
                        std::int64_t J0, std::int64_t k0, double (&rx)[C::nx],
                        double (&ra)[C::na]) const {
    gather_stage<C::threads, C::xs_len>(x, c.x_step, J0 + k0 - c.lead, c.lx, rx);
    gather_stage<C::threads, C::ta_len>(a, c.a_step, k0 - 16, c.la, ra);
  }

  __device__ void store(const double (&rx)[C::nx], const double (&ra)[C::na]) const {
#pragma unroll
    for (int i = 0; i < C::nx; ++i) {
      const int idx = threadIdx.x + i * C::threads;
      if (idx < C::xs_len) xs[mma_f64_swizzle(idx)] = rx[i];
    }
#pragma unroll
    for (int i = 0; i < C::na; ++i) {
      const int idx = threadIdx.x + i * C::threads;
      if (idx < C::ta_len) {
        ta0[idx] = ra[i];
        if (idx > 0) ta1[idx - 1] = ra[i];
      }
    }
  }

  // this warp's run of k-steps of one stage against its NT tiles, every tile
  // at every step (outside the band the staged X is zeros): with Bounded the
  // steps q0 .. q1 - 1, else the whole run up to nk values of s and the taps'
  // end
  template <bool Bounded>
  __device__ __forceinline__ void steps(const correlation_view<double>& c, std::int64_t k0, int nk,
                                        int q0, int q1, double (&acc)[C::NT][4]) const {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wj = warp % C::WJ, wk = warp / C::WJ;
    const int g = lane / 4, t = lane % 4;
    // the lane's tap pairs: even rows from ta0, odd rows from ta1 (aligned)
    const double* tap = ((g & 1) ? ta1 - 1 : ta0) + 16 + 2 * t - g;
    const double* xl = xs;
    const int xrow = wj * C::NT * 128 + 16 * g + 2 * t;
    // two k-steps unrolled: loads of the second overlap the mmas of the first
    // (full unrolling makes the compiler hoist every load and spill)
#pragma unroll 2
    for (int q = 0; q < C::KW / C::KM; ++q) {
      const int sq = wk * C::KW + q * C::KM;
      if constexpr (Bounded) {
        if (q >= q1) break;
        if (q < q0) continue;
      } else {
        if (sq >= nk) break;
        if (k0 + sq - 15 >= c.la) break;  // the taps are zero from here on
      }
      double af[C::KM / 2];
      {
        const double2 p0 = *reinterpret_cast<const double2*>(tap + sq);
        const double2 pm = *reinterpret_cast<const double2*>(tap + sq - 8);
        af[0] = p0.x, af[1] = pm.x, af[2] = p0.y, af[3] = pm.y;
        if constexpr (C::KM == 16) {
          const double2 pp = *reinterpret_cast<const double2*>(tap + sq + 8);
          af[4] = pp.x, af[5] = p0.x, af[6] = pp.y, af[7] = p0.y;
        }
      }
#pragma unroll
      for (int n = 0; n < C::NT; ++n) {
        double bf[C::KM / 4];
        const int i0 = xrow + n * 128 + sq;
        const double2 q0v = *reinterpret_cast<const double2*>(xl + mma_f64_swizzle(i0));
        bf[0] = q0v.x, bf[1] = q0v.y;
        if constexpr (C::KM == 16) {
          const double2 q1v = *reinterpret_cast<const double2*>(xl + mma_f64_swizzle(i0 + 8));
          bf[2] = q1v.x, bf[3] = q1v.y;
        }
        dmma<C::KM, C::sm90>(acc[n], af, bf);
      }
    }
  }

  // one stage: the whole run when every tile of the warp meets the band at
  // every step, else the warp's steps where some tile does, all of its tiles
  // at each (per-tile branches cost more than the extra zero products;
  // docs/kernel-notes.md)
  __device__ void compute(const correlation_view<double>& c, std::int64_t J0, std::int64_t k0,
                          int nk, double (&acc)[C::NT][4]) const {
    const int warp = threadIdx.x / 32;
    const int wj = warp % C::WJ, wk = warp / C::WJ;
    // X index of tile 0's first value at step 0 of the run (s = k0 + wk KW)
    const std::int64_t base = J0 + wj * C::NT * 128 + k0 + wk * C::KW;
    if (base >= c.lead && base + C::NT * 128 - 16 + C::KW <= std::int64_t{c.lead} + c.lx)
      return steps<false>(c, k0, nk, 0, 0, acc);  // every tile in the band at every step
    // step q (X index base + q KM for tile 0) meets the band for some tile
    // once the last tile's window (128 + KM - 16 values) reaches lead, until
    // the first tile's starts at lead + lx; the run also ends at nk values of
    // s and where the taps end (s - 15 >= la)
    const std::int64_t lo = std::int64_t{c.lead} - (C::NT - 1) * 128 - 112 - C::KM + 1 - base;
    const std::int64_t run = k0 + wk * C::KW;
    const std::int64_t hi = dmin(dmin(std::int64_t{c.lead} + c.lx - base, nk - wk * C::KW),
                                 std::int64_t{c.la} + 15 - run);
    const auto steps_from = [](std::int64_t v) {  // ceil(v / KM) clamped to the run
      const std::int64_t q = v >= 0 ? (v + C::KM - 1) / C::KM : -(-v / C::KM);
      return static_cast<int>(dmax(0, dmin(C::KW / C::KM, q)));
    };
    const int q0 = steps_from(lo), q1 = steps_from(hi);
    if (q0 < q1) steps<true>(c, k0, nk, q0, q1, acc);
  }

  // one problem's tile; returns with the tile's partial sums at xs[i], i < TJ
  __device__ void run_tile(const correlation_view<double>& c, const double* a, const double* x,
                           std::int64_t J0, int kt, int ck) const {
    double acc[C::NT][4];
#pragma unroll
    for (int n = 0; n < C::NT; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0;
    // values of s that meet the tile inside the band, split over the ck blocks of the cluster
    const std::int64_t j_hi = dmin(J0 + C::TJ, c.lout) - 1;
    const std::int64_t slo = dmax(0, c.lead - j_hi);
    const std::int64_t shi = dmin(c.la - 1, std::int64_t{c.lead} + c.lx - 1 - J0) + 15;
    const std::int64_t nst = shi >= slo ? (shi - slo + C::KC) / C::KC : 0;
    const std::int64_t per = (nst + ck - 1) / ck;
    const std::int64_t s0 = dmin(nst, kt * per), s1 = dmin(nst, s0 + per);
    double rx[C::nx], ra[C::na];
    if (s0 < s1) fetch(c, a, x, J0, slo + s0 * C::KC, rx, ra);
    for (std::int64_t s = s0; s < s1; ++s) {
      const std::int64_t k0 = slo + s * C::KC;
      __syncthreads();  // the previous stage is consumed
      store(rx, ra);
      __syncthreads();
      if (s + 1 < s1) fetch(c, a, x, J0, k0 + C::KC, rx, ra);  // in flight during compute
      compute(c, J0, k0, static_cast<int>(dmin(C::KC, shi + 1 - k0)), acc);
    }
    // reduce over the WK tap warps: red[wk][output]
    __syncthreads();
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wj = warp % C::WJ, wk = warp / C::WJ;
    const int g = lane / 4, t = lane % 4;
    double* red = xs + wk * C::TJ + wj * C::NT * 128 + g + 32 * t;
#pragma unroll
    for (int n = 0; n < C::NT; ++n) {
      red[n * 128] = acc[n][0];
      red[n * 128 + 16] = acc[n][1];
      red[n * 128 + 8] = acc[n][2];
      red[n * 128 + 24] = acc[n][3];
    }
    __syncthreads();
    if constexpr (C::WK > 1) {
      for (int i = threadIdx.x; i < C::TJ; i += C::threads) {
        double v = xs[i];
#pragma unroll
        for (int w = 1; w < C::WK; ++w) v += xs[w * C::TJ + i];
        xs[i] = v;  // each i has one owner thread
      }
    }
  }
};

/// Thin shell: one tile (blockIdx.x) x one split of s (blockIdx.y, the cluster
/// rank) x problems blockIdx.z, blockIdx.z + gridDim.z, ... (cluster.cuh)
template <class C>
__global__ void __launch_bounds__(C::threads, C::min_blocks)
    kernel_banded_mma_f64(const correlation_view<double> c) {
#if MARG_CUDA_HOPPER_CODE
  constexpr bool runs_here = true;
#else
  constexpr bool runs_here = MARG_CUDA_AMPERE_CODE && !C::sm90;
#endif
  if constexpr (runs_here) {
    __shared__ __align__(16) double sm[C::smem_len];
    const mma_f64_agent<C> agent{sm, sm + C::xs_len, sm + C::ta1_at};
    run_cluster_tiles<C::TJ, C::threads>(c, agent, sm, [](int i) { return i; });
  } else {
    __trap();  // needs sm_90 (sm_80 for m8n8k4 steps): the dispatch runs it only there
  }
}

/// The split of s. With `modelled` and at most max_tap_split stages in a
/// tile (the range the model is fitted on; beyond, at 65536 taps, its
/// one-wave bound splits too little): batch_tap_split with those costs, for
/// single problems and batches alike. Else, single problems: enough blocks
/// for the block scheduler to even out tiles of unequal work, never more
/// than a tile has stages, rounded down to a power of two (clusters that
/// tile the GPCs); batches: batch_tap_split (a split repeats the staging and
/// the cluster sum in every block, and at 256-512 taps the last stage of the
/// span holds 15 taps, so splitting such batches costs more than it saves).
/// @param c the correlation
/// @param sms multiprocessors of the device
/// @param waves blocks per resident block slot asked for (single problems)
/// @param modelled the split model's costs, or null
/// @return blocks per tile, 1..max_tap_split
template <class C>
int mma_f64_split(const correlation_view<double>& c, int sms, int waves,
                  const tap_split_costs* modelled = nullptr) {
  const std::int64_t tiles = tiles_of<C>(c);
  const std::int64_t span = std::min<std::int64_t>(c.la, std::int64_t{C::TJ} + c.lx - 1) + 15;
  const std::int64_t stages = (span + C::KC - 1) / C::KC;
  if (modelled != nullptr && stages <= max_tap_split)
    return batch_tap_split(tiles, span, C::KC, sms, *modelled);
  if (c.batch > 1) return batch_tap_split(tiles, span, C::KC, sms);
  const int split = tap_split_for(tiles, stages, std::int64_t{waves} * C::min_blocks * sms);
  return 1 << (31 - __builtin_clz(static_cast<unsigned>(split)));  // a power of two
}

/// Launches the FP64 tensor-core kernel with tuning C.
/// @param c the correlation
/// @param split blocks sharing the s range of one tile (1..max_tap_split)
/// @param stream the stream
template <class C>
void launch_mma_f64(const correlation_view<double>& c, int split, cudaStream_t stream) {
  launch_cluster_tiles<C::TJ, C::threads>(kernel_banded_mma_f64<C>, c, split, stream);
}

}  // namespace marg::detail::cuda
