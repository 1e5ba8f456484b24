// Round 30 (standalone, not built by CMake): direct (not graph) calls of tiny
// single problems, library dispatch against the small tile at forced tap
// splits, in bench_cuda's pattern (bursts of back-to-back launches, events
// around a burst, median of 21 bursts), with the host time per enqueue.
// Build (repo root, after building the library):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include -I numeric/src \
//     -I <build>/numeric/include -o tiny bench/notes/single/tiny.cu \
//     <build>/libmarg/libmarg.a <build>/marg_jemalloc/libmarg_jemalloc.a -ldl -lrt -lpthread
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
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
void run(banded_op op, int m, int n, cudaStream_t st) {
  const int la = op == banded_op::convolve ? m : m + n - 1;
  const int lo = op == banded_op::convolve ? m + n - 1 : (op == banded_op::grad_p ? m : n);
  // grad_q reads q's place from the x operand: the harness passes (a = g, b = p)
  std::vector<T> ha(la + n + 64, T(0.5)), hb(n + m + 64, T(0.25));
  for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = T(0.01 + (i % 97) / 97.0);
  for (std::size_t i = 0; i < hb.size(); ++i) hb[i] = T(0.02 + (i % 89) / 89.0);
  T *da, *db, *dout;
  CK(cudaMalloc(&da, ha.size() * sizeof(T)));
  CK(cudaMalloc(&db, hb.size() * sizeof(T)));
  CK(cudaMalloc(&dout, (lo + 64) * sizeof(T)));
  CK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
  banded_args<T> x{};
  x.op = op, x.m = m, x.n = n;
  x.a = da, x.inc_a = 1, x.stride_a = la;
  x.b = db, x.inc_b = 1, x.stride_b = op == banded_op::grad_q ? m : n;
  x.out = dout, x.inc_out = 1, x.stride_out = lo;
  x.batch = 1;
  const auto c = mc::correlation_of(x);
  // columns: library, small at splits 1, 2, 4, 8 (up to its stages), warp
  const char* names[] = {"lib", "small1", "small2", "small4", "small8", "mid1", "warp"};
  const int splits[] = {0, 1, 2, 4, 8, 1, 1};
  std::vector<T> ref(lo);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  printf("%-6s %-8s %5d x %4d taps %5d out %5d lib_split(small) %d |",
         sizeof(T) == 4 ? "float" : "double",
         op == banded_op::convolve ? "convolve"
         : op == banded_op::grad_p ? "grad_p"
                                   : "grad_q",
         m, n, c.la, c.lout, mc::tap_split_of(mc::kernel_variant::small, c));
  for (int v = 0; v < 7; ++v) {
    auto call = [&] {
      if (v == 0) return mc::launch_banded(x, st);
      const auto kv = v <= 4 ? mc::kernel_variant::small
                             : (v == 5 ? mc::kernel_variant::mid : mc::kernel_variant::warp);
      if (!mc::variant_supports(kv, c)) return;
      mc::launch_variant(kv, c, splits[v], st);
    };
    if (v > 0 && !mc::variant_supports(
                     v <= 4 ? mc::kernel_variant::small
                            : (v == 5 ? mc::kernel_variant::mid : mc::kernel_variant::warp),
                     c)) {
      printf(" %s -", names[v]);
      continue;
    }
    // correctness of this column
    CK(cudaMemsetAsync(dout, 0, lo * sizeof(T), st));
    call();
    std::vector<T> o(lo);
    CK(cudaMemcpyAsync(o.data(), dout, lo * sizeof(T), cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    double err = 0;
    for (int i = 0; i < lo; i += std::max(1, lo / 50)) {
      long double s = 0;
      if (op == banded_op::convolve) {
        for (int j = std::max(0, i - m + 1); j <= std::min(i, n - 1); ++j)
          s += (long double)ha[i - j] * hb[j];
      } else if (op == banded_op::grad_p) {
        for (int j = 0; j < n; ++j) s += (long double)ha[i + j] * hb[j];
      } else {
        for (int j = 0; j < m; ++j) s += (long double)ha[i + j] * hb[j];
      }
      err = std::max(err, double(std::fabs((o[i] - s) / s)));
    }
    constexpr int burst = 40, bursts = 21;
    std::vector<double> t, h;
    for (int b = 0; b < bursts + 1; ++b) {
      CK(cudaEventRecord(e0, st));
      const auto h0 = std::chrono::steady_clock::now();
      for (int i = 0; i < burst; ++i) call();
      const auto h1 = std::chrono::steady_clock::now();
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (b > 0) {
        t.push_back(1e3 * ms / burst);
        h.push_back(std::chrono::duration<double, std::micro>(h1 - h0).count() / burst);
      }
    }
    std::sort(t.begin(), t.end());
    std::sort(h.begin(), h.end());
    printf(" %s %.2f (host %.2f)%s", names[v], t[t.size() / 2], h[h.size() / 2],
           err > (sizeof(T) == 4 ? 1e-5 : 1e-12) ? " BAD" : "");
  }
  printf("\n");
  fflush(stdout);
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dout));
}

int main() {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s; direct calls, us per call (median of 21 bursts of 40)\n", prop.name);
  const int shapes[][2] = {{1000, 3},  {3, 1000}, {2000, 5}, {500, 8},
                           {4000, 16}, {300, 2},  {1000, 30}};
  for (int pass = 0; pass < 2; ++pass)
    for (auto& s : shapes)
      for (banded_op op : {banded_op::convolve, banded_op::grad_p, banded_op::grad_q}) {
        run<float>(op, s[0], s[1], st);
        run<double>(op, s[0], s[1], st);
      }
  return 0;
}
