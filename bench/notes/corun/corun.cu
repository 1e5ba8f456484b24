// Co-run experiment: pairs (float FFMA) and mma (FP64 DMMA) on two streams,
// splitting a batch of 512x512 convolutions. Standalone; not in the tree.
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "launch.hpp"

using namespace marg::detail;
using namespace marg::detail::cuda;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1);} } while (0)

constexpr int N = 512, B = 4096, R = 2 * N - 1;

template <class T> struct bufs {
  T *a, *b, *out, *ga;  // ga: grad_p's first operand (length R)
  void init(std::mt19937& g) {
    CK(cudaMalloc(&a, sizeof(T) * N * B)); CK(cudaMalloc(&b, sizeof(T) * N * B));
    CK(cudaMalloc(&out, sizeof(T) * R * B)); CK(cudaMalloc(&ga, sizeof(T) * R * B));
    std::uniform_real_distribution<double> u(0.01, 1.0);
    std::vector<T> h(std::size_t(R) * B);
    for (auto& v : h) v = T(u(g));
    CK(cudaMemcpy(a, h.data(), sizeof(T) * N * B, cudaMemcpyHostToDevice));
    for (auto& v : h) v = T(u(g));
    CK(cudaMemcpy(b, h.data(), sizeof(T) * N * B, cudaMemcpyHostToDevice));
    for (auto& v : h) v = T(u(g));
    CK(cudaMemcpy(ga, h.data(), sizeof(T) * R * B, cudaMemcpyHostToDevice));
  }
  // problems [first, first + n) of op
  correlation_view<T> view(banded_op op, int first, int n) const {
    banded_args<T> x{};
    x.op = op; x.m = N; x.n = N; x.batch = n; x.inc_a = x.inc_b = x.inc_out = 1;
    if (op == banded_op::convolve) {
      x.a = a + std::int64_t(first) * N; x.stride_a = N;
      x.b = b + std::int64_t(first) * N; x.stride_b = N;
      x.out = out + std::int64_t(first) * R; x.stride_out = R;
    } else {
      x.a = ga + std::int64_t(first) * R; x.stride_a = R;
      x.b = b + std::int64_t(first) * N; x.stride_b = N;
      x.out = out + std::int64_t(first) * R; x.stride_out = R;
    }
    return correlation_of(x);
  }
};

