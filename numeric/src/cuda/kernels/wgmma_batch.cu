// 3xTF32 float correlation of batches of small problems on wgmma.m64n32k8
// (sm_90a); see wgmma_batch.cuh and bench/notes/wgmma_batch.md.
//
// A k8 tf32 wgmma costs ~13 SM clocks for N <= 16 and reaches the tensor peak
// from N = 32 (16 clocks), so one problem's 3xTF32 products share a single
// m64n32k8 per k-step. For the tile of 512 outputs at J and the k-step at
// position P0 (a multiple of 8), with K column c at position pi(c) = 2 c for
// c < 4 and 2 (c - 4) + 1 for c >= 4:
//   row R = 32 v + r:     A[R][c] = a_v[P0 + pi(c) - rho(r)],    rho(r) = (r & 7) + 64 (r >> 3)
//   column n = 8 jc + i:  B[c][n] = X_v'[J + tau + P0 + pi(c)], tau = 8 i + 256 j, jc = v' + 2 j
// with v, v' = 0 (big TF32 part) or 1 (small), so D[R][n] is the product
// (v, v') of output J + rho + tau over the k-step's 8 positions. Big-big,
// big-small and small-big are summed (the small-small quarter is computed and
// dropped: a wgmma of N = 16 would cost the same clocks). B is a sliding
// window over de-interleaved copies of X: core jc reads even positions (K core
// 0) from one array and odd positions (K core 1, LBO) from another, a core
// row is 4 values = 8 positions and rows are 16 bytes apart, copy j is X
// shifted by 256 (SBO = two arrays), and k-step + 1 moves the descriptor by
// 16 bytes. A is the Toeplitz block of the split taps: 4 scalar shared loads
// per thread and k-step (a warp reads 14 consecutive words per load; 8- and
// 16-byte tap records cost more shared-memory wavefronts, and a register ring
// reusing rows g + 8 = rows g eight k-steps earlier costs occupancy: notes).
// The k range of a tile is every position some (rho, tau) pair needs: rho
// spreads 199, so a gradient of 512 taps runs 711 positions (89 k-steps) and a
// full convolution 512 x 512 two tiles of 64 k-steps.
//
// Accumulation: D restarts every 16 k-steps and is added into an fp32 total
// (tensor-core accumulation truncates). One warpgroup (CTA) per problem:
// zero the shared arrays, stage the split operands (each x element and tap
// loaded once), run the tiles, add the v = 1 rows (warps 2, 3) into the v = 0
// rows (warps 0, 1) through shared memory, store.
//
// Measured (H200, notes): bound by the shared-memory pipe (the tap loads and
// the wgmma's B reads), not by the tensor pipe; slower than the FFMA pairs
// kernel on 4096 pairs of 512, so not dispatched.
#include "wgmma_batch.cuh"

#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>

#include "../cuda_check.hpp"
#include "wgmma_tf32.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MARG_WGMMA_BATCH_DEVICE 1
#endif

