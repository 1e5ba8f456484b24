// Session 20 (standalone, not built by CMake): a timeline of the long-row
// lane kernel. A copy of kernel_banded_lane_long (kernels/lane_long.cuh) whose staging
// is chosen by argument 4 (see timed_lane_long's modes; call 1 ran round 39's kernel,
// call 2 a copy warp's bulk copies, calls 3-4 copy warps) with
// %globaltimer stamps per warp: entry, after the block barrier (past
// griddepcontrol.wait), after the staging is issued, each lane block's wait
// done and store done, exit. 12 launches back to back with early start (as
// launch_lane_long), rotating over 4 buffer sets; prints every stamp, then
// events timings of the copy and of launch_variant(lane) for comparison.
// Build (repo root, after building the library):
//   nvcc -O3 -std=c++20 -arch=sm_90a -I numeric/src/cuda -I numeric/include -I numeric/src \
//     -I <build>/numeric/include -o timeline bench/notes/lane_long/timeline.cu \
//     <build>/libmarg/libmarg.a <build>/marg_jemalloc/libmarg_jemalloc.a -ldl -lrt -lpthread
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/lane_long.cuh"
#include "launch.hpp"

namespace mc = marg::detail::cuda;
using namespace marg::detail::cuda;
#define CK(x)                                                            \
  do {                                                                   \
    cudaError_t e_ = (x);                                                \
    if (e_ != cudaSuccess) {                                             \
      printf("CUDA error %s at %d\n", cudaGetErrorString(e_), __LINE__); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

// the harness's block: 16 compute warps (lane_long_tuning::W) and 4 copy warps
constexpr int W = marg::detail::cuda::lane_long_tuning::W, NC = 4, COMPUTE = 32 * W,
              THREADS = COMPUTE + 32 * NC;
constexpr int NF =
    20;  // stamps per warp: 0 entry, 1 sync, 2 staged, 3 + 2m wait, 4 + 2m done, 19 exit
__device__ __forceinline__ unsigned long long gt() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// A team of nt threads (k its index) stages chunks i0 .. i1 - 1: lanes 8 q ..
// 8 q + 7 of row slot k / 8 copy rows k / 8, k / 8 + nt / 8, ... (nt = 512: one
// row each, round 39's mapping; nt = 128: four rows each, the copy warps').
template <class T>
__device__ void stage_team(const correlation_view<T>& c, const lane_bulk_shape& s,
                           const lane_long_plan& pl, std::int64_t g, T* buf, std::uint64_t* bar,
                           int i0, int i1, int k, int nt) {
  using C = lane_tuning;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const int sub = k % 8, slot = k / 8, slots = nt / 8;
  const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
  for (int i = i0; i < i1; ++i) {
    for (int row = slot; row < 2 * C::P; row += slots) {
      const bool is_a = row < C::P;
      const int p = is_a ? row : row - C::P;
      const bool on = p < (is_a ? (c.a_batch == 0 ? 1 : live) : (c.x_batch == 0 ? 1 : live));
      if (!on) continue;
      const T* const src =
          is_a ? taps_row(c) + (g * C::P + p) * c.a_batch : c.x + (g * C::P + p) * c.x_batch;
      const std::int64_t step = is_a ? (c.a_step < 0 ? -c.a_step : c.a_step) : c.x_step;
      T* const dst =
          is_a ? buf + s.off_a + p * s.pa : buf + C::P * s.pa + (c.lead - s.t_base) + p * s.px;
      const bool vec = is_a ? s.vec_a : s.vec_x;
      const int unit = vec ? V : 1;
      const auto copy = [&](int col, int n) {
        for (int u = sub * unit; u < n; u += 8 * unit) {
          const unsigned to = lane_smem_addr(dst + col + u);
          const T* from = src + (col + u) * (vec ? 1 : step);
          if (vec)
            lane_cp_async<16>(to, from);
          else
            lane_cp_async<static_cast<int>(sizeof(T))>(to, from);
        }
      };
      const int b0 = is_a ? pl.ba[i] : pl.bx[i], b1 = is_a ? pl.ba[i + 1] : pl.bx[i + 1];
      const int e1 = is_a ? pl.ea[i + 1] : pl.ex[i + 1], e0 = is_a ? pl.ea[i] : pl.ex[i];
      copy(b0, b1 - b0);
      copy(e1, e0 - e1);
    }
    asm volatile(
        "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(lane_smem_addr(bar + i))
        : "memory");
  }
}

// One bulk copy (cp.async.bulk) of `bytes` from global src to shared dst, counted on bar.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes,
                                          std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(lane_smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(lane_smem_addr(bar))
      : "memory");
}

// Copy warp (lane p: problem p's taps and x rows) by bulk copies: Halves = false, one
// copy per row on bar[K - 1]; Halves = true, the rows' outer halves (chunks 0-3 from
// both ends) on bar[3], then the inner halves on bar[K - 1]. Needs vec rows.
template <bool Halves, class T>
__device__ void stage_bulk(const correlation_view<T>& c, const lane_bulk_shape& s,
                           const lane_long_plan& pl, std::int64_t g, T* buf, std::uint64_t* bar) {
  using C = lane_tuning;
  constexpr int K = lane_long_tuning::K;
  constexpr unsigned z = sizeof(T);
  const int p = threadIdx.x % 32;
  const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
  const bool on_a = p < (c.a_batch == 0 ? 1 : live), on_x = p < (c.x_batch == 0 ? 1 : live);
  const T* const sa = taps_row(c) + (g * C::P + p) * c.a_batch;
  const T* const sx = c.x + (g * C::P + p) * c.x_batch;
  T* const da = buf + s.off_a + p * s.pa;
  T* const dx = buf + C::P * s.pa + (c.lead - s.t_base) + p * s.px;
  const auto piece = [&](bool on, T* d, const T* src, int b0, int b1, std::uint64_t* bb) {
    if (on && b1 > b0) bulk_load(d + b0, src + b0, (b1 - b0) * z, bb);
  };
  if (!Halves) {
    lane_bar_expect(bar + K - 1, (on_a ? c.la * z : 0u) + (on_x ? c.lx * z : 0u));
    piece(on_a, da, sa, 0, c.la, bar + K - 1);
    piece(on_x, dx, sx, 0, c.lx, bar + K - 1);
    return;
  }
  const int h = K / 2;
  const unsigned outer_a = on_a ? (pl.ba[h] + c.la - pl.ea[h]) * z : 0u;
  const unsigned outer_x = on_x ? (pl.bx[h] + c.lx - pl.ex[h]) * z : 0u;
  lane_bar_expect(bar + h - 1, outer_a + outer_x);
  piece(on_a, da, sa, 0, pl.ba[h], bar + h - 1);
  piece(on_a, da, sa, pl.ea[h], c.la, bar + h - 1);
  piece(on_x, dx, sx, 0, pl.bx[h], bar + h - 1);
  piece(on_x, dx, sx, pl.ex[h], c.lx, bar + h - 1);
  lane_bar_expect(bar + K - 1, (on_a ? c.la * z : 0u) - outer_a + (on_x ? c.lx * z : 0u) - outer_x);
  piece(on_a, da, sa, pl.ba[h], pl.ea[h], bar + K - 1);
  piece(on_x, dx, sx, pl.bx[h], pl.ex[h], bar + K - 1);
}

// Mode: 0 compute threads stage every chunk (round 39); 1 copy warps 16-19 (call
// 3's library); 2 copy warps 0-3; 3 compute threads chunk 0, copy warps 16-19
// chunks 1-7; 4 compute threads chunks 0-3, copy warps 16-19 chunks 4-7; 5 compute
// warps 0-7 stage everything (two per scheduler); 6 compute warps 0-11 (three); 7 copy
// warp 16 by one bulk copy per row; 8 copy warp 16 by bulk copies of the rows' halves.
template <class T, bool Rev, int Mode>
__global__ void __launch_bounds__(THREADS, 1)
    timed_lane_long(const correlation_view<T> c, const lane_long_plan pl, unsigned long long* ts,
                    unsigned* sm) {
  using C = lane_tuning;
  using L = lane_long_tuning;
  constexpr int R = C::R, K = L::K;
  constexpr bool low = Mode == 2;    // copy warps first
  constexpr bool bulkm = Mode >= 7;  // bulk copies by warp 16
  constexpr int split = Mode == 0 || Mode == 5 || Mode == 6 ? K
                        : Mode == 3                         ? 1
                        : Mode == 4                         ? 4
                                                            : 0;                             // compute threads: [0, split)
  constexpr int team = Mode == 5 ? 256 : Mode == 6 ? 384 : COMPUTE;  // compute threads staging
  extern __shared__ __align__(16) unsigned char lane_smem[];
  const int hw = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool copier = low ? hw < NC : hw >= L::W;
  const int warp = copier ? L::W : (low ? hw - NC : hw);  // compute index (W: a copy warp)
  const int cw = low ? hw : hw - L::W;                    // copy warp index
  unsigned long long* const st = ts + (std::size_t(blockIdx.x) * L::W + warp) * NF;
  if (lane == 0 && !copier) st[0] = gt();
  if (threadIdx.x == 0) sm[blockIdx.x] = smid();
  auto* const bar = reinterpret_cast<std::uint64_t*>(lane_smem);
  T* const buf = reinterpret_cast<T*>(lane_smem + L::head);
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  const int len = s.buffer();
  T* const wslab = buf + len + warp * (32 * L::po);
  if (blockIdx.x >= s.groups) return;
  if (!copier) {
    const int kc = warp * 32 + lane;
    const int row = kc / L::tpr, sub = kc % L::tpr;
    const bool is_a = row < C::P;
    T* const dst = is_a ? buf + row * s.pa : buf + C::P * s.pa + (row - C::P) * s.px;
    const int v0 = is_a ? s.off_a : c.lead - s.t_base;
    const int v1 = v0 + (is_a ? c.la : c.lx), n = is_a ? s.pa : s.px;
    for (int e = sub; e < v0; e += L::tpr) dst[e] = T(0);
    for (int e = v1 + sub; e < n; e += L::tpr) dst[e] = T(0);
  }
  if (threadIdx.x == 0) {
    for (int i = 0; i < K; ++i)
      lane_bar_init_count(bar + i, bulkm ? 32 : i < split ? team : 32 * NC);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  const int wp = min(warp, L::W - 1);
  const std::uint64_t ord = pl.ord[wp];
  const std::uint32_t nds = pl.nds[wp];
  const int n = pl.own[wp];
  await_previous_kernel();
  __syncthreads();
  if (lane == 0 && !copier) st[1] = gt();
  const T* const ta = buf + (c.a_batch == 0 ? 0 : lane * s.pa);
  const T* const tx = buf + C::P * s.pa + (c.x_batch == 0 ? 0 : lane * s.px);
  unsigned parity = 0;
  for (std::int64_t g = blockIdx.x; g < s.groups; g += gridDim.x, parity ^= 1) {
    if (g != blockIdx.x) __syncthreads();
    if (copier) {
      if (bulkm) {
        if (cw == 0) stage_bulk<Mode == 8>(c, s, pl, g, buf, bar);
        continue;
      }
      if (split < K) stage_team(c, s, pl, g, buf, bar, split, K, cw * 32 + lane, 32 * NC);
      continue;
    }
    if (split > 0 && warp * 32 < team)
      stage_team(c, s, pl, g, buf, bar, 0, split, warp * 32 + lane, team);
    if (lane == 0) st[2] = gt();
    const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
    for (int m = 0; m < n; ++m) {
      const int j0 = s.js + R * static_cast<int>(ord >> (8 * m) & 0xFF);
      int nd = static_cast<int>(nds >> (4 * m) & 0xF) - 1;
      if (bulkm && nd >= 0) nd = Mode == 8 && nd < K / 2 ? K / 2 - 1 : K - 1;
      if (nd >= 0) lane_bar_wait(bar + nd, parity);
      if (lane == 0 && m < 8) st[3 + 2 * m] = gt();
      T acc[R];
      int k0 = 0;
      const int ng = lane_tap_range(c, j0, acc, k0);
      if (ng > 0) {
        lane_steps<T, Rev, false, true, L::passes>(tx + (j0 + k0 - s.t_base),
                                                   Rev ? ta + (s.la4 - C::G - k0) : ta + k0, ng,
                                                   acc, (c.lead - j0 - 3 - k0) / C::G >= 3);
      }
      T* const mine = wslab + lane * L::po;
#pragma unroll
      for (int r = 0; r < R; r += C::G) lane_put4(mine + r, acc + r);
      __syncwarp();
      const int half = lane >> 4, r = lane & 15, j = j0 + r;
      if (j >= 0 && j < c.lout) {
        T* o = c.out + (g * C::P + half) * c.out_batch + std::int64_t{j} * c.out_step;
        const T* v = wslab + half * L::po + r;
        const std::int64_t ob = 2 * c.out_batch;
        if (live == C::P) {
#pragma unroll
          for (int i = 0; i < 16; ++i, o += ob) *o = v[2 * L::po * i];
        } else {
          for (int i = 0; 2 * i + half < live; ++i, o += ob) *o = v[2 * L::po * i];
        }
      }
      __syncwarp();
      if (lane == 0 && m < 8) st[4 + 2 * m] = gt();
    }
  }
  if (lane == 0 && !copier) st[NF - 1] = gt();
}

// A plan with the library's chunks but another assignment of lane blocks to warps:
// longest first, each to the warp furthest below its target, the targets in
// proportion to 1 + alpha (w / 4 - 1.5) (warps w, w + 4, w + 8, w + 12 share a
// scheduler; call 1 saw the higher ones finish first); each warp's blocks then in
// order of the chunks they need, as lane_long_plan_of.
template <class T>
lane_long_plan weighted_plan(const correlation_view<T>& c, double alpha) {
  using L = lane_long_tuning;
  constexpr int K = L::K, R = lane_tuning::R, G = lane_tuning::G;
  lane_long_plan pl = lane_long_plan_of(c);
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  const auto need = [&](const int* b, const int* e, int n, int lo, int hi) {
    lo = std::max(lo, 0), hi = std::min(hi, n);
    if (lo >= hi) return -1;
    int last = -1;
    for (int i = 0; i < K; ++i)
      if ((lo < b[i + 1] && hi > b[i]) || (lo < e[i] && hi > e[i + 1])) last = i;
    return last;
  };
  std::vector<int> steps(s.nblk), nd(s.nblk);
  double total = 0;
  for (int b = 0; b < s.nblk; ++b) {
    const int j0 = s.js + R * b;
    const int klo = std::max(0, c.lead - (j0 + R - 1));
    const int khi = std::min(c.la - 1, c.lead + c.lx - 1 - j0);
    steps[b] = klo <= khi ? khi / G + 1 - klo / G : 0, nd[b] = -1;
    if (klo <= khi) {
      const int k0 = klo / G * G, k1 = (khi / G + 1) * G;
      const int na = c.a_step < 0 ? need(pl.ba, pl.ea, c.la, c.la - k1, c.la - k0)
                                  : need(pl.ba, pl.ea, c.la, k0, k1);
      const int nx = need(pl.bx, pl.ex, c.lx, j0 + k0 - c.lead, j0 + k1 + R - c.lead);
      nd[b] = std::max(na, nx);
    }
    total += steps[b] + 2;  // + a block's set-up and stores, ~2 steps
  }
  double wsum = 0, target[L::W], load[L::W] = {};
  for (int w = 0; w < L::W; ++w) wsum += target[w] = 1 + alpha * (w / 4 - 1.5);
  for (int w = 0; w < L::W; ++w) target[w] *= total / wsum;
  std::vector<int> order(s.nblk);
  for (int b = 0; b < s.nblk; ++b) order[b] = b;
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return steps[x] > steps[y]; });
  std::vector<std::vector<int>> own(L::W);
  for (int b : order) {
    int best = -1;
    for (int w = 0; w < L::W; ++w)
      if (int(own[w].size()) < L::max_own &&
          (best < 0 || target[w] - load[w] > target[best] - load[best]))
        best = w;
    own[best].push_back(b), load[best] += steps[b] + 2;
  }
  for (int w = 0; w < L::W; ++w) {
    std::stable_sort(own[w].begin(), own[w].end(), [&](int x, int y) { return nd[x] < nd[y]; });
    pl.own[w] = int(own[w].size()), pl.ord[w] = 0, pl.nds[w] = 0;
    for (int m = 0; m < pl.own[w]; ++m) {
      pl.ord[w] |= std::uint64_t(own[w][m]) << (8 * m);
      pl.nds[w] |= std::uint32_t(nd[own[w][m]] + 1) << (4 * m);
    }
  }
  return pl;
}

