/// @file batch.hpp
/// @brief marg::pmf_batch<T>: B pmfs of a common padded length, for particle
/// methods; algebra and soft conditioning run as one batched numeric call
/// per operation (one launch on CUDA).
///
/// Row b holds P(X_b = lower(b) + i), i = 0..length-1, zero-padded at the end
/// where X_b has a shorter support. Storage is one row-major B x length pool
/// array shared, immutable, by copies (as for pmf). Results of the algebra are
/// not renormalized (each row's total stays within a few epsilon of 1);
/// posteriors are normalized row by row.
///
/// The per-row host work (checks, posterior normalization, hard evidence,
/// sampling, factories) runs on marg::cpu_threads() threads over chunks of rows
/// fixed by the batch shape, so results never depend on the thread count. With
/// the CUDA backend, binomial_batch, negation, binomial_count_evidence and
/// sample_given_evidence do their row work on the device instead (see each).
/// Products of probabilities and likelihoods are formed in double for float
/// rows, and in double with a long double fallback (for rows where a product
/// would leave the normal range) for double rows, before normalization: a
/// posterior far below the range of T is never lost to intermediate underflow.
/// Sampling functions take all their uniforms from the generator first, in
/// row order, then invert rows in parallel.
///
/// Rows with probabilities below T's normal range keep their log-probabilities
/// (as pmf does): sums, log_prob_sum, conditioning and sum_grad work in log
/// space on those rows (marg::log_convolve_batched for sums, the pmf functions
/// otherwise) and leave the other rows on the linear path; the joint samplers
/// draw those rows in log space.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include <marg/distributions/pmf.hpp>
#include <marg/numeric/error.hpp>

namespace marg {

template <class T>
class pmf_batch;

namespace detail {
/// Immutable row-major probabilities plus lazily built row totals (defined in the sources).
template <class T>
struct batch_storage;
/// @param x a batch
/// @return the log floor x carries without reading its rows (NaN when not known)
template <class T>
double known_log_floor(const pmf_batch<T>& x) noexcept;
}  // namespace detail

/// A batch of pmfs with per-row lower bounds and a common padded length.
///
/// Host work on the rows (checks, normalization, conditioning, sampling) runs
/// on marg::cpu_threads() threads over chunks of rows fixed by the batch
/// shape alone: every result is identical for any thread count.
template <class T = double>
class pmf_batch {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "marg::pmf_batch<T>: T must be float or double");

 public:
  /// An empty batch (0 rows).
  pmf_batch() = default;
  /// @param rows the pmfs (none empty, at least one); padded with zeros to the longest.
  ///        Their truncated masses are kept (truncated_mass()).
  explicit pmf_batch(const std::vector<pmf<T>>& rows);
  /// A batch from a flat, row-major padded buffer (checked).
  /// @param batch number of rows, >= 1
  /// @param length padded row length, >= 1
  /// @param lowers lower bound of each row (batch values; lower + length - 1 must not
  ///        overflow int64)
  /// @param values batch * length probabilities (or weights): finite, >= 0, no row all zero
  /// @param normalize true: divide each row by its sum (accumulated in double; in long
  ///        double where the double sum overflows); false: rows are taken as they are
  ///        (they should sum to 1 up to rounding)
  pmf_batch(int batch, int length, std::vector<std::int64_t> lowers, const std::vector<T>& values,
            bool normalize = false);
  /// As the vector constructor, taking pool memory the caller filled (no copy).
  /// @param batch number of rows, >= 1
  /// @param length padded row length, >= 1
  /// @param lowers lower bound of each row
  /// @param values batch * length probabilities (or weights), checked as above; work the
  ///        caller queued on values.stream() must be complete or is waited for
  /// @param normalize true: divide each row by its sum
  pmf_batch(int batch, int length, std::vector<std::int64_t> lowers, array<T>&& values,
            bool normalize = false);
  /// Wraps a row-major batch without checking it (internal use).
  /// @param tag detail::trusted
  /// @param probs batch * length probabilities
  /// @param batch number of rows
  /// @param length padded row length
  /// @param lowers lower bound of each row
  /// @param truncated per-row truncated mass (batch values), or empty for none
  /// @param log_floor a lower bound on the log of every non-zero probability of the
  ///        batch (NaN: not known; operations then read the rows on the host to find it)
  pmf_batch(detail::trusted_t tag, array<T>&& probs, int batch, int length,
            std::vector<std::int64_t> lowers, std::vector<T> truncated = {},
            double log_floor = std::numeric_limits<double>::quiet_NaN());
  /// Wraps a row-major batch together with its log-probabilities, which stay exact where a
  /// probability is below T's normal range (internal use). Rows whose log-probabilities
  /// all lie within T's normal range are marked as not keeping them (row_has_log_probs);
  /// when no row keeps them the log-probabilities are dropped.
  /// @param tag detail::trusted
  /// @param probs batch * length probabilities (0 where they underflow T)
  /// @param log_probs batch * length log-probabilities of the same values (-inf in the
  ///        padding), or an empty array for none
  /// @param batch number of rows
  /// @param length padded row length
  /// @param lowers lower bound of each row
  /// @param truncated per-row truncated mass (batch values), or empty for none
  pmf_batch(detail::trusted_t tag, array<T>&& probs, array<T>&& log_probs, int batch, int length,
            std::vector<std::int64_t> lowers, std::vector<T> truncated = {});

