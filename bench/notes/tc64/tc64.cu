// Session 12 prototype: float 64 x 64 batched convolution on 3xTF32
// mma.sync (one warp per problem, Hankel blocks P_m = H_m A and a fold),
// against the library's lane variant. Standalone; not in the build.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "launch.hpp"

using namespace marg::detail;
using namespace marg::detail::cuda;
#define CK(x)                                                                    \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__);          \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

constexpr int N = 64, B = 16384, R = 2 * N - 1, SETS = 7;
constexpr int XS = 96;   // float2 slots of staged X (X index - 55)
constexpr int FS = 184;  // floats per t4 row set of the fold slab (conflict-free)
constexpr int WARP_FLOATS = 2 * XS + 2 * N + 4 * FS;

__device__ __forceinline__ std::uint32_t tf32(float v) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ void mma(float (&d)[4], std::uint32_t a0, std::uint32_t a1,
                                    std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                                    std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// (big, small) of v as tf32 bit patterns stored in floats
__device__ __forceinline__ float2 split(float v) {
  const std::uint32_t b = tf32(v);
  return make_float2(__uint_as_float(b), __uint_as_float(tf32(v - __uint_as_float(b))));
}
__device__ __forceinline__ std::uint32_t u(float v) { return __float_as_uint(v); }

// out[p][j] = sum_k pa[p][k] q[p][j - k]: taps a[k] = pa[63 - k], X[t] = q[t - 63]
template <int D>
__global__ void __launch_bounds__(256) k_tc64(const float* __restrict__ pa,
                                              const float* __restrict__ q,
                                              float* __restrict__ out, int batch) {
  extern __shared__ float4 smem4[];
  const int warp = threadIdx.x >> 5, L = threadIdx.x & 31;
  const int g = L >> 2, t4 = L & 3, o = g + t4;
  float* base = reinterpret_cast<float*>(smem4) + warp * WARP_FLOATS;
  float2* Xs = reinterpret_cast<float2*>(base);
  float2* As = reinterpret_cast<float2*>(base + 2 * XS);
  float* F = base + 2 * XS + 2 * N;
  for (int i = L; i < 2 * XS; i += 32) base[i] = 0.f;
  for (int i = L; i < 4 * FS; i += 32) F[i] = 0.f;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int nw = gridDim.x * (blockDim.x >> 5);
  const int first = blockIdx.x * (blockDim.x >> 5) + warp;
  float2 xr[D], yr[D];
#pragma unroll
  for (int s = 0; s < D; ++s) {
    const int pp = first + s * nw;
    if (pp < batch) {
      xr[s] = __ldg(reinterpret_cast<const float2*>(q + std::int64_t(pp) * N) + L);
      yr[s] = __ldg(reinterpret_cast<const float2*>(pa + std::int64_t(pp) * N) + L);
    }
  }
  __syncwarp();
  for (int p0 = first; p0 < batch; p0 += D * nw) {
#pragma unroll
    for (int s = 0; s < D; ++s) {
      const int pp = p0 + s * nw;
      if (pp >= batch) break;
      const float2 xv = xr[s], yv = yr[s];
      const int pn = pp + D * nw;
      if (pn < batch) {
        xr[s] = __ldg(reinterpret_cast<const float2*>(q + std::int64_t(pn) * N) + L);
        yr[s] = __ldg(reinterpret_cast<const float2*>(pa + std::int64_t(pn) * N) + L);
      }
      // stage: X[63 + 2L + e] = q[2L + e] at slot 8 + 2L + e; taps a[62 - 2L] = pa[2L + 1],
      // a[63 - 2L] = pa[2L]
      {
        const float2 x0 = split(xv.x), x1 = split(xv.y);
        reinterpret_cast<float4*>(Xs)[4 + L] = make_float4(x0.x, x0.y, x1.x, x1.y);
        const float2 a0 = split(yv.y), a1 = split(yv.x);
        reinterpret_cast<float4*>(As)[31 - L] = make_float4(a0.x, a0.y, a1.x, a1.y);
      }
      __syncwarp();
      const float2 bv0 = As[8 * g + t4], bv1 = As[8 * g + t4 + 4];
      float acc[11];
#pragma unroll
      for (int i = 0; i < 5; ++i) {
        // pair m = 7 + 2i, m + 1: a0 = X[8m + o], a1 = +8, a2 = +4, a3 = +12
        const float2 v0 = Xs[1 + o + 16 * i], v2 = Xs[1 + o + 16 * i + 4],
                     v1 = Xs[1 + o + 16 * i + 8], v3 = Xs[1 + o + 16 * i + 12];
        float d[4] = {0.f, 0.f, 0.f, 0.f};
        mma(d, u(v0.y), u(v1.y), u(v2.y), u(v3.y), u(bv0.x), u(bv1.x));
        mma(d, u(v0.x), u(v1.x), u(v2.x), u(v3.x), u(bv0.y), u(bv1.y));
        mma(d, u(v0.x), u(v1.x), u(v2.x), u(v3.x), u(bv0.x), u(bv1.x));
        // u = m - 1, m, m + 1 at acc index 2i, 2i + 1, 2i + 2
        if (i == 0)
          acc[0] = d[1];
        else
          acc[2 * i] += d[1];
        acc[2 * i + 1] = d[0] + d[3];
        acc[2 * i + 2] = d[2];
      }
#pragma unroll
      for (int k = 0; k < 11; ++k) F[t4 * FS + (k + 6) * 8 + g] = acc[k];
      __syncwarp();
      float* o_row = out + std::int64_t(pp) * R;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = (L >> 3) + 4 * i, gg = L & 7;
        float v = F[(r)*8 + gg];
        v += F[FS + (r + 2) * 8 + gg];
        v += F[2 * FS + (r + 4) * 8 + gg];
        v += F[3 * FS + (r + 6) * 8 + gg];
        const int j = L + 32 * i;
        if (j < R) o_row[j] = v;
      }
      __syncwarp();
    }
  }
}

