// Issue 10 experiment (session 9), NOT built by CMake and not part of the
// library: round 13's 3xTF32 mma.sync kernel (one warp per problem) rebuilt
// with the band's tiles in a window of S slots per 64-tap chunk (steps
// outer), chunk sums in a shared slab and 16-byte cp.async staging, in two
// forms: v4 (X pre-split into 16-byte records) and v5 (raw X in 8-byte
// records, split on the ALU); beside the library's pairs kernel and round
// 13's kernel. Medians of 9 bursts of 20 calls over 4 buffer sets; worst
// relative error against a long double loop on 46-63 problems. Results:
// bench/notes/tc_window.md (calls 4-5). Build (repo root): nvcc -O3
//   -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include
//   -I numeric/src -o tc5 bench/notes/tc_window/tc5.cu
// Run: ./tc5 [case [passes [variant]]]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/pairs.cuh"

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

struct cview {
  const float* a;
  long long a_step, a_batch;
  int la;
  const float* x;
  long long x_step, x_batch;
  int lx, lead;
  float* out;
  long long out_step, out_batch;
  int lout, batch;
};

struct tc_layout {
  int ta_len;  // tap records per warp
  int xs_len;  // X floats per warp (skewed)
  int L;       // X values staged
  int nchunk;  // chunks of 8 steps
  int nrem;    // remaining single steps
  int lo[8], hi[8];
};

__device__ __forceinline__ unsigned tf32(float v) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ void mma8(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                     unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void cpa(float* dst, const float* src, bool in) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(in ? 4 : 0)
               : "memory");
}

