// FFT baselines of the accuracy study: convolution and the Poisson-binomial
// by the characteristic function (DFT-CF), each entirely in precision T.
// FFTW on the host (fft_fftw.cpp); cuFFT on the GPU (fft_cufft.cu, built
// only with the CUDA backend).
#pragma once

#include <string>
#include <vector>

namespace marg::accuracy {

/// Which FFT library computes the baseline.
enum class fft_library { fftw, cufft };

/// @return true when this build contains the cuFFT baseline
bool cufft_compiled() noexcept;

/// @return the name of CUDA device 0, or "" without CUDA or GPU
std::string gpu_name();

/// Full convolution p * q (length m + n - 1) by real FFTs of length m + n - 1.
/// @param lib the FFT library
/// @param p first operand
/// @param q second operand
/// @return the convolution as the FFT computes it (may hold negative values)
template <class T>
std::vector<T> fft_convolve(fft_library lib, const std::vector<T>& p, const std::vector<T>& q);

/// The Poisson-binomial pmf of independent Bernoulli terms by DFT-CF: the
/// characteristic function prod_i (q_i + p_i w^k), w = exp(-2 pi i / (N+1)),
/// evaluated in complex T on the host, then one inverse real FFT of length N + 1.
/// @param lib the FFT library of the inverse transform
/// @param p0 P(term i = 0), one value per term
/// @param p1 P(term i = 1), one value per term
/// @return N + 1 probabilities as the FFT computes them
template <class T>
std::vector<T> fft_poisson_binomial(fft_library lib, const std::vector<T>& p0,
                                    const std::vector<T>& p1);

namespace detail {
/// cuFFT implementations (fft_cufft.cu); throw std::runtime_error without CUDA.
/// @param p first operand
/// @param q second operand
/// @return the convolution
template <class T>
std::vector<T> cufft_convolve(const std::vector<T>& p, const std::vector<T>& q);
/// @param spectrum the N/2 + 1 lowest Fourier coefficients, interleaved re/im
/// @param length N + 1, the length of the real output
/// @return the inverse real transform divided by length
template <class T>
std::vector<T> cufft_inverse_real(const std::vector<T>& spectrum, int length);
}  // namespace detail

}  // namespace marg::accuracy
