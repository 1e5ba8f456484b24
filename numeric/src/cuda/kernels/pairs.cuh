// Warp per problem with paired output blocks, for batches of mid-sized
// problems (at most 64 blocks of R = 16 outputs, e.g. full convolutions of
// 512 and 512). A lane owns up to two blocks whose steps (groups of G = 4
// taps inside the band) add up to about the same total on every lane: the
// blocks of the first half are paired outside-in (i with h - 1 - i), as are
// those of the second half, so the band's zero triangles cost little and
// every lane runs one loop of the warp's trip count. At most 32 blocks
// (gradients of 512 outputs): one block per lane.
//
// A step is lane.cuh's lane_step (16-byte loads of 4 taps and of the next 4
// X values, 4 R FMAs on a window of R + 4 values renamed over U = 5 register
// quarters). Lanes read their rows at offsets multiples of R apart, so the
// rows are skewed: one pad chunk after every 4 chunks of G values (offsets 4
// chunks apart land 5 apart: distinct bank groups for 8 lanes of a 16-byte
// load). A pass is 20 steps (U and the skew's period divide it): step
// 4 m + r reads at a per-residue offset + 20 m, no address arithmetic.
//
// A lane's first block is padded to whole switch intervals (pairs_tuning::
// half steps, a pass; its extra steps read the rows' zero padding), so its
// switch to the second block falls outside the unrolled steps: lanes that
// switch in the same interval run the switch together, and a step has no
// test. The second block's offsets are computed before the loop (the
// divergent switch is stores, loads and moves). The second block runs on
// over zeros to the warp's trip count; a tail of fewer than half steps
// loads the whole window per step.
//
// Staging: each warp copies its problem's taps and the part of X the band
// touches into its own rows with cp.async (zeros outside the operands), then
// only a warp barrier; W warps per block (the resident warps of other blocks
// overlap the copies). A lane's sums go to the warp's output slab in shared
// memory; the warp writes the problem's outputs at the end, coalesced. Each
// warp runs problems w, w + W gridDim.x, ... in turn (the plan serves every
// problem): where the batch fills whole rounds of pairs_tuning::resident
// blocks per SM (nearly) the grid is one round (every SM keeps its warps
// to the end instead of a thin last wave), else one problem per warp (the
// block scheduler runs a partial last wave faster than whole rounds).
// Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "../cuda_check.hpp"
#include "async_copy.cuh"
#include "cluster.cuh"
#include "correlation.cuh"
#include "lane.cuh"

