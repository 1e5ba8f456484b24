// Session 20 (standalone, not built by CMake): a timeline of the long-row
// lane kernel. A copy of kernel_banded_lane_long (kernels/lane_long.cuh; argument 4:
// 0 = round 39's staging by the compute threads, 1 = the copy warp's bulk copies) with
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

constexpr int NF = 20;  // stamps per warp: 0 entry, 1 sync, 2 staged, 3 + 2m wait, 4 + 2m done, 19 exit
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

template <class T, bool Rev, bool Bulk>
__global__ void __launch_bounds__(lane_long_tuning::threads, 1)
    timed_lane_long(const correlation_view<T> c, const lane_long_plan pl, unsigned long long* ts,
                    unsigned* sm) {
  using C = lane_tuning;
  using L = lane_long_tuning;
  constexpr int R = C::R, K = L::K;
  extern __shared__ __align__(16) unsigned char lane_smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned long long* const st = ts + (std::size_t(blockIdx.x) * L::W + warp) * NF;
  if (lane == 0 && warp < lane_long_tuning::W) st[0] = gt();
  if (threadIdx.x == 0) sm[blockIdx.x] = smid();
  auto* const bar = reinterpret_cast<std::uint64_t*>(lane_smem);
  T* const buf = reinterpret_cast<T*>(lane_smem + L::head);
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  const int len = s.buffer();
  T* const wslab = buf + len + warp * (32 * L::po);
  if (blockIdx.x >= s.groups) return;
  const bool bulk = Bulk && s.vec_a && s.vec_x;
  if (warp < L::W) {
    const int row = threadIdx.x / L::tpr, sub = threadIdx.x % L::tpr;
    const bool is_a = row < C::P;
    T* const dst = is_a ? buf + row * s.pa : buf + C::P * s.pa + (row - C::P) * s.px;
    const int v0 = is_a ? s.off_a : c.lead - s.t_base;
    const int v1 = v0 + (is_a ? c.la : c.lx), n = is_a ? s.pa : s.px;
    for (int e = sub; e < v0; e += L::tpr) dst[e] = T(0);
    for (int e = v1 + sub; e < n; e += L::tpr) dst[e] = T(0);
  }
  if (threadIdx.x == 0) {
    for (int i = 0; i < K; ++i) lane_bar_init_count(bar + i, bulk ? 32 : L::compute);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  const int wp = min(warp, L::W - 1);
  const std::uint64_t ord = pl.ord[wp];
  const std::uint32_t nds = pl.nds[wp];
  const int n = pl.own[wp];
  await_previous_kernel();
  __syncthreads();
  if (lane == 0 && warp < L::W) st[1] = gt();
  const T* const ta = buf + (c.a_batch == 0 ? 0 : lane * s.pa);
  const T* const tx = buf + C::P * s.pa + (c.x_batch == 0 ? 0 : lane * s.px);
  unsigned parity = 0;
  for (std::int64_t g = blockIdx.x; g < s.groups; g += gridDim.x, parity ^= 1) {
    if (g != blockIdx.x) __syncthreads();
    if (warp == L::W) {
      if (bulk) lane_long_stage_bulk(c, s, pl, g, buf, bar);
      continue;
    }
    if (!bulk) lane_long_stage(c, s, pl, g, buf, bar);
    if (lane == 0) st[2] = gt();
    const int live = static_cast<int>(dmin(std::int64_t{C::P}, c.batch - g * C::P));
    for (int m = 0; m < n; ++m) {
      const int j0 = s.js + R * static_cast<int>(ord >> (8 * m) & 0xFF);
      const int nd = static_cast<int>(nds >> (4 * m) & 0xF) - 1;
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
  if (lane == 0 && warp < L::W) st[NF - 1] = gt();
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
    c.lead = la - 1, c.out = o + std::size_t(s) * batch * lout, c.out_step = 1,
    c.out_batch = lout, c.lout = lout, c.batch = batch;
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
  const auto pl = lane_long_plan_of(c0);
  const int bytes = int(lane_long_bytes(c0));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int grid = std::min(lane_bulk_shape_of(c0).groups, sms);
  const bool bulk_mode = argc > 4 && atoi(argv[4]) == 1;
  const auto kern = bulk_mode ? timed_lane_long<T, true, true> : timed_lane_long<T, true, false>;
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
    cfg.gridDim = dim3(grid), cfg.blockDim = dim3(lane_long_tuning::threads);
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
  printf("shape batch %d la %d lx %d grid %d bytes %d staging %s\n", batch, la, lx, grid, bytes,
         bulk_mode ? "copy warp, bulk copies" : "compute threads, cp.async (round 39)");
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
        const unsigned long long* s = &hts[per * i + (std::size_t(b) * lane_long_tuning::W + w) * NF];
        printf("L %d B %d SM %u W %d", i, b, hsm[std::size_t(grid) * i + b], w);
        for (int f = 0; f < NF; ++f) printf(" %lld", s[f] ? (long long)(s[f] - t0) : -1LL);
        printf("\n");
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
    for (int i = 0; i < 200; ++i) mc::launch_variant(mc::kernel_variant::lane, view(i % sets), 1, st);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms2 = 0;
    CK(cudaEventElapsedTime(&ms2, e0, e1));
    printf("events us per launch: timed %.2f library lane %.2f\n", ms1 * 5, ms2 * 5);
  }
  return 0;
}
