// Host side of streams: what array and the public API call. Without a usable
// GPU every function returns before any CUDA call.
#include <marg/numeric/array.hpp>
#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>

#include "device_memory.hpp"

namespace marg {
void synchronize(stream_view stream) {
  if (detail::device::gpu_usable()) detail::device::synchronize(stream.handle());
}

void prefetch(const void* ptr, std::size_t bytes, memory_location where, stream_view stream) {
  if (!detail::device::gpu_usable() || ptr == nullptr || bytes == 0) return;
  detail::device::prefetch(ptr, bytes, where == memory_location::device, stream.handle());
}

namespace detail {

void wait_for_stream(stream_view stream) {
  if (detail::device::gpu_usable()) device::host_access(nullptr, 0, stream.handle());
}

void prepare_host_access(const void* ptr, std::size_t bytes, stream_view stream) {
  if (detail::device::gpu_usable()) device::host_access(ptr, bytes, stream.handle());
}

stream_view resolve_stream(stream_view stream) {
  if (!detail::device::gpu_usable() || !stream.is_default()) return stream;
  return stream_view{device::resolve_stream(nullptr)};
}

int device_of(stream_view stream) {
  if (!detail::device::gpu_usable()) return -1;
  return stream.is_default() ? device::current() : device::stream_device(stream.handle());
}

}  // namespace detail
}  // namespace marg
