// Published baselines, re-implemented for the benchmark only (not in the
// library): the kernel progression of the post "Sums of Discrete Random
// Variables as Banded Matrix Products" (indii.org) as docs/benchmarks.md
// describes it, and a cuFFT convolution.
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

namespace marg::bench {

/// Blog v0: one thread per output, a loop over the band.
template <class T>
void blog_v0(int m, int n, const T* p, const T* q, T* r, int block, cudaStream_t s);

/// Blog v3: a block computes `block` consecutive outputs; chunks of p and the
/// matching window of q are staged in shared memory.
template <class T>
void blog_v3(int m, int n, const T* p, const T* q, T* r, int block, cudaStream_t s);

/// Blog v4: one warp per output, lanes stride the band, shuffle reduction.
template <class T>
void blog_v4(int m, int n, const T* p, const T* q, T* r, int block, cudaStream_t s);

/// Full convolution through cuFFT (zero-padded real transforms).
template <class T>
class fft_convolver {
 public:
  /// @param m length of p
  /// @param n length of q
  /// @param s stream
  fft_convolver(int m, int n, cudaStream_t s);
  ~fft_convolver();
  fft_convolver(const fft_convolver&) = delete;
  fft_convolver& operator=(const fft_convolver&) = delete;
  /// r = p * q (m + n - 1 outputs)
  /// @param p first operand (device)
  /// @param q second operand (device)
  /// @param r output (device)
  void run(const T* p, const T* q, T* r);

 private:
  int m_, n_, size_;
  cudaStream_t stream_;
  cufftHandle fwd_ = 0, inv_ = 0;
  T* buf_p_ = nullptr;
  T* buf_q_ = nullptr;
  void* spec_p_ = nullptr;
  void* spec_q_ = nullptr;
};

}  // namespace marg::bench
