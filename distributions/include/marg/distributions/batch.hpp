/// @file batch.hpp
/// @brief marg::pmf_batch<T>: B pmfs of a common padded length, for particle
/// methods; algebra and soft conditioning run as one batched numeric call
/// per operation (one launch on CUDA).
///
/// Row b holds P(X_b = lower(b) + i), i = 0..length-1, zero-padded at the end
/// where X_b has a shorter support. Storage is one row-major B x length pool
/// array shared, immutable, by copies (as for pmf). Results are not
/// renormalized (each row's total stays within a few epsilon of 1).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <marg/distributions/pmf.hpp>

namespace marg {

/// A batch of pmfs with per-row lower bounds and a common padded length.
template <class T = double>
class pmf_batch {
 public:
  /// An empty batch (0 rows).
  pmf_batch() = default;
  /// @param rows the pmfs (none empty, at least one); padded with zeros to the longest
  explicit pmf_batch(const std::vector<pmf<T>>& rows);
  /// Wraps a row-major batch without checking it (internal use).
  /// @param tag detail::trusted
  /// @param probs batch * length probabilities
  /// @param batch number of rows
  /// @param length padded row length
  /// @param lowers lower bound of each row
  pmf_batch(detail::trusted_t tag, array<T>&& probs, int batch, int length,
            std::vector<std::int64_t> lowers);

  /// @return number of rows
  int batch() const noexcept { return batch_; }
  /// @return padded row length
  int length() const noexcept { return length_; }
  /// @return the lower bound of every row
  const std::vector<std::int64_t>& lowers() const noexcept { return lowers_; }
  /// @param b row
  /// @param k value
  /// @return P(X_b = k)
  T prob(int b, std::int64_t k) const;
  /// @param b row
  /// @return row b as a pmf on lower(b)..lower(b)+length-1; empty when the row is all zero
  ///         (the posterior of an impossible observation)
  pmf<T> row(int b) const;
  /// @return pointer to the row-major probabilities (pool memory)
  const T* data() const noexcept { return data_; }
  /// Draws one value per row.
  /// @param g a uniform random bit generator
  /// @return batch() values; marg::invalid_argument for an all-zero row
  template <class URBG>
  std::vector<std::int64_t> sample(URBG& g) const {
    std::vector<std::int64_t> r(batch_);
    for (int b = 0; b < batch_; ++b)
      r[b] = lowers_[b] + sample_index(b, std::generate_canonical<double, 53>(g));
    return r;
  }
  /// @param b row
  /// @param u uniform in [0, 1)
  /// @return the index within row b drawn by inversion
  std::int64_t sample_index(int b, double u) const;

 private:
  std::shared_ptr<const array<T>> storage_;
  const T* data_ = nullptr;
  int batch_ = 0, length_ = 0;
  std::vector<std::int64_t> lowers_;
};

/// Row-wise sum of independent x_b + y_b: one marg::convolve_batched call.
/// @param x batch of B rows
/// @param y batch of B rows, or of 1 row added to every row of x (stride 0)
/// @return batch of B rows of length x.length() + y.length() - 1
template <class T>
pmf_batch<T> operator+(const pmf_batch<T>& x, const pmf_batch<T>& y);

/// Row-wise x_b + y for one pmf y shared by all rows (stride 0, no copies).
/// @param x batch
/// @param y the common term
/// @return batch of x.batch() rows
template <class T>
pmf_batch<T> operator+(const pmf_batch<T>& x, const pmf<T>& y);

/// Row-wise negation.
/// @param x batch
/// @return the batch of -x_b
template <class T>
pmf_batch<T> operator-(const pmf_batch<T>& x);

/// Row-wise x_b - y_b.
/// @param x batch
/// @param y batch (B rows or 1)
/// @return x + (-y)
template <class T>
pmf_batch<T> operator-(const pmf_batch<T>& x, const pmf_batch<T>& y);

/// Row-wise log P(x_b + y_b = k_b), O(B min(m, n)) on the host.
/// @param x batch
/// @param y batch of the same size
/// @param k one observed sum per row
/// @return one log likelihood per row (-inf where impossible)
template <class T>
std::vector<T> log_prob_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                            const std::vector<std::int64_t>& k);

/// The result of observing a batch of sums.
template <class T = double>
struct batch_sum_posterior {
  std::vector<T> log_likelihood;  ///< per row; -inf where the evidence is impossible
  pmf_batch<T> first;             ///< posterior rows of x (all zero where impossible)
  pmf_batch<T> second;            ///< posterior rows of y (all zero where impossible)
};

/// Row-wise soft evidence on x_b + y_b: one convolve_grad_p_batched and one
/// convolve_grad_q_batched call for the whole batch.
/// @param x batch
/// @param y batch of the same size
/// @param likelihood row-major B x (x.length() + y.length() - 1): row b holds
///        L_b(x.lower(b) + y.lower(b) + i), finite and >= 0
/// @return per-row log likelihoods and posteriors
template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const std::vector<T>& likelihood);

extern template class pmf_batch<float>;
extern template class pmf_batch<double>;

}  // namespace marg
