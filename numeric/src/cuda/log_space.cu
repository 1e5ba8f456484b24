// log_convolve on the device (see src/log_convolve.cpp for the method),
// ordered on the stream with no wait. Small problems are one kernel that
// scales, multiplies and takes logs in shared memory: a warp per problem with
// the products balanced over its lanes (kernel_log_frag), or a run of outputs
// per thread (kernel_log_small). Larger ones take per operand the largest and
// smallest finite value and exp(x - top) into device scratch (one kernel for
// both operands), one batched linear product, and top_a + top_b + log(v)
// written to r; problems whose operands span more than one window are then
// computed directly (kernel_log_direct). Used when every operand is kernel-readable (device or
// managed memory). A problem with a NaN or +inf input gets NaN outputs, as
// on the host.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <marg/numeric/convolve.hpp>

#include "cuda_check.hpp"
#include "kernels/tiled.cuh"
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
// the extent of its finite values, its kind, and exp(x - top) into out.
template <class T>
__global__ void kernel_log_prepare(log_operand<T> a, log_operand<T> b, double width) {
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
  const auto max_op = [](auto u, auto v) { return fmax(u, v); };
  const auto min_op = [](auto u, auto v) { return fmin(u, v); };
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
  }
  // an all -inf problem scales to zeros (its output is -inf)
  const double shift = hi == -INFINITY ? 0.0 : hi;
  T* out = o.out + p * o.len;
  for (std::int64_t j = threadIdx.x; j < o.len; j += blockDim.x)
    out[j] = exp(static_cast<T>(static_cast<double>(xi[j * o.inc]) - shift));
}

// r[p * strider + i * incr] = top_a[p or 0] + top_b[p or 0] + log(v[p * lr + i]),
// NaN where an operand of problem p holds a NaN or +inf
template <class T>
__global__ void kernel_log_unscale(const T* v, std::int64_t lr, std::int64_t batch,
                                   const double* top_a, const int* kind_a, bool share_a,
                                   const double* top_b, const int* kind_b, bool share_b, T* r,
                                   int incr, std::int64_t strider) {
  const std::int64_t total = lr * batch;
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < total;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t p = e / lr, i = e - p * lr;
    const std::int64_t pa = share_a ? 0 : p, pb = share_b ? 0 : p;
    const double scale = top_a[pa] + top_b[pb];
    const T x = v[e];
    r[p * strider + i * incr] =
        kind_a[pa] == bad_value || kind_b[pb] == bad_value
            ? static_cast<T>(NAN)
            : (x > T(0) ? static_cast<T>(scale + static_cast<double>(log(x)))
                        : static_cast<T>(-INFINITY));
  }
}

// Adds the term v to the online log-sum-exp (top, sum): the running
// maximum and the sum of exp(term - top) below it, rescaled when the maximum
// grows (as attention kernels do). A term below exp(cutoff) times the
// running maximum is dropped: at most 2^31 of them change the sum (at least
// 1) by under a quarter of T's rounding (double: 2^31 e^-62 < 2^-58; float:
// 2^31 e^-40 < 2^-26); most terms of far tails lie there, and a comparison
// is cheaper than exp.
template <class T>
__device__ __forceinline__ void lse_add(double v, double& top, double& sum) {
  constexpr double cutoff = sizeof(T) == 4 ? -40.0 : -62.0;
  const double d = v - top;  // NaN only for -inf - -inf: skipped
  if (d > 0) {
    sum = sum * exp(-d) + 1.0;
    top = v;
  } else if (d > cutoff) {
    sum += exp(d);
  }
}

// r_k = log sum_j exp(a_j + b_{k-j}) directly, for the problems whose
// operands span more than one window (no common scale keeps every product in
// T's range): a thread per output keeps a running maximum and the sum of
// exp(term - maximum) in double, rescaled when the maximum grows (the online
// log-sum-exp of attention kernels), so every term counts to double's
// rounding however far below the others it lies. A block per (problem, tile
// of `direct_tile` outputs); blocks of problems that fit one window return at
// once.
constexpr int direct_tile = 256;

