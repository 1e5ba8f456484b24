// Round 37 (standalone, not built by CMake): round 33's harness (audit33.cu,
// in git at b54d04d) with six more columns, the DMMA variant at forced tap
// splits 1, 2, 3, 4, 6 and 8 (mma1 .. mma8). Round 33's note: random single problems. Every variant
// that supports the shape forced (the single-problem wgmma and wide kernels
// only for batch 1), the three FMA tiles also with tap splits 1, 2, 3, 4, 6 and 8,
// beside the library's dispatch (launch_banded); graphs of calls (as many as take ~2 ms),
// best of two passes of medians of 5 graph launches; max relative error of
// every variant on 300 sampled outputs (both ends and a spread) against long
// double. Build (repo root, after building the library):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include -I numeric/src \
//     -I <build>/numeric/include -o single bench/notes/single/single_grid.cu \
//     <build>/libmarg/libmarg.a <build>/marg_jemalloc/libmarg_jemalloc.a -ldl -lrt -lpthread
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/tiled.cuh"
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

// columns: the nine variants at the library's split, the three tiles at
// forced splits 1, 2, 4, 8, and the library
constexpr int NV = 34;
const mc::kernel_variant vs[9] = {
    mc::kernel_variant::small, mc::kernel_variant::mid,   mc::kernel_variant::large,
    mc::kernel_variant::mma,   mc::kernel_variant::wgmma, mc::kernel_variant::wide,
    mc::kernel_variant::warp,  mc::kernel_variant::lane,  mc::kernel_variant::pairs};
const char* vname[NV] = {"small",  "mid",    "large",  "mma",    "wgmma",  "wide",   "warp",
                         "lane",   "pairs",  "small1", "small2", "small3", "small4", "small6",
                         "small8", "mid1",   "mid2",   "mid3",   "mid4",   "mid6",   "mid8",
                         "large1", "large2", "large3", "large4", "large6", "large8", "mma1",
                         "mma2",   "mma3",   "mma4",   "mma6",   "mma8",   "lib"};
constexpr int first_split = 9;  // columns small1 .. mma8: variant (v - 9) / 6 (small, mid, large,
                                // mma) at split splits[(v - 9) % 6]
constexpr int splits[6] = {1, 2, 3, 4, 6, 8};
template <class C, class T>
int stages_of(const mc::correlation_view<T>& c) {
  const std::int64_t taps = std::min<std::int64_t>(c.la, std::int64_t{C::TJ} + c.lx - 1);
  return int((taps + C::KC - 1) / C::KC);
}

