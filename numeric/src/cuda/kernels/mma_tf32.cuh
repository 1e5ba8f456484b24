// Float correlation on tensor cores with float accuracy: 3xTF32 on mma.sync.m16n8k8.
//
// A warp owns NT consecutive tiles of 128 outputs. For one tile at J and the
// k-step s0 (s in [s0, s0 + 8)), the 16x8 output block D[r][c] = out_{J+r+16c}
// gets  sum_s A[r][s] B[s][c]  with A[r][s] = a_{s-r} (a Toeplitz block of
// taps, 0 outside 0..la-1) and B[s][c] = X_{J+16c+s}: summed over every s0,
// D[r][c] = sum_k a_k X_{J+r+16c+k}. A depends on s0 only, so the warp loads
// it once per k-step for all its tiles; B is 64 values of X per tile. The k
// order inside an mma is free: mma column t holds s = 2t and column t + 4
// holds s = 2t + 1, so a lane's two B values are adjacent (one 8-byte load)
// and its A values come from records of tap pairs.
//
// 3xTF32: v = big + small, D += Ab Bb (main), C += Ab Bs + As Bb (correction,
// 2^-11 smaller), As Bs dropped. Taps are split once per stage (rounded to
// nearest); X (big = v with the low 13 bits cleared, small = v - big exact,
// then cleared likewise) either once per stage into records of two values
// ("pre": one 16-byte load per fragment, nothing else) or per fragment from
// the raw values (half the shared memory and traffic, 6 more ALU operations
// per fragment). Main and correction accumulators restart every 16 k-steps
// and are added into a running fp32 total: tensor-core accumulation
// truncates, so chains stay short.
//
// Interleaved tiles (shape flag): the NT tiles of a warp start 8 outputs
// apart and row r of tile i is output i 8 + (r & 7) + 8 NT (r >> 3), so the X
// fragment of tile i at k-step q is that of tile 0 at q + i: one X record
// load per k-step for all the warp's tiles (docs/kernel-notes.md).
//
// Staging: cp.async copies of the raw X window and taps (zero-filled outside
// the operands), issued after the stage's split so that the next stage is in
// flight during the compute and no registers hold it (double-buffered unless
// X is split once per stage). The tap split over a cluster and the
// deterministic reduction through distributed shared memory are those of
// kernels/cluster.cuh. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "async_copy.cuh"
#include "cluster.cuh"
#include "correlation.cuh"

