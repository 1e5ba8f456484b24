// The scaling passes of log_convolve on the device (see src/log_convolve.cpp
// for the method): per operand the largest and smallest finite value and
// exp(x - top) into device scratch (one kernel for both operands), one
// batched linear product, and top_a + top_b + log(v) written to r, ordered on
// the stream. Used when every
// operand is kernel-readable (device or managed memory); the problems whose
// operands need more than one window are then redone by the host path.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <marg/numeric/convolve.hpp>

#include "cuda_check.hpp"
#include "log_space.hpp"
#include "scratch.hpp"
#include "stream.hpp"

namespace marg::detail::cuda {
namespace {

constexpr int threads = 256;

// 0: fits one window; 1: several windows; 2: all -inf; 3: NaN or +inf
enum : int { one_window = 0, several_windows = 1, all_neg_inf = 2, bad_value = 3 };

/// One operand set of kernel_log_prepare: `count` problems of `len` values.
template <class T>
struct log_operand {
  const T* x;
  std::int64_t len;
  int inc;
  std::int64_t stride;
  std::int64_t count;
  double* top;  ///< per problem: the largest finite value
  int* kind;    ///< per problem: one_window .. bad_value
  T* out;       ///< per problem: exp(x - top), contiguous
};

// The largest of `v` over the block (every thread gets it); `shared` holds
// one value per warp.
template <class Op>
__device__ double block_reduce(double v, double* shared, Op op) {
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // shared may still be read by the previous reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : shared[0];
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// One block per problem of a (blocks 0 .. a.count - 1) and of b (the rest):
// the extent of its finite values, its kind, and exp(x - top) into out. Any
// problem that does not fit one window raises *flag, so that the host reads
// the kinds only when some problem needs the host path.
template <class T>
__global__ void kernel_log_prepare(log_operand<T> a, log_operand<T> b, double width, int* flag) {
  const bool in_a = blockIdx.x < a.count;
  const log_operand<T>& o = in_a ? a : b;
  const std::int64_t p = in_a ? blockIdx.x : blockIdx.x - a.count;
  const T* xi = o.x + p * o.stride;
  double hi = -INFINITY, lo = INFINITY, bad = 0;
  for (std::int64_t j = threadIdx.x; j < o.len; j += blockDim.x) {
    const double v = xi[j * o.inc];
    if (isnan(v) || v == INFINITY) bad = 1;
    if (v != -INFINITY) {
      hi = fmax(hi, v);
      lo = fmin(lo, v);
    }
  }
  __shared__ double shared[32];
  const auto max_op = [](double u, double v) { return fmax(u, v); };
  const auto min_op = [](double u, double v) { return fmin(u, v); };
  hi = block_reduce(hi, shared, max_op);
  lo = block_reduce(lo, shared, min_op);
  bad = block_reduce(bad, shared, max_op);
  const int k = bad != 0           ? bad_value
                : hi == -INFINITY  ? all_neg_inf
                : hi - lo <= width ? one_window
                                   : several_windows;
  if (threadIdx.x == 0) {
    o.top[p] = hi;
    o.kind[p] = k;
    if (k != one_window) atomicOr(flag, 1);
  }
  // an all -inf problem scales to zeros (its output is -inf)
  const double shift = hi == -INFINITY ? 0.0 : hi;
  T* out = o.out + p * o.len;
  for (std::int64_t j = threadIdx.x; j < o.len; j += blockDim.x)
    out[j] = exp(static_cast<T>(static_cast<double>(xi[j * o.inc]) - shift));
}

// r[p * strider + i * incr] = top_a[p or 0] + top_b[p or 0] + log(v[p * lr + i])
template <class T>
__global__ void kernel_log_unscale(const T* v, std::int64_t lr, std::int64_t batch,
                                   const double* top_a, bool share_a, const double* top_b,
                                   bool share_b, T* r, int incr, std::int64_t strider) {
  const std::int64_t total = lr * batch;
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < total;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t p = e / lr, i = e - p * lr;
    const double scale = top_a[share_a ? 0 : p] + top_b[share_b ? 0 : p];
    const T x = v[e];
    r[p * strider + i * incr] =
        x > T(0) ? static_cast<T>(scale + static_cast<double>(log(x))) : static_cast<T>(-INFINITY);
  }
}

unsigned blocks_for(std::int64_t elements) {
  const std::int64_t b = (elements + threads - 1) / threads;
  return static_cast<unsigned>(b < 65536 ? (b < 1 ? 1 : b) : 65536);
}

// kernels can read device and managed memory; plain host memory needs the host path
bool kernel_readable(const void* p, int device, const char* function, const char* operand) {
  return operand_kind(p, device, function, operand) != memory_kind::host;
}

}  // namespace

template <class T>
bool log_convolve_on_device(const log_problem<T>& x, stream_view stream,
                            std::vector<std::int64_t>& host_problems) {
  // the stream's device, made current for the launches, or the current device
  const call_scope call(stream);
  const char* f = x.batch > 1 ? "marg::log_convolve_batched" : "marg::log_convolve";
  const bool a = kernel_readable(x.a, call.device, f, "a");
  const bool b = kernel_readable(x.b, call.device, f, "b");
  if (!kernel_readable(x.r, call.device, f, "r") || !a || !b) return false;
  const cudaStream_t s = call.stream;
  const std::int64_t na = x.stridea == 0 ? 1 : x.batch, nb = x.strideb == 0 ? 1 : x.batch;
  const std::int64_t lr = std::int64_t{x.m} + x.n - 1;
  // the temporaries in one block of stream-ordered device scratch: no managed
  // pages to prefetch or migrate, and no pool lock
  const auto round_up = [](std::int64_t bytes) { return (bytes + 255) / 256 * 256; };
  const std::int64_t top_bytes = round_up((na + nb) * sizeof(double));
  const std::int64_t kind_bytes = round_up((na + nb) * sizeof(int) + sizeof(int));
  const std::int64_t pa_bytes = round_up(na * x.m * sizeof(T));
  const std::int64_t pb_bytes = round_up(nb * x.n * sizeof(T));
  const std::int64_t pr_bytes = round_up(x.batch * lr * sizeof(T));
  const device_scratch scratch(
      static_cast<std::size_t>(top_bytes + kind_bytes + pa_bytes + pb_bytes + pr_bytes),
      call.device, s);
  char* base = static_cast<char*>(scratch.data());
  auto* top = reinterpret_cast<double*>(base);
  auto* kind = reinterpret_cast<int*>(base + top_bytes);
  int* flag = kind + (na + nb);
  auto* pa = reinterpret_cast<T*>(base + top_bytes + kind_bytes);
  auto* pb = reinterpret_cast<T*>(base + top_bytes + kind_bytes + pa_bytes);
  auto* pr = reinterpret_cast<T*>(base + top_bytes + kind_bytes + pa_bytes + pb_bytes);
  MARG_CUDA_TRY(cudaMemsetAsync(flag, 0, sizeof(int), s));
  const double width = sizeof(T) == 4 ? 20.0 : 300.0;
  const log_operand<T> oa{x.a, x.m, x.inca, x.stridea, na, top, kind, pa};
  const log_operand<T> ob{x.b, x.n, x.incb, x.strideb, nb, top + na, kind + na, pb};
  // a block per problem, as many threads as the longer operand needs (a
  // power of two from one warp to 1024)
  unsigned block = 32;
  while (block < 1024 && block < static_cast<unsigned>(std::max(x.m, x.n))) block *= 2;
  kernel_log_prepare<T><<<static_cast<unsigned>(na + nb), block, 0, s>>>(oa, ob, width, flag);
  MARG_CHECK_LAUNCH(s);
  // every problem runs on the device; those whose operands do not fit one
  // window are written again by the host path (host_problems)
  const stream_view sv{s};
  convolve_batched<T>(x.m, x.n, pa, 1, x.stridea == 0 ? 0 : x.m, pb, 1, x.strideb == 0 ? 0 : x.n,
                      pr, 1, lr, x.batch, sv);
  kernel_log_unscale<T><<<blocks_for(x.batch * lr), threads, 0, s>>>(
      pr, lr, x.batch, top, x.stridea == 0, top + na, x.strideb == 0, x.r, x.incr, x.strider);
  MARG_CHECK_LAUNCH(s);
  // one flag to the host and one wait; the kinds only when a problem needs the host
  int any = 0;
  MARG_CUDA_TRY(cudaMemcpyAsync(&any, flag, sizeof(int), cudaMemcpyDeviceToHost, s));
  MARG_CUDA_TRY(cudaStreamSynchronize(s));
  host_problems.clear();
  if (any == 0) return true;
  std::vector<int> k(static_cast<std::size_t>(na + nb));
  MARG_CUDA_TRY(cudaMemcpyAsync(k.data(), kind, k.size() * sizeof(int), cudaMemcpyDeviceToHost, s));
  MARG_CUDA_TRY(cudaStreamSynchronize(s));
  for (std::int64_t p = 0; p < x.batch; ++p)
    if (k[x.stridea == 0 ? 0 : p] != one_window || k[na + (x.strideb == 0 ? 0 : p)] != one_window)
      host_problems.push_back(p);
  return true;
}

template bool log_convolve_on_device<float>(const log_problem<float>&, stream_view,
                                            std::vector<std::int64_t>&);
template bool log_convolve_on_device<double>(const log_problem<double>&, stream_view,
                                             std::vector<std::int64_t>&);

}  // namespace marg::detail::cuda
