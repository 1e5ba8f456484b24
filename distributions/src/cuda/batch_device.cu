// Device row work of the batched distributions. Compiled with -fmad=false
// (distributions/CMakeLists.txt): every product and sum is rounded as on the
// host, so the binomial rows, the evidence rows and the draws of rows summed
// in double are bit for bit those of the host path.
//
// One thread per row for the recurrences (binomial windows, evidence rows:
// serial by nature), one warp per row for the sampler (coalesced loads; the
// running sums are the host's left-to-right additions, replayed lane-uniformly
// through shuffles, so that the picks are the host's).
#include <cuda_runtime.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <string>

#include <marg/numeric/backend.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/pool.hpp>

#include "../../../numeric/src/cuda/cuda_check.hpp"
#include "../../../numeric/src/cuda/stream.hpp"
#include "../../../numeric/src/memory/device_memory.hpp"
#include "../batch_arith.hpp"
#include "batch_device.hpp"

namespace marg::detail::gpu {
namespace {

using cuda::mark_enqueued;
using cuda::prefetch_managed;
using cuda::resolve;

constexpr int block = 256;
constexpr unsigned full = 0xffffffffu;

int blocks_for(std::int64_t threads) {
  return static_cast<int>((threads + block - 1) / block);
}

// device scratch ordered on a stream
template <class V>
class scratch {
 public:
  scratch(std::size_t count, cudaStream_t s) : s_(s) {
    if (count != 0)
      MARG_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&p_), count * sizeof(V), s));
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    if (p_ != nullptr) (void)cudaFreeAsync(p_, s_);
  }
  V* get() const noexcept { return p_; }

 private:
  cudaStream_t s_;
  V* p_ = nullptr;
};

template <class V>
void to_device(V* d, const V* h, std::size_t count, cudaStream_t s) {
  if (count != 0)
    MARG_CUDA_TRY(cudaMemcpyAsync(d, h, count * sizeof(V), cudaMemcpyHostToDevice, s));
}

template <class V>
void to_host(V* h, const V* d, std::size_t count, cudaStream_t s) {
  if (count != 0)
    MARG_CUDA_TRY(cudaMemcpyAsync(h, d, count * sizeof(V), cudaMemcpyDeviceToHost, s));
}

// ---------------------------------------------------------------- binomial rows

// the windows (batch_arith.hpp, as on the host), the values not stored: the
// second kernel replays their products once the padded length is known
template <class T>
__global__ void kernel_binomial_windows(int B, const std::int64_t* ns, const double* ps,
                                        double tail, binomial_window* win, std::int64_t* lowers,
                                        T* truncated, unsigned long long* longest) {
  const std::int64_t b = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (b >= B) return;
  const binomial_window w = binomial_window_of(ns[b], ps[b], tail, discard_values{});
  win[b] = w;
  lowers[b] = w.lower();
  truncated[b] = static_cast<T>(w.truncated());
  atomicMax(longest, static_cast<unsigned long long>(w.size()));
}

template <class T>
__global__ void kernel_binomial_values(int B, int L, const std::int64_t* ns, const double* ps,
                                       const binomial_window* win, T* out) {
  const std::int64_t b = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (b >= B) return;
  const binomial_window w = win[b];
  T* r = out + b * L;
  r[w.down] = static_cast<T>(1 / w.kept);
  if (w.up + w.down == 0) return;
  const double p = ps[b], nd = static_cast<double>(ns[b]);
  const binomial_side up{nd, p / (1 - p), true}, down{nd, (1 - p) / p, false};
  // the products of binomial_walk(), in its order
  double v = 1;
  std::int64_t k = w.mode;
  for (std::int64_t j = 0; j < w.up; ++j, k = up.next(k)) {
    v = v * up.ratio(k);
    r[w.down + 1 + j] = static_cast<T>(v / w.kept);
  }
  v = 1;
  k = w.mode;
  for (std::int64_t j = 0; j < w.down; ++j, k = down.next(k)) {
    v = v * down.ratio(k);
    r[w.down - 1 - j] = static_cast<T>(v / w.kept);
  }
}

// ---------------------------------------------------------------- negation

template <class T>
__global__ void kernel_reverse_rows(std::int64_t total, int L, const T* x, T* out) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const std::int64_t b = i / L, j = i - b * L;
  out[i] = x[b * L + (L - 1 - j)];
}

// ---------------------------------------------------------------- evidence rows

struct device_lgamma {
  MARG_HD double operator()(double a) const { return lgamma(a); }
};

