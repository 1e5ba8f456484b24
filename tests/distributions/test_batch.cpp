// pmf_batch<T>: batched algebra and soft conditioning against the scalar
// operations row by row (themselves checked against long double loops), on
// both backends, float and double.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dist_fixture.hpp"

using namespace marg::test::dist;

namespace {

template <class T>
real tol() {
  return std::is_same_v<T, double> ? 1e-12L : 2e-5L;
}

// every value of b's support in both: |got - want| <= tol * want
template <class T>
void check_row(const marg::pmf_batch<T>& got, int b, const marg::pmf<T>& want) {
  CAPTURE(b);
  for (std::int64_t k = want.lower() - 1; k <= want.upper() + 1; ++k) {
    CAPTURE(k);
    const real w = want.prob(k);
    CHECK(std::fabs(got.prob(b, k) - w) <= tol<T>() * w + std::numeric_limits<T>::min());
  }
}

}  // namespace

TEMPLATE_TEST_CASE("batch: SIR-like step i + di - dr and evidence and sampling and row by row",
                   "[distributions]", MARG_DIST_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const int B = 37;
  std::vector<marg::pmf<T>> di, dr, prev;
  for (int b = 0; b < B; ++b) {
    const std::int64_t s = marg::test::uniform_int(g, 0, 60), i = marg::test::uniform_int(g, 0, 40);
    di.push_back(marg::binomial<T>(s, T(0.07)));
    dr.push_back(marg::binomial<T>(i, T(0.2)));
    prev.push_back(marg::delta<T>(i));
  }
  const marg::pmf_batch<T> bi(prev), bdi(di), bdr(dr);
  const auto next = bi + bdi - bdr;
  REQUIRE(next.batch() == B);
  for (int b = 0; b < B; ++b) check_row(next, b, prev[b] + di[b] - dr[b]);
  // a common term for every row (stride 0)
  const auto noise = marg::categorical<T>({1, 2, 1}, -1);
  const auto noisy = bdi + noise;
  for (int b = 0; b < B; ++b) check_row(noisy, b, di[b] + noise);
  // log likelihoods of observed sums
  std::vector<std::int64_t> k(B);
  for (int b = 0; b < B; ++b) k[b] = di[b].lower() + dr[b].lower() + b % 5;
  const auto ll = marg::log_prob_sum(bdi, bdr, k);
  for (int b = 0; b < B; ++b) {
    const T want = marg::log_prob_sum(di[b], dr[b], k[b]);
    CHECK(ll[b] == Approx(static_cast<double>(want)).epsilon(1e-5));
  }
  // soft evidence: observed y ~ Binomial(x_b + y_b, 0.5) with y = 3; row 0 impossible
  const int len = bdi.length() + bdr.length() - 1;
  std::vector<T> L(static_cast<std::size_t>(B) * len, T(0));
  for (int b = 1; b < B; ++b) {
    for (int i = 0; i < len; ++i) {
      const std::int64_t z = bdi.lowers()[b] + bdr.lowers()[b] + i;
      L[b * len + i] = z >= 3 ? marg::binomial<T>(z, T(0.5)).prob(3) : T(0);
    }
  }
  const auto post = marg::condition_on_sum(bdi, bdr, L);
  CHECK(post.log_likelihood[0] == -std::numeric_limits<T>::infinity());
  CHECK(post.first.row(0).empty());
  CHECK_THROWS_AS(post.first.sample(g), marg::invalid_argument);
  for (int b = 1; b < B; ++b) {
    // the scalar soft conditioning over the padded supports of the two rows
    const auto x = bdi.row(b), y = bdr.row(b);
    const std::vector<T> Lb(L.begin() + b * len, L.begin() + (b + 1) * len);
    const auto want = marg::condition_on_sum(x, y, Lb);
    if (want.first.empty()) {
      CHECK(post.log_likelihood[b] == -std::numeric_limits<T>::infinity());
      continue;
    }
    CHECK(post.log_likelihood[b] == Approx(static_cast<double>(want.log_likelihood)).epsilon(1e-5));
    check_row(post.first, b, want.first);
    check_row(post.second, b, want.second);
  }
  // samples from rows with mass land on their supports with positive probability
  const auto rows = std::vector<marg::pmf<T>>(di.begin() + 1, di.end());
  const marg::pmf_batch<T> bd(rows);
  for (int rep = 0; rep < 20; ++rep) {
    const auto v = bd.sample(g);
    for (int b = 0; b < bd.batch(); ++b) CHECK(bd.prob(b, v[b]) > 0);
  }
}

TEMPLATE_TEST_CASE("batch: bad input", "[distributions]", float, double) {
  using T = TestType;
  const marg::pmf_batch<T> a(
      std::vector<marg::pmf<T>>{marg::bernoulli<T>(T(0.5)), marg::delta<T>(3)});
  const marg::pmf_batch<T> c(std::vector<marg::pmf<T>>(3, marg::bernoulli<T>(T(0.5))));
  CHECK_THROWS_WITH(a + c, Catch::Contains("y.batch() = 3"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(std::vector<marg::pmf<T>>{}),
                    Catch::Contains("rows is empty"));
  CHECK_THROWS_WITH(marg::pmf_batch<T>(std::vector<marg::pmf<T>>{marg::pmf<T>()}),
                    Catch::Contains("rows[0] is an empty pmf"));
  CHECK_THROWS_WITH(marg::condition_on_sum(a, a, std::vector<T>(5, 1)),
                    Catch::Contains("likelihood.size() = 5"));
  CHECK_THROWS_WITH(a.prob(2, 0), Catch::Contains("b = 2"));
  CHECK_THROWS_WITH(marg::log_prob_sum(a, a, std::vector<std::int64_t>{1}),
                    Catch::Contains("k.size() = 1"));
}

// p_j * (band(q, m)^T L)_j can be far below the type's range while the
// normalized posterior is not: the products must not underflow before normalization
TEMPLATE_TEST_CASE("batch: soft conditioning with products below the type's range",
                   "[distributions]", float, double) {
  using T = TestType;
  const T tiny = std::is_same_v<T, float> ? T(1e-30) : T(1e-200);
  // x in {0, 1} with P(x = 0) = tiny, y = 0; likelihood tiny for both sums:
  // p_0 * gp_0 = tiny^2 is below T's range, the posterior P(x = 0 | L) = tiny is not
  const marg::pmf_batch<T> bx(std::vector<marg::pmf<T>>(2, marg::categorical<T>({tiny, T(1)})));
  const marg::pmf_batch<T> by(std::vector<marg::pmf<T>>(2, marg::delta<T>(0)));
  const std::vector<T> L{tiny, tiny, tiny, tiny};  // 2 rows over the support {0, 1}
  const auto post = marg::condition_on_sum(bx, by, L);
  for (int b = 0; b < 2; ++b) {
    CAPTURE(b);
    CHECK(std::isfinite(post.log_likelihood[b]));
    CHECK(std::fabs(post.first.prob(b, 0) - tiny) <= tol<T>() * tiny);
    CHECK(std::fabs(post.first.prob(b, 1) - T(1)) <= tol<T>());
    CHECK(post.second.prob(b, 0) == T(1));
  }
}
