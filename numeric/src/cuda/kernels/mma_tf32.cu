// Tensor-core variant of the batched correlation for float: 3xTF32 split (big and small TF32 parts,
// small x small dropped) on mma.sync. Not yet implemented: mma_supports() is false, so neither the
// dispatch nor the forced-variant checks and benchmarks ever launch it.
#include <stdexcept>

#include "../launch.hpp"

namespace marg::detail::cuda {

bool mma_supports(const correlation_view<float>&) {
  return false;
}

bool mma_preferred(const correlation_view<float>&) {
  return false;
}

int mma_split(const correlation_view<float>&) {
  return 1;
}

void launch_mma(const correlation_view<float>&, int, cudaStream_t) {
  throw std::logic_error("marg: the float mma variant is not built");
}

}  // namespace marg::detail::cuda
