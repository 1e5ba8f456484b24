// Accuracy study: libmarg's direct summation (through the public API) against
// FFT convolution (FFTW on the host, or cuFFT), both against a long double
// reference computed from the same stored inputs, element by element across
// the whole support. Two families:
//   binomial           Binomial(n, 0.3) + Binomial(n, 0.3) by operator+
//   Poisson-binomial   N Bernoulli(p_i) terms, p_i uniform in (0, 1), by
//                      marg::sum (ours) and by DFT-CF (the FFT baseline)
// Writes one CSV per case (k, reference, ours, fft, their relative errors),
// summary.csv and meta.txt into --out; bench/accuracy/plot makes the PNGs.
//
// usage: accuracy [--backend cpu|cuda] [--fft fftw|cufft] [--out DIR] [--quick]
#include <marg/marg.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fft.hpp"

namespace {

using marg::accuracy::fft_library;

struct options {
  marg::backend backend = marg::backend::cpu;
  fft_library fft = fft_library::fftw;
  std::string out = "accuracy-out";
  bool quick = false;
  std::string command;
};

// u = eps / 2, the unit roundoff of T
template <class T>
double unit_roundoff() {
  return std::numeric_limits<T>::epsilon() / 2.0;
}

// gamma_k = k u / (1 - k u): the bound on k roundings (Higham, ASNA §3.1)
template <class T>
double gamma_bound(double k) {
  const double ku = k * unit_roundoff<T>();
  return ku < 1 ? ku / (1 - ku) : std::numeric_limits<double>::infinity();
}

// roundings one convolution of lengths m, n applies to each elementary term:
// one product, at most min(m, n) - 1 additions along any summation tree, the
// rounding of the result to T and the optional renormalization
double roundings_of_convolution(std::int64_t m, std::int64_t n) {
  return static_cast<double>(std::min(m, n)) + 2;
}

// sum()'s pairing (ascending lengths, neighbours paired, odd term carried),
// adding up the roundings of every tree node: every elementary term of the
// result passes through every node
double roundings_of_sum(std::vector<std::int64_t> lengths) {
  double total = 0;
  while (lengths.size() > 1) {
    std::stable_sort(lengths.begin(), lengths.end());
    std::vector<std::int64_t> next;
    std::size_t i = 0;
    for (; i + 1 < lengths.size(); i += 2) {
      total += roundings_of_convolution(lengths[i], lengths[i + 1]);
      next.push_back(lengths[i] + lengths[i + 1] - 1);
    }
    if (i < lengths.size()) next.push_back(lengths[i]);
    lengths = std::move(next);
  }
  return total;
}

struct result_row {
  std::string family, type;
  std::int64_t size;
  double roundings, bound;
  double max_ours = 0, max_fft = 0, median_ours = 0, median_fft = 0;
  std::int64_t elements = 0, compared = 0, fft_negative = 0, fft_above_1pct = 0;
  std::int64_t ours_above_bound = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// compares both results with the reference, writes the CSV, fills the row
template <class T>
void evaluate(const std::vector<long double>& ref, const std::vector<T>& ours,
              const std::vector<T>& fft, const std::string& path, result_row& row) {
  if (ours.size() != ref.size() || fft.size() != ref.size())
    throw std::runtime_error("length mismatch in " + path);
  std::ofstream csv(path);
  csv << "k,reference,ours,fft,relerr_ours,relerr_fft\n";
  csv.precision(10);
  const long double tiny = std::numeric_limits<T>::min();  // smallest normal T
  std::vector<double> eo, ef;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    const long double r = ref[k];
    row.fft_negative += fft[k] < 0;
    csv << k << ',' << static_cast<double>(r) << ',' << ours[k] << ',' << fft[k];
    if (r >= tiny) {  // relative error is defined where the value is a normal T
      const double e_o = static_cast<double>(std::fabs(static_cast<long double>(ours[k]) - r) / r);
      const double e_f = static_cast<double>(std::fabs(static_cast<long double>(fft[k]) - r) / r);
      eo.push_back(e_o);
      ef.push_back(e_f);
      row.max_ours = std::max(row.max_ours, e_o);
      row.max_fft = std::max(row.max_fft, e_f);
      row.fft_above_1pct += e_f > 1e-2;
      row.ours_above_bound += e_o > row.bound;
      csv << ',' << e_o << ',' << e_f;
    } else {
      csv << ",,";
    }
    csv << '\n';
  }
  row.elements = static_cast<std::int64_t>(ref.size());
  row.compared = static_cast<std::int64_t>(eo.size());
  row.median_ours = median(eo);
  row.median_fft = median(ef);
}

template <class T>
const char* type_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

// Binomial(n, 0.3) + Binomial(n, 0.3)
template <class T>
result_row binomial_case(const options& o, std::int64_t n) {
  const marg::pmf<T> x = marg::binomial<T>(n, 0.3);
  const std::vector<T> p = x.probs();
  const marg::pmf<T> z = x + x;  // ours, through the public API
  const std::vector<T> ours = z.probs();
  const std::vector<T> fft = marg::accuracy::fft_convolve<T>(o.fft, p, p);
  // reference: the same stored inputs, convolved in long double
  const std::int64_t m = static_cast<std::int64_t>(p.size());
  std::vector<long double> ref(2 * m - 1, 0.0L);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      ref[i + j] += static_cast<long double>(p[i]) * static_cast<long double>(p[j]);
  result_row row{"binomial", type_name<T>(), n, roundings_of_convolution(m, m), 0};
  row.bound = gamma_bound<T>(row.roundings);
  evaluate(ref, ours, fft, o.out + "/binomial_" + std::to_string(n) + "_" + type_name<T>() + ".csv",
           row);
  return row;
}

// N Bernoulli(p_i) terms, p_i uniform in (0, 1)
template <class T>
result_row poisson_binomial_case(const options& o, std::int64_t terms, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<marg::pmf<T>> xs;
  std::vector<T> p0, p1;
  for (std::int64_t i = 0; i < terms; ++i) {
    xs.push_back(marg::bernoulli<T>(static_cast<T>(u(rng))));
    const std::vector<T> pr = xs.back().probs();
    p0.push_back(pr[0]);
    p1.push_back(pr[1]);
  }
  const std::vector<T> ours = marg::sum(xs).probs();
  const std::vector<T> fft = marg::accuracy::fft_poisson_binomial<T>(o.fft, p0, p1);
  // reference: the stored Bernoulli probabilities, one term at a time in long double
  std::vector<long double> ref(terms + 1, 0.0L);
  ref[0] = 1;
  for (std::int64_t i = 0; i < terms; ++i)
    for (std::int64_t k = i + 1; k >= 0; --k)
      ref[k] = ref[k] * static_cast<long double>(p0[i]) +
               (k > 0 ? ref[k - 1] * static_cast<long double>(p1[i]) : 0.0L);
  result_row row{"poisson_binomial", type_name<T>(), terms,
                 roundings_of_sum(std::vector<std::int64_t>(terms, 2)), 0};
  row.bound = gamma_bound<T>(row.roundings);
  evaluate(ref, ours, fft,
           o.out + "/poisson_binomial_" + std::to_string(terms) + "_" + type_name<T>() + ".csv",
           row);
  return row;
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) o.command.push_back(' ');
    o.command.append(argv[i]);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--backend") {
      const std::string v = value();
      if (v == "cpu")
        o.backend = marg::backend::cpu;
      else if (v == "cuda")
        o.backend = marg::backend::cuda;
      else
        throw std::invalid_argument("--backend " + v + " (cpu or cuda)");
    } else if (a == "--fft") {
      const std::string v = value();
      if (v == "fftw")
        o.fft = fft_library::fftw;
      else if (v == "cufft")
        o.fft = fft_library::cufft;
      else
        throw std::invalid_argument("--fft " + v + " (fftw or cufft)");
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      throw std::invalid_argument("unknown argument " + a +
                                  "; usage: accuracy [--backend cpu|cuda] [--fft fftw|cufft] "
                                  "[--out DIR] [--quick]");
    }
  }
  return o;
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) try {
  const options o = parse(argc, argv);
  if (o.fft == fft_library::cufft && !marg::accuracy::cufft_compiled())
    throw std::invalid_argument("--fft cufft: this build has no CUDA backend");
  marg::set_backend(o.backend);
  std::filesystem::create_directories(o.out);
  const bool gpu = o.backend == marg::backend::cuda || o.fft == fft_library::cufft;
  const std::string device =
      gpu ? marg::accuracy::gpu_name() + " (host: " + cpu_name() + ")" : cpu_name();
  const unsigned seed = 20240601;
  {
    std::ofstream meta(o.out + "/meta.txt");
    meta << "device=" << device << "\ndate=" << today() << "\ncommand=" << o.command
         << "\nours=libmarg " << marg::version() << ", "
         << (o.backend == marg::backend::cuda ? "CUDA" : "CPU") << " backend"
         << "\nfft=" << (o.fft == fft_library::fftw ? "FFTW " : "cuFFT ")
         << "(same precision as the data)\nseed=" << seed << '\n';
  }
  const std::vector<std::int64_t> binomial_n =
      o.quick ? std::vector<std::int64_t>{25, 400}
              : std::vector<std::int64_t>{25, 100, 400, 1600, 6400, 20000};
  const std::vector<std::int64_t> pb_terms =
      o.quick ? std::vector<std::int64_t>{100} : std::vector<std::int64_t>{100, 1000, 10000};
  std::vector<result_row> rows;
  const auto run_type = [&]<class T>(T) {
    for (const std::int64_t n : binomial_n) rows.push_back(binomial_case<T>(o, n));
    for (const std::int64_t t : pb_terms) rows.push_back(poisson_binomial_case<T>(o, t, seed));
  };
  run_type(float{});
  run_type(double{});

  std::ofstream summary(o.out + "/summary.csv");
  summary << "family,type,size,elements,compared,roundings,bound,max_relerr_ours,"
             "median_relerr_ours,max_relerr_fft,median_relerr_fft,fft_negative,"
             "fft_above_1pct,ours_above_bound\n";
  std::printf("device: %s\n%-17s %-6s %6s %7s %9s %10s %10s %10s %10s %6s %6s\n", device.c_str(),
              "family", "type", "size", "compared", "bound", "max ours", "med ours", "max fft",
              "med fft", "neg", ">1%");
  bool ok = true;
  for (const auto& r : rows) {
    summary << r.family << ',' << r.type << ',' << r.size << ',' << r.elements << ',' << r.compared
            << ',' << r.roundings << ',' << r.bound << ',' << r.max_ours << ',' << r.median_ours
            << ',' << r.max_fft << ',' << r.median_fft << ',' << r.fft_negative << ','
            << r.fft_above_1pct << ',' << r.ours_above_bound << '\n';
    std::printf("%-17s %-6s %6lld %7lld/%lld %9.2e %10.2e %10.2e %10.2e %10.2e %6lld %6lld\n",
                r.family.c_str(), r.type.c_str(), static_cast<long long>(r.size),
                static_cast<long long>(r.compared), static_cast<long long>(r.elements), r.bound,
                r.max_ours, r.median_ours, r.max_fft, r.median_fft,
                static_cast<long long>(r.fft_negative), static_cast<long long>(r.fft_above_1pct));
    if (r.ours_above_bound > 0) {
      std::printf("  BOUND EXCEEDED: %lld elements\n", static_cast<long long>(r.ours_above_bound));
      ok = false;
    }
  }
  std::printf("CSV files in %s; plots: bench/accuracy/plot %s\n", o.out.c_str(), o.out.c_str());
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "accuracy: %s\n", e.what());
  return 2;
}
