// Float correlation for batches of small problems (up to 1024 outputs and
// 1024 taps each) on Hopper's warpgroup tensor-core instruction with float
// accuracy: 3xTF32 with all four products in one wgmma.m64n32k8 per k-step
// (kernels/wgmma_batch.cu, bench/notes/wgmma_batch.md). numeric/CMakeLists.txt
// compiles kernels/wgmma_*.cu for sm_90a machine code plus compute_90 PTX; the
// kernel body exists only in the sm_90a code (a trap stub elsewhere), so
// nothing may be launched unless wgmma_batch_supports(c). Not installed.
#pragma once

#include <cuda_runtime.h>

#include "correlation.cuh"

namespace marg::detail::cuda {

/// Whether the batched wgmma variant computes `c`: the sm_90a kernel loads on
/// this device, at most 1024 outputs and 1024 taps per problem, at least one
/// tap, x element and output, batch >= 1 (any steps).
/// @param c the correlation
/// @return true when launch_wgmma_batch(c, ...) may be used
bool wgmma_batch_supports(const correlation_view<float>& c);

/// Whether the batched wgmma variant measured faster than the others for `c`
/// (H200, bench/notes/wgmma_batch.md).
/// @param c the correlation
/// @return true when the variant is the one to dispatch `c` to
bool wgmma_batch_preferred(const correlation_view<float>& c);

/// Launches the batched wgmma variant (requires wgmma_batch_supports(c)): one
/// warpgroup per problem; deterministic, no workspace.
/// @param c the correlation
/// @param stream the stream
void launch_wgmma_batch(const correlation_view<float>& c, cudaStream_t stream);

}  // namespace marg::detail::cuda
