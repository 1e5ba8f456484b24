// Instantiations of every kernel variant, one per tuning (kernels/tiled.cuh,
// kernels/warp.cuh), and the variants' names and support rules.
#include <type_traits>

#include "../launch.hpp"
#include "tiled.cuh"
#include "warp.cuh"
#include "wgmma_tf32.cuh"

namespace marg::detail::cuda {

template <class T>
void launch_variant(kernel_variant v, const correlation_view<T>& c, int split,
                    cudaStream_t stream) {
  using tun = tiled_tunings<T>;
  switch (v) {
    case kernel_variant::warp:
      return launch_warp<T, typename tun::warp>(c, stream);
    case kernel_variant::small:
      return launch_tiled<T, typename tun::small>(c, split, stream);
    case kernel_variant::mid:
      return launch_tiled<T, typename tun::mid>(c, split, stream);
    case kernel_variant::large:
      return launch_tiled<T, typename tun::large>(c, split, stream);
    case kernel_variant::mma:
      return launch_mma(c, split, stream);
    case kernel_variant::lane:
      return launch_lane(c, stream);
    case kernel_variant::wgmma:
      // float only: variant_supports is false for double
      MARG_EXPECTS((std::is_same_v<T, float>), "marg: the wgmma variant computes float only");
      if constexpr (std::is_same_v<T, float>) launch_wgmma_tf32(c, stream);
      return;
    case kernel_variant::pairs:
      return launch_pairs(c, stream);
    case kernel_variant::wide:
      return launch_wide(c, stream);
  }
}

const char* variant_name(kernel_variant v) {
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
    case kernel_variant::wgmma:
      return "wgmma";
    case kernel_variant::pairs:
      return "pairs";
    case kernel_variant::wide:
      return "wide";
  }
  return "?";
}

template <class T>
bool variant_supports(kernel_variant v, const correlation_view<T>& c, const device_features& d) {
  if (v == kernel_variant::mma) return mma_supports(c, d);
  if (v == kernel_variant::lane) return lane_supports(c, d);
  if constexpr (std::is_same_v<T, float>)
    if (v == kernel_variant::wgmma) return wgmma_tf32_supports(c, d);
  if (v == kernel_variant::wgmma) return false;
  if (v == kernel_variant::pairs) return pairs_supports(c, d);
  if (v == kernel_variant::wide) return wide_supports(c, d);
  return true;
}

template bool variant_supports<float>(kernel_variant, const correlation_view<float>&,
                                      const device_features&);
template bool variant_supports<double>(kernel_variant, const correlation_view<double>&,
                                       const device_features&);
template void launch_variant<float>(kernel_variant, const correlation_view<float>&, int,
                                    cudaStream_t);
template void launch_variant<double>(kernel_variant, const correlation_view<double>&, int,
                                     cudaStream_t);

}  // namespace marg::detail::cuda
