#include "correlate.hpp"

#include <marg/numeric/cancel.hpp>

#define EIGEN_DONT_PARALLELIZE  // threads are ours (parallel_for)
#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "parallel.hpp"

namespace marg::detail::cpu::MARG_CPU_ISA_NS {

template <class T>
void correlate_direct(const correlation<T>& c) {
  // double accumulators, summed in chunks of taps: the rounding error grows
  // with the chunk length plus the number of chunks, not with la
  thread_local std::vector<double> acc, part;
  acc.assign(static_cast<std::size_t>(c.lout), 0.0);
  part.resize(static_cast<std::size_t>(c.lout));
  for (std::int64_t k0 = 0; k0 < c.la; k0 += tuning::direct_chunk) {
    const std::int64_t k1 = std::min(c.la, k0 + tuning::direct_chunk);
    std::fill(part.begin(), part.end(), 0.0);
    std::int64_t lo = c.lout, hi = 0;  // range of part touched by this chunk
    for (std::int64_t k = k0; k < k1; ++k) {
      // part[j] += a_k x[j + k - lead] where the x index is inside [0, lx)
      const std::int64_t j0 = std::max<std::int64_t>(0, c.lead - k);
      const std::int64_t j1 = std::min<std::int64_t>(c.lout, c.lead - k + c.lx);
      if (j0 >= j1) continue;
      lo = std::min(lo, j0);
      hi = std::max(hi, j1);
      const double ak = c.a[k];
      const T* xs = c.x + (j0 + k - c.lead);
      double* o = part.data() + j0;
      const std::int64_t len = j1 - j0;
      for (std::int64_t j = 0; j < len; ++j) o[j] += ak * static_cast<double>(xs[j]);
    }
    for (std::int64_t j = lo; j < hi; ++j) acc[j] += part[j];
  }
  for (std::int64_t j = 0; j < c.lout; ++j) c.out[j] = static_cast<T>(acc[j]);
}

namespace {

// GCC's predictive commoning (-O3) keeps each X value of one tap for the
// next, in scalar registers shuffled into vectors: far slower than reloading
// (docs/kernel-notes.md, CPU backend)
#if defined(__GNUC__) && !defined(__clang__)
#define MARG_RELOAD_WINDOWS [[gnu::noinline, gnu::optimize("no-predictive-commoning")]]
#else
#define MARG_RELOAD_WINDOWS
#endif

// part[r] = sum over taps k0 <= k < k1 of a_k xs[k + r]: the tile in registers
template <class T, int B>
MARG_RELOAD_WINDOWS void simd_taps(const T* a, const T* xs, std::int64_t k0, std::int64_t k1,
                                   T (&part)[B]) {
  T p[B] = {};
  for (std::int64_t k = k0; k < k1; ++k) {
    const T ak = a[k];
    for (int r = 0; r < B; ++r) p[r] = mul_add(ak, xs[k + r], p[r]);
  }
  for (int r = 0; r < B; ++r) part[r] = p[r];
}

}  // namespace

template <class T>
void correlate_simd(const correlation<T>& c, int threads) {
  constexpr int B = tuning::simd_tile<T>;
  const std::int64_t tiles = (c.lout + B - 1) / B;
  // X_t = x[t - lead] for lead <= t < lead + lx, zero elsewhere, t < span: every
  // tile reads whole windows of B values without a range test
  const std::int64_t span = tiles * B + c.la;
  thread_local std::vector<T> xb;
  xb.assign(static_cast<std::size_t>(span), T(0));
  const std::int64_t t0 = std::min(c.lead, span), t1 = std::min(c.lead + c.lx, span);
  if (t1 > t0) std::copy(c.x, c.x + (t1 - t0), xb.begin() + t0);
  const T* const x = xb.data();
  // read on the calling thread: the workers see its scope
  const cancel_scope* const scope = cancel_scope::current();
  const auto run = [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t j0 = i0 * B; j0 < i1 * B; j0 += B) {
      // a stop skips the remaining tiles (the caller throws)
      if (scope != nullptr && (j0 / B) % 16 == 0 && scope->stop_requested()) return;
      // taps whose window [j0 + k, j0 + k + B) meets the non-zero X
      const std::int64_t k0 = std::max<std::int64_t>(0, c.lead - j0 - B + 1);
      const std::int64_t k1 = std::min<std::int64_t>(c.la, c.lead + c.lx - j0);
      double sum[B] = {};
      for (std::int64_t kc = k0; kc < k1; kc += tuning::simd_chunk) {
        T part[B];
        simd_taps<T, B>(c.a, x + j0, kc, std::min(k1, kc + tuning::simd_chunk), part);
        for (int r = 0; r < B; ++r) sum[r] += static_cast<double>(part[r]);
      }
      const std::int64_t n = std::min<std::int64_t>(B, c.lout - j0);
      for (std::int64_t r = 0; r < n; ++r) c.out[j0 + r] = static_cast<T>(sum[r]);
    }
  };
  if (threads > 1 && tiles > 1)
    parallel_for(tiles, threads, run);
  else
    run(0, tiles);
}

