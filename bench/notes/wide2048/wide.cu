// Issue 10 experiment (session 10), NOT built by CMake and not part of the
// library: float 2048 single problems (convolve and grad_p) on a "wide tile"
// kernel that splits the taps over the threads of ONE block and reduces in
// the block (warp shuffles, one __syncthreads), instead of the dispatch's
// tap split over a cluster of 8 blocks with a distributed-shared-memory
// reduction. One block = 16 outputs x all their taps; 128 threads, thread c
// takes 16 consecutive taps per round (16 x 16 FMA from registers), shared
// rows skewed by 16 bytes every 128 so that the 16-byte loads of 8 lanes
// (32 or 64 bytes apart) hit distinct banks. Prototype: taps <= 4096.
// Timed against marg::detail::cuda::launch_banded (what bench_cuda's marg/
// rows time) in the same process: bursts of direct launches, and graphs of
// 20 calls; medians of 9 bursts; max relative error against long double.
// Build (repo root, after building the library in build-final):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include \
//     -I numeric/src -o wide bench/notes/wide2048/wide.cu build-final/libmarg/libmarg.a -ldl -lrt
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
using marg::detail::cuda::correlation_of;
using marg::detail::cuda::correlation_view;

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

constexpr int TJ = 16;   // outputs per block (= outputs per thread)
constexpr int CL = 16;   // taps per thread per round
constexpr int NT = 128;  // threads per block (= chunks per round)
constexpr int ROUND = NT * CL;

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

// rounds: taps per block rounded up to whole rounds (host: from la)
__global__ void __launch_bounds__(NT) wide_kernel(correlation_view<float> c, int rounds) {
  extern __shared__ __align__(16) float sm[];
  float* As = sm;
  float* Xs = sm + skew(rounds * ROUND);
  __shared__ float red[NT / 32][TJ];
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int j0 = blockIdx.x * TJ, tid = threadIdx.x;
  const int k_lo = max(0, c.lead - j0 - (TJ - 1));
  const int k_hi = min(c.la - 1, c.lead + c.lx - 1 - j0);
  const int K = k_hi - k_lo + 1;  // may be <= 0: outputs are 0
  const int nk = rounds * ROUND, nx = nk + TJ;
  for (int i = tid; i < nk; i += NT) {
    const bool in = i < K;
    cp4(As + skew(i), in ? c.a + (k_lo + i) * c.a_step : c.a, in);
  }
  for (int i = tid; i < nx; i += NT) {
    const int t = j0 + k_lo + i - c.lead;
    const bool in = t >= 0 && t < c.lx;
    cp4(Xs + skew(i), in ? c.x + std::int64_t{t} * c.x_step : c.x, in);
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  float acc[TJ];
#pragma unroll
  for (int r = 0; r < TJ; ++r) acc[r] = 0.f;
  for (int rr = 0; rr < rounds; ++rr) {
    const int base = rr * ROUND + tid * CL;
    if (base >= K) break;
    float a[CL], x[CL + TJ];
#pragma unroll
    for (int i = 0; i < CL / 4; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(As + skew(base + 4 * i));
      a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < (CL + TJ) / 4; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(Xs + skew(base + 4 * i));
      x[4 * i] = v.x, x[4 * i + 1] = v.y, x[4 * i + 2] = v.z, x[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int t = 0; t < CL; ++t)
#pragma unroll
      for (int r = 0; r < TJ; ++r) acc[r] = fmaf(a[t], x[t + r], acc[r]);
  }
  // reduce-scatter in the warp: after the xor 16, 8, 4, 2 steps lane l holds
  // output l >> 1 summed over 16 lanes; xor 1 completes the warp's sum
  const int lane = tid & 31, warp = tid >> 5;
  scatter_step<8>(acc, lane);
  scatter_step<4>(acc, lane);
  scatter_step<2>(acc, lane);
  scatter_step<1>(acc, lane);
  acc[0] += __shfl_xor_sync(0xffffffffu, acc[0], 1);
  if ((lane & 1) == 0) red[warp][lane >> 1] = acc[0];
  __syncthreads();
  if (tid < TJ && j0 + tid < c.lout) {
    float s = red[0][tid];
#pragma unroll
    for (int w = 1; w < NT / 32; ++w) s += red[w][tid];
    c.out[std::int64_t{j0 + tid} * c.out_step] = s;
  }
}

struct wide_plan {
  int rounds, blocks;
  std::size_t smem;
};

wide_plan plan_of(const correlation_view<float>& c) {
  wide_plan p{};
  p.rounds = std::max(1, (c.la + ROUND - 1) / ROUND);  // a tile meets at most la taps
  p.blocks = (c.lout + TJ - 1) / TJ;
  const int nk = p.rounds * ROUND;
  p.smem = sizeof(float) * (skew(nk) + skew(nk + TJ) + 8);
  return p;
}

void launch_wide(const correlation_view<float>& c, const wide_plan& p, cudaStream_t s) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(p.blocks);
  cfg.blockDim = dim3(NT);
  cfg.dynamicSmemBytes = p.smem;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, wide_kernel, c, p.rounds));
}

