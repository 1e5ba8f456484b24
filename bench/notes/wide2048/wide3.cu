// Issue 10 experiment (session 10, round 16 call 3), NOT built by CMake and
// not part of the library. Round 16's v2 (wide.cu at 4b937b3) generalized:
// G groups of 16 outputs per block share the staged taps (less L2 traffic
// per output), and the 16-byte copies may allocate in L1 (.ca) or not (.cg).
// Every config splits a tile's taps over the threads of one block (thread
// (g, c): 16 outputs x 16 taps from registers), reduces in the warp by a
// reduce-scatter of shuffles and across warps through shared memory, with
// shared rows skewed by 16 bytes every 128 (conflict-free 16-byte loads).
// Unit strides and 16-byte aligned operands only. Timed against
// marg::detail::cuda::launch_banded in the same process: graphs of 20 calls
// and direct bursts of 200, medians of 9 bursts, three passes; max relative
// error against long double. Results: bench/notes/wide2048.md.
// Build (repo root, after building the library in build-final):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include \
//     -I numeric/src -o wide3 bench/notes/wide2048/wide3.cu build-final/libmarg/libmarg.a -ldl -lrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "launch.hpp"

using marg::detail::banded_args;
using marg::detail::banded_op;

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

constexpr int TJ = 16;  // outputs per thread (and per group of threads)

__host__ __device__ constexpr int skew(int i) {
  return i + 4 * (i >> 5);
}

__device__ __forceinline__ void cp4(float* dst, const float* src, bool in) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(in ? 4 : 0)
               : "memory");
}

// one reduce-scatter step: lanes H*2 apart swap halves of acc[0, 2H) and add
template <int H>
__device__ __forceinline__ void scatter_step(float (&acc)[TJ], int lane) {
  const bool up = lane & (2 * H);
#pragma unroll
  for (int i = 0; i < H; ++i) {
    const float keep = up ? acc[i + H] : acc[i], give = up ? acc[i] : acc[i + H];
    acc[i] = keep + __shfl_xor_sync(0xffffffffu, give, 2 * H);
  }
}

template <bool CA>
__device__ __forceinline__ void cp16(float* dst, const float* src, int bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if (CA)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes)
                 : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes)
                 : "memory");
}

