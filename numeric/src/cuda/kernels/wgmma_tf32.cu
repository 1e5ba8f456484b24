// 3xTF32 float correlation on wgmma.m64n128k8 (sm_90a); see wgmma_tf32.cuh and
// docs/kernel-notes.md.
//
// In convolution form y_t = sum_K a'_K x'_{t-K} (a'_K = a_{la-1-K}, x'_p =
// X_{p+la-1} of the correlation view), one warpgroup computes, per k-step c
// (a multiple of 8), the 64 x 128 product D[r][n] += sum_s A[r][s] B[s][n]
// with row r = 4q + p, column n = 8j + i and
//   output t = J + p + 32q + 4i + 512j  (a tile of 8192 outputs at J),
//   B[s][n] = x'[c + 4i + 512j + s]     (shared memory, descriptor),
//   A[r][s] = a'[J + p + 32q - c - s]   (registers).
// B is a sliding window of x' in shared memory: a no-swizzle K-major core
// matrix is 8 columns i of 16 bytes, i.e. 32 consecutive values; the two K
// halves are 16 bytes apart (overlapping core matrices, LBO 16 B) and j steps
// 2048 B (SBO). Moving to k-step c + 8 moves the descriptor by 32 bytes. A
// (a Toeplitz block, whose rows would be 4 bytes apart in shared memory) is
// loaded per k-step from the split taps: 4 big and 4 small values a thread.
// A CTA computes one unit, (tile, ns consecutive k-steps), into a partial
// tile; a second kernel adds the partial tiles of each tile in unit order
// (deterministic). Units of equal size fill the CTA slots in whole rounds.
//
// 3xTF32: D = Ab Bb restarted every 16 k-steps and added into an fp32 total
// (tensor-core accumulation truncates), E = Ab Bs + As Bb over the unit (2^-11
// smaller), As Bs dropped; operands split at staging (cvt.rna).
#include "wgmma_tf32.cuh"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include "../cuda_check.hpp"
#include "../stream.hpp"
#include "cluster.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MARG_WGMMA_TF32_DEVICE 1
#endif

