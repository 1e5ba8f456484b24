// The CUDA backend's planner, choose(problem, device), on made-up devices:
// it runs on any machine (no GPU is touched), so CI checks it.
// - Every plan is one the device can run: the variants' hardware needs are
//   restated here from the kernels (sm_90 features: clusters for a tap
//   split, the lane kernels' TMA and mbarriers; sm_90a code for wgmma,
//   float, at most 65535 problems (its grid's y); sm_80: cp.async, TF32 mma
//   and FP64 m8n8k4 mma), not read from the planner.
// - The same inputs give the same plan, and a misaligned operand never gets
//   a variant that needs 16-byte alignment.
// - A snapshot of the plans for a fixed list of shapes and devices
//   (snapshot.txt) makes every change of a choice visible in review. After a
//   deliberate change, regenerate it: MARG_PLANNER_SNAPSHOT_WRITE=1
//   test_planner, then read the diff.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <marg/numeric/planner.hpp>

#include "../../numeric/src/cuda/plan.hpp"

namespace {

using marg::detail::banded_args;
using marg::detail::banded_op;
using marg::detail::cuda::device_features;
using marg::detail::cuda::kernel_plan;
using marg::detail::cuda::kernel_variant;

struct named_device {
  const char* name;
  device_features f;
};

// capability, Hopper features, sm_80 features, sm_90a code, SMs, opt-in
// shared memory per block, boost clock in MHz, memory bandwidth in GB/s (the
// vendors' data sheets and CUDA's occupancy tables; the H200's clock and
// bandwidth as the library reads them there)
const std::vector<named_device>& devices() {
  static const std::vector<named_device> d{
      {"H200", {90, true, true, true, 132, 232448, 1980, 4814}},
      {"H100-PCIe", {90, true, true, true, 114, 232448, 1755, 2039}},
      {"H200-generic", {90, false, true, false, 132, 232448, 1980, 4814}},
      {"A100", {80, false, true, false, 108, 166912, 1410, 2039}},
      {"L4", {89, false, true, false, 58, 101376, 2040, 300}},
      {"RTX4000-Ada", {89, false, true, false, 48, 101376, 2175, 360}},
      {"T4", {75, false, false, false, 40, 65536, 1590, 320}},
  };
  return d;
}

struct shape {
  int m, n, batch;
};

// a length 2^(k/4) for k drawn from [0, 4 bits) by the raw output of a
// fixed mt19937_64 (exact on every standard library, unlike its
// distributions)
int log_uniform(std::mt19937_64& g, int bits) {
  const auto k = static_cast<int>(g() % static_cast<std::uint64_t>(4 * bits));
  return static_cast<int>(std::lround(std::exp2(k / 4.0)));
}

// the headline rows, shapes near the rules' edges, then 60 random shapes
// over 1-131072 values and 1-16384 problems (a product of at most 2^31
// values a batch)
const std::vector<shape>& shapes() {
  static const std::vector<shape> s = [] {
    std::vector<shape> v{
        {1, 1, 1},          {2048, 2048, 1},   {65536, 65536, 1}, {8192, 8192, 1},
        {16384, 16384, 64}, {4096, 4096, 512}, {64, 64, 8192},    {256, 256, 4096},
        {512, 128, 1024},   {1000, 50, 1},     {100000, 32, 1},   {40000, 3000, 1},
        {300, 200, 600},    {700, 160, 2000},  {2048, 256, 128},  {131072, 512, 1},
        {32, 32, 100000},   {5000, 5000, 2},   {3, 70000, 1},     {1500, 1500, 16},
    };
    std::mt19937_64 g(37);
    while (v.size() < 80) {
      const shape r{log_uniform(g, 17), log_uniform(g, 17), log_uniform(g, 14)};
      if (static_cast<std::int64_t>(r.m + r.n) * r.batch <= (std::int64_t{1} << 31)) v.push_back(r);
    }
    return v;
  }();
  return s;
}

const char* op_name(banded_op op) {
  return op == banded_op::convolve ? "convolve" : op == banded_op::grad_p ? "grad_p" : "grad_q";
}

// operands at made-up addresses (never dereferenced: the planner reads
// only their alignment), contiguous problems, unit steps
template <class T>
banded_args<T> args_of(banded_op op, const shape& s, std::uintptr_t misalign = 0) {
  const auto len = marg::detail::lengths_of(op, s.m, s.n);
  const auto at = [misalign](std::uintptr_t base) { return reinterpret_cast<T*>(base + misalign); };
  return {op, s.m,     s.n,    at(0x10000000), 1, len.a, at(0x40000000), 1, len.b, at(0x80000000),
          1,  len.out, s.batch};
}

bool needs_hopper(kernel_variant v) {
  return v == kernel_variant::lane || v == kernel_variant::wgmma;
}

bool needs_ampere(kernel_variant v) {
  return v == kernel_variant::mma || v == kernel_variant::pairs || v == kernel_variant::wide;
}

bool splits(kernel_variant v) {
  return v == kernel_variant::small || v == kernel_variant::mid || v == kernel_variant::large ||
         v == kernel_variant::mma;
}

template <class T>
void check_runnable(const named_device& d, banded_op op, const shape& s, const kernel_plan& p) {
  constexpr bool is_float = sizeof(T) == 4;
  CAPTURE(d.name, op_name(op), is_float, s.m, s.n, s.batch,
          marg::detail::cuda::variant_name(p.variant), p.split);
  CHECK((!needs_hopper(p.variant) || d.f.hopper));
  CHECK((!needs_ampere(p.variant) || d.f.ampere));
  CHECK((p.variant != kernel_variant::wgmma || (is_float && d.f.wgmma && s.batch <= 65535)));
  CHECK(p.split >= 1);
  // a cluster holds 8 blocks; a split through scratch 16
  CHECK(p.split <= (d.f.hopper ? 8 : 16));
  CHECK((p.split == 1 || splits(p.variant)));
}

template <class T>
std::string snapshot_lines() {
  std::ostringstream o;
  for (const named_device& d : devices())
    for (const banded_op op : {banded_op::convolve, banded_op::grad_p, banded_op::grad_q})
      for (const shape& s : shapes()) {
        const kernel_plan p = marg::detail::cuda::choose(args_of<T>(op, s), d.f);
        o << d.name << ' ' << (sizeof(T) == 4 ? "float" : "double") << ' ' << op_name(op) << ' '
          << s.m << ' ' << s.n << ' ' << s.batch << " -> "
          << marg::detail::cuda::variant_name(p.variant) << ' ' << p.split << '\n';
      }
  return o.str();
}

}  // namespace