template <int NT, int W, int MB, bool Ilp>
__global__ void __launch_bounds__(32 * W, MB) tc_kernel(cview c, tc_layout y) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  // tap records k (tap i = k - 16): PB[k] = (big a_i, big a_{i-8}), PS[k] small
  uint2* PB = reinterpret_cast<uint2*>(smem) + warp * 2 * y.ta_len;
  uint2* PS = PB + y.ta_len;
  float* xs = reinterpret_cast<float*>(smem + std::size_t{16} * W * y.ta_len) + warp * y.xs_len;
  float* tr = reinterpret_cast<float*>(smem + std::size_t{16} * W * y.ta_len +
                                       std::size_t{4} * W * y.xs_len) +
              warp * (y.ta_len + 8);
  const int tl = 16 + t - g;
  const int xl = 20 * g + t;
  constexpr unsigned mask = 0xffffe000u;
  for (long long p = static_cast<long long>(blockIdx.x) * W + warp; p < c.batch;
       p += static_cast<long long>(gridDim.x) * W) {
    __syncwarp();
    // X: zeros outside the operand, the operand by cp.async
    const float* xp = c.x + p * c.x_batch;
    const int u_lo = min(max(c.lead, 0), y.L), u_hi = min(c.lead + c.lx, y.L);
    for (int u = lane; u < y.L; u += 32)
      if (u < u_lo || u >= u_hi) xs[u + 4 * (u >> 4)] = 0.f;
    for (int u = u_lo + lane; u < u_hi; u += 32)
      cpa(xs + u + 4 * (u >> 4), xp + (u - c.lead) * c.x_step, true);
    // raw taps: tr[i + 24] = a_i for i in [-24, S)
    const float* ap = c.a + p * c.a_batch;
    for (int k = lane; k < y.ta_len + 8; k += 32)
      if (static_cast<unsigned>(k - 24) >= static_cast<unsigned>(c.la)) tr[k] = 0.f;
    for (int i = lane; i < c.la; i += 32) cpa(tr + i + 24, ap + i * c.a_step, true);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncwarp();
    for (int k = lane; k < y.ta_len; k += 32) {
      const float v = tr[k + 8], w = tr[k];
      const unsigned bv = tf32(v), bw = tf32(w);
      PB[k] = make_uint2(bv, bw);
      PS[k] = make_uint2(tf32(v - __uint_as_float(bv)), tf32(w - __uint_as_float(bw)));
    }
    __syncwarp();

    float acc[NT][4];
#pragma unroll
    for (int T = 0; T < NT; ++T)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[T][i] = 0.f;

    // one step of tile T: X fragment at xq, split, three products
    auto step = [&](const float* xq, const uint2(&qb)[2], const uint2(&qs)[2], float(&d)[4],
                    float(&c1)[4], float(&c2)[4]) {
      const float v0 = xq[0], v1 = xq[4];
      const unsigned b0 = __float_as_uint(v0) & mask, b1 = __float_as_uint(v1) & mask;
      const unsigned s0 = __float_as_uint(v0 - __uint_as_float(b0)) & mask;
      const unsigned s1 = __float_as_uint(v1 - __uint_as_float(b1)) & mask;
      mma8(d, qb[0].x, qb[0].y, qb[1].x, qb[1].y, b0, b1);
      mma8(c1, qb[0].x, qb[0].y, qb[1].x, qb[1].y, s0, s1);
      mma8(c2, qs[0].x, qs[0].y, qs[1].x, qs[1].y, b0, b1);
    };

    int c0 = 0;
    for (int ch = 0; ch < y.nchunk; ++ch, c0 += 64) {
      const float* xc = xs + c0 + c0 / 4 + xl;
      if constexpr (Ilp) {
        float d[NT][4], c1[NT][4], c2[NT][4];
#pragma unroll
        for (int T = 0; T < NT; ++T)
#pragma unroll
          for (int i = 0; i < 4; ++i) d[T][i] = c1[T][i] = c2[T][i] = 0.f;
#pragma unroll
        for (int st = 0; st < 8; ++st) {
          const int k = tl + c0 + 8 * st;
          const uint2 qb[2] = {PB[k], PB[k + 4]}, qs[2] = {PS[k], PS[k + 4]};
#pragma unroll
          for (int T = 0; T < NT; ++T)
            step(xc + 160 * T + 8 * st + 4 * (st >> 1), qb, qs, d[T], c1[T], c2[T]);
        }
#pragma unroll
        for (int T = 0; T < NT; ++T)
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[T][i] += d[T][i] + (c1[T][i] + c2[T][i]);
      } else {
        uint2 qb[8][2], qs[8][2];
#pragma unroll
        for (int st = 0; st < 8; ++st) {
          const int k = tl + c0 + 8 * st;
          qb[st][0] = PB[k];
          qb[st][1] = PB[k + 4];
          qs[st][0] = PS[k];
          qs[st][1] = PS[k + 4];
        }
#pragma unroll
        for (int T = 0; T < NT; ++T) {
          if (!(y.lo[T] < c0 + 64 && y.hi[T] > c0)) continue;
          float d[4] = {0.f, 0.f, 0.f, 0.f}, c1[4] = {0.f, 0.f, 0.f, 0.f},
                c2[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
          for (int st = 0; st < 8; ++st)
            step(xc + 160 * T + 8 * st + 4 * (st >> 1), qb[st], qs[st], d, c1, c2);
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[T][i] += d[i] + (c1[i] + c2[i]);
        }
      }
    }
    // remaining steps, one at a time
#pragma unroll
    for (int T = 0; T < NT; ++T) {
      float d[4] = {0.f, 0.f, 0.f, 0.f}, c1[4] = {0.f, 0.f, 0.f, 0.f}, c2[4] = {0.f, 0.f, 0.f, 0.f};
      for (int st = 0, s0 = c0; st < y.nrem; ++st, s0 += 8) {
        if (!(y.lo[T] <= s0 && s0 < y.hi[T])) continue;
        const int k = tl + s0;
        const uint2 qb[2] = {PB[k], PB[k + 4]}, qs[2] = {PS[k], PS[k + 4]};
        step(xs + s0 + 4 * (s0 >> 4) + xl + 160 * T, qb, qs, d, c1, c2);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[T][i] += d[i] + (c1[i] + c2[i]);
    }
    float* op = c.out + p * c.out_batch;
#pragma unroll
    for (int T = 0; T < NT; ++T) {
      const int j0 = 128 * T + g + 32 * t;
      const int js[4] = {j0, j0 + 16, j0 + 8, j0 + 24};
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (js[i] < c.lout) op[js[i] * c.out_step] = acc[T][i];
    }
  }
}

static tc_layout layout_of(const cview& c) {
  tc_layout y{};
  const int NT = (c.lout + 127) / 128;
  const int S = (c.la + 15 + 7) / 8 * 8;
  y.ta_len = S + 16;
  y.L = 128 * NT + S - 16;
  y.xs_len = (y.L + 4 * (y.L >> 4) + 8 + 3) / 4 * 4;
  y.nchunk = S / 64;
  y.nrem = (S % 64) / 8;
  for (int T = 0; T < 8; ++T) {
    const int J = 128 * T;
    int lo = c.lead - J - 119;
    lo = lo <= 0 ? 0 : (lo + 7) / 8 * 8;
    int hi = std::min(S, c.lead + c.lx - J);
    if (T >= NT || hi <= lo) lo = hi = 0;
    y.lo[T] = lo;
    y.hi[T] = hi;
  }
  return y;
}

// v4: steps outer over a window of S tile slots (the band's tiles of a 64-tap
// chunk, first tile t0[c] per chunk), X pre-split into 16-byte records
// (big X_u, big X_u+4, small X_u, small X_u+4) for u = 8q + t, t < 4, with
// an XOR swizzle (bit 2 ^= bit 3) so a B fragment pair is one conflict-free
// LDS.128; taps as round 13's (a_i, a_i-8) records; 16-byte cp.async
// staging with zero fill by src-size; chunk sums added into a shared output
// slab (natural order, 8 pad words per 32), written out coalesced.
struct v4_layout {
  int nsteps;   // k-steps of 8 taps
  int ta_len;   // tap records
  int L;        // X row elements (u in [0, L))
  int xrec;     // X records (16 bytes each), multiple of 8
  int rawx;     // raw X floats, multiple of 4
  int slab;     // slab floats (tiles up to max t0 + S, 160 each)
  int nt_slab;  // tiles in the slab
  int t0[16];   // first tile of chunk c
  __host__ __device__ std::size_t warp_bytes5() const {
    return std::size_t{8} * xrec + 16 * std::size_t(ta_len) +
           4 * std::size_t(rawx > slab ? rawx : slab);
  }
  __host__ __device__ std::size_t warp_bytes() const {
    return std::size_t{16} * xrec + 16 * std::size_t(ta_len) +
           4 * std::size_t(rawx > slab ? rawx : slab);
  }
};

__device__ __forceinline__ void cpa16(void* dst, const void* src, int bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ int xsw(int e) {
  return e ^ ((e >> 1) & 4);
}

template <int S>
__device__ __forceinline__ void v4_step(const uint2* PB, const uint2* PS, int k, const uint4* xr,
                                        float (&d)[S][4], float (&e)[S][4]) {
  const uint2 b0 = PB[k], b1 = PB[k + 4], s0 = PS[k], s1 = PS[k + 4];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const uint4 r = xr[64 * s];
    mma8(d[s], b0.x, b0.y, b1.x, b1.y, r.x, r.y);
    mma8(e[s], b0.x, b0.y, b1.x, b1.y, r.z, r.w);
    mma8(e[s], s0.x, s0.y, s1.x, s1.y, r.x, r.y);
  }
}

template <int S, int W, int MB>
__global__ void __launch_bounds__(32 * W, MB) v4_kernel(cview c, v4_layout y) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  unsigned char* base = smem + warp * y.warp_bytes();
  uint4* XR = reinterpret_cast<uint4*>(base);
  uint2* PB = reinterpret_cast<uint2*>(base + std::size_t{16} * y.xrec);
  uint2* PS = PB + y.ta_len;
  // raw X shares the slab's place, raw taps the end of the X records (each
  // read before its place is written)
  float* slab = reinterpret_cast<float*>(PS + y.ta_len);
  float* rx = slab;
  float* rt = reinterpret_cast<float*>(XR) + 4 * y.xrec - (c.la + 48 + 3) / 4 * 4;
  const long long p = static_cast<long long>(blockIdx.x) * W + warp;
  if (p >= c.batch) return;
  int sh;
  // staging: raw X (chunk i: X index 4 i - sh - lead), raw taps (rt[24 + j]
  // = operand element j in memory order, zeros around)
  {
    const float* xp = c.x + p * c.x_batch;
    // raw index u + sh with sh such that 16-byte chunks of the row are
    // 16-byte chunks of x
    const int mis = static_cast<int>((reinterpret_cast<std::uintptr_t>(xp) >> 2) & 3);
    sh = ((mis - c.lead) % 4 + 4) % 4;
    const int nch = y.rawx / 4;
    for (int i = lane; i < nch; i += 32) {
      const int tx = 4 * i - sh - c.lead;
      if (tx < 0 && tx > -4) {  // the operand's first chunk starts inside
#pragma unroll
        for (int k = 0; k < 4; ++k) rx[4 * i + k] = tx + k >= 0 && tx + k < c.lx ? xp[tx + k] : 0.f;
        continue;
      }
      const int n = tx >= 0 ? min(4, c.lx - tx) : 0;
      cpa16(rx + 4 * i, n > 0 ? xp + tx : xp, n > 0 ? 4 * n : 0);
    }
    const float* ap = c.a + p * c.a_batch - (c.a_step < 0 ? c.la - 1 : 0);
    const int ach = (c.la + 3) / 4;
    for (int i = lane; i < ach; i += 32) {
      const int n = min(4, c.la - 4 * i);
      cpa16(rt + 24 + 4 * i, ap + 4 * i, 4 * n);
    }
    for (int i = lane; i < 24; i += 32) rt[i] = 0.f;
    for (int i = 24 + 4 * ach + lane; i < c.la + 48; i += 32) rt[i] = 0.f;
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncwarp();
    // tap records k (tap i = k - 16): (a_i, a_{i-8}) big (rna) and small
    const bool rev = c.a_step < 0;
    for (int k = lane; k < y.ta_len; k += 32) {
      const int i = k - 16;
      const float v = rt[rev ? 24 + c.la - 1 - i : 24 + i];
      const float w = rt[rev ? 24 + c.la - 1 - (i - 8) : 24 + i - 8];
      const unsigned bv = tf32(v), bw = tf32(w);
      PB[k] = make_uint2(bv, bw);
      PS[k] = make_uint2(__float_as_uint(v - __uint_as_float(bv)),
                         __float_as_uint(w - __uint_as_float(bw)));
    }
    __syncwarp();  // raw taps read: the X records may overwrite them
    // X records: group q = u / 8 -> records 4 q + t, t < 4
    constexpr unsigned mask = 0xffffe000u;
    for (int q = lane; q < y.xrec / 4; q += 32) {
      const float* r = rx + 8 * q + sh;
      float v[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) v[i] = r[i];
#pragma unroll
      for (int tt = 0; tt < 4; ++tt) {
        const float a = v[tt], b = v[tt + 4];
        const float sa = a - __uint_as_float(__float_as_uint(a) & mask);
        const float sb = b - __uint_as_float(__float_as_uint(b) & mask);
        XR[xsw(4 * q + tt)] = make_uint4(__float_as_uint(a), __float_as_uint(b),
                                         __float_as_uint(sa), __float_as_uint(sb));
      }
    }
    __syncwarp();
    float4* z = reinterpret_cast<float4*>(slab);
    for (int i = lane; i < y.slab / 4; i += 32) z[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    __syncwarp();
  }
  // lane parts of the record index e = 8 g + t + 4 o + 8 k' (o = step parity):
  // xsw(E + 8 k') = (E ^ (4 ((E >> 3) + k') & 4)) + 8 k'
  int q[2][2];
#pragma unroll
  for (int o = 0; o < 2; ++o)
#pragma unroll
    for (int par = 0; par < 2; ++par) {
      const int E = 8 * g + t + 4 * o;
      q[o][par] = E ^ ((((E >> 3) + par) & 1) << 2);
    }
  const int tl = 16 + t - g;
  const int full = y.nsteps / 8;
  for (int ch = 0; ch * 8 < y.nsteps; ++ch) {
    const int T0 = y.t0[ch];
    const uint4* xb = XR + 64 * T0 + 32 * ch;
    float d[S][4], e[S][4];
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int i = 0; i < 4; ++i) d[s][i] = e[s][i] = 0.f;
    if (ch < full) {
#pragma unroll
      for (int st = 0; st < 8; ++st)
        v4_step<S>(PB, PS, tl + 64 * ch + 8 * st, xb + q[st & 1][(st >> 1) & 1] + 8 * (st >> 1), d,
                   e);
    } else {
      const int rem = y.nsteps - 8 * ch;
#pragma unroll
      for (int st = 0; st < 8; ++st)
        if (st < rem)
          v4_step<S>(PB, PS, tl + 64 * ch + 8 * st, xb + q[st & 1][(st >> 1) & 1] + 8 * (st >> 1),
                     d, e);
    }
    // chunk sums into the slab: output j = 128 T + g + 32 t + {0, 16, 8, 24}
    // at j + 8 (j >> 5)
#pragma unroll
    for (int s = 0; s < S; ++s) {
      float* o = slab + 160 * (T0 + s) + g + 40 * t;
      o[0] += d[s][0] + e[s][0];
      o[16] += d[s][1] + e[s][1];
      o[8] += d[s][2] + e[s][2];
      o[24] += d[s][3] + e[s][3];
    }
  }
  __syncwarp();
  float* op = c.out + p * c.out_batch;
  for (int j = lane, m = 0; j < c.lout; j += 32, ++m) op[j * c.out_step] = slab[lane + 40 * m];
}