// the same traffic, copied (the floor)
__global__ void __launch_bounds__(256) k_copy(const float* __restrict__ pa,
                                              const float* __restrict__ q,
                                              float* __restrict__ out, int batch) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int warp = threadIdx.x >> 5, L = threadIdx.x & 31;
  const int nw = gridDim.x * (blockDim.x >> 5);
  for (int pp = blockIdx.x * (blockDim.x >> 5) + warp; pp < batch; pp += nw) {
    const float2 xv = __ldg(reinterpret_cast<const float2*>(q + std::int64_t(pp) * N) + L);
    const float2 yv = __ldg(reinterpret_cast<const float2*>(pa + std::int64_t(pp) * N) + L);
    float* o_row = out + std::int64_t(pp) * R;
    o_row[L] = xv.x + yv.x;
    o_row[L + 32] = xv.y + yv.y;
    o_row[L + 64] = xv.x;
    if (L + 96 < R) o_row[L + 96] = yv.y;
  }
}

template <class K>
void launch_pdl(K kernel, int grid, int threads, std::size_t smem, cudaStream_t s,
                const float* pa, const float* q, float* out) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, pa, q, out, B));
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("device %s, %d SMs\n", prop.name, sms);
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> ud(0.01, 1.0);
  std::vector<float*> da(SETS), dq(SETS), dout(SETS);
  std::vector<float> ha(std::size_t(N) * B), hq(std::size_t(N) * B);
  for (int s = 0; s < SETS; ++s) {
    for (auto& v : ha) v = float(ud(gen));
    for (auto& v : hq) v = float(ud(gen));
    if (s == 0) {  // tails: problems 1..99 decay geometrically (ratios 0.5 .. 0.9)
      for (int p = 1; p < 100; ++p)
        for (int k = 0; k < N; ++k) {
          ha[std::size_t(p) * N + k] = float(std::pow(0.5 + 0.004 * p, k));
          hq[std::size_t(p) * N + k] = float(std::pow(0.45 + 0.004 * p, k) * ud(gen));
        }
    }
    CK(cudaMalloc(&da[s], 4 * ha.size()));
    CK(cudaMalloc(&dq[s], 4 * hq.size()));
    CK(cudaMalloc(&dout[s], 4 * std::size_t(R) * B));
    CK(cudaMemcpy(da[s], ha.data(), 4 * ha.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dq[s], hq.data(), 4 * hq.size(), cudaMemcpyHostToDevice));
  }
  // set 0's inputs again for the reference
  std::vector<float> a0(std::size_t(N) * B), q0(std::size_t(N) * B);
  CK(cudaMemcpy(a0.data(), da[0], 4 * a0.size(), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(q0.data(), dq[0], 4 * q0.size(), cudaMemcpyDeviceToHost));
  std::vector<long double> ref(std::size_t(R) * B);
  for (int p = 0; p < B; ++p)
    for (int j = 0; j < R; ++j) {
      long double s = 0;
      for (int k = std::max(0, j - N + 1); k <= std::min(j, N - 1); ++k)
        s += (long double)a0[std::size_t(p) * N + k] * q0[std::size_t(p) * N + j - k];
      ref[std::size_t(p) * R + j] = s;
    }
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  auto lane_launch = [&](int s) {
    banded_args<float> x{};
    x.op = banded_op::convolve;
    x.m = N, x.n = N, x.batch = B;
    x.a = da[s], x.inc_a = 1, x.stride_a = N;
    x.b = dq[s], x.inc_b = 1, x.stride_b = N;
    x.out = dout[s], x.inc_out = 1, x.stride_out = R;
    launch_variant(kernel_variant::lane, correlation_of(x), 1, st);
  };
  auto check = [&](const char* name, auto launch) {
    CK(cudaMemset(dout[0], 0xff, 4 * std::size_t(R) * B));
    launch(0);
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<float> h(std::size_t(R) * B);
    CK(cudaMemcpy(h.data(), dout[0], 4 * h.size(), cudaMemcpyDeviceToHost));
    double err = 0, tail_err = 0;
    long neg = 0, bad = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
      if (h[i] < 0) ++neg;
      if (!(std::isfinite(h[i]))) ++bad;
      const double e = double(std::fabs((long double)h[i] - ref[i]) / ref[i]);
      const std::size_t p = i / R;
      if (p >= 1 && p < 100)
        tail_err = std::max(tail_err, e);
      else
        err = std::max(err, e);
    }
    std::printf("%-12s max rel err %.3g (tail problems %.3g), negatives %ld, non-finite %ld\n",
                name, err, tail_err, neg, bad);
  };
  auto time = [&](const char* name, auto launch) {
    int next = 0;
    auto burst = [&](int n) {
      CK(cudaEventRecord(e0, st));
      for (int i = 0; i < n; ++i) launch(next++ % SETS);
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      return ms * 1000.0 / n;
    };
    for (int i = 0; i < 3; ++i) burst(100);
    std::vector<double> t;
    for (int r = 0; r < 21; ++r) t.push_back(burst(25));
    std::sort(t.begin(), t.end());
    // graphs of 20 launches
    cudaGraph_t gr;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < 20; ++i) launch(i % SETS);
    CK(cudaStreamEndCapture(st, &gr));
    CK(cudaGraphInstantiate(&ge, gr, 0));
    for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(ge, st));
    std::vector<double> tg;
    for (int r = 0; r < 21; ++r) {
      CK(cudaEventRecord(e0, st));
      for (int i = 0; i < 5; ++i) CK(cudaGraphLaunch(ge, st));
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      tg.push_back(ms * 1000.0 / 100);
    }
    std::sort(tg.begin(), tg.end());
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(gr));
    std::printf("%-12s median %6.2f us (min %6.2f max %6.2f)   graphs of 20: median %6.2f\n",
                name, t[10], t[0], t[20], tg[10]);
  };

  const std::size_t smem = sizeof(float) * WARP_FLOATS * 8;
  auto setup = [&](auto kernel, const char* name, int& grid) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    grid = per_sm * sms;
    std::printf("%-12s %d regs, %d blocks/SM, grid %d, smem %zu B/block\n", name, fa.numRegs,
                per_sm, grid, smem);
  };
  int g2, g4, g8, gc = sms * 8;
  setup(k_tc64<2>, "tc64 D=2", g2);
  setup(k_tc64<4>, "tc64 D=4", g4);
  setup(k_tc64<8>, "tc64 D=8", g8);
  auto t2 = [&](int s) { launch_pdl(k_tc64<2>, g2, 256, smem, st, da[s], dq[s], dout[s]); };
  auto t4 = [&](int s) { launch_pdl(k_tc64<4>, g4, 256, smem, st, da[s], dq[s], dout[s]); };
  auto t8 = [&](int s) { launch_pdl(k_tc64<8>, g8, 256, smem, st, da[s], dq[s], dout[s]); };
  auto cp = [&](int s) { launch_pdl(k_copy, gc, 256, 0, st, da[s], dq[s], dout[s]); };
  check("lane", lane_launch);
  check("tc64 D=2", t2);
  check("tc64 D=4", t4);
  check("tc64 D=8", t8);
  for (int rep = 0; rep < 2; ++rep) {
    time("lane", lane_launch);
    time("tc64 D=2", t2);
    time("tc64 D=4", t4);
    time("tc64 D=8", t8);
    time("copy", cp);
  }
  return 0;
}