namespace marg::detail::cuda {
namespace {

/// Fixed shape of the wgmma kernel.
struct wgmma_tf32_shape {
  static constexpr int n = 128;               ///< wgmma N
  static constexpr int tile = 64 * n;         ///< outputs per tile
  static constexpr int acc = n / 2;           ///< fp32 accumulator registers per thread
  static constexpr int row_reach = 484;       ///< p + 32 q + 1
  static constexpr int x_reach = tile - 476;  ///< x' values one k-step reads: 4i + 512j + s + 1
  static constexpr int ns_step = 32;          ///< unit k-steps are a multiple of this
  static constexpr int ns_max = 256;
  static constexpr int max_tiles = 256;  ///< tiles per problem (2 Mi outputs)
  static constexpr int threads = 128;
  static constexpr int ctas_per_sm = 2;
  static constexpr std::int64_t max_workspace = std::int64_t{256} << 20;
};
using shp = wgmma_tf32_shape;

/// Units of one problem: tile t owns units first[t] .. first[t + 1] - 1.
struct wgmma_tf32_plan {
  int la, lx, lout, ns, tiles, units;
  std::int64_t sh;  ///< x'_p = x_{p + sh}, sh = la - 1 - lead
  int first[shp::max_tiles + 1];
};

/// k-steps [lo, hi) (x' positions, lo a multiple of 8) that reach tile `tile`.
__host__ __device__ inline void tile_range(const wgmma_tf32_plan& p, int tile, std::int64_t& lo,
                                           std::int64_t& hi) {
  const std::int64_t j = std::int64_t{tile} * shp::tile;
  lo = j - p.la - 6;
  const std::int64_t x_lo = -p.sh - shp::x_reach;
  if (x_lo > lo) lo = x_lo;
  hi = j + shp::row_reach;
  if (p.lx - p.sh < hi) hi = p.lx - p.sh;
  lo -= ((lo % 8) + 8) % 8;
}

#if defined(MARG_WGMMA_TF32_DEVICE)
/// k-steps of the unit starting at c0 (the last unit of a tile is trimmed).
__device__ inline int unit_steps(const wgmma_tf32_plan& p, std::int64_t c0, std::int64_t hi) {
  const std::int64_t need = (hi - c0 + 8 * shp::ns_step - 1) / (8 * shp::ns_step) * shp::ns_step;
  return need < p.ns ? static_cast<int>(need) : p.ns;
}

/// k-steps per main-product chain (D restarted, added into the fp32 total)
constexpr int wgmma_chain = 16;

__device__ __forceinline__ std::uint32_t tf32_rna(float v) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return r;
}

/// Stages n values v_i = src[first + i step] (zero unless 0 <= valid + i <
/// len) split into big and small TF32 parts; four loads in flight per thread.
/// @tparam Unit step is 1 (no multiply)
template <bool Unit>
__device__ inline void stage_split(const float* src, std::int64_t first, std::int64_t step,
                                   std::int64_t valid, std::int64_t len, int n, float* big,
                                   float* small) {
  const std::int64_t lo64 = -valid < 0 ? 0 : (-valid > n ? n : -valid);
  const std::int64_t hi64 = len - valid < 0 ? 0 : (len - valid > n ? n : len - valid);
  const int lo = static_cast<int>(lo64), hi = static_cast<int>(hi64);
  constexpr int inflight = 4;
  for (int i0 = threadIdx.x; i0 < n; i0 += inflight * shp::threads) {
    float v[inflight];
#pragma unroll
    for (int r = 0; r < inflight; ++r) {
      const int i = i0 + r * shp::threads;
      v[r] = 0.f;
      if (i >= lo && i < hi) v[r] = Unit ? src[first + i] : src[first + i * step];
    }
#pragma unroll
    for (int r = 0; r < inflight; ++r) {
      const int i = i0 + r * shp::threads;
      if (i < n) {
        const std::uint32_t b = tf32_rna(v[r]);
        big[i] = __uint_as_float(b);
        small[i] = __uint_as_float(tf32_rna(v[r] - __uint_as_float(b)));
      }
    }
  }
}

/// No-swizzle shared-memory matrix descriptor (addresses and offsets in bytes).
__device__ __forceinline__ std::uint64_t wgmma_desc(std::uint32_t addr, std::uint32_t lbo,
                                                    std::uint32_t sbo) {
  return std::uint64_t{(addr >> 4) & 0x3fffu} | (std::uint64_t{(lbo >> 4) & 0x3fffu} << 16) |
         (std::uint64_t{(sbo >> 4) & 0x3fffu} << 32);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
/// Orders later reads of the accumulators after the preceding wgmma_wait.
__device__ __forceinline__ void wgmma_touch(float (&d)[shp::acc]) {
#pragma unroll
  for (int i = 0; i < shp::acc; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// d (64 x 128, fp32 fragment) += A (64 x 8, tf32 registers) B (8 x 128, tf32 in
/// shared memory at descriptor db); d is overwritten when accumulate is 0.
__device__ __forceinline__ void wgmma_tf32_m64n128k8(float (&d)[64], const std::uint32_t (&a)[4],
                                                     std::uint64_t db, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "
      "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}
#endif

/// One unit per CTA (blockIdx.x: unit of the problem blockIdx.y): stage x' and
/// the taps of the unit split into big and small TF32 parts, run its k-steps
/// and write the partial tile.
__global__ void __launch_bounds__(shp::threads, shp::ctas_per_sm)
    wgmma_tf32_units(const correlation_view<float> cv, const wgmma_tf32_plan p, float* part) {
#if defined(MARG_WGMMA_TF32_DEVICE)
  extern __shared__ __align__(128) float sm[];
  const int u = blockIdx.x, b = blockIdx.y;
  int tile = 0;
  while (p.first[tile + 1] <= u) ++tile;
  std::int64_t lo, hi;
  tile_range(p, tile, lo, hi);
  const std::int64_t j0 = std::int64_t{tile} * shp::tile;
  const std::int64_t c0 = lo + std::int64_t{u - p.first[tile]} * 8 * p.ns;
  const int ns = unit_steps(p, c0, hi);
  const int lx_s = 8 * p.ns + shp::tile + 8, lt_s = 8 * p.ns + shp::row_reach + 12;
  float* xb = sm;
  float* xs = sm + lx_s;
  float* tb = sm + 2 * lx_s;
  float* ts = tb + lt_s;
  const float* x = cv.x + b * cv.x_batch;
  const float* a = cv.a + b * cv.a_batch;
  // x'_{c0 + i} = x_{c0 + sh + i}; tap record i holds a'_{kb + i} = a_{la - 1 - kb - i}
  const std::int64_t xf = c0 + p.sh, kb = j0 - c0 - 8 * ns - 8;
  const int nx = 8 * ns + shp::tile + 8, nt = 8 * ns + shp::row_reach + 12;
  if (cv.x_step == 1)
    stage_split<true>(x, xf, 1, xf, p.lx, nx, xb, xs);
  else
    stage_split<false>(x, xf * cv.x_step, cv.x_step, xf, p.lx, nx, xb, xs);
  const std::int64_t ta = (p.la - 1 - kb) * cv.a_step;
  if (cv.a_step == -1)
    stage_split<true>(a, ta, 1, kb, p.la, nt, tb, ts);
  else
    stage_split<false>(a, ta, -cv.a_step, kb, p.la, nt, tb, ts);
  __syncthreads();
  const int w = threadIdx.x / 32, g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
  // rows g and g + 8 of warp w: offset p + 32 q of row 16 w + g, and + 64
  const int off = (g & 3) + 32 * (4 * w + (g >> 2));
  const float* pb = tb + off + 8 * ns + 8 - t;  // A[g][t] of k-step st at pb[-8 st]
  const float* ps = ts + off + 8 * ns + 8 - t;
  const std::uint32_t xb_addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(xb));
  const std::uint32_t xs_addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(xs));
  constexpr std::uint32_t lbo = 16, sbo = 2048;
  float d[shp::acc], e[shp::acc], tot[shp::acc];
#pragma unroll
  for (int i = 0; i < shp::acc; ++i) d[i] = e[i] = tot[i] = 0.f;
  std::uint32_t ab[2][4], as[2][4];
  auto load = [&](int st, std::uint32_t(&bg)[4], std::uint32_t(&sl)[4]) {
    const int o = -8 * st;
    bg[0] = __float_as_uint(pb[o]);
    bg[1] = __float_as_uint(pb[o + 64]);
    bg[2] = __float_as_uint(pb[o - 4]);
    bg[3] = __float_as_uint(pb[o + 60]);
    sl[0] = __float_as_uint(ps[o]);
    sl[1] = __float_as_uint(ps[o + 64]);
    sl[2] = __float_as_uint(ps[o - 4]);
    sl[3] = __float_as_uint(ps[o + 60]);
  };
  load(0, ab[0], as[0]);
  for (int st0 = 0; st0 < ns; st0 += wgmma_chain) {
#pragma unroll
    for (int v = 0; v < wgmma_chain; ++v) {
      const int st = st0 + v, bf = v & 1;
      wgmma_fence();
      const std::uint64_t db = wgmma_desc(xb_addr + 32 * st, lbo, sbo);
      const std::uint64_t ds = wgmma_desc(xs_addr + 32 * st, lbo, sbo);
      wgmma_tf32_m64n128k8(d, ab[bf], db, v > 0);
      wgmma_tf32_m64n128k8(e, ab[bf], ds, 1);
      wgmma_tf32_m64n128k8(e, as[bf], db, 1);
      wgmma_commit();
      if (v + 1 < wgmma_chain) {
        wgmma_wait<1>();  // k-step st - 1 done: its A buffer is free
        load(st + 1, ab[bf ^ 1], as[bf ^ 1]);
      }
    }
    wgmma_wait<0>();
    wgmma_touch(d);
    wgmma_touch(e);
#pragma unroll
    for (int i = 0; i < shp::acc; ++i) tot[i] += d[i];
    if (st0 + wgmma_chain < ns) load(st0 + wgmma_chain, ab[0], as[0]);
  }
  float* o = part + (std::int64_t{b} * p.units + u) * shp::tile;
#pragma unroll
  for (int i = 0; i < shp::acc; ++i) {
    const int r = 16 * w + g + 8 * ((i >> 1) & 1), col = 2 * t + (i & 1), jj = i >> 2;
    o[(r & 3) + 32 * (r >> 2) + 4 * col + 512 * jj] = tot[i] + e[i];
  }
#else
  __trap();  // built without sm_90a: wgmma_tf32_available() is false
#endif
}

/// out_t = the partial tiles of t's tile added in unit order.
__global__ void wgmma_tf32_reduce(const correlation_view<float> cv, const wgmma_tf32_plan p,
                                  const float* part) {
  const std::int64_t t = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= p.lout) return;
  const int b = blockIdx.y, tile = static_cast<int>(t / shp::tile);
  const int r = static_cast<int>(t % shp::tile);
  float s = 0.f;
  for (int u = p.first[tile]; u < p.first[tile + 1]; ++u)
    s += part[(std::int64_t{b} * p.units + u) * shp::tile + r];
  cv.out[b * cv.out_batch + t * cv.out_step] = s;
}

/// Shared memory of a CTA for units of ns k-steps.
std::size_t smem_bytes(int ns) {
  return sizeof(float) *
         std::size_t(2 * (8 * ns + shp::tile + 8) + 2 * (8 * ns + shp::row_reach + 12));
}

/// Fills the units of `p` for ns k-steps per unit; false past max_tiles.
bool fill_plan(wgmma_tf32_plan& p, int ns) {
  p.ns = ns;
  p.tiles = static_cast<int>((std::int64_t{p.lout} + shp::tile - 1) / shp::tile);
  if (p.tiles > shp::max_tiles) return false;
  int units = 0;
  for (int t = 0; t < p.tiles; ++t) {
    p.first[t] = units;
    std::int64_t lo, hi;
    tile_range(p, t, lo, hi);
    if (hi > lo) units += static_cast<int>((hi - lo + 8 * std::int64_t{ns} - 1) / (8 * ns));
  }
  p.first[p.tiles] = p.units = units;
  return true;
}

/// The plan with the fewest rounds x (ns + 12) k-step times over the CTA slots
/// (12: the staging of a unit costs about 12 k-step times).
bool plan_for(const correlation_view<float>& c, int sms, wgmma_tf32_plan& best) {
  wgmma_tf32_plan p{};
  p.la = c.la;
  p.lx = c.lx;
  p.lout = c.lout;
  p.sh = std::int64_t{c.la} - 1 - c.lead;
  const std::int64_t slots = std::int64_t{shp::ctas_per_sm} * sms;
  double best_cost = -1;
  for (int ns = shp::ns_step; ns <= shp::ns_max; ns += shp::ns_step) {
    if (!fill_plan(p, ns)) return false;
    const std::int64_t rounds = (std::int64_t{c.batch} * p.units + slots - 1) / slots;
    const double cost = static_cast<double>(rounds) * (ns + 12.0);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = p;
    }
  }
  return true;
}

/// plan_for, remembered for the last shape and SM count per host thread: the
/// dispatch asks wgmma_tf32_supports and then launches the same shape, and a
/// PPL repeats its shapes, so the tile walk (~4k tile ranges at 65536) runs
/// once per shape instead of twice per call.
bool make_plan(const correlation_view<float>& c, int sms, wgmma_tf32_plan& best) {
  struct memo {
    int sms = 0, la = 0, lx = 0, lout = 0, lead = 0, batch = 0;
    bool valid = false, ok = false;
    wgmma_tf32_plan plan{};
  };
  static thread_local memo m;
  if (!m.valid || m.sms != sms || m.la != c.la || m.lx != c.lx || m.lout != c.lout ||
      m.lead != c.lead || m.batch != c.batch) {
    m.valid = false;  // stays invalid if plan_for throws
    m.ok = plan_for(c, sms, m.plan);
    m.valid = true;
    m.sms = sms;
    m.la = c.la;
    m.lx = c.lx;
    m.lout = c.lout;
    m.lead = c.lead;
    m.batch = c.batch;
  }
  if (m.ok) best = m.plan;
  return m.ok;
}

/// Per-device set-up, once per process: the workspace pool, stream-ordered
/// allocations that keep their memory between calls (release threshold
/// unlimited; the default pool returns memory at every synchronization, and
/// mapping the tens of MB of a large problem's workspace again on each call
/// costs as much as a large share of the kernel; docs/kernel-notes.md), and
/// the unit kernel's shared-memory limit for the largest unit. Pools live as
/// long as the process. Under stream capture the allocation and the free
/// become the graph's own memory nodes (CUDA's graph memory, kept by the
/// graph; the pool only sets their properties).
/// @return the pool of the current device
cudaMemPool_t device_setup() {
  static std::mutex mutex;
  static std::vector<cudaMemPool_t> pools;
  // no driver call with one visible device: the dispatch asks on every launch
  const int dev = current_device_id();
  const std::lock_guard<std::mutex> lock(mutex);
  if (pools.size() <= static_cast<std::size_t>(dev)) pools.resize(dev + 1, nullptr);
  if (pools[dev] == nullptr) {
    // the first call may come inside capture_calls' stream capture (this
    // thread's mode): the set-up calls are not stream work, so they run in
    // relaxed mode, which lets them through without ending the capture
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    MARG_CUDA_TRY(cudaThreadExchangeStreamCaptureMode(&mode));
    struct restore {
      cudaStreamCaptureMode& m;
      ~restore() { (void)cudaThreadExchangeStreamCaptureMode(&m); }
    } const restore_mode{mode};
    MARG_CUDA_TRY(cudaFuncSetAttribute(wgmma_tf32_units,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem_bytes(shp::ns_max))));
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t pool = nullptr;
    MARG_CUDA_TRY(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    MARG_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    pools[dev] = pool;
  }
  return pools[dev];
}

}  // namespace