template <class T>
__global__ void __launch_bounds__(direct_tile)
    kernel_log_direct(const T* a, int m, int inca, std::int64_t stridea, const T* b, int n,
                      int incb, std::int64_t strideb, T* r, int incr, std::int64_t strider,
                      std::int64_t tiles, std::int64_t first_block, const int* kind_a, bool share_a,
                      const int* kind_b, bool share_b) {
  const std::int64_t block = first_block + blockIdx.x;
  const std::int64_t p = block / tiles;
  const int ka = kind_a[share_a ? 0 : p], kb = kind_b[share_b ? 0 : p];
  if (ka != several_windows && kb != several_windows) return;
  if (ka == bad_value || kb == bad_value || ka == all_neg_inf || kb == all_neg_inf) return;
  const T* pa = a + p * stridea;
  const T* pb = b + p * strideb;
  const std::int64_t lr = std::int64_t{m} + n - 1;
  const std::int64_t k0 = (block - p * tiles) * direct_tile;
  const int t = threadIdx.x;
  const std::int64_t k = k0 + t;
  __shared__ double sa[direct_tile], sb[2 * direct_tile];
  double top = -INFINITY, sum = 0;
  // the terms of outputs k0 .. k0 + tile - 1: j from k0 - n + 1 to k0 + tile - 1
  const std::int64_t j_lo = k0 - n + 1 > 0 ? k0 - n + 1 : 0;
  const std::int64_t j_hi = k0 + direct_tile - 1 < m - 1 ? k0 + direct_tile - 1 : m - 1;
  for (std::int64_t j0 = j_lo; j0 <= j_hi; j0 += direct_tile) {
    sa[t] = j0 + t <= j_hi ? static_cast<double>(pa[(j0 + t) * inca]) : -INFINITY;
    // b at k - j for every k and j of the tile: indices base .. base + 2 tile - 2
    const std::int64_t base = k0 - j0 - (direct_tile - 1);
    for (int i = t; i < 2 * direct_tile; i += direct_tile) {
      const std::int64_t q = base + i;
      sb[i] = q >= 0 && q < n ? static_cast<double>(pb[q * incb]) : -INFINITY;
    }
    __syncthreads();
    if (k < lr) {
      for (int jj = 0; jj < direct_tile; ++jj)
        lse_add<T>(sa[jj] + sb[direct_tile - 1 + t - jj], top, sum);
    }
    __syncthreads();
  }
  if (k < lr)
    r[p * strider + k * incr] = static_cast<T>(top == -INFINITY ? -INFINITY : top + log(sum));
}

// Small problems, one kernel: a warp per problem (eight to a block) when it
// has at most small_warp_outputs outputs, else a block per problem, reads
// both operands into shared memory, finds their extents, and either scales
// them by their largest values and multiplies directly (both fit one
// window) or runs the online log-sum-exp of kernel_log_direct per output.
// Each thread computes `small_run` consecutive outputs: the b values of the
// run slide through registers, one shared load of a and one of b per
// `small_run` multiply-adds, summed in T as the linear kernels sum. The
// window keeps every product normal in T: exp(-40)^2 in float, exp(-300)^2
// in double. The lanes of a warp read shared places `small_run` apart; an
// odd run length puts them in distinct banks with plain addressing.
constexpr int small_run = 5;
template <class T>
constexpr double small_width = sizeof(T) == 4 ? 40.0 : 300.0;
// the largest m x n of kernel_log_small: beyond it one block per problem
// leaves too many multiply-adds on one multiprocessor
constexpr std::int64_t small_work = 65536;
constexpr int small_max_len = 2048;  // m + n: the shared memory bound
// a warp per problem up to two runs per lane; more outputs take a block,
// whose threads share the problem's work
constexpr int small_warp_outputs = 2 * 32 * small_run;
constexpr int small_warps_per_block = 8;

// A problem's shared memory: a at places 0 .. m - 1, then b with
// `small_run` pad places on both sides (zeros or -inf, so that no index
// needs a bounds check).
__host__ __device__ constexpr int small_places(int m, int n) {
  return m + n + 2 * small_run;
}

// `v` combined over the problem's threads: a warp's shuffles, or the
// block's (block_reduce) when a block holds one problem
template <bool per_warp, class V, class Op>
__device__ V group_reduce(V v, double* shared, Op op) {
  if constexpr (per_warp) {
    for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
  } else {
    return static_cast<V>(block_reduce(static_cast<double>(v), shared, op));
  }
}