TEMPLATE_TEST_CASE("planner: every plan runs on its device", "[planner]", float, double) {
  for (const named_device& d : devices())
    for (const banded_op op : {banded_op::convolve, banded_op::grad_p, banded_op::grad_q})
      for (const shape& s : shapes()) {
        const kernel_plan p = marg::detail::cuda::choose(args_of<TestType>(op, s), d.f);
        check_runnable<TestType>(d, op, s, p);
        // deterministic: the same inputs, the same plan
        const kernel_plan again = marg::detail::cuda::choose(args_of<TestType>(op, s), d.f);
        CHECK(again.variant == p.variant);
        CHECK(again.split == p.split);
        // operands off 16-byte boundaries: never the wide tile, which loads
        // 16-byte vectors
        const kernel_plan odd =
            marg::detail::cuda::choose(args_of<TestType>(op, s, sizeof(TestType)), d.f);
        check_runnable<TestType>(d, op, s, odd);
        CHECK(odd.variant != kernel_variant::wide);
      }
}

TEMPLATE_TEST_CASE("planner: the registry's supports keep every variant on its hardware",
                   "[planner]", float, double) {
  constexpr bool is_float = sizeof(TestType) == 4;
  for (const named_device& d : devices())
    for (const banded_op op : {banded_op::convolve, banded_op::grad_p, banded_op::grad_q})
      for (const shape& s : shapes())
        for (const kernel_variant v : marg::detail::cuda::all_variants) {
          CAPTURE(d.name, op_name(op), s.m, s.n, s.batch, marg::detail::cuda::variant_name(v));
          const bool ok = marg::detail::cuda::supports(v, args_of<TestType>(op, s), d.f);
          if (!ok) {
            // the tiles and the warp take every problem on every device
            CHECK_FALSE((v == kernel_variant::warp || v == kernel_variant::small ||
                         v == kernel_variant::mid || v == kernel_variant::large));
            continue;
          }
          CHECK((!needs_hopper(v) || d.f.hopper));
          CHECK((!needs_ampere(v) || d.f.ampere));
          CHECK((v != kernel_variant::wgmma || (is_float && d.f.wgmma && s.batch <= 65535)));
          // the wide tile: one problem, 16-byte aligned operands
          if (v == kernel_variant::wide) {
            CHECK(s.batch == 1);
            CHECK_FALSE(
                marg::detail::cuda::supports(v, args_of<TestType>(op, s, sizeof(TestType)), d.f));
          }
        }
}

