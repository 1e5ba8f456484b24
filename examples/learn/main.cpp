// Learning through a discrete sum: X ~ Binomial(n, p) and Y ~ Poisson(lambda)
// are never seen, only Z = X + Y. The parameters are fitted by gradient
// ascent on the exact marginal log likelihood, with gradients from
// marg::sum_grad (and checked against marg::log_prob_sum_grad).
//
//   learn [--samples M] [--seed S] [--p P] [--lambda L] [--trials N] [--check]
//   (learn --help: every option with its default)
//
// Exit status: 0 on success, 1 when --check fails, 2 on bad input, 3 when
// standard output cannot be written.
#include <marg/marg.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "example_cli.hpp"

namespace {

struct options {
  std::int64_t samples = 20000;
  std::uint64_t seed = 1;
  std::int64_t trials = 40;  // n of the binomial term
  double p = 0.25;           // generating values
  double lambda = 3.0;
  bool check = false;
};

options parse(int argc, char** argv) {
  options o;
  CLI::App app(
      "Gradient ascent on the exact marginal likelihood of Z = X + Y, X ~ Binomial(trials, p), "
      "Y ~ Poisson(lambda), from samples of Z only.\nExit status: 0 success, 1 --check failed, "
      "2 bad arguments, 3 standard output cannot be written.",
      "learn");
  marg_example::standard_options(app);
  app.add_option("--samples", o.samples, "observations of Z")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  app.add_option("--seed", o.seed, "random seed");
  app.add_option("--p", o.p, "generating p")->check(CLI::Range(1e-12, 1 - 1e-12));
  app.add_option("--lambda", o.lambda, "generating lambda")->check(CLI::Range(1e-12, 1e4));
  app.add_option("--trials", o.trials, "trials of the binomial term")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000}));
  app.add_flag("--check", o.check, "exit 1 unless the fit passes its checks");
  marg_example::parse_or_exit(app, argc, argv);
  return o;
}

/// The data, as a count per observed value of z.
using histogram = std::map<std::int64_t, double>;

/// The log likelihood and its gradient with respect to (logit p, log lambda).
struct evaluation {
  double log_likelihood;
  double d_logit_p, d_log_lambda;
};

// sum_z c_z log P(X + Y = z), and its gradient by the chain rule:
// dL/dr_z = c_z / r_z over the support of X + Y; sum_grad gives dL/dP(X = j)
// and dL/dP(Y = j); then dP(X = j)/d logit p = P(X = j)(j - n p) and
// dP(Y = j)/d log lambda = P(Y = j)(j - lambda).
evaluation evaluate(const histogram& data, std::int64_t trials, double p, double lambda) {
  const marg::pmf<double> x = marg::binomial<double>(trials, p);
  const marg::pmf<double> y = marg::poisson<double>(lambda);
  const marg::pmf<double> r = x + y;
  std::vector<double> g(static_cast<std::size_t>(r.size()), 0.0);
  double ll = 0;
  for (const auto& [z, c] : data) {
    const double pz = r.prob(z);
    if (!(pz > 0)) return {-INFINITY, 0, 0};  // z outside the (truncated) support
    ll += c * std::log(pz);
    g[static_cast<std::size_t>(z - r.lower())] = c / pz;
  }
  const marg::sum_gradient<double> sg = marg::sum_grad(x, y, g);
  double du = 0, dv = 0;
  for (std::int64_t j = 0; j < x.size(); ++j)
    du += sg.first[j] * x.prob(x.lower() + j) * (static_cast<double>(x.lower() + j) - trials * p);
  for (std::int64_t j = 0; j < y.size(); ++j)
    dv += sg.second[j] * y.prob(y.lower() + j) * (static_cast<double>(y.lower() + j) - lambda);
  return {ll, du, dv};
}

// the same gradient observation by observation through log_prob_sum_grad
// (grouped by value): an independent route to compare with
evaluation evaluate_by_observation(const histogram& data, std::int64_t trials, double p,
                                   double lambda) {
  const marg::pmf<double> x = marg::binomial<double>(trials, p);
  const marg::pmf<double> y = marg::poisson<double>(lambda);
  evaluation e{0, 0, 0};
  for (const auto& [z, c] : data) {
    e.log_likelihood += c * marg::log_prob_sum(x, y, z);
    const marg::sum_gradient<double> sg = marg::log_prob_sum_grad(x, y, z);
    for (std::int64_t j = 0; j < x.size(); ++j)
      e.d_logit_p += c * sg.first[j] * x.prob(x.lower() + j) *
                     (static_cast<double>(x.lower() + j) - trials * p);
    for (std::int64_t j = 0; j < y.size(); ++j)
      e.d_log_lambda +=
          c * sg.second[j] * y.prob(y.lower() + j) * (static_cast<double>(y.lower() + j) - lambda);
  }
  return e;
}

