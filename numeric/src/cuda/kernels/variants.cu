// Instantiations of every kernel variant, one per tuning (kernels/tiled.cuh,
// kernels/warp.cuh).
#include "../launch.hpp"
#include "tiled.cuh"
#include "warp.cuh"

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
  }
}

template void launch_variant<float>(kernel_variant, const correlation_view<float>&, int,
                                    cudaStream_t);
template void launch_variant<double>(kernel_variant, const correlation_view<double>&, int,
                                     cudaStream_t);

}  // namespace marg::detail::cuda
