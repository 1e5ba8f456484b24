// How libmarg picks the CUDA device (docs/guide.md, "Devices"): the calling
// thread's current device unless an explicit stream says otherwise; device
// memory of another device is rejected, never copied or misread; one pool
// per device; pmfs and batches remember their device.
//
// Without a GPU only the first case runs (the host fallback, unchanged).
// With one GPU the single-device cases run and the multi-device cases skip
// (MARG_SKIP_NO_GPU, with the number of devices found). With two or more:
// each device alone, 8 threads over the devices concurrently for
// MARG_TEST_DEVICE_SECONDS (default 30) with every result bitwise equal to
// the same call made alone beforehand, one thread switching devices between
// calls, and mixed-device operands rejected. Every result is also checked
// against a long double loop.
#include <catch2/catch.hpp>

#include <marg/marg.h>
#include <marg/marg.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../common/reference.hpp"
#include "../numeric/numeric_fixture.hpp"
#include "cuda_memory.hpp"

using namespace marg::test;

namespace {

// ---------------------------------------------------------------- skips

#define MARG_SKIP_WITHOUT_DEVICES(n)                                                     \
  if (marg::device_count() < (n)) {                                                      \
    if (marg::device_count() == 0) {                                                     \
      WARN("MARG_SKIP_NO_GPU: no CUDA device on this host");                             \
    } else {                                                                             \
      WARN("MARG_SKIP_NO_GPU: this case needs " << (n) << " CUDA devices, found "        \
                                                << marg::device_count()                  \
                                                << " (multi-device case not run here)"); \
    }                                                                                    \
    return;                                                                              \
  }

/// Selects the CUDA backend and device 0 for a case, restoring both after.
class gpu_case {
 public:
  gpu_case() : previous_(marg::requested_backend()), device_(cuda::current()) {
    marg::set_backend(marg::backend::cuda);
  }
  gpu_case(const gpu_case&) = delete;
  gpu_case& operator=(const gpu_case&) = delete;
  ~gpu_case() {
    try {
      marg::set_backend(previous_);
      cuda::set_current(device_);
    } catch (...) {
    }
  }