namespace marg::detail::cuda {

/// Shape of one variant of the 3xTF32 kernel.
/// @tparam NT_ tiles of 128 outputs per warp
/// @tparam WJ_ warps per block (along the outputs)
/// @tparam KC_ s values (taps) per shared-memory stage, a multiple of 128
/// @tparam MinBlocks_ blocks per multiprocessor asked of the register allocator
/// @tparam Pre_ X split into big and small parts once per stage (records of
///   two values) instead of once per fragment load (each value is loaded by 8
///   fragments of a tile)
/// @tparam Interleave_ the warp's NT tiles interleaved at 8 outputs (requires
///   Pre_): tile i at k-step q reads the X fragment of tile 0 at k-step q + i,
///   so the warp loads one X fragment per k-step for all its tiles
/// @tparam Flush_ k-steps per accumulator chain
/// @tparam TapWin_ the second tap record of a k-step taken from the registers
///   of an earlier k-step of the chain instead of loaded again
template <int NT_, int WJ_, int KC_, int MinBlocks_, bool Pre_ = false, bool Interleave_ = false,
          int Flush_ = 16, bool TapWin_ = false>
struct mma_tf32_tuning {
  static constexpr int NT = NT_, WJ = WJ_, KC = KC_, min_blocks = MinBlocks_;
  static constexpr bool pre = Pre_, interleave = Interleave_, tap_win = TapWin_;
  static constexpr int TJ = 128 * NT * WJ;  ///< outputs per block
  static constexpr int threads = 32 * WJ;
  static constexpr int flush = Flush_;  ///< k-steps per accumulator chain
  /// tile layout: output of D[r][c] at tile + r + 16c (IL 1) or, interleaved,
  /// tile + (r & 7) + IL (8 (r >> 3) + 16c) with tiles 8 apart (IL = NT)
  static constexpr int IL = interleave ? NT : 1;
  static constexpr int tile_step = interleave ? 8 : 128;  ///< outputs between a warp's tiles
  static constexpr int row_hi = 8 * IL;                   ///< offset of rows 8..15
  static constexpr int window = 112 * IL + 8;             ///< X values one tile reads per k-step
  static constexpr int toff = row_hi + 8;                 ///< tap records start at s = S - toff
  static constexpr int XL = TJ + KC;                      ///< staged X values per stage
  /// raw X per buffer: padded (8 words per 16) unless pre
  static constexpr int xs_len = pre ? (XL > TJ + TJ / 4 ? XL : TJ + TJ / 4) : (XL + 15) / 16 * 24;
  /// split X pair records, 4 records of padding per 8 IL
  static constexpr int xq_len = pre ? XL / 2 + XL / (4 * IL) : 1;
  static constexpr int out_len = TJ + TJ / 4;   ///< padded output tile
  static constexpr int records = KC + toff;     ///< tap-pair records per stage
  static constexpr int raw_taps = records + 1;  ///< raw taps per stage
  static constexpr int raw_len = (raw_taps + 3) / 4 * 4;
  /// raw stage buffers: one when the stage is split into records before the
  /// compute (pre: the next stage's copies may overwrite the raw values then)
  static constexpr int raw_bufs = pre ? 1 : 2;
  static constexpr int nx = (XL + threads - 1) / threads;
  static constexpr int nt = (raw_taps + threads - 1) / threads;
  static constexpr int na = (records + threads - 1) / threads;
  static constexpr int np = (XL / 2 + threads - 1) / threads;  ///< X pairs split per thread
  static_assert(KC % (8 * flush) == 0, "a stage holds whole accumulator chains");
  static_assert(flush % (2 * IL) == 0, "chains start on a padding group of X records");
  static_assert(!interleave || pre, "interleaved tiles read split X records");
  static_assert(threads % 16 == 0, "whole 16-value groups of X per thread row");
  static_assert(xs_len >= out_len, "the output tile fits in the first X buffer");
  static_assert(XL % (16 * IL) == 0, "whole padding groups of pair records");
};

/// Split X layout (pre): pair record r (X at 2r, 2r + 1) at r + 4 (r / 8 IL),
/// so the 8 lanes of a quarter-warp (records 8 IL g + t, g < 2, t < 4) hit 8
/// distinct 16-byte bank groups.
template <int IL>
__device__ __forceinline__ int mma_xq_index(int r) {
  constexpr int shift = IL == 1 ? 3 : IL == 2 ? 4 : IL == 4 ? 5 : 6;
  static_assert(8 * IL == 1 << shift, "IL: 1, 2, 4 or 8");
  return r + 4 * (r >> shift);
}

/// X layout in shared memory: 8 words of padding after every 16, so that the
/// four 8-word runs of a half-warp's fragment load (X at 16 g + 2 t, g < 4)
/// start 24 words apart: distinct banks for any start.
__device__ __forceinline__ int mma_xs_index(int p) {
  return p + 8 * (p >> 4);
}

/// Output tile layout: 8 words of padding per 32 so that the accumulator
/// stores (outputs g + 32 t, g = 0..7, t = 0..3) hit 32 distinct banks.
__device__ __forceinline__ int mma_out_index(int o) {
  return o + 8 * (o >> 5);
}

/// @return v rounded to nearest TF32 (low 13 bits zero)
__device__ __forceinline__ std::uint32_t tf32_rna(float v) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return r;
}

/// d += a b on the tensor cores (m16n8k8, TF32 inputs, fp32 accumulators).
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const std::uint32_t (&a)[4],
                                                 std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Range of stage positions [lo, hi) that read inside [0, end) when position
/// p reads element first + p; clamped to [0, len] so the tests are 32-bit.
__device__ __forceinline__ void stage_range(std::int64_t first, std::int64_t end, int len, int& lo,
                                            int& hi) {
  lo = static_cast<int>(dmin(dmax(-first, 0), len));
  hi = static_cast<int>(dmin(dmax(end - first, 0), len));
}

/// The work of one block of the 3xTF32 kernel.
template <class C>
struct mma_tf32_agent {
  float* xs;   // two stages of raw X, mma_xs_index layout unless pre (the first aliased by the
               // output tile)
  float* tr;   // two stages of raw taps a_{S-toff+r}, r < raw_taps
  float4* ts;  // tap records of the current stage: (big a_k, big a_k+1, small a_k, small a_k+1)
  float4* xq;  // pre: X pair records of the current stage (big X_p, X_p+1, small X_p, X_p+1)