// host: the layout of c for S slots (false when some chunk has more active
// tiles than S)
template <int S>
static bool v4_layout_of(const cview& c, v4_layout& y) {
  y = v4_layout{};
  const int NT = (c.lout + 127) / 128;
  const int Staps = (c.la + 15 + 7) / 8 * 8;
  y.nsteps = Staps / 8;
  y.ta_len = Staps + 16;
  const int nchunks = (y.nsteps + 7) / 8;
  if (nchunks > 16) return false;
  int tmax = 0;
  for (int ch = 0; ch < nchunks; ++ch) {
    int lo = NT, hi = -1;
    for (int T = 0; T < NT; ++T) {
      // any (output j of T, tap k of the chunk's steps) inside the band
      bool act = false;
      const int s_lo = 64 * ch, s_hi = std::min(Staps, 64 * ch + 64);
      for (int r = 0; r < 16 && !act; ++r)
        for (int cc = 0; cc < 8 && !act; ++cc) {
          const int j = 128 * T + r + 16 * cc;
          if (j >= c.lout) continue;
          const int k_lo = std::max(0, s_lo - r), k_hi = std::min(c.la, s_hi - r);
          for (int k = k_lo; k < k_hi; ++k)
            if (j + k >= c.lead && j + k < c.lead + c.lx) {
              act = true;
              break;
            }
        }
      if (act) lo = std::min(lo, T), hi = std::max(hi, T);
    }
    if (hi < 0) lo = hi = 0;
    if (hi - lo + 1 > S) return false;
    lo = std::max(0, std::min(lo, hi + 1 - S));  // the window inside [0, ...)
    y.t0[ch] = lo;
    tmax = std::max(tmax, lo + S);
  }
  y.nt_slab = tmax;
  y.L = 128 * tmax + Staps - 16 + 8;
  y.L = (y.L + 7) / 8 * 8;
  y.xrec = y.L / 2;
  y.xrec = (y.xrec + 7) / 8 * 8;
  y.rawx = (2 * y.xrec + 3 + 8 + 3) / 4 * 4;
  y.slab = 160 * tmax;
  if (4 * y.xrec < (c.la + 48 + 3) / 4 * 4) return false;
  return true;
}