  /// @return number of rows
  int batch() const noexcept { return batch_; }
  /// @return padded row length
  int length() const noexcept { return length_; }
  /// @return the lower bound of every row
  const std::vector<std::int64_t>& lowers() const noexcept { return lowers_; }
  /// @param b row
  /// @return the mass the untruncated law of row b puts outside its support (0 unless the
  ///         row came from a truncated factory such as binomial_batch, or is a sum of such)
  T truncated_mass(int b) const;
  /// @return the truncated mass of every row, or an empty vector when all are 0
  const std::vector<T>& truncated_masses() const noexcept { return truncated_; }
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
  /// @param b row
  /// @param k value
  /// @return log P(X_b = k), finite wherever the probability is non-zero, also below T's
  ///         range; -inf outside the row's support or where it is 0
  T log_prob(int b, std::int64_t k) const;
  /// @return true when some row has a probability below T's normal range and the batch
  ///         keeps its log-probabilities beside the probabilities; sums and conditioning
  ///         then work in log space on those rows (marg::log_convolve_batched)
  bool has_log_probs() const noexcept { return logs_ != nullptr; }
  /// @param b row
  /// @return true when row b has a probability below T's normal range (its
  ///         log-probabilities are then the exact form of the row)
  bool row_has_log_probs(int b) const;
  /// @return pointer to the row-major log-probabilities (batch * length, -inf in the
  ///         padding) when has_log_probs(), else nullptr (pool memory)
  const T* log_data() const noexcept { return logs_; }
  /// @return a lower bound on the log of every non-zero probability of the batch: a bound
  ///         carried without reading the rows for binomial_batch, sums and negation, else
  ///         the exact value, found by one pass over the rows on first use (cached). Sums
  ///         whose products stay in T's normal range by these bounds take the linear path
  ///         without reading the rows.
  double log_floor() const;
  /// Draws one value per row: batch() uniforms taken from g in row order, then
  /// sample_with() (rows inverted in parallel).
  /// @param g a uniform random bit generator
  /// @return batch() values; marg::invalid_argument for an all-zero row
  template <class URBG>
  std::vector<std::int64_t> sample(URBG& g) const {
    return sample_with(uniforms(g, static_cast<std::size_t>(batch_)), 1);
  }
  /// Draws `per_row` independent values from every row: batch() * per_row uniforms from g
  /// (row-major), then sample_with().
  /// @param g a uniform random bit generator
  /// @param per_row draws per row, >= 1
  /// @return batch() * per_row values, row-major (row b's draws at b * per_row ..)
  template <class URBG>
  std::vector<std::int64_t> sample(URBG& g, int per_row) const {
    MARG_EXPECTS(per_row >= 1,
                 detail::bad_argument("marg::pmf_batch::sample", "per_row", per_row, ">= 1"));
    return sample_with(uniforms(g, static_cast<std::size_t>(batch_) * per_row), per_row);
  }
  /// Inversion of given uniforms: row b's draws come from u[b * per_row ..]. Each row is
  /// read once: its uniforms are visited in sorted order in one pass over its cumulative
  /// sums (in double; the row totals are computed once per batch and cached).
  /// @param u batch() * per_row values in [0, 1)
  /// @param per_row draws per row, >= 1
  /// @return batch() * per_row values; marg::invalid_argument for an all-zero row or a
  ///         u outside [0, 1)
  std::vector<std::int64_t> sample_with(const std::vector<double>& u, int per_row = 1) const;
  /// @param b row
  /// @param u uniform in [0, 1)
  /// @return the index within row b drawn by inversion (one partial pass over the row;
  ///         the row total is cached)
  std::int64_t sample_index(int b, double u) const;
  /// @return the CUDA device the rows live on (the device current where the
  ///         batch was made; -1 without a usable GPU or when empty).
  ///         Operations between batches or pmfs run on their common device and
  ///         reject operands of two devices (marg::invalid_argument).
  int device() const;

