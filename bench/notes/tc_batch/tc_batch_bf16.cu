// Issue 10 experiment (session 8), NOT built by CMake: tc_batch.cu with both
// 3xTF32 corrections in one bf16 m16n8k16 product per step (taps split
// into tf32 big + small, X truncated, the k order permuted so a lane's two X
// values are adjacent). Measured no faster and 7x less accurate (4.3e-6):
// bench/notes/tc_batch.md.
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
__device__ __forceinline__ void mma16(float (&d)[4], uint4 a, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}
// bf16x2 of (lo, hi), rounded to nearest
__device__ __forceinline__ unsigned bf2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
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
  // tap records k (tap i = k - 16): PB[k] = (tf32 a_i, tf32 a_{i-8});
  // BQ[k] = bf16x2 (A_i, A_{i+1}), (A_{i-8}, A_{i-7}), (S_i, S_{i+1}), (S_{i-8}, S_{i-7})
  uint4* BQ = reinterpret_cast<uint4*>(smem) + warp * y.ta_len;
  uint2* PB = reinterpret_cast<uint2*>(smem + std::size_t{16} * W * y.ta_len) + warp * y.ta_len;
  float* xs = reinterpret_cast<float*>(smem + std::size_t{24} * W * y.ta_len) + warp * y.xs_len;
  float* tr = reinterpret_cast<float*>(smem + std::size_t{24} * W * y.ta_len +
                                       std::size_t{4} * W * y.xs_len) +
              warp * (y.ta_len + 32);
  const int tl = 16 + 2 * t - g;
  const int xl = 24 * g + 2 * t;
  for (long long p = static_cast<long long>(blockIdx.x) * W + warp; p < c.batch;
       p += static_cast<long long>(gridDim.x) * W) {
    __syncwarp();
    const float* xp = c.x + p * c.x_batch;
    const int u_lo = min(max(c.lead, 0), y.L), u_hi = min(c.lead + c.lx, y.L);
    for (int u = lane; u < y.L; u += 32)
      if (u < u_lo || u >= u_hi) xs[u + 8 * (u >> 4)] = 0.f;
    for (int u = u_lo + lane; u < u_hi; u += 32)
      cpa(xs + u + 8 * (u >> 4), xp + (u - c.lead) * c.x_step, true);
    // raw taps: tr[i + 24] = a_i for i in [-24, ta_len + 8)
    const float* ap = c.a + p * c.a_batch;
    for (int k = lane; k < y.ta_len + 32; k += 32)
      if (static_cast<unsigned>(k - 24) >= static_cast<unsigned>(c.la)) tr[k] = 0.f;
    for (int i = lane; i < c.la; i += 32) cpa(tr + i + 24, ap + i * c.a_step, true);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    __syncwarp();
    for (int k = lane; k < y.ta_len; k += 32) {
      // taps i = k - 16 and i + 1, i - 8, i - 7 at tr[k + 8], tr[k + 9], tr[k], tr[k + 1]
      const float v0 = tr[k + 8], v1 = tr[k + 9], w0 = tr[k], w1 = tr[k + 1];
      const unsigned b0 = tf32(v0), b1 = tf32(v1), c0 = tf32(w0), c1 = tf32(w1);
      PB[k] = make_uint2(b0, c0);
      const float B0 = __uint_as_float(b0), B1 = __uint_as_float(b1), C0 = __uint_as_float(c0),
                  C1 = __uint_as_float(c1);
      BQ[k] = make_uint4(bf2(B0, B1), bf2(C0, C1), bf2(v0 - B0, v1 - B1), bf2(w0 - C0, w1 - C1));
    }
    __syncwarp();

    float acc[NT][4];
#pragma unroll
    for (int T = 0; T < NT; ++T)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[T][i] = 0.f;

    // one step of a tile: X values u, u + 1 at xq; main tf32 product and
    // both corrections in one bf16 product
    auto step = [&](const float* xq, const uint2(&qa)[2], const uint4& qb, float(&d)[4],
                    float(&cc)[4]) {
      const float2 v = *reinterpret_cast<const float2*>(xq);
      const float r0 = v.x - __uint_as_float(__float_as_uint(v.x) & 0xffffe000u);
      const float r1 = v.y - __uint_as_float(__float_as_uint(v.y) & 0xffffe000u);
      mma8(d, qa[0].x, qa[0].y, qa[1].x, qa[1].y, __float_as_uint(v.x), __float_as_uint(v.y));
      mma16(cc, qb, bf2(r0, r1), bf2(v.x, v.y));
    };

    int c0 = 0;
    for (int ch = 0; ch < y.nchunk; ++ch, c0 += 64) {
      const float* xc = xs + c0 + c0 / 2 + xl;
      if constexpr (Ilp) {
        float d[NT][4], cc[NT][4];
#pragma unroll
        for (int T = 0; T < NT; ++T)
#pragma unroll
          for (int i = 0; i < 4; ++i) d[T][i] = cc[T][i] = 0.f;
#pragma unroll
        for (int st = 0; st < 8; ++st) {
          const int k = tl + c0 + 8 * st;
          const uint2 qa[2] = {PB[k], PB[k + 1]};
          const uint4 qb = BQ[k];
#pragma unroll
          for (int T = 0; T < NT; ++T)
            step(xc + 192 * T + 8 * st + 8 * (st >> 1), qa, qb, d[T], cc[T]);
        }
#pragma unroll
        for (int T = 0; T < NT; ++T)
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[T][i] += d[T][i] + cc[T][i];
      } else {
        uint2 qa[8][2];
        uint4 qb[8];
#pragma unroll
        for (int st = 0; st < 8; ++st) {
          const int k = tl + c0 + 8 * st;
          qa[st][0] = PB[k];
          qa[st][1] = PB[k + 1];
          qb[st] = BQ[k];
        }
#pragma unroll
        for (int T = 0; T < NT; ++T) {
          if (!(y.lo[T] < c0 + 64 && y.hi[T] > c0)) continue;
          float d[2][4], cc[2][4];
#pragma unroll
          for (int e = 0; e < 2; ++e)
#pragma unroll
            for (int i = 0; i < 4; ++i) d[e][i] = cc[e][i] = 0.f;
#pragma unroll
          for (int st = 0; st < 8; ++st)
            step(xc + 192 * T + 8 * st + 8 * (st >> 1), qa[st], qb[st], d[st & 1], cc[st & 1]);
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[T][i] += (d[0][i] + d[1][i]) + (cc[0][i] + cc[1][i]);
        }
      }
    }
    // remaining steps, one at a time
#pragma unroll
    for (int T = 0; T < NT; ++T) {
      float d[4] = {0.f, 0.f, 0.f, 0.f}, cc[4] = {0.f, 0.f, 0.f, 0.f};
      for (int st = 0, s0 = c0; st < y.nrem; ++st, s0 += 8) {
        if (!(y.lo[T] <= s0 && s0 < y.hi[T])) continue;
        const int k = tl + s0;
        const uint2 qa[2] = {PB[k], PB[k + 1]};
        step(xs + s0 + 8 * (s0 >> 4) + xl + 192 * T, qa, BQ[k], d, cc);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[T][i] += d[i] + cc[i];
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
  y.ta_len = S + 24;
  y.L = 128 * NT + S - 16;
  y.xs_len = (y.L + 8 * (y.L >> 4) + 16 + 3) / 4 * 4;
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
  const std::size_t bytes = std::size_t{W} * (24 * y.ta_len + 4 * y.xs_len + 4 * (y.ta_len + 32));
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
      ls.push_back({"NT4 W4 mb3", launch<4, 4, 3>});
      ls.push_back({"NT4 W4 mb4", launch<4, 4, 4>});
      ls.push_back({"NT4 W4 mb3 ilp", launch<4, 4, 3, true>});
      ls.push_back({"NT4 W4 mb2 ilp", launch<4, 4, 2, true>});
    } else {
      ls.push_back({"NT8 W4 mb3", launch<8, 4, 3>});
      ls.push_back({"NT8 W4 mb2", launch<8, 4, 2>});
      ls.push_back({"NT8 W2 mb4", launch<8, 2, 4>});
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
