// Round 18, calls 9-12 (standalone, not built by CMake): for single problems
// on a grid of taps and outputs, forced small, mid, large and wide beside the
// library's dispatch (launch_banded), graphs of 20 calls, best of two passes
// of medians of 9 bursts; max relative error against long double. Build (repo
// root, after building the library):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include -I numeric/src \
//     -o wided bench/notes/wide2048/wided_grid.cu <build>/libmarg/libmarg.a -ldl -lrt
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

template <class T>
void run_shape(banded_op op, int m, int n, cudaStream_t st) {
  constexpr int nv = 5, sets = 8, burst = 200, reps = 9, gcalls = 20;
  std::mt19937_64 gen(7 + m + 3 * n);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  const int la = op == banded_op::convolve ? m : m + n - 1, lb = n;
  const int lo = op == banded_op::convolve ? m + n - 1 : m;
  const std::size_t sa = (la + 31) / 32 * 32, sb = (lb + 31) / 32 * 32, so = (lo + 31) / 32 * 32;
  std::vector<T> ha(sa * sets), hb(sb * sets);
  for (auto& v : ha) v = T(u(gen));
  for (auto& v : hb) v = T(u(gen));
  T *da, *db, *dout[nv];
  CK(cudaMalloc(&da, ha.size() * sizeof(T)));
  CK(cudaMalloc(&db, hb.size() * sizeof(T)));
  for (auto& d : dout) CK(cudaMalloc(&d, so * sets * sizeof(T)));
  CK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
  auto args = [&](int s, T* out) {
    banded_args<T> x{};
    x.op = op, x.m = m, x.n = n;
    x.a = da + sa * s, x.inc_a = 1;
    x.b = db + sb * s, x.inc_b = 1;
    x.out = out + so * s, x.inc_out = 1;
    x.batch = 1;
    return x;
  };
  const auto c0 = mc::correlation_of(args(0, dout[1]));
  if (!mc::variant_supports(mc::kernel_variant::wide, c0)) {
    printf("unsupported\n");
    return;
  }
  const mc::kernel_variant vs[4] = {mc::kernel_variant::small, mc::kernel_variant::mid,
                                    mc::kernel_variant::large, mc::kernel_variant::wide};
  bool ok[nv];
  for (int v = 0; v < 4; ++v)
    ok[v] = mc::variant_supports(vs[v], mc::correlation_of(args(0, dout[v])));
  ok[4] = true;
  auto call = [&](int v, int s) {
    if (v == 4) return mc::launch_banded(args(s, dout[v]), st);  // the library's dispatch
    const auto c = mc::correlation_of(args(s, dout[v]));
    mc::launch_variant(vs[v], c, mc::tap_split_of(vs[v], c), st);
  };
  // long double reference of set 0
  std::vector<long double> ref(lo, 0);
  if (op == banded_op::convolve) {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) ref[i + j] += (long double)ha[i] * hb[j];
  } else {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) ref[i] += (long double)ha[i + j] * hb[j];
  }
  const char* name = op == banded_op::convolve ? "convolve" : "grad_p";
  const char* tn = sizeof(T) == 4 ? "float" : "double";
  double err[nv];
  for (int v = 0; v < nv; ++v) {
    err[v] = -1;
    if (!ok[v]) continue;
    CK(cudaMemsetAsync(dout[v], 0xff, so * sets * sizeof(T), st));
    call(v, 0);
    std::vector<T> o(lo);
    CK(cudaMemcpyAsync(o.data(), dout[v], lo * sizeof(T), cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    double e = 0;
    for (int i = 0; i < lo; ++i) {
      e = std::max(e, double(std::fabs((o[i] - ref[i]) / ref[i])));
      if (!(o[i] == o[i])) e = INFINITY;
    }
    err[v] = e;
  }
  std::vector<std::vector<cudaGraphExec_t>> graphs(nv);
  for (int v = 0; v < nv; ++v)
    for (int s = 0; s < sets && ok[v]; ++s) {
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
  auto time = [&](auto&& f, int per) {
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
  double best[nv];
  for (int v = 0; v < nv; ++v) best[v] = 1e30;
  for (int pass = 0; pass < 2; ++pass)
    for (int v = 0; v < nv; ++v)
      if (ok[v])
        best[v] = std::min(
            best[v], time([&](int i) { CK(cudaGraphLaunch(graphs[v][i % sets], st)); }, gcalls));
  // the dispatch without the wide tile (launch_banded.cu's rules for single problems)
  double emax = 0;
  for (int v = 0; v < nv; ++v) emax = std::max(emax, err[v]);
  printf(
      "%-6s %-8s taps %5d out %5d | small %6.2f mid %6.2f large %6.2f wide %6.2f lib %6.2f | "
      "wide-lib %+6.2f | err %.1e\n",
      tn, name, c0.la, c0.lout, best[0], best[1], best[2], best[3], best[4], best[3] - best[4],
      emax);
  for (auto& gv : graphs)
    for (auto& x : gv) CK(cudaGraphExecDestroy(x));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(da));
  CK(cudaFree(db));
  for (auto& d : dout) CK(cudaFree(d));
}

int main(int argc, char** argv) {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs; columns: lib/wide per call, µs\n", prop.name,
         prop.multiProcessorCount);
  if (argc > 2) {  // one shape, both ops (for the sanitizers)
    run_shape<double>(banded_op::convolve, atoi(argv[1]), atoi(argv[2]), st);
    run_shape<double>(banded_op::grad_p, atoi(argv[1]), atoi(argv[2]), st);
    return 0;
  }
  // call 7's grid
  for (const int t : {64, 96, 128, 256, 512, 1024, 2048})
    for (const int o : {256, 1024, 2048, 4096, 6000, 8192, 10000}) {
      if (o >= 2 * t - 1) {
        run_shape<float>(banded_op::convolve, o - t + 1, t, st);
        run_shape<double>(banded_op::convolve, o - t + 1, t, st);
      }
      run_shape<float>(banded_op::grad_p, o, t, st);
      run_shape<double>(banded_op::grad_p, o, t, st);
    }
  // beyond the range: more outputs, fewer taps (the library's dispatch is the fallback there)
  for (const int t : {256, 512, 1024, 2048})
    for (const int o : {12000, 16384, 24576, 32768}) {
      run_shape<float>(banded_op::convolve, o - t + 1, t, st);
      run_shape<double>(banded_op::convolve, o - t + 1, t, st);
      run_shape<float>(banded_op::grad_p, o, t, st);
      run_shape<double>(banded_op::grad_p, o, t, st);
    }
  for (const int t : {16, 32, 48})
    for (const int o : {256, 2048, 10000}) {
      run_shape<float>(banded_op::convolve, o - t + 1, t, st);
      run_shape<double>(banded_op::convolve, o - t + 1, t, st);
      run_shape<float>(banded_op::grad_p, o, t, st);
      run_shape<double>(banded_op::grad_p, o, t, st);
    }
  return 0;
}
