/// @file pmf.hpp
/// @brief marg::pmf<T>: a probability mass function on a bounded integer support.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include <marg/numeric/array.hpp>

namespace marg {

namespace detail {
/// Tag of the unchecked constructor: the caller guarantees valid probabilities.
struct trusted_t {
  explicit trusted_t() = default;
};
/// The tag value.
inline constexpr trusted_t trusted{};
/// Immutable probabilities plus lazily built cumulative sums (defined in the sources).
template <class T>
struct pmf_storage;
}  // namespace detail

/// A probability mass function on the integers `lower..upper`.
///
/// Copy semantics: the probabilities live in one immutable pool array shared
/// by all copies (`std::shared_ptr<const ...>`). Copying is O(1), moving is
/// O(1), and copies may be read from several threads at once. Nothing ever
/// modifies the probabilities of an existing pmf; every operation returns a
/// new one.
///
/// A default-constructed or moved-from pmf is *empty*. So are the posteriors
/// of an impossible observation (see condition_on_sum). Every accessor except
/// empty(), size() and truncated_mass() throws marg::invalid_argument on an
/// empty pmf.
///
/// The probabilities of a pmf sum to 1 up to rounding. A pmf from a truncated
/// family (poisson, geometric, negative_binomial) is the law conditioned on
/// the kept support; truncated_mass() is the mass the untruncated law puts
/// outside it. Entries may be zero (log_prob gives -inf there). Where some
/// probability is below T's normal range, the pmf also keeps the
/// log-probabilities (has_log_probs()), so that log_prob, log_probs, sums and
/// conditioning stay exact in the far tails.
///
/// Every pmf is complete when returned: pending GPU work has finished, so
/// host reads never wait.
/// @tparam T float or double
template <class T = double>
class pmf {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "marg::pmf<T>: T must be float or double");

 public:
  /// An empty pmf.
  pmf() noexcept = default;

  /// Wraps probabilities without checking them (internal and batch use).
  /// @param tag detail::trusted
  /// @param probs probabilities of lower, lower+1, ...; non-negative, finite,
  ///        not all zero, summing to 1 up to rounding; at most INT_MAX elements
  /// @param lower the smallest value of the support; lower + size - 1 must not
  ///        overflow int64
  /// @param truncated_mass mass dropped by truncation (0 for bounded families)
  pmf(detail::trusted_t tag, array<T>&& probs, std::int64_t lower, T truncated_mass = T(0));

  /// Wraps probabilities together with their logarithms, which stay exact
  /// where a probability is below T's normal range (internal use).
  /// @param tag detail::trusted
  /// @param probs probabilities as for the constructor above (0 where they
  ///        underflow T)
  /// @param log_probs log-probabilities of the same values, same size
  /// @param lower the smallest value of the support
  /// @param truncated_mass mass dropped by truncation
  pmf(detail::trusted_t tag, array<T>&& probs, array<T>&& log_probs, std::int64_t lower,
      T truncated_mass = T(0));

  /// Shares the storage of `other` (O(1)).
  /// @param other the pmf to copy
  pmf(const pmf& other) = default;
  /// Shares the storage of `other` (O(1)).
  /// @param other the pmf to copy
  /// @return *this
  pmf& operator=(const pmf& other) = default;
  /// Takes the storage of `other`, which is left empty.
  /// @param other the pmf to move from
  pmf(pmf&& other) noexcept
      : storage_(std::move(other.storage_)),
        data_(std::exchange(other.data_, nullptr)),
        logs_(std::exchange(other.logs_, nullptr)),
        lower_(std::exchange(other.lower_, 0)),
        size_(std::exchange(other.size_, 0)),
        truncated_(std::exchange(other.truncated_, T(0))) {}
  /// Takes the storage of `other`, which is left empty.
  /// @param other the pmf to move from
  /// @return *this
  pmf& operator=(pmf&& other) noexcept {
    if (this != &other) {
      storage_ = std::move(other.storage_);
      data_ = std::exchange(other.data_, nullptr);
      logs_ = std::exchange(other.logs_, nullptr);
      lower_ = std::exchange(other.lower_, 0);
      size_ = std::exchange(other.size_, 0);
      truncated_ = std::exchange(other.truncated_, T(0));
    }
    return *this;
  }
  ~pmf() = default;

