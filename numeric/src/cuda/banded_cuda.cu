// CUDA backend entry: resolves the stream and its device, makes every operand
// readable by kernels and hands them to launch_banded. All of it is ordered on
// the stream:
//   device memory      used as is (it must be the call's device's);
//   managed memory     prefetched to the device on the stream;
//   host memory        staged through pool blocks (kernels cannot read
//                      pageable memory on these GPUs), copied back and
//                      waited for, so the call returns with host outputs done.
// Staging blocks go back to the pool on the stream (stream-ordered reuse).
#include <cstdint>
#include <optional>

#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>

#include "../detail/banded.hpp"
#include "cuda_check.hpp"
#include "launch.hpp"
#include "stream.hpp"

namespace marg::detail::cuda {
namespace {

// a pool block on a stream, returned to the pool on that stream
class pool_block {
 public:
  pool_block(std::size_t bytes, cudaStream_t s)
      : stream_(s), bytes_(bytes), ptr_(allocate(bytes, stream_view{s})) {}
  pool_block(const pool_block&) = delete;
  pool_block& operator=(const pool_block&) = delete;
  ~pool_block() { deallocate(ptr_, bytes_, stream_view{stream_}); }
  void* get() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  cudaStream_t stream_;
  std::size_t bytes_;
  void* ptr_;
};

// makes one operand kernel-readable; returns the pointer kernels use
template <class T>
T* ready(T* p, std::int64_t elements, bool copy_in, const call_scope& call, const char* function,
         const char* operand, std::optional<pool_block>& block) {
  const cudaStream_t s = call.stream;
  const std::size_t bytes = static_cast<std::size_t>(elements) * sizeof(T);
  switch (operand_kind(p, call.device, function, operand)) {
    case memory_kind::device:
      return p;
    case memory_kind::managed:
      prefetch_managed(p, bytes, true, s);
      return p;
    case memory_kind::host:
      break;
  }
  // staging needs a copy back and a host wait, which a graph cannot replay
  MARG_EXPECTS(!capturing(s),
               "marg: a host-memory operand cannot be captured into a call_graph "
               "(use device or pool memory, e.g. marg::array)");
  block.emplace(bytes, s);
  prefetch_managed(block->get(), bytes, true, s);
  if (copy_in) MARG_CUDA_TRY(cudaMemcpyAsync(block->get(), p, bytes, cudaMemcpyDefault, s));
  return static_cast<T*>(block->get());
}

}  // namespace

template <class T>
void run(const banded_args<T>& args, stream_view sv) {
  // the stream's device, made current for the launch, or the current device
  const call_scope call(sv);
  const cudaStream_t stream = call.stream;
  const auto len = lengths_of(args.op, args.m, args.n);
  const std::int64_t ext_a = extent(len.a, args.inc_a, args.stride_a, args.batch);
  const std::int64_t ext_b = extent(len.b, args.inc_b, args.stride_b, args.batch);
  const std::int64_t ext_out = extent(len.out, args.inc_out, args.stride_out, args.batch);
  // the kernel writes every output element; gaps between them (strides) must
  // survive the copy back, so a gapped host output is copied in first
  const bool gaps = ext_out != len.out * args.batch;

  std::optional<pool_block> ba, bb, bo;  // destroyed (on the stream) after the copy back
  banded_args<T> x = args;
  const char* f = name_of(args.op, args.batch > 1);
  const operand_names nm = names_of(args.op);
  x.a = ready(const_cast<T*>(args.a), ext_a, true, call, f, nm.a, ba);
  x.b = ready(const_cast<T*>(args.b), ext_b, true, call, f, nm.b, bb);
  x.out = ready(args.out, ext_out, gaps, call, f, nm.out, bo);
  launch_banded(x, stream);
  mark_enqueued(stream);
  if (bo) {
    MARG_CUDA_TRY(cudaMemcpyAsync(args.out, bo->get(), bo->bytes(), cudaMemcpyDefault, stream));
    // the caller reads host memory right after return
    marg::synchronize(stream_view{stream});
  }
}

template void run<float>(const banded_args<float>&, stream_view);
template void run<double>(const banded_args<double>&, stream_view);

}  // namespace marg::detail::cuda
