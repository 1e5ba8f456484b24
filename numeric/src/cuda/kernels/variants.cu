// The registry of kernel variants: each variant's name, what it supports and
// how it launches (one instantiation per tuning of kernels/tiled.cuh and
// kernels/warp.cuh); when a variant is preferred is choose()'s
// (launch_banded.cu).
#include <iterator>
#include <type_traits>

#include "../launch.hpp"
#include "tiled.cuh"
#include "warp.cuh"
#include "wgmma_tf32.cuh"

namespace marg::detail::cuda {

namespace {

template <class T>
bool any_device(const correlation_view<T>&, const device_features&) {
  return true;
}

template <class T, class C>
void launch_tile(const correlation_view<T>& c, int split, cudaStream_t stream) {
  launch_tiled<T, C>(c, split, stream);
}

template <class T>
void launch_warp_variant(const correlation_view<T>& c, int, cudaStream_t stream) {
  launch_warp<T, typename tiled_tunings<T>::warp>(c, stream);
}

template <class T>
void launch_mma_variant(const correlation_view<T>& c, int split, cudaStream_t stream) {
  launch_mma(c, split, stream);
}

template <class T>
void launch_lane_variant(const correlation_view<T>& c, int, cudaStream_t stream) {
  launch_lane(c, stream);
}

template <class T>
void launch_pairs_variant(const correlation_view<T>& c, int, cudaStream_t stream) {
  launch_pairs(c, stream);
}

// the wgmma kernel computes float only
template <class T>
bool wgmma_variant_supports(const correlation_view<T>& c, const device_features& d) {
  (void)c, (void)d;  // double: no kernel
  if constexpr (std::is_same_v<T, float>) return wgmma_tf32_supports(c, d);
  return false;
}

template <class T>
void launch_wgmma_variant(const correlation_view<T>& c, int, cudaStream_t stream) {
  (void)c, (void)stream;  // double: no kernel
  MARG_EXPECTS((std::is_same_v<T, float>), "marg: the wgmma variant computes float only");
  if constexpr (std::is_same_v<T, float>) launch_wgmma_tf32(c, stream);
}

template <class T>
void launch_wide_variant(const correlation_view<T>& c, int, cudaStream_t stream) {
  launch_wide(c, stream);
}

// The registry, in the order of kernel_variant. Where each variant's needs
// are checked: the tiles and the warp run on every device the backend runs
// on (sm_75 and later) at any shape and stride; the others' supports
// functions (launch.hpp; the entry's type picks the overload for T) state
// theirs.
template <class T>
constexpr variant_entry<T> registry[] = {
    {kernel_variant::warp, variant_name(kernel_variant::warp), false, any_device<T>,
     launch_warp_variant<T>},
    {kernel_variant::small, variant_name(kernel_variant::small), true, any_device<T>,
     launch_tile<T, typename tiled_tunings<T>::small>},
    {kernel_variant::mid, variant_name(kernel_variant::mid), true, any_device<T>,
     launch_tile<T, typename tiled_tunings<T>::mid>},
    {kernel_variant::large, variant_name(kernel_variant::large), true, any_device<T>,
     launch_tile<T, typename tiled_tunings<T>::large>},
    {kernel_variant::mma, variant_name(kernel_variant::mma), true, mma_supports,
     launch_mma_variant<T>},
    {kernel_variant::lane, variant_name(kernel_variant::lane), false, lane_supports,
     launch_lane_variant<T>},
    {kernel_variant::pairs, variant_name(kernel_variant::pairs), false, pairs_supports,
     launch_pairs_variant<T>},
    {kernel_variant::wgmma, variant_name(kernel_variant::wgmma), false, wgmma_variant_supports<T>,
     launch_wgmma_variant<T>},
    {kernel_variant::wide, variant_name(kernel_variant::wide), false, wide_supports,
     launch_wide_variant<T>},
};

static_assert(std::size(registry<float>) == std::size(all_variants));

}  // namespace

template <class T>
const variant_entry<T>* variant_registry() {
  return registry<T>;
}

template <class T>
void launch_variant(kernel_variant v, const correlation_view<T>& c, int split,
                    cudaStream_t stream) {
  entry_of<T>(v).launch(c, split, stream);
}

template <class T>
bool variant_supports(kernel_variant v, const correlation_view<T>& c, const device_features& d) {
  return entry_of<T>(v).supports(c, d);
}

template <class T>
bool supports(kernel_variant v, const banded_args<T>& x, const device_features& d) {
  return variant_supports(v, correlation_of(x), d);
}

template const variant_entry<float>* variant_registry<float>();
template const variant_entry<double>* variant_registry<double>();
template bool supports<float>(kernel_variant, const banded_args<float>&, const device_features&);
template bool supports<double>(kernel_variant, const banded_args<double>&, const device_features&);
template bool variant_supports<float>(kernel_variant, const correlation_view<float>&,
                                      const device_features&);
template bool variant_supports<double>(kernel_variant, const correlation_view<double>&,
                                       const device_features&);
template void launch_variant<float>(kernel_variant, const correlation_view<float>&, int,
                                    cudaStream_t);
template void launch_variant<double>(kernel_variant, const correlation_view<double>&, int,
                                     cudaStream_t);

}  // namespace marg::detail::cuda
