// Streams of the CUDA backend: the per-thread libmarg stream, stream
// resolution, bookkeeping of libmarg work per stream, prefetch. Not installed.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include <marg/numeric/stream.hpp>

namespace marg::detail::cuda {

/// @param stream a view; the default names the calling thread's libmarg stream
/// @return the cudaStream_t (the thread's stream is created on first use)
/// @throws marg::cuda_error when the stream cannot be created
cudaStream_t resolve(stream_view stream);

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