template <class T>
void run_shape(banded_op op, int m, int n, int batch, cudaStream_t st) {
  const int sets = std::int64_t(batch) * (m + n) * sizeof(T) > (64 << 20) ? 3 : 8;
  constexpr int reps = 5;
  std::mt19937_64 gen(7 + m + 3 * n);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  const int la = op == banded_op::convolve ? m : m + n - 1, lb = n;
  const int lo = op == banded_op::convolve ? m + n - 1 : m;
  // every buffer set starts 128-byte aligned, so a variant's support and
  // the library's choice are the same for every set
  const std::size_t sa = (std::size_t(la) * batch + 31) / 32 * 32,
                    sb = (std::size_t(lb) * batch + 31) / 32 * 32,
                    so = (std::size_t(lo) * batch + 31) / 32 * 32;
  std::vector<T> ha(sa * sets), hb(sb * sets);
  for (auto& v : ha) v = T(u(gen));
  for (auto& v : hb) v = T(u(gen));
  T *da, *db, *dout[NV];
  CK(cudaMalloc(&da, ha.size() * sizeof(T)));
  CK(cudaMalloc(&db, hb.size() * sizeof(T)));
  for (auto& d : dout) CK(cudaMalloc(&d, so * sets * sizeof(T)));
  CK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
  // the copies are on the legacy stream and st does not wait for it: a copy
  // from pageable memory may still be in flight when cudaMemcpy returns
  CK(cudaDeviceSynchronize());
  auto args = [&](int s, T* out) {
    banded_args<T> x{};
    x.op = op, x.m = m, x.n = n;
    x.a = da + sa * s, x.inc_a = 1, x.stride_a = la;
    x.b = db + sb * s, x.inc_b = 1, x.stride_b = lb;
    x.out = out + so * s, x.inc_out = 1, x.stride_out = lo;
    x.batch = batch;
    return x;
  };
  const auto c0 = mc::correlation_of(args(0, dout[0]));
  bool ok[NV];
  // supported at every buffer set (the sets' bases differ in alignment)
  for (int v = 0; v < first_split; ++v) {
    ok[v] = true;
    for (int s = 0; s < sets; ++s)
      ok[v] = ok[v] && mc::variant_supports(vs[v], mc::correlation_of(args(s, dout[v])));
  }
  // batches: the single-problem kernels (wgmma, wide) are not candidates
  if (batch > 1) ok[4] = ok[5] = false;
  {
    using tun = mc::tiled_tunings<T>;
    // the DMMA tile (mma_f64.cu): TJ 512 both; 512 taps per stage beyond
    // 1024 outputs, else 256; stages of the span + 15
    const std::int64_t mkc = c0.lout > 1024 ? 512 : 256;
    const int mst =
        int((std::min<std::int64_t>(c0.la, 512 + std::int64_t{c0.lx} - 1) + 15 + mkc - 1) / mkc);
    const int st[4] = {stages_of<typename tun::small>(c0), stages_of<typename tun::mid>(c0),
                       stages_of<typename tun::large>(c0), mst};
    for (int v = first_split; v < NV - 1; ++v) {
      const int t = (v - first_split) / 6, s = splits[(v - first_split) % 6];
      ok[v] = ok[t] && s <= st[t] && (t < 3 || sizeof(T) == 8);  // forced DMMA splits: double only
    }
  }
  ok[NV - 1] = true;
  auto call = [&](int v, int s) {
    if (v == NV - 1) return mc::launch_banded(args(s, dout[v]), st);  // the library's dispatch
    const auto c = mc::correlation_of(args(s, dout[v]));
    if (v >= first_split)
      return mc::launch_variant(vs[(v - first_split) / 6], c, splits[(v - first_split) % 6], st);
    mc::launch_variant(vs[v], c, mc::tap_split_of(vs[v], c), st);
  };
  // sampled outputs: 100 at each end, 100 spread between
  std::vector<int> idx;
  for (int i = 0; i < std::min(lo, 100); ++i) idx.push_back(i), idx.push_back(lo - 1 - i);
  for (int i = 0; i < 100; ++i) idx.push_back(int((long long)(lo - 1) * i / 99));
  std::vector<long double> ref(idx.size(), 0);
  for (std::size_t q = 0; q < idx.size(); ++q) {
    const int i = idx[q];
    long double s = 0;
    if (op == banded_op::convolve) {
      for (int j = std::max(0, i - m + 1); j <= std::min(i, n - 1); ++j)
        s += (long double)ha[i - j] * hb[j];
    } else {
      for (int j = 0; j < n; ++j) s += (long double)ha[i + j] * hb[j];
    }
    ref[q] = s;
  }
  const char* name = op == banded_op::convolve ? "convolve" : "grad_p";
  const char* tn = sizeof(T) == 4 ? "float" : "double";
  double emax = 0, ev[NV] = {};
  std::vector<T> o(lo);
  for (int v = 0; v < NV; ++v) {
    if (!ok[v]) continue;
    CK(cudaMemsetAsync(dout[v], 0xff, so * sets * sizeof(T), st));
    call(v, 0);
    std::fill(o.begin(), o.end(), T(-7));  // a copy that does not land shows as -7
    CK(cudaMemcpyAsync(o.data(), dout[v], lo * sizeof(T), cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    for (std::size_t q = 0; q < idx.size(); ++q) {
      const double e = double(std::fabs((o[idx[q]] - ref[q]) / ref[q]));
      emax = std::max(emax, e == e ? e : INFINITY);
      if (v == NV - 1 && e > (sizeof(T) == 4 ? 1e-5 : 1e-12) && e >= ev[v])
        printf("[lib: output %d is %g, reference %g] ", idx[q], double(o[idx[q]]), double(ref[q]));
      ev[v] = std::max(ev[v], e == e ? e : INFINITY);
    }
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto elapsed_us = [&](auto&& f) {
    CK(cudaEventRecord(e0, st));
    f();
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return 1e3 * ms;
  };
  double best[NV];
  const bool check_only = std::getenv("GRID_CHECK_ONLY") != nullptr;  // correctness only
  for (int v = 0; v < NV; ++v) {
    best[v] = check_only ? 1 : -1;
    if (!ok[v] || check_only) continue;
    call(v, 1);
    const double one = elapsed_us([&] {
                         for (int i = 0; i < 3; ++i) call(v, (i + 2) % sets);
                       }) /
                       3;
    const int calls = int(std::clamp(2000.0 / one, 1.0, 20.0));
    std::vector<cudaGraphExec_t> graphs;
    for (int s = 0; s < sets; ++s) {
      cudaGraph_t gr;
      cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < calls; ++i) call(v, (s + i) % sets);
      CK(cudaStreamEndCapture(st, &gr));
      CK(cudaGraphInstantiate(&ge, gr, 0));
      CK(cudaGraphUpload(ge, st));
      CK(cudaGraphDestroy(gr));
      graphs.push_back(ge);
    }
    best[v] = 1e30;
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<double> t;
      for (int r = 0; r < reps + 1; ++r) {
        const double us = elapsed_us([&] { CK(cudaGraphLaunch(graphs[r % sets], st)); }) / calls;
        if (r > 0) t.push_back(us);
      }
      std::sort(t.begin(), t.end());
      best[v] = std::min(best[v], t[t.size() / 2]);
    }
    for (auto& g : graphs) CK(cudaGraphExecDestroy(g));
  }
  int bi = -1;
  for (int v = 0; v < NV - 1; ++v)
    if (ok[v] && (bi < 0 || best[v] < best[bi])) bi = v;
  printf("%-6s %-8s batch %5d taps %6d out %6d |", tn, name, batch, c0.la, c0.lout);
  for (int v = 0; v < NV; ++v) {
    if (ok[v])
      printf(" %s %8.2f", vname[v], best[v]);
    else
      printf(" %s %8s", vname[v], "-");
  }
  printf(" | best %-5s lib/best %5.2f | err %.1e", vname[bi], best[NV - 1] / best[bi], emax);
  for (int v = 0; v < NV; ++v)  // variants off by more than rounding
    if (ok[v] && ev[v] > (sizeof(T) == 4 ? 1e-5 : 1e-12)) printf(" BAD %s %.1e", vname[v], ev[v]);
  printf("\n");
  fflush(stdout);
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
  printf("device %s, %d SMs; per call, us (graphs)\n", prop.name, prop.multiProcessorCount);
  // shapes from stdin: "f|d c|g batch taps outputs" per line
  char t, o;
  int batch, taps, out;
  while (scanf(" %c %c %d %d %d", &t, &o, &batch, &taps, &out) == 5) {
    const banded_op op = o == 'c' ? banded_op::convolve : banded_op::grad_p;
    const int m = o == 'c' ? out - taps + 1 : out;
    if (t == 'f')
      run_shape<float>(op, m, taps, batch, st);
    else
      run_shape<double>(op, m, taps, batch, st);
  }
  return 0;
}