// one thread per row: count_evidence_row of batch_arith.hpp, as on the host
template <class T>
__global__ void kernel_count_evidence(int B, int len, const std::int64_t* base_of,
                                      const std::int64_t* observed, const double* rhos,
                                      std::int64_t n_max, T* out, double* log_scale) {
  const std::int64_t b = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (b >= B) return;
  log_scale[b] = count_evidence_row(base_of[b], len, observed[b], rhos[b], n_max, out + b * len,
                                    device_lgamma{});
}

// ---------------------------------------------------------------- the sampler

// a[i] * b[i * sb], i = 0..n-1 (sb = 1, or -1 along an anti-diagonal)
template <class T>
struct products {
  const T* a;
  const T* b;
  int sb;
  int n;
  __device__ void load(int i, T& x, T& y) const {
    x = a[i];
    y = b[static_cast<std::ptrdiff_t>(i) * sb];
  }
};

// product i of r times 2^-shift, where shift = 0 gives the plain double
// product (the host's) and any other shift the product of the two mantissas
// scaled by 2^(ilogb x + ilogb y - shift): exact scaling, so only products
// below 2^-1074 of 2^shift are lost
template <class T>
__device__ double scaled_product(const products<T>& r, int i, bool scaled, int shift) {
  T x, y;
  r.load(i, x, y);
  if (!scaled) return static_cast<double>(x) * static_cast<double>(y);
  if (x == T(0) || y == T(0)) return 0;
  const double a = static_cast<double>(x), b = static_cast<double>(y);
  const int ea = ilogb(a), eb = ilogb(b);
  return scalbn(scalbn(a, -ea) * scalbn(b, -eb), ea + eb - shift);
}

// the first i whose running sum of the products exceeds target, never a zero
// product; the last nonzero one when rounding leaves the target unreached:
// pick() of batch_rows.hpp, its additions in its order
template <class T>
__device__ int warp_pick(const products<T>& r, double target, bool scaled, int shift) {
  const int lane = threadIdx.x & 31;
  double c = 0;
  int last = 0;
  for (int i0 = 0; i0 < r.n; i0 += 32) {
    const double w = i0 + lane < r.n ? scaled_product(r, i0 + lane, scaled, shift) : 0;
    const int count = min(32, r.n - i0);
    for (int j = 0; j < count; ++j) {
      const double wj = __shfl_sync(full, w, j);
      if (wj == 0) continue;
      c += wj;
      last = i0 + j;
      if (c > target) return last;
    }
  }
  return last;
}

// the largest ilogb(x) + ilogb(y) over the nonzero products (INT_MIN: none), warp-wide
template <class T>
__device__ int warp_max_exponent(const products<T>& r) {
  const int lane = threadIdx.x & 31;
  int e = INT_MIN;
  for (int i = lane; i < r.n; i += 32) {
    T x, y;
    r.load(i, x, y);
    if (x != T(0) && y != T(0))
      e = max(e, ilogb(static_cast<double>(x)) + ilogb(static_cast<double>(y)));
  }
  for (int o = 16; o > 0; o >>= 1) e = max(e, __shfl_xor_sync(full, e, o));
  return e;
}

// sum_and_pick() of batch_rows.hpp on one warp: the sum of the products in
// double, left to right, and the inversion at u. Where the host turns to long
// double (a product of nonzero factors below DBL_MIN, or an infinite sum),
// each product is formed from the factors' mantissas and scaled by a power of
// two relative to the row's largest product (exactly): the sum is returned
// times 2^-exponent, in double. That path rounds to 53 bits where the host
// rounds to 64 and loses products below 2^-1074 of the row's largest one.
template <class T>
__device__ double warp_sum_and_pick(const products<T>& r, double u, int& index, int& exponent) {
  const int lane = threadIdx.x & 31;
  double s = 0;
  bool bad = false;
  for (int i0 = 0; i0 < r.n; i0 += 32) {
    double w = 0;
    bool tiny = false;
    if (i0 + lane < r.n) {
      T x, y;
      r.load(i0 + lane, x, y);
      w = static_cast<double>(x) * static_cast<double>(y);
      tiny = (w < DBL_MIN) & (x != T(0)) & (y != T(0));
    }
    bad |= __any_sync(full, tiny);
    const int count = min(32, r.n - i0);
    for (int j = 0; j < count; ++j) s += __shfl_sync(full, w, j);
  }
  exponent = 0;
  if (!bad && isfinite(s)) {
    if (s > 0) index = warp_pick(r, u * s, false, 0);
    return s;
  }
  const int top = warp_max_exponent(r);
  if (top == INT_MIN) return 0;
  s = 0;
  for (int i0 = 0; i0 < r.n; i0 += 32) {
    const double w = i0 + lane < r.n ? scaled_product(r, i0 + lane, true, top) : 0;
    const int count = min(32, r.n - i0);
    for (int j = 0; j < count; ++j) s += __shfl_sync(full, w, j);
  }
  exponent = top;
  if (s > 0) index = warp_pick(r, u * s, true, top);
  return s;
}

