// CUDA backend entry: resolves the stream, stages operands that kernels
// cannot read, hands device-readable pointers to launch_banded.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "../detail/banded.hpp"
#include "cuda_check.hpp"
#include "launch.hpp"

namespace marg::detail::cuda {
namespace {

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
  launch_banded(x, stream);
  if (host_out != nullptr) {
    MARG_CUDA_TRY(cudaMemcpyAsync(host_out, so->ptr, so->bytes, cudaMemcpyDeviceToHost, stream));
    // the caller reads host memory right after return
    MARG_CUDA_TRY(cudaStreamSynchronize(stream));
  }
}

template void run<float>(const banded_args<float>&, stream_view);
template void run<double>(const banded_args<double>&, stream_view);

}  // namespace marg::detail::cuda
