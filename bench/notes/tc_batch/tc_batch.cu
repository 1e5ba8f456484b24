// Issue 10 experiment (session 8), NOT built by CMake and not part of the
// library: batched 3xTF32 correlation on mma.sync.m16n8k8, one warp per
// problem, all 128-output tiles of the problem in that warp; taps split once
// into records of (a_i, a_{i-8}) so that a tap fragment is two 8-byte loads;
// X raw in shared memory (4 pad words per 16) split per fragment; taps and X
// staged by cp.async. Template flag Ilp: steps outer, all tiles inner (no
// per-tile skip); else tiles outer with the band's empty tiles skipped.
// Standalone harness: random positive problems, long double reference on 62
// problems, medians of bursts of 20 launches over 4 rotating buffer sets.
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -o tc_batch tc_batch.cu
// Run: ./tc_batch [case [variant]]. Results: bench/notes/tc_batch.md.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

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

template <int NT, int W, int MB, bool Ilp = false>
static void launch(const cview& c, const tc_layout& y, cudaStream_t s) {
  const std::size_t bytes = std::size_t{W} * (16 * y.ta_len + 4 * y.xs_len + 4 * (y.ta_len + 8));
  static bool set = false;
  if (!set) {
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    CK(cudaFuncSetAttribute(tc_kernel<NT, W, MB, Ilp>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            optin));
    CK(cudaFuncSetAttribute(tc_kernel<NT, W, MB, Ilp>,
                            cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    set = true;
  }
  const int grid = (c.batch + W - 1) / W;
  tc_kernel<NT, W, MB, Ilp><<<grid, 32 * W, bytes, s>>>(c, y);
}

struct problem {
  const char* name;
  int op;  // 0 convolve, 1 grad_p
  int m, n, batch;
};

typedef void (*launcher)(const cview&, const tc_layout&, cudaStream_t);

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  const int once = argc > 2 ? atoi(argv[2]) : 0;
  int pi = -1;
  const problem probs[] = {
      {"conv 4096x512", 0, 512, 512, 4096}, {"grad_p 4096x512", 1, 512, 512, 4096},
      {"conv 16384x64", 0, 64, 64, 16384},  {"conv 3000x512", 0, 512, 512, 3000},
      {"conv 8x300x200", 0, 300, 200, 8},   {"grad_p 5x77x400", 1, 77, 400, 5}};
  const int sets = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> U(0.001f, 1.f);
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
      CK(cudaMemset(dout[s], 0xff, std::size_t{lout_} * B * 4));
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
    const tc_layout y = layout_of(view(0));
    const int NT = (lout_ + 127) / 128;
    std::vector<std::pair<const char*, launcher>> ls;
    if (NT <= 1) {
      ls.push_back({"NT1 W4 mb8", launch<1, 4, 8>});
      ls.push_back({"NT1 W4 mb8 ilp", launch<1, 4, 8, true>});
    } else if (NT <= 2) {
      ls.push_back({"NT2 W4 mb4", launch<2, 4, 4>});
    } else if (NT <= 4) {
      ls.push_back({"NT4 W4 mb4", launch<4, 4, 4>});
      ls.push_back({"NT4 W4 mb3 ilp", launch<4, 4, 3, true>});
      ls.push_back({"NT4 W4 mb4 ilp", launch<4, 4, 4, true>});
      ls.push_back({"NT4 W2 mb8 ilp", launch<4, 2, 8, true>});
    } else {
      ls.push_back({"NT8 W4 mb3", launch<8, 4, 3>});
      ls.push_back({"NT8 W4 mb2", launch<8, 4, 2>});
      ls.push_back({"NT8 W2 mb6", launch<8, 2, 6>});
      ls.push_back({"NT8 W1 mb12", launch<8, 1, 12>});
    }
    if (once) {
      ls[once - 1].second(view(0), y, nullptr);
      CK(cudaDeviceSynchronize());
      continue;
    }
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    for (auto& [nm, fn] : ls) {
      // correctness on set 0
      CK(cudaMemset(dout[0], 0xff, std::size_t{lout_} * B * 4));
      fn(view(0), y, st);
      CK(cudaStreamSynchronize(st));
      CK(cudaGetLastError());
      std::vector<float> ho(std::size_t{lout_} * B);
      CK(cudaMemcpy(ho.data(), dout[0], ho.size() * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      const int stride = B > 64 ? B / 61 : 1;
      int checked = 0;
      for (int b = 0; b < B; b += stride, ++checked) {
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
      // timing: bursts of 20 launches rotating sets, 7 samples
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      for (int w = 0; w < 6; ++w) fn(view(w % sets), y, st);
      std::vector<float> samp;
      for (int k = 0; k < 9; ++k) {
        CK(cudaEventRecord(e0, st));
        for (int i = 0; i < 20; ++i) fn(view(i % sets), y, st);
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        samp.push_back(ms * 1000 / 20);
      }
      std::sort(samp.begin(), samp.end());
      cudaFuncAttributes fa{};
      printf("%-18s %-12s median %8.2f us  min %8.2f  max_rel_err %.3g (%d problems)\n", pr.name,
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
