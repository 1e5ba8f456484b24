/// @file pool.hpp
/// @brief The memory pool every libmarg array comes from: CUDA managed memory
/// when a GPU is present, host memory otherwise.
///
/// The pool is a private jemalloc arena whose extents come from
/// `cudaMallocManaged` (or `mmap` without a GPU) and go back to CUDA when the
/// pool shrinks; each host thread has its own cache, and a block may be freed
/// by any thread. With a GPU, allocation is stream-ordered (as in rmm): a
/// block freed on stream s is reused at once by allocations on s (s orders
/// the old and the new use), and by other streams only after an event
/// recorded on s after the free has completed. A block returned by
/// allocate(bytes, s) may therefore still be in use by work queued earlier on
/// s: host code must synchronize(s) before touching it (marg::array does).
///
/// Each CUDA device has its own pool, with its own cap and counters: a block
/// comes from the pool of its stream's device (the calling thread's current
/// device for the default stream) and goes back to the pool it came from.
/// Without a GPU there is one pool of host memory (device 0).
#pragma once

#include <cstddef>

#include <marg/numeric/stream.hpp>

namespace marg {

/// Alignment of every block the pool returns, in bytes.
inline constexpr std::size_t pool_alignment = 256;

/// Allocates from the pool.
/// @param bytes size of the block; 0 gives nullptr
/// @param stream the stream the block is first used on; its device's pool
///        serves the block
/// @return a block aligned to pool_alignment, readable on the host and, when a
///         GPU is present, on the device
/// @throws marg::out_of_memory past the pool's limit (the pool stays usable)
void* allocate(std::size_t bytes, stream_view stream = {});

/// Returns a block to the pool. Never throws.
/// @param ptr a block from allocate, or nullptr
/// @param bytes the size it was allocated with
/// @param stream the stream its last use was ordered on
void deallocate(void* ptr, std::size_t bytes, stream_view stream = {}) noexcept;

/// Pool counters, in bytes.
struct pool_statistics {
  std::size_t bytes_in_use;    ///< allocated and not yet freed
  std::size_t bytes_reserved;  ///< obtained from the system (in use or cached)
  std::size_t limit;           ///< the cap on bytes_reserved
};

/// @param device a CUDA device, or -1 for the calling thread's current device
///        (without a GPU: 0 or -1, the host pool)
/// @return the counters of that device's pool
/// @throws marg::invalid_argument for a device out of range
pool_statistics pool_stats(int device = -1);

/// Sets the cap on one device's reserved bytes (the environment variable
/// MARG_POOL_LIMIT, bytes with an optional K, M, G or T suffix, sets the
/// initial value of every device's cap; a bad value or one below
/// pool_minimum_limit() makes every allocation throw marg::invalid_argument
/// naming it, until this call overrides it). A cap below bytes_reserved is
/// allowed: allocations that need new memory then throw marg::out_of_memory,
/// and every other call works as documented.
/// @param bytes the new cap (>= 1)
/// @param device a CUDA device, or -1 for the calling thread's current device
/// @throws marg::invalid_argument for a device out of range
void set_pool_limit(std::size_t bytes, int device = -1);

/// @return the bytes the pool's arena reserves for its own metadata when it
///         starts: the smallest MARG_POOL_LIMIT accepted
std::size_t pool_minimum_limit();

/// @param device a CUDA device, or -1 for the calling thread's current device
/// @return the cap on that device's reserved bytes
/// @throws marg::invalid_argument for a device out of range
std::size_t pool_limit(int device = -1);

/// Returns cached memory of every device's pool to the system (to CUDA on a
/// GPU): waits for the events of blocks freed on streams, flushes the calling
/// thread's caches and purges unused extents. Blocks cached by other threads
/// stay cached until those threads allocate, free or exit.
void pool_trim();

/// Where managed memory should be resident.
enum class memory_location {
  host,   ///< host memory (before host reads)
  device  ///< the stream's CUDA device (the current one for the default stream)
};

/// Migrates managed memory, ordered on `stream`. A no-op without a GPU and on
/// memory that is not managed (host or device memory).
/// @param ptr first byte
/// @param bytes number of bytes
/// @param where the destination
/// @param stream the stream the migration is ordered on
/// @throws marg::cuda_error when CUDA reports an error
void prefetch(const void* ptr, std::size_t bytes, memory_location where, stream_view stream = {});

}  // namespace marg
