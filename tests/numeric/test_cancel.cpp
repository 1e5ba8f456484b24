// Cancellation and budgets (cancel.hpp): a stop from another thread ends a
// long CPU product between blocks, a work budget refuses a call before it
// starts, a time budget ends a sum, and the library stays usable afterwards.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stop_token>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <marg/distributions/algebra.hpp>
#include <marg/distributions/factories.hpp>
#include <marg/numeric/backend.hpp>
#include <marg/numeric/cancel.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/error.hpp>

namespace {

using seconds = std::chrono::duration<double>;

double since(std::chrono::steady_clock::time_point t0) {
  return seconds(std::chrono::steady_clock::now() - t0).count();
}

// a convolution checked against a plain long double loop: the library works
void expect_correct_convolution() {
  const int m = 37, n = 53;
  std::vector<double> p(m), q(n), r(m + n - 1);
  for (int i = 0; i < m; ++i) p[i] = 1.0 / (i + 1);
  for (int j = 0; j < n; ++j) q[j] = 1.0 + j % 7;
  marg::convolve(m, n, p.data(), 1, q.data(), 1, r.data(), 1);
  for (int k = 0; k < m + n - 1; ++k) {
    long double ref = 0;
    for (int i = 0; i < m; ++i)
      if (k - i >= 0 && k - i < n) ref += static_cast<long double>(p[i]) * q[k - i];
    CHECK(std::abs(r[k] - ref) <= 1e-13L * ref);
  }
}

struct cpu_backend {
  cpu_backend() { marg::set_backend(marg::backend::cpu); }
  ~cpu_backend() { marg::set_backend(marg::backend::automatic); }
};

}  // namespace

TEST_CASE("a stop from another thread ends a long CPU product between blocks", "[cancel]") {
  const cpu_backend cpu;
  // m = n = 2^22: about 18 s of multiply-adds on one core of the development
  // machine, far past the 0.2 s after which the stop comes
  const int m = 1 << 22;
  std::vector<float> p(m, 1.0f / m), r(2 * std::size_t{m} - 1);
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  {
    const marg::cancel_scope scope(stop.get_token());
    CHECK_THROWS_AS(marg::convolve(m, m, p.data(), 1, p.data(), 1, r.data(), 1), marg::cancelled);
  }
  const double took = since(t0);
  stopper.join();
  INFO("the product stopped after " << took << " s");
  CHECK(took >= 0.19);
  CHECK(took < 10.0);  // the whole product: minutes
  CHECK(marg::cancel_scope::current() == nullptr);
  expect_correct_convolution();
}

TEST_CASE("a work budget refuses a product before it starts", "[cancel]") {
  // a budget of 1e6 multiply-adds: 1000 x 1001 is refused at once, 1000 x 1000 runs
  std::vector<double> p(1001, 1e-3), r(2000);
  const marg::cancel_scope scope({}, {.max_work = 1000000});
  const auto t0 = std::chrono::steady_clock::now();
  try {
    marg::convolve(1000, 1001, p.data(), 1, p.data(), 1, r.data(), 1);
    FAIL("no exception");
  } catch (const marg::cancelled& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("1001000") != std::string::npos);
    CHECK(what.find("1000000") != std::string::npos);
  }
  CHECK(since(t0) < 0.1);
  marg::convolve(1000, 1000, p.data(), 1, p.data(), 1, r.data(), 1);
  CHECK(r[0] == Approx(1e-6));
  // the pmf layer goes through the same check
  CHECK_THROWS_AS(marg::uniform_int<double>(0, 1999) + marg::uniform_int<double>(0, 999),
                  marg::cancelled);
}

TEST_CASE("a time budget of an outer scope ends a long sum", "[cancel]") {
  const cpu_backend cpu;
  // 400,000 Bernoulli terms: several seconds of work on this machine kind
  std::vector<marg::pmf<double>> terms(400000, marg::bernoulli<double>(0.3));
  const auto t0 = std::chrono::steady_clock::now();
  {
    const marg::cancel_scope outer({}, {.max_work = 0, .max_time = seconds(0.3)});
    const marg::cancel_scope inner({});  // no limits of its own
    CHECK_THROWS_AS(marg::sum(terms), marg::cancelled);
  }
  const double took = since(t0);
  INFO("sum stopped after " << took << " s");
  CHECK(took >= 0.29);
  CHECK(took < 10.0);  // the whole sum: about 16 x the 1.2 s of 100,000 terms
  // without a scope the same kind of sum completes: a small one, exact moments
  std::vector<marg::pmf<double>> few(100, marg::bernoulli<double>(0.3));
  const marg::pmf<double> s = marg::sum(few);
  CHECK(s.mean() == Approx(30.0).epsilon(1e-12));
  CHECK(s.variance() == Approx(21.0).epsilon(1e-12));
}

TEST_CASE("throw_if_cancelled and bad budgets", "[cancel]") {
  marg::throw_if_cancelled();  // no scope: nothing happens
  std::stop_source stop;
  const marg::cancel_scope scope(stop.get_token());
  marg::throw_if_cancelled();
  CHECK_FALSE(scope.stop_requested());
  stop.request_stop();
  CHECK(scope.stop_requested());
  CHECK_THROWS_AS(marg::throw_if_cancelled(), marg::cancelled);
  CHECK_THROWS_AS(marg::cancel_scope({}, {.max_work = -1}), marg::invalid_argument);
  CHECK_THROWS_AS(marg::cancel_scope({}, {.max_work = 0, .max_time = seconds(-1.0)}),
                  marg::invalid_argument);
  CHECK_THROWS_AS(marg::cancel_scope({}, {.max_work = 0, .max_time = seconds(NAN)}),
                  marg::invalid_argument);
}
