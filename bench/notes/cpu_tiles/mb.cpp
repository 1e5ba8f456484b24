// Session 21 (standalone, not built by CMake): one correlation per call, one
// thread, the three CPU paths (direct loop, register tiles, block product) timed
// side by side (best of 5 passes) with the max relative error against long double.
// Build (repo root, after a CPU build in build-cpu):
//   g++ -O3 -std=c++20 -march=x86-64-v3 -I numeric/src -I numeric/include \
//     -I build-cpu/numeric/include bench/notes/cpu_tiles/mb.cpp build-cpu/libmarg/libmarg.a \
//     -lpthread -o mb
// Run: ./mb (sizes 8-1024), ./mb 1 (2048-32768), ./mb 1 2, ./mb 1 2 3, ./mb 1 2 3 4.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "cpu/correlate.hpp"
using namespace marg::detail::cpu;
template <class T>
double bench(const correlation<T>& c, int which, int reps) {
  auto run = [&] {
    if (which == 0)
      correlate_direct(c);
    else if (which == 1)
      correlate_simd(c, 1);
    else {
      const std::int64_t small = std::min(c.la, c.lout);
      const std::int64_t block = std::clamp<std::int64_t>(
          (std::int64_t)std::bit_floor((std::uint64_t)(small / 4)), 32, 256);
      correlate_blocked(c, block, 1);
    }
  };
  run();
  double best = 1e30;
  for (int p = 0; p < 5; ++p) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) run();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count() / reps);
  }
  return best;
}
template <class T>
void one(const char* op, std::int64_t la, std::int64_t lx, std::int64_t lead, std::int64_t lout) {
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> a(la), x(lx), o(lout);
  for (auto& v : a) v = u(g);
  for (auto& v : x) v = u(g);
  correlation<T> c{a.data(), la, x.data(), lx, lead, o.data(), lout};
  double fma = 0;
  for (std::int64_t j = 0; j < lout; ++j)
    for (std::int64_t k = 0; k < la; ++k) {
      auto t = j + k - lead;
      if (t >= 0 && t < lx) fma++;
    }
  int reps = std::max<int>(1, (int)(2e7 / (fma + 100)));
  double t[3];
  double err[3];
  for (int w = 0; w < 3; ++w) {
    t[w] = bench(c, w, reps);
    err[w] = 0;
    for (std::int64_t j = 0; j < lout; j += std::max<std::int64_t>(1, lout / 200)) {
      long double s = 0;
      for (std::int64_t k = 0; k < la; ++k) {
        auto tt = j + k - lead;
        if (tt >= 0 && tt < lx) s += (long double)a[k] * x[tt];
      }
      if (s > 0) err[w] = std::max(err[w], (double)(std::fabs((long double)o[j] - s) / s));
    }
  }
  printf(
      "%s %-6s la %5ld lout %5ld | direct %9.3f us simd %9.3f us blocked %9.3f us | simd GF %6.1f "
      "x_direct %5.2f x_blocked %5.2f | err %.1e %.1e %.1e\n",
      sizeof(T) == 4 ? "f" : "d", op, (long)la, (long)lout, t[0] * 1e6, t[1] * 1e6, t[2] * 1e6,
      2 * fma / t[1] / 1e9, t[0] / t[1], t[2] / t[1], err[0], err[1], err[2]);
}
int main(int argc, char**) {
  if (argc > 4) {
    for (int la : {100, 1000, 5000})
      for (int lout : {4, 10, 40}) {
        one<float>("grad", la, la + lout - 1, 0, lout);
        one<double>("grad", la, la + lout - 1, 0, lout);
      }
    for (int la : {48, 64})
      for (int lout : {100, 1000}) {
        one<double>("grad", la, la + lout - 1, 0, lout);
        one<double>("conv", la, lout, la - 1, la + lout - 1);
      }
    return 0;
  }
  if (argc > 3) {
    for (int la : {2, 4, 8, 16, 32})
      for (int lout : {100, 1000, 10000}) {
        one<float>("grad", la, la + lout - 1, 0, lout);
        one<double>("grad", la, la + lout - 1, 0, lout);
      }
    for (int la : {2, 4, 8, 16, 32})
      for (int n : {100, 1000, 10000}) {
        one<float>("conv", la, n, la - 1, n + la - 1);
        one<double>("conv", la, n, la - 1, la + n - 1);
      }
    return 0;
  }
  if (argc > 2) {
    for (int n : {1024, 1500, 2048, 3000, 4096}) {
      one<float>("conv", n, n, n - 1, 2 * n - 1);
      one<double>("conv", n, n, n - 1, 2 * n - 1);
    }
    for (int la : {64, 128, 256, 512})
      for (int lout : {1000, 4000, 16000}) {
        one<float>("grad", la, la + lout - 1, 0, lout);
        one<double>("grad", la, la + lout - 1, 0, lout);
      }
    return 0;
  }
  if (argc > 1) {
    for (int n : {2048, 4096, 8192, 16384, 32768}) {
      one<float>("conv", n, n, n - 1, 2 * n - 1);
      one<double>("conv", n, n, n - 1, 2 * n - 1);
    }
    for (auto [la, lout] : {std::pair{256, 65536}, {2048, 4096}, {4096, 2048}, {1024, 16384}}) {
      one<float>("grad", la, la + lout - 1, 0, lout);
      one<double>("grad", la, la + lout - 1, 0, lout);
    }
    return 0;
  }
  for (int n : {8, 16, 32, 64, 128, 256, 512, 1024}) {
    one<float>("conv", n, n, n - 1, 2 * n - 1);
  }
  for (int n : {8, 16, 32, 64, 128, 256, 512, 1024}) {
    one<double>("conv", n, n, n - 1, 2 * n - 1);
  }
  for (auto [la, lout] :
       {std::pair{64, 64}, {16, 1000}, {300, 100}, {100, 3000}, {1000, 100}, {48, 20000}})
    one<float>("grad", la, la + lout - 1, 0, lout);
  for (auto [la, lout] :
       {std::pair{64, 64}, {16, 1000}, {300, 100}, {100, 3000}, {1000, 100}, {48, 20000}})
    one<double>("grad", la, la + lout - 1, 0, lout);
}