 private:
  marg::backend previous_;
  int device_;
};

// ---------------------------------------------------------------- problems

/// One banded product of the mix: op, sizes, batch (contiguous rows).
struct device_problem {
  op o;
  int m, n, batch;
};

// the 3000 x 3000, sizes 1 and primes, m < n and m > n, a batch
const device_problem problems[] = {{op::convolve, 3000, 3000, 1}, {op::convolve, 1, 7, 1},
                                   {op::grad_p, 257, 131, 1},     {op::grad_q, 101, 613, 1},
                                   {op::convolve, 2048, 2048, 1}, {op::convolve, 300, 200, 64}};
constexpr int n_problems = sizeof(problems) / sizeof(problems[0]);

/// Inputs of a problem (fixed for the whole test run) and its reference.
struct inputs {
  std::vector<double> a, b;  // batch rows each
  std::vector<rvec> want;    // per row
};

std::int64_t len_a(const device_problem& p) {
  return lengths_of(p.o, p.m, p.n).a;
}
std::int64_t len_b(const device_problem& p) {
  return lengths_of(p.o, p.m, p.n).b;
}
std::int64_t len_out(const device_problem& p) {
  return lengths_of(p.o, p.m, p.n).out;
}

inputs make_inputs(rng& g, const device_problem& p) {
  inputs in;
  const std::int64_t la = len_a(p), lb = len_b(p);
  for (int r = 0; r < p.batch; ++r) {
    const std::vector<double> a = random_positive<double>(g, la, shape::bell);
    const std::vector<double> b = random_positive<double>(g, lb, shape::uniform);
    in.a.insert(in.a.end(), a.begin(), a.end());
    in.b.insert(in.b.end(), b.begin(), b.end());
    in.want.push_back(reference(p.o, p.m, p.n, widen(a), widen(b)));
  }
  return in;
}

/// Runs the device_problem's product with pointers of any kind on `stream` (batches
/// are convolutions).
void call(const device_problem& p, const double* a, const double* b, double* out,
          marg::stream_view s) {
  const std::int64_t la = len_a(p), lb = len_b(p), lo = len_out(p);
  if (p.batch > 1) {
    marg::convolve_batched<double>(p.m, p.n, a, 1, la, b, 1, lb, out, 1, lo, p.batch, s);
    return;
  }
  switch (p.o) {
    case op::convolve:
      marg::convolve<double>(p.m, p.n, a, 1, b, 1, out, 1, s);
      break;
    case op::grad_p:
      marg::convolve_grad_p<double>(p.m, p.n, a, 1, b, 1, out, 1, s);
      break;
    case op::grad_q:
      marg::convolve_grad_q<double>(p.m, p.n, a, 1, b, 1, out, 1, s);
      break;
  }
}

/// Where the operands of one call live and which stream it names.
enum class placement {
  host,          ///< std::vector, default stream
  pool,          ///< marg::array made on the current device, default stream
  device,        ///< cudaMalloc on the current device, default stream
  device_stream  ///< cudaMalloc on the device, a user stream of it; the current
                 ///< device is another one (the stream decides)
};
constexpr placement placements[] = {placement::host, placement::pool, placement::device,
                                    placement::device_stream};
constexpr int n_placements = 4;

const char* name_of(placement w) {
  switch (w) {
    case placement::host:
      return "host";
    case placement::pool:
      return "pool";
    case placement::device:
      return "device";
    case placement::device_stream:
      return "device+stream";
  }
  return "?";
}

/// A user stream per device for one thread.
struct thread_streams {
  std::vector<void*> s;
  thread_streams() {
    for (int d = 0; d < marg::device_count(); ++d) s.push_back(cuda::stream_on(d));
  }
  thread_streams(const thread_streams&) = delete;
  thread_streams& operator=(const thread_streams&) = delete;
  ~thread_streams() {
    for (void* x : s) {
      try {
        cuda::destroy_stream(x);
      } catch (...) {
      }
    }
  }
};

/// One call of device_problem `p` on device `dev` with operands placed as `w`: makes
/// the placement's device current (another one for device_stream), runs, and
/// returns the output on the host. Checks that libmarg leaves CUDA's current
/// device as it found it. Throws std::runtime_error on a failed check (safe on
/// any thread, unlike Catch2's assertions).
std::vector<double> run_on(int dev, const device_problem& p, const inputs& in, placement w,
                           thread_streams& streams) {
  const std::size_t na = in.a.size(), nb = in.b.size();
  const std::size_t no = static_cast<std::size_t>(len_out(p) * p.batch);
  std::vector<double> out(no, -1.0);
  const int current = w == placement::device_stream ? (dev + 1) % marg::device_count() : dev;
  marg::set_device(current);
  switch (w) {
    case placement::host:
      call(p, in.a.data(), in.b.data(), out.data(), {});
      break;
    case placement::pool: {
      marg::array<double> a(na), b(nb), r(no);
      if (a.device() != dev)
        throw std::runtime_error("an array made with device " + std::to_string(dev) +
                                 " current reports device " + std::to_string(a.device()));
      std::memcpy(a.data(), in.a.data(), na * sizeof(double));
      std::memcpy(b.data(), in.b.data(), nb * sizeof(double));
      call(p, a.data(), b.data(), r.data(), r.stream());
      out = r.to_vector();
      break;
    }
    case placement::device:
    case placement::device_stream: {
      const std::size_t bytes = (na + nb + no) * sizeof(double);
      auto* base = static_cast<double*>(cuda::malloc_on(dev, bytes));
      double *a = base, *b = base + na, *r = base + na + nb;
      try {
        cuda::copy(a, in.a.data(), na * sizeof(double));
        cuda::copy(b, in.b.data(), nb * sizeof(double));
        const marg::stream_view s =
            w == placement::device_stream
                ? marg::stream_view{streams.s[static_cast<std::size_t>(dev)]}
                : marg::stream_view{};
        call(p, a, b, r, s);
        marg::synchronize(s);
        cuda::copy(out.data(), r, no * sizeof(double));
      } catch (...) {
        cuda::free_device(base);
        throw;
      }
      cuda::free_device(base);
      break;
    }
  }
  // libmarg runs a stream's call on the stream's device and restores the caller's
  if (marg::current_device() != current || cuda::current() != current)
    throw std::runtime_error("the current device changed from " + std::to_string(current) + " to " +
                             std::to_string(cuda::current()) + " during the call");
  return out;
}

/// Worst relative error of a result against the long double reference.
real worst_error(const device_problem& p, const inputs& in, const std::vector<double>& got) {
  real worst = 0;
  const auto lo = static_cast<std::size_t>(len_out(p));
  for (int r = 0; r < p.batch; ++r) {
    const std::vector<double> row(got.begin() + static_cast<std::ptrdiff_t>(r * lo),
                                  got.begin() + static_cast<std::ptrdiff_t>((r + 1) * lo));
    const error_report rep =
        compare(row, in.want[static_cast<std::size_t>(r)], tolerance<double>());
    if (rep.failures != 0) return std::numeric_limits<real>::infinity();
    worst = std::max(worst, rep.worst);
  }
  return worst;
}

bool bitwise_equal(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

double seconds_from_env() {
  if (const char* v = std::getenv("MARG_TEST_DEVICE_SECONDS"); v != nullptr && *v != '\0') {
    const double s = std::atof(v);
    if (s > 0) return s;
  }
  return 30.0;
}

/// The problems' inputs, made once per process from one seed.
struct problem_set {
  std::uint64_t seed;
  std::vector<inputs> in;
  problem_set() : seed(test_seed()) {
    rng g(seed);
    for (const device_problem& p : problems) in.push_back(make_inputs(g, p));
  }
};

const problem_set& the_problems() {
  static const problem_set s;
  return s;
}

/// Baselines: every (device, device_problem, placement) run alone, checked against
/// the reference.
using baseline_key = std::tuple<int, int, int>;
std::map<baseline_key, std::vector<double>> baselines(int devices) {
  const problem_set& ps = the_problems();
  std::map<baseline_key, std::vector<double>> r;
  thread_streams streams;
  for (int d = 0; d < devices; ++d)
    for (int i = 0; i < n_problems; ++i)
      for (int w = 0; w < n_placements; ++w) {
        if (placements[w] == placement::device_stream && devices < 2) continue;
        std::vector<double> got =
            run_on(d, problems[i], ps.in[static_cast<std::size_t>(i)], placements[w], streams);
        INFO("device " << d << " device_problem " << i << " placement " << name_of(placements[w])
                       << " seed " << ps.seed);
        REQUIRE(worst_error(problems[i], ps.in[static_cast<std::size_t>(i)], got) <=
                tolerance<double>());
        r[{d, i, w}] = std::move(got);
      }
  return r;
}

}  // namespace

// ---------------------------------------------------------------- no device

TEST_CASE("devices: without a GPU no device and the host fallback unchanged", "[devices]") {
  if (marg::device_count() != 0) {
    // the GPU side of the same API is covered by the cases below
    REQUIRE(marg::current_device() >= 0);
    REQUIRE(marg::current_device() < marg::device_count());
    return;
  }
  CHECK(marg::current_device() == -1);
  CHECK_THROWS_AS(marg::set_device(0), marg::invalid_argument);
  CHECK_THROWS_AS(marg::set_device(-1), marg::invalid_argument);
  int d = 7;
  CHECK(marg_get_device(&d) == MARG_SUCCESS);
  CHECK(d == -1);
  CHECK(marg_set_device(0) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK(marg_get_device(nullptr) == MARG_ERROR_INVALID_ARGUMENT);
  // one host pool, named by 0 or -1 (the current device)
  marg::array<double> a(1000);
  CHECK(a.device() == -1);
  const marg::pool_statistics s0 = marg::pool_stats(0), sc = marg::pool_stats();
  CHECK(s0.bytes_in_use == sc.bytes_in_use);
  CHECK(s0.bytes_in_use >= 1000 * sizeof(double));
  CHECK(s0.limit == marg::pool_limit());
  CHECK_THROWS_AS(marg::pool_stats(1), marg::invalid_argument);
  CHECK_THROWS_AS(marg::set_pool_limit(1 << 20, 1), marg::invalid_argument);
  std::size_t in_use = 0;
  CHECK(marg_device_pool_stats(-1, &in_use, nullptr, nullptr) == MARG_SUCCESS);
  CHECK(in_use == s0.bytes_in_use);
  CHECK(marg_device_pool_stats(3, &in_use, nullptr, nullptr) == MARG_ERROR_INVALID_ARGUMENT);
  // pmfs: no device, and operations between them work as before
  const marg::pmf<double> x = marg::binomial(40, 0.3), y = marg::uniform_int(-3, 5);
  CHECK(x.device() == -1);
  const marg::pmf<double> z = x + y;
  CHECK(z.device() == -1);
  const rvec want = ref_convolve(widen(x.probs()), widen(y.probs()));
  const error_report rep = compare(z.probs(), want, tolerance<double>());
  CHECK(rep.failures == 0);
  CHECK(z.lower() == -3);
  const marg::pmf_batch<double> xb({x, x});
  CHECK(xb.device() == -1);
}

// ---------------------------------------------------------------- one device or more

TEST_CASE("devices: the API follows CUDA's current device", "[devices][gpu]") {
  MARG_SKIP_WITHOUT_DEVICES(1)
  const gpu_case guard;
  const int n = marg::device_count();
  for (int d = 0; d < n; ++d) {
    marg::set_device(d);
    CHECK(cuda::current() == d);
    CHECK(marg::current_device() == d);
    cuda::set_current(d);  // CUDA's own call: libmarg follows it
    CHECK(marg::current_device() == d);
    int c = -1;
    CHECK(marg_set_device(d) == MARG_SUCCESS);
    CHECK(marg_get_device(&c) == MARG_SUCCESS);
    CHECK(c == d);
  }
  CHECK_THROWS_AS(marg::set_device(n), marg::invalid_argument);
  CHECK_THROWS_AS(marg::set_device(-1), marg::invalid_argument);
  CHECK(marg_set_device(n) == MARG_ERROR_INVALID_ARGUMENT);
  CHECK_THROWS_AS(marg::pool_stats(n), marg::invalid_argument);
}

TEST_CASE("devices: each device alone", "[devices][gpu]") {
  MARG_SKIP_WITHOUT_DEVICES(1)
  const gpu_case guard;
  const int n = marg::device_count();
  const auto base = baselines(n);  // checks every result against the reference
  std::printf(
      "devices-result: each device alone: %d device(s), %zu calls checked against long double\n", n,
      base.size());
  // the same call made again on the same device gives the same bits
  thread_streams streams;
  const problem_set& ps = the_problems();
  for (int d = 0; d < n; ++d)
    for (int i = 0; i < n_problems; ++i) {
      const std::vector<double> again =
          run_on(d, problems[i], ps.in[static_cast<std::size_t>(i)], placement::pool, streams);
      INFO("device " << d << " device_problem " << i);
      CHECK(bitwise_equal(again, base.at({d, i, 1})));
    }
  // pools, arrays and pmfs belong to the device current where they are made
  for (int d = 0; d < n; ++d) {
    marg::set_device(d);
    const std::size_t before = marg::pool_stats(d).bytes_in_use;
    marg::array<double> a(1 << 20);
    CHECK(a.device() == d);
    CHECK(marg::pool_stats(d).bytes_in_use >= before + (std::size_t{1} << 20) * sizeof(double));
    CHECK(marg::pool_stats().bytes_in_use == marg::pool_stats(d).bytes_in_use);
    const marg::pmf<double> x = marg::binomial(300, 0.4), y = marg::poisson(20.0, 1e-12);
    CHECK(x.device() == d);
    const marg::pmf<double> z = x + y;
    CHECK(z.device() == d);
    const error_report rep =
        compare(z.probs(), ref_convolve(widen(x.probs()), widen(y.probs())), tolerance<double>());
    CHECK(rep.failures == 0);
  }
}

// ---------------------------------------------------------------- two devices or more

TEST_CASE("devices: 8 threads over the devices concurrently bitwise equal to single runs",
          "[devices][gpu][multi]") {
  MARG_SKIP_WITHOUT_DEVICES(2)
  const gpu_case guard;
  const int n = marg::device_count();
  const auto base = baselines(n);
  const double seconds = seconds_from_env();
  constexpr int n_threads = 8;
  std::atomic<long> calls{0}, wrong{0}, errors{0};
  std::mutex first_mutex;
  std::string first;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < n_threads; ++t)
    threads.emplace_back([&, t] {
      const problem_set& ps = the_problems();
      thread_streams streams;
      const int dev = t % n;  // one device per thread, the threads spread over all devices
      for (long k = 0;; ++k) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds)
          break;
        const int i = static_cast<int>((k + t) % n_problems);
        const int w = static_cast<int>((k / n_problems + t) % n_placements);
        std::string what;
        try {
          const std::vector<double> got =
              run_on(dev, problems[i], ps.in[static_cast<std::size_t>(i)], placements[w], streams);
          if (!bitwise_equal(got, base.at({dev, i, w}))) {
            ++wrong;
            what = "differs from the single-device run";
          }
        } catch (const std::exception& e) {
          ++errors;
          what = std::string("threw: ") + e.what();
        }
        ++calls;
        if (!what.empty()) {
          const std::lock_guard lock(first_mutex);
          if (first.empty())
            first = "thread " + std::to_string(t) + " device " + std::to_string(dev) +
                    " device_problem " + std::to_string(i) + " placement " +
                    name_of(placements[w]) + " call " + std::to_string(k) + ": " + what;
        }
      }
    });
  for (auto& th : threads) th.join();
  std::printf(
      "devices-result: %d threads over %d devices for %.0f s: %ld calls, %ld wrong results, %ld "
      "errors\n",
      n_threads, n, seconds, calls.load(), wrong.load(), errors.load());
  INFO("first failure: " << first << " (seed " << the_problems().seed << ")");
  CHECK(calls.load() >= n_threads);
  CHECK(wrong.load() == 0);
  CHECK(errors.load() == 0);
  // the process is healthy after the run: a fresh call on every device is right
  thread_streams streams;
  for (int d = 0; d < n; ++d) {
    const std::vector<double> got =
        run_on(d, problems[0], the_problems().in[0], placement::host, streams);
    CHECK(bitwise_equal(got, base.at({d, 0, 0})));
  }
}