  /// @return true for a default-constructed, moved-from or impossible-posterior pmf
  bool empty() const noexcept { return size_ == 0; }
  /// @return the smallest value of the support
  std::int64_t lower() const;
  /// @return the largest value of the support
  std::int64_t upper() const;
  /// @return number of values in the support, upper - lower + 1 (0 when empty)
  std::int64_t size() const noexcept { return size_; }
  /// @return the mass the untruncated law puts outside the support (0 unless
  ///         truncated; the sum of independent truncated terms drops
  ///         1 - prod(1 - t_i))
  T truncated_mass() const noexcept { return truncated_; }

  /// @param k a value
  /// @return P(X = k); 0 outside the support
  T prob(std::int64_t k) const;
  /// @param k a value
  /// @return log P(X = k), finite wherever the probability is non-zero, also
  ///         below T's range (binomial(100000, 0.5).log_prob(0) is
  ///         -69314.718...); -inf outside the support or where it is 0
  T log_prob(std::int64_t k) const;
  /// @param k a value
  /// @return P(X <= k), summed in long double; 0 below the support, 1 from upper on
  T cdf(std::int64_t k) const;
  /// @return E[X], summed in long double relative to lower
  T mean() const;
  /// @return Var[X], two-pass in long double
  T variance() const;
  /// Draws one value by inversion (binary search in a cumulative table built
  /// once per storage on first use).
  /// @param g a uniform random bit generator
  /// @return a value of the support with positive probability
  template <class URBG>
  std::int64_t sample(URBG& g) const {
    return lower() + sample_index(std::generate_canonical<double, 53>(g));
  }
  /// @return a host copy of the probabilities of lower..upper
  std::vector<T> probs() const;
  /// @return the CUDA device the probabilities live on (the device current
  ///         where the pmf was made; -1 without a usable GPU or when empty).
  ///         Operations between pmfs run on their common device and reject
  ///         pmfs of two devices (marg::invalid_argument).
  int device() const;
  /// @return a host copy of the log-probabilities of lower..upper, finite
  ///         wherever the probability is non-zero (see log_prob)
  std::vector<T> log_probs() const;
  /// @return true when some probability is below T's normal range and the
  ///         pmf keeps its log-probabilities beside the probabilities; sums
  ///         and conditioning then work in log space (marg::log_convolve)
  bool has_log_probs() const noexcept { return logs_ != nullptr; }
  /// @return pointer to size() log-probabilities when has_log_probs(), else
  ///         nullptr (pool memory, valid while this pmf or a copy lives)
  const T* log_data() const noexcept { return logs_; }
  /// @return pointer to size() probabilities (valid while this pmf or a copy lives);
  ///         pool memory, usable by host code and by the numeric entry points
  const T* data() const;

  /// The law of X + k, sharing this pmf's storage (O(1)).
  /// @param k the shift
  /// @return the shifted pmf; marg::invalid_argument when the support overflows int64
  pmf shifted(std::int64_t k) const;

  /// @param u a uniform number in [0, 1)
  /// @return the index i (0-based) with cum(i-1) <= u < cum(i), skipping zeros
  std::int64_t sample_index(double u) const;

 private:
  void require_nonempty(const char* function) const;
  const detail::pmf_storage<T>& storage() const;

  std::shared_ptr<const detail::pmf_storage<T>> storage_;
  const T* data_ = nullptr;
  const T* logs_ = nullptr;
  std::int64_t lower_ = 0;
  std::int64_t size_ = 0;
  T truncated_ = T(0);
};

extern template class pmf<float>;
extern template class pmf<double>;

}  // namespace marg
