// Issue 10 experiment (session 9), NOT built by CMake and not part of the
// library: float 4096 pairs of 512 split between the library's FFMA pairs
// kernel (kernels/pairs.cuh, persistent grid of gp blocks, the first np
// problems) and round 13's 3xTF32 mma.sync kernel (the other problems, a
// block per W), launched on two streams so that both run on every SM at once.
// Medians of 9 bursts of 20 calls over 4 buffer sets; worst relative error
// against a long double loop on 65 problems. Results: bench/notes/tc_window.md.
// Build (repo root): nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda
//   -I numeric/include -I numeric/src -o hyb bench/notes/tc_window/hyb.cu
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

namespace mc = marg::detail::cuda;

template <int NT, int W, int MB>
static void mma_launch(const cview& c, const tc_layout& y, cudaStream_t s, int grid) {
  const std::size_t bytes = std::size_t{W} * (16 * y.ta_len + 4 * y.xs_len + 4 * (y.ta_len + 8));
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(tc_kernel<NT, W, MB, false>,
                            cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    CK(cudaFuncSetAttribute(tc_kernel<NT, W, MB, false>,
                            cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, tc_kernel<NT, W, MB, false>));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tc_kernel<NT, W, MB, false>, 32 * W,
                                                     bytes));
    printf("# mma NT%d W%d MB%d: %d registers, %zu B shared per block, %d blocks per SM alone\n",
           NT, W, MB, fa.numRegs, bytes, occ);
    set = true;
  }
  if (c.batch <= 0) return;
  const int g = grid > 0 ? grid : (c.batch + W - 1) / W;
  tc_kernel<NT, W, MB, false><<<g, 32 * W, bytes, s>>>(c, y);
}
typedef void (*mma_fn)(const cview&, const tc_layout&, cudaStream_t, int);

static void pairs_launch(const mc::correlation_view<float>& c, cudaStream_t s, int grid,
                         std::size_t bytes) {
  static bool set = false;
  if (!set) {
    CK(cudaFuncSetAttribute(mc::kernel_banded_pairs<float>,
                            cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, mc::kernel_banded_pairs<float>));
    printf("# pairs: %d registers, layout %lld B shared per block\n", fa.numRegs,
           (long long)mc::pairs_layout_host(c).bytes<float>());
    set = true;
  }
  if (c.batch <= 0) return;
  const mc::pairs_layout y = mc::pairs_layout_host(c);
  const std::size_t b = std::max<std::size_t>(bytes, y.bytes<float>());
  mc::kernel_banded_pairs<float><<<grid, mc::pairs_tuning::threads, b, s>>>(c, y);
}

struct config {
  const char* name;
  int np;              // problems to the pairs kernel (the first np)
  int gp;              // pairs grid (blocks of 4 warps; persistent)
  std::size_t pbytes;  // pairs shared memory per block (padding)
  int mv;              // mma variant
  int gm;              // mma grid (0: a block per W problems)
  bool mma_first;
};

