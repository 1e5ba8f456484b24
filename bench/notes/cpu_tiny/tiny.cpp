// Per-problem cost of batches of small products on the CPU backend (one
// thread): the library's batched call against the plain loop over the batch,
// ns per problem, median of 15 runs. Arguments: none; prints one row per shape.
#include <marg/marg.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {
template <class T>
std::vector<T> random_vector(std::size_t size, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<T> v(size);
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}
template <class F>
double median_ns(F&& f, int problems) {
  std::vector<double> t;
  for (int r = 0; r < 15; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / problems);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
template <class T>
void row(const char* type, int op, int m, int n) {
  const int batch = std::max(256, (1 << 22) / (m * n));
  const std::int64_t lr = m + n - 1;
  const auto p = random_vector<T>(std::size_t(batch) * m, 1);
  const auto q = random_vector<T>(std::size_t(batch) * n, 2);
  const auto g = random_vector<T>(std::size_t(batch) * lr, 3);
  std::vector<T> r(std::size_t(batch) * lr);
  const double lib = median_ns(
      [&] {
        if (op == 0)
          marg::convolve_batched<T>(m, n, p.data(), 1, m, q.data(), 1, n, r.data(), 1, lr, batch);
        else
          marg::convolve_grad_p_batched<T>(m, n, g.data(), 1, lr, q.data(), 1, n, r.data(), 1, m,
                                           batch);
      },
      batch);
  const double plain = median_ns(
      [&] {
        for (int b = 0; b < batch; ++b) {
          T* o = r.data() + std::size_t(b) * lr;
          if (op == 0) {
            const T *pp = p.data() + std::size_t(b) * m, *qq = q.data() + std::size_t(b) * n;
            for (int i = 0; i < m + n - 1; ++i) {
              T acc = 0;
              for (int j = std::max(0, i - n + 1); j <= std::min(i, m - 1); ++j)
                acc += pp[j] * qq[i - j];
              o[i] = acc;
            }
          } else {
            const T *gg = g.data() + std::size_t(b) * lr, *qq = q.data() + std::size_t(b) * n;
            for (int i = 0; i < m; ++i) {
              T acc = 0;
              for (int j = 0; j < n; ++j) acc += gg[i + j] * qq[j];
              o[i] = acc;
            }
          }
        }
        asm volatile("" ::"r"(r.data()) : "memory");
      },
      batch);
  std::printf("%-6s %-7s m %5d n %3d batch %7d | lib %8.1f ns plain %8.1f ns lib/plain %.2f\n",
              type, op ? "grad_p" : "conv", m, n, batch, lib, plain, lib / plain);
}
}  // namespace

int main() {
  marg::set_backend(marg::backend::cpu);
  marg::set_cpu_threads(1);
  const int shapes[][2] = {{2, 2},   {3, 3},   {6, 6},    {8, 8},     {12, 12}, {15, 15}, {40, 6},
                           {100, 6}, {300, 8}, {1000, 6}, {1000, 15}, {6, 40},  {47, 47}};
  for (int op = 0; op < 2; ++op)
    for (auto [m, n] : shapes) {
      row<float>("float", op, m, n);
      row<double>("double", op, m, n);
    }
}
