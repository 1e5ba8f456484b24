// The scaling passes of log_convolve on the device (see src/log_convolve.cpp
// for the method): per operand the largest and smallest finite value, then
// exp(x - top) into pool memory, one batched linear product, and
// top_a + top_b + log(v) written to r, ordered on the stream. Used when every
// operand is kernel-readable (device or managed memory); the problems whose
// operands need more than one window are then redone by the host path.
#include <cstdint>
#include <limits>
#include <vector>

#include <marg/numeric/array.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/pool.hpp>

#include "cuda_check.hpp"
#include "log_space.hpp"
#include "stream.hpp"

namespace marg::detail::cuda {
namespace {

constexpr int threads = 256;

// 0: fits one window; 1: several windows; 2: all -inf; 3: NaN or +inf
enum : int { one_window = 0, several_windows = 1, all_neg_inf = 2, bad_value = 3 };

template <class T>
__global__ void kernel_log_extent(const T* x, std::int64_t len, int inc, std::int64_t stride,
                                  double width, double* top, int* kind) {
  const T* xi = x + blockIdx.x * stride;
  double hi = -INFINITY, lo = INFINITY;
  int bad = 0;
  for (std::int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    const double v = xi[j * inc];
    if (isnan(v) || v == INFINITY) bad = 1;
    if (v != -INFINITY) {
      hi = fmax(hi, v);
      lo = fmin(lo, v);
    }
  }
  __shared__ double s_hi[threads], s_lo[threads];
  __shared__ int s_bad[threads];
  s_hi[threadIdx.x] = hi;
  s_lo[threadIdx.x] = lo;
  s_bad[threadIdx.x] = bad;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      s_hi[threadIdx.x] = fmax(s_hi[threadIdx.x], s_hi[threadIdx.x + w]);
      s_lo[threadIdx.x] = fmin(s_lo[threadIdx.x], s_lo[threadIdx.x + w]);
      s_bad[threadIdx.x] |= s_bad[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double h = s_hi[0], l = s_lo[0];
    top[blockIdx.x] = h;
    kind[blockIdx.x] = s_bad[0]         ? bad_value
                       : h == -INFINITY ? all_neg_inf
                       : h - l <= width ? one_window
                                        : several_windows;
  }
}

// out[i * len + j] = exp(x[i * stride + j * inc] - top[i]), the exponential in T
template <class T>
__global__ void kernel_log_scale(const T* x, std::int64_t len, int inc, std::int64_t stride,
                                 std::int64_t count, const double* top, T* out) {
  const std::int64_t total = len * count;
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < total;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = e / len, j = e - i * len;
    out[e] = exp(static_cast<T>(static_cast<double>(x[i * stride + j * inc]) - top[i]));
  }
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
  const stream_view sv{s};
  // pool temporaries, made resident on the device before the kernels touch them
  array<double> top(na + nb, sv);
  array<int> kind(na + nb, sv);
  array<T> pa(na * x.m, sv), pb(nb * x.n, sv), pr(x.batch * lr, sv);
  prefetch(top.data(), top.size() * sizeof(double), memory_location::device, sv);
  prefetch(kind.data(), kind.size() * sizeof(int), memory_location::device, sv);
  prefetch(pa.data(), pa.size() * sizeof(T), memory_location::device, sv);
  prefetch(pb.data(), pb.size() * sizeof(T), memory_location::device, sv);
  prefetch(pr.data(), pr.size() * sizeof(T), memory_location::device, sv);
  const double width = sizeof(T) == 4 ? 20.0 : 300.0;
  kernel_log_extent<T><<<static_cast<unsigned>(na), threads, 0, s>>>(
      x.a, x.m, x.inca, x.stridea, width, top.data(), kind.data());
  MARG_CHECK_LAUNCH(s);
  kernel_log_extent<T><<<static_cast<unsigned>(nb), threads, 0, s>>>(
      x.b, x.n, x.incb, x.strideb, width, top.data() + na, kind.data() + na);
  MARG_CHECK_LAUNCH(s);
  // every problem runs on the device; those whose operands do not fit one
  // window are written again by the host path (host_problems)
  kernel_log_scale<T><<<blocks_for(na * x.m), threads, 0, s>>>(x.a, x.m, x.inca, x.stridea, na,
                                                               top.data(), pa.data());
  MARG_CHECK_LAUNCH(s);
  kernel_log_scale<T><<<blocks_for(nb * x.n), threads, 0, s>>>(x.b, x.n, x.incb, x.strideb, nb,
                                                               top.data() + na, pb.data());
  MARG_CHECK_LAUNCH(s);
  convolve_batched<T>(x.m, x.n, pa.data(), 1, x.stridea == 0 ? 0 : x.m, pb.data(), 1,
                      x.strideb == 0 ? 0 : x.n, pr.data(), 1, lr, x.batch, sv);
  kernel_log_unscale<T><<<blocks_for(x.batch * lr), threads, 0, s>>>(
      pr.data(), lr, x.batch, top.data(), x.stridea == 0, top.data() + na, x.strideb == 0, x.r,
      x.incr, x.strider);
  MARG_CHECK_LAUNCH(s);
  // the kinds: one copy to the host and one wait
  std::vector<int> k(static_cast<std::size_t>(na + nb));
  MARG_CUDA_TRY(
      cudaMemcpyAsync(k.data(), kind.data(), k.size() * sizeof(int), cudaMemcpyDeviceToHost, s));
  MARG_CUDA_TRY(cudaStreamSynchronize(s));
  host_problems.clear();
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