int main(int argc, char** argv) {
  std::mt19937 g(7);
  bufs<float> f; f.init(g);
  bufs<double> d; d.init(g);
  cudaStream_t sa, sb;
  CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  cudaEvent_t e0, e1, fork, join;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);

  // nd problems on DMMA (op dop, double data), the rest on pairs (float conv)
  auto run = [&](int nd, banded_op dop, bool dmma_first, bool only_d) {
    const int nf = only_d ? 0 : B - nd;
    auto launch_d = [&] {
      if (nd == 0) return;
      auto c = d.view(dop, nf, nd);
      launch_variant(kernel_variant::mma, c, tap_split_of(kernel_variant::mma, c), sb);
    };
    auto launch_f = [&] {
      if (nf == 0) return;
      auto c = f.view(banded_op::convolve, 0, nf);
      launch_variant(kernel_variant::pairs, c, 1, sa);
    };
    auto once = [&] {
      CK(cudaEventRecord(fork, sa)); CK(cudaStreamWaitEvent(sb, fork));
      if (dmma_first) { launch_d(); launch_f(); } else { launch_f(); launch_d(); }
      CK(cudaEventRecord(join, sb)); CK(cudaStreamWaitEvent(sa, join));
    };
    for (int i = 0; i < 5; ++i) once();
    CK(cudaStreamSynchronize(sa));
    std::vector<float> t;
    for (int r = 0; r < 15; ++r) {
      CK(cudaEventRecord(e0, sa));
      for (int i = 0; i < 20; ++i) once();
      CK(cudaEventRecord(e1, sa));
      CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000.f / 20);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    std::printf("%-8s nd=%4d nf=%4d %s  median %7.2f us  min %7.2f max %7.2f\n",
                dop == banded_op::convolve ? "dconv" : "dgradp", nd, nf,
                dmma_first ? "dmma-first " : "pairs-first", t[t.size() / 2], t.front(), t.back());
  };
  // pairs on all 4096 float problems first (its persistent grid: 4 blocks per
  // SM), then k extra DMMA problems that fit beside it
  auto extra = [&](int k, banded_op dop) {
    auto cf = f.view(banded_op::convolve, 0, B);
    auto once = [&] {
      CK(cudaEventRecord(fork, sa)); CK(cudaStreamWaitEvent(sb, fork));
      launch_variant(kernel_variant::pairs, cf, 1, sa);
      if (k) { auto c = d.view(dop, 0, k);
        launch_variant(kernel_variant::mma, c, tap_split_of(kernel_variant::mma, c), sb); }
      CK(cudaEventRecord(join, sb)); CK(cudaStreamWaitEvent(sa, join));
    };
    for (int i = 0; i < 5; ++i) once();
    std::vector<float> t;
    for (int r = 0; r < 15; ++r) {
      CK(cudaEventRecord(e0, sa));
      for (int i = 0; i < 20; ++i) once();
      CK(cudaEventRecord(e1, sa)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1000.f / 20);
    }
    std::sort(t.begin(), t.end());
    std::printf("pairs 4096 + %s k=%4d: median %7.2f us  (%.1f problems/us)\n",
                dop == banded_op::convolve ? "dconv " : "dgradp", k, t[t.size() / 2], (B + k) / t[t.size() / 2]);
  };
  for (int rep = 0; rep < 2; ++rep) {
    for (int k : {0, 66, 132, 264, 396, 528, 792, 1056}) extra(k, banded_op::grad_p);
    for (int k : {132, 264, 528}) extra(k, banded_op::convolve);
    for (int k : {132, 264, 528, 1056}) run(k, banded_op::grad_p, true, true);
  }
  // correctness of one co-run: sample problems vs a long double loop
  {
    const int nd = 1024, nf = B - nd;
    CK(cudaMemset(f.out, 0, sizeof(float) * R * B)); CK(cudaMemset(d.out, 0, sizeof(double) * R * B));
    auto cd = d.view(banded_op::convolve, nf, nd);
    auto cf = f.view(banded_op::convolve, 0, nf);
    launch_variant(kernel_variant::mma, cd, tap_split_of(kernel_variant::mma, cd), sb);
    launch_variant(kernel_variant::pairs, cf, 1, sa);
    CK(cudaDeviceSynchronize());
    std::vector<float> fa(N * B), fb(N * B), fo(std::size_t(R) * B);
    std::vector<double> da(N * B), db(N * B), dout(std::size_t(R) * B);
    CK(cudaMemcpy(fa.data(), f.a, 4 * N * B, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(fb.data(), f.b, 4 * N * B, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(fo.data(), f.out, 4 * std::size_t(R) * B, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(da.data(), d.a, 8 * N * B, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(db.data(), d.b, 8 * N * B, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(dout.data(), d.out, 8 * std::size_t(R) * B, cudaMemcpyDeviceToHost));
    double ef = 0, ed = 0;
    for (int q : {0, 1, 17, nf - 1}) for (int i = 0; i < R; ++i) {
      long double s = 0;
      for (int k = std::max(0, i - N + 1); k <= std::min(i, N - 1); ++k) s += (long double)fa[q * N + k] * fb[q * N + i - k];
      ef = std::max(ef, double(std::fabs(fo[std::size_t(q) * R + i] - s) / s));
    }
    for (int q : {nf, nf + 1, B - 1}) for (int i = 0; i < R; ++i) {
      long double s = 0;
      for (int k = std::max(0, i - N + 1); k <= std::min(i, N - 1); ++k) s += (long double)da[q * N + k] * db[q * N + i - k];
      ed = std::max(ed, double(std::fabs(dout[std::size_t(q) * R + i] - s) / s));
    }
    std::printf("co-run errors: float %.3g double %.3g\n", ef, ed);
  }
  return 0;
}