bool wgmma_tf32_available(int dev) {
  int major = 0, minor = 0;
  MARG_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  MARG_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  bool available = false;
  if (major == 9 && minor == 0) {
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, wgmma_tf32_units) != cudaSuccess) {
      (void)cudaGetLastError();
    } else {
      // the sm_90a kernel holds three 64-register accumulators; the stub
      // built for other targets (a trap) a handful of registers
      available = attr.numRegs >= 3 * shp::acc;
    }
  }
  return available;
}

bool wgmma_tf32_supports(const correlation_view<float>& c, const device_features& d) {
  if (c.batch < 1 || c.batch > 65535 || c.la < 1 || c.lx < 1 || c.lout < 1) return false;
  if (!d.wgmma) return false;
  wgmma_tf32_plan p{};
  if (!make_plan(c, d.multiprocessors, p)) return false;
  return std::int64_t{c.batch} * p.units * shp::tile * std::int64_t{sizeof(float)} <=
         shp::max_workspace;
}

wgmma_tf32_work wgmma_tf32_work_of(const correlation_view<float>& c, int sms) {
  wgmma_tf32_plan p{};
  if (c.batch < 1 || !make_plan(c, sms, p)) return {};
  return {std::int64_t{c.batch} * p.units, p.ns, shp::tile, shp::ctas_per_sm};
}