template <bool per_warp>
__device__ void group_sync() {
  if constexpr (per_warp)
    __syncwarp();
  else
    __syncthreads();
}

/// The largest and smallest finite value of each operand of a problem, and
/// whether one is NaN or +inf: thread t of the g sharing it reads its part.
template <class T>
struct small_extents {
  T ha = -INFINITY, la = INFINITY, hb = -INFINITY, lb = INFINITY, bad = 0;

  __device__ void add(T v, T& hi, T& lo) {
    if (isnan(v) || v == static_cast<T>(INFINITY)) bad = 1;
    if (v != static_cast<T>(-INFINITY)) {
      hi = fmax(hi, v);
      lo = fmin(lo, v);
    }
  }
  template <bool per_warp>
  __device__ void reduce(double* shared) {
    const auto max_op = [](auto u, auto v) { return fmax(u, v); };
    const auto min_op = [](auto u, auto v) { return fmin(u, v); };
    ha = group_reduce<per_warp>(ha, shared, max_op);
    hb = group_reduce<per_warp>(hb, shared, max_op);
    la = group_reduce<per_warp>(la, shared, min_op);
    lb = group_reduce<per_warp>(lb, shared, min_op);
    bad = group_reduce<per_warp>(bad, shared, max_op);
  }
  /// After reduce(): writes NaN (a NaN or +inf input) or -inf (an operand
  /// all -inf) to the problem's outputs; false, writing nothing, otherwise.
  __device__ bool write_if_empty(T* out, int lr, int incr, int t, int g) const {
    if (bad == 0 && ha != -INFINITY && hb != -INFINITY) return false;
    const T v = bad != 0 ? static_cast<T>(NAN) : static_cast<T>(-INFINITY);
    for (int k = t; k < lr; k += g) out[std::int64_t{k} * incr] = v;
    return true;
  }
  /// After reduce(): whether both operands fit one window (then scaled by
  /// their largest values every product is normal in T).
  __device__ bool one_window() const {
    return ha - la <= small_width<T> && hb - lb <= small_width<T>;
  }
  /// After reduce(): a at places 0 .. m - 1 and b at b0 .. b0 + n - 1 of `s`
  /// scaled by their largest values.
  __device__ void scale(T* s, int m, int b0, int n, int t, int g) const {
    for (int j = t; j < m; j += g) s[j] = exp(s[j] - ha);
    for (int j = t; j < n; j += g) s[b0 + j] = exp(s[b0 + j] - hb);
  }
};

// a (stride inca) into shared places 0 .. m - 1 and b (stride incb) into
// b0 .. b0 + n - 1, with their extents (not yet combined over the threads).
// Two values of each operand per thread are loaded before any is stored, so
// that their memory latencies overlap.
template <class T>
__device__ void load_small(const T* a, int m, int inca, const T* b, int n, int incb, int t, int g,
                           T* s, int b0, small_extents<T>& e) {
  constexpr int per = 2;
  const int len = m > n ? m : n;
  for (int j0 = 0; j0 < len; j0 += per * g) {
    T va[per], vb[per];
#pragma unroll
    for (int i = 0; i < per; ++i) {
      const int j = j0 + t + i * g;
      va[i] = j < m ? a[std::int64_t{j} * inca] : static_cast<T>(-INFINITY);
      vb[i] = j < n ? b[std::int64_t{j} * incb] : static_cast<T>(-INFINITY);
    }
#pragma unroll
    for (int i = 0; i < per; ++i) {
      const int j = j0 + t + i * g;
      if (j < m) s[j] = va[i];
      if (j < n) s[b0 + j] = vb[i];
      e.add(va[i], e.ha, e.la);
      e.add(vb[i], e.hb, e.lb);
    }
  }
}

// log(v) for a positive normal v: float's fast log (its error, 3 ulp of the
// result or 2^-21.4 near 1, is far inside the float bound of log_convolve),
// double's full one
template <class T>
__device__ T small_log(T v) {
  if constexpr (sizeof(T) == 4)
    return __logf(v);
  else
    return log(v);
}