TEST_CASE("devices: one thread switching devices between calls", "[devices][gpu][multi]") {
  MARG_SKIP_WITHOUT_DEVICES(2)
  const gpu_case guard;
  const int n = marg::device_count();
  const auto base = baselines(n);
  const problem_set& ps = the_problems();
  thread_streams streams;
  long calls = 0, wrong = 0;
  for (int round = 0; round < 4; ++round)
    for (int i = 0; i < n_problems; ++i)
      for (int w = 0; w < n_placements; ++w)
        for (int d = 0; d < n; ++d) {  // a different device on every call
          const std::vector<double> got =
              run_on(d, problems[i], ps.in[static_cast<std::size_t>(i)], placements[w], streams);
          ++calls;
          if (!bitwise_equal(got, base.at({d, i, w}))) ++wrong;
        }
  // CUDA's own cudaSetDevice between calls, as an engine that uses CUDA directly does
  for (int k = 0; k < 20; ++k) {
    const int d = k % n;
    cuda::set_current(d);
    std::vector<double> out(static_cast<std::size_t>(len_out(problems[0])));
    call(problems[0], ps.in[0].a.data(), ps.in[0].b.data(), out.data(), {});
    ++calls;
    if (!bitwise_equal(out, base.at({d, 0, 0}))) ++wrong;
    CHECK(cuda::current() == d);
  }
  std::printf(
      "devices-result: one thread switching over %d devices: %ld calls, %ld wrong results\n", n,
      calls, wrong);
  CHECK(wrong == 0);
}

