// Placeholder kernel: thread per output, every problem of a batch in one
// launch. To be replaced by the tuned variants (issue 4).
#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"
#include "launch.hpp"

namespace marg::detail::cuda {
namespace {

template <class T>
__global__ void kernel_banded_naive(banded_args<T> x, std::int64_t len_out) {
  const std::int64_t total = len_out * x.batch;
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = t / len_out, j = t % len_out;
    const T* a = x.a + i * x.stride_a;
    const T* b = x.b + i * x.stride_b;
    T s = 0;
    if (x.op == banded_op::convolve) {
      const std::int64_t lo = j - (x.n - 1) > 0 ? j - (x.n - 1) : 0;
      const std::int64_t hi = j < x.m - 1 ? j : x.m - 1;
      for (std::int64_t k = lo; k <= hi; ++k) s += a[k * x.inc_a] * b[(j - k) * x.inc_b];
    } else {
      const std::int64_t lb = x.op == banded_op::grad_p ? x.n : x.m;
      for (std::int64_t k = 0; k < lb; ++k) s += b[k * x.inc_b] * a[(j + k) * x.inc_a];
    }
    x.out[i * x.stride_out + j * x.inc_out] = s;
  }
}

}  // namespace

template <class T>
void launch_banded(const banded_args<T>& x, cudaStream_t stream) {
  const std::int64_t len_out = lengths_of(x.op, x.m, x.n).out;
  const std::int64_t total = len_out * x.batch;
  const int threads = 256;
  const int blocks =
      static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 65535));
  kernel_banded_naive<T><<<blocks, threads, 0, stream>>>(x, len_out);
  MARG_CHECK_LAUNCH(stream);
}

template void launch_banded<float>(const banded_args<float>&, cudaStream_t);
template void launch_banded<double>(const banded_args<double>&, cudaStream_t);

}  // namespace marg::detail::cuda
