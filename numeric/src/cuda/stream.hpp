// Streams of the CUDA backend: the per-thread libmarg stream, stream
// resolution, bookkeeping of libmarg work per stream, prefetch. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <marg/numeric/stream.hpp>

#include "../memory/device_memory.hpp"

namespace marg::detail::cuda {

/// Most devices libmarg serves in one process (indices 0 .. max_devices - 1).
inline constexpr int max_devices = device::max_devices;

/// @return the calling thread's current device: 0 without asking CUDA when
///         one device is visible, else cudaGetDevice
/// @throws marg::cuda_error
int current_device_id();

/// @param stream a resolved stream
/// @return the device `stream` belongs to (libmarg's own streams are known
///         without a driver call; one visible device answers 0)
/// @throws marg::cuda_error
int device_of(cudaStream_t stream);

/// @param stream a view; the default names the calling thread's libmarg
///        stream of the current device
/// @return the cudaStream_t (the thread's stream is created on first use)
/// @throws marg::cuda_error when the stream cannot be created
cudaStream_t resolve(stream_view stream);

/// The device and stream of one libmarg call: the default stream resolves to
/// the calling thread's stream on its current device; an explicit stream
/// runs the call on the stream's device, made current for the scope's
/// lifetime (kernels launch on the current device) and restored after.
class call_scope {
 public:
  /// @param stream the call's stream argument
  /// @throws marg::cuda_error
  explicit call_scope(stream_view stream);
  /// Restores the device current before the call (errors ignored).
  ~call_scope();
  call_scope(const call_scope&) = delete;
  call_scope& operator=(const call_scope&) = delete;
  cudaStream_t stream = nullptr;  ///< the resolved stream
  int device = 0;                 ///< the device the call runs on

 private:
  int restore_ = -1;
};

/// What memory an operand lives in.
enum class memory_kind { device, managed, host };

/// Classifies an operand of a call running on `device`: pool blocks without
/// a driver call, other pointers through cudaPointerGetAttributes.
/// @param p the operand
/// @param device the call's device
/// @param function the public function, for the error
/// @param operand the operand's name, for the error
/// @return its kind
/// @throws marg::invalid_argument for device memory of another device
memory_kind operand_kind(const void* p, int device, const char* function, const char* operand);

/// @param len elements of one problem's operand
/// @param inc elements between its consecutive elements
/// @param stride elements between problems
/// @param count problems (>= 1)
/// @return the elements a strided batched operand spans, first to last
inline std::int64_t extent(std::int64_t len, int inc, std::int64_t stride, std::int64_t count) {
  return (count - 1) * stride + (len - 1) * inc + 1;
}

/// Records that libmarg queued work on `stream`, so that the next host access
/// ordered on it waits. Call after every launch or prefetch.
/// @param stream a resolved stream
void mark_enqueued(cudaStream_t stream) noexcept;

/// Records that the host learned that queued work completed (a stream or
/// event wait, an event found done, a free): from here on it may touch
/// managed pages, so no device prefetch made before is skipped any more.
void note_host_observed() noexcept;

/// Migrates managed memory to the current device (`to_device`) or to the host,
/// ordered on `stream`. No-op when the device cannot prefetch (no concurrent
/// managed access), and for a device prefetch of bytes that an earlier
/// prefetch on the same libmarg stream already moved to this device with no
/// completion observed by the host since (see note_host_observed).
/// @param ptr first byte of managed memory
/// @param bytes number of bytes
/// @param to_device destination
/// @param stream a resolved stream
/// @throws marg::cuda_error
void prefetch_managed(const void* ptr, std::size_t bytes, bool to_device, cudaStream_t stream);

/// @param stream a resolved stream
/// @return true when `stream` is being captured into a CUDA graph (by
///         capture_calls or by the caller's own stream capture)
/// @throws marg::cuda_error
bool capturing(cudaStream_t stream);

/// During capture_calls on `stream`: notes a managed range that a call
/// would prefetch to the device, for a prefetch before every replay (a graph
/// cannot hold a prefetch).
/// @param ptr first byte of managed memory
/// @param bytes number of bytes
/// @param stream a resolved stream
/// @return true when the range was noted: do not prefetch now
/// @throws std::bad_alloc
bool note_captured_prefetch(const void* ptr, std::size_t bytes, cudaStream_t stream);

}  // namespace marg::detail::cuda