// Outputs k0 .. k0 + small_run - 1 (those below lr) of a problem in shared
// memory, a at places 0 .. m - 1 and b at b0 .. b0 + n - 1 with `small_run`
// pad places on both sides: scaled values and a pad of zeros (one window,
// multiplied in T; the outputs are hab + log of the sums) or log values and
// a pad of -inf (the online log-sum-exp of kernel_log_direct in double).
template <class T, bool one>
__device__ void small_run_outputs(const T* s, int b0, int m, int n, int k0, int lr, T hab, T* out,
                                  int incr) {
  // terms j = j_lo .. j_hi reach outputs k0 .. k0 + small_run - 1
  const int j_lo = k0 - n + 1 > 0 ? k0 - n + 1 : 0;
  const int j_hi = k0 + small_run - 1 < m - 1 ? k0 + small_run - 1 : m - 1;
  T w[small_run];  // w[q] = b_{k0 + q - j}
#pragma unroll
  for (int q = 0; q < small_run; ++q) w[q] = s[b0 + k0 + q - j_lo];
  T res[small_run];
  if constexpr (one) {
    T acc[small_run] = {};
    // unrolled by the run length, the register shifts become renames
#pragma unroll small_run
    for (int j = j_lo; j <= j_hi; ++j) {
      const T x = s[j];
#pragma unroll
      for (int q = 0; q < small_run; ++q) acc[q] = fma(x, w[q], acc[q]);
#pragma unroll
      for (int q = small_run - 1; q > 0; --q) w[q] = w[q - 1];
      w[0] = s[b0 + k0 - j - 1];
    }
#pragma unroll
    for (int q = 0; q < small_run; ++q)
      res[q] = acc[q] > T(0) ? hab + small_log(acc[q]) : static_cast<T>(-INFINITY);
  } else {
    // as kernel_log_direct: a running maximum and the sum below it, in double
    double top[small_run], sum[small_run];
#pragma unroll
    for (int q = 0; q < small_run; ++q) top[q] = -INFINITY, sum[q] = 0;
    for (int j = j_lo; j <= j_hi; ++j) {
      const double x = s[j];
#pragma unroll
      for (int q = 0; q < small_run; ++q) lse_add<T>(x + static_cast<double>(w[q]), top[q], sum[q]);
#pragma unroll
      for (int q = small_run - 1; q > 0; --q) w[q] = w[q - 1];
      w[0] = s[b0 + k0 - j - 1];
    }
#pragma unroll
    for (int q = 0; q < small_run; ++q)
      res[q] = static_cast<T>(top[q] == -INFINITY ? -INFINITY : top[q] + log(sum[q]));
  }
#pragma unroll
  for (int q = 0; q < small_run; ++q)
    if (k0 + q < lr) out[std::int64_t{k0 + q} * incr] = res[q];
}

// Every output of a problem whose log values (a at places 0 .. m - 1, b at
// b0 .. b0 + n - 1 of `s`) span more than one window: runs of small_run
// outputs per thread t of the g sharing it, by the online log-sum-exp, with
// a pad of -inf around b.
template <class T, bool per_warp>
__device__ void small_lse_outputs(T* s, int b0, int m, int n, int lr, int t, int g, T* out,
                                  int incr) {
  if (t < small_run) {
    s[b0 - 1 - t] = static_cast<T>(-INFINITY);
    s[b0 + n + t] = static_cast<T>(-INFINITY);
  }
  group_sync<per_warp>();
  for (int k0 = t * small_run; k0 < lr; k0 += g * small_run)
    small_run_outputs<T, false>(s, b0, m, n, k0, lr, T(0), out, incr);
}