template <class T>
void correlate_blocked(const correlation<T>& c, std::int64_t block, int threads) {
  using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  using vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  const std::int64_t bs = block;
  const std::int64_t n_out = (c.lout + bs - 1) / bs;     // output block columns
  const std::int64_t n_diag = (c.la + bs - 1) / bs + 1;  // block diagonals C_0 .. C_{K-1}
  const std::int64_t n_x = n_out + n_diag - 1;           // X block columns ever read

  // X as a bs x n_x column-major matrix; only blocks [x0, x1) hold non-zeros
  std::vector<T> xbuf(static_cast<std::size_t>(n_x * bs), T(0));
  const std::int64_t x_end = std::min(c.lead + c.lx, n_x * bs);
  if (x_end > c.lead) std::copy(c.x, c.x + (x_end - c.lead), xbuf.begin() + c.lead);
  const std::int64_t x0 = c.lead / bs;
  const std::int64_t x1 = (x_end + bs - 1) / bs;

  // a reversed and zero-padded, so that each column of the Toeplitz block
  // C_b(d, f) = a[b*bs + f - d] is a contiguous run: rev[s - b*bs - f + d]
  const std::int64_t s = n_diag * bs - 1;
  std::vector<T> rev(static_cast<std::size_t>(s + bs), T(0));
  for (std::int64_t i = 0; i < c.la; ++i) rev[s - i] = c.a[i];

  std::vector<T> obuf(static_cast<std::size_t>(n_out * bs));
  const Eigen::Map<const matrix> xm(xbuf.data(), bs, n_x);
  Eigen::Map<matrix> om(obuf.data(), bs, n_out);

  // Output columns go in fixed chunks, whatever the thread count: Eigen's GEMM
  // blocking (and so the rounding) depends on the shape of each call, and
  // results must not change with the number of threads.
  const std::int64_t n_chunks = (n_out + tuning::chunk_columns - 1) / tuning::chunk_columns;
  // read on the calling thread: the workers see its scope
  const cancel_scope* const scope = cancel_scope::current();
  parallel_for(n_chunks, threads, [&](std::int64_t k0, std::int64_t k1) {
    matrix cb(bs, bs);
    // partial sums of a group of block diagonals in T, then into a double
    // accumulator: error ~ (bs + group + n_diag / group) eps, not n_diag eps
    matrix part(bs, tuning::chunk_columns);
    Eigen::MatrixXd acc(bs, tuning::chunk_columns);
    for (std::int64_t k = k0; k < k1; ++k) {
      const std::int64_t c0 = k * tuning::chunk_columns;
      const std::int64_t c1 = std::min(n_out, c0 + tuning::chunk_columns);
      part.setZero();
      acc.setZero();
      std::int64_t in_part = 0;
      for (std::int64_t b = 0; b < n_diag; ++b) {
        // a stop skips the remaining blocks (the caller throws)
        if (scope != nullptr && b % 16 == 0 && scope->stop_requested()) return;
        // output columns whose X block c + b holds non-zeros
        const std::int64_t lo = std::max(c0, x0 - b);
        const std::int64_t hi = std::min(c1, x1 - b);
        if (lo >= hi) continue;
        for (std::int64_t f = 0; f < bs; ++f)
          cb.col(f) = Eigen::Map<const vector>(rev.data() + (s - b * bs - f), bs);
        auto xs = xm.middleCols(lo + b, hi - lo);
        auto ps = part.middleCols(lo - c0, hi - lo);
        if (b == 0) {
          ps.noalias() += cb.template triangularView<Eigen::Upper>() * xs;
        } else if (b == n_diag - 1) {
          ps.noalias() += cb.template triangularView<Eigen::StrictlyLower>() * xs;
        } else {
          ps.noalias() += cb * xs;
        }
        if (++in_part == tuning::diagonal_group) {
          acc += part.template cast<double>();
          part.setZero();
          in_part = 0;
        }
      }
      acc += part.template cast<double>();
      om.middleCols(c0, c1 - c0) = acc.leftCols(c1 - c0).template cast<T>();
    }
  });
  std::copy(obuf.begin(), obuf.begin() + c.lout, c.out);
}

template <class T>
void correlate(const correlation<T>& c, int threads) {
  if (c.la < tuning::simd_min_taps<T>) {
    correlate_direct(c);
    return;
  }
  const std::int64_t small = std::min(c.la, c.lout);
  const std::int64_t work = c.la * c.lout;
  const bool big = work >= tuning::parallel_min_work;
  const std::int64_t tiles_up_to =
      c.lead > 0 ? tuning::simd_max_conv_work : tuning::simd_max_grad_work;
  if (small < tuning::blocked_min || work <= tiles_up_to) {
    correlate_simd(c, big ? threads : 1);
    return;
  }
  // a block of about a quarter of the shorter side keeps the padded work small
  const std::int64_t block = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(small / 4))),
      tuning::min_block, tuning::max_block);
  correlate_blocked(c, block, big ? threads : 1);
}

template void correlate_direct<float>(const correlation<float>&);
template void correlate_direct<double>(const correlation<double>&);
template void correlate_simd<float>(const correlation<float>&, int);
template void correlate_simd<double>(const correlation<double>&, int);
template void correlate_blocked<float>(const correlation<float>&, std::int64_t, int);
template void correlate_blocked<double>(const correlation<double>&, std::int64_t, int);
template void correlate<float>(const correlation<float>&, int);
template void correlate<double>(const correlation<double>&, int);

}  // namespace marg::detail::cpu::MARG_CPU_ISA_NS
