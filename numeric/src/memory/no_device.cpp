// The device interface of a build without the CUDA backend: no GPU, and the
// pool never calls the rest.
#include <cstring>

#include "device_memory.hpp"

namespace marg::detail::device {

bool usable() noexcept {
  return false;
}
void* alloc_managed(std::size_t) noexcept {
  return nullptr;
}
void free_managed(void*) noexcept {}
std::size_t free_memory() noexcept {
  return 0;
}
int current() {
  return 0;
}
void make_current(int) {}
void restore_current(int) noexcept {}
int stream_device(void*) {
  return 0;
}
void* resolve_stream(void* handle) {
  return handle;
}
bool own_stream(void*) noexcept {
  return false;
}
void* record_event(void*) noexcept {
  return nullptr;
}
bool event_done(void*) noexcept {
  return true;
}
void wait_and_release_event(void*) noexcept {}
void release_event(void*) noexcept {}
void synchronize_quietly(void*) noexcept {}
void synchronize(void*) {}
void host_access(const void*, std::size_t, void*) {}
void prefetch(const void*, std::size_t, bool, void*) {}
void copy_strided(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                  std::size_t size, std::size_t count) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(d + i * dst_pitch, s + i * src_pitch, size);
}
void begin_capture(void*) {}
void* end_capture(void*, bool) {
  return nullptr;
}
void replay(const void*, void*) {}
void destroy_graph(void*) noexcept {}

}  // namespace marg::detail::device