template <class T, bool per_warp>
__global__ void kernel_log_small(const T* a, int m, int inca, std::int64_t stridea, const T* b,
                                 int n, int incb, std::int64_t strideb, T* r, int incr,
                                 std::int64_t strider, int batch) {
  extern __shared__ __align__(16) unsigned char small_shared[];
  __shared__ double reduce_shared[32];
  constexpr int pad = small_run;
  const int g = per_warp ? 32 : static_cast<int>(blockDim.x);  // threads per problem
  const int t = per_warp ? static_cast<int>(threadIdx.x % 32) : static_cast<int>(threadIdx.x);
  const int slot = per_warp ? static_cast<int>(threadIdx.x / 32) : 0;
  const std::int64_t p =
      per_warp ? std::int64_t{blockIdx.x} * small_warps_per_block + slot : std::int64_t{blockIdx.x};
  // a whole warp leaves together; the per-warp form has no block barrier
  if (p >= batch) return;
  T* s = reinterpret_cast<T*>(small_shared) + std::int64_t{slot} * small_places(m, n);
  const int b0 = m + pad;  // the place of b_0
  // extents in T: every value is a T, and float's reductions are half the work
  small_extents<T> e;
  load_small(a + p * stridea, m, inca, b + p * strideb, n, incb, t, g, s, b0, e);
  e.template reduce<per_warp>(reduce_shared);
  const int lr = m + n - 1;
  T* out = r + p * strider;
  if (e.write_if_empty(out, lr, incr, t, g)) return;
  if (!e.one_window()) {
    small_lse_outputs<T, per_warp>(s, b0, m, n, lr, t, g, out, incr);
    return;
  }
  // scaled values, a pad of zeros around b
  e.scale(s, m, b0, n, t, g);
  if (t < pad) {
    s[b0 - 1 - t] = T(0);
    s[b0 + n + t] = T(0);
  }
  group_sync<per_warp>();
  // in T: its rounding of the sum is within log_convolve's bound for T
  const T hab = e.ha + e.hb;
  for (int k0 = t * small_run; k0 < lr; k0 += g * small_run)
    small_run_outputs<T, true>(s, b0, m, n, k0, lr, hab, out, incr);
}

// One-window problems of a warp each, the products balanced over the lanes.
// With a lane per run of outputs (kernel_log_small) the triangle of terms
// leaves the lanes of the middle outputs with twice the average work; here
// the terms of a run of frag_run outputs are cut into fragments of at most
// L values of a, one fragment per lane at a time, so every lane does L
// steps of frag_run multiply-adds. A fragment holds its a values and the
// b values it slides over in registers (vector loads from shared memory),
// writes its frag_run partial sums to shared memory, and the lanes then add
// the partial sums of each output in a fixed order and take its log.
constexpr int frag_run = 8;
constexpr int frag_max = 256;      // fragments of a problem
constexpr int frag_runs_max = 64;  // runs of a problem
constexpr int frag_warps = 4;      // problems (warps) of a block
constexpr int frag_lengths[] = {16, 24};

/// The fragments of a problem shape, the same for the whole batch; passed
/// by value, so that the kernel reads it from the constant bank.
struct frag_plan {
  int nfrag, nruns;
  int apad;                     ///< zeros after a
  int b0;                       ///< the place of b_0 (zeros before it and after b)
  int part0;                    ///< the place of the partial sums
  int places;                   ///< shared places of a problem
  unsigned frag[frag_max];      ///< first output << 16 | first a index
  unsigned run[frag_runs_max];  ///< first fragment << 16 | fragments
};

constexpr int round4(int x) {
  return (x + 3) / 4 * 4;
}

// The fragments of length L for an m x n problem; false when they exceed the
// plan's tables. Every place the vector loads touch is a multiple of four
// (first a indices rounded down, zero pads on every side).
bool make_frag_plan(int m, int n, int L, frag_plan& p) {
  const int lr = m + n - 1;
  p.nruns = (lr + frag_run - 1) / frag_run;
  if (p.nruns > frag_runs_max) return false;
  p.nfrag = 0;
  for (int r = 0; r < p.nruns; ++r) {
    const int k0 = r * frag_run;
    const int j_lo = std::max(0, k0 - n + 1) / 4 * 4;
    const int j_hi = std::min(m - 1, k0 + frag_run - 1);
    const int count = (j_hi - j_lo + L) / L;
    if (p.nfrag + count > frag_max) return false;
    p.run[r] = static_cast<unsigned>(p.nfrag) << 16 | static_cast<unsigned>(count);
    for (int c = 0; c < count; ++c)
      p.frag[p.nfrag++] = static_cast<unsigned>(k0) << 16 | static_cast<unsigned>(j_lo + c * L);
  }
  // a fragment reads a up to index j_hi + L - 1 and b from k0 - j_hi - L to
  // k0 + frag_run + 2 (its first index rounded down by up to 3)
  p.apad = L + 4;
  p.b0 = round4(m + p.apad) + round4(frag_run + L + 4);
  p.part0 = round4(p.b0 + n + frag_run + 4);
  p.places = round4(p.part0 + p.nfrag * frag_run);
  return true;
}

