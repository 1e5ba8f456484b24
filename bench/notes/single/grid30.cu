// Round 30 (standalone, not built by CMake): the tap split of the 3xTF32 mma
// kernel in batches. Every batch variant forced at the library's split, mma
// also at forced splits 1-8 (at most the tile's stages), beside the library's
// dispatch (launch_banded); the fill rule's split (before round 30) and the
// library's are printed; graphs of calls (as many as take ~2 ms),
// best of two passes of medians of 5 graph launches; max relative error of
// every variant on 300 sampled outputs (both ends and a spread) against long
// double. Build (repo root, after building the library):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include -I numeric/src \
//     -I <build>/numeric/include -o grid30 bench/notes/single/grid30.cu \
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

// columns: the batch variants at the library's split, mma at forced splits
// 1..8, and the library
constexpr int NB = 7, NS = 8, NV = NB + NS + 1;
const mc::kernel_variant vs[NB] = {mc::kernel_variant::small, mc::kernel_variant::mid,
                                   mc::kernel_variant::large, mc::kernel_variant::mma,
                                   mc::kernel_variant::warp,  mc::kernel_variant::lane,
                                   mc::kernel_variant::pairs};
const char* vname[NV] = {"small", "mid",  "large", "mma",  "warp", "lane", "pairs", "mma1",
                         "mma2",  "mma3", "mma4",  "mma5", "mma6", "mma7", "mma8",  "lib"};
constexpr int first_split = NB;  // column first_split + s - 1: mma at split s

// mma_tf32.cu's shape choice and mma_tf32_split's stages and fill rule
// (8 blocks per SM) before round 30
struct mma_geometry {
  int stages, fill_split;
};
mma_geometry mma_geometry_of(const mc::correlation_view<float>& c, int sms) {
  int TJ = 512, KC = 128, IL = 1, cap = 8;
  const bool lead0 = c.lead == 0;
  if (lead0 && c.lout >= 65536)
    TJ = 2048, KC = 256, IL = 4, cap = 7;
  else if (c.lout >= 16384 || (c.lout >= 768 && c.lout <= 1024))
    TJ = 1024, KC = 256, cap = lead0 ? 7 : 8;
  const std::int64_t span = std::min<std::int64_t>(std::int64_t{c.la} + 8 * IL + 7,
                                                   std::int64_t{TJ} + c.lx + 112 * IL + 8 - 1);
  const std::int64_t tiles = (std::int64_t{c.lout} + TJ - 1) / TJ * c.batch;
  const std::int64_t stages = (span + KC - 1) / KC;
  const std::int64_t want = 8 * std::int64_t{sms};
  const int fill =
      int(std::clamp<std::int64_t>(std::min((want + tiles - 1) / tiles, stages), 1, 8));
  return {int(stages), std::min(fill, cap)};
}

template <class T>
void run_shape(banded_op op, int m, int n, int batch, cudaStream_t st) {
  const int sets = std::int64_t(batch) * (m + n) * sizeof(T) > (64 << 20) ? 3 : 8;
  constexpr int reps = 5;
  std::mt19937_64 gen(7 + m + 3 * n);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  const int la = op == banded_op::convolve ? m : m + n - 1, lb = n;
  const int lo = op == banded_op::convolve ? m + n - 1 : m;
  const std::size_t sa = std::size_t(la) * batch, sb = std::size_t(lb) * batch,
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
  for (int v = 0; v < NB; ++v) ok[v] = mc::variant_supports(vs[v], c0);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const mma_geometry geo = mma_geometry_of(c0, sms);
  for (int k = 1; k <= NS; ++k) ok[first_split + k - 1] = k <= geo.stages;
  ok[NV - 1] = true;
  const int lib_split = mc::tap_split_of(mc::kernel_variant::mma, c0);
  auto call = [&](int v, int s) {
    if (v == NV - 1) return mc::launch_banded(args(s, dout[v]), st);  // the library's dispatch
    const auto c = mc::correlation_of(args(s, dout[v]));
    if (v >= first_split)
      return mc::launch_variant(mc::kernel_variant::mma, c, v - first_split + 1, st);
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
  printf(" | best %-5s lib/best %5.2f | split fill %d lib %d stages %d | err %.1e", vname[bi],
         best[NV - 1] / best[bi], geo.fill_split, lib_split, geo.stages, emax);
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
    if (t == 'f') run_shape<float>(op, m, taps, batch, st);  // mma is float only
  }
  return 0;
}