  // issues the copies of one stage (s from S: X from J0 + S, taps from S - toff)
  // into buffer `buf`: no registers held, zeros outside the operands
  __device__ void issue(const correlation_view<float>& c, const float* a, const float* x,
                        std::int64_t J0, std::int64_t S, int buf) const {
    const int tid = threadIdx.x;
    {
      const std::int64_t first = J0 + S - c.lead;
      int lo, hi;
      stage_range(first, c.lx, C::XL, lo, hi);
      const float* src = x + (first + tid) * c.x_step;  // formed, dereferenced only in range
      const std::int64_t dsrc = std::int64_t{C::threads} * c.x_step;
      // padded layout unless pre (the split pass reads the raw values in order)
      float* dst = xs + buf * C::xs_len + tid + (C::pre ? 0 : 8 * (tid >> 4));
      constexpr int drow = C::pre ? C::threads : C::threads * 3 / 2;
#pragma unroll
      for (int n = 0; n < C::nx; ++n) {
        const int p = tid + n * C::threads;
        const bool in = p >= lo && p < hi;
        if (n + 1 < C::nx || p < C::XL) async_copy(dst + n * drow, in ? src : x, in);
        src += dsrc;
      }
    }
    {
      const std::int64_t first = S - C::toff;
      int lo, hi;
      stage_range(first, c.la, C::raw_taps, lo, hi);
      const float* src = a + (first + tid) * c.a_step;
      const std::int64_t dsrc = std::int64_t{C::threads} * c.a_step;
      float* dst = tr + buf * C::raw_len + tid;
#pragma unroll
      for (int n = 0; n < C::nt; ++n) {
        const int r = tid + n * C::threads;
        const bool in = r >= lo && r < hi;
        if (r < C::raw_taps) async_copy(dst + n * C::threads, in ? src : a, in);
        src += dsrc;
      }
    }
    async_commit();
  }

  // splits the raw taps (and with pre the raw X) of buffer `buf` into the records of the stage
  __device__ void split_stage(int buf) const {
    if constexpr (C::pre) {
      constexpr std::uint32_t mask = 0xffffe000u;
      const float* raw = xs + buf * C::xs_len;
#pragma unroll
      for (int i = 0; i < C::np; ++i) {
        const int r = threadIdx.x + i * C::threads;
        if (i + 1 < C::np || r < C::XL / 2) {
          const float2 v = *reinterpret_cast<const float2*>(raw + 2 * r);
          const std::uint32_t b0 = __float_as_uint(v.x) & mask, b1 = __float_as_uint(v.y) & mask;
          const std::uint32_t s0 = __float_as_uint(v.x - __uint_as_float(b0)) & mask;
          const std::uint32_t s1 = __float_as_uint(v.y - __uint_as_float(b1)) & mask;
          xq[mma_xq_index<C::IL>(r)] = make_float4(__uint_as_float(b0), __uint_as_float(b1),
                                                   __uint_as_float(s0), __uint_as_float(s1));
        }
      }
    }
    const float* raw = tr + buf * C::raw_len;
#pragma unroll
    for (int i = 0; i < C::na; ++i) {
      const int r = threadIdx.x + i * C::threads;
      if (r < C::records) {
        const float v0 = raw[r], v1 = raw[r + 1];
        const std::uint32_t b0 = tf32_rna(v0), b1 = tf32_rna(v1);
        const std::uint32_t s0 = tf32_rna(v0 - __uint_as_float(b0));
        const std::uint32_t s1 = tf32_rna(v1 - __uint_as_float(b1));
        ts[r] = make_float4(__uint_as_float(b0), __uint_as_float(b1), __uint_as_float(s0),
                            __uint_as_float(s1));
      }
    }
  }

