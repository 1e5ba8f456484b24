// marg_tune: measures the kernel variants over a grid of shape classes on
// the GPU it runs on and writes the winners as wisdom (numeric/planner.hpp),
// a tuning table for this device class: the header says the library
// version, the device, its driver and the command. Import it with
// marg::import_wisdom or MARG_WISDOM=file.
//
//   marg_tune --out h200.wisdom [--types float,double] [--max-work 16777216]
#include <cuda_runtime.h>
#include <CLI/CLI.hpp>

#include <marg/marg.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

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
        const std::int64_t la = gradients ? m + n - 1 : m, lb = n;
        const std::int64_t lr = gradients ? m : m + n - 1;
        T *a = nullptr, *b = nullptr, *r = nullptr;
        cuda_ok(cudaMalloc(&a, sizeof(T) * la * batch), "cudaMalloc");
        cuda_ok(cudaMalloc(&b, sizeof(T) * lb * batch), "cudaMalloc");
        cuda_ok(cudaMalloc(&r, sizeof(T) * lr * batch), "cudaMalloc");
        cuda_ok(cudaMemset(a, 0, sizeof(T) * la * batch), "cudaMemset");
        cuda_ok(cudaMemset(b, 0, sizeof(T) * lb * batch), "cudaMemset");
        const marg::stream_view s{static_cast<void*>(stream)};
        if (gradients)
          marg::convolve_grad_p_batched<T>(m, n, a, 1, la, b, 1, lb, r, 1, lr, batch, s);
        else
          marg::convolve_batched<T>(m, n, a, 1, la, b, 1, lb, r, 1, lr, batch, s);
        cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        cuda_ok(cudaFree(a), "cudaFree");
        cuda_ok(cudaFree(b), "cudaFree");
        cuda_ok(cudaFree(r), "cudaFree");
        ++classes;
      }
  return classes;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "marg_tune: measures libmarg's CUDA kernel variants over a grid of shape classes "
      "on this GPU and writes the fastest per class as wisdom");
  std::string out, types = "float,double";
  std::int64_t max_work = std::int64_t{1} << 24;
  app.add_option("--out", out, "the wisdom file to write")->required();
  app.add_option("--types", types, "float, double or float,double")
      ->check(CLI::IsMember({"float", "double", "float,double"}));
  app.add_option("--max-work", max_work, "largest outputs x problems of a grid shape")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  CLI11_PARSE(app, argc, argv);
  std::ostringstream command;
  for (int i = 0; i < argc; ++i) command << (i ? " " : "") << argv[i];
  try {
    if (*marg::cuda_unusable_reason() != '\0') {
      std::fprintf(stderr, "marg_tune: %s\n", marg::cuda_unusable_reason());
      return 1;
    }
    marg::set_backend(marg::backend::cuda);
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
    cudaDeviceProp p{};
    int device = 0, driver = 0;
    cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
    cuda_ok(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    cuda_ok(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    const std::string w = marg::export_wisdom();
    // the format's header line first (import_wisdom checks it), then ours
    const std::size_t eol = w.find('\n') + 1;
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::ofstream f(out);
    f << w.substr(0, eol) << "# libmarg " << marg::version() << ", " << p.name << " (sm_" << p.major
      << p.minor << ", " << p.multiProcessorCount << " SMs), CUDA driver " << driver / 1000 << '.'
      << driver % 1000 / 10 << ", " << date << '\n'
      << "# command: " << command.str() << '\n'
      << "# " << classes << " shape classes measured in " << seconds << " s\n"
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
