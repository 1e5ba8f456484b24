// capture_calls / call_graph: replays compute the recorded products on the
// inputs' current values (against long double loops), nothing runs at
// capture, and errors leave the stream usable.
#include <marg/numeric/graph.hpp>
#include <marg/numeric/stream.hpp>

#include "numeric_fixture.hpp"

namespace {

using namespace marg::test;

// pool operands of one recorded sequence: a convolution, a grad_p and a
// batched convolution of small problems
template <class T>
struct graph_case {
  int m, n, batch, bm, bn;
  marg::array<T> p, q, g, r, gp, bp, bq, br;

  graph_case(int m_, int n_, int batch_, int bm_, int bn_)
      : m(m_),
        n(n_),
        batch(batch_),
        bm(bm_),
        bn(bn_),
        p(m_),
        q(n_),
        g(m_ + n_ - 1),
        r(m_ + n_ - 1),
        gp(m_),
        bp(static_cast<std::size_t>(batch_) * bm_),
        bq(static_cast<std::size_t>(batch_) * bn_),
        br(static_cast<std::size_t>(batch_) * (bm_ + bn_ - 1)) {}

  void record(marg::stream_view s) {
    marg::convolve<T>(m, n, p.data(), 1, q.data(), 1, r.data(), 1, s);
    marg::convolve_grad_p<T>(m, n, g.data(), 1, q.data(), 1, gp.data(), 1, s);
    marg::convolve_batched<T>(bm, bn, bp.data(), 1, bm, bq.data(), 1, bn, br.data(), 1, bm + bn - 1,
                              batch, s);
  }

  void poison_outputs() {
    for (marg::array<T>* a : {&r, &gp, &br}) std::fill(a->begin(), a->end(), strided<T>::poison());
  }

  static void fill(marg::array<T>& a, rng& rg) {
    const std::vector<T> v =
        random_positive<T>(rg, static_cast<std::int64_t>(a.size()), shape::uniform);
    std::copy(v.begin(), v.end(), a.begin());
  }
  void new_inputs(rng& rg) {
    for (marg::array<T>* a : {&p, &q, &g, &bp, &bq}) fill(*a, rg);
  }

  static std::vector<T> slice(const marg::array<T>& a, std::size_t from, std::size_t len) {
    return std::vector<T>(a.begin() + static_cast<std::ptrdiff_t>(from),
                          a.begin() + static_cast<std::ptrdiff_t>(from + len));
  }

  // failures of every output against the long double references
  std::int64_t failures() const {
    const double tol = tolerance<T>();
    std::int64_t f =
        compare(slice(r, 0, r.size()),
                ref_convolve(widen(slice(p, 0, p.size())), widen(slice(q, 0, q.size()))), tol)
            .failures;
    f += compare(slice(gp, 0, gp.size()),
                 ref_correlate(widen(slice(g, 0, g.size())), widen(slice(q, 0, q.size())),
                               static_cast<std::size_t>(m)),
                 tol)
             .failures;
    const std::size_t lo = static_cast<std::size_t>(bm + bn - 1);
    for (int b = 0; b < batch; ++b)
      f += compare(slice(br, b * lo, lo),
                   ref_convolve(widen(slice(bp, static_cast<std::size_t>(b) * bm, bm)),
                                widen(slice(bq, static_cast<std::size_t>(b) * bn, bn))),
                   tol)
               .failures;
    return f;
  }

  bool outputs_untouched() const {
    for (const marg::array<T>* a : {&r, &gp, &br})
      for (const T v : *a)
        if (!std::isnan(v)) return false;
    return true;
  }
};

}  // namespace

TEMPLATE_TEST_CASE("graph: replays compute the recorded calls on the current inputs",
                   "[numeric][graph]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  // sizes that reach different kernels on the GPU: a large convolution, a
  // small one, and a batch of small problems
  const int m = GENERATE(3, 2048, 7001);
  const int n = m == 3 ? 5 : static_cast<int>(uniform_int(g, 1, 3000));
  const int batch = static_cast<int>(uniform_int(g, 1, 300));
  const int bm = static_cast<int>(uniform_int(g, 1, 80)),
            bn = static_cast<int>(uniform_int(g, 1, 80));
  CAPTURE(m, n, batch, bm, bn);
  graph_case<T> c(m, n, batch, bm, bn);
  c.new_inputs(g);
  c.poison_outputs();
  const marg::stream_view s{};
  marg::call_graph calls = marg::capture_calls(s, [&] { c.record(s); });
  REQUIRE_FALSE(calls.empty());
  CHECK(calls.on_device() == (TestType::b == marg::backend::cuda));
  marg::synchronize(s);
  CHECK(c.outputs_untouched());  // recorded, not run
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    c.new_inputs(g);  // host writes between replays (array access waits first)
    calls.replay(s);
    CHECK(c.failures() == 0);
  }
  // a moved call_graph replays; the moved-from one is empty
  marg::call_graph moved = std::move(calls);
  CHECK(calls.empty());
  c.new_inputs(g);
  moved.replay();
  CHECK(c.failures() == 0);
}