// Conv: out_j = sum_i t_i x_{j-i}; Corr: out_j = sum_k t_k x_{j+k}. Block:
// 16 G outputs; thread (g, c): outputs j0 + 16 g + [0, 16), 16 taps of chunk c.
template <bool Conv, int G, bool CA>
__global__ void __launch_bounds__(1024)
    wide3_kernel(const float* tp, int lt, const float* xp, int lx, float* out, int lout, int ncmax,
                 int ntg) {
  extern __shared__ __align__(16) float sm[];
  float* T = sm;
  float* W = sm + skew(16 * ncmax) + 4;
  __shared__ float red[32][TJ];
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  constexpr int TB = TJ * G;
  const int j0 = blockIdx.x * TB, tid = threadIdx.x, nt = blockDim.x;
  int c_lo = 0, nc;
  if (Conv) {
    const int ilo = max(0, j0 - (lx - 1)), ihi = min(lt - 1, j0 + TB - 1);
    c_lo = ilo / 16;
    nc = ihi >= ilo ? ihi / 16 - c_lo + 1 : 0;
  } else {
    const int khi = min(lt - 1, lx - 1 - j0);
    nc = khi >= 0 ? khi / 16 + 1 : 0;
  }
  const int tbase = 16 * c_lo;
  const int xbase = Conv ? j0 - 16 * (c_lo + nc - 1) - 16 : j0;
  for (int v = tid; v < 4 * nc; v += nt) {
    const int g = tbase + 4 * v;
    cp16<CA>(T + skew(4 * v), tp + g, 4 * max(0, min(4, lt - g)));
  }
  for (int v = tid; v < 4 * nc + 4 * G; v += nt) {
    const int g = xbase + 4 * v;
    const int bytes = g < 0 ? 0 : 4 * max(0, min(4, lx - g));
    cp16<CA>(W + skew(4 * v), bytes ? xp + g : xp, bytes);
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  const int grp = tid / ntg, c = tid - grp * ntg;
  float acc[TJ];
#pragma unroll
  for (int r = 0; r < TJ; ++r) acc[r] = 0.f;
  if (c < nc) {
    float a[16], x[32];
    const int wb = 16 * grp + (Conv ? 16 * (nc - 1 - c) : 16 * c);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(T + skew(16 * c + 4 * i));
      a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(W + skew(wb + 4 * i));
      x[4 * i] = v.x, x[4 * i + 1] = v.y, x[4 * i + 2] = v.z, x[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int u = 0; u < 16; ++u)
#pragma unroll
      for (int r = 0; r < TJ; ++r) acc[r] = fmaf(a[u], x[Conv ? 16 + r - u : r + u], acc[r]);
  }
  const int lane = tid & 31, warp = tid >> 5;
  scatter_step<8>(acc, lane);
  scatter_step<4>(acc, lane);
  scatter_step<2>(acc, lane);
  scatter_step<1>(acc, lane);
  acc[0] += __shfl_xor_sync(0xffffffffu, acc[0], 1);
  if ((lane & 1) == 0) red[warp][lane >> 1] = acc[0];
  __syncthreads();
  if (tid < TB && j0 + tid < lout) {
    const int g = tid / TJ, w0 = g * (ntg / 32);
    float s = red[w0][tid % TJ];
    for (int w = 1; w < ntg / 32; ++w) s += red[w0 + w][tid % TJ];
    out[j0 + tid] = s;
  }
}

// the operands of a as wide3_kernel reads them
struct wide_ops {
  const float *t, *x;
  int lt, lx, lout;
  float* out;
};

wide_ops ops_of(const banded_args<float>& a) {
  if (a.op == banded_op::convolve) {
    const bool swap = a.m > a.n;  // t = the shorter
    return {swap ? a.b : a.a, swap ? a.a : a.b, swap ? a.n : a.m,
            swap ? a.m : a.n, a.m + a.n - 1,    a.out};
  }
  const int la = a.op == banded_op::grad_p ? a.n : a.m;
  return {a.b, a.a, la, a.m + a.n - 1, a.op == banded_op::grad_p ? a.m : a.n, a.out};
}

struct wide_plan {
  int g, ncmax, ntg, blocks;
  std::size_t smem;
};

wide_plan plan_of(const banded_args<float>& a, int g) {
  const wide_ops o = ops_of(a);
  wide_plan p{};
  p.g = g;
  p.ncmax = a.op == banded_op::convolve ? (std::min(o.lt, o.lx + TJ * g - 1) + 30) / 16
                                        : (o.lt + 15) / 16;
  p.ntg = (p.ncmax + 31) / 32 * 32;
  p.blocks = (o.lout + TJ * g - 1) / (TJ * g);
  p.smem = sizeof(float) * (skew(16 * p.ncmax) + 4 + skew(16 * p.ncmax + 16 * g) + 8);
  return p;
}

template <bool Conv, int G, bool CA>
void launch3(const wide_ops& o, const wide_plan& p, cudaStream_t s) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(p.blocks);
  cfg.blockDim = dim3(G * p.ntg);
  cfg.dynamicSmemBytes = p.smem;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, wide3_kernel<Conv, G, CA>, o.t, o.lt, o.x, o.lx, o.out, o.lout,
                        p.ncmax, p.ntg));
}

template <int G, bool CA>
void launch_cfg(const banded_args<float>& a, const wide_plan& p, cudaStream_t s) {
  if (a.op == banded_op::convolve)
    launch3<true, G, CA>(ops_of(a), p, s);
  else
    launch3<false, G, CA>(ops_of(a), p, s);
}

template <bool Conv, int G, bool CA>
void allow_smem() {
  CK(cudaFuncSetAttribute(wide3_kernel<Conv, G, CA>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          150 * 1024));
}

// long double reference of op for sizes m, n
std::vector<long double> reference(banded_op op, int m, int n, const std::vector<float>& a,
                                   const std::vector<float>& b) {
  const int r = m + n - 1;
  if (op == banded_op::convolve) {
    std::vector<long double> o(r, 0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) o[i + j] += static_cast<long double>(a[i]) * b[j];
    return o;
  }
  // grad_p: out_i = sum_j g_{i+j} q_j, a = g (length r), b = q (length n)
  std::vector<long double> o(m, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) o[i] += static_cast<long double>(a[i + j]) * b[j];
  return o;
}

struct config {
  const char* name;
  int g;
  void (*launch)(const banded_args<float>&, const wide_plan&, cudaStream_t);
};