namespace marg::detail::cuda {
namespace {

/// Fixed shape of the batched wgmma kernel.
struct wgmma_batch_shape {
  static constexpr int threads = 128;
  static constexpr int tile = 512;     ///< outputs per tile
  static constexpr int rho_max = 199;  ///< largest row offset, 7 + 64 * 3
  static constexpr int tau_max = 312;  ///< largest column offset, 56 + 256
  static constexpr int j_shift = 256;  ///< column offset of the second X copy
  static constexpr int koff = 200;  ///< tap array index of tap 0 (> 199: row g + 8 reaches k - 199)
  static constexpr int chain = 16;  ///< k-steps per accumulator chain
  static constexpr int max_taps = 1024;
  static constexpr int max_out = 1024;
  static constexpr int acc = 16;  ///< m64n32 fp32 accumulators per thread
};
using wbs = wgmma_batch_shape;
static_assert(wbs::rho_max == 7 + 64 * 3 && wbs::tau_max == 56 + wbs::j_shift &&
                  wbs::tile == 2 * wbs::j_shift && wbs::koff > wbs::rho_max - 1 && wbs::chain == 16,
              "rows rho = p + 64 q (p < 8, q < 4), columns tau = 8 i + 256 j (j < 2)");

/// Length of one staged X array (even or odd positions of one copy), a
/// multiple of 4: B reads index (J + P0) / 2 + 4 st + 31 at most, J <= 512,
/// P0 + 8 st < la + rho_max.
__host__ __device__ inline int half_len(int la) {
  return ((la + 710) / 2 + 36) / 4 * 4;
}
/// Tap array length per operand part (a multiple of 4): tap k at k + koff, read
/// for k in [-199, la + 206).
__host__ __device__ inline int pair_len(int la) {
  return (la + wbs::koff + 208 + 3) / 4 * 4;
}
/// Shared memory of a CTA in floats: 8 X arrays, 2 tap arrays, the
/// epilogue's exchange of 64 threads x 8 values.
__host__ __device__ inline int smem_floats(int la) {
  return 8 * half_len(la) + 2 * pair_len(la) + 512;
}

#if defined(MARG_WGMMA_BATCH_DEVICE)
__device__ __forceinline__ std::uint32_t tf32_rna(float v) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return r;
}

/// No-swizzle shared-memory matrix descriptor (addresses and offsets in bytes).
__device__ __forceinline__ std::uint64_t desc(std::uint32_t addr, std::uint32_t lbo,
                                              std::uint32_t sbo) {
  return std::uint64_t{(addr >> 4) & 0x3fffu} | (std::uint64_t{(lbo >> 4) & 0x3fffu} << 16) |
         (std::uint64_t{(sbo >> 4) & 0x3fffu} << 32);
}

__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
/// Orders later reads of the accumulators after the preceding wait.
__device__ __forceinline__ void touch(float (&d)[wbs::acc]) {
#pragma unroll
  for (int i = 0; i < wbs::acc; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// d (64 x 32 fp32) += A (64 x 8 tf32, registers) B (8 x 32 tf32, shared at
/// the descriptor {db_lo, db_hi}); d is overwritten when accumulate is 0. The
/// descriptor travels as two 32-bit halves: the k-loop only adds to the low
/// one (start address), which keeps it a single integer add.
__device__ __forceinline__ void mma_m64n32k8(float (&d)[wbs::acc], const std::uint32_t (&a)[4],
                                             std::uint32_t db_lo, std::uint32_t db_hi,
                                             int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n.reg .b64 db;\nsetp.ne.b32 p, %22, 0;\nmov.b64 db, {%20, %21};\n"
      "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "{%16, %17, %18, %19}, db, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(db_lo), "r"(db_hi), "r"(accumulate));
}
#endif

/// One problem per CTA (blockIdx.x): stage, run the tiles, store.
__global__ void __launch_bounds__(wbs::threads)
    wgmma_batch_kernel(const correlation_view<float> c) {
#if defined(MARG_WGMMA_BATCH_DEVICE)
  extern __shared__ __align__(128) float sm[];
  const int hl = half_len(c.la), tl = pair_len(c.la);
  float* xarr = sm;         // core jc = v' + 2 j: even positions at xarr + 2 jc hl, odd at + hl
  float* tp = sm + 8 * hl;  // big taps, then small taps
  float* xchg = sm + 8 * hl + 2 * tl;
  const std::int64_t b = blockIdx.x;
  const float* x = c.x + b * c.x_batch;
  const float* a = c.a + b * c.a_batch;
  // zeros first (16-byte stores), then each x element and tap once
  {
    const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
    float4* s4 = reinterpret_cast<float4*>(sm);
    for (int i = threadIdx.x; i < (8 * hl + 2 * tl) / 4; i += wbs::threads) s4[i] = z;
  }
  __syncthreads();
  // x_i is position lead + i: copy j holds position q + 256 j at q / 2 of the
  // array of q's parity (big 4 j + parity, small 4 j + 2 + parity)
  constexpr int inflight = 4;
  {
    const std::int64_t need = std::int64_t{2} * hl + wbs::j_shift - c.lead;
    const int nx = static_cast<int>(need < 0 ? 0 : (need < c.lx ? need : c.lx));
    for (int i0 = threadIdx.x; i0 < nx; i0 += inflight * wbs::threads) {
      float v[inflight];
#pragma unroll
      for (int r = 0; r < inflight; ++r) {
        const int i = i0 + r * wbs::threads;
        v[r] = i < nx ? x[std::int64_t{i} * c.x_step] : 0.f;
      }
#pragma unroll
      for (int r = 0; r < inflight; ++r) {
        const int i = i0 + r * wbs::threads;
        if (i < nx) {
          const std::uint32_t bg = tf32_rna(v[r]);
          const float big = __uint_as_float(bg);
          const float small = __uint_as_float(tf32_rna(v[r] - big));
          const int q = i + c.lead, par = q & 1;
          if (q < 2 * hl) {
            xarr[par * hl + (q >> 1)] = big;
            xarr[(2 + par) * hl + (q >> 1)] = small;
          }
          if (q >= wbs::j_shift) {
            xarr[(4 + par) * hl + ((q - wbs::j_shift) >> 1)] = big;
            xarr[(6 + par) * hl + ((q - wbs::j_shift) >> 1)] = small;
          }
        }
      }
    }
  }
  // taps: big and small parts at k + koff
  for (int k0 = threadIdx.x; k0 < c.la; k0 += inflight * wbs::threads) {
    float v[inflight];
#pragma unroll
    for (int r = 0; r < inflight; ++r) {
      const int k = k0 + r * wbs::threads;
      v[r] = k < c.la ? a[std::int64_t{k} * c.a_step] : 0.f;
    }
#pragma unroll
    for (int r = 0; r < inflight; ++r) {
      const int k = k0 + r * wbs::threads;
      if (k < c.la) {
        const std::uint32_t bg = tf32_rna(v[r]);
        const float big = __uint_as_float(bg);
        const float small = __uint_as_float(tf32_rna(v[r] - big));
        const int i = k + wbs::koff;
        tp[i] = big;
        tp[tl + i] = small;
      }
    }
  }
  // the wgmma reads shared memory through the async proxy
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  // fragment rows g and g + 8 of warp w: rho = g + 64 q, q = 2 (w & 1) + h; K
  // column t is position 2 t, column t + 4 position 2 t + 1
  const int rho_g = g + 128 * (w & 1);
  const float* pr = tp + (w >> 1) * tl + wbs::koff + 2 * t - rho_g;  // k-step st: pr[p0 + 8 st]
  const std::uint32_t x_addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(xarr));
  const std::uint32_t lbo = 4u * static_cast<std::uint32_t>(hl), sbo = 2 * lbo;
  for (int jt = 0; jt * wbs::tile < c.lout; ++jt) {
    const int J = jt * wbs::tile;
    std::int64_t plo = std::int64_t{c.lead} - J - wbs::tau_max;
    if (plo < 0) plo = 0;
    std::int64_t phi = std::int64_t{c.la} + wbs::rho_max;
    if (std::int64_t{c.lead} + c.lx - J < phi) phi = std::int64_t{c.lead} + c.lx - J;
    const int p0 = static_cast<int>(plo) & ~7;
    const int ns = phi > plo ? static_cast<int>((phi - p0 + 7) / 8) : 0;
    float tot[wbs::acc], d[wbs::acc];
#pragma unroll
    for (int i = 0; i < wbs::acc; ++i) tot[i] = d[i] = 0.f;
    // the A fragment of k-step st: taps pt[8 st] (row g, column t), pt[8 st -
    // 64] (row g + 8), pt[8 st + 1] (row g, column t + 4), pt[8 st - 63], in a
    // ring of 4 k-steps (k-step st + 1 loads into the buffer of st - 3, retired
    // by wait_group 2 of k-step st - 1)
    const float* pt = pr + p0;
    float rg[4][4];
    if (ns > 0) {
      rg[0][0] = pt[0];
      rg[0][1] = pt[-64];
      rg[0][2] = pt[1];
      rg[0][3] = pt[-63];
    }
    const std::uint64_t desc0 = desc(x_addr + 2u * static_cast<std::uint32_t>(J + p0), lbo, sbo);
    const std::uint32_t d_hi = static_cast<std::uint32_t>(desc0 >> 32);
    // k-step st of the chain at st0; Full: no tail checks
    auto step = [&](auto full, int v, int st0, int here) {
      constexpr bool is_full = decltype(full)::value;
      const int st = st0 + v;
      const std::uint32_t af[4] = {__float_as_uint(rg[v % 4][0]), __float_as_uint(rg[v % 4][1]),
                                   __float_as_uint(rg[v % 4][2]), __float_as_uint(rg[v % 4][3])};
      fence();
      // + st: 16 bytes (one unit of the address field) per k-step
      mma_m64n32k8(d, af, static_cast<std::uint32_t>(desc0) + st, d_hi, v > 0);
      commit();
      if (is_full ? v + 1 < wbs::chain : v + 1 < here) {
        rg[(v + 1) % 4][0] = pt[8 * (st + 1)];
        rg[(v + 1) % 4][1] = pt[8 * (st + 1) - 64];
        rg[(v + 1) % 4][2] = pt[8 * (st + 1) + 1];
        rg[(v + 1) % 4][3] = pt[8 * (st + 1) - 63];
      }
      wait<2>();
    };
    for (int st0 = 0; st0 < ns; st0 += wbs::chain) {
      const int here = ns - st0 < wbs::chain ? ns - st0 : wbs::chain;
      if (here == wbs::chain) {
#pragma unroll
        for (int v = 0; v < wbs::chain; ++v) step(std::true_type{}, v, st0, here);
      } else {
#pragma unroll
        for (int v = 0; v < wbs::chain; ++v)
          if (v < here) step(std::false_type{}, v, st0, here);
      }
      wait<0>();
      touch(d);
#pragma unroll
      for (int i = 0; i < wbs::acc; ++i) tot[i] += d[i];
      if (st0 + wbs::chain < ns) {
        rg[0][0] = pt[8 * (st0 + wbs::chain)];
        rg[0][1] = pt[8 * (st0 + wbs::chain) - 64];
        rg[0][2] = pt[8 * (st0 + wbs::chain) + 1];
        rg[0][3] = pt[8 * (st0 + wbs::chain) - 63];
      }
    }
    // value idx = 4 j + 2 h + e: row g + 8 h, column 2 t + e of cores 2 j (big X)
    // and 2 j + 1 (small X)
    float val[8];
#pragma unroll
    for (int idx = 0; idx < 8; ++idx) {
      const int j = idx >> 2, lo = idx & 3;
      val[idx] = tot[8 * j + lo] + tot[8 * j + 4 + lo];
    }
    __syncthreads();  // the previous tile's exchange has been read
    if (w >= 2) {
#pragma unroll
      for (int idx = 0; idx < 8; ++idx) xchg[((w & 1) * 32 + lane) * 8 + idx] = val[idx];
    }
    __syncthreads();
    if (w < 2) {
      float* out = c.out + b * c.out_batch;
#pragma unroll
      for (int idx = 0; idx < 8; ++idx) {
        const int j = idx >> 2, h = (idx >> 1) & 1, e = idx & 1;
        const int o = J + rho_g + 64 * h + 8 * (2 * t + e) + wbs::j_shift * j;
        if (o < c.lout)
          out[std::int64_t{o} * c.out_step] = val[idx] + xchg[((w & 1) * 32 + lane) * 8 + idx];
      }
    }
  }
#else
  __trap();  // built without sm_90a: wgmma_batch_supports() is false
#endif
}

/// Whether this device loads the sm_90a kernel (not the stub), once per host
/// thread and device.
bool available() {
  struct memo {
    int device = -1;
    bool available = false;
  };
  static thread_local memo m;
  int dev = 0;
  MARG_CUDA_TRY(cudaGetDevice(&dev));
  if (m.device == dev) return m.available;
  bool ok = false;
  if (wgmma_tf32_available()) {
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, wgmma_batch_kernel) != cudaSuccess)
      (void)cudaGetLastError();
    else
      ok = attr.numRegs >= 2 * wbs::acc;  // the stub (a trap) holds a handful
  }
  m = {dev, ok};
  return ok;
}