TEMPLATE_TEST_CASE("graph: errors", "[numeric][graph]", MARG_ALL_CONFIGS) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const bool gpu = TestType::b == marg::backend::cuda;
  marg::call_graph none;
  CHECK_THROWS_AS(none.replay(), marg::invalid_argument);
  CHECK_THROWS_AS(marg::capture_calls({}, std::function<void()>{}), marg::invalid_argument);

  const int m = 40, n = 17;
  graph_case<T> c(m, n, 3, 5, 4);
  c.new_inputs(g);
  // an argument error of a recorded call: at capture on the GPU (the capture
  // is abandoned), at replay on the CPU (the calls run only then)
  auto bad = [&] {
    marg::convolve<T>(0, n, c.p.data(), 1, c.q.data(), 1, c.r.data(), 1, marg::stream_view{});
  };
  if (gpu) {
    CHECK_THROWS_AS(marg::capture_calls({}, bad), marg::invalid_argument);
  } else {
    const marg::call_graph later = marg::capture_calls({}, bad);
    CHECK_THROWS_AS(later.replay(), marg::invalid_argument);
  }
  if (gpu) {
    // a host operand needs a copy back and a wait: refused during capture
    std::vector<T> host_out(static_cast<std::size_t>(m + n - 1));
    CHECK_THROWS_WITH(
        marg::capture_calls(
            {},
            [&] { marg::convolve<T>(m, n, c.p.data(), 1, c.q.data(), 1, host_out.data(), 1, {}); }),
        Catch::Contains("host-memory operand"));
    // captures do not nest
    CHECK_THROWS_AS(
        marg::capture_calls({}, [&] { (void)marg::capture_calls({}, [&] { c.record({}); }); }),
        marg::invalid_argument);
  }
  // after every failed capture the stream runs calls again
  c.poison_outputs();
  c.record({});
  CHECK(c.failures() == 0);
  const marg::call_graph ok = marg::capture_calls({}, [&] { c.record({}); });
  c.new_inputs(g);
  ok.replay();
  CHECK(c.failures() == 0);
}

TEST_CASE("graph: large float products on cuda (the tensor-core path) replay",
          "[numeric][graph][scale]") {
  if (marg::device_count() == 0) {
    WARN("MARG_SKIP_NO_GPU: no CUDA device");
    return;
  }
  const marg::backend before = marg::requested_backend();
  marg::set_backend(marg::backend::cuda);
  MARG_SEEDED_RNG(g);
  // 65536 outputs and >= 32768 taps: the sizes that Hopper's wgmma kernel
  // takes, whose workspace becomes the graph's allocation nodes; on other
  // GPUs the same calls take another kernel and must replay as well
  const int m = 32768, n = 32769, gm = 65536, gn = 32768;
  marg::array<float> p(m), q(n), r(m + n - 1), gg(gm + gn - 1), gq(gn), gp(gm);
  const marg::stream_view s{};
  const marg::call_graph step = marg::capture_calls(s, [&] {
    marg::convolve<float>(m, n, p.data(), 1, q.data(), 1, r.data(), 1, s);
    marg::convolve_grad_p<float>(gm, gn, gg.data(), 1, gq.data(), 1, gp.data(), 1, s);
  });
  CHECK(step.on_device());
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    for (marg::array<float>* a : {&p, &q, &gg, &gq}) graph_case<float>::fill(*a, g);
    step.replay(s);
    marg::synchronize(s);
    const rvec rp = widen(std::vector<float>(p.begin(), p.end())),
               rq = widen(std::vector<float>(q.begin(), q.end())),
               rg = widen(std::vector<float>(gg.begin(), gg.end())),
               rgq = widen(std::vector<float>(gq.begin(), gq.end()));
    // the tails (the band's triangles) and random elements, against long double
    error_report conv, grad;
    for (const std::int64_t i : sample_indices(g, static_cast<std::int64_t>(r.size()), 64, 400))
      conv.add(i, r[i], ref_convolve_at(rp, rq, i),
               relative_error(r[i], ref_convolve_at(rp, rq, i)), tolerance<float>());
    for (const std::int64_t j : sample_indices(g, gm, 64, 400))
      grad.add(j, gp[j], ref_correlate_at(rg, rgq, j),
               relative_error(gp[j], ref_correlate_at(rg, rgq, j)), tolerance<float>());
    INFO("convolve: " << conv.describe() << "; grad_p: " << grad.describe());
    CHECK(conv.failures == 0);
    CHECK(grad.failures == 0);
  }
  marg::set_backend(before);
}