  // one chain of `flush` k-steps q = q0 + u (stage-relative, s0 = S + 8q, q0
  // a multiple of flush): the warp's NT tiles, fresh main and correction
  // accumulators, added into tot. Full: every tile takes every k-step;
  // otherwise tile i takes the k-steps in [qlo[i], qhi[i]]. Shared addresses
  // are a lane constant plus immediates.
  template <bool Full>
  __device__ __forceinline__ void chain(const float* xb, int q0, const int (&qlo)[C::NT],
                                        const int (&qhi)[C::NT], float (&tot)[C::NT][4]) const {
    constexpr int IL = C::IL;
    // records loaded in an earlier k-step are reused: no k-step may be skipped
    constexpr bool skip_steps = !C::interleave && !C::tap_win;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane >> 2, t = lane & 3;
    // tap records s0 + 2t - g (rows g) and row_hi below (rows g + 8)
    const float4* tsl = ts + 8 * q0 + C::toff + 2 * t - g;
    // raw X (not pre, IL 1) at stage offset p = tile + 8q + 16g + 2t, padded:
    // p + 8 (p >> 4) = 1.5 tile + 24 g + 2 t + 12 q0 + 8 u + 8 (u >> 1)
    const float* xsl = xb + warp * C::NT * 192 + 12 * q0 + 24 * g + 2 * t;
    // pre: record 64 NT warp + 8 IL g + t + 4m, m = q + (IL > 1 ? i : 16 i), padded
    // (mma_xq_index): lane constant + 4 q0 + 2 q0 / IL + 4 mu + 4 (mu / 2 IL), mu = m - q0
    const float4* xql =
        xq + (64 + 32 / IL) * C::NT * warp + 4 * q0 + 2 * (q0 / IL) + (8 * IL + 4) * g + t;
    float d[C::NT][4], e[C::NT][4];
#pragma unroll
    for (int i = 0; i < C::NT; ++i)
#pragma unroll
      for (int v = 0; v < 4; ++v) d[i][v] = 0.f, e[i][v] = 0.f;
    float4 ra_win[C::tap_win ? C::flush : 1];             // tap records of the chain
    float4 xw[C::interleave ? C::flush + C::NT - 1 : 1];  // X records, interleaved tiles
#pragma unroll
    for (int u = 0; u < C::flush; ++u) {
      const int q = q0 + u;
      if constexpr (!Full && skip_steps) {
        bool any = false;
#pragma unroll
        for (int i = 0; i < C::NT; ++i) any |= q >= qlo[i] && q <= qhi[i];
        if (!any) continue;  // warp-uniform
      }
      // A: a0 = a[s0+2t-g], a2 = a[s0+2t+1-g]; a1, a3: the same taps row_hi lower
      const float4 ra = tsl[8 * u];
      float4 rb;
      if constexpr (C::tap_win) {
        ra_win[u] = ra;
        rb = u * 8 >= C::row_hi ? ra_win[u - C::row_hi / 8] : tsl[8 * u - C::row_hi];
      } else {
        rb = tsl[8 * u - C::row_hi];
      }
      const std::uint32_t ab[4] = {__float_as_uint(ra.x), __float_as_uint(rb.x),
                                   __float_as_uint(ra.y), __float_as_uint(rb.y)};
      const std::uint32_t as[4] = {__float_as_uint(ra.z), __float_as_uint(rb.z),
                                   __float_as_uint(ra.w), __float_as_uint(rb.w)};
      if constexpr (C::interleave) {
        // X records u .. u + NT - 1 of the chain: the new one, and all at the first k-step
#pragma unroll
        for (int i = 0; i < C::NT; ++i) {
          const int mu = u + i;
          if (u == 0 || i == C::NT - 1) xw[mu] = xql[4 * mu + 4 * (mu / (2 * IL))];
        }
      }
#pragma unroll
      for (int i = 0; i < C::NT; ++i) {
        if constexpr (!Full) {
          if (q < qlo[i] || q > qhi[i]) continue;  // warp-uniform: only zeros of X here
        }
        // B: b0 = X[tile+s0+16 IL g+2t], b1 = the next one
        std::uint32_t xb0, xb1, xs0, xs1;
        if constexpr (C::pre) {
          float4 r;
          if constexpr (C::interleave)
            r = xw[u + i];
          else
            r = xql[i * 96 + 4 * u + 4 * (u >> 1)];
          xb0 = __float_as_uint(r.x), xb1 = __float_as_uint(r.y);
          xs0 = __float_as_uint(r.z), xs1 = __float_as_uint(r.w);
        } else {
          constexpr std::uint32_t mask = 0xffffe000u;
          const float2 xv = *reinterpret_cast<const float2*>(xsl + i * 192 + 8 * u + 8 * (u >> 1));
          xb0 = __float_as_uint(xv.x) & mask, xb1 = __float_as_uint(xv.y) & mask;
          xs0 = __float_as_uint(xv.x - __uint_as_float(xb0)) & mask;
          xs1 = __float_as_uint(xv.y - __uint_as_float(xb1)) & mask;
        }
        mma_m16n8k8_tf32(e[i], ab, xs0, xs1);
        mma_m16n8k8_tf32(d[i], ab, xb0, xb1);
        mma_m16n8k8_tf32(e[i], as, xb0, xb1);
      }
    }
#pragma unroll
    for (int i = 0; i < C::NT; ++i)
#pragma unroll
      for (int v = 0; v < 4; ++v) tot[i][v] += d[i][v] + e[i][v];
  }

