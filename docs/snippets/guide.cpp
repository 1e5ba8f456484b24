// Every C++ snippet of docs/guide.md, compiled and run by ctest
// (docs.snippets.run). The regions between "// [snippet: NAME]" and
// "// [end]" must match the guide's ```cpp blocks line for line, leading
// spaces aside (docs.snippets.match_guide, docs/snippets/check-guide).
#include <marg/marg.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}

void first_model() {
  // [snippet: first-model]
  const marg::pmf<> die = marg::uniform_int(1, 6);  // pmf<double> on 1..6
  const marg::pmf<> two = die + die;                // exact law of the sum, on 2..12
  std::printf("P(sum = 7) = %.6f  mean %.2f  variance %.4f\n", two.prob(7), two.mean(),
              two.variance());

  const auto x = marg::binomial(10, 0.3) + marg::poisson(2.0) - 3;  // shifts are O(1)
  std::printf("support %lld..%lld, P(x <= 0) = %.6f\n", static_cast<long long>(x.lower()),
              static_cast<long long>(x.upper()), x.cdf(0));
  // [end]
  expect(std::fabs(two.prob(7) - 6.0 / 36) < 1e-15, "P(two dice = 7) = 6/36");
  expect(x.lower() == -3, "support of binomial + poisson - 3 starts at -3");
}

void many_terms() {
  // [snippet: sum]
  std::vector<marg::pmf<>> terms;
  for (int i = 0; i < 1000; ++i) terms.push_back(marg::bernoulli(0.001 * (i % 997)));
  const marg::pmf<> total = marg::sum(terms);  // balanced tree, batched per level
  std::printf("Poisson-binomial of 1000 terms: mean %.3f, P(total = 500) = %.3e\n", total.mean(),
              total.prob(500));
  // [end]
  expect(total.size() == 1001, "1000 Bernoulli terms give 1001 values");
}

void observe() {
  // [snippet: observe]
  const auto x = marg::poisson(3.0);
  const auto y = marg::binomial(20, 0.25);
  const double ll = marg::log_prob_sum(x, y, 9);  // log P(x + y = 9), O(min(m, n))
  std::printf("log P(x + y = 9) = %.6f\n", ll);
  // [end]
  expect(std::isfinite(ll) && ll < 0, "log likelihood of a possible sum is finite and negative");

  // [snippet: condition]
  const marg::sum_posterior<> post = marg::condition_on_sum(x, y, 9);
  // post.log_likelihood == ll; post.first is the posterior of x, post.second of y
  std::printf("E[x | x + y = 9] = %.4f, E[y | x + y = 9] = %.4f\n", post.first.mean(),
              post.second.mean());

  std::mt19937_64 rng(42);
  const auto [xs, ys] = marg::sample_given_sum(x, y, 9, rng);  // one joint draw, xs + ys == 9

  // soft evidence: a likelihood over the support of x + y
  const auto z = x + y;
  std::vector<double> L(static_cast<std::size_t>(z.size()));
  for (std::int64_t k = z.lower(); k <= z.upper(); ++k)
    L[k - z.lower()] = std::exp(-0.5 * (k - 9.0) * (k - 9.0));  // noisy reading near 9
  const auto soft = marg::condition_on_sum(x, y, L);
  std::printf("soft evidence: log likelihood %.4f, E[x | reading] = %.4f\n", soft.log_likelihood,
              soft.first.mean());
  // [end]
  expect(std::fabs(post.log_likelihood - ll) < 1e-12, "condition_on_sum's likelihood");
  expect(xs + ys == 9, "joint draw sums to 9");

  // [snippet: impossible]
  const auto none = marg::condition_on_sum(marg::binomial(3, 0.5), marg::binomial(3, 0.5), 7);
  // none.log_likelihood == -inf; none.first.empty() and none.second.empty()
  // [end]
  expect(std::isinf(none.log_likelihood) && none.first.empty(), "impossible observation");
}