template <int S, int W, int MB>
static void v4_launch(const cview& c, const v4_layout& y, cudaStream_t s) {
  const std::size_t bytes = std::size_t{W} * y.warp_bytes();
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(v4_kernel<S, W, MB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            227 * 1024));
    CK(cudaFuncSetAttribute(v4_kernel<S, W, MB>, cudaFuncAttributePreferredSharedMemoryCarveout,
                            100));
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, v4_kernel<S, W, MB>));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v4_kernel<S, W, MB>, 32 * W, bytes));
    printf("# v4 S%d W%d MB%d: %d registers, %zu B shared per block, %d blocks per SM\n", S, W, MB,
           fa.numRegs, bytes, occ);
    set = true;
  }
  const int grid = (c.batch + W - 1) / W;
  v4_kernel<S, W, MB><<<grid, 32 * W, bytes, s>>>(c, y);
}

template <int S>
__device__ __forceinline__ void v5_step(const uint2* PB, const uint2* PS, int k, const uint2* xr,
                                        float (&d)[S][4], float (&e)[S][4]) {
  constexpr unsigned mask = 0xffffe000u;
  const uint2 b0 = PB[k], b1 = PB[k + 4], s0 = PS[k], s1 = PS[k + 4];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const uint2 r = xr[64 * s];
    const unsigned zx = __float_as_uint(__uint_as_float(r.x) - __uint_as_float(r.x & mask));
    const unsigned zy = __float_as_uint(__uint_as_float(r.y) - __uint_as_float(r.y & mask));
    mma8(d[s], b0.x, b0.y, b1.x, b1.y, r.x, r.y);
    mma8(e[s], b0.x, b0.y, b1.x, b1.y, zx, zy);
    mma8(e[s], s0.x, s0.y, s1.x, s1.y, r.x, r.y);
  }
}