int main(int argc, char** argv) {
  const int m = argc > 1 ? atoi(argv[1]) : 2048, n = argc > 2 ? atoi(argv[2]) : 2048;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs; m = %d, n = %d\n", prop.name, prop.multiProcessorCount, m, n);
  allow_smem<true, 1, false>();
  allow_smem<false, 1, false>();
  allow_smem<true, 1, true>();
  allow_smem<false, 1, true>();
  allow_smem<true, 2, true>();
  allow_smem<false, 2, true>();
  allow_smem<true, 4, true>();
  allow_smem<false, 4, true>();
  const config cfgs[] = {{"g1cg", 1, launch_cfg<1, false>},
                         {"g1ca", 1, launch_cfg<1, true>},
                         {"g2ca", 2, launch_cfg<2, true>},
                         {"g4ca", 4, launch_cfg<4, true>}};
  constexpr int nv = 5;  // lib + the configs
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<float> u(0.01f, 1.f);
  constexpr int sets = 8, burst = 200, reps = 9, gcalls = 20;
  for (banded_op op : {banded_op::convolve, banded_op::grad_p}) {
    const int la = op == banded_op::convolve ? m : m + n - 1, lb = n;
    const int lo = op == banded_op::convolve ? m + n - 1 : m;
    const std::size_t sa = (la + 31) / 32 * 32, sb = (lb + 31) / 32 * 32, so = (lo + 31) / 32 * 32;
    std::vector<float> ha(sa * sets), hb(sb * sets);
    for (auto& v : ha) v = u(gen);
    for (auto& v : hb) v = u(gen);
    float *da, *db, *dout[nv];
    CK(cudaMalloc(&da, ha.size() * 4));
    CK(cudaMalloc(&db, hb.size() * 4));
    for (auto& d : dout) CK(cudaMalloc(&d, so * sets * 4));
    CK(cudaMemcpy(da, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    auto args = [&](int s, float* out) {
      banded_args<float> x{};
      x.op = op, x.m = m, x.n = n;
      x.a = da + sa * s, x.inc_a = 1, x.stride_a = 0;
      x.b = db + sb * s, x.inc_b = 1, x.stride_b = 0;
      x.out = out + so * s, x.inc_out = 1, x.stride_out = 0;
      x.batch = 1;
      return x;
    };
    wide_plan plans[nv];
    for (int v = 1; v < nv; ++v) plans[v] = plan_of(args(0, dout[v]), cfgs[v - 1].g);
    auto call = [&](int v, int s) {
      if (v == 0)
        marg::detail::cuda::launch_banded(args(s, dout[0]), st);
      else
        cfgs[v - 1].launch(args(s, dout[v]), plans[v], st);
    };
    const auto ref = reference(op, m, n, std::vector<float>(ha.begin(), ha.begin() + la),
                               std::vector<float>(hb.begin(), hb.begin() + lb));
    const char* name = op == banded_op::convolve ? "convolve" : "grad_p";
    for (int v = 0; v < nv; ++v) {
      CK(cudaMemsetAsync(dout[v], 0xff, so * sets * 4, st));
      call(v, 0);
      std::vector<float> o(lo);
      CK(cudaMemcpyAsync(o.data(), dout[v], lo * 4, cudaMemcpyDeviceToHost, st));
      CK(cudaStreamSynchronize(st));
      double e = 0;
      for (int i = 0; i < lo; ++i) {
        e = std::max(e, static_cast<double>(std::fabs((o[i] - ref[i]) / ref[i])));
        if (!(o[i] == o[i])) e = INFINITY;
      }
      if (v == 0)
        printf("%s lib: max rel err %.2e\n", name, e);
      else
        printf("%s %s: max rel err %.2e; %d blocks of %d threads, %zu B smem\n", name,
               cfgs[v - 1].name, e, plans[v].blocks, plans[v].g * plans[v].ntg, plans[v].smem);
    }
    std::vector<std::vector<cudaGraphExec_t>> graphs(nv);
    for (int v = 0; v < nv; ++v)
      for (int s = 0; s < sets; ++s) {
        cudaGraph_t gr;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < gcalls; ++i) call(v, (s + i) % sets);
        CK(cudaStreamEndCapture(st, &gr));
        CK(cudaGraphInstantiate(&ge, gr, 0));
        CK(cudaGraphUpload(ge, st));
        CK(cudaGraphDestroy(gr));
        graphs[v].push_back(ge);
      }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto time = [&](auto&& f, int per) {  // median per-call µs over reps bursts
      std::vector<double> t;
      for (int r = 0; r < reps + 1; ++r) {
        CK(cudaEventRecord(e0, st));
        for (int i = 0; i < burst / per; ++i) f(i);
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) t.push_back(1e3 * ms / (burst / per * per));
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    for (int pass = 0; pass < 3; ++pass) {
      printf("%s pass %d graph20 / direct us:", name, pass);
      for (int v = 0; v < nv; ++v) {
        const double tg =
            time([&](int i) { CK(cudaGraphLaunch(graphs[v][i % sets], st)); }, gcalls);
        const double td = time([&](int i) { call(v, i % sets); }, 1);
        printf(" %s %.2f / %.2f;", v == 0 ? "lib" : cfgs[v - 1].name, tg, td);
      }
      printf("\n");
    }
    for (auto& gv : graphs)
      for (auto& x : gv) CK(cudaGraphExecDestroy(x));
    CK(cudaFree(da));
    CK(cudaFree(db));
    for (auto& d : dout) CK(cudaFree(d));
  }
  return 0;
}