TEMPLATE_TEST_CASE("planner: devices without the Hopper features run the generic path", "[planner]",
                   float, double) {
  // the headline single problem: wgmma on a Hopper device with sm_90a code
  // (float), never elsewhere
  const shape big{65536, 65536, 1};
  for (const named_device& d : devices()) {
    CAPTURE(d.name);
    const kernel_plan p =
        marg::detail::cuda::choose(args_of<TestType>(banded_op::convolve, big), d.f);
    if (!d.f.hopper) {
      // its few tiles leave most of any GPU idle unless their taps split
      // over blocks, which sum through scratch without clusters
      CHECK(p.split > 1);
      CHECK(p.split <= 16);
      CHECK(p.variant != kernel_variant::lane);
      CHECK(p.variant != kernel_variant::wgmma);
    }
    if (std::is_same_v<TestType, float> && d.f.wgmma) CHECK(p.variant == kernel_variant::wgmma);
    // tensor cores from sm_80 on, in either type (double in m8n8k4 steps
    // where sm_90's shapes are not used), none on Turing
    CHECK(marg::detail::cuda::supports(kernel_variant::mma,
                                       args_of<TestType>(banded_op::convolve, big),
                                       d.f) == (d.f.capability >= 80));
  }
}

TEMPLATE_TEST_CASE("planner: the cost model decides off the rules' device class", "[planner]",
                   float, double) {
  using marg::detail::cuda::modelled_time;
  for (const named_device& d : devices()) {
    const bool rules = std::string(d.name) == "H200" || std::string(d.name) == "H100-PCIe";
    CHECK(marg::detail::cuda::rules_fitted_to(d.f) == rules);
    // the same device with half the multiprocessors
    device_features half = d.f;
    half.multiprocessors /= 2;
    for (const banded_op op : {banded_op::convolve, banded_op::grad_p, banded_op::grad_q})
      for (const shape& s : shapes()) {
        const auto x = args_of<TestType>(op, s);
        const shape twice{s.m, s.n, 2 * s.batch};
        double fastest = -1;
        kernel_variant fastest_v = kernel_variant::small;
        for (const kernel_variant v : marg::detail::cuda::all_variants) {
          if (!marg::detail::cuda::supports(v, x, d.f)) continue;
          CAPTURE(d.name, op_name(op), s.m, s.n, s.batch, marg::detail::cuda::variant_name(v));
          const double t = modelled_time(v, x, d.f);
          // the fit covers every variant a device without the rules runs,
          // and wgmma only where the device has sm_90a code
          if (v != kernel_variant::wgmma || sizeof(TestType) == 4) CHECK(t > 0);
          if (t <= 0) continue;
          CHECK(std::isfinite(t));
          if (fastest < 0 || t < fastest) fastest = t, fastest_v = v;
          // more problems, or fewer multiprocessors, never model faster
          if (marg::detail::cuda::supports(v, args_of<TestType>(op, twice), d.f))
            CHECK(modelled_time(v, args_of<TestType>(op, twice), d.f) >= t);
          if (marg::detail::cuda::supports(v, x, half)) CHECK(modelled_time(v, x, half) >= t);
        }
        // off the rules' class the plan is the variant modelled fastest
        const kernel_plan p = marg::detail::cuda::choose(x, d.f);
        if (!rules) CHECK(p.variant == fastest_v);
      }
  }
}

