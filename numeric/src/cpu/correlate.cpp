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
  std::fill(c.out, c.out + c.lout, T(0));
  for (std::int64_t k = 0; k < c.la; ++k) {
    // out[j] += a_k x[j + k - lead] where the x index is inside [0, lx)
    const std::int64_t j0 = std::max<std::int64_t>(0, c.lead - k);
    const std::int64_t j1 = std::min<std::int64_t>(c.lout, c.lead - k + c.lx);
    if (j0 >= j1) continue;
    const T ak = c.a[k];
    const T* xs = c.x + (j0 + k - c.lead);
    T* o = c.out + j0;
    const std::int64_t len = j1 - j0;
    for (std::int64_t j = 0; j < len; ++j) o[j] += ak * xs[j];
  }
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

  std::vector<T> obuf(static_cast<std::size_t>(n_out * bs), T(0));
  const Eigen::Map<const matrix> xm(xbuf.data(), bs, n_x);
  Eigen::Map<matrix> om(obuf.data(), bs, n_out);

  parallel_for(n_out, threads, [&](std::int64_t c0, std::int64_t c1) {
    matrix cb(bs, bs);
    for (std::int64_t b = 0; b < n_diag; ++b) {
      // output columns whose X block c + b holds non-zeros
      const std::int64_t lo = std::max(c0, x0 - b);
      const std::int64_t hi = std::min(c1, x1 - b);
      if (lo >= hi) continue;
      for (std::int64_t f = 0; f < bs; ++f)
        cb.col(f) = Eigen::Map<const vector>(rev.data() + (s - b * bs - f), bs);
      auto xs = xm.middleCols(lo + b, hi - lo);
      auto os = om.middleCols(lo, hi - lo);
      if (b == 0) {
        os.noalias() += cb.template triangularView<Eigen::Upper>() * xs;
      } else if (b == n_diag - 1) {
        os.noalias() += cb.template triangularView<Eigen::StrictlyLower>() * xs;
      } else {
        os.noalias() += cb * xs;
      }
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
