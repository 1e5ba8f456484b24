// Tensor-core variant of the batched correlation for double: FP64 tensor cores (DMMA, mma.sync
// .f64). Not yet implemented: mma_supports() is false, so neither the dispatch nor the
// forced-variant checks and benchmarks ever launch it.
#include <stdexcept>

#include "../launch.hpp"

namespace marg::detail::cuda {

bool mma_supports(const correlation_view<double>&) {
  return false;
}

bool mma_preferred(const correlation_view<double>&) {
  return false;
}

int mma_split(const correlation_view<double>&) {
  return 1;
}

void launch_mma(const correlation_view<double>&, int, cudaStream_t) {
  throw std::logic_error("marg: the double mma variant is not built");
}

}  // namespace marg::detail::cuda
