// The CUDA backend's planner: which kernel variant runs a banded product,
// and with what tap split, as a pure function of the problem and a
// description of the device (features.hpp). Plain C++: tests call it with
// made-up devices on machines without a GPU. Not installed.
#pragma once

#include "../detail/banded.hpp"
#include "features.hpp"

namespace marg::detail::cuda {

/// Kernel variants: warp per problem (kernels/warp.cuh), the tiled direct
/// kernel with small, mid and large tiles (kernels/tiled.cuh), the
/// tensor-core kernels (mma: 3xTF32 for float in kernels/mma_tf32.cu, FP64
/// DMMA for double in kernels/mma_f64.cu) and lane per problem for large
/// batches of small problems (kernels/lane.cuh), and 3xTF32 on Hopper's
/// warpgroup instruction for single large float problems
/// (kernels/wgmma_tf32.cu, sm_90a only), warp per problem with paired
/// output blocks for batches of mid-sized problems (kernels/pairs.cuh), and
/// the wide tile for single problems of a few thousand outputs
/// (kernels/wide.cuh: the taps split over one block's threads).
enum class kernel_variant { warp, small, mid, large, mma, lane, pairs, wgmma, wide };

/// Every variant, in declaration order.
inline constexpr kernel_variant all_variants[] = {
    kernel_variant::warp,  kernel_variant::small, kernel_variant::mid,
    kernel_variant::large, kernel_variant::mma,   kernel_variant::lane,
    kernel_variant::pairs, kernel_variant::wgmma, kernel_variant::wide};

/// @param v a variant
/// @return its name: "warp", "small", "mid", "large", "mma", "lane", "pairs", "wgmma" or
///         "wide" ("?" for a value outside the enumeration)
constexpr const char* variant_name(kernel_variant v) {
  switch (v) {
    case kernel_variant::warp:
      return "warp";
    case kernel_variant::small:
      return "small";
    case kernel_variant::mid:
      return "mid";
    case kernel_variant::large:
      return "large";
    case kernel_variant::mma:
      return "mma";
    case kernel_variant::lane:
      return "lane";
    case kernel_variant::pairs:
      return "pairs";
    case kernel_variant::wgmma:
      return "wgmma";
    case kernel_variant::wide:
      return "wide";
  }
  return "?";
}

/// Whether variant `v` computes product `x` on device `d` (its registry
/// entry, kernels/variants.cu): what the variant needs of the device, the
/// value type, the batch, strides, alignment, lengths and shared memory.
/// Reads nothing but its arguments (the operands' pointers only for their
/// alignment).
/// @param v the variant
/// @param x the checked product
/// @param d the device
/// @return true when the variant may run it there
template <class T>
bool supports(kernel_variant v, const banded_args<T>& x, const device_features& d);

/// What launch_banded runs: a variant and its tap split.
struct kernel_plan {
  /// the variant
  kernel_variant variant = kernel_variant::small;
  /// blocks sharing the taps of one output tile: 1..8, a cluster, on
  /// devices with the Hopper features; 1..16 elsewhere, summed through
  /// scratch; 1 for the untiled variants
  int split = 1;
};

/// The plan for product `x` on device `d`: on the device class the rules
/// are fitted to (rules_fitted_to), the variants' preference rules
/// (launch_banded.cu and each variant's *_preferred) in order, then what
/// `d` can run (a variant it lacks gives way to the generic tile), unless
/// the cost model times that plan 1.3 times slower than its own (shapes
/// beyond those the rules are fitted to); on any other device, the variant
/// `d` supports that the cost model (cost_model.hpp) times fastest. Reads
/// nothing but its arguments: the operands' pointers only for their
/// alignment. The same inputs give the same plan.
/// @param x the checked product
/// @param d the device
/// @return the variant and split launch_banded uses
template <class T>
kernel_plan choose(const banded_args<T>& x, const device_features& d);

/// Where a plan comes from: the preference rules (launch_banded.cu, fitted
/// to 132-multiprocessor Hopper chips) or the cost model (cost_model.hpp,
/// from the device's description and coefficients fitted by
/// scripts/fit-cost-model).
enum class plan_source { rules, model };

/// Whether the preference rules decide on `d`: a Hopper device (sm_90) with
/// its Hopper features, the class they are fitted to; every other device
/// (older architectures, newer ones, a Hopper with MARG_CUDA_GENERIC) gets
/// the cost model's plan.
/// @param d the device
/// @return true where choose() asks the rules
bool rules_fitted_to(const device_features& d);

/// The plan for product `x` on device `d` from `source`; either passes
/// through what `d` supports for `x`. choose() is this with the source for
/// `d`; marg_tune --check compares the two.
/// @param source the rules or the model
/// @param x the checked product
/// @param d the device
/// @return the variant and split
template <class T>
kernel_plan choose_from(plan_source source, const banded_args<T>& x, const device_features& d);

/// The cost model's time of variant `v` for product `x` on device `d`, with
/// the variant's tap split there (cost_model.hpp, modelled_us).
/// @param v the variant
/// @param x the checked product
/// @param d the device
/// @return µs, or a negative value where the model has no coefficients for `v`
template <class T>
double modelled_time(kernel_variant v, const banded_args<T>& x, const device_features& d);

/// choose(), then the wisdom imported or measured for x's shape class on
/// d's device class (marg::import_wisdom, numeric/planner.hpp): its variant
/// where d supports it for `x`, with that variant's tap split. Never
/// measures. Without wisdom for the class this is choose(x, d).
/// @param x the checked product
/// @param d the device
/// @return the plan launch_banded uses when it does not measure
template <class T>
kernel_plan choose_with_wisdom(const banded_args<T>& x, const device_features& d);

}  // namespace marg::detail::cuda
