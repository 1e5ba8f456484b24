// marg_tune: measures the kernel variants over a grid of shape classes on
// the GPU it runs on and writes the winners as wisdom (numeric/planner.hpp),
// a tuning table for this device class: the header says the library
// version, the device, its driver and the command. Import it with
// marg::import_wisdom or MARG_WISDOM=file.
// `--check N` instead measures the planner on N random shapes (seeded): the
// plan's time against every variant the device supports, forced, and writes
// one row per shape and the geometric mean and worst of plan / best.
//
//   marg_tune --out h200.wisdom [--types float,double] [--max-work 16777216]
//   marg_tune --check 200 --seed 20261129 --out check.md [--wisdom h200.wisdom]
//             [--planner auto|rules|model]
//   marg_tune --dump 800 --seed 7 --out h200.csv
//   marg_tune --reterm h200.csv --out h200-new.csv
//   marg_tune --replay h200.csv --out replay.md
// `--dump N` times every variant the device supports on N random shapes and
// writes them with the cost model's terms, for scripts/fit-cost-model.
// `--reterm` and `--replay` read a dump without a GPU: the first rewrites its
// terms for a changed model, the second times the library's, the rules' and
// the model's plans of its shapes from the dump's own measurements.
#include <cuda_runtime.h>
#include <CLI/CLI.hpp>

#include <marg/marg.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cost_model.hpp"
#include "cuda/kernels/cluster.cuh"
#include "cuda/kernels/correlation.cuh"
#include "cuda/launch.hpp"
#include "cuda/plan.hpp"

