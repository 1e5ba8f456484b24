// Round 42 (session 23, standalone, not built by CMake): float convolve of
// 16384 problems of 64 x 64 with fine-grained warps. Each warp owns 8
// problems (4 KB of operands, loaded with plain 16-byte loads by the warp
// itself, no block barrier); lane (p, q) computes problem p's output blocks
// q and q + 4 of 16 outputs (20 steps of 4 taps each, balanced), ordered so
// that the block switch falls at step 4 or 8 only. Outputs go through a
// per-warp slab and leave as one contiguous 16-byte-aligned run.
// Compared in one program, in bench_cuda's pattern (7 rotating buffer sets,
// programmatic dependent launch, bursts and graphs of 20): the library's
// dispatch (launch_banded), this kernel at 4 and 8 warps per block, the same
// kernel with the compute removed (its memory floor), and the best copy of
// the same traffic. Every output of set 0 is checked against a long double
// loop. Build (repo root, after building the library in <build>):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include -I numeric/src \
//     -I <build>/numeric/include -o fine64 bench/notes/fine/fine64.cu \
//     <build>/libmarg/libmarg.a <build>/marg_jemalloc/libmarg_jemalloc.a -ldl -lrt -lpthread
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "launch.hpp"

using marg::detail::banded_args;
using marg::detail::banded_op;
namespace mc = marg::detail::cuda;
#define CK(x)                                                            \
  do {                                                                   \
    cudaError_t e_ = (x);                                                \
    if (e_ != cudaSuccess) {                                             \
      printf("CUDA error %s at %d\n", cudaGetErrorString(e_), __LINE__); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

constexpr int N = 64, LO = 2 * N - 1, PPW = 8;  // taps, outputs, problems per warp
constexpr int TS = 68;                          // taps row stride in shared memory
constexpr int XS = 100;                         // x row: 16 zeros, 64 values, 16 zeros, 4 pad
constexpr int WSMEM = PPW * TS + PPW * XS + PPW * LO;  // floats per warp (16-byte multiple)
static_assert(WSMEM % 4 == 0 && (PPW * TS + PPW * XS) % 4 == 0);

__device__ __forceinline__ void pdl() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
__device__ __forceinline__ float4 lds4(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}
__device__ __forceinline__ float comp(const float4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Lane q's two segments: (block, first step, steps). Block b covers outputs
// 16b .. 16b + 15; its live steps of 4 taps are [max(0, 4b - 16), min(15, 4b + 3)].
struct seg {
  int blk, s, len;
};
__device__ __forceinline__ seg seg1_of(int q) {
  return q == 0 ? seg{0, 0, 4} : q == 1 ? seg{1, 0, 8} : q == 2 ? seg{6, 8, 8} : seg{7, 12, 4};
}
__device__ __forceinline__ seg seg2_of(int q) {
  return q == 0 ? seg{4, 0, 16} : q == 1 ? seg{5, 4, 12} : q == 2 ? seg{2, 0, 12} : seg{3, 0, 16};
}

template <int WPB, bool Compute>
__global__ void __launch_bounds__(WPB * 32)
    fine64(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ O,
           int batch) {
  pdl();
  extern __shared__ float4 smem4[];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  float* ts = reinterpret_cast<float*>(smem4) + w * WSMEM;
  float* xs = ts + PPW * TS;
  float* os = xs + PPW * XS;
  const long p0 = (long(blockIdx.x) * WPB + w) * PPW;
  if (p0 >= batch) return;  // the prototype takes batches of whole warps
  const float4* ga = reinterpret_cast<const float4*>(A + p0 * N);
  const float4* gb = reinterpret_cast<const float4*>(B + p0 * N);
  float4 ra[4], rb[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) ra[u] = __ldg(ga + lane + 32 * u);
#pragma unroll
  for (int u = 0; u < 4; ++u) rb[u] = __ldg(gb + lane + 32 * u);
  const float4 z4 = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int z = lane; z < PPW * 9; z += 32) {  // x's zero pads: 4 float4 before, 5 after
    const int p = z / 9, r = z % 9;
    *reinterpret_cast<float4*>(xs + p * XS + (r < 4 ? 4 * r : 64 + 4 * r)) = z4;
  }
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const int i = lane + 32 * u, p = i >> 4, c = (i & 15) * 4;
    *reinterpret_cast<float4*>(ts + p * TS + c) = ra[u];
    *reinterpret_cast<float4*>(xs + p * XS + 16 + c) = rb[u];
  }
  __syncwarp();
  const int p = lane >> 2, q = lane & 3;
  if (Compute) {
    const seg s1 = seg1_of(q), s2 = seg2_of(q);
    const float* xp = xs + p * XS;
    const float* tp = ts + p * TS;
    float* op = os + p * LO;
    // x index of output t and tap k: t - k + 16; step s of block b: base 16b - 4s + 16
    const float* xb = xp + 16 * s1.blk - 4 * s1.s + 16;  // base at step i: xb - 4 i
    const float* tb = tp + 4 * s1.s;                     // taps at step i: tb + 4 i
    int blk = s1.blk;
    float acc[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) acc[j] = 0.f;
    float4 W[5];  // W[f] = x[base - 4 + 4f .. +3]
#pragma unroll
    for (int f = 1; f < 5; ++f) W[f] = lds4(xb + 4 * f - 4);
#pragma unroll
    for (int i = 0; i < 20; ++i) {
      if ((i == 4 || i == 8) && i == s1.len) {  // lane q's block switch
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          if (16 * blk + j < LO) op[16 * blk + j] = acc[j];
          acc[j] = 0.f;
        }
        blk = s2.blk;
        xb = xp + 16 * s2.blk - 4 * s2.s + 16 + 4 * i;
        tb = tp + 4 * s2.s - 4 * i;
#pragma unroll
        for (int f = 1; f < 5; ++f) W[f] = lds4(xb - 4 * i + 4 * f - 4);
      }
      W[0] = lds4(xb - 4 * i - 4);
      const float4 t4 = lds4(tb + 4 * i);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float a = comp(t4, u);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          const int d = j - u + 4;  // x index base + j - u, window offset base - 4
          acc[j] = fmaf(a, comp(W[d >> 2], d & 3), acc[j]);
        }
      }
#pragma unroll
      for (int f = 4; f > 0; --f) W[f] = W[f - 1];
    }