template <int S, int W, int MB>
__global__ void __launch_bounds__(32 * W, MB) v5_kernel(cview c, v4_layout y) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  unsigned char* base = smem + warp * y.warp_bytes5();
  uint2* XR = reinterpret_cast<uint2*>(base);
  uint2* PB = reinterpret_cast<uint2*>(base + std::size_t{8} * y.xrec);
  uint2* PS = PB + y.ta_len;
  // raw X shares the slab's place, raw taps the end of the X records (each
  // read before its place is written)
  float* slab = reinterpret_cast<float*>(PS + y.ta_len);
  float* rx = slab;
  float* rt = reinterpret_cast<float*>(XR) + 2 * y.xrec - (c.la + 48 + 3) / 4 * 4;
  const long long p = static_cast<long long>(blockIdx.x) * W + warp;
  if (p >= c.batch) return;
  int sh;
  // staging: raw X (chunk i: X index 4 i - sh - lead), raw taps (rt[24 + j]
  // = operand element j in memory order, zeros around)
  {
    const float* xp = c.x + p * c.x_batch;
    // raw index u + sh with sh such that 16-byte chunks of the row are
    // 16-byte chunks of x
    const int mis = static_cast<int>((reinterpret_cast<std::uintptr_t>(xp) >> 2) & 3);
    sh = ((mis - c.lead) % 4 + 4) % 4;
    const int nch = y.rawx / 4;
    for (int i = lane; i < nch; i += 32) {
      const int tx = 4 * i - sh - c.lead;
      if (tx < 0 && tx > -4) {  // the operand's first chunk starts inside
#pragma unroll
        for (int k = 0; k < 4; ++k) rx[4 * i + k] = tx + k >= 0 && tx + k < c.lx ? xp[tx + k] : 0.f;
        continue;
      }
      const int n = tx >= 0 ? min(4, c.lx - tx) : 0;
      cpa16(rx + 4 * i, n > 0 ? xp + tx : xp, n > 0 ? 4 * n : 0);
    }
    const float* ap = c.a + p * c.a_batch - (c.a_step < 0 ? c.la - 1 : 0);
    const int ach = (c.la + 3) / 4;
    for (int i = lane; i < ach; i += 32) {
      const int n = min(4, c.la - 4 * i);
      cpa16(rt + 24 + 4 * i, ap + 4 * i, 4 * n);
    }
    for (int i = lane; i < 24; i += 32) rt[i] = 0.f;
    for (int i = 24 + 4 * ach + lane; i < c.la + 48; i += 32) rt[i] = 0.f;
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncwarp();
    // tap records k (tap i = k - 16): (a_i, a_{i-8}) big (rna) and small
    const bool rev = c.a_step < 0;
    for (int k = lane; k < y.ta_len; k += 32) {
      const int i = k - 16;
      const float v = rt[rev ? 24 + c.la - 1 - i : 24 + i];
      const float w = rt[rev ? 24 + c.la - 1 - (i - 8) : 24 + i - 8];
      const unsigned bv = tf32(v), bw = tf32(w);
      PB[k] = make_uint2(bv, bw);
      PS[k] = make_uint2(__float_as_uint(v - __uint_as_float(bv)),
                         __float_as_uint(w - __uint_as_float(bw)));
    }
    __syncwarp();  // raw taps read: the X records may overwrite them
    // X records: group q = u / 8 -> records 4 q + t = (X_u, X_u+4), t < 4,
    // swizzled as a contiguous 32-byte group
    for (int q = lane; q < y.xrec / 4; q += 32) {
      const float* r = rx + 8 * q + sh;
      float v[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) v[i] = r[i];
      uint4* o = reinterpret_cast<uint4*>(XR + 4 * (q ^ ((q >> 2) & 1)));
      o[0] = make_uint4(__float_as_uint(v[0]), __float_as_uint(v[4]), __float_as_uint(v[1]),
                        __float_as_uint(v[5]));
      o[1] = make_uint4(__float_as_uint(v[2]), __float_as_uint(v[6]), __float_as_uint(v[3]),
                        __float_as_uint(v[7]));
    }
    __syncwarp();
    float4* z = reinterpret_cast<float4*>(slab);
    for (int i = lane; i < y.slab / 4; i += 32) z[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    __syncwarp();
  }
  // lane parts of the record index e = 8 g + t + 4 o + 8 k' (o = step
  // parity, k' % 4 = st / 2): xsw8(E + 8 k') = (E ^ (((g + k') >> 1 & 1) << 2)) + 8 k'
  int q[2][4];
#pragma unroll
  for (int o = 0; o < 2; ++o)
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) q[o][kk] = (8 * g + t + 4 * o) ^ ((((g + kk) >> 1) & 1) << 2);
  const int tl = 16 + t - g;
  const int full = y.nsteps / 8;
  for (int ch = 0; ch * 8 < y.nsteps; ++ch) {
    const int T0 = y.t0[ch];
    const uint2* xb = XR + 64 * T0 + 32 * ch;
    float d[S][4], e[S][4];
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int i = 0; i < 4; ++i) d[s][i] = e[s][i] = 0.f;
    if (ch < full) {
#pragma unroll
      for (int st = 0; st < 8; ++st)
        v5_step<S>(PB, PS, tl + 64 * ch + 8 * st, xb + q[st & 1][st >> 1] + 8 * (st >> 1), d, e);
    } else {
      const int rem = y.nsteps - 8 * ch;
#pragma unroll
      for (int st = 0; st < 8; ++st)
        if (st < rem)
          v5_step<S>(PB, PS, tl + 64 * ch + 8 * st, xb + q[st & 1][st >> 1] + 8 * (st >> 1), d, e);
    }
    // chunk sums into the slab: output j = 128 T + g + 32 t + {0, 16, 8, 24}
    // at j + 8 (j >> 5)
