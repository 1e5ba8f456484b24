/// @file pool.hpp
/// @brief The memory pool every libmarg array comes from: CUDA managed memory
/// when a GPU is present, host memory otherwise.
#pragma once

#include <cstddef>

#include <marg/numeric/stream.hpp>

namespace marg {

/// Alignment of every block the pool returns, in bytes.
inline constexpr std::size_t pool_alignment = 256;

/// Allocates from the pool.
/// @param bytes size of the block; 0 gives nullptr
/// @param stream the stream the block is first used on
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

/// @return the current counters
pool_statistics pool_stats();

/// Sets the cap on reserved bytes (the environment variable MARG_POOL_LIMIT,
/// bytes with an optional K, M or G suffix, sets the initial value).
/// @param bytes the new cap (>= 1)
void set_pool_limit(std::size_t bytes);

/// @return the cap on reserved bytes
std::size_t pool_limit();

}  // namespace marg