void gradients() {
  // [snippet: gradients]
  const auto x = marg::categorical({0.2, 0.5, 0.3});
  const auto y = marg::binomial(4, 0.6);
  // reverse mode through z = x + y: g holds df/dP(z = k) over z's support
  std::vector<double> g((x + y).size(), 0.0);
  g[3] = 1.0;  // f = P(z = 3), as z's support starts at 0
  const marg::sum_gradient<> d = marg::sum_grad(x, y, g);  // d.first: df/dp, d.second: df/dq

  // gradient of log P(x + y = 3) directly, in O(m + n)
  const marg::sum_gradient<> dl = marg::log_prob_sum_grad(x, y, 3);
  std::printf("d P(z=3) / d p_0 = %.4f,  d log P(z=3) / d p_0 = %.4f\n", d.first[0], dl.first[0]);
  // [end]
  expect(std::fabs(d.first[0] - y.prob(3)) < 1e-15, "dP(z=3)/dp_0 = q_3");
}

void batches() {
  // [snippet: batch]
  // 1000 particles, each with its own law of a count, plus a common noise term
  std::vector<marg::pmf<>> rows;
  for (int b = 0; b < 1000; ++b) rows.push_back(marg::binomial(20 + b % 7, 0.3));
  const marg::pmf_batch<> particles(rows);  // padded to a common length
  const auto noise = marg::poisson(1.5);

  const marg::pmf_batch<> predicted = particles + noise;  // one batched call for all rows
  const marg::pmf_batch<> noises(std::vector<marg::pmf<>>(1000, noise));  // log_prob_sum: B rows
  const std::vector<std::int64_t> observed(1000, 9);
  const std::vector<double> weights = marg::log_prob_sum(particles, noises, observed);
  std::printf("row 0: P(count + noise = 9) = %.4f; %d rows of length %d\n", std::exp(weights[0]),
              predicted.batch(), predicted.length());
  // [end]
  expect(predicted.batch() == 1000, "batch of 1000 rows");
}

void evidence_on_device() {
  // [snippet: batch-evidence]
  // one SIR step for 1000 particles: i_t = i_{t-1} + new infections - recoveries,
  // then 41 cases reported, each case reported with probability 0.6
  const int B = 1000;
  std::vector<std::int64_t> susceptible(B), infected(B);
  std::vector<double> p_inf(B, 0.05), p_rec(B, 0.3);
  for (int b = 0; b < B; ++b) susceptible[b] = 700 - b % 50, infected[b] = 30 + b % 20;
  const auto infections = marg::binomial_batch<double>(susceptible, p_inf);
  const auto recoveries = -marg::binomial_batch<double>(infected, p_rec);  // negated rows
  // N = i_{t-1} + z over the sums z of infections + (-recoveries); at most 763 people
  const marg::batch_evidence<> evidence =
      marg::binomial_count_evidence(infections, recoveries, infected, {41}, {0.6}, 763);
  std::mt19937_64 rng(7);
  const auto draws = marg::sample_given_evidence(infections, recoveries, evidence, rng);
  const auto post = marg::condition_on_sum(infections, recoveries, evidence);
  std::printf(
      "particle 0: log weight %.4f, drew %lld infections and %lld recoveries, "
      "posterior mean of infections %.3f\n",
      draws.log_likelihood[0], static_cast<long long>(draws.first[0]),
      static_cast<long long>(-draws.second[0]), post.first.row(0).mean());
  // [end]
  // the two overloads sum the same products in other orders
  expect(std::fabs(draws.log_likelihood[0] - post.log_likelihood[0]) < 1e-9,
         "sample_given_evidence and condition_on_sum agree on the log weight");
  expect(draws.first[0] >= 0 && draws.second[0] <= 0, "draws on the supports");
}

void precision() {
  // [snippet: float]
  const marg::pmf<float> xf = marg::binomial<float>(1000, 0.5);  // float: half the memory
  const marg::pmf<float> sf = xf + xf;
  const marg::pmf<double> xd = marg::binomial(1000, 0.5);  // double, the default
  std::printf("P(sum = 1600): float %.3e (below float's range), double %.3e\n", sf.prob(1600),
              (xd + xd).prob(1600));
  // [end]
  expect(sf.size() == 2001, "float sum support");
}