#pragma unroll
    for (int s = 0; s < S; ++s) {
      float* o = slab + 160 * (T0 + s) + g + 40 * t;
      o[0] += d[s][0] + e[s][0];
      o[16] += d[s][1] + e[s][1];
      o[8] += d[s][2] + e[s][2];
      o[24] += d[s][3] + e[s][3];
    }
  }
  __syncwarp();
  float* op = c.out + p * c.out_batch;
  for (int j = lane, m = 0; j < c.lout; j += 32, ++m) op[j * c.out_step] = slab[lane + 40 * m];
}

template <int S, int W, int MB>
static void v5_launch(const cview& c, const v4_layout& y, cudaStream_t s) {
  const std::size_t bytes = std::size_t{W} * y.warp_bytes5();
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(v5_kernel<S, W, MB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            227 * 1024));
    CK(cudaFuncSetAttribute(v5_kernel<S, W, MB>, cudaFuncAttributePreferredSharedMemoryCarveout,
                            100));
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, v5_kernel<S, W, MB>));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v5_kernel<S, W, MB>, 32 * W, bytes));
    printf("# v5 S%d W%d MB%d: %d registers, %zu B shared per block, %d blocks per SM\n", S, W, MB,
           fa.numRegs, bytes, occ);
    set = true;
  }
  const int grid = (c.batch + W - 1) / W;
  v5_kernel<S, W, MB><<<grid, 32 * W, bytes, s>>>(c, y);
}
namespace mc = marg::detail::cuda;