template <class T>
__device__ T largest();
template <>
__device__ float largest<float>() {
  return FLT_MAX;
}
template <>
__device__ double largest<double>() {
  return DBL_MAX;
}

// first (min) and last (max) nonzero index of a row, warp-wide (first > last when all zero)
template <class T>
__device__ void warp_extent(const T* r, int n, int& first, int& last) {
  const int lane = threadIdx.x & 31;
  int a = n, b = -1;
  for (int i = lane; i < n; i += 32)
    if (r[i] != T(0)) a = min(a, i), b = max(b, i);
  for (int o = 16; o > 0; o >>= 1) {
    a = min(a, __shfl_xor_sync(full, a, o));
    b = max(b, __shfl_xor_sync(full, b, o));
  }
  first = a, last = b;
}

// the row loop of sample_given_evidence_with (batch.cpp), one warp per row
template <class T>
__global__ void kernel_draws(int B, int m, int n, const T* x, const T* y, std::int64_t sq,
                             const T* z, const T* like, int len, const double* u, draw_row* out) {
  const std::int64_t b = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  if (b >= B) return;  // whole warps leave together
  const int lane = threadIdx.x & 31;
  draw_row res{0, 0, 0, 0, 0};
  const T* lb = like + b * len;
  bool ok = true;
  for (int i = lane; i < len; i += 32) {
    const T v = lb[i];
    ok &= (v >= T(0)) & (v <= largest<T>());  // NaN fails both
  }
  if (!__all_sync(full, ok)) {
    res.status = 2;
    if (lane == 0) out[b] = res;
    return;
  }
  const T* p = x + b * m;
  const T* q = y + b * sq;
  int fx, lx, fy, ly;
  warp_extent(p, m, fx, lx);
  warp_extent(q, n, fy, ly);
  if (fx <= lx && fy <= ly) {
    const int z0 = fx + fy;
    const products<T> zr{z + b * len + z0, lb + z0, 1, lx + ly - z0 + 1};
    int iz = 0, e = 0;
    const double s = warp_sum_and_pick(zr, u[2 * b], iz, e);
    if (s > 0) {
      iz += z0;
      const int lo = max(max(0, iz - (n - 1)), max(fx, iz - ly));
      const int hi = min(min(m - 1, iz), min(lx, iz - fy));
      if (lo <= hi) {
        const products<T> d{p + lo, q + (iz - lo), -1, hi - lo + 1};
        int i = 0, e2 = 0;
        const double sd = warp_sum_and_pick(d, u[2 * b + 1], i, e2);
        if (sd > 0) res = {s, e, 1, lo + i, iz - lo - i};
      }
    }
  }
  if (lane == 0) out[b] = res;
}

}  // namespace

bool active() {
  return current_backend() == backend::cuda;
}

template <class T>
binomial_rows<T> binomial_rows_on_device(const std::int64_t* ns, const double* ps, int B,
                                         double tail, const char* f) {
  const cudaStream_t s = resolve(stream_view{});
  scratch<std::int64_t> dn(B, s), dlow(B, s);
  scratch<double> dp(B, s);
  scratch<binomial_window> dwin(B, s);
  scratch<T> dtrunc(B, s);
  scratch<unsigned long long> dlong(1, s);
  to_device(dn.get(), ns, B, s);
  to_device(dp.get(), ps, B, s);
  MARG_CUDA_TRY(cudaMemsetAsync(dlong.get(), 0, sizeof(unsigned long long), s));
  kernel_binomial_windows<T><<<blocks_for(B), block, 0, s>>>(
      B, dn.get(), dp.get(), tail, dwin.get(), dlow.get(), dtrunc.get(), dlong.get());
  MARG_CHECK_LAUNCH(s);
  binomial_rows<T> r;
  r.lowers.resize(B);
  r.truncated.resize(B);
  unsigned long long longest = 0;
  to_host(r.lowers.data(), dlow.get(), B, s);
  to_host(r.truncated.data(), dtrunc.get(), B, s);
  to_host(&longest, dlong.get(), 1, s);
  device::synchronize(s);  // also lets host_access and later prefetches know
  MARG_EXPECTS(longest <= static_cast<unsigned long long>(INT_MAX),
               detail::bad_argument(f, "the longest window", static_cast<std::int64_t>(longest),
                                    "<= INT_MAX"));
  r.length = static_cast<int>(longest);
  r.values = array<T>(static_cast<std::size_t>(B) * r.length, stream_view{s});
  const std::size_t bytes = r.values.size() * sizeof(T);
  prefetch_managed(r.values.data(), bytes, true, s);
  MARG_CUDA_TRY(cudaMemsetAsync(r.values.data(), 0, bytes, s));
  kernel_binomial_values<T><<<blocks_for(B), block, 0, s>>>(B, r.length, dn.get(), dp.get(),
                                                            dwin.get(), r.values.data());
  MARG_CHECK_LAUNCH(s);
  mark_enqueued(s);
  return r;
}