double logistic(double u) {
  return 1 / (1 + std::exp(-u));
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  int failures = 0;
  try {
    // the data: only the totals
    std::mt19937_64 g(o.seed);
    std::binomial_distribution<std::int64_t> bx(o.trials, o.p);
    std::poisson_distribution<std::int64_t> by(o.lambda);
    histogram data;
    for (std::int64_t m = 0; m < o.samples; ++m) data[bx(g) + by(g)] += 1;
    const double M = static_cast<double>(o.samples);
    std::printf(
        "model: Z = X + Y, X ~ Binomial(%lld, p), Y ~ Poisson(lambda); %lld observations "
        "of Z only (seed %llu)\n",
        static_cast<long long>(o.trials), static_cast<long long>(o.samples),
        static_cast<unsigned long long>(o.seed));

    // Adam on (logit p, log lambda), gradient of the mean log likelihood
    double u = 0.0, v = 0.0;  // start: p = 0.5, lambda = 1
    const evaluation e0 = evaluate(data, o.trials, logistic(u), std::exp(v));
    const evaluation e1 = evaluate_by_observation(data, o.trials, logistic(u), std::exp(v));
    const double agree =
        std::max(std::abs(e0.d_logit_p - e1.d_logit_p) / std::abs(e1.d_logit_p),
                 std::abs(e0.d_log_lambda - e1.d_log_lambda) / std::abs(e1.d_log_lambda));
    std::printf("gradient at the start: sum_grad vs log_prob_sum_grad relative difference %.2e\n",
                agree);
    if (!(agree < 1e-9)) ++failures, std::printf("check: the two gradients differ\n");

    const auto t0 = std::chrono::steady_clock::now();
    const double rate = 0.05, b1 = 0.9, b2 = 0.999;
    double m1u = 0, m1v = 0, m2u = 0, m2v = 0;
    int it = 0;
    evaluation e = e0;
    for (it = 1; it <= 5000; ++it) {
      e = evaluate(data, o.trials, logistic(u), std::exp(v));
      const double gu = e.d_logit_p / M, gv = e.d_log_lambda / M;
      if (std::hypot(gu, gv) < 1e-8) break;
      m1u = b1 * m1u + (1 - b1) * gu, m1v = b1 * m1v + (1 - b1) * gv;
      m2u = b2 * m2u + (1 - b2) * gu * gu, m2v = b2 * m2v + (1 - b2) * gv * gv;
      const double c1 = 1 - std::pow(b1, it), c2 = 1 - std::pow(b2, it);
      u += rate * (m1u / c1) / (std::sqrt(m2u / c2) + 1e-12);
      v += rate * (m1v / c1) / (std::sqrt(m2v / c2) + 1e-12);
      if (it % 250 == 0)
        std::printf("  iteration %5d: mean log likelihood %.6f, p %.4f, lambda %.4f\n", it,
                    e.log_likelihood / M, logistic(u), std::exp(v));
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double p_hat = logistic(u), lambda_hat = std::exp(v);
    const evaluation at_truth = evaluate(data, o.trials, o.p, o.lambda);
    const evaluation at_fit = evaluate(data, o.trials, p_hat, lambda_hat);
    std::printf("stopped after %d iterations (%.3f s)\n\n", std::min(it, 5000), secs);
    std::printf("%-8s %12s %12s\n", "", "generating", "recovered");
    std::printf("%-8s %12.4f %12.4f\n", "p", o.p, p_hat);
    std::printf("%-8s %12.4f %12.4f\n", "lambda", o.lambda, lambda_hat);
    std::printf("%-8s %12.4f %12.4f   (log likelihood)\n", "", at_truth.log_likelihood,
                at_fit.log_likelihood);

    // checks: the fit is a maximum (at least as likely as the truth) and close
    // to the truth (tolerances about 4 standard errors at the defaults)
    if (!(at_fit.log_likelihood >= at_truth.log_likelihood - 1e-6))
      ++failures, std::printf("check: the fit is less likely than the generating values\n");
    if (!(std::abs(p_hat - o.p) < 0.02))
      ++failures, std::printf("check: p off by more than 0.02\n");
    if (!(std::abs(lambda_hat - o.lambda) < 0.8))
      ++failures, std::printf("check: lambda off by more than 0.8\n");
    if (o.check) std::printf(failures ? "check: FAILED (%d)\n" : "check: passed\n", failures);
  } catch (const std::exception& ex) {
    std::fflush(stdout);
    std::fprintf(stderr, "learn: %s\n", ex.what());
    return marg_example::finish("learn", marg_example::exit_bad_input);
  }
  return marg_example::finish(
      "learn", o.check && failures ? marg_example::exit_check_failed : marg_example::exit_ok);
}
