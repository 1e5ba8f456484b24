// Instantiations of the tiled kernel, one per tuning of kernels/tiled.cuh.
#include "../launch.hpp"
#include "tiled.cuh"

namespace marg::detail::cuda {

template <class T>
void launch_tiled_variant(tiled_variant v, const correlation_view<T>& c, int split,
                          cudaStream_t stream) {
  using tun = tiled_tunings<T>;
  switch (v) {
    case tiled_variant::small:
      return launch_tiled<T, typename tun::small>(c, split, stream);
    case tiled_variant::mid:
      return launch_tiled<T, typename tun::mid>(c, split, stream);
    case tiled_variant::large:
      return launch_tiled<T, typename tun::large>(c, split, stream);
  }
}

template void launch_tiled_variant<float>(tiled_variant, const correlation_view<float>&, int,
                                          cudaStream_t);
template void launch_tiled_variant<double>(tiled_variant, const correlation_view<double>&, int,
                                           cudaStream_t);

}  // namespace marg::detail::cuda
