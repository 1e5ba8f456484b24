// The CUDA runtime calls of the device tests (see cuda_memory.hpp).
#include "cuda_memory.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace marg::test::cuda {
namespace {

void check(cudaError_t s, const char* what) {
  if (s != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(s) + ": " +
                             cudaGetErrorString(s));
}

// makes `device` current for the scope
class on_device {
 public:
  explicit on_device(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
  }
  on_device(const on_device&) = delete;
  on_device& operator=(const on_device&) = delete;
  ~on_device() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

}  // namespace

void* malloc_on(int device, std::size_t bytes) {
  const on_device on(device);
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}

void free_device(void* p) {
  check(cudaFree(p), "cudaFree");
}

// the device of device memory at p, or -1
int device_of(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return a.type == cudaMemoryTypeDevice ? a.device : -1;
}

void copy(void* dst, const void* src, std::size_t bytes) {
  // on the device memory's device, complete before returning: a pageable
  // cudaMemcpy may return before its DMA ends, and a later call on a
  // non-blocking stream is not ordered after it
  int dev = device_of(dst);
  if (dev < 0) dev = device_of(src);
  if (dev < 0) dev = current();
  const on_device on(dev);
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void* stream_on(int device) {
  const on_device on(device);
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}

void destroy_stream(void* stream) {
  check(cudaStreamDestroy(static_cast<cudaStream_t>(stream)), "cudaStreamDestroy");
}

void set_current(int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
}

int current() {
  int d = -1;
  check(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

}  // namespace marg::test::cuda