 private:
  template <class URBG>
  static std::vector<double> uniforms(URBG& g, std::size_t n) {
    std::vector<double> u(n);
    for (auto& v : u) v = std::generate_canonical<double, 53>(g);
    return u;
  }
  const std::vector<double>& totals() const;

  std::shared_ptr<const detail::batch_storage<T>> storage_;
  const T* data_ = nullptr;
  const T* logs_ = nullptr;
  int batch_ = 0, length_ = 0;
  std::vector<std::int64_t> lowers_;
  std::vector<T> truncated_;
  double floor_ = std::numeric_limits<double>::quiet_NaN();

  friend double detail::known_log_floor<T>(const pmf_batch<T>& x) noexcept;
};

namespace detail {
template <class T>
double known_log_floor(const pmf_batch<T>& x) noexcept {
  return x.floor_;
}
}  // namespace detail

/// A batch of binomial laws with their own n and p, each trimmed to the window
/// of values that carries all but at most `tail` of the mass at each end.
///
/// Row b is Binomial(ns[b], ps[b]) conditioned on its window [a_b, c_b]: the
/// smallest window around the mode such that a geometric bound on P(X < a_b)
/// and on P(X > c_b) is below tail * (kept mass). Values are built outward from
/// the mode by the ratio recurrence P(k+1)/P(k) = (n-k)/(k+1) * p/(1-p) in
/// double (relative error about (distance from the mode) * 2 epsilon) and
/// normalized by their double sum. truncated_mass(b) is the mass outside the
/// window (less than 2 tail; an upper estimate within 0.1%). n = 0 or p = 0
/// gives the point mass at 0, p = 1 the point mass at n. The padded length is
/// the longest window. Rows are built in parallel (marg::cpu_threads()),
/// without per-row allocations; with the CUDA backend on the device, one
/// thread per row, the same values bit for bit.
/// @tparam T float or double
/// @param ns trials per row, each in 0..INT_MAX-1 (at least one row)
/// @param ps success probability per row, each in [0, 1] (ns.size() values)
/// @param tail the largest mass dropped at either end, in (0, 1)
/// @return the batch; marg::invalid_argument naming the row and value on bad input
template <class T>
pmf_batch<T> binomial_batch(const std::vector<std::int64_t>& ns, const std::vector<double>& ps,
                            double tail = 1e-17);

