// A build without CUDA: the GPU cases skip before any of these is called.
#include <stdexcept>

#include "cuda_memory.hpp"

namespace marg::test::cuda {
namespace {
[[noreturn]] void none() {
  throw std::logic_error("tests/devices: a CUDA runtime call in a build without CUDA");
}
}  // namespace

void* malloc_on(int, std::size_t) {
  none();
}
void free_device(void*) {
  none();
}
void copy(void*, const void*, std::size_t) {
  none();
}
void* stream_on(int) {
  none();
}
void destroy_stream(void*) {
  none();
}
void set_current(int) {
  none();
}
int current() {
  none();
}

}  // namespace marg::test::cuda