static mc::correlation_view<float> to_pairs(const cview& v) {
  mc::correlation_view<float> c{};
  c.a = v.a, c.a_step = v.a_step, c.a_batch = v.a_batch, c.la = v.la;
  c.x = v.x, c.x_step = v.x_step, c.x_batch = v.x_batch, c.lx = v.lx, c.lead = v.lead;
  c.out = v.out, c.out_step = v.out_step, c.out_batch = v.out_batch, c.lout = v.lout;
  c.batch = v.batch;
  return c;
}

static std::size_t one_less = 0;
static void pairs_lib(const cview& v, cudaStream_t s) {
  const auto c = to_pairs(v);
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(mc::kernel_banded_pairs<float>,
                            cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    set = true;
  }
  const mc::pairs_layout y = mc::pairs_layout_host(c);
  // the library's grid rule (pairs.cu)
  const long long need = (c.batch + 3) / 4, slots = 4LL * 132;
  const long long rounds = std::max(1LL, (need + slots - 1) / slots);
  const bool full = 100 * need >= 90 * rounds * slots;
  const long long blocks = full ? (need + rounds - 1) / rounds : need;
  std::size_t bytes = y.bytes<float>();
  if (bytes < one_less && one_less <= 48 * 1024) bytes = one_less;
  mc::kernel_banded_pairs<float><<<blocks, 128, bytes, s>>>(c, y);
}

template <int NT, int W, int MB, bool Ilp>
static void old_launch(const cview& c, cudaStream_t s) {
  const tc_layout y = layout_of(c);
  const std::size_t bytes = std::size_t{W} * (16 * y.ta_len + 4 * y.xs_len + 4 * (y.ta_len + 8));
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(tc_kernel<NT, W, MB, Ilp>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            227 * 1024));
    CK(cudaFuncSetAttribute(tc_kernel<NT, W, MB, Ilp>,
                            cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    set = true;
  }
  tc_kernel<NT, W, MB, Ilp><<<(c.batch + W - 1) / W, 32 * W, bytes, s>>>(c, y);
}

template <int S, int W, int MB>
static void v5_run(const cview& c, cudaStream_t s) {
  // the layout once per shape (its host search takes ~86 us for conv 512,
  // more than the kernel: computed per launch it made the bursts host-bound)
  static v4_layout y;
  static long long key = -1;
  const long long k =
      ((static_cast<long long>(c.la) * 4096 + c.lx) * 4096 + c.lead) * 4096 + c.lout;
  if (k != key && (key = k, !v4_layout_of<S>(c, y))) {
    printf("v5 S%d: shape does not fit\n", S);
    exit(1);
  }
  v5_launch<S, W, MB>(c, y, s);
}
template <int S, int W, int MB>
static void v4_run(const cview& c, cudaStream_t s) {
  // the layout once per shape (its host search takes ~86 us for conv 512,
  // more than the kernel: computed per launch it made the bursts host-bound)
  static v4_layout y;
  static long long key = -1;
  const long long k =
      ((static_cast<long long>(c.la) * 4096 + c.lx) * 4096 + c.lead) * 4096 + c.lout;
  if (k != key && (key = k, !v4_layout_of<S>(c, y))) {
    printf("v4 S%d: shape does not fit\n", S);
    exit(1);
  }
  v4_launch<S, W, MB>(c, y, s);
}