namespace marg::detail::cuda {

/// Shape constants of the paired-block kernel (R, G, U as the lane kernel).
struct pairs_tuning {
  static constexpr int W = 4;             ///< warps (problems) per block
  static constexpr int threads = 32 * W;  ///< threads per block
  static constexpr int R = lane_tuning::R;
  static constexpr int G = lane_tuning::G;
  static constexpr int U = lane_tuning::U;
  static constexpr int pass = 20;  ///< steps per unrolled pass (U and 4 divide it)
  /// steps between switch points (U divides it, it divides pass): a lane's
  /// first block is rounded up to a multiple. A whole pass per switch; half
  /// a pass adds a switch test before each half pass, which costs more than
  /// the finer switching saves (docs/kernel-notes.md)
  static constexpr int half = 20;
  static constexpr int max_blocks = 64;  ///< output blocks per problem (two per lane)
  /// resident blocks per SM (register bound): 4 blocks take 118 registers
  /// without spills; more blocks force fewer registers, and at 8 (one wave,
  /// 64 registers) it spills; 4 is fastest for both types
  /// (docs/kernel-notes.md)
  template <class T>
  static constexpr int min_blocks = 4;
  /// resident blocks per SM the grid is sized for (launch_pairs): each warp
  /// runs problems w, w + stride, ... so that all rounds run with the same
  /// warps (a grid of a fractional number of waves runs its last part with
  /// few warps per SM)
  static constexpr int resident = 4;
  /// the persistent grid (rounds of problems per warp) only where the batch
  /// fills at least full_pct % of its rounds, else one problem per warp: a
  /// wave of 4 blocks per SM costs more than its share of a whole round, so
  /// the persistent grid wins only when its last round is nearly full
  /// (docs/kernel-notes.md has the measurements)
  static constexpr int full_pct = 90;
};

/// Element offset of chunk c (G values) in a skewed row: one pad chunk after
/// every 4 (floor division, so offsets of negative chunks keep the rule
/// skew(c + 4) = skew(c) + 5 G).
__host__ __device__ constexpr int pairs_skew(int c) {
  return pairs_tuning::G * (c + (c >> 2));
}

/// The band of output block i: its first chunk of taps and its steps.
struct pairs_block {
  int ct0;    ///< first chunk of taps
  int steps;  ///< steps (0: the block's outputs are all zero)
};

/// One output block of a lane: its block index (-1: none), first chunk of
/// taps, steps (0: all its outputs are zero) and first chunk of X.
struct pairs_seg {
  int blk, ct0, steps, cx0;
};

/// A lane's plan: its first and second block and the steps of the first
/// (rounded up to whole passes when a second follows: the switch falls on a
/// pass boundary, the extra steps read zeros), and its steps in all.
struct pairs_plan {
  pairs_seg seg[2];
  int len0;
  int mine;
};

/// Shape of one correlation in the pairs kernel (the parts that do not
/// depend on the lanes' plans).
struct pairs_base {
  int nblk;    ///< output blocks of R
  int half;    ///< blocks of the first half
  int t_base;  ///< X index of the X row's element 0 (a multiple of G)
  int ach;     ///< chunks of taps
};

/// Layout of one warp's region (taps row, X row), of its output slab and
/// the warp's trip count; the same for every problem of a launch (the host
/// computes it and passes it to the kernel).
struct pairs_layout {
  int trips;   ///< steps of the busiest lane
  int tch;     ///< chunks of the taps row
  int xch;     ///< chunks of the X row
  int xrow;    ///< element offset of the X row
  int region;  ///< elements of one warp's region
  int slab;    ///< elements of one warp's output slab
  /// @return bytes of shared memory per block
  template <class T>
  __host__ __device__ std::int64_t bytes() const {
    return std::int64_t{pairs_tuning::W} * (region + slab) * static_cast<std::int64_t>(sizeof(T));
  }
};

/// Position of output j in a warp's output slab: 4 pad elements after every
/// 32 outputs, so that lane l reading output l + 32 i reads l + 36 i (one
/// bank each) and a block of R = 16 starts 16-byte aligned.
__host__ __device__ constexpr int pairs_slab_pos(int j) {
  return j + 4 * (j >> 5);
}

/// The band of block i of `c`.
template <class T>
__host__ __device__ pairs_block pairs_block_of(const correlation_view<T>& c, int i) {
  constexpr int R = pairs_tuning::R, G = pairs_tuning::G;
  const int j0 = i * R;
  const int klo = c.lead - (j0 + R - 1) > 0 ? c.lead - (j0 + R - 1) : 0;
  const int khi = c.la - 1 < c.lead + c.lx - 1 - j0 ? c.la - 1 : c.lead + c.lx - 1 - j0;
  if (klo > khi) return {0, 0};
  return {klo / G, khi / G + 1 - klo / G};
}

/// The blocks of lane l (-1: none): block l when there are at most 32,
/// else pairs outside-in within each half.
__host__ __device__ inline void pairs_blocks_of_lane(int nblk, int half, int l, int& b0, int& b1) {
  const int lanes0 = (half + 1) / 2, rest = nblk - half;
  b0 = b1 = -1;
  if (nblk <= 32) {
    if (l < nblk) b0 = l;
  } else if (l < lanes0) {
    b0 = l;
    if (half - 1 - l != l) b1 = half - 1 - l;
  } else if (l - lanes0 < (rest + 1) / 2) {
    const int i = l - lanes0;
    b0 = half + i;
    if (nblk - 1 - i != half + i) b1 = nblk - 1 - i;
  }
}

/// The base shape of `c` (requires c.lout <= R max_blocks).
template <class T>
__host__ __device__ pairs_base pairs_base_of(const correlation_view<T>& c) {
  constexpr int R = pairs_tuning::R, G = pairs_tuning::G;
  pairs_base s{};
  s.nblk = (c.lout + R - 1) / R;
  s.half = (s.nblk + 1) / 2;
  // a block at j0 reads X from j0 + G floor(klo / G) >= lead - R - 2 on (as
  // lane_shape_of)
  s.t_base = lane_floor_g(c.lead - R - 2);
  s.ach = (c.la + G - 1) / G;
  return s;
}

/// Steps rounded up to whole switch intervals (pairs_tuning::half).
__host__ __device__ constexpr int pairs_round(int n) {
  return (n + pairs_tuning::half - 1) / pairs_tuning::half * pairs_tuning::half;
}

/// The plan of lane l.
template <class T>
__host__ __device__ pairs_plan pairs_plan_of(const correlation_view<T>& c, const pairs_base& s,
                                             int l) {
  constexpr int R = pairs_tuning::R, G = pairs_tuning::G;
  int b[2];
  pairs_blocks_of_lane(s.nblk, s.half, l, b[0], b[1]);
  pairs_plan p{};
  for (int i = 0; i < 2; ++i) {
    p.seg[i] = {b[i], 0, 0, 0};
    if (b[i] < 0) continue;
    const pairs_block k = pairs_block_of(c, b[i]);
    p.seg[i] = {b[i], k.ct0, k.steps, (b[i] * R + G * k.ct0 - s.t_base) / G};
  }
  if (p.seg[1].blk < 0) {
    p.len0 = p.mine = p.seg[0].steps;
    return p;
  }
  // the order that wastes fewer steps on rounding
  if (pairs_round(p.seg[1].steps) + p.seg[0].steps < pairs_round(p.seg[0].steps) + p.seg[1].steps) {
    const pairs_seg t = p.seg[0];
    p.seg[0] = p.seg[1];
    p.seg[1] = t;
  }
  p.len0 = pairs_round(p.seg[0].steps);
  p.mine = p.len0 + p.seg[1].steps;
  return p;
}

/// Chunks of the taps row (t) and of the X row (x) that lane plan p reads
/// in a warp of `trips` steps (a block runs on, over zeros, until its
/// switch or the warp's end).
__host__ __device__ inline void pairs_needs(const pairs_plan& p, int trips, int& t, int& x) {
  constexpr int U = pairs_tuning::U;
  t = x = 0;
  for (int i = 0; i < 2; ++i) {
    const pairs_seg& g = p.seg[i];
    if (g.blk < 0 || g.steps == 0) continue;
    const int len = i == 1 ? trips - p.len0 : (p.seg[1].blk >= 0 ? p.len0 : trips);
    t = t > g.ct0 + len ? t : g.ct0 + len;
    x = x > g.cx0 + len + U - 1 ? x : g.cx0 + len + U - 1;
  }
}

/// The layout from the warp's trip count and the largest needs.
__host__ __device__ inline pairs_layout pairs_layout_of(const pairs_base& s, int trips, int t,
                                                        int x) {
  pairs_layout y{};
  y.trips = trips;
  y.tch = ((t > s.ach ? t : s.ach) + 3) / 4 * 4;  // rows start on the skew's period
  y.xch = ((x > 1 ? x : 1) + 3) / 4 * 4;
  y.xrow = pairs_skew(y.tch);
  const int rows = y.xrow + pairs_skew(y.xch);
  // lanes without a block with steps read their region from chunk 0 on
  const int idle = pairs_skew((trips + pairs_tuning::U + 3) / 4 * 4);
  y.region = rows > idle ? rows : idle;
  y.slab = (pairs_slab_pos(pairs_tuning::R * s.nblk - 1) + 4) / 4 * 4;  // 16-byte multiple
  return y;
}

/// The layout of `c` (host: every lane's plan in turn).
template <class T>
pairs_layout pairs_layout_host(const correlation_view<T>& c) {
  const pairs_base s = pairs_base_of(c);
  int trips = 0, t = 0, x = 0;
  for (int l = 0; l < 32; ++l) trips = std::max(trips, pairs_plan_of(c, s, l).mine);
  for (int l = 0; l < 32; ++l) {
    int tl, xl;
    pairs_needs(pairs_plan_of(c, s, l), trips, tl, xl);
    t = std::max(t, tl), x = std::max(x, xl);
  }
  return pairs_layout_of(s, trips, t, x);
}

/// Stages elements e < n of a skewed row at dst: src[(e - lo) step] for lo
/// <= e < hi (cp.async), zeros elsewhere (shared stores). Lane l takes e =
/// l + 32 i, which lands at G skew(e / G) + e % G = l + 4 (l / 16) + 40 i:
/// no per-element index arithmetic or range test.
template <class T>
__device__ __forceinline__ void pairs_stage_row(T* dst, const T* src, std::int64_t step, int n,
                                                int lo, int hi) {
  const int lane = threadIdx.x % 32;
  const auto below = [&](int e) { return e > lane ? (e - lane + 31) / 32 : 0; };  // #i: e_i < e
  const int in = below(n), ihi = min(below(hi), in), ilo = min(below(lo), ihi);
  T* const d = dst + lane + 4 * (lane >> 4);
  int i = 0;
  for (; i < ilo; ++i) d[40 * i] = T(0);
  const T* p = src + std::int64_t{lane + 32 * ilo - lo} * step;
  const std::int64_t ps = 32 * step;
  for (; i < ihi; ++i, p += ps) async_copy(d + 40 * i, p, true);
  for (; i < in; ++i) d[40 * i] = T(0);
}

/// The kernel: warp w of block k computes problems k W + w + i W gridDim.x
/// with layout y
/// (pairs_layout_host), at least pairs_tuning::min_blocks<T> blocks per SM.
template <class T>
__global__ void __launch_bounds__(pairs_tuning::threads, pairs_tuning::min_blocks<T>)
    kernel_banded_pairs(const correlation_view<T> c, const pairs_layout y) {
#if MARG_CUDA_AMPERE_CODE
  using C = pairs_tuning;
  constexpr int G = C::G, U = C::U, R = C::R, P = C::pass;
  extern __shared__ __align__(16) unsigned char pairs_smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t b0 = std::int64_t{blockIdx.x} * C::W + warp;
  const pairs_base s = pairs_base_of(c);
  T* const reg = reinterpret_cast<T*>(pairs_smem) + warp * y.region;
  T* const slab = reinterpret_cast<T*>(pairs_smem) + C::W * y.region + warp * y.slab;

  // staging of problem b: taps row, then the X row from X index t_base on
  // (zero fill outside the operands; the skew's pad chunks are never read)
  const auto stage = [&](std::int64_t b) {
    pairs_stage_row(reg, c.a + b * c.a_batch, c.a_step, G * y.tch, 0, c.la);
    pairs_stage_row(reg + y.xrow, c.x + b * c.x_batch, c.x_step, G * y.xch, c.lead - s.t_base,
                    c.lead - s.t_base + c.lx);
    async_commit();
  };
  // the plan and the second segment's offsets depend on the shape only:
  // computed before the wait, beside the previous kernel's last blocks
  // (early start: launch_pairs)
  const pairs_plan plan = pairs_plan_of(c, s, lane);
  const int trips = y.trips;

  T acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = T(0);
  T q[U][G];
  int pa[4], px[4];  // element offsets of pass step 4 m + r: p[r] + 5 G m
  int bx;            // the segment's X row (0: idle reads from the region's start)
  // the offsets of a segment that starts at pass step ph (U divides ph):
  // the window's first U - 1 quarters (qo) go into sets 0 .. U - 2, the
  // pass offsets are set as if the segment had begun ph steps earlier
  const auto offsets = [&](const pairs_seg& g, int ph, int(&qo)[U - 1], int(&oa)[4], int(&ox)[4],
                           int& ob) {
    const bool real = g.blk >= 0 && g.steps > 0;
    const int tc = real ? g.ct0 : 0, xc = real ? g.cx0 : 0;
    ob = real ? y.xrow : 0;
#pragma unroll
    for (int i = 0; i < U - 1; ++i) qo[i] = ob + pairs_skew(xc + i);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      oa[r] = pairs_skew(tc + r - ph);
      ox[r] = ob + pairs_skew(xc + U - 1 + r - ph);
    }
  };
  // the second segment's offsets, computed before the loop so that the
  // (divergent) switch is loads, stores and moves
  int nq[U - 1], na[4], nx[4], nb;
  const int sp = plan.seg[1].blk >= 0 ? plan.len0 / C::half : INT_MAX;  // the switch's interval
  offsets(plan.seg[1], plan.len0 % P, nq, na, nx, nb);
  await_previous_kernel();
  if (b0 >= c.batch) return;  // no block-wide barrier below
  // puts a block's sums into the slab (zeros for a block outside the band:
  // acc then holds sums of idle reads) and clears acc
  const auto put = [&](int blk, bool keep) {
    if (blk >= 0) {
      T* o = slab + pairs_slab_pos(blk * R);
#pragma unroll
      for (int r = 0; r < R; r += 4) {
        if constexpr (sizeof(T) == 4) {
          *reinterpret_cast<float4*>(o + r) =
              make_float4(acc[r], acc[r + 1], acc[r + 2], acc[r + 3]);
        } else {
          *reinterpret_cast<double2*>(o + r) = make_double2(acc[r], acc[r + 1]);
          *reinterpret_cast<double2*>(o + r + 2) = make_double2(acc[r + 2], acc[r + 3]);
        }
      }
      // rare (a block outside the band): zeros over the stored sums, not a
      // select per sum
      if (!keep) {
#pragma unroll
        for (int r = 0; r < R; ++r) o[r] = T(0);
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = T(0);
  };
  const auto switch_segment = [&] {
    put(plan.seg[0].blk, plan.seg[0].steps > 0);
#pragma unroll
    for (int i = 0; i < U - 1; ++i) lane_load4(reg + nq[i], q[i]);
#pragma unroll
    for (int r = 0; r < 4; ++r) pa[r] = na[r], px[r] = nx[r];
    bx = nb;
  };

  // the warp's problems b0, b0 + stride, ... (the plan and the second
  // segment's offsets serve them all)
  const std::int64_t stride = std::int64_t{gridDim.x} * C::W;
  for (std::int64_t b = b0;;) {
    stage(b);  // the rows were last read before the barrier below (previous problem)
    async_wait<0>();
    __syncwarp();  // the warp's rows are staged; every lane is done with the slab
    {
      int qo[U - 1];
      offsets(plan.seg[0], 0, qo, pa, px, bx);
#pragma unroll
      for (int i = 0; i < U - 1; ++i) lane_load4(reg + qo[i], q[i]);
    }
    constexpr int H = C::half;
    static_assert(P % H == 0 && H % U == 0, "switch points where the register sets are in order");
    static_assert(H == P || P / H == 2, "one or two intervals per pass");
    const int nh = trips / H, rem = trips % H;
    // interval h runs pass steps (h % (P / H)) H .. + H - 1
    const auto interval = [&](auto kk) {
      constexpr int k = decltype(kk)::value;
      lane_unroll<H>([&](auto vv) {
        constexpr int v = k * H + decltype(vv)::value, m = v / 4, r = v % 4;
        lane_step<T, v % U>(reg + px[r] + 5 * G * m, reg + pa[r] + 5 * G * m, q, acc);
      });
      if constexpr (k == P / H - 1) {
#pragma unroll
        for (int r = 0; r < 4; ++r) pa[r] += pairs_skew(P), px[r] += pairs_skew(P);
      }
    };
    const auto run = [&](int h, auto k) {
      if (h == sp) switch_segment();  // divergent, at most once per lane
      __syncwarp();
      interval(k);
    };
    if constexpr (H == P) {
      for (int h = 0; h < nh; ++h) run(h, std::integral_constant<int, 0>{});
    } else {
      // whole passes (two intervals each, a switch test before each), then an
      // odd last interval
      int h = 0;
      for (; h + 1 < nh; h += 2) {
        run(h, std::integral_constant<int, 0>{});
        run(h + 1, std::integral_constant<int, 1>{});
      }
      if (h < nh) run(h, std::integral_constant<int, 0>{});
    }
    if (nh == sp) switch_segment();
    __syncwarp();
    // the last steps (fewer than an interval): the whole window loaded per
    // step; the chunks from the offsets (skew(c) = G u with c = u - u / 5,
    // shifted by 4 periods: offsets of a segment that began mid-pass may be
    // negative) plus the pass step the tail starts at
    const int ph = nh * H % P;
    const int ua = pa[0] / G + 20, ux = (px[0] - bx) / G + 20;
    const int tc = ua - ua / 5 - 16 + ph, xc = ux - ux / 5 - 16 - (U - 1) + ph;
    for (int n = 0; n < rem; ++n) {
      T w[U][G], a4[G];
#pragma unroll
      for (int i = 0; i < U; ++i) lane_load4(reg + bx + pairs_skew(xc + n + i), w[i]);
      lane_load4(reg + pairs_skew(tc + n), a4);
#pragma unroll
      for (int k = 0; k < G; ++k)
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += a4[k] * w[(r + k) / G][(r + k) % G];
    }
    const bool two = plan.seg[1].blk >= 0;
    put(two ? plan.seg[1].blk : plan.seg[0].blk, (two ? plan.seg[1].steps : plan.seg[0].steps) > 0);
    __syncwarp();  // the slab is complete: coalesced stores of the problem's outputs
    T* const out = c.out + b * c.out_batch;
    if (c.out_step == 1) {
      // output lane + 32 i sits at slab position lane + 36 i: pointer steps only
      const int n = (c.lout - lane + 31) / 32;
      T* o = out + lane;
      const T* p = slab + lane;
#pragma unroll 4
      for (int i = 0; i < n; ++i) o[32 * i] = p[36 * i];
    } else {
      for (int j = lane; j < c.lout; j += 32) out[j * c.out_step] = slab[pairs_slab_pos(j)];
    }
    b += stride;
    if (b >= c.batch) break;
  }
#else
  __trap();  // needs sm_80: the dispatch runs it only there
#endif
}

/// Whether the pairs kernel can run `c`: at most max_blocks output blocks
/// and a block's shared memory within `max_smem` bytes.
/// @param c the correlation
/// @param max_smem shared memory a block may use, bytes
/// @return true when launch_pairs may be used
template <class T>
bool pairs_fits(const correlation_view<T>& c, std::int64_t max_smem) {
  if (c.lout <= 0 || c.la <= 0 || c.lout > pairs_tuning::R * pairs_tuning::max_blocks) return false;
  if (c.la > (1 << 16) || c.lx > (1 << 16)) return false;
  return pairs_layout_host(c).template bytes<T>() <= max_smem;
}

}  // namespace marg::detail::cuda
