// What the pool knows about its own mappings, for the CUDA backend: whether an
// address lies in a pool chunk answers "managed memory?" without a driver call
// (cudaPointerGetAttributes costs a few microseconds per operand). Not
// installed.
#pragma once

namespace marg::detail {

/// The memory behind an address, as far as the pool knows it.
enum class pool_memory {
  none,    ///< not in a pool chunk (ask the driver)
  host,    ///< in a pool chunk mapped with mmap (no usable GPU)
  managed  ///< in a pool chunk of CUDA managed memory
};

/// Thread-safe; takes the pool's chunk lock shared, never creates the pool.
/// @param p any address (nullptr gives none)
/// @return the kind of pool chunk holding `p`, or none
pool_memory pool_memory_of(const void* p) noexcept;

}  // namespace marg::detail