void log_space() {
  // [snippet: log space]
  const marg::pmf<double> x = marg::binomial(100000, 0.5);  // P(0) = 2^-100000
  std::printf("log P(x = 0) = %.3f, kept as a log-probability: %d\n", x.log_prob(0),
              x.has_log_probs());
  const double ll = marg::log_prob_sum(x, x, 5);  // log P(x + x = 5), about -138600
  const marg::pmf<double> s = x + x;              // exact in every element, in log space
  std::printf("log P(x + x = 5) = %.3f = %.3f\n", ll, s.log_prob(5));
  const marg::pmf<double> c = marg::categorical_log({-800.0, -801.0});  // log-weights
  std::printf("P(c = 0) = %.4f\n", c.prob(0));
  // the numeric layer: r_i = log sum_j exp(a_j + b_{i-j}), -inf allowed
  const std::vector<double> a = {-1000, -1001, -INFINITY}, b = {-2000, -2003};
  std::vector<double> r(4);
  marg::log_convolve<double>(3, 2, a.data(), 1, b.data(), 1, r.data(), 1);
  // [end]
  expect(std::fabs(x.log_prob(0) + 100000 * std::log(2.0)) < 1e-9, "log P(0)");
  expect(std::fabs(ll - s.log_prob(5)) < 1e-9, "log_prob_sum against the sum");
  expect(std::fabs(c.prob(0) - 1 / (1 + std::exp(-1.0))) < 1e-15, "categorical_log");
  expect(std::fabs(r[0] + 3000) < 1e-12 && r[3] == -INFINITY, "log_convolve");
}

void backends() {
  // [snippet: backend]
  std::printf("CUDA compiled: %d, usable GPUs: %d\n", marg::cuda_compiled(), marg::device_count());
  marg::set_backend(marg::backend::cpu);  // or backend::cuda, or backend::automatic (default)
  marg::set_cpu_threads(2);               // default: all cores, or MARG_NUM_THREADS
  const bool on_cpu = marg::current_backend() == marg::backend::cpu;
  marg::set_backend(marg::backend::automatic);
  // [end]
  expect(on_cpu, "set_backend(cpu)");
  try {
    // [snippet: backend-error]
    if (marg::device_count() == 0) marg::set_backend(marg::backend::cuda);  // throws
    // [end]
  } catch (const marg::invalid_argument& e) {
    std::printf("as documented: %s\n", e.what());
  }
}

void planner() {
  const std::string path =
      (std::filesystem::temp_directory_path() / "marg-guide-snippet.wisdom").string();
  // [snippet: wisdom]
  marg::set_planner_mode(marg::planner_mode::measure);  // or MARG_PLAN=measure
  // ... run the model: the first product of each shape class times every
  // variant that can run it (a few launches each, waiting for them) and keeps
  // the fastest; later products of the class use it at no cost ...
  marg::export_wisdom(path);  // path: a file kept with the model
  // in a later process, on the same kind of device (estimate mode, the
  // default: deterministic again, with the measured choices):
  marg::import_wisdom(path);
  // [end]
  const std::string wisdom = marg::wisdom_text();
  expect(wisdom.rfind("# libmarg wisdom 1\n", 0) == 0, "wisdom_text's header");
  std::ifstream file(path);
  std::ostringstream written;
  written << file.rdbuf();
  expect(written.str() == wisdom, "export_wisdom writes wisdom_text");
  marg::import_wisdom(path);
  expect(marg::wisdom_text() == wisdom, "import_wisdom of export_wisdom");
  std::remove(path.c_str());
  marg::set_planner_mode(marg::planner_mode::estimate);
  marg::forget_wisdom();
}

