// marg::pmf<T>: accessors and moments, summed in long double on the host.
#include <marg/distributions/pmf.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "detail.hpp"

namespace marg {

template <class T>
pmf<T>::pmf(detail::trusted_t, array<T>&& probs, std::int64_t lower, T truncated_mass)
    : lower_(lower), truncated_(truncated_mass) {
  // the caller's GPU work on the array must be complete before host reads
  detail::wait_for_stream(probs.stream());
  const auto n = static_cast<std::int64_t>(probs.size());
  auto s = std::make_shared<detail::pmf_storage<T>>(std::move(probs));
  data_ = s->probs.data();
  storage_ = std::move(s);
  size_ = n;
}

template <class T>
pmf<T>::pmf(detail::trusted_t, array<T>&& probs, array<T>&& log_probs, std::int64_t lower,
            T truncated_mass)
    : lower_(lower), truncated_(truncated_mass) {
  detail::wait_for_stream(probs.stream());
  detail::wait_for_stream(log_probs.stream());
  const auto n = static_cast<std::int64_t>(probs.size());
  auto s = std::make_shared<detail::pmf_storage<T>>(std::move(probs), std::move(log_probs));
  data_ = s->probs.data();
  logs_ = s->logs.empty() ? nullptr : s->logs.data();
  storage_ = std::move(s);
  size_ = n;
}

template <class T>
void pmf<T>::require_nonempty(const char* function) const {
  MARG_EXPECTS(size_ != 0, std::string("marg::pmf::") + function +
                               ": the pmf is empty (default-constructed, moved-from, or the "
                               "posterior of an impossible observation, log_likelihood = -inf)");
}

template <class T>
int pmf<T>::device() const {
  return storage_ ? storage_->probs.device() : -1;
}

template <class T>
const detail::pmf_storage<T>& pmf<T>::storage() const {
  return *storage_;
}

template <class T>
std::int64_t pmf<T>::lower() const {
  require_nonempty("lower");
  return lower_;
}

template <class T>
std::int64_t pmf<T>::upper() const {
  require_nonempty("upper");
  return lower_ + (size_ - 1);
}

template <class T>
T pmf<T>::prob(std::int64_t k) const {
  require_nonempty("prob");
  // k - lower_ may overflow: compare without subtracting first
  if (k < lower_ || k > lower_ + (size_ - 1)) return T(0);
  return data_[k - lower_];
}

template <class T>
T pmf<T>::log_prob(std::int64_t k) const {
  require_nonempty("log_prob");
  if (k < lower_ || k > lower_ + (size_ - 1)) return -std::numeric_limits<T>::infinity();
  return logs_ ? logs_[k - lower_] : std::log(data_[k - lower_]);
}

template <class T>
T pmf<T>::cdf(std::int64_t k) const {
  require_nonempty("cdf");
  if (k < lower_) return T(0);
  if (k >= lower_ + (size_ - 1)) return T(1);
  const auto& cum = storage().cumulative();
  return static_cast<T>(std::min<long double>(1, cum[k - lower_] / cum.back()));
}

namespace {
// total mass and mean offset from the first value, in long double
template <class T>
std::pair<long double, long double> mass_and_offset_mean(const T* p, std::int64_t n) {
  long double s = 0, m = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    s += p[i];
    m += static_cast<long double>(i) * p[i];
  }
  return {s, m / s};
}
}  // namespace

template <class T>
T pmf<T>::mean() const {
  require_nonempty("mean");
  return static_cast<T>(static_cast<long double>(lower_) +
                        mass_and_offset_mean(data_, size_).second);
}

template <class T>
T pmf<T>::variance() const {
  require_nonempty("variance");
  // two passes: the mean first, then squared deviations from it
  const auto [s, m] = mass_and_offset_mean(data_, size_);
  long double v = 0;
  for (std::int64_t i = 0; i < size_; ++i) {
    const long double d = static_cast<long double>(i) - m;
    v += d * d * data_[i];
  }
  return static_cast<T>(v / s);
}

template <class T>
std::vector<T> pmf<T>::probs() const {
  require_nonempty("probs");
  return std::vector<T>(data_, data_ + size_);
}

template <class T>
std::vector<T> pmf<T>::log_probs() const {
  require_nonempty("log_probs");
  if (logs_) return std::vector<T>(logs_, logs_ + size_);
  std::vector<T> v(static_cast<std::size_t>(size_));
  for (std::int64_t i = 0; i < size_; ++i) v[i] = std::log(data_[i]);
  return v;
}

template <class T>
const T* pmf<T>::data() const {
  require_nonempty("data");
  return data_;
}

template <class T>
pmf<T> pmf<T>::shifted(std::int64_t k) const {
  require_nonempty("shifted");
  const char* f = "marg::pmf::shifted";
  pmf r(*this);
  r.lower_ = detail::add_checked(f, "lower + k", lower_, k);
  detail::add_checked(f, "upper + k", upper(), k);
  return r;
}

template <class T>
std::int64_t pmf<T>::sample_index(double u) const {
  require_nonempty("sample");
  const auto& cum = storage().cumulative();
  const long double target = static_cast<long double>(u) * cum.back();
  // first index whose cumulative sum exceeds the target: never a zero entry
  auto it = std::upper_bound(cum.begin(), cum.end(), target);
  if (it == cum.end()) {
    // u rounded to 1: the last entry with positive probability
    std::int64_t i = size_ - 1;
    while (i > 0 && data_[i] == T(0)) --i;
    return i;
  }
  return it - cum.begin();
}

template class pmf<float>;
template class pmf<double>;

}  // namespace marg