#pragma unroll
    for (int j = 0; j < 16; ++j)
      if (16 * blk + j < LO) op[16 * blk + j] = acc[j];
  } else {
    for (int i = lane; i < PPW * LO; i += 32) os[i] = xs[(i % LO) % 64 + 16] + ts[i % 64];
  }
  __syncwarp();
  float4* go = reinterpret_cast<float4*>(O + p0 * LO);
  for (int v = lane; v < PPW * LO / 4; v += 32) go[v] = lds4(os + 4 * v);
}

// the fine kernel's traffic without shared memory: a warp loads its 8
// problems' 4 KB and stores its 4 KB output run straight from registers
__global__ void __launch_bounds__(128)
    fine_direct(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ O,
                int batch) {
  pdl();
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const long p0 = (long(blockIdx.x) * 4 + w) * PPW;
  if (p0 >= batch) return;
  const float4* ga = reinterpret_cast<const float4*>(A + p0 * N);
  const float4* gb = reinterpret_cast<const float4*>(B + p0 * N);
  float4 r[8];
#pragma unroll
  for (int u = 0; u < 4; ++u) r[u] = __ldg(ga + lane + 32 * u);
#pragma unroll
  for (int u = 0; u < 4; ++u) r[4 + u] = __ldg(gb + lane + 32 * u);
  float4* go = reinterpret_cast<float4*>(O + p0 * LO);
#pragma unroll
  for (int u = 0; u < 8; ++u)
    if (lane + 32 * u < PPW * LO / 4) go[lane + 32 * u] = r[u];
}

// the forward's traffic, 4 float4 in flight per thread (round 12's best copy)
__global__ void copy4(const float4* __restrict__ a, const float4* __restrict__ b,
                      float4* __restrict__ out, long na4, long nout4) {
  pdl();
  const long stride = long(gridDim.x) * blockDim.x;
  for (long i0 = long(blockIdx.x) * blockDim.x + threadIdx.x; i0 < nout4; i0 += stride * 4) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const long i = i0 + u * stride;
      if (i < nout4) v[u] = i < na4 ? __ldg(a + i) : __ldg(b + (i - na4));
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const long i = i0 + u * stride;
      if (i < nout4) out[i] = v[u];
    }
  }
}