TEST_CASE("devices: operands on different devices are rejected", "[devices][gpu][multi]") {
  MARG_SKIP_WITHOUT_DEVICES(2)
  const gpu_case guard;
  const device_problem p{op::convolve, 300, 200, 1};
  const std::size_t m = 300, n = 200, r = m + n - 1;
  std::vector<double> hp(m, 0.5), hq(n, 0.25);
  double* p0 = static_cast<double*>(cuda::malloc_on(0, m * sizeof(double)));
  double* q1 = static_cast<double*>(cuda::malloc_on(1, n * sizeof(double)));
  double* q0 = static_cast<double*>(cuda::malloc_on(0, n * sizeof(double)));
  double* r0 = static_cast<double*>(cuda::malloc_on(0, r * sizeof(double)));
  double* r1 = static_cast<double*>(cuda::malloc_on(1, r * sizeof(double)));
  cuda::copy(p0, hp.data(), m * sizeof(double));
  cuda::copy(q0, hq.data(), n * sizeof(double));
  cuda::copy(q1, hq.data(), n * sizeof(double));
  thread_streams streams;
  const auto expect_rejected = [&](const double* a, const double* b, double* out,
                                   marg::stream_view s, const char* operand, int operand_device,
                                   int call_device) {
    try {
      call(p, a, b, out, s);
      FAIL("no exception for " << operand << " on device " << operand_device);
    } catch (const marg::invalid_argument& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find(std::string(operand) + " is device memory of CUDA device " +
                     std::to_string(operand_device)) != std::string::npos);
      CHECK(msg.find("runs on device " + std::to_string(call_device)) != std::string::npos);
    }
  };
  marg::set_device(0);
  expect_rejected(p0, q1, r0, {}, "q", 1, 0);  // inputs on two devices
  expect_rejected(p0, q0, r1, {}, "r", 1, 0);  // output elsewhere
  // a stream of device 1 runs the call on device 1: device-0 operands are foreign there
  expect_rejected(p0, q0, r0, marg::stream_view{streams.s[1]}, "p", 0, 1);
  CHECK(marg::current_device() == 0);
  marg::set_device(1);
  expect_rejected(p0, q1, r1, {}, "p", 0, 1);
  // nothing was poisoned: a correct call on each device still gives the right answer
  const rvec want = ref_convolve(widen(hp), widen(hq));
  for (int d = 0; d < 2; ++d) {
    marg::set_device(d);
    double* pd = d == 0 ? p0 : static_cast<double*>(cuda::malloc_on(1, m * sizeof(double)));
    if (d == 1) cuda::copy(pd, hp.data(), m * sizeof(double));
    double* qd = d == 0 ? q0 : q1;
    double* rd = d == 0 ? r0 : r1;
    call(p, pd, qd, rd, {});
    marg::synchronize();
    std::vector<double> got(r);
    cuda::copy(got.data(), rd, r * sizeof(double));
    CHECK(compare(got, want, tolerance<double>()).failures == 0);
    if (d == 1) cuda::free_device(pd);
  }
  for (double* x : {p0, q1, q0, r0, r1}) cuda::free_device(x);

  // pmfs and batches remember their device; operations between devices fail
  marg::set_device(0);
  const marg::pmf<double> x0 = marg::binomial(50, 0.5);
  const marg::pmf_batch<double> b0({x0, x0});
  marg::set_device(1);
  const marg::pmf<double> y1 = marg::binomial(30, 0.2);
  const marg::pmf_batch<double> b1({y1, y1});
  CHECK(x0.device() == 0);
  CHECK(y1.device() == 1);
  CHECK(b0.device() == 0);
  CHECK(b1.device() == 1);
  const auto names_devices = [](const std::string& msg) {
    return msg.find("device 0") != std::string::npos && msg.find("device 1") != std::string::npos;
  };
  try {
    (void)(x0 + y1);
    FAIL("x0 + y1 did not throw");
  } catch (const marg::invalid_argument& e) {
    INFO(e.what());
    CHECK(names_devices(e.what()));
  }
  CHECK_THROWS_AS(marg::condition_on_sum(x0, y1, 40), marg::invalid_argument);
  CHECK_THROWS_AS(marg::log_prob_sum(x0, y1, 40), marg::invalid_argument);
  CHECK_THROWS_AS(marg::sum(std::vector<marg::pmf<double>>{x0, x0, y1}), marg::invalid_argument);
  CHECK_THROWS_AS(b0 + b1, marg::invalid_argument);
  CHECK_THROWS_AS(b0 + y1, marg::invalid_argument);
  // an operation between pmfs of one device runs there, whatever is current
  const marg::pmf<double> z0 = x0 + x0;
  CHECK(z0.device() == 0);
  CHECK(marg::current_device() == 1);
  CHECK(compare(z0.probs(), ref_convolve(widen(x0.probs()), widen(x0.probs())), tolerance<double>())
            .failures == 0);
}