  // one stage: tile i takes the k-steps in [qlo[i], qhi[i]]; [qa, qb] is their union
  __device__ void compute(const float* xb, int qa, int qb, const int (&qlo)[C::NT],
                          const int (&qhi)[C::NT], float (&tot)[C::NT][4]) const {
    for (int q0 = 0; q0 < C::KC / 8; q0 += C::flush) {
      if (q0 + C::flush - 1 < qa || q0 > qb) continue;
      bool full = true;
#pragma unroll
      for (int i = 0; i < C::NT; ++i) full = full && qlo[i] <= q0 && qhi[i] >= q0 + C::flush - 1;
      if (full)
        chain<true>(xb, q0, qlo, qhi, tot);
      else
        chain<false>(xb, q0, qlo, qhi, tot);
    }
  }

  // one problem's tile; returns with the block's partial sums at xs[mma_out_index(o)], o < TJ
  __device__ void run_tile(const correlation_view<float>& c, const float* a, const float* x,
                           std::int64_t J0, int kt, int ck) const {
    const int warp = threadIdx.x / 32;
    float tot[C::NT][4];
#pragma unroll
    for (int i = 0; i < C::NT; ++i)
#pragma unroll
      for (int v = 0; v < 4; ++v) tot[i][v] = 0.f;
    // s values where the block's tiles meet nonzero taps and X: tile J_i at
    // s reads X_{J_i+16c+s}, c < 8, and taps a_{s-r}, r < 16
    const std::int64_t jend = dmin(J0 + C::TJ, c.lout);
    // the last tile start below jend (interleaved: a bound)
    const std::int64_t jlast = J0 + (jend - 1 - J0) / C::tile_step * C::tile_step;
    const std::int64_t slo = dmax(0, std::int64_t{c.lead} - jlast - (C::window - 1));
    const std::int64_t shi =
        dmin(std::int64_t{c.la} + C::row_hi + 6, std::int64_t{c.lead} + c.lx - 1 - J0);
    const std::int64_t nst = shi >= slo ? (shi - slo + C::KC) / C::KC : 0;
    const std::int64_t per = (nst + ck - 1) / ck;
    const std::int64_t st0 = dmin(nst, kt * per), st1 = dmin(nst, st0 + per);
    // stage st in buffer (st - st0) & 1 (one buffer with pre), the next one in flight during
    // compute
    if (st0 < st1) issue(c, a, x, J0, slo + st0 * C::KC, 0);
    for (std::int64_t st = st0; st < st1; ++st) {
      const std::int64_t S = slo + st * C::KC;
      const int buf = C::raw_bufs == 2 ? static_cast<int>(st - st0) & 1 : 0;
      async_wait<0>();
      __syncthreads();  // stage st is in; every warp is done with stage st - 1
      split_stage(buf);
      __syncthreads();
      if (st + 1 < st1) issue(c, a, x, J0, S + C::KC, C::raw_bufs == 2 ? buf ^ 1 : 0);
      // k-steps of each tile that meet X inside [lead, lead + lx)
      int qlo[C::NT], qhi[C::NT];
      int qa = C::KC / 8, qb = -1;
      const std::int64_t qend = dmin(C::KC / 8 - 1, (shi - S) >> 3);
#pragma unroll
      for (int i = 0; i < C::NT; ++i) {
        const std::int64_t Ji = J0 + (warp * C::NT * 128 / C::tile_step + i) * C::tile_step;
        // s0 >= lead - Ji - (window - 1) and s0 <= lead + lx - 1 - Ji, s0 = S + 8q
        const std::int64_t lo = std::int64_t{c.lead} - Ji - (C::window - 1) - S;
        const std::int64_t hi = std::int64_t{c.lead} + c.lx - 1 - Ji - S;
        const std::int64_t l = lo <= 0 ? 0 : (lo + 7) >> 3;
        const std::int64_t h = Ji >= c.lout || hi < 0 ? -1 : dmin(qend, hi >> 3);
        qlo[i] = static_cast<int>(dmin(l, C::KC / 8));
        qhi[i] = static_cast<int>(h);
        if (qlo[i] <= qhi[i]) qa = min(qa, qlo[i]), qb = max(qb, qhi[i]);
      }
      compute(xs + buf * C::xs_len, qa, qb, qlo, qhi, tot);
    }
    __syncthreads();  // every warp is done with xs
    const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < C::NT; ++i) {
      // c0: D[g][2t] = out_{g+32 IL t}; c1: D[g][2t+1] (+16 IL); c2: D[g+8][2t] (+8 IL);
      // c3 (+24 IL)
      constexpr int IL = C::IL;
      const int o = (warp * C::NT * 128 / C::tile_step + i) * C::tile_step + g + 32 * IL * t;
      xs[mma_out_index(o)] = tot[i][0];
      xs[mma_out_index(o + 16 * IL)] = tot[i][1];
      xs[mma_out_index(o + 8 * IL)] = tot[i][2];
      xs[mma_out_index(o + 24 * IL)] = tot[i][3];
    }
  }
};