template <class T, int L>
__global__ void __launch_bounds__(32 * frag_warps)
    kernel_log_frag(const T* a, int m, int inca, std::int64_t stridea, const T* b, int n, int incb,
                    std::int64_t strideb, T* r, int incr, std::int64_t strider, int batch,
                    const frag_plan plan) {
  extern __shared__ __align__(16) unsigned char small_shared[];
  constexpr int R = frag_run;
  using V = typename vec16<T>::type;  // the widest shared load of T
  constexpr int VK = sizeof(V) / sizeof(T);
  const int t = static_cast<int>(threadIdx.x % 32);
  const int slot = static_cast<int>(threadIdx.x / 32);
  const std::int64_t p = std::int64_t{blockIdx.x} * frag_warps + slot;
  if (p >= batch) return;  // a whole warp; the kernel has no block barrier
  T* s = reinterpret_cast<T*>(small_shared) + std::int64_t{slot} * plan.places;
  const int b0 = plan.b0;
  small_extents<T> e;
  load_small(a + p * stridea, m, inca, b + p * strideb, n, incb, t, 32, s, b0, e);
  e.template reduce<true>(nullptr);
  const int lr = m + n - 1;
  T* out = r + p * strider;
  if (e.write_if_empty(out, lr, incr, t, 32)) return;
  if (!e.one_window()) {
    // several windows: kernel_log_small's log-sum-exp over runs
    small_lse_outputs<T, true>(s, b0, m, n, lr, t, 32, out, incr);
    return;
  }
  e.scale(s, m, b0, n, t, 32);
  for (int i = t; i < plan.apad; i += 32) s[m + i] = T(0);
  for (int i = t; i < R + L + 4; i += 32) s[b0 - 1 - i] = T(0);
  for (int i = t; i < R + 4; i += 32) s[b0 + n + i] = T(0);
  __syncwarp();
  T* part = s + plan.part0;
  for (int f = t; f < plan.nfrag; f += 32) {
    const unsigned info = plan.frag[f];
    const int k0 = static_cast<int>(info >> 16), js = static_cast<int>(info & 0xffffu);
    // x[i] = a_{js + i}; v[i] = b_{k0 - js + R - 1 - i}, whose lowest place
    // b0 + k0 - js - L holds v[R + L - 1]
    T x[L], v[R + L];
    const V* xa = reinterpret_cast<const V*>(s + js);
    const V* vb = reinterpret_cast<const V*>(s + b0 + k0 - js - L);
#pragma unroll
    for (int i = 0; i < L / VK; ++i) {
      const V u = xa[i];
      const T* w = reinterpret_cast<const T*>(&u);
#pragma unroll
      for (int c = 0; c < VK; ++c) x[VK * i + c] = w[c];
    }
#pragma unroll
    for (int i = 0; i < (R + L) / VK; ++i) {
      const V u = vb[i];
      const T* w = reinterpret_cast<const T*>(&u);
#pragma unroll
      for (int c = 0; c < VK; ++c) v[R + L - 1 - VK * i - c] = w[c];
    }
    // output k0 + q takes a_{js + i} b_{k0 + q - js - i}
    T acc[R];
#pragma unroll
    for (int q = 0; q < R; ++q) acc[q] = T(0);
#pragma unroll
    for (int i = 0; i < L; ++i)
#pragma unroll
      for (int q = 0; q < R; ++q) acc[q] = fma(x[i], v[R - 1 - q + i], acc[q]);
    V* pv = reinterpret_cast<V*>(part + f * R);
#pragma unroll
    for (int i = 0; i < R / VK; ++i) {
      V u;
      T* w = reinterpret_cast<T*>(&u);
#pragma unroll
      for (int c = 0; c < VK; ++c) w[c] = acc[VK * i + c];
      pv[i] = u;
    }
  }
  __syncwarp();
  // in T: its rounding of the sum is within log_convolve's bound for T
  const T hab = e.ha + e.hb;
  for (int k = t; k < lr; k += 32) {
    const unsigned info = plan.run[k / R];
    const int first = static_cast<int>(info >> 16), count = static_cast<int>(info & 0xffffu);
    const T* pp = part + first * R + k % R;
    T sum = 0;
    for (int c = 0; c < count; ++c) sum += pp[c * R];
    out[std::int64_t{k} * incr] = sum > T(0) ? hab + small_log(sum) : static_cast<T>(-INFINITY);
  }
}