/// Row-wise sum of independent x_b + y_b: one marg::convolve_batched call, plus one
/// marg::log_convolve_batched call for the rows that need log space (a term keeps
/// log-probabilities, or the product of the rows' smallest values is below T's normal
/// range); the result keeps log-probabilities where a row has values below that range.
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

/// Row-wise negation (the rows reversed; on the device with the CUDA backend).
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
/// @param y batch of x.batch() rows, or of 1 row shared by every row
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
/// convolve_grad_q_batched call for the whole batch, then the rows normalized
/// on the host in parallel. (For a joint draw given the evidence,
/// sample_given_evidence needs one convolve_batched call instead of two.)
/// @param x batch
/// @param y batch of x.batch() rows, or of 1 row shared by every row
/// @param likelihood row-major B x (x.length() + y.length() - 1): row b holds
///        L_b(x.lower(b) + y.lower(b) + i), finite and >= 0
/// @return per-row log likelihoods and posteriors
template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const std::vector<T>& likelihood);

/// Row-wise hard evidence: the posteriors of x_b and y_b given x_b + y_b = k_b,
/// O(B min(m, n)) on the host (only the anti-diagonal of each joint that meets
/// k_b is read).
/// @param x batch
/// @param y batch of x.batch() rows, or of 1 row shared by every row
/// @param k one observed sum per row (x.batch() values)
/// @return per-row log P(x_b + y_b = k_b) (-inf where impossible) and posterior rows
///         on the padded supports of x and y (all zero where impossible)
template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const std::vector<std::int64_t>& k);

/// Gradients with respect to the probabilities of a batch of sums.
template <class T = double>
struct batch_sum_gradient {
  std::vector<T> first;   ///< row-major B x x.length(): df/dp of each row of x
  std::vector<T> second;  ///< row-major B x y.length(): df/dq of each row's y term
};

/// Reverse mode through r_b = x_b + y_b for every row: first = band(q_b, m)^T g_b,
/// second = band(p_b, n)^T g_b, one convolve_grad_p_batched and one
/// convolve_grad_q_batched call; rows whose terms keep log-probabilities as
/// sum_grad of the rows as pmfs (in log space).
/// @param x batch
/// @param y batch of x.batch() rows, or 1 row shared by every row (then row b of
///        `second` is row b's contribution; their sum is the gradient of the shared row)
/// @param g row-major B x (x.length() + y.length() - 1) finite values: df/dr_b
/// @return {df/dp, df/dq}, row-major
template <class T>
batch_sum_gradient<T> sum_grad(const pmf_batch<T>& x, const pmf_batch<T>& y,
                               const std::vector<T>& g);

/// One joint draw per row and the log likelihood of the row's evidence.
template <class T = double>
struct batch_joint_draws {
  std::vector<T> log_likelihood;     ///< per row; -inf where the evidence is impossible
  std::vector<std::int64_t> first;   ///< the draw of x_b (0 where impossible)
  std::vector<std::int64_t> second;  ///< the draw of y_b (0 where impossible)
};

/// Soft evidence over the sums of two batches, kept in pool memory (on the
/// device when the CUDA backend is current), each row divided by a scale
/// whose log is kept: the form sample_given_evidence reads without a host copy.
template <class T = double>
struct batch_evidence {
  int batch = 0;   ///< rows (x.batch() of the batches it was made for)
  int length = 0;  ///< values per row: x.length() + y.length() - 1
  /// row-major batch x length, finite and >= 0: row b holds L_b(x.lower(b) + y.lower(b) + i)
  /// divided by exp(log_scale[b])
  array<T> values;
  /// per row, the log of the factor the row was divided by (empty: all 0); -inf marks a row
  /// that is zero everywhere (the evidence is impossible there)
  std::vector<double> log_scale;
};