/// The whole unified L1 as shared memory for the kernel, once per device and
/// process (with the default carveout few CTAs of ~30 KB were resident:
/// bench/notes/wgmma_batch.md call 2). Not stream work: inside a stream
/// capture it runs in relaxed capture mode.
void device_setup() {
  static std::mutex mutex;
  static std::vector<bool> done;
  int dev = 0;
  MARG_CUDA_TRY(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(mutex);
  if (done.size() <= static_cast<std::size_t>(dev)) done.resize(dev + 1, false);
  if (done[dev]) return;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  MARG_CUDA_TRY(cudaThreadExchangeStreamCaptureMode(&mode));
  struct restore {
    cudaStreamCaptureMode& m;
    ~restore() { (void)cudaThreadExchangeStreamCaptureMode(&m); }
  } const restore_mode{mode};
  MARG_CUDA_TRY(cudaFuncSetAttribute(wgmma_batch_kernel,
                                     cudaFuncAttributePreferredSharedMemoryCarveout,
                                     cudaSharedmemCarveoutMaxShared));
  MARG_CUDA_TRY(cudaFuncSetAttribute(
      wgmma_batch_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
      static_cast<int>(sizeof(float) * static_cast<std::size_t>(smem_floats(wbs::max_taps)))));
  done[dev] = true;
}

}  // namespace

bool wgmma_batch_supports(const correlation_view<float>& c) {
  if (c.batch < 1 || c.la < 1 || c.la > wbs::max_taps || c.lx < 1 || c.lout < 1 ||
      c.lout > wbs::max_out || c.lead < 0)
    return false;
  return available();
}

bool wgmma_batch_preferred(const correlation_view<float>& c) {
  (void)c;
  return false;  // not measured yet
}

void launch_wgmma_batch(const correlation_view<float>& c, cudaStream_t stream) {
  device_setup();
  const std::size_t smem = sizeof(float) * static_cast<std::size_t>(smem_floats(c.la));
  wgmma_batch_kernel<<<static_cast<unsigned>(c.batch), wbs::threads, smem, stream>>>(c);
  MARG_CHECK_LAUNCH(stream);
}

}  // namespace marg::detail::cuda