// Launches kernel_log_frag for a batch of one-window-or-not small problems
// of at most small_warp_outputs outputs; false when no fragment plan fits.
// The fragment length is the one with the fewest steps per lane (rounds of
// 32 fragments times the steps of one, plus a fixed cost per fragment).
template <class T>
bool launch_log_frag(const log_problem<T>& x, cudaStream_t s) {
  frag_plan best{}, plan{};
  int best_length = 0;
  long best_cost = 0;
  for (const int length : frag_lengths) {
    if (!make_frag_plan(x.m, x.n, length, plan)) continue;
    const long cost = (plan.nfrag + 31) / 32 * static_cast<long>(length * frag_run + 40);
    if (best_length == 0 || cost < best_cost) best = plan, best_length = length, best_cost = cost;
  }
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(best.places) * frag_warps;
  // beyond the default limit of dynamic shared memory kernel_log_small runs
  if (best_length == 0 || bytes > 48 * 1024) return false;
  const auto blocks = static_cast<unsigned>((x.batch + frag_warps - 1) / frag_warps);
  const auto kernel = best_length == 16 ? kernel_log_frag<T, 16> : kernel_log_frag<T, 24>;
  kernel<<<blocks, 32 * frag_warps, bytes, s>>>(x.a, x.m, x.inca, x.stridea, x.b, x.n, x.incb,
                                                x.strideb, x.r, x.incr, x.strider, x.batch, best);
  return true;
}

unsigned blocks_for(std::int64_t elements) {
  const std::int64_t b = (elements + threads - 1) / threads;
  return static_cast<unsigned>(b < 65536 ? (b < 1 ? 1 : b) : 65536);
}

}  // namespace