/// One tile (blockIdx.x) x one tap split (blockIdx.y, the cluster rank) x
/// problems blockIdx.z, blockIdx.z + gridDim.z, ... (cluster.cuh)
template <class C>
__global__ void __launch_bounds__(C::threads, C::min_blocks)
    kernel_banded_mma_tf32(const correlation_view<float> c) {
#if MARG_CUDA_AMPERE_CODE
  __shared__ __align__(16) float xs[C::raw_bufs * C::xs_len];
  __shared__ __align__(16) float tr[C::raw_bufs * C::raw_len];
  __shared__ __align__(16) float4 ts[C::records];
  __shared__ __align__(16) float4 xq[C::xq_len];
  const mma_tf32_agent<C> agent{xs, tr, ts, xq};
  run_cluster_tiles<C::TJ, C::threads>(c, agent, xs, [](int i) { return mma_out_index(i); });
#else
  __trap();  // needs sm_80: the dispatch runs it only there
#endif
}

/// Stages each part of a split tile keeps at least, in batches: every block
/// of a split repeats the staging and the cluster sum, which short parts do
/// not repay (few-stage one-tile problems run slower split than unsplit,
/// while long batched tiles keep the fill rule's splits near the best;
/// batch_tap_split's choice is slower there; docs/kernel-notes.md).
inline constexpr std::int64_t mma_tf32_batch_part_stages = 8;

/// Blocks sharing the s range of one tile: enough to fill `sms` multiprocessors
/// with `per_sm` blocks each, never more than a tile has stages (in batches,
/// never parts of fewer than mma_tf32_batch_part_stages stages).
/// @param c the correlation
/// @param sms multiprocessors of the device
/// @param per_sm blocks per multiprocessor aimed at
/// @return the split, 1..max_tap_split
template <class C>
int mma_tf32_split(const correlation_view<float>& c, int sms, int per_sm) {
  const std::int64_t tiles = tiles_of<C>(c);
  const std::int64_t span = std::min<std::int64_t>(std::int64_t{c.la} + C::row_hi + 7,
                                                   std::int64_t{C::TJ} + c.lx + C::window - 1);
  const std::int64_t stages = (span + C::KC - 1) / C::KC;
  const std::int64_t parts = c.batch > 1 ? stages / mma_tf32_batch_part_stages : stages;
  return tap_split_for(tiles, parts, std::int64_t{per_sm} * sms);
}

/// Launches the 3xTF32 kernel with shape C.
/// @param c the correlation
/// @param split blocks sharing the s range of one tile (1..max_tap_split)
/// @param stream the stream
template <class C>
void launch_mma_tf32(const correlation_view<float>& c, int split, cudaStream_t stream) {
  launch_cluster_tiles<C::TJ, C::threads>(kernel_banded_mma_tf32<C>, c, split, stream);
}

}  // namespace marg::detail::cuda
