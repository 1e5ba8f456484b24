// The CUDA planner's cost model: a modelled time for every kernel variant on
// any device, from the device's description (multiprocessors, clock, memory
// bandwidth) and a few coefficients per variant that scripts/fit-cost-model
// fits to marg_tune --dump measurements (cost_model_fit.hpp): one table of
// them for devices with the Hopper features, fitted to their measurements, and
// one fitted to every device measured, for any other. choose() asks it on
// devices the preference rules are not fitted to, and to guard the rules'
// plans where they are. Not installed.
#pragma once

#include "features.hpp"
#include "kernels/correlation.cuh"
#include "plan.hpp"

namespace marg::detail::cuda {

/// What the model reads of one variant running a correlation on a device.
/// A variant's work comes in units (an output tile of a problem, a problem,
/// a group of problems), `resident` of which a multiprocessor holds at once:
/// the units run in waves over the resident slots, one unit's stages wait on
/// memory one after another, and the units that share a multiprocessor
/// share its arithmetic and its loads.
struct cost_terms {
  /// waves of units over the multiprocessors' resident slots (at least 1)
  double waves = 1;
  /// waves x one unit's serial stages, at 1000 cycles a stage, in µs
  double wave_steps_us = 0;
  /// units per multiprocessor x one unit's multiply-adds per warp, at one a
  /// cycle, in µs
  double load_macs_us = 0;
  /// units per multiprocessor x the elements one unit loads, at one a cycle,
  /// in µs
  double load_elems_us = 0;
  /// bytes of the operands and the result at the memory bandwidth, in µs
  double bytes_us = 0;
  /// 1 where a tap split sums its partial tiles through scratch with a
  /// second kernel (a device without clusters), else 0
  double split_sums = 0;
  /// where split_sums: the partial tiles written to scratch and read back
  /// and the outputs written, at the memory bandwidth, in µs
  double split_bytes_us = 0;
};

/// One variant's fitted coefficients: modelled µs = fixed + per_wave waves +
/// per_step wave_steps_us + per_mac load_macs_us + per_elem load_elems_us +
/// per_byte bytes_us (all >= 0), plus the split's sum (split_sum_coefficients).
struct cost_coefficients {
  /// false where the fit saw no measurement of the variant: the model never
  /// picks it
  bool fitted = false;
  /// launch and fixed cost, µs
  double fixed = 0;
  /// cost of one wave, µs
  double per_wave = 0;
  /// weight of the serial stages
  double per_step = 0;
  /// cycles per multiply-add
  double per_mac = 0;
  /// cycles per element loaded
  double per_elem = 0;
  /// memory-bound share: 1 streams at the full bandwidth
  double per_byte = 0;
};

/// What summing a tap split through scratch adds, the same for every
/// variant: fixed split_sums + per_byte split_bytes_us (both >= 0).
struct split_sum_coefficients {
  /// the second kernel and the scratch's allocation, µs
  double fixed = 0;
  /// the scratch traffic's share of the bandwidth (1: the full bandwidth)
  double per_byte = 0;
};

/// The model's terms for variant `v` with tap split `split` on `d`.
/// @param v the variant
/// @param c the correlation
/// @param split blocks per output tile (tap_split_of)
/// @param d the device
/// @return the terms
template <class T>
cost_terms cost_terms_of(kernel_variant v, const correlation_view<T>& c, int split,
                         const device_features& d);

/// The modelled time of variant `v` with `split` on `d`.
/// @param v the variant
/// @param c the correlation
/// @param split blocks per output tile (tap_split_of)
/// @param d the device
/// @return µs, or a negative value where the model has no coefficients for `v`
template <class T>
double modelled_us(kernel_variant v, const correlation_view<T>& c, int split,
                   const device_features& d);

/// The variant the model times fastest among those `d` supports for `c`
/// (ties: the earlier variant), with tap_split_of's split.
/// @param c the correlation
/// @param d the device
/// @return the plan
template <class T>
kernel_plan modelled_plan(const correlation_view<T>& c, const device_features& d);

}  // namespace marg::detail::cuda
