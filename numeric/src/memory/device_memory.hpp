// What the pool needs from CUDA, without CUDA types: managed memory, free
// device memory, streams and events. Defined in src/cuda/memory.cu and
// src/cuda/stream.cu in CUDA builds and in src/memory/no_device.cpp
// otherwise. Not installed.
#pragma once

#include <cstddef>

namespace marg::detail::device {

/// Most devices libmarg serves in one process (indices 0 .. max_devices - 1).
inline constexpr int max_devices = 64;

/// @return true when pool memory is CUDA managed memory (a GPU is usable)
bool usable() noexcept;

/// @return usable(), asked once per process (the answer never changes and
///         callers ask on every call)
inline bool gpu_usable() noexcept {
  static const bool u = usable();
  return u;
}

/// @param bytes size
/// @return managed memory, or nullptr when CUDA refuses
void* alloc_managed(std::size_t bytes) noexcept;

/// Frees managed memory (errors, e.g. at process exit, are ignored).
/// @param p from alloc_managed
void free_managed(void* p) noexcept;

/// @return bytes free on the current device (0 without one)
std::size_t free_memory() noexcept;

/// @return the calling thread's current device (0 without a usable GPU)
/// @throws marg::cuda_error
int current();

/// Makes `device` the calling thread's current device.
/// @param device a device index
/// @throws marg::cuda_error
void make_current(int device);

/// Makes `device` current again, ignoring errors (for destructors).
/// @param device a device index
void restore_current(int device) noexcept;

/// @param stream a resolved cudaStream_t
/// @return the device `stream` belongs to (0 without a usable GPU)
/// @throws marg::cuda_error
int stream_device(void* stream);

/// @param handle a cudaStream_t, or nullptr for the calling thread's stream
/// @return the cudaStream_t itself (the thread's stream created on first use)
/// @throws marg::cuda_error when the thread's stream cannot be created
void* resolve_stream(void* handle);

/// @param stream a resolved cudaStream_t
/// @return true for a stream libmarg created (a thread's stream); libmarg
///         never destroys those
bool own_stream(void* stream) noexcept;

/// Records an event on `stream` (events are recycled).
/// @param stream a resolved cudaStream_t
/// @return the event (made on the stream's device), or nullptr when
///         recording failed
void* record_event(void* stream) noexcept;

/// @param event from record_event
/// @return true once the work before the event has finished (or failed)
bool event_done(void* event) noexcept;

/// Blocks until the event's work has finished, then recycles the event.
/// @param event from record_event
void wait_and_release_event(void* event) noexcept;

/// Recycles a finished event.
/// @param event from record_event, event_done(event) true
void release_event(void* event) noexcept;

/// Blocks the host until all work on `stream` has finished (errors ignored).
/// @param stream a resolved cudaStream_t
void synchronize_quietly(void* stream) noexcept;

/// Blocks the host until all work on `stream` has finished.
/// @param stream a cudaStream_t or nullptr (the thread's stream)
/// @throws marg::cuda_error
void synchronize(void* stream);

/// See marg::detail::prepare_host_access.
/// @param ptr first byte
/// @param bytes number of bytes
/// @param stream a cudaStream_t or nullptr (the thread's stream)
/// @throws marg::cuda_error
void host_access(const void* ptr, std::size_t bytes, void* stream);

/// Migrates managed memory on `stream`; a no-op on other memory.
/// @param ptr first byte
/// @param bytes number of bytes
/// @param to_device true: to the stream's device; false: to the host
/// @param stream a cudaStream_t or nullptr (the thread's stream)
/// @throws marg::cuda_error
void prefetch(const void* ptr, std::size_t bytes, bool to_device, void* stream);

/// Copies `count` elements of `size` bytes from `src` (every `src_pitch`
/// bytes) to `dst` (every `dst_pitch` bytes), each side host, managed or
/// device memory; synchronous with respect to the host. Without a usable GPU
/// both sides must be host memory (a plain copy, no CUDA call).
/// @param dst first destination element
/// @param dst_pitch bytes between destination elements
/// @param src first source element
/// @param src_pitch bytes between source elements
/// @param size bytes of one element
/// @param count number of elements
/// @throws marg::cuda_error
void copy_strided(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                  std::size_t size, std::size_t count);

/// Puts `stream` in capture mode (CUDA stream capture, this thread only):
/// the libmarg calls that follow on it are recorded, not run; managed
/// operands are noted for prefetch at replay instead of being prefetched.
/// @param stream a cudaStream_t or nullptr (the thread's stream)
/// @throws marg::invalid_argument when `stream` is already capturing
/// @throws marg::cuda_error
void begin_capture(void* stream);
/// Ends the capture begun by begin_capture on `stream`.
/// @param stream as given to begin_capture
/// @param keep false: abandon the recording (after an error)
/// @return the recording, or nullptr when !keep
/// @throws marg::cuda_error when the capture was invalidated or cannot be
///         instantiated (only when keep)
void* end_capture(void* stream, bool keep);
/// Queues a recording from end_capture on `stream`.
/// @param graph from end_capture
/// @param stream a cudaStream_t or nullptr (the thread's stream)
/// @throws marg::cuda_error
void replay(const void* graph, void* stream);
/// Frees a recording from end_capture.
/// @param graph from end_capture, or nullptr
void destroy_graph(void* graph) noexcept;

}  // namespace marg::detail::device