template <class K, class... Args>
void launch_pdl(K kernel, int grid, int threads, std::size_t smem, cudaStream_t st, Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

int main(int argc, char** argv) {
  const int batch = argc > 1 ? std::atoi(argv[1]) : 16384;
  const int sets = 7, passes = argc > 2 ? std::atoi(argv[2]) : 2;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs, batch %d of %d x %d; us per call, medians of 21 bursts\n", prop.name,
         prop.multiProcessorCount, batch, N, N);
  const std::size_t sa = std::size_t(batch) * N, so = std::size_t(batch) * LO + 32;
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  std::vector<float> ha(sa * sets), hb(sa * sets);
  for (auto& v : ha) v = float(u(gen));
  for (auto& v : hb) v = float(u(gen));
  // a few tiny values so that the tails are not flat
  for (std::size_t i = 0; i < ha.size(); i += 97) ha[i] *= 1e-6f;
  float *da, *db, *dout;
  CK(cudaMalloc(&da, ha.size() * 4));
  CK(cudaMalloc(&db, hb.size() * 4));
  CK(cudaMalloc(&dout, so * sets * 4));
  CK(cudaMemcpy(da, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  const int sms = prop.multiProcessorCount;
  const int warps = (batch + PPW - 1) / PPW;
  CK(cudaFuncSetAttribute(fine64<4, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          4 * WSMEM * 4));
  CK(cudaFuncSetAttribute(fine64<8, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          8 * WSMEM * 4));
  CK(cudaFuncSetAttribute(fine64<4, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          4 * WSMEM * 4));
  const char* names[] = {"lib",          "fine4",      "fine8",       "fine4-nocompute",
                         "copy",         "copyL 0 KB", "copyL 72 KB", "copyL 80 KB",
                         "copyL 100 KB", "fine-direct"};
  constexpr int NV = 10;
  const int lsm[4] = {0, 72 << 10, 80 << 10, 100 << 10};
  CK(cudaFuncSetAttribute(copy4, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 << 10));
  auto call = [&](int v, int s) {
    const float* a = da + sa * s;
    const float* b = db + sa * s;
    float* o = dout + so * s;
    switch (v) {
      case 0: {
        banded_args<float> x{};
        x.op = banded_op::convolve, x.m = N, x.n = N;
        x.a = a, x.inc_a = 1, x.stride_a = N;
        x.b = b, x.inc_b = 1, x.stride_b = N;
        x.out = o, x.inc_out = 1, x.stride_out = LO;
        x.batch = batch;
        mc::launch_banded(x, st);
        return;
      }
      case 1:
        return launch_pdl(fine64<4, true>, (warps + 3) / 4, 128, 4 * WSMEM * 4, st, a, b, o, batch);
      case 2:
        return launch_pdl(fine64<8, true>, (warps + 7) / 8, 256, 8 * WSMEM * 4, st, a, b, o, batch);
      case 3:
        return launch_pdl(fine64<4, false>, (warps + 3) / 4, 128, 4 * WSMEM * 4, st, a, b, o,
                          batch);
      case 4:
        return launch_pdl(copy4, sms * 8, 256, 0, st, (const float4*)a, (const float4*)b,
                          (float4*)o, long(sa / 4), long(batch) * LO / 4);
      case 9:
        return launch_pdl(fine_direct, (warps + 3) / 4, 128, 0, st, a, b, o, batch);
      default:  // the copy on the lane kernel's grid shape (2 blocks per SM), shared memory
                // reserved as the lane kernel's 80 KB and less
        return launch_pdl(copy4, 2 * sms, 288, lsm[v - 5], st, (const float4*)a, (const float4*)b,
                          (float4*)o, long(sa / 4), long(batch) * LO / 4);
    }
  };
  // correctness: every output of set 0 against long double
  std::vector<long double> ref(std::size_t(batch) * LO);
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < LO; ++t) {
      long double s = 0;
      for (int k = std::max(0, t - N + 1); k <= std::min(t, N - 1); ++k)
        s += (long double)ha[sa * 0 + std::size_t(b) * N + k] * hb[std::size_t(b) * N + t - k];
      ref[std::size_t(b) * LO + t] = s;
    }
  std::vector<float> o(std::size_t(batch) * LO);
  for (int v = 0; v < 3; ++v) {
    CK(cudaMemsetAsync(dout, 0xff, so * 4, st));
    call(v, 0);
    CK(cudaMemcpyAsync(o.data(), dout, o.size() * 4, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    double e = 0;
    for (std::size_t i = 0; i < o.size(); ++i) {
      const double r = double(std::fabs((o[i] - ref[i]) / ref[i]));
      e = std::max(e, r == r ? r : INFINITY);
    }
    printf("%-16s max relative error over all %zu outputs: %.2e\n", names[v], o.size(), e);
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto burst_us = [&](int v, int n, int& next) {
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < n; ++i) call(v, next++ % sets);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return 1e3 * ms / n;
  };
  for (int pass = 0; pass < passes; ++pass) {
    for (int v = 0; v < NV; ++v) {
      int next = 0;
      burst_us(v, 50, next);
      std::vector<double> t;
      for (int r = 0; r < 21; ++r) t.push_back(burst_us(v, 100, next));
      std::sort(t.begin(), t.end());
      // graphs of 20 calls, one per starting set
      std::vector<cudaGraphExec_t> graphs;
      for (int s = 0; s < sets; ++s) {
        cudaGraph_t gr;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < 20; ++i) call(v, (s + i) % sets);
        CK(cudaStreamEndCapture(st, &gr));
        CK(cudaGraphInstantiate(&ge, gr, 0));
        CK(cudaGraphUpload(ge, st));
        CK(cudaGraphDestroy(gr));
        graphs.push_back(ge);
      }
      std::vector<double> g;
      for (int r = 0; r < 22; ++r) {
        CK(cudaEventRecord(e0, st));
        for (int k = 0; k < 5; ++k) CK(cudaGraphLaunch(graphs[(r + k) % sets], st));
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) g.push_back(1e3 * ms / 100);
      }
      std::sort(g.begin(), g.end());
      for (auto& ge : graphs) CK(cudaGraphExecDestroy(ge));
      printf("pass %d %-16s direct %7.2f (min %7.2f)  graphs %7.2f (min %7.2f)\n", pass, names[v],
             t[t.size() / 2], t[0], g[g.size() / 2], g[0]);
      fflush(stdout);
    }
  }
  return 0;
}