/// Evidence from a binomially thinned count, the observation model of
/// under-reported counts (an epidemic's cases, an N-mixture model's
/// detections): with N_b = offsets[b] + z for z on the padded support of
/// x_b + y_b, row b holds L_b(z) = P(Y_b = observed[b]) for Y_b ~ Binomial(N_b, rhos[b]),
/// 0 where N_b < observed[b] or N_b > n_max. Each row is built outward from
/// its largest value by the ratio L(N+1)/L(N) = (N+1)/(N+1-y) (1-rho) in
/// double, divided by that value (log_scale holds its log, from lgamma: so
/// the values stay representable for any count). On the CUDA backend the rows
/// are built on the device (one thread per row, the same values bit for bit)
/// and never copied to the host.
/// @param x batch
/// @param y batch of x.batch() rows, or 1 row shared by every row
/// @param offsets per row (x.batch() values, or 1 for all): N at sum 0
/// @param observed the observed count per row (x.batch() values, or 1 for all), each >= 0
/// @param rhos the reporting probability per row (x.batch() values, or 1 for all), in [0, 1]
/// @param n_max the largest possible N (e.g. a population size), >= 0
/// @return the evidence rows; marg::invalid_argument naming the argument and value on bad input
template <class T>
batch_evidence<T> binomial_count_evidence(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                          const std::vector<std::int64_t>& offsets,
                                          const std::vector<std::int64_t>& observed,
                                          const std::vector<double>& rhos,
                                          std::int64_t n_max = INT64_MAX);

/// Row-wise soft evidence on x_b + y_b held as a batch_evidence (e.g. from
/// binomial_count_evidence): the posteriors of x_b and y_b given it, as the
/// std::vector overload computes them (one convolve_grad_p_batched and one
/// convolve_grad_q_batched call on the current backend, then the rows
/// normalized on the host in parallel). The evidence rows are checked on the
/// host; with the CUDA backend their pages migrate to the host for that check
/// and back for the products. Rows are identical for any thread count.
/// @param x batch
/// @param y batch of x.batch() rows, or 1 row shared by every row
/// @param evidence x.batch() rows of length x.length() + y.length() - 1, values finite and
///        >= 0; log_scale empty or x.batch() values, none NaN or +inf
/// @return per row log sum_z P(x_b + y_b = z) L_b(z) + log_scale[b] (the sum's log rounded
///         to T, the scale added in double, as sample_given_evidence does; -inf where the sum
///         is 0 or log_scale[b] is -inf, the posterior rows then all zero) and the posterior
///         rows on the padded supports of x and y; marg::invalid_argument naming the argument
///         and value on bad input
template <class T>
batch_sum_posterior<T> condition_on_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                        const batch_evidence<T>& evidence);

namespace detail {
/// sample_given_sum with the uniforms given: u[2b] picks x_b on the diagonal
/// (u[2b + 1] is unused, kept so both samplers read two uniforms per row).
/// @param x batch
/// @param y batch (x.batch() rows or 1)
/// @param k observed sums
/// @param u 2 * x.batch() uniforms in [0, 1)
/// @return the draws
template <class T>
batch_joint_draws<T> sample_given_sum_with(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                           const std::vector<std::int64_t>& k,
                                           const std::vector<double>& u);
/// sample_given_evidence with the uniforms given: u[2b] picks the sum of row b,
/// u[2b + 1] picks x_b given it.
/// @param x batch
/// @param y batch (x.batch() rows or 1)
/// @param likelihood as for sample_given_evidence
/// @param u 2 * x.batch() uniforms in [0, 1)
/// @return the draws
template <class T>
batch_joint_draws<T> sample_given_evidence_with(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                                const std::vector<T>& likelihood,
                                                const std::vector<double>& u);
/// sample_given_evidence (batch_evidence form) with the uniforms given.
/// @param x batch
/// @param y batch (x.batch() rows or 1)
/// @param evidence as for sample_given_evidence
/// @param u 2 * x.batch() uniforms in [0, 1)
/// @return the draws
template <class T>
batch_joint_draws<T> sample_given_evidence_with(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                                const batch_evidence<T>& evidence,
                                                const std::vector<double>& u);
}  // namespace detail