template <class T>
bool log_convolve_on_device(const log_problem<T>& x, stream_view stream) {
  // the stream's device, made current for the launches, or the current device
  const call_scope call(stream);
  const char* f = x.batch > 1 ? "marg::log_convolve_batched" : "marg::log_convolve";
  const memory_kind ka = operand_kind(x.a, call.device, f, "a");
  const memory_kind kb = operand_kind(x.b, call.device, f, "b");
  const memory_kind kr = operand_kind(x.r, call.device, f, "r");
  // kernels can read device and managed memory; plain host memory needs the host path
  if (ka == memory_kind::host || kb == memory_kind::host || kr == memory_kind::host) return false;
  const cudaStream_t s = call.stream;
  const std::int64_t na = x.stridea == 0 ? 1 : x.batch, nb = x.strideb == 0 ? 1 : x.batch;
  const std::int64_t lr = std::int64_t{x.m} + x.n - 1;
  // managed pages resident on the device before the kernels touch them
  const auto resident = [&](const void* p, memory_kind k, std::int64_t elements) {
    if (k == memory_kind::managed)
      prefetch_managed(p, static_cast<std::size_t>(elements) * sizeof(T), true, s);
  };
  resident(x.a, ka, extent(x.m, x.inca, x.stridea, na));
  resident(x.b, kb, extent(x.n, x.incb, x.strideb, nb));
  resident(x.r, kr, extent(lr, x.incr, x.strider, x.batch));
  if (std::int64_t{x.m} * x.n <= small_work && x.m + x.n <= small_max_len) {
    const std::size_t per_problem = sizeof(T) * static_cast<std::size_t>(small_places(x.m, x.n));
    if (lr <= small_warp_outputs) {
      // a warp per problem: the products balanced over its lanes where the
      // fragment tables fit, else a run of outputs per lane
      if (!launch_log_frag(x, s)) {
        const auto blocks = (x.batch + small_warps_per_block - 1) / small_warps_per_block;
        kernel_log_small<T, true><<<static_cast<unsigned>(blocks), 32 * small_warps_per_block,
                                    small_warps_per_block * per_problem, s>>>(
            x.a, x.m, x.inca, x.stridea, x.b, x.n, x.incb, x.strideb, x.r, x.incr, x.strider,
            x.batch);
      }
    } else {
      // a run of small_run outputs per thread, up to 256 threads
      const std::int64_t runs = (lr + small_run - 1) / small_run;
      unsigned block = 64;
      while (block < 256 && block < runs) block *= 2;
      kernel_log_small<T, false><<<static_cast<unsigned>(x.batch), block, per_problem, s>>>(
          x.a, x.m, x.inca, x.stridea, x.b, x.n, x.incb, x.strideb, x.r, x.incr, x.strider,
          x.batch);
    }
    MARG_CHECK_LAUNCH(s);
    mark_enqueued(s);  // host access to the outputs waits for the stream
    return true;
  }
  // the temporaries in one block of stream-ordered device scratch: no managed
  // pages to prefetch or migrate, and no pool lock
  const auto round_up = [](std::int64_t bytes) { return (bytes + 255) / 256 * 256; };
  const std::int64_t top_bytes = round_up((na + nb) * sizeof(double));
  const std::int64_t kind_bytes = round_up((na + nb) * sizeof(int));
  const std::int64_t pa_bytes = round_up(na * x.m * sizeof(T));
  const std::int64_t pb_bytes = round_up(nb * x.n * sizeof(T));
  const std::int64_t pr_bytes = round_up(x.batch * lr * sizeof(T));
  const device_scratch scratch(
      static_cast<std::size_t>(top_bytes + kind_bytes + pa_bytes + pb_bytes + pr_bytes),
      call.device, s);
  char* base = static_cast<char*>(scratch.data());
  auto* top = reinterpret_cast<double*>(base);
  auto* kind = reinterpret_cast<int*>(base + top_bytes);
  auto* pa = reinterpret_cast<T*>(base + top_bytes + kind_bytes);
  auto* pb = reinterpret_cast<T*>(base + top_bytes + kind_bytes + pa_bytes);
  auto* pr = reinterpret_cast<T*>(base + top_bytes + kind_bytes + pa_bytes + pb_bytes);
  const double width = sizeof(T) == 4 ? 20.0 : 300.0;
  const log_operand<T> oa{x.a, x.m, x.inca, x.stridea, na, top, kind, pa};
  const log_operand<T> ob{x.b, x.n, x.incb, x.strideb, nb, top + na, kind + na, pb};
  // a block per problem, as many threads as the longer operand needs (a
  // power of two from one warp to 1024)
  unsigned block = 32;
  while (block < 1024 && block < static_cast<unsigned>(std::max(x.m, x.n))) block *= 2;
  kernel_log_prepare<T><<<static_cast<unsigned>(na + nb), block, 0, s>>>(oa, ob, width);
  MARG_CHECK_LAUNCH(s);
  // every problem runs through the linear product; those whose operands do
  // not fit one window are written again by kernel_log_direct
  const stream_view sv{s};
  convolve_batched<T>(x.m, x.n, pa, 1, x.stridea == 0 ? 0 : x.m, pb, 1, x.strideb == 0 ? 0 : x.n,
                      pr, 1, lr, x.batch, sv);
  kernel_log_unscale<T><<<blocks_for(x.batch * lr), threads, 0, s>>>(
      pr, lr, x.batch, top, kind, x.stridea == 0, top + na, kind + na, x.strideb == 0, x.r, x.incr,
      x.strider);
  MARG_CHECK_LAUNCH(s);
  // the problems that span several windows, again and exactly
  const std::int64_t tiles = (lr + direct_tile - 1) / direct_tile;
  constexpr std::int64_t max_grid = 2147483647;
  for (std::int64_t first = 0; first < x.batch * tiles; first += max_grid) {
    const std::int64_t blocks = std::min(max_grid, x.batch * tiles - first);
    kernel_log_direct<T><<<static_cast<unsigned>(blocks), direct_tile, 0, s>>>(
        x.a, x.m, x.inca, x.stridea, x.b, x.n, x.incb, x.strideb, x.r, x.incr, x.strider, tiles,
        first, kind, x.stridea == 0, kind + na, x.strideb == 0);
    MARG_CHECK_LAUNCH(s);
  }
  mark_enqueued(s);  // host access to the outputs waits for the stream
  return true;
}

template bool log_convolve_on_device<float>(const log_problem<float>&, stream_view);
template bool log_convolve_on_device<double>(const log_problem<double>&, stream_view);

}  // namespace marg::detail::cuda
