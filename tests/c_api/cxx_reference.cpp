// The C++ API's results for the C tests (see cxx_reference.h).
#include "cxx_reference.h"

#include <marg/marg.hpp>

#include <algorithm>
#include <vector>

namespace {

template <class T>
marg::pmf<T> factory(int family, const double* a, std::int64_t n, std::int64_t k) {
  switch (family) {
    case CXX_CATEGORICAL:
      return marg::categorical<T>(std::vector<T>(a, a + n), k);
    case CXX_CATEGORICAL_LOG:
      return marg::categorical_log<T>(std::vector<T>(a, a + n), k);
    case CXX_BERNOULLI:
      return marg::bernoulli<T>(static_cast<T>(a[0]));
    case CXX_BINOMIAL:
      return marg::binomial<T>(n, static_cast<T>(a[0]));
    case CXX_UNIFORM_INT:
      return marg::uniform_int<T>(k, n);
    case CXX_BETA_BINOMIAL:
      return marg::beta_binomial<T>(n, static_cast<T>(a[0]), static_cast<T>(a[1]));
    case CXX_POISSON:
      return marg::poisson<T>(static_cast<T>(a[0]), static_cast<T>(a[1]));
    case CXX_GEOMETRIC:
      return marg::geometric<T>(static_cast<T>(a[0]), static_cast<T>(a[1]));
    case CXX_NEGATIVE_BINOMIAL:
      return marg::negative_binomial<T>(static_cast<T>(a[0]), static_cast<T>(a[1]),
                                        static_cast<T>(a[2]));
    default:
      return marg::delta<T>(k);
  }
}

}  // namespace

extern "C" std::int64_t cxx_factory(int family, int is_float, const double* a, std::int64_t n,
                                    std::int64_t k, double* out, std::int64_t cap,
                                    std::int64_t* lower, double* truncated) {
  try {
    auto write = [&](const auto& p) -> std::int64_t {
      const auto v = p.probs();
      if (static_cast<std::int64_t>(v.size()) > cap) return -1;
      std::copy(v.begin(), v.end(), out);
      *lower = p.lower();
      *truncated = static_cast<double>(p.truncated_mass());
      return static_cast<std::int64_t>(v.size());
    };
    return is_float ? write(factory<float>(family, a, n, k))
                    : write(factory<double>(family, a, n, k));
  } catch (...) {
    return -1;
  }
}

extern "C" int cxx_batch_step(int batch, const std::int64_t* n_inf, const double* p_inf,
                              const std::int64_t* n_rec, const double* p_rec,
                              const std::int64_t* offsets, std::int64_t observed, const double* rho,
                              std::int64_t n_max, double tail, const double* u,
                              double* log_likelihood, std::int64_t* first, std::int64_t* second) {
  try {
    const auto X = marg::binomial_batch<double>(std::vector<std::int64_t>(n_inf, n_inf + batch),
                                                std::vector<double>(p_inf, p_inf + batch), tail);
    const auto negY =
        -marg::binomial_batch<double>(std::vector<std::int64_t>(n_rec, n_rec + batch),
                                      std::vector<double>(p_rec, p_rec + batch), tail);
    const auto like =
        marg::binomial_count_evidence(X, negY, std::vector<std::int64_t>(offsets, offsets + batch),
                                      {observed}, std::vector<double>(rho, rho + batch), n_max);
    const auto d = marg::detail::sample_given_evidence_with(
        X, negY, like, std::vector<double>(u, u + 2 * static_cast<std::int64_t>(batch)));
    std::copy(d.log_likelihood.begin(), d.log_likelihood.end(), log_likelihood);
    std::copy(d.first.begin(), d.first.end(), first);
    std::copy(d.second.begin(), d.second.end(), second);
    return 0;
  } catch (...) {
    return -1;
  }
}