// v2: 16-byte staging; unit strides and 16-byte aligned operands only.
// Conv: out_j = sum_i t_i x_{j-i} (t = the shorter operand, not reversed):
//   thread c takes t[i0, i0 + 16), i0 = 16 (c_lo + c), and the window
//   x[B, B + 32), B = j0 - i0 - 16: acc[r] += t[i0 + u] W[16 + r - u].
// Corr (grad_p, grad_q): out_j = sum_k t_k x_{j+k}: thread c takes
//   t[16c, 16c + 16) and x[j0 + 16c, + 32): acc[r] += t[16c + u] W[r + u].
// Every 16-byte vector of x lies wholly inside or wholly before the row
// (origins are multiples of 16), so cp.async's zero fill covers the ends.
__device__ __forceinline__ void cp16(float* dst, const float* src, int bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes)
               : "memory");
}

template <bool Conv>
__global__ void __launch_bounds__(1024) wide2_kernel(const float* tp, int lt, const float* xp,
                                                     int lx, float* out, int lout, int ncmax) {
  extern __shared__ __align__(16) float sm[];
  float* T = sm;
  float* W = sm + skew(16 * ncmax) + 4;
  __shared__ float red[32][TJ];
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int j0 = blockIdx.x * TJ, tid = threadIdx.x, nt = blockDim.x;
  int c_lo = 0, nc;
  if (Conv) {
    const int ilo = max(0, j0 - (lx - 1)), ihi = min(lt - 1, j0 + TJ - 1);
    c_lo = ilo / 16;
    nc = ihi >= ilo ? ihi / 16 - c_lo + 1 : 0;
  } else {
    const int khi = min(lt - 1, lx - 1 - j0);
    nc = khi >= 0 ? khi / 16 + 1 : 0;
  }
  const int tbase = 16 * c_lo;                                   // t index of T[0]
  const int xbase = Conv ? j0 - 16 * (c_lo + nc - 1) - 16 : j0;  // x index of W[0]
  for (int v = tid; v < 4 * nc; v += nt) {
    const int g = tbase + 4 * v;
    cp16(T + skew(4 * v), tp + g, 4 * max(0, min(4, lt - g)));
  }
  for (int v = tid; v < 4 * nc + 4; v += nt) {
    const int g = xbase + 4 * v;
    const int bytes = g < 0 ? 0 : 4 * max(0, min(4, lx - g));
    cp16(W + skew(4 * v), bytes ? xp + g : xp, bytes);
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  float acc[TJ];
#pragma unroll
  for (int r = 0; r < TJ; ++r) acc[r] = 0.f;
  if (tid < nc) {
    float a[16], x[32];
    const int wb = Conv ? 16 * (nc - 1 - tid) : 16 * tid;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(T + skew(16 * tid + 4 * i));
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
  if (tid < TJ && j0 + tid < lout) {
    float s = red[0][tid];
    for (int w = 1; w < nt / 32; ++w) s += red[w][tid];
    out[j0 + tid] = s;
  }
}

struct wide2_plan {
  bool conv;
  int ncmax, threads, blocks;
  std::size_t smem;
};

// the operands of x as wide2_kernel reads them
struct wide2_ops {
  const float *t, *x;
  int lt, lx, lout;
  float* out;
};

wide2_ops ops_of(const banded_args<float>& a) {
  if (a.op == banded_op::convolve) {
    const bool swap = a.m > a.n;  // t = the shorter
    return {swap ? a.b : a.a, swap ? a.a : a.b, swap ? a.n : a.m,
            swap ? a.m : a.n, a.m + a.n - 1,    a.out};
  }
  const int la = a.op == banded_op::grad_p ? a.n : a.m;
  return {a.b, a.a, la, a.m + a.n - 1, a.op == banded_op::grad_p ? a.m : a.n, a.out};
}

wide2_plan plan2_of(const banded_args<float>& a) {
  const wide2_ops o = ops_of(a);
  wide2_plan p{};
  p.conv = a.op == banded_op::convolve;
  p.ncmax = p.conv ? (std::min(o.lt, o.lx + TJ - 1) + 14) / 16 + 1 : (o.lt + 15) / 16;
  p.threads = std::max(32, (p.ncmax + 31) / 32 * 32);
  p.blocks = (o.lout + TJ - 1) / TJ;
  p.smem = sizeof(float) * (skew(16 * p.ncmax) + 4 + skew(16 * p.ncmax + 16) + 8);
  return p;
}

void launch_wide2(const banded_args<float>& a, const wide2_plan& p, cudaStream_t s) {
  const wide2_ops o = ops_of(a);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(p.blocks);
  cfg.blockDim = dim3(p.threads);
  cfg.dynamicSmemBytes = p.smem;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  if (p.conv)
    CK(cudaLaunchKernelEx(&cfg, wide2_kernel<true>, o.t, o.lt, o.x, o.lx, o.out, o.lout, p.ncmax));
  else
    CK(cudaLaunchKernelEx(&cfg, wide2_kernel<false>, o.t, o.lt, o.x, o.lx, o.out, o.lout, p.ncmax));
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

int main(int argc, char** argv) {
  const int m = argc > 1 ? atoi(argv[1]) : 2048, n = argc > 2 ? atoi(argv[2]) : 2048;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs; m = %d, n = %d\n", prop.name, prop.multiProcessorCount, m, n);
  CK(cudaFuncSetAttribute(wide_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  CK(cudaFuncSetAttribute(wide2_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          150 * 1024));
  CK(cudaFuncSetAttribute(wide2_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          150 * 1024));
  std::mt19937_64 g(7);
  std::uniform_real_distribution<float> u(0.01f, 1.f);
  constexpr int sets = 8, burst = 200, reps = 9, gcalls = 20;
  for (banded_op op : {banded_op::convolve, banded_op::grad_p}) {
    const int la = op == banded_op::convolve ? m : m + n - 1, lb = n;
    const int lo = op == banded_op::convolve ? m + n - 1 : m;
    const std::size_t sa = (la + 31) / 32 * 32, sb = (lb + 31) / 32 * 32, so = (lo + 31) / 32 * 32;
    std::vector<float> ha(sa * sets), hb(sb * sets);
    for (auto& v : ha) v = u(g);
    for (auto& v : hb) v = u(g);
    float *da, *db, *dl, *dw;
    CK(cudaMalloc(&da, ha.size() * 4));
    CK(cudaMalloc(&db, hb.size() * 4));
    float* dv;
    CK(cudaMalloc(&dl, so * sets * 4));
    CK(cudaMalloc(&dw, so * sets * 4));
    CK(cudaMalloc(&dv, so * sets * 4));
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
    const wide_plan p = plan_of(correlation_of(args(0, dw)));
    auto lib = [&](int s) { marg::detail::cuda::launch_banded(args(s, dl), st); };
    auto wide = [&](int s) { launch_wide(correlation_of(args(s, dw)), p, st); };
    const wide2_plan p2 = plan2_of(args(0, dv));
    auto wide2 = [&](int s) { launch_wide2(args(s, dv), p2, st); };
    // correctness on set 0 (outputs poisoned first)
    CK(cudaMemsetAsync(dl, 0xff, static_cast<std::size_t>(lo) * sets * 4, st));
    CK(cudaMemsetAsync(dw, 0xff, static_cast<std::size_t>(lo) * sets * 4, st));
    CK(cudaMemsetAsync(dv, 0xff, so * sets * 4, st));
    lib(0);
    wide(0);
    wide2(0);
    std::vector<float> ol(lo), ow(lo), ov(lo);
    CK(cudaMemcpyAsync(ov.data(), dv, lo * 4, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(ol.data(), dl, lo * 4, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(ow.data(), dw, lo * 4, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    const auto ref = reference(op, m, n, std::vector<float>(ha.begin(), ha.begin() + la),
                               std::vector<float>(hb.begin(), hb.begin() + lb));
    double el = 0, ew = 0, ev = 0;
    for (int i = 0; i < lo; ++i) {
      el = std::max(el, static_cast<double>(std::fabs((ol[i] - ref[i]) / ref[i])));
      ew = std::max(ew, static_cast<double>(std::fabs((ow[i] - ref[i]) / ref[i])));
      ev = std::max(ev, static_cast<double>(std::fabs((ov[i] - ref[i]) / ref[i])));
      if (!(ow[i] == ow[i])) ew = INFINITY;
      if (!(ov[i] == ov[i])) ev = INFINITY;
    }
    // graphs of gcalls calls, one per starting set
    auto make_graphs = [&](auto&& f) {
      std::vector<cudaGraphExec_t> ge(sets);
      for (int s = 0; s < sets; ++s) {
        cudaGraph_t gr;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < gcalls; ++i) f((s + i) % sets);
        CK(cudaStreamEndCapture(st, &gr));
        CK(cudaGraphInstantiate(&ge[s], gr, 0));
        CK(cudaGraphUpload(ge[s], st));
        CK(cudaGraphDestroy(gr));
      }
      return ge;
    };
    const auto gl = make_graphs(lib), gw = make_graphs(wide), gv = make_graphs(wide2);
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
    const char* name = op == banded_op::convolve ? "convolve" : "grad_p";
    printf(
        "%s: max rel err lib %.2e wide %.2e v2 %.2e; wide plan %d blocks, %d rounds, %zu B "
        "smem; v2 %d blocks of %d, %zu B\n",
        name, el, ew, ev, p.blocks, p.rounds, p.smem, p2.blocks, p2.threads, p2.smem);
    for (int pass = 0; pass < 3; ++pass) {
      const double tl = time([&](int i) { lib(i % sets); }, 1);
      const double tw = time([&](int i) { wide(i % sets); }, 1);
      const double tgl = time([&](int i) { CK(cudaGraphLaunch(gl[i % sets], st)); }, gcalls);
      const double tgw = time([&](int i) { CK(cudaGraphLaunch(gw[i % sets], st)); }, gcalls);
      const double tv = time([&](int i) { wide2(i % sets); }, 1);
      const double tgv = time([&](int i) { CK(cudaGraphLaunch(gv[i % sets], st)); }, gcalls);
      printf(
          "%s pass %d: direct lib %.2f wide %.2f v2 %.2f us; graph20 lib %.2f wide %.2f v2 "
          "%.2f us per call\n",
          name, pass, tl, tw, tv, tgl, tgw, tgv);
    }
    for (auto& x : gl) CK(cudaGraphExecDestroy(x));
    for (auto& x : gw) CK(cudaGraphExecDestroy(x));
    for (auto& x : gv) CK(cudaGraphExecDestroy(x));
    CK(cudaFree(dv));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dl));
    CK(cudaFree(dw));
  }
  return 0;
}
