// cuFFT baselines (device, precision T): built only with the CUDA backend.
#include <cuda_runtime.h>
#include <cufft.h>

#include <complex>
#include <stdexcept>
#include <string>
#include <vector>

#include "fft.hpp"

namespace marg::accuracy {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cufft error " +
                             std::to_string(static_cast<int>(r)));
}

// device buffer
template <class E>
struct device {
  explicit device(std::size_t n) { check(cudaMalloc(&ptr, n * sizeof(E)), "cudaMalloc"); }
  device(const device&) = delete;
  device& operator=(const device&) = delete;
  ~device() { cudaFree(ptr); }
  E* ptr = nullptr;
};

// cufftReal/cufftComplex (float) and cufftDoubleReal/cufftDoubleComplex (double)
template <class T>
struct cufft;

template <>
struct cufft<float> {
  using complex = cufftComplex;
  static constexpr cufftType r2c_type = CUFFT_R2C, c2r_type = CUFFT_C2R;
  static cufftResult r2c(cufftHandle h, float* in, complex* out) {
    return cufftExecR2C(h, in, out);
  }
  static cufftResult c2r(cufftHandle h, complex* in, float* out) {
    return cufftExecC2R(h, in, out);
  }
};

template <>
struct cufft<double> {
  using complex = cufftDoubleComplex;
  static constexpr cufftType r2c_type = CUFFT_D2Z, c2r_type = CUFFT_Z2D;
  static cufftResult r2c(cufftHandle h, double* in, complex* out) {
    return cufftExecD2Z(h, in, out);
  }
  static cufftResult c2r(cufftHandle h, complex* in, double* out) {
    return cufftExecZ2D(h, in, out);
  }
};

struct plan {
  plan(int len, cufftType type) { check(cufftPlan1d(&h, len, type, 1), "cufftPlan1d"); }
  plan(const plan&) = delete;
  plan& operator=(const plan&) = delete;
  ~plan() { cufftDestroy(h); }
  cufftHandle h{};
};

template <class T>
__global__ void kernel_multiply(typename cufft<T>::complex* a, const typename cufft<T>::complex* b,
                                int half) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= half) return;
  const T re = a[k].x * b[k].x - a[k].y * b[k].y, im = a[k].x * b[k].y + a[k].y * b[k].x;
  a[k].x = re;
  a[k].y = im;
}

}  // namespace

bool cufft_compiled() noexcept {
  return true;
}

std::string gpu_name() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return prop.name;
}

namespace detail {

template <class T>
std::vector<T> cufft_convolve(const std::vector<T>& p, const std::vector<T>& q) {
  using C = typename cufft<T>::complex;
  const int len = static_cast<int>(p.size() + q.size() - 1), half = len / 2 + 1;
  std::vector<T> xp(len, T(0)), xq(len, T(0));
  std::copy(p.begin(), p.end(), xp.begin());
  std::copy(q.begin(), q.end(), xq.begin());
  device<T> dp(len), dq(len);
  device<C> fp(half), fq(half);
  check(cudaMemcpy(dp.ptr, xp.data(), len * sizeof(T), cudaMemcpyHostToDevice), "copy p");
  check(cudaMemcpy(dq.ptr, xq.data(), len * sizeof(T), cudaMemcpyHostToDevice), "copy q");
  plan fwd(len, cufft<T>::r2c_type), inv(len, cufft<T>::c2r_type);
  check(cufft<T>::r2c(fwd.h, dp.ptr, fp.ptr), "forward p");
  check(cufft<T>::r2c(fwd.h, dq.ptr, fq.ptr), "forward q");
  kernel_multiply<T><<<(half + 255) / 256, 256>>>(fp.ptr, fq.ptr, half);
  check(cudaGetLastError(), "kernel_multiply");
  check(cufft<T>::c2r(inv.h, fp.ptr, dp.ptr), "inverse");
  std::vector<T> r(len);
  check(cudaMemcpy(r.data(), dp.ptr, len * sizeof(T), cudaMemcpyDeviceToHost), "copy r");
  for (auto& v : r) v /= static_cast<T>(len);
  return r;
}

template <class T>
std::vector<T> cufft_inverse_real(const std::vector<T>& spectrum, int len) {
  using C = typename cufft<T>::complex;
  const int half = len / 2 + 1;
  device<C> in(half);
  device<T> out(len);
  check(cudaMemcpy(in.ptr, spectrum.data(), half * sizeof(C), cudaMemcpyHostToDevice), "copy in");
  plan inv(len, cufft<T>::c2r_type);
  check(cufft<T>::c2r(inv.h, in.ptr, out.ptr), "inverse");
  std::vector<T> r(len);
  check(cudaMemcpy(r.data(), out.ptr, len * sizeof(T), cudaMemcpyDeviceToHost), "copy out");
  for (auto& v : r) v /= static_cast<T>(len);
  return r;
}

template std::vector<float> cufft_convolve(const std::vector<float>&, const std::vector<float>&);
template std::vector<double> cufft_convolve(const std::vector<double>&, const std::vector<double>&);
template std::vector<float> cufft_inverse_real(const std::vector<float>&, int);
template std::vector<double> cufft_inverse_real(const std::vector<double>&, int);

}  // namespace detail
}  // namespace marg::accuracy
