#include "correlate.hpp"

#define EIGEN_DONT_PARALLELIZE  // threads are ours (parallel_for)
#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <vector>

#include "parallel.hpp"

namespace marg::detail::cpu {

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
  const std::int64_t small = std::min(c.la, c.lout);
  if (small < tuning::direct_below) {
    correlate_direct(c);
    return;
  }
  // a block of about a quarter of the shorter side keeps the padded work small
  const std::int64_t block = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(small / 4))),
      tuning::min_block, tuning::max_block);
  const bool big = c.la * c.lout >= tuning::parallel_min_work;
  correlate_blocked(c, block, big ? threads : 1);
}

template void correlate_direct<float>(const correlation<float>&);
template void correlate_direct<double>(const correlation<double>&);
template void correlate_blocked<float>(const correlation<float>&, std::int64_t, int);
template void correlate_blocked<double>(const correlation<double>&, std::int64_t, int);
template void correlate<float>(const correlation<float>&, int);
template void correlate<double>(const correlation<double>&, int);

}  // namespace marg::detail::cpu