/// Row-wise joint draw of (x_b, y_b) given x_b + y_b = k_b, with the row's log
/// likelihood log P(x_b + y_b = k_b). Rows whose observation is impossible get
/// log_likelihood = -inf and draws 0 (no exception: check log_likelihood).
/// @param x batch
/// @param y batch of x.batch() rows, or 1 row shared by every row
/// @param k one observed sum per row
/// @param g a uniform random bit generator (2 * x.batch() uniforms, taken in row order)
/// @return per-row log likelihoods and draws; identical for any thread count
template <class T, class URBG>
batch_joint_draws<T> sample_given_sum(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                      const std::vector<std::int64_t>& k, URBG& g) {
  std::vector<double> u(2 * static_cast<std::size_t>(x.batch()));
  for (auto& v : u) v = std::generate_canonical<double, 53>(g);
  return detail::sample_given_sum_with(x, y, k, u);
}

/// Row-wise joint draw of (x_b, y_b) given soft evidence L_b on their sum: one
/// convolve_batched call for the laws of the sums, then per row (in parallel)
/// the sum drawn from P(x_b + y_b = z) L_b(z) and (x_b, y_b) given it on the
/// anti-diagonal. An exact draw from the joint posterior; log_likelihood is
/// log sum_z P(x_b + y_b = z) L_b(z) (-inf, draws 0, where impossible).
/// @param x batch
/// @param y batch of x.batch() rows, or 1 row shared by every row
/// @param likelihood row-major B x (x.length() + y.length() - 1): row b holds
///        L_b(x.lower(b) + y.lower(b) + i), finite and >= 0
/// @param g a uniform random bit generator (2 * x.batch() uniforms, taken in row order)
/// @return per-row log likelihoods and draws; identical for any thread count
template <class T, class URBG>
batch_joint_draws<T> sample_given_evidence(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                           const std::vector<T>& likelihood, URBG& g) {
  std::vector<double> u(2 * static_cast<std::size_t>(x.batch()));
  for (auto& v : u) v = std::generate_canonical<double, 53>(g);
  return detail::sample_given_evidence_with(x, y, likelihood, u);
}

/// sample_given_evidence with the evidence in pool memory (e.g. from
/// binomial_count_evidence, or rows a caller's kernels wrote): on the CUDA
/// backend nothing of it crosses to the host. log_likelihood includes the
/// rows' log_scale: log sum_z P(x_b + y_b = z) L_b(z) + log_scale[b], summed in
/// double and rounded to T.
///
/// On the CUDA backend the rows run on the device, one warp per row: rows the
/// host sums in double (all but those where a product of nonzero factors falls
/// below DBL_MIN or the sum overflows) give the host's sums and draws bit for
/// bit; on the others, where the host turns to long double, the device sums
/// each product scaled exactly by a power of two relative to the row's largest
/// product, in double (53-bit rounding instead of 64; products below 2^-1074
/// of the largest one lost), so the log likelihood agrees to about 1e-15
/// relative and a draw can differ only where a uniform falls within that
/// rounding of a boundary. The same holds for the std::vector overload.
/// @param x batch
/// @param y batch of x.batch() rows, or 1 row shared by every row
/// @param evidence x.batch() rows of length x.length() + y.length() - 1
/// @param g a uniform random bit generator (2 * x.batch() uniforms, taken in row order)
/// @return per-row log likelihoods and draws; identical for any thread count
template <class T, class URBG>
batch_joint_draws<T> sample_given_evidence(const pmf_batch<T>& x, const pmf_batch<T>& y,
                                           const batch_evidence<T>& evidence, URBG& g) {
  std::vector<double> u(2 * static_cast<std::size_t>(x.batch()));
  for (auto& v : u) v = std::generate_canonical<double, 53>(g);
  return detail::sample_given_evidence_with(x, y, evidence, u);
}

extern template class pmf_batch<float>;
extern template class pmf_batch<double>;

}  // namespace marg
