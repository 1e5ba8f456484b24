// Kernel dispatch of the CUDA backend: picks the kernel variant by operation,
// size and batch and launches it. Not installed.
#pragma once

#include <cuda_runtime.h>

#include "../detail/banded.hpp"
#include "features.hpp"
#include "kernels/correlation.cuh"
#include "plan.hpp"

namespace marg::detail::cuda {

/// Launches the banded product on `stream`. Every pointer in `x` must be
/// readable (inputs) or writable (output) by kernels: device or managed memory.
/// No synchronization.
/// @param x the checked product
/// @param stream the stream every launch goes to
template <class T>
void launch_banded(const banded_args<T>& x, cudaStream_t stream);

/// Whether variant `v` can compute `c` on this device (the tiled and warp
/// variants take every correlation; see mma_supports and lane_supports).
/// @param v the variant
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true when launch_variant(v, c, ...) may be used
template <class T>
bool variant_supports(kernel_variant v, const correlation_view<T>& c,
                      const device_features& d = current_device_features());

/// Whether the tensor-core variant computes `c` exactly (to the type's
/// accuracy) on this device; launching it on a `c` it does not support is an
/// error.
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true when launch_variant(kernel_variant::mma, c, ...) may be used
bool mma_supports(const correlation_view<float>& c,
                  const device_features& d = current_device_features());
/// @copydoc mma_supports(const correlation_view<float>&, const device_features&)
bool mma_supports(const correlation_view<double>& c,
                  const device_features& d = current_device_features());

/// Whether launch_banded takes the tensor-core variant for `c` (faster than
/// the tiled and warp variants for this shape).
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true to dispatch `c` to the mma variant
bool mma_preferred(const correlation_view<float>& c,
                   const device_features& d = current_device_features());
/// @copydoc mma_preferred(const correlation_view<float>&, const device_features&)
bool mma_preferred(const correlation_view<double>& c,
                   const device_features& d = current_device_features());

/// Blocks sharing the taps of one output tile of the mma variant.
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return the split the mma variant uses for `c` (>= 1)
int mma_split(const correlation_view<float>& c,
              const device_features& d = current_device_features());
/// @copydoc mma_split(const correlation_view<float>&, const device_features&)
int mma_split(const correlation_view<double>& c,
              const device_features& d = current_device_features());

/// The shape of a tile kernel's block, as the cost model sees it.
struct tile_shape {
  int outputs;   ///< outputs per tile
  int stage;     ///< taps per shared-memory stage
  int warps;     ///< warps per block
  int resident;  ///< blocks a multiprocessor holds (the launch bounds' minimum)
};

/// @tparam C a tile kernel's tuning (TJ outputs, KC taps a stage, threads,
///         min_blocks)
/// @return its shape
template <class C>
constexpr tile_shape tile_shape_of() {
  return {C::TJ, C::KC, C::threads / 32, C::min_blocks};
}

/// The tile the mma variant runs `c` with (launch_mma's choice of tuning).
/// @param c the correlation
/// @return its shape
tile_shape mma_tile(const correlation_view<float>& c);
/// @copydoc mma_tile(const correlation_view<float>&)
tile_shape mma_tile(const correlation_view<double>& c);

/// Launches the tensor-core variant (requires mma_supports(c)).
/// @param c the correlation
/// @param split blocks per output tile (see mma_split)
/// @param stream the stream
void launch_mma(const correlation_view<float>& c, int split, cudaStream_t stream);
/// @copydoc launch_mma(const correlation_view<float>&, int, cudaStream_t)
void launch_mma(const correlation_view<double>& c, int split, cudaStream_t stream);

/// Whether the lane-per-problem variant can run `c` on this device: the
/// kernels with a group output slab (at most lane_tuning::max_taps taps) or
/// the long-row kernel (kernels/lane_long.cuh), whichever's shared memory
/// fits.
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true when launch_variant(kernel_variant::lane, c, ...) may be used
bool lane_supports(const correlation_view<float>& c,
                   const device_features& d = current_device_features());
/// @copydoc lane_supports(const correlation_view<float>&, const device_features&)
bool lane_supports(const correlation_view<double>& c,
                   const device_features& d = current_device_features());

/// Whether the lane kernels with a group output slab (kernels/lane.cuh,
/// lane_bulk.cuh) can run `c`: the kernels the cost model of float
/// convolutions describes (launch_banded.cu, conv_model).
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true when launch_lane runs `c` on one of them
bool lane_slab_fits(const correlation_view<float>& c,
                    const device_features& d = current_device_features());
/// @copydoc lane_slab_fits(const correlation_view<float>&, const device_features&)
bool lane_slab_fits(const correlation_view<double>& c,
                    const device_features& d = current_device_features());

/// Whether launch_banded takes the lane-per-problem variant for `c` (large
/// batches of up to 256 taps; asked after conv_model, the cost model of float
/// convolutions of 32-256 taps and 319-1023 outputs in launch_banded.cu,
/// which picks among lane, warp and pairs itself; float batches of longer
/// rows that fill the GPU's waves on the long-row kernel; docs/kernel-notes.md has the
/// measurements).
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true to dispatch `c` to the lane variant
bool lane_preferred(const correlation_view<float>& c,
                    const device_features& d = current_device_features());
/// @copydoc lane_preferred(const correlation_view<float>&, const device_features&)
bool lane_preferred(const correlation_view<double>& c,
                    const device_features& d = current_device_features());

/// Launches the lane-per-problem variant (requires lane_supports(c)).
/// @param c the correlation
/// @param stream the stream
void launch_lane(const correlation_view<float>& c, cudaStream_t stream);
/// @copydoc launch_lane(const correlation_view<float>&, cudaStream_t)
void launch_lane(const correlation_view<double>& c, cudaStream_t stream);

/// Whether the paired-block variant can run `c` (at most 1024 outputs per
/// problem; its shared memory fits without the opt-in).
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true when launch_variant(kernel_variant::pairs, c, ...) may be used
bool pairs_supports(const correlation_view<float>& c,
                    const device_features& d = current_device_features());
/// @copydoc pairs_supports(const correlation_view<float>&, const device_features&)
bool pairs_supports(const correlation_view<double>& c,
                    const device_features& d = current_device_features());

/// Whether the paired-block variant is the fastest for `c` (float batches
/// of full convolutions of 319-1024 outputs from 160 taps, and of gradients
/// of 320-512); launch_banded asks it after conv_model, its cost model of
/// float convolutions of 32-256 taps and 319-1023 outputs, and after
/// lane_preferred (docs/kernel-notes.md has the
/// measurements).
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true when the pairs variant is the one to dispatch `c` to
bool pairs_preferred(const correlation_view<float>& c,
                     const device_features& d = current_device_features());
/// @copydoc pairs_preferred(const correlation_view<float>&, const device_features&)
bool pairs_preferred(const correlation_view<double>& c,
                     const device_features& d = current_device_features());

/// Launches the paired-block variant (requires pairs_supports(c)).
/// @param c the correlation
/// @param stream the stream
void launch_pairs(const correlation_view<float>& c, cudaStream_t stream);
/// @copydoc launch_pairs(const correlation_view<float>&, cudaStream_t)
void launch_pairs(const correlation_view<double>& c, cudaStream_t stream);

/// Whether the wide-tile variant can run `c`: one problem, unit strides,
/// 16-byte aligned operands, at most 4096 taps (float) or 2048 (double).
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true when launch_variant(kernel_variant::wide, c, ...) may be used
bool wide_supports(const correlation_view<float>& c,
                   const device_features& d = current_device_features());
/// @copydoc wide_supports(const correlation_view<float>&, const device_features&)
bool wide_supports(const correlation_view<double>& c,
                   const device_features& d = current_device_features());

/// Whether launch_banded takes the wide-tile variant for `c`: single
/// problems of up to 2048 taps and 64-32768 outputs, float problems of up
/// to 4096 taps and problems of 512-2048 taps beyond 32768 outputs while
/// taps x outputs stays small enough, where it is faster than the kernel
/// the dispatch takes otherwise (the rule and its exceptions: wide.cu's
/// wide_dispatch; docs/kernel-notes.md has the
/// measurements).
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return true to dispatch `c` to the wide variant
bool wide_preferred(const correlation_view<float>& c,
                    const device_features& d = current_device_features());
/// @copydoc wide_preferred(const correlation_view<float>&, const device_features&)
bool wide_preferred(const correlation_view<double>& c,
                    const device_features& d = current_device_features());

/// Launches the wide-tile variant (requires wide_supports(c)).
/// @param c the correlation
/// @param stream the stream
void launch_wide(const correlation_view<float>& c, cudaStream_t stream);
/// @copydoc launch_wide(const correlation_view<float>&, cudaStream_t)
void launch_wide(const correlation_view<double>& c, cudaStream_t stream);

/// One kernel variant in the registry (kernels/variants.cu): what it can
/// compute and how it launches, nothing about when it is preferred (that is
/// choose()'s, launch_banded.cu).
template <class T>
struct variant_entry {
  /// the variant
  kernel_variant variant;
  /// its name (variant_name)
  const char* name;
  /// may split a tile's taps over the blocks of a cluster (where the device
  /// has the Hopper features)
  bool splits_taps;
  /// whether it computes `c` on device `d`: the device's features, the
  /// value type, the batch, strides, alignment, lengths and shared memory
  bool (*supports)(const correlation_view<T>& c, const device_features& d);
  /// launches it on `stream`; `split` blocks per tile where splits_taps
  void (*launch)(const correlation_view<T>& c, int split, cudaStream_t stream);
};

/// @return every variant's entry, in the order of kernel_variant
template <class T>
const variant_entry<T>* variant_registry();

/// @param v a variant
/// @return its entry in variant_registry()
template <class T>
const variant_entry<T>& entry_of(kernel_variant v) {
  return variant_registry<T>()[static_cast<int>(v)];
}

/// Launches one kernel variant (its registry entry's launch).
/// @param v the variant
/// @param c the correlation
/// @param split tiled variants: blocks that share the taps of one output tile
///        (1..8, a cluster, with the Hopper features; 1..16, through scratch,
///        without); ignored by the untiled variants
/// @param stream the stream
template <class T>
void launch_variant(kernel_variant v, const correlation_view<T>& c, int split, cudaStream_t stream);

/// The tap split launch_banded uses with variant `v` (1 for the warp and lane
/// variants).
/// @param v the variant
/// @param c the correlation
/// @param d the device (default: the current one)
/// @return blocks per output tile, 1..8 with the Hopper features, 1..16 without
template <class T>
int tap_split_of(kernel_variant v, const correlation_view<T>& c,
                 const device_features& d = current_device_features());

}  // namespace marg::detail::cuda