namespace {

namespace cu = marg::detail::cuda;

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// the best time of one plan in µs: launches back to back, as many as fill
// about 1 ms after a warm-up, best of 3 such runs (events on the stream)
template <class T>
double time_plan(const cu::correlation_view<T>& c, cu::kernel_plan p, cudaStream_t stream) {
  cudaEvent_t start = nullptr, stop = nullptr;
  cuda_ok(cudaEventCreate(&start), "cudaEventCreate");
  cuda_ok(cudaEventCreate(&stop), "cudaEventCreate");
  const auto run = [&](int launches) {
    cuda_ok(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int i = 0; i < launches; ++i) cu::launch_variant(p.variant, c, p.split, stream);
    cuda_ok(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda_ok(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_ok(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return 1000.0 * ms / launches;
  };
  const double first = run(1);
  const int launches = static_cast<int>(std::clamp(1000.0 / std::max(first, 1.0), 1.0, 200.0));
  double best = run(launches);
  for (int r = 0; r < 2; ++r) best = std::min(best, run(launches));
  cuda_ok(cudaEventDestroy(start), "cudaEventDestroy");
  cuda_ok(cudaEventDestroy(stop), "cudaEventDestroy");
  return best;
}

/// one random shape of the check
struct shape {
  marg::detail::banded_op op;
  bool is_double;
  int m, n, batch;
  bool operator==(const shape&) const = default;
};

// m from 1 to 2^14 and n to 2^17, log-uniform, a batch of 1 half the time,
// else 2 to max_batch log-uniform, at most 2^30 multiply-adds and 2^26
// outputs; `big`: m to 2^17 too and 2^28 to 2^33 multiply-adds (the long
// problems the others rarely draw)
std::vector<shape> random_shapes(int count, std::uint64_t seed, int max_batch, bool big) {
  std::mt19937_64 rng(seed);
  const auto log_uniform = [&](double hi) {
    return static_cast<int>(std::exp(std::uniform_real_distribution<double>(0, std::log(hi))(rng)));
  };
  std::vector<shape> out;
  while (static_cast<int>(out.size()) < count) {
    shape s{static_cast<marg::detail::banded_op>(rng() % 3), rng() % 2 == 1,
            log_uniform(big ? 131072.0 : 16384.0), log_uniform(131072.0),
            rng() % 2 == 0 ? 1 : 1 + log_uniform(double(max_batch))};
    const std::int64_t r = std::int64_t{s.m} + s.n - 1, macs = std::int64_t{s.m} * s.n * s.batch;
    if (macs > (std::int64_t{1} << (big ? 33 : 30)) || r * s.batch > (std::int64_t{1} << 26) ||
        (big && macs < (std::int64_t{1} << 28)))
      continue;
    out.push_back(s);
  }
  return out;
}

const char* op_name(marg::detail::banded_op op) {
  return op == marg::detail::banded_op::convolve ? "convolve"
         : op == marg::detail::banded_op::grad_p ? "grad_p"
                                                 : "grad_q";
}

// "op:type:m:n:batch" (op convolve, grad_p or grad_q; type float or double)
shape parse_shape(const std::string& spec) {
  std::vector<std::string> f;
  std::istringstream in(spec);
  for (std::string x; std::getline(in, x, ':');) f.push_back(x);
  const auto bad = [&] {
    return std::runtime_error("--shape " + spec +
                              ": expected op:type:m:n:batch, e.g. convolve:float:64:64:16384");
  };
  if (f.size() != 5 || (f[1] != "float" && f[1] != "double")) throw bad();
  shape s{};
  if (f[0] == "convolve")
    s.op = marg::detail::banded_op::convolve;
  else if (f[0] == "grad_p")
    s.op = marg::detail::banded_op::grad_p;
  else if (f[0] == "grad_q")
    s.op = marg::detail::banded_op::grad_q;
  else
    throw bad();
  s.is_double = f[1] == "double";
  try {
    s.m = std::stoi(f[2]);
    s.n = std::stoi(f[3]);
    s.batch = std::stoi(f[4]);
  } catch (const std::exception&) {
    throw bad();
  }
  if (s.m < 1 || s.n < 1 || s.batch < 1) throw bad();
  return s;
}

/// the shapes of --check and --dump: those given with --shape, else `count`
/// random ones
struct shape_source {
  std::vector<std::string> given;
  int count = 0;
  std::uint64_t seed = 1;
  int max_batch = 4096;
  bool big = false;
  std::vector<shape> shapes() const {
    if (given.empty()) return random_shapes(count, seed, max_batch, big);
    std::vector<shape> out;
    for (const std::string& g : given) out.push_back(parse_shape(g));
    return out;
  }
  /// where the shapes come from, for the summary line
  std::string origin() const {
    return given.empty() ? "seed " + std::to_string(seed) + (big ? ", big" : "") : "given";
  }
};

// Device buffers of one shape's operands (zeros) and result, freed on exit.
template <class T>
struct shape_buffers {
  T *a = nullptr, *b = nullptr, *r = nullptr;
  marg::detail::banded_args<T> x{};
  explicit shape_buffers(const shape& s) {
    const auto len = marg::detail::lengths_of(s.op, s.m, s.n);
    cuda_ok(cudaMalloc(&a, sizeof(T) * len.a * s.batch), "cudaMalloc");
    cuda_ok(cudaMalloc(&b, sizeof(T) * len.b * s.batch), "cudaMalloc");
    cuda_ok(cudaMalloc(&r, sizeof(T) * len.out * s.batch), "cudaMalloc");
    cuda_ok(cudaMemset(a, 0, sizeof(T) * len.a * s.batch), "cudaMemset");
    cuda_ok(cudaMemset(b, 0, sizeof(T) * len.b * s.batch), "cudaMemset");
    x = {s.op, s.m, s.n, a, 1, len.a, b, 1, len.b, r, 1, len.out, s.batch};
  }
  ~shape_buffers() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(r);
  }
  shape_buffers(const shape_buffers&) = delete;
  shape_buffers& operator=(const shape_buffers&) = delete;
};

// one product of each class of the grid: taps 2^k (k = 0, 2, .., 14),
// outputs from taps up to 2^17, 1 to 4096 problems, at most max_work
// outputs x problems; measure mode times the variants on its first call
template <class T>
int tune(bool gradients, std::int64_t max_work, cudaStream_t stream) {
  int classes = 0;
  for (int tk = 0; tk <= 14; tk += 2)
    for (int ok = tk; ok <= 17; ok += 1)
      for (const int batch : {1, 8, 64, 512, 4096}) {
        const std::int64_t taps = std::int64_t{1} << tk, outputs = std::int64_t{1} << ok;
        if (outputs * batch > max_work) continue;
        // a convolution of taps and n values has taps + n - 1 outputs; a
        // gradient of m outputs reads m + taps - 1 values
        const int m = static_cast<int>(gradients ? outputs : taps);
        const int n = static_cast<int>(gradients ? taps : outputs - taps + 1);
        const shape_buffers<T> buf(
            {gradients ? marg::detail::banded_op::grad_p : marg::detail::banded_op::convolve,
             sizeof(T) == 8, m, n, batch});
        const auto& x = buf.x;
        const marg::stream_view s{static_cast<void*>(stream)};
        if (gradients)
          marg::convolve_grad_p_batched<T>(m, n, x.a, 1, x.stride_a, x.b, 1, x.stride_b, x.out, 1,
                                           x.stride_out, batch, s);
        else
          marg::convolve_batched<T>(m, n, x.a, 1, x.stride_a, x.b, 1, x.stride_b, x.out, 1,
                                    x.stride_out, batch, s);
        cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        ++classes;
      }
  return classes;
}

// calls f(plan, µs) for every variant the device supports for x, forced,
// with tap_split_of's split and, with every_split, each variant that splits
// its taps also at the other splits of 1, 2, 4, 8 and (without clusters) 16
template <class T, class F>
void time_variants(const marg::detail::banded_args<T>& x, bool every_split, cudaStream_t stream,
                   F&& f) {
  const auto c = cu::correlation_of(x);
  const cu::device_features& d = cu::current_device_features();
  for (const cu::kernel_variant v : cu::all_variants) {
    if (!cu::variant_supports(v, c, d)) continue;
    const int planned = cu::tap_split_of(v, c, d);
    f(cu::kernel_plan{v, planned}, time_plan(c, {v, planned}, stream));
    if (!every_split || !cu::entry_of<T>(v).splits_taps) continue;
    for (const int split : {1, 2, 4, 8, 16})
      if (split != planned && split <= c.la && split <= cu::largest_split(d))
        f(cu::kernel_plan{v, split}, time_plan(c, {v, split}, stream));
  }
}

/// where --check's and --replay's plan comes from
enum class plan_from { automatic, rules, model };

// the plan of x on d from `from`: the library's (choose_with_wisdom: the
// rules or the model, and wisdom where imported), the rules' or the model's
template <class T>
cu::kernel_plan plan_of(const marg::detail::banded_args<T>& x, plan_from from,
                        const cu::device_features& d) {
  if (from == plan_from::automatic) return cu::choose_with_wisdom(x, d);
  return cu::choose_from(from == plan_from::rules ? cu::plan_source::rules : cu::plan_source::model,
                         x, d);
}

// the plan (choose_with_wisdom: the rules or the model, and wisdom where
// imported; or the rules or the model alone) against every supported
// variant forced; returns plan / best
template <class T>
double check_one(const shape& s, plan_from from, bool every_split, cudaStream_t stream,
                 std::ostream& out) {
  const shape_buffers<T> buf(s);
  const cu::device_features& d = cu::current_device_features();
  const cu::kernel_plan plan = plan_of(buf.x, from, d);
  double best = -1, planned = -1;
  std::string best_name;
  time_variants(buf.x, every_split, stream, [&](const cu::kernel_plan& p, double t) {
    if (best < 0 || t < best)
      best = t,
      best_name = std::string(cu::variant_name(p.variant)) + '/' + std::to_string(p.split);
    if (p.variant == plan.variant && p.split == plan.split) planned = t;
  });
  if (planned < 0) planned = time_plan(cu::correlation_of(buf.x), plan, stream);
  out << "| " << op_name(s.op) << " | " << (sizeof(T) == 4 ? "float" : "double") << " | " << s.m
      << " | " << s.n << " | " << s.batch << " | " << cu::variant_name(plan.variant) << '/'
      << plan.split << " | " << planned << " | " << best_name << " | " << best << " | "
      << planned / best << " |\n";
  return planned / best;
}

// the cost model's terms as the dump's last columns
std::string terms_csv(const cu::cost_terms& k) {
  std::ostringstream o;
  o.precision(10);
  o << k.waves << ',' << k.wave_steps_us << ',' << k.load_macs_us << ',' << k.load_elems_us << ','
    << k.bytes_us << ',' << k.split_sums << ',' << k.split_bytes_us;
  return o.str();
}

// the dump's device line, as written and as --reterm reads it back
constexpr const char* device_line =
    "# device: capability=%d hopper=%d multiprocessors=%d clock_mhz=%d bandwidth_gbs=%d";

// the dump's column names
constexpr const char* dump_columns =
    "type,op,m,n,batch,la,lx,lout,lead,variant,split,us,waves,wave_steps_us,load_macs_us,"
    "load_elems_us,bytes_us,split_sums,split_bytes_us";

// --dump: one CSV row per shape and supported variant, forced: the shape,
// its correlation, the variant, its split, its time and the cost model's
// terms (scripts/fit-cost-model reads them)
template <class T>
void dump_one(const shape& s, bool every_split, cudaStream_t stream, std::ostream& out) {
  const shape_buffers<T> buf(s);
  const auto c = cu::correlation_of(buf.x);
  const cu::device_features& d = cu::current_device_features();
  time_variants(buf.x, every_split, stream, [&](const cu::kernel_plan& p, double t) {
    const cu::cost_terms k = cu::cost_terms_of(p.variant, c, p.split, d);
    out << (sizeof(T) == 4 ? "float" : "double") << ',' << op_name(s.op) << ',' << s.m << ',' << s.n
        << ',' << s.batch << ',' << c.la << ',' << c.lx << ',' << c.lout << ',' << c.lead << ','
        << cu::variant_name(p.variant) << ',' << p.split << ',' << t << ',' << terms_csv(k) << '\n';
  });
}

// the header lines of a table or dump: the library, the device, its driver,
// the date and the command
std::string header_lines(const std::string& command) {
  cudaDeviceProp p{};
  int device = 0, driver = 0;
  cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
  cuda_ok(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  cuda_ok(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::ostringstream h;
  h << "# libmarg " << marg::version() << ", " << p.name << " (sm_" << p.major << p.minor << ", "
    << p.multiProcessorCount << " SMs), CUDA driver " << driver / 1000 << '.' << driver % 1000 / 10
    << ", " << date << '\n'
    << "# command: " << command << '\n';
  return h.str();
}

// --dump: every supported variant on the shapes
int dump(const shape_source& from, bool every_split, const std::string& path,
         const std::string& command) {
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  const cu::device_features& d = cu::current_device_features();
  char device[160];
  std::snprintf(device, sizeof device, device_line, d.capability, int{d.hopper}, d.multiprocessors,
                d.clock_mhz, d.bandwidth_gbs);
  std::ofstream f(path);
  f << header_lines(command) << device << '\n' << dump_columns << '\n';
  const std::vector<shape> list = from.shapes();
  for (const shape& s : list) {
    if (s.is_double)
      dump_one<double>(s, every_split, stream, f);
    else
      dump_one<float>(s, every_split, stream, f);
  }
  cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::printf("marg_tune: %d shapes (%s), every supported variant, in %s\n",
              static_cast<int>(list.size()), from.origin().c_str(), path.c_str());
  return 0;
}

// --check: the planner on the shapes; exit status 0
int check(const shape_source& shapes, plan_from from, bool every_split, const std::string& path,
          const std::string& command) {
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  std::ostringstream rows;
  double log_sum = 0, worst = 0;
  int over_10 = 0, over_50 = 0;
  const std::vector<shape> list = shapes.shapes();
  const int count = static_cast<int>(list.size());
  for (const shape& s : list) {
    const double q = s.is_double ? check_one<double>(s, from, every_split, stream, rows)
                                 : check_one<float>(s, from, every_split, stream, rows);
    log_sum += std::log(q);
    worst = std::max(worst, q);
    over_10 += q > 1.1;
    over_50 += q > 1.5;
  }
  cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  char summary[256];
  std::snprintf(summary, sizeof summary,
                "%d shapes (%s): plan / best forced variant: geometric mean %.4f, worst "
                "%.3f; %d over 1.1, %d over 1.5",
                count, shapes.origin().c_str(), std::exp(log_sum / count), worst, over_10, over_50);
  std::ofstream f(path);
  f << "# `" << command << "`: " << summary << "\n\n"
    << "| op | type | m | n | batch | plan/split | plan µs | best | best µs | plan / best |\n"
    << "|---|---|---|---|---|---|---|---|---|---|\n"
    << rows.str();
  if (!f) throw std::runtime_error("cannot write " + path);
  std::printf("marg_tune: %s; rows in %s\n", summary, path.c_str());
  return 0;
}

// the device of a dump's device line; what the line leaves out follows from
// the capability
cu::device_features device_of(const std::string& line, const std::string& in) {
  cu::device_features d;
  int hopper = 0;
  if (std::sscanf(line.c_str(), device_line, &d.capability, &hopper, &d.multiprocessors,
                  &d.clock_mhz, &d.bandwidth_gbs) != 5)
    throw std::runtime_error(in + ": a bad device line: " + line);
  d.hopper = hopper != 0;
  d.ampere = d.capability >= 80;
  d.wgmma = d.hopper;
  d.max_smem = d.capability >= 90 ? 232448 : d.capability >= 80 ? 166912 : 65536;
  return d;
}

// the columns of a dump's row (at least the measured ones)
std::vector<std::string> columns_of(const std::string& line, const std::string& in) {
  std::vector<std::string> col;
  std::istringstream fields(line);
  for (std::string c; std::getline(fields, c, ',');) col.push_back(c);
  if (col.size() < 12) throw std::runtime_error(in + ": a short row: " + line);
  return col;
}

// --reterm: a dump's rows with this build's cost-model terms, for a model
// changed since the dump was measured; reads the device from the dump's
// "# device:" line, needs no GPU
int reterm(const std::string& in, const std::string& path) {
  std::ifstream f(in);
  if (!f) throw std::runtime_error("cannot read " + in);
  std::ostringstream o;
  cu::device_features d;
  std::string line;
  bool device_seen = false;
  while (std::getline(f, line)) {
    if (line.rfind("# device:", 0) == 0) {
      d = device_of(line, in);
      device_seen = true;
    }
    if (line.empty() || line[0] == '#' || line.rfind("type,", 0) == 0) {
      o << (line.rfind("type,", 0) == 0 ? std::string(dump_columns) : line) << '\n';
      continue;
    }
    if (!device_seen) throw std::runtime_error(in + ": no device line before the rows");
    const std::vector<std::string> col = columns_of(line, in);
    const auto v =
        std::find_if(std::begin(cu::all_variants), std::end(cu::all_variants),
                     [&](cu::kernel_variant k) { return col[9] == cu::variant_name(k); });
    if (v == std::end(cu::all_variants)) throw std::runtime_error(in + ": a bad variant: " + line);
    const auto terms = [&](auto zero) {
      cu::correlation_view<decltype(zero)> c{};
      c.la = std::stoi(col[5]);
      c.lx = std::stoi(col[6]);
      c.lout = std::stoi(col[7]);
      c.lead = std::stoi(col[8]);
      c.batch = std::stoi(col[4]);
      return cu::cost_terms_of(*v, c, std::stoi(col[10]), d);
    };
    for (int i = 0; i < 12; ++i) o << col[i] << ',';
    o << terms_csv(col[0] == "double" ? terms(0.0) : terms(0.0f)) << '\n';
  }
  std::ofstream out(path);
  out << o.str();
  if (!out) throw std::runtime_error("cannot write " + path);
  return 0;
}

// one shape of a dump and its forced times by plan
struct dumped_shape {
  shape s{};
  std::map<std::pair<std::string, int>, double> us;  // (variant, split) -> µs
};

// the plan for dumped shape `s` on `d` from `from` (operands at aligned
// stand-in addresses: the planner reads only their alignment)
template <class T>
cu::kernel_plan replayed_plan(const shape& s, plan_from from, const cu::device_features& d) {
  const auto len = marg::detail::lengths_of(s.op, s.m, s.n);
  T* const p = reinterpret_cast<T*>(std::uintptr_t{1} << 20);
  return plan_of(marg::detail::banded_args<T>{s.op, s.m, s.n, p, 1, len.a, p, 1, len.b, p, 1,
                                              len.out, s.batch},
                 from, d);
}

// --replay: the library's plans (choose: the rules or the model and the
// rules' guard), the rules' alone and the model's alone for a dump's
// shapes, timed by the dump's measurement of the same variant and split
int replay(const std::string& in, const std::string& path) {
  std::ifstream f(in);
  if (!f) throw std::runtime_error("cannot read " + in);
  cu::device_features d;
  std::vector<dumped_shape> shapes;
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("# device:", 0) == 0) d = device_of(line, in);
    if (line.empty() || line[0] == '#' || line.rfind("type,", 0) == 0) continue;
    const std::vector<std::string> col = columns_of(line, in);
    const shape s = parse_shape(col[1] + ':' + col[0] + ':' + col[2] + ':' + col[3] + ':' + col[4]);
    if (shapes.empty() || !(shapes.back().s == s)) shapes.push_back({s, {}});
    shapes.back().us[{col[9], std::stoi(col[10])}] = std::stod(col[11]);
  }
  std::ostringstream rows, summary, summary_lines;
  for (const plan_from from : {plan_from::automatic, plan_from::rules, plan_from::model}) {
    const char* name = from == plan_from::automatic ? "auto"
                       : from == plan_from::rules   ? "rules"
                                                    : "model";
    double log_sum = 0, worst = 0;
    int timed = 0, missing = 0, over_50 = 0;
    for (const dumped_shape& e : shapes) {
      const cu::kernel_plan p =
          e.s.is_double ? replayed_plan<double>(e.s, from, d) : replayed_plan<float>(e.s, from, d);
      double best = -1;
      for (const auto& [k, t] : e.us)
        if (best < 0 || t < best) best = t;
      // one table row: the shape, the plan and `what`
      const auto row = [&](const auto& what) {
        rows << "| " << name << " | " << op_name(e.s.op) << " | "
             << (e.s.is_double ? "double" : "float") << " | " << e.s.m << " | " << e.s.n << " | "
             << e.s.batch << " | " << cu::variant_name(p.variant) << '/' << p.split << " | " << what
             << " |\n";
      };
      const auto hit = e.us.find({cu::variant_name(p.variant), p.split});
      if (hit == e.us.end()) {
        ++missing;
        row("not in the dump");
        continue;
      }
      const double q = hit->second / best;
      ++timed, log_sum += std::log(q), worst = std::max(worst, q), over_50 += q > 1.5;
      if (q > 1.1) row(q);
    }
    char text[200];
    std::snprintf(text, sizeof text,
                  "%s: %d of %zu shapes timed (%d plans not in the dump): geometric mean %.4f, "
                  "worst %.3f, %d over 1.5\n",
                  name, timed, shapes.size(), missing, timed ? std::exp(log_sum / timed) : 0.0,
                  worst, over_50);
    summary << text;
    summary_lines << "# " << text;
  }
  std::ofstream out(path);
  out << "# replay of " << in << '\n'
      << summary_lines.str() << '\n'
      << "| plan | op | type | m | n | batch | plan/split | plan / best |\n"
      << "|---|---|---|---|---|---|---|---|\n"
      << rows.str();
  if (!out) throw std::runtime_error("cannot write " + path);
  std::printf("%s", summary.str().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "marg_tune: measures libmarg's CUDA kernel variants over a grid of shape classes "
      "on this GPU and writes the fastest per class as wisdom");
  std::string out, types = "float,double";
  std::int64_t max_work = std::int64_t{1} << 24;
  int check_count = 0;
  std::uint64_t seed = 1;
  app.add_option("--out", out, "the wisdom file to write (with --check: the table of rows)")
      ->required();
  app.add_option("--check", check_count,
                 "instead of tuning: time the plan against every variant on this many random "
                 "shapes")
      ->check(CLI::Range(1, 100000));
  int dump_count = 0;
  app.add_option("--dump", dump_count,
                 "instead of tuning: time every supported variant on this many random shapes and "
                 "write them as CSV with the cost model's terms (scripts/fit-cost-model)")
      ->check(CLI::Range(1, 100000))
      ->excludes("--check");
  std::string reterm_in;
  app.add_option("--reterm", reterm_in,
                 "instead of measuring: rewrite the cost-model terms of a --dump file with this "
                 "build's model (no GPU needed)")
      ->check(CLI::ExistingFile);
  std::string replay_in;
  app.add_option("--replay", replay_in,
                 "instead of measuring: the library's, the rules' and the model's plans of a "
                 "--dump file's shapes, timed by its measurements (no GPU needed)")
      ->check(CLI::ExistingFile)
      ->excludes("--reterm");
  app.add_option("--seed", seed, "the random shapes' seed (with --check and --dump)");
  int max_batch = 4096;
  app.add_option("--max-batch", max_batch,
                 "with --check and --dump: the random shapes' largest batch (default 4096)")
      ->check(CLI::Range(2, 1 << 20));
  bool big = false;
  app.add_flag("--big", big,
               "with --check and --dump: large random shapes (2^28 to 2^33 multiply-adds, batches "
               "to 16 unless --max-batch says)");
  std::vector<std::string> given;
  app.add_option("--shape", given,
                 "with --check and --dump: a shape op:type:m:n:batch (repeatable) in place of the "
                 "random ones, e.g. convolve:float:64:64:16384");
  std::string planner = "auto";
  app.add_option("--planner", planner,
                 "with --check: the plan of the library (auto), of the preference rules alone or "
                 "of the cost model alone")
      ->check(CLI::IsMember({"auto", "rules", "model"}));
  bool every_split = false;
  app.add_flag("--every-split", every_split,
               "with --check and --dump: also time each variant that splits its taps at splits "
               "1, 2, 4, 8 and, on devices without clusters, 16");
  std::string wisdom;
  app.add_option("--wisdom", wisdom, "with --check: a wisdom file the plan uses")
      ->check(CLI::ExistingFile);
  app.add_option("--types", types, "float, double or float,double")
      ->check(CLI::IsMember({"float", "double", "float,double"}));
  app.add_option("--max-work", max_work, "largest outputs x problems of a grid shape")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  CLI11_PARSE(app, argc, argv);
  std::ostringstream command;
  for (int i = 0; i < argc; ++i) command << (i ? " " : "") << argv[i];
  try {
    if (!reterm_in.empty()) return reterm(reterm_in, out);
    if (!replay_in.empty()) return replay(replay_in, out);
    if (*marg::cuda_unusable_reason() != '\0') {
      std::fprintf(stderr, "marg_tune: %s\n", marg::cuda_unusable_reason());
      return 1;
    }
    marg::set_backend(marg::backend::cuda);
    if (big && app.count("--max-batch") == 0) max_batch = 16;
    const shape_source shapes{given, std::max(check_count, dump_count), seed, max_batch, big};
    if (check_count > 0) {
      marg::forget_wisdom();
      if (!wisdom.empty()) marg::import_wisdom(wisdom);
      const plan_from from = planner == "rules"   ? plan_from::rules
                             : planner == "model" ? plan_from::model
                                                  : plan_from::automatic;
      return check(shapes, from, every_split, out, command.str());
    }
    if (dump_count > 0) return dump(shapes, every_split, out, command.str());
    marg::forget_wisdom();
    marg::set_planner_mode(marg::planner_mode::measure);
    cudaStream_t stream = nullptr;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    const auto start = std::chrono::steady_clock::now();
    int classes = 0;
    for (const bool gradients : {false, true}) {
      if (types != "double") classes += tune<float>(gradients, max_work, stream);
      if (types != "float") classes += tune<double>(gradients, max_work, stream);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string w = marg::wisdom_text();
    // the format's header line first (import_wisdom checks it), then ours
    const std::size_t eol = w.find('\n') + 1;
    std::ofstream f(out);
    f << w.substr(0, eol) << header_lines(command.str()) << "# " << classes
      << " shape classes measured in " << seconds << " s\n"
      << w.substr(eol);
    if (!f) throw std::runtime_error("cannot write " + out);
    std::printf("marg_tune: %d classes in %.1f s, wisdom in %s\n", classes, seconds, out.c_str());
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "marg_tune: %s\n", e.what());
    return 1;
  }
  return 0;
}
