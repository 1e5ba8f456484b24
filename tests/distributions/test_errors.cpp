// Every bad input of the distributions layer throws marg::invalid_argument
// whose message names the argument and its value.
#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dist_fixture.hpp"

using Catch::Contains;

TEMPLATE_TEST_CASE("errors: factories reject bad parameters and naming them", "[distributions]",
                   float, double) {
  using T = TestType;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  // categorical: empty, negative, NaN, inf, all zero, support overflow
  CHECK_THROWS_WITH(marg::categorical<T>(std::vector<T>{}), Contains("weights is empty"));
  CHECK_THROWS_WITH(marg::categorical<T>({1, -0.5}), Contains("weights[1] = -0.5"));
  CHECK_THROWS_WITH(marg::categorical<T>({nan, 1}), Contains("weights[0] = nan"));
  CHECK_THROWS_WITH(marg::categorical<T>({1, 1, inf}), Contains("weights[2] = inf"));
  CHECK_THROWS_WITH(marg::categorical<T>({0, 0, 0}), Contains("all 3 weights are zero"));
  CHECK_THROWS_WITH(marg::categorical<T>({1, 1}, INT64_MAX), Contains("overflows int64"));
  // probabilities outside [0, 1]
  CHECK_THROWS_WITH(marg::bernoulli<T>(T(1.5)), Contains("p = 1.5"));
  CHECK_THROWS_WITH(marg::bernoulli<T>(nan), Contains("p = nan"));
  CHECK_THROWS_WITH(marg::binomial<T>(10, T(-0.25)), Contains("p = -0.25"));
  CHECK_THROWS_WITH(marg::binomial<T>(-1, T(0.5)), Contains("n = -1"));
  CHECK_THROWS_WITH(marg::binomial<T>(INT_MAX, T(0.5)), Contains("n = 2147483647"));
  CHECK_THROWS_WITH(marg::beta_binomial<T>(-3, 1, 1), Contains("n = -3"));
  CHECK_THROWS_WITH(marg::beta_binomial<T>(3, 0, 1), Contains("a = 0"));
  CHECK_THROWS_WITH(marg::beta_binomial<T>(3, 1, inf), Contains("b = inf"));
  // uniform_int: empty support and too long a support
  CHECK_THROWS_WITH(marg::uniform_int<T>(5, 4), Contains("a = 5 > b = 4"));
  CHECK_THROWS_WITH(marg::uniform_int<T>(0, INT_MAX), Contains("b - a + 1 = 2147483648"));
  // b - a = INT64_MAX: the reported size must not overflow (found by fuzz_distributions)
  CHECK_THROWS_WITH(marg::uniform_int<T>(0, INT64_MAX),
                    Contains("b - a + 1 = 9223372036854775808"));
  CHECK_THROWS_WITH(marg::uniform_int<T>(-1, INT64_MAX - 1),
                    Contains("b - a + 1 = 9223372036854775808"));
  CHECK_THROWS_WITH(marg::uniform_int<T>(INT64_MIN, INT64_MAX), Contains("overflows int64"));
  // truncated families
  CHECK_THROWS_WITH(marg::poisson<T>(-1), Contains("lambda = -1"));
  CHECK_THROWS_WITH(marg::poisson<T>(inf), Contains("lambda = inf"));
  CHECK_THROWS_WITH(marg::poisson<T>(3, 0), Contains("tail = 0"));
  CHECK_THROWS_WITH(marg::poisson<T>(3, 1), Contains("tail = 1"));
  CHECK_THROWS_WITH(marg::poisson<T>(T(1e10)), Contains("lambda = 1"));  // support > INT_MAX
  CHECK_THROWS_WITH(marg::geometric<T>(0), Contains("p = 0"));
  CHECK_THROWS_WITH(marg::geometric<T>(T(1.25)), Contains("p = 1.25"));
  CHECK_THROWS_WITH(marg::geometric<T>(T(0.5), nan), Contains("tail = nan"));
  CHECK_THROWS_WITH(marg::negative_binomial<T>(0, T(0.5)), Contains("r = 0"));
  CHECK_THROWS_WITH(marg::negative_binomial<T>(2, T(-1)), Contains("p = -1"));
  CHECK_THROWS_WITH(marg::negative_binomial<T>(2, T(0.5), T(-1e-3)), Contains("tail = -0.001"));
  // every one is a marg::invalid_argument and a std::invalid_argument
  CHECK_THROWS_AS(marg::bernoulli<T>(2), marg::invalid_argument);
  CHECK_THROWS_AS(marg::bernoulli<T>(2), std::invalid_argument);
}

TEMPLATE_TEST_CASE("errors: algebra and conditioning reject bad operands", "[distributions]", float,
                   double) {
  using T = TestType;
  const marg::pmf<T> e;
  const auto x = marg::categorical<T>({1, 2, 3});
  CHECK_THROWS_WITH(e + x, Contains("x is an empty pmf"));
  CHECK_THROWS_WITH(x + e, Contains("y is an empty pmf"));
  CHECK_THROWS_WITH(-e, Contains("empty"));
  CHECK_THROWS_WITH(marg::sum(std::vector<marg::pmf<T>>{x, e}), Contains("xs[1] is an empty pmf"));
  CHECK_THROWS_WITH(marg::log_prob_sum(x, e, 0), Contains("y is an empty pmf"));
  CHECK_THROWS_WITH(marg::condition_on_sum(e, x, 0), Contains("x is an empty pmf"));
  // support bounds overflowing int64
  const auto top = marg::delta<T>(INT64_MAX), bottom = marg::delta<T>(INT64_MIN);
  CHECK_THROWS_WITH(top + x, Contains("overflows int64"));
  CHECK_THROWS_WITH(bottom - x, Contains("overflows int64"));
  CHECK_THROWS_WITH(-bottom, Contains("overflows int64"));
  CHECK_THROWS_WITH(top + 1, Contains("overflows int64"));
  CHECK_THROWS_WITH(bottom - 1, Contains("overflows int64"));
  CHECK_THROWS_WITH(x - INT64_MIN, Contains("overflows int64"));
  // soft evidence and gradients over the wrong support, or with bad values
  const auto y = marg::categorical<T>({1, 1});
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, std::vector<T>(3, 1)),
                    Contains("likelihood.size() = 3") && Contains("= 4"));
  CHECK_THROWS_WITH(marg::condition_on_sum(x, y, std::vector<T>{1, -1, 1, 1}),
                    Contains("likelihood[1] = -1"));
  CHECK_THROWS_WITH(marg::condition_on_sum_log(x, y, std::vector<T>{0, 0, NAN, 0}),
                    Contains("log_likelihood[2] = nan"));
  CHECK_THROWS_WITH(marg::condition_on_sum_log(x, y, std::vector<T>{0, INFINITY, 0, 0}),
                    Contains("log_likelihood[1] = inf"));
  CHECK_THROWS_WITH(marg::sum_grad(x, y, std::vector<T>(5, 1)), Contains("g.size() = 5"));
  CHECK_THROWS_WITH(marg::sum_grad(x, y, std::vector<T>{1, 1, INFINITY, 1}),
                    Contains("g[2] = inf"));
  CHECK_THROWS_WITH(marg::sum_given_evidence(x, y, std::vector<T>{1}),
                    Contains("likelihood.size() = 1"));
}

// The m + n - 1 > INT_MAX check of x + y needs operands of 2^30 values (4 GiB
// each): too heavy for the suite; the factories' INT_MAX limits are checked above.