TEST_CASE("planner: wisdom overrides the rules where the device supports its variant",
          "[planner]") {
  marg::forget_wisdom();
  const named_device& h200 = devices()[0];
  const named_device& t4 = devices().back();
  REQUIRE(std::string(h200.name) == "H200");
  REQUIRE(std::string(t4.name) == "T4");
  const shape big{65536, 65536, 1}, mid{3000, 2500, 1};
  const auto plan = [](const shape& s, const named_device& d) {
    return marg::detail::cuda::choose_with_wisdom(args_of<float>(banded_op::convolve, s), d.f);
  };
  const kernel_plan rules_big =
      marg::detail::cuda::choose(args_of<float>(banded_op::convolve, big), h200.f);
  const kernel_plan rules_t4 =
      marg::detail::cuda::choose(args_of<float>(banded_op::convolve, mid), t4.f);
  REQUIRE(rules_big.variant == kernel_variant::wgmma);
  CHECK(plan(big, h200).variant == kernel_variant::wgmma);
  // float convolutions of 65536 taps (bit width 17) and 131071 outputs (17)
  // on the H200's class; lane for the T4's class of 2500 taps (12) and 5499
  // outputs (13), which the T4 cannot run
  marg::import_wisdom_text(
      "# libmarg wisdom 1\n"
      "90 132 hopper float convolution 17 17 1 aligned mma 150\n"
      "75 40 generic float convolution 12 13 1 aligned lane 1\n");
  const kernel_plan wise_big = plan(big, h200);
  CHECK(wise_big.variant == kernel_variant::mma);
  CHECK(wise_big.split >= 1);
  CHECK(wise_big.split <= 8);
  // another device class, another type or misaligned operands: the rules
  CHECK(marg::detail::cuda::choose_with_wisdom(args_of<float>(banded_op::convolve, big),
                                               devices()[1].f)
            .variant == kernel_variant::wgmma);
  CHECK(marg::detail::cuda::choose_with_wisdom(args_of<double>(banded_op::convolve, big), h200.f)
            .variant ==
        marg::detail::cuda::choose(args_of<double>(banded_op::convolve, big), h200.f).variant);
  CHECK(marg::detail::cuda::choose_with_wisdom(args_of<float>(banded_op::convolve, big, 4), h200.f)
            .variant ==
        marg::detail::cuda::choose(args_of<float>(banded_op::convolve, big, 4), h200.f).variant);
  // a variant the device lacks: the rules
  const kernel_plan t4_plan = plan(mid, t4);
  CHECK(t4_plan.variant == rules_t4.variant);
  CHECK(t4_plan.split == rules_t4.split);
  marg::forget_wisdom();
  CHECK(plan(big, h200).variant == kernel_variant::wgmma);
}

TEMPLATE_TEST_CASE("planner: a shape met again gets its plan", "[planner]", float, double) {
  // choose() remembers the plans of the last shapes per thread; off the
  // rules' class it is the model's plan, which choose_from makes anew. Two
  // passes over every shape and device, and each shape twice in a row,
  // reuse and evict the remembered plans
  for (int pass = 0; pass < 2; ++pass)
    for (const banded_op op : {banded_op::convolve, banded_op::grad_p, banded_op::grad_q})
      for (const shape& s : shapes())
        for (const named_device& d : devices()) {
          if (marg::detail::cuda::rules_fitted_to(d.f)) continue;
          CAPTURE(pass, d.name, op_name(op), s.m, s.n, s.batch);
          const auto x = args_of<TestType>(op, s);
          const kernel_plan anew =
              marg::detail::cuda::choose_from(marg::detail::cuda::plan_source::model, x, d.f);
          for (int again = 0; again < 2; ++again) {
            const kernel_plan p = marg::detail::cuda::choose(x, d.f);
            CHECK(p.variant == anew.variant);
            CHECK(p.split == anew.split);
          }
        }
}

TEST_CASE("planner: the snapshot of plans", "[planner]") {
  const std::string now = snapshot_lines<float>() + snapshot_lines<double>();
  const char* write = std::getenv("MARG_PLANNER_SNAPSHOT_WRITE");
  if (write != nullptr && std::string(write) == "1") {
    std::ofstream(MARG_PLANNER_SNAPSHOT) << now;
    WARN("wrote " MARG_PLANNER_SNAPSHOT);
    return;
  }
  std::ifstream in(MARG_PLANNER_SNAPSHOT);
  REQUIRE(in.good());
  std::stringstream want;
  want << in.rdbuf();
  // line by line, so that a failure names the shapes whose plan changed
  std::istringstream a(want.str()), b(now);
  std::string wl, nl;
  int changed = 0, line = 0;
  while (true) {
    const bool more_w = static_cast<bool>(std::getline(a, wl));
    const bool more_n = static_cast<bool>(std::getline(b, nl));
    if (!more_w && !more_n) break;
    ++line;
    if (wl != nl && changed++ < 20) {
      CAPTURE(line, wl, nl);
      CHECK(wl == nl);
    }
    if (!more_w) wl.clear();
    if (!more_n) nl.clear();
  }
  CHECK(changed == 0);
}