// Single problems from 65536 outputs and 32768 taps, where wgmma outruns the
// mma kernel about twofold, and from 2048 taps once the band holds 1.15e8
// multiply-adds: wgmma has a fixed cost at any size that the work must
// outweigh; above it wgmma's throughput beats the large
// tile by up to about 3x. Gradients of at most 1.5 outputs per tap, where
// the large tile does well, from 1.6e8. Below 2048 taps the large tile wins
// up to about 1.3e8, wgmma from 2.5e8. docs/kernel-notes.md has the measurements.
bool wgmma_tf32_preferred(const correlation_view<float>& c) {
  constexpr std::int64_t min_macs = 115'000'000, square_grad_min_macs = 160'000'000;
  constexpr std::int64_t short_taps_min_macs = 250'000'000;
  if (c.batch != 1) return false;
  if (c.lout >= 65536 && c.la >= 32768) return true;
  const std::int64_t macs = band_macs(c);
  if (c.la >= 1024 && macs >= short_taps_min_macs) return true;
  const bool square_grad = c.lead == 0 && 2 * std::int64_t{c.lout} <= 3 * std::int64_t{c.la};
  return c.la >= 2048 && macs >= (square_grad ? square_grad_min_macs : min_macs);
}

void launch_wgmma_tf32(const correlation_view<float>& c, cudaStream_t stream) {
  wgmma_tf32_plan p{};
  if (!make_plan(c, multiprocessors(), p)) MARG_CUDA_TRY(cudaErrorInvalidValue);
  float* part = nullptr;
  if (p.units > 0) {
    const std::size_t smem = smem_bytes(p.ns);
    cudaMemPool_t pool = device_setup();
    const std::size_t bytes = std::size_t(c.batch) * p.units * shp::tile * sizeof(float);
    MARG_CUDA_TRY(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&part), bytes, pool, stream));
    wgmma_tf32_units<<<dim3(p.units, c.batch), shp::threads, smem, stream>>>(c, p, part);
    MARG_CHECK_LAUNCH(stream);
  }
  const int threads = 256;
  wgmma_tf32_reduce<<<dim3(static_cast<unsigned>((c.lout + threads - 1) / threads), c.batch),
                      threads, 0, stream>>>(c, p, part);
  MARG_CHECK_LAUNCH(stream);
  if (part != nullptr) MARG_CUDA_TRY(cudaFreeAsync(part, stream));
}

}  // namespace marg::detail::cuda
