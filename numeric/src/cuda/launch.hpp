// Kernel dispatch of the CUDA backend: picks the kernel variant by operation,
// size and batch and launches it. Not installed.
#pragma once

#include <cuda_runtime.h>

#include "../detail/banded.hpp"
#include "kernels/correlation.cuh"

namespace marg::detail::cuda {

/// Launches the banded product on `stream`. Every pointer in `x` must be
/// readable (inputs) or writable (output) by kernels: device or managed memory.
/// No synchronization.
/// @param x the checked product
/// @param stream the stream every launch goes to
template <class T>
void launch_banded(const banded_args<T>& x, cudaStream_t stream);

/// Kernel variants: warp per problem (kernels/warp.cuh) and the tiled direct
/// kernel with small, mid and large tiles (kernels/tiled.cuh).
enum class kernel_variant { warp, small, mid, large };

/// Launches one kernel variant (explicitly instantiated in kernels/variants.cu).
/// @param v the variant
/// @param c the correlation
/// @param split tiled variants: blocks that share the taps of one output tile
///        (1..8, a cluster); ignored by the warp variant
/// @param stream the stream
template <class T>
void launch_variant(kernel_variant v, const correlation_view<T>& c, int split, cudaStream_t stream);

/// The tap split launch_banded uses with variant `v` (1 for the warp variant).
/// @param v the variant
/// @param c the correlation
/// @return blocks per output tile, 1..8
template <class T>
int tap_split_of(kernel_variant v, const correlation_view<T>& c);

}  // namespace marg::detail::cuda
