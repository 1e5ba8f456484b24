// Float correlation on Hopper's warpgroup tensor-core instruction (wgmma,
// sm_90a) with float accuracy: 3xTF32 on wgmma.m64n128k8 (kernels/wgmma_tf32.cu,
// docs/kernel-notes.md). numeric/CMakeLists.txt compiles kernels/wgmma_*.cu
// for sm_90a machine code plus compute_90 PTX; the kernel body exists only in
// the sm_90a code (a trap stub elsewhere), so wgmma_tf32_available() is false
// on other devices and nothing may be launched there. Not installed.
#pragma once

#include <cuda_runtime.h>

#include "../features.hpp"
#include "correlation.cuh"

namespace marg::detail::cuda {

/// Whether device `device` runs the wgmma kernel: compute capability 9.0 and
/// the sm_90a machine code loaded (not the stub). Driver calls: read it from
/// current_device_features(), which asks once per thread and device.
/// @param device a device index (the current device)
/// @return true when launch_wgmma_tf32 may be used
bool wgmma_tf32_available(int device);

/// Whether the wgmma variant computes `c`: available, and the partial-tile
/// workspace of its split (batch x units x 32 KiB) stays under 256 MiB.
/// @param c the correlation
/// @param d the device
/// @return true when launch_wgmma_tf32(c, ...) may be used
bool wgmma_tf32_supports(const correlation_view<float>& c, const device_features& d);

/// The wgmma variant's work for `c` on `sms` multiprocessors, as its plan
/// lays it out (the cost model's view): units of `outputs` outputs x 8
/// `k_steps` taps over all problems, `resident` of them per multiprocessor.
struct wgmma_tf32_work {
  std::int64_t units = 0;  ///< units of all problems (0: no plan for `c`)
  int k_steps = 0;         ///< k-steps of 8 taps per unit
  int outputs = 0;         ///< outputs per unit
  int resident = 0;        ///< CTAs per multiprocessor
};

/// @param c the correlation
/// @param sms multiprocessors of the device
/// @return the work of the plan launch_wgmma_tf32 makes for `c`
wgmma_tf32_work wgmma_tf32_work_of(const correlation_view<float>& c, int sms);

/// Whether the wgmma variant is faster than the others for `c`
/// (docs/kernel-notes.md has the measurements).
/// @param c the correlation
/// @return true for single problems of >= 65536 outputs and >= 32768 taps,
///         or of >= 1024 taps with enough multiply-adds on the band
///         (band_macs; the thresholds, lower from 2048 taps, are in
///         wgmma_tf32.cu)
bool wgmma_tf32_preferred(const correlation_view<float>& c);

/// Launches the wgmma variant (requires wgmma_tf32_supports(c)): the unit
/// kernel into a stream-ordered workspace (a per-device memory pool that keeps
/// up to the largest workspace asked, <= 256 MiB, created with the kernel's
/// shared-memory attribute on the device's first call; under stream capture
/// the workspace becomes the graph's allocation and free nodes), then the
/// ordered reduction of the partial tiles into c.out; deterministic.
/// @param c the correlation
/// @param stream the stream
void launch_wgmma_tf32(const correlation_view<float>& c, cudaStream_t stream);

}  // namespace marg::detail::cuda