typedef void (*launcher)(const cview&, cudaStream_t);
struct problem {
  const char* name;
  int op;  // 0 convolve, 1 grad_p
  int m, n, batch;
};

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  const int reps = argc > 2 ? atoi(argv[2]) : 1;
  const int only_l = argc > 3 ? atoi(argv[3]) : -1;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("# %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  int per_sm = 0, reserved = 0;
  CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  CK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, 0));
  one_less = per_sm / 5 - reserved + 16;
  const problem probs[] = {{"conv 4096x512", 0, 512, 512, 4096},
                           {"grad_p 4096x512", 1, 512, 512, 4096},
                           {"conv 3000x512", 0, 512, 512, 3000},
                           {"conv 4096x500x512", 0, 500, 512, 4096}};
  const int sets = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> U(0.001f, 1.f);
  int pi = -1;
  for (const problem& pr : probs) {
    if (++pi, only >= 0 && pi != only) continue;
    const int m = pr.m, n = pr.n, r = m + n - 1, B = pr.batch;
    const int la_ = pr.op == 0 ? m : n, lx_ = pr.op == 0 ? n : r, lout_ = pr.op == 0 ? r : m;
    std::vector<float> ha(std::size_t{la_} * B), hx(std::size_t{lx_} * B);
    for (auto& v : ha) v = U(rng);
    for (auto& v : hx) v = U(rng);
    float *da[sets], *dx[sets], *dout[sets];
    for (int s = 0; s < sets; ++s) {
      CK(cudaMalloc(&da[s], ha.size() * 4));
      CK(cudaMalloc(&dx[s], hx.size() * 4));
      CK(cudaMalloc(&dout[s], std::size_t{lout_} * B * 4));
      CK(cudaMemcpy(da[s], ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dx[s], hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
    }
    auto view = [&](int s) {
      cview c{};
      c.la = la_;
      c.a_batch = la_;
      if (pr.op == 0) {  // taps = p reversed
        c.a = da[s] + (la_ - 1);
        c.a_step = -1;
        c.lead = la_ - 1;
      } else {
        c.a = da[s];
        c.a_step = 1;
        c.lead = 0;
      }
      c.x = dx[s];
      c.x_step = 1;
      c.x_batch = lx_;
      c.lx = lx_;
      c.out = dout[s];
      c.out_step = 1;
      c.out_batch = lout_;
      c.lout = lout_;
      c.batch = B;
      return c;
    };
    std::vector<std::pair<const char*, launcher>> ls;
    ls.push_back({"pairs (library)", pairs_lib});
    if (pr.op == 0) {
      ls.push_back({"r13 NT8 W4 mb2", old_launch<8, 4, 2, false>});
      ls.push_back({"v4 S5 W1", v4_run<5, 1, 1>});
      ls.push_back({"v4 S5 W2", v4_run<5, 2, 1>});
      ls.push_back({"v4 S5 W4", v4_run<5, 4, 1>});
      ls.push_back({"v5 S5 W1", v5_run<5, 1, 1>});
      ls.push_back({"v5 S5 W2", v5_run<5, 2, 1>});
      ls.push_back({"v5 S5 W4", v5_run<5, 4, 1>});
    } else {
      ls.push_back({"r13 NT4 W4 mb3 ilp", old_launch<4, 4, 3, true>});
      ls.push_back({"v4 S4 W1", v4_run<4, 1, 1>});
      ls.push_back({"v4 S4 W2", v4_run<4, 2, 1>});
      ls.push_back({"v4 S4 W4", v4_run<4, 4, 1>});
      ls.push_back({"v5 S4 W1", v5_run<4, 1, 1>});
      ls.push_back({"v5 S4 W2", v5_run<4, 2, 1>});
      ls.push_back({"v5 S4 W4", v5_run<4, 4, 1>});
    }
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    for (int rep = 0; rep < reps; ++rep)
      for (std::size_t li = 0; li < ls.size(); ++li) {
        if (only_l >= 0 && static_cast<int>(li) != only_l) continue;
        auto& [nm, fn] = ls[li];
        CK(cudaMemset(dout[0], 0xff, std::size_t{lout_} * B * 4));
        fn(view(0), st);
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        std::vector<float> ho(std::size_t{lout_} * B);
        CK(cudaMemcpy(ho.data(), dout[0], ho.size() * 4, cudaMemcpyDeviceToHost));
        double worst = 0;
        int checked = 0;
        std::vector<int> probe;
        for (int b = 0; b < B; b += 67) probe.push_back(b);
        probe.push_back(B - 1);
        for (int b : probe) {
          ++checked;
          const float* pa = ha.data() + std::size_t{la_} * b;
          const float* px = hx.data() + std::size_t{lx_} * b;
          for (int j = 0; j < lout_; ++j) {
            long double sref = 0;
            for (int k = 0; k < la_; ++k) {
              const float ak = pr.op == 0 ? pa[la_ - 1 - k] : pa[k];
              const int tt = j + k - (pr.op == 0 ? la_ - 1 : 0);
              if (tt >= 0 && tt < lx_) sref += static_cast<long double>(ak) * px[tt];
            }
            const double got = ho[std::size_t{lout_} * b + j];
            const double e = std::fabs(got - static_cast<double>(sref)) / static_cast<double>(sref);
            if (!(e <= worst)) worst = std::isnan(e) ? 1e9 : std::max(worst, e);
          }
        }
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (int w = 0; w < 6; ++w) fn(view(w % sets), st);
        std::vector<float> samp;
        for (int k = 0; k < 9; ++k) {
          CK(cudaEventRecord(e0, st));
          for (int i = 0; i < 20; ++i) fn(view(i % sets), st);
          CK(cudaEventRecord(e1, st));
          CK(cudaEventSynchronize(e1));
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          samp.push_back(ms * 1000 / 20);
        }
        std::sort(samp.begin(), samp.end());
        printf("%-18s %-20s median %8.2f us  min %8.2f  max_rel_err %.3g (%d problems)\n", pr.name,
               nm, samp[samp.size() / 2], samp[0], worst, checked);
      }
    for (int s = 0; s < sets; ++s) {
      CK(cudaFree(da[s]));
      CK(cudaFree(dx[s]));
      CK(cudaFree(dout[s]));
    }
    CK(cudaStreamDestroy(st));
  }
  return 0;
}