TEST_CASE("devices: one pool per device with its own cap and counters", "[devices][gpu][multi]") {
  MARG_SKIP_WITHOUT_DEVICES(2)
  const gpu_case guard;
  const std::size_t limit0 = marg::pool_limit(0), limit1 = marg::pool_limit(1);
  struct restore {
    std::size_t l0, l1;
    ~restore() {
      try {
        marg::set_pool_limit(l0, 0);
        marg::set_pool_limit(l1, 1);
      } catch (...) {
      }
    }
  } const restore_limits{limit0, limit1};
  marg::set_device(0);
  const marg::pool_statistics before0 = marg::pool_stats(0), before1 = marg::pool_stats(1);
  {
    marg::set_device(1);
    marg::array<float> a(std::size_t{16} << 20);  // 64 MiB from device 1's pool
    CHECK(a.device() == 1);
    CHECK(marg::pool_stats(1).bytes_in_use >= before1.bytes_in_use + (std::size_t{64} << 20));
    CHECK(marg::pool_stats(0).bytes_in_use == before0.bytes_in_use);
  }
  // a cap on device 1 leaves device 0 alone
  marg::set_pool_limit(marg::pool_stats(1).bytes_reserved + (std::size_t{1} << 20), 1);
  CHECK(marg::pool_limit(1) != limit1);
  CHECK(marg::pool_limit(0) == limit0);
  marg::set_device(1);
  try {
    marg::array<double> big(std::size_t{1} << 30);  // 8 GiB: past device 1's cap
    FAIL("no out_of_memory past device 1's cap");
  } catch (const marg::out_of_memory& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("CUDA device 1") != std::string::npos);
  }
  marg::set_device(0);
  marg::array<double> fine(std::size_t{1} << 24);  // 128 MiB on device 0: its own cap
  CHECK(fine.device() == 0);
  std::size_t in_use = 0, limit = 0;
  CHECK(marg_device_pool_stats(1, &in_use, nullptr, &limit) == MARG_SUCCESS);
  CHECK(limit == marg::pool_limit(1));
  CHECK(marg_set_device_pool_limit(1, limit1) == MARG_SUCCESS);
  CHECK(marg::pool_limit(1) == limit1);
}
