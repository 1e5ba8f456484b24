// CUDA backend entry: stages host operands, launches the kernels on the
// caller's stream. Placeholder kernels (thread per output) until the tuned
// variants land; see bench/ for the published progression.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "../detail/banded.hpp"
#include "cuda_check.hpp"

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

// true when a kernel can dereference p (device or managed memory)
bool device_accessible(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

// a device copy of a strided batched operand (host memory is not readable by kernels)
template <class T>
struct staged {
  T* ptr = nullptr;
  std::size_t bytes = 0;
  cudaStream_t stream = nullptr;
  staged(const T* src, std::int64_t extent, cudaStream_t s) : bytes(extent * sizeof(T)), stream(s) {
    MARG_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&ptr), bytes, stream));
    MARG_CUDA_TRY(cudaMemcpyAsync(ptr, src, bytes, cudaMemcpyHostToDevice, stream));
  }
  staged(const staged&) = delete;
  staged& operator=(const staged&) = delete;
  ~staged() { (void)cudaFreeAsync(ptr, stream); }
};

std::int64_t extent(std::int64_t len, int inc, std::int64_t stride, int batch) {
  return (batch - 1) * stride + (len - 1) * inc + 1;
}

}  // namespace

template <class T>
void run(const banded_args<T>& args, stream_view sv) {
  const auto stream = static_cast<cudaStream_t>(sv.handle());
  const auto len = lengths_of(args.op, args.m, args.n);
  banded_args<T> x = args;
  // stage what kernels cannot read
  std::unique_ptr<staged<T>> sa, sb, so;
  if (!device_accessible(x.a)) {
    sa = std::make_unique<staged<T>>(x.a, extent(len.a, x.inc_a, x.stride_a, x.batch), stream);
    x.a = sa->ptr;
  }
  if (!device_accessible(x.b)) {
    sb = std::make_unique<staged<T>>(x.b, extent(len.b, x.inc_b, x.stride_b, x.batch), stream);
    x.b = sb->ptr;
  }
  T* host_out = nullptr;
  if (!device_accessible(x.out)) {
    host_out = x.out;
    so = std::make_unique<staged<T>>(x.out, extent(len.out, x.inc_out, x.stride_out, x.batch),
                                     stream);
    x.out = so->ptr;
  }
  const std::int64_t total = len.out * x.batch;
  const int threads = 256;
  const int blocks =
      static_cast<int>(std::min<std::int64_t>((total + threads - 1) / threads, 65535));
  kernel_banded_naive<T><<<blocks, threads, 0, stream>>>(x, len.out);
  MARG_CHECK_LAUNCH(stream);
  if (host_out != nullptr) {
    MARG_CUDA_TRY(cudaMemcpyAsync(host_out, so->ptr, so->bytes, cudaMemcpyDeviceToHost, stream));
    // the caller reads host memory right after return
    MARG_CUDA_TRY(cudaStreamSynchronize(stream));
  }
}

template void run<float>(const banded_args<float>&, stream_view);
template void run<double>(const banded_args<double>&, stream_view);

}  // namespace marg::detail::cuda
