// Float correlation on Hopper's warpgroup tensor-core instruction (wgmma,
// sm_90a) with float accuracy: 3xTF32 on wgmma.m64n128k8 (kernels/wgmma_tf32.cu,
// bench/notes/wgmma.md). The kernel exists only in builds that carry sm_90a
// machine code (CMAKE_CUDA_ARCHITECTURES with 90a); elsewhere
// wgmma_tf32_available() is false and nothing may be launched. Not installed.
#pragma once

#include <cuda_runtime.h>

#include "correlation.cuh"

namespace marg::detail::cuda {

/// Whether the current device runs the wgmma kernel: this build carries its
/// sm_90a machine code and the device is of compute capability 9.0.
/// @return true when launch_wgmma_tf32 may be used
bool wgmma_tf32_available();

/// Whether the wgmma variant computes `c`: available, and the partial-tile
/// workspace of its split (batch x units x 32 KiB) stays under 256 MiB.
/// @param c the correlation
/// @return true when launch_wgmma_tf32(c, ...) may be used
bool wgmma_tf32_supports(const correlation_view<float>& c);

/// Whether the wgmma variant is measured faster than the others for `c`
/// (H200, bench/notes/wgmma.md: convolve and gradients at 65536).
/// @param c the correlation
/// @return true for single large problems: >= 65536 outputs and >= 32768 taps
bool wgmma_tf32_preferred(const correlation_view<float>& c);

/// Launches the wgmma variant (requires wgmma_tf32_supports(c)): the unit
/// kernel into a stream-ordered workspace (a per-device memory pool that keeps
/// up to the largest workspace asked, <= 256 MiB), then the ordered reduction
/// of the partial tiles into c.out; deterministic.
/// @param c the correlation
/// @param stream the stream
void launch_wgmma_tf32(const correlation_view<float>& c, cudaStream_t stream);

}  // namespace marg::detail::cuda