void numeric_layer() {
  // [snippet: numeric]
  const int m = 4096, n = 300;
  marg::array<double> p(m, 1.0 / m), q(n, 1.0 / n);  // pool memory: managed when a GPU is there
  marg::array<double> r(m + n - 1);
  // all three on r's stream (the calling thread's libmarg stream by default)
  marg::convolve<double>(m, n, p.data(), 1, q.data(), 1, r.data(), 1, r.stream());
  marg::synchronize(r.stream());  // before the host reads pool memory written on a stream
  std::printf("r[0] = %.3e, r[m - 1] = %.3e\n", r[0], r[m - 1]);

  // a batch: 64 problems in one call, the same q for all (batch stride 0)
  marg::array<double> ps(64 * m, 1.0 / m), rs(64 * (m + n - 1));
  marg::convolve_batched<double>(m, n, ps.data(), 1, m, q.data(), 1, 0, rs.data(), 1, m + n - 1, 64,
                                 rs.stream());
  marg::synchronize(rs.stream());
  // [end]
  expect(std::fabs(r[m - 1] - 1.0 / m) < 1e-15, "r[m-1] = 1/m");
  expect(std::fabs(rs[63 * (m + n - 1) + m - 1] - 1.0 / m) < 1e-15, "batched r[m-1] = 1/m");

  // [snippet: stream]
  // a stream of your own: a cudaStream_t cast to void*
  //   marg::stream_view s{static_cast<void*>(my_cuda_stream)};
  const marg::stream_view s{};  // default: this thread's libmarg stream
  marg::convolve<double>(m, n, p.data(), 1, q.data(), 1, r.data(), 1, s);
  marg::synchronize(s);
  // [end]

  // [snippet: graph]
  // record a step's calls once (pool or device memory only), replay them per iteration
  marg::array<double> g(m + n - 1, 1.0), gp(m);
  const marg::call_graph step = marg::capture_calls(s, [&] {
    marg::convolve<double>(m, n, p.data(), 1, q.data(), 1, r.data(), 1, s);
    marg::convolve_grad_p<double>(m, n, g.data(), 1, q.data(), 1, gp.data(), 1, s);
  });
  for (int iteration = 0; iteration < 3; ++iteration) {
    p[0] = 1.0 / (iteration + 2);  // new input values, same buffers
    step.replay(s);                // both products, one graph launch on a GPU
    marg::synchronize(s);
  }
  // [end]
  expect(std::fabs(r[0] - p[0] / n) < 1e-15, "replayed r[0] = p[0] q[0]");
  expect(std::fabs(gp[0] - 1.0) < 1e-12, "replayed grad_p[0] = sum of q");
}

void pool() {
  // [snippet: pool]
  const marg::pool_statistics st = marg::pool_stats();
  std::printf("pool: %zu bytes in use, %zu reserved, cap %zu\n", st.bytes_in_use, st.bytes_reserved,
              st.limit);
  marg::set_pool_limit(std::size_t{4} << 30);  // 4 GiB; MARG_POOL_LIMIT=4G sets the start value
  marg::pool_trim();                           // give cached blocks back to the system (or CUDA)
  try {
    marg::array<double> huge(std::size_t{1} << 40);  // 8 TiB: past the cap
  } catch (const marg::out_of_memory& e) {           // derived from std::bad_alloc
    std::printf("out_of_memory: %s\n", e.what());
  }
  // [end]
  expect(marg::pool_limit() == std::size_t{4} << 30, "pool limit set");
}

void devices() {
  // [snippet: devices]
  // the device of this thread's next calls: CUDA's current device (-1: no GPU, the host)
  const int before = marg::current_device();
  if (marg::device_count() > 1) marg::set_device(1);  // = cudaSetDevice(1), this thread only
  const marg::pmf<double> x = marg::binomial(100, 0.3), y = marg::poisson(4.0);
  const marg::pmf<double> z = x + y;  // runs on x's and y's device, whatever is current
  std::printf("z lives on device %d; pool there: %zu bytes in use\n", z.device(),
              marg::pool_stats(z.device() < 0 ? -1 : z.device()).bytes_in_use);
  if (before >= 0) marg::set_device(before);
  // [end]
  expect(z.device() == x.device(), "a sum lives on its terms' device");
  expect(marg::current_device() == before, "the thread's device restored");
}

}  // namespace

void cancellation() {
  bool stopped = false;
  // [snippet: cancel]
  std::stop_source stop;
  std::thread worker([&] {
    marg::cancel_scope scope(stop.get_token(),
                             {.max_work = 1'000'000'000'000, .max_time = std::chrono::minutes(5)});
    try {
      const auto z = marg::uniform_int(0, 4'999'999) + marg::uniform_int(0, 4'999'999);
      std::printf("%lld values\n",
                  static_cast<long long>(z.size()));  // not reached: 2.5e13 > max_work
    } catch (const marg::cancelled& e) {              // stopped, over budget or past the deadline
      std::puts(e.what());
    }
  });
  stop.request_stop();  // from any thread
  worker.join();
  // [end]
  stopped = stop.stop_requested();
  expect(stopped, "cancellation");
}

int main() {
  first_model();
  many_terms();
  observe();
  gradients();
  batches();
  evidence_on_device();
  precision();
  log_space();
  cancellation();
  backends();
  planner();
  numeric_layer();
  pool();
  devices();
  if (failures != 0) {
    std::printf("%d snippet checks failed\n", failures);
    return 1;
  }
  std::printf("all guide snippets ran\n");
  return 0;
}
