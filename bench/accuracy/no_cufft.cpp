// Stand-ins for the cuFFT baselines in builds without the CUDA backend.
#include <stdexcept>
#include <string>
#include <vector>

#include "fft.hpp"

namespace marg::accuracy {

bool cufft_compiled() noexcept {
  return false;
}

std::string gpu_name() {
  return "";
}

namespace detail {

template <class T>
std::vector<T> cufft_convolve(const std::vector<T>&, const std::vector<T>&) {
  throw std::runtime_error("cuFFT baseline: this build has no CUDA backend (MARG_CUDA=ON)");
}

template <class T>
std::vector<T> cufft_inverse_real(const std::vector<T>&, int) {
  throw std::runtime_error("cuFFT baseline: this build has no CUDA backend (MARG_CUDA=ON)");
}

template std::vector<float> cufft_convolve(const std::vector<float>&, const std::vector<float>&);
template std::vector<double> cufft_convolve(const std::vector<double>&, const std::vector<double>&);
template std::vector<float> cufft_inverse_real(const std::vector<float>&, int);
template std::vector<double> cufft_inverse_real(const std::vector<double>&, int);

}  // namespace detail
}  // namespace marg::accuracy
