// FFTW baselines (host, precision T) and the host part of DFT-CF.
#include <fftw3.h>

#include <complex>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "fft.hpp"

namespace marg::accuracy {
namespace {

// fftw (double) and fftwf (float) behind one interface
template <class T>
struct fftw;

template <>
struct fftw<double> {
  using complex = fftw_complex;
  static void* alloc(std::size_t bytes) { return fftw_malloc(bytes); }
  static void release(void* p) { fftw_free(p); }
  static void r2c(int n, double* in, complex* out) {
    fftw_plan plan = fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
  }
  static void c2r(int n, complex* in, double* out) {
    fftw_plan plan = fftw_plan_dft_c2r_1d(n, in, out, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
  }
};

template <>
struct fftw<float> {
  using complex = fftwf_complex;
  static void* alloc(std::size_t bytes) { return fftwf_malloc(bytes); }
  static void release(void* p) { fftwf_free(p); }
  static void r2c(int n, float* in, complex* out) {
    fftwf_plan plan = fftwf_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE);
    fftwf_execute(plan);
    fftwf_destroy_plan(plan);
  }
  static void c2r(int n, complex* in, float* out) {
    fftwf_plan plan = fftwf_plan_dft_c2r_1d(n, in, out, FFTW_ESTIMATE);
    fftwf_execute(plan);
    fftwf_destroy_plan(plan);
  }
};

// an fftw_malloc'd buffer (aligned for FFTW's SIMD paths)
template <class E>
struct buffer {
  explicit buffer(std::size_t n) : ptr(static_cast<E*>(fftw<double>::alloc(n * sizeof(E) + 16))) {
    if (ptr == nullptr) throw std::bad_alloc();
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  ~buffer() { fftw<double>::release(ptr); }
  E* ptr;
};

template <class T>
std::vector<T> fftw_convolve(const std::vector<T>& p, const std::vector<T>& q) {
  using F = fftw<T>;
  const int len = static_cast<int>(p.size() + q.size() - 1), half = len / 2 + 1;
  buffer<T> xp(len), xq(len), out(len);
  buffer<typename F::complex> fp(half), fq(half);
  for (int i = 0; i < len; ++i) {
    xp.ptr[i] = i < static_cast<int>(p.size()) ? p[i] : T(0);
    xq.ptr[i] = i < static_cast<int>(q.size()) ? q[i] : T(0);
  }
  F::r2c(len, xp.ptr, fp.ptr);
  F::r2c(len, xq.ptr, fq.ptr);
  for (int k = 0; k < half; ++k) {
    const std::complex<T> a(fp.ptr[k][0], fp.ptr[k][1]), b(fq.ptr[k][0], fq.ptr[k][1]);
    const std::complex<T> c = a * b;
    fp.ptr[k][0] = c.real();
    fp.ptr[k][1] = c.imag();
  }
  F::c2r(len, fp.ptr, out.ptr);  // unnormalized: divide by len
  std::vector<T> r(static_cast<std::size_t>(len));
  for (int i = 0; i < len; ++i) r[i] = out.ptr[i] / static_cast<T>(len);
  return r;
}

// the characteristic function at k = 0..len/2, in complex T, interleaved
template <class T>
std::vector<T> cf_spectrum(const std::vector<T>& p0, const std::vector<T>& p1) {
  const int len = static_cast<int>(p0.size()) + 1, half = len / 2 + 1;
  std::vector<T> s(2 * static_cast<std::size_t>(half));
  for (int k = 0; k < half; ++k) {
    const T angle = T(-2) * std::numbers::pi_v<T> * static_cast<T>(k) / static_cast<T>(len);
    const std::complex<T> w = std::polar(T(1), angle);
    std::complex<T> c(1, 0);
    for (std::size_t i = 0; i < p0.size(); ++i) c *= p0[i] + p1[i] * w;
    s[2 * k] = c.real();
    s[2 * k + 1] = c.imag();
  }
  return s;
}

template <class T>
std::vector<T> fftw_inverse_real(const std::vector<T>& spectrum, int len) {
  using F = fftw<T>;
  const int half = len / 2 + 1;
  buffer<typename F::complex> in(half);
  buffer<T> out(len);
  for (int k = 0; k < half; ++k) {
    in.ptr[k][0] = spectrum[2 * k];
    in.ptr[k][1] = spectrum[2 * k + 1];
  }
  F::c2r(len, in.ptr, out.ptr);
  std::vector<T> r(static_cast<std::size_t>(len));
  for (int i = 0; i < len; ++i) r[i] = out.ptr[i] / static_cast<T>(len);
  return r;
}

}  // namespace

template <class T>
std::vector<T> fft_convolve(fft_library lib, const std::vector<T>& p, const std::vector<T>& q) {
  return lib == fft_library::fftw ? fftw_convolve(p, q) : detail::cufft_convolve(p, q);
}

template <class T>
std::vector<T> fft_poisson_binomial(fft_library lib, const std::vector<T>& p0,
                                    const std::vector<T>& p1) {
  const int len = static_cast<int>(p0.size()) + 1;
  const std::vector<T> s = cf_spectrum(p0, p1);
  return lib == fft_library::fftw ? fftw_inverse_real(s, len) : detail::cufft_inverse_real(s, len);
}

template std::vector<float> fft_convolve(fft_library, const std::vector<float>&,
                                         const std::vector<float>&);
template std::vector<double> fft_convolve(fft_library, const std::vector<double>&,
                                          const std::vector<double>&);
template std::vector<float> fft_poisson_binomial(fft_library, const std::vector<float>&,
                                                 const std::vector<float>&);
template std::vector<double> fft_poisson_binomial(fft_library, const std::vector<double>&,
                                                  const std::vector<double>&);

}  // namespace marg::accuracy