int main(int argc, char** argv) {
  const int B = 4096, m = 512, n = 512, r = m + n - 1;
  const int sets = 4;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("# %s, %d SMs\n", prop.name, sms);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> U(0.001f, 1.f);
  std::vector<float> ha(std::size_t{m} * B), hx(std::size_t{n} * B);
  for (auto& v : ha) v = U(rng);
  for (auto& v : hx) v = U(rng);
  float *da[sets], *dx[sets], *dout[sets];
  for (int s = 0; s < sets; ++s) {
    CK(cudaMalloc(&da[s], ha.size() * 4));
    CK(cudaMalloc(&dx[s], hx.size() * 4));
    CK(cudaMalloc(&dout[s], std::size_t{r} * B * 4));
    CK(cudaMemcpy(da[s], ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx[s], hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
  }
  // convolve: taps = p reversed, x = q, lead m - 1; problems [lo, hi)
  auto pview = [&](int s, int lo, int hi) {
    mc::correlation_view<float> c{};
    c.a = da[s] + std::size_t{m} * lo + (m - 1);
    c.a_step = -1;
    c.a_batch = m;
    c.la = m;
    c.x = dx[s] + std::size_t{n} * lo;
    c.x_step = 1;
    c.x_batch = n;
    c.lx = n;
    c.lead = m - 1;
    c.out = dout[s] + std::size_t{r} * lo;
    c.out_step = 1;
    c.out_batch = r;
    c.lout = r;
    c.batch = hi - lo;
    return c;
  };
  auto mview = [&](int s, int lo, int hi) {
    const auto p = pview(s, lo, hi);
    cview c{};
    c.a = p.a, c.a_step = p.a_step, c.a_batch = p.a_batch, c.la = p.la;
    c.x = p.x, c.x_step = p.x_step, c.x_batch = p.x_batch, c.lx = p.lx, c.lead = p.lead;
    c.out = p.out, c.out_step = p.out_step, c.out_batch = p.out_batch, c.lout = p.lout;
    c.batch = p.batch;
    return c;
  };
  const tc_layout y = layout_of(mview(0, 0, B));
  const mma_fn mv[] = {mma_launch<8, 4, 2>, mma_launch<8, 4, 3>, mma_launch<8, 2, 6>,
                       mma_launch<8, 2, 4>};
  const char* mvn[] = {"NT8W4MB2", "NT8W4MB3", "NT8W2MB6", "NT8W2MB4"};
  // the library's rule for 4096: 512 blocks (two rounds), padding to 4 per SM
  int per_sm = 0, reserved = 0;
  CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  CK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, 0));
  const std::size_t one_less = per_sm / 5 - reserved + 16;
  std::vector<config> cf;
  cf.push_back({"pairs alone (library grid)", B, 512, one_less, 0, 0, false});
  for (int v = 0; v < 4; ++v) cf.push_back({mvn[v], 0, 0, 0, v, 0, false});
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  for (int gpm : {1, 2})
    for (int k : {1, 2, 3})
      for (int v = 0; v < 4; ++v) {
        const int gp = gpm * sms, np = std::min(B, k * 4 * gp);
        cf.push_back({mvn[v], np, gp, 0, v, 0, false});
      }
  // balance probes around the best static splits: mma first
  for (int v = 0; v < 2; ++v) cf.push_back({mvn[v], 2 * 4 * sms, sms, 0, v, 0, true});
  cudaStream_t s0, s1;
  CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  cudaEvent_t fork[20], join[20], e0, e1;
  for (int i = 0; i < 20; ++i) {
    CK(cudaEventCreateWithFlags(&fork[i], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming));
  }
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int ci = -1;
  for (const config& c : cf) {
    if (++ci, only >= 0 && ci != only) continue;
    auto go = [&](int s, int i) {
      const bool two = c.np > 0 && c.np < B;
      if (two) {
        CK(cudaEventRecord(fork[i], s0));
        CK(cudaStreamWaitEvent(s1, fork[i]));
      }
      auto P = [&] { pairs_launch(pview(s, 0, c.np), s0, c.gp, c.pbytes); };
      auto M = [&] { mv[c.mv](mview(s, c.np, B), y, two ? s1 : s0, c.gm); };
      if (c.mma_first)
        M(), P();
      else
        P(), M();
      if (two) {
        CK(cudaEventRecord(join[i], s1));
        CK(cudaStreamWaitEvent(s0, join[i]));
      }
    };
    CK(cudaMemset(dout[0], 0xff, std::size_t{r} * B * 4));
    go(0, 0);
    CK(cudaStreamSynchronize(s0));
    CK(cudaGetLastError());
    std::vector<float> ho(std::size_t{r} * B);
    CK(cudaMemcpy(ho.data(), dout[0], ho.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    int checked = 0;
    std::vector<int> probe;
    for (int b = 0; b < B; b += 67) probe.push_back(b);
    for (int b : {c.np - 1, c.np, B - 1})
      if (b >= 0 && b < B) probe.push_back(b);
    for (int b : probe) {
      ++checked;
      const float* pa = ha.data() + std::size_t{m} * b;
      const float* px = hx.data() + std::size_t{n} * b;
      for (int j = 0; j < r; ++j) {
        long double sref = 0;
        for (int k = std::max(0, j - n + 1); k <= std::min(j, m - 1); ++k)
          sref += static_cast<long double>(pa[k]) * px[j - k];
        const double got = ho[std::size_t{r} * b + j];
        const double e = std::fabs(got - static_cast<double>(sref)) / static_cast<double>(sref);
        if (!(e <= worst)) worst = std::isnan(e) ? 1e9 : std::max(worst, e);
      }
    }
    for (int w = 0; w < 6; ++w) go(w % sets, w);
    std::vector<float> samp;
    for (int k = 0; k < 9; ++k) {
      CK(cudaEventRecord(e0, s0));
      for (int i = 0; i < 20; ++i) go(i % sets, i);
      CK(cudaEventRecord(e1, s0));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      samp.push_back(ms * 1000 / 20);
    }
    std::sort(samp.begin(), samp.end());
    printf("%2d %-28s np %4d gp %3d %s %s median %7.2f us min %7.2f max_rel_err %.3g (%d)\n", ci,
           c.np == B ? "-" : c.name, c.np, c.gp, c.np > 0 && c.np < B ? mvn[c.mv] : "",
           c.mma_first ? "mma-first" : "", samp[samp.size() / 2], samp[0], worst, checked);
  }
  return 0;
}