int main(int argc, char** argv) {
  const int batch = argc > 1 ? atoi(argv[1]) : 4096, la = argc > 2 ? atoi(argv[2]) : 512,
            lx = argc > 3 ? atoi(argv[3]) : 512;
  const int lout = la + lx - 1, sets = 4, launches = 12;
  using T = float;
  T *a, *x, *o;
  CK(cudaMalloc(&a, sizeof(T) * std::size_t(sets) * batch * la));
  CK(cudaMalloc(&x, sizeof(T) * std::size_t(sets) * batch * lx));
  CK(cudaMalloc(&o, sizeof(T) * std::size_t(sets) * batch * lout));
  std::vector<T> h(std::size_t(sets) * batch * std::max(la, lx));
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = T((i * 2654435761u % 1000) + 1) / 1000;
  CK(cudaMemcpy(a, h.data(), sizeof(T) * std::size_t(sets) * batch * la, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x, h.data(), sizeof(T) * std::size_t(sets) * batch * lx, cudaMemcpyHostToDevice));
  auto view = [&](int s) {
    correlation_view<T> c{};
    c.la = la, c.a = a + std::size_t(s) * batch * la + (la - 1), c.a_step = -1, c.a_batch = la;
    c.x = x + std::size_t(s) * batch * lx, c.x_step = 1, c.x_batch = lx, c.lx = lx;
    c.lead = la - 1, c.out = o + std::size_t(s) * batch * lout, c.out_step = 1, c.out_batch = lout,
    c.lout = lout, c.batch = batch;
    return c;
  };
  const auto c0 = view(0);
  const int dev_smem = [] {
    int v = 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    return v;
  }();
  if (!lane_long_fits(c0, dev_smem)) {
    printf("does not fit\n");
    return 1;
  }
  // argument 5: alpha of weighted_plan (absent: the library's plan)
  const auto pl = argc > 5 ? weighted_plan(c0, atof(argv[5])) : lane_long_plan_of(c0);
  const int bytes = int(lane_long_bytes(c0));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int grid = std::min(lane_bulk_shape_of(c0).groups, sms);
  const int mode = argc > 4 ? atoi(argv[4]) : 1;
  constexpr void (*kerns[9])(correlation_view<T>, lane_long_plan, unsigned long long*,
                             unsigned*) = {
      timed_lane_long<T, true, 0>, timed_lane_long<T, true, 1>, timed_lane_long<T, true, 2>,
      timed_lane_long<T, true, 3>, timed_lane_long<T, true, 4>, timed_lane_long<T, true, 5>,
      timed_lane_long<T, true, 6>, timed_lane_long<T, true, 7>, timed_lane_long<T, true, 8>};
  const auto kern = kerns[mode];
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  unsigned long long* ts;
  unsigned* smv;
  const std::size_t per = std::size_t(grid) * lane_long_tuning::W * NF;
  CK(cudaMalloc(&ts, sizeof(unsigned long long) * per * launches));
  CK(cudaMalloc(&smv, sizeof(unsigned) * grid * launches));
  CK(cudaMemset(ts, 0, sizeof(unsigned long long) * per * launches));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  auto launch = [&](int i, unsigned long long* t, unsigned* s) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid), cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = bytes, cfg.stream = st;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr, cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, kern, view(i % sets), pl, t, s));
  };
  for (int w = 0; w < 3; ++w)  // warm-up
    for (int i = 0; i < launches; ++i) launch(i, ts + per * i, smv + grid * i);
  CK(cudaStreamSynchronize(st));
  CK(cudaMemset(ts, 0, sizeof(unsigned long long) * per * launches));
  CK(cudaStreamSynchronize(st));
  for (int i = 0; i < launches; ++i) launch(i, ts + per * i, smv + grid * i);
  CK(cudaStreamSynchronize(st));
  std::vector<unsigned long long> hts(per * launches);
  std::vector<unsigned> hsm(std::size_t(grid) * launches);
  CK(cudaMemcpy(hts.data(), ts, sizeof(unsigned long long) * per * launches,
                cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hsm.data(), smv, sizeof(unsigned) * grid * launches, cudaMemcpyDeviceToHost));
  printf("shape batch %d la %d lx %d grid %d bytes %d threads %d mode %d\n", batch, la, lx, grid,
         bytes, THREADS, mode);
  for (int w = 0; w < lane_long_tuning::W; ++w) {
    printf("plan warp %d own %d:", w, pl.own[w]);
    for (int m = 0; m < pl.own[w]; ++m)
      printf(" %d/%d", int(pl.ord[w] >> (8 * m) & 0xFF), int(pl.nds[w] >> (4 * m) & 0xF) - 1);
    printf("\n");
  }
  const unsigned long long t0 = hts[1];
  for (int i = 0; i < launches; ++i)
    for (int b = 0; b < grid; ++b)
      for (int w = 0; w < lane_long_tuning::W; ++w) {
        const unsigned long long* s =
            &hts[per * i + (std::size_t(b) * lane_long_tuning::W + w) * NF];
        printf("L %d B %d SM %u W %d", i, b, hsm[std::size_t(grid) * i + b], w);
        for (int f = 0; f < NF; ++f) printf(" %lld", s[f] ? (long long)(s[f] - t0) : -1LL);
        printf("\n");
      }
  // the stamped kernel's outputs against the library's lane variant on buffer set 0
  {
    const std::size_t no = std::size_t(batch) * lout;
    std::vector<T> h1(no), h2(no);
    CK(cudaMemsetAsync(o, 0, sizeof(T) * no, st));
    launch(0, ts, smv);
    CK(cudaMemcpyAsync(h1.data(), o, sizeof(T) * no, cudaMemcpyDeviceToHost, st));
    CK(cudaMemsetAsync(o, 0, sizeof(T) * no, st));
    mc::launch_variant(mc::kernel_variant::lane, view(0), 1, st);
    CK(cudaMemcpyAsync(h2.data(), o, sizeof(T) * no, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    std::size_t diff = 0;
    for (std::size_t i = 0; i < no; ++i) diff += h1[i] != h2[i];
    printf("outputs differing from the library's: %zu of %zu\n", diff, no);
  }
  // events: the timed copy and the library's lane variant, 200 launches each
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < 200; ++i) launch(i, ts + per * (i % launches), smv + grid * (i % launches));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms1 = 0;
    CK(cudaEventElapsedTime(&ms1, e0, e1));
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < 200; ++i)
      mc::launch_variant(mc::kernel_variant::lane, view(i % sets), 1, st);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms2 = 0;
    CK(cudaEventElapsedTime(&ms2, e0, e1));
    printf("events us per launch: timed (mode %d) %.2f library lane %.2f\n", mode, ms1 * 5,
           ms2 * 5);
  }
  return 0;
}