template <class T>
array<T> reverse_rows_on_device(const T* x, int B, int L) {
  const cudaStream_t s = resolve(stream_view{});
  const std::int64_t total = std::int64_t{B} * L;
  array<T> r(static_cast<std::size_t>(total), stream_view{s});
  prefetch_managed(x, total * sizeof(T), true, s);
  prefetch_managed(r.data(), total * sizeof(T), true, s);
  kernel_reverse_rows<T><<<blocks_for(total), block, 0, s>>>(total, L, x, r.data());
  MARG_CHECK_LAUNCH(s);
  mark_enqueued(s);
  return r;
}

template <class T>
array<T> count_evidence_on_device(int B, int len, const std::int64_t* base,
                                  const std::int64_t* observed, const double* rho,
                                  std::int64_t n_max, std::vector<double>& log_scale) {
  const cudaStream_t s = resolve(stream_view{});
  scratch<std::int64_t> dbase(B, s), dobs(B, s);
  scratch<double> drho(B, s), dscale(B, s);
  to_device(dbase.get(), base, B, s);
  to_device(dobs.get(), observed, B, s);
  to_device(drho.get(), rho, B, s);
  array<T> r(static_cast<std::size_t>(B) * len, stream_view{s});
  const std::size_t bytes = r.size() * sizeof(T);
  prefetch_managed(r.data(), bytes, true, s);
  MARG_CUDA_TRY(cudaMemsetAsync(r.data(), 0, bytes, s));
  kernel_count_evidence<T><<<blocks_for(B), block, 0, s>>>(
      B, len, dbase.get(), dobs.get(), drho.get(), n_max, r.data(), dscale.get());
  MARG_CHECK_LAUNCH(s);
  log_scale.resize(B);
  to_host(log_scale.data(), dscale.get(), B, s);
  device::synchronize(s);  // also lets host_access and later prefetches know
  return r;
}

template <class T>
std::vector<draw_row> draws_on_device(int B, int m, int n, const T* x, const T* y, std::int64_t sq,
                                      const T* z, const T* like, bool like_on_host,
                                      const double* u) {
  const cudaStream_t s = resolve(stream_view{});
  const int len = m + n - 1;
  const std::size_t like_count = static_cast<std::size_t>(B) * len;
  scratch<T> dlike(like_on_host ? like_count : 0, s);
  if (like_on_host) {
    to_device(dlike.get(), like, like_count, s);
    like = dlike.get();
  } else {
    prefetch_managed(like, like_count * sizeof(T), true, s);
  }
  scratch<double> du(2 * static_cast<std::size_t>(B), s);
  scratch<draw_row> dout(B, s);
  to_device(du.get(), u, 2 * static_cast<std::size_t>(B), s);
  prefetch_managed(x, static_cast<std::size_t>(B) * m * sizeof(T), true, s);
  const std::int64_t threads = std::int64_t{B} * 32;
  kernel_draws<T>
      <<<blocks_for(threads), block, 0, s>>>(B, m, n, x, y, sq, z, like, len, du.get(), dout.get());
  MARG_CHECK_LAUNCH(s);
  std::vector<draw_row> r(B);
  to_host(r.data(), dout.get(), B, s);
  device::synchronize(s);  // also lets host_access and later prefetches know
  return r;
}

#define MARG_INSTANTIATE_DEVICE(T)                                                                \
  template binomial_rows<T> binomial_rows_on_device<T>(const std::int64_t*, const double*, int,   \
                                                       double, const char*);                      \
  template array<T> reverse_rows_on_device<T>(const T*, int, int);                                \
  template array<T> count_evidence_on_device<T>(int, int, const std::int64_t*,                    \
                                                const std::int64_t*, const double*, std::int64_t, \
                                                std::vector<double>&);                            \
  template std::vector<draw_row> draws_on_device<T>(                                              \
      int, int, int, const T*, const T*, std::int64_t, const T*, const T*, bool, const double*);
MARG_INSTANTIATE_DEVICE(float)
MARG_INSTANTIATE_DEVICE(double)

}  // namespace marg::detail::gpu
