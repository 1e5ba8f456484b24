// What the tile kernels (tiled.cuh, mma_f64.cuh, mma_tf32.cuh) share: the
// grid of tiles x tap splits x problems, the launch with a cluster along y
// when the taps of a tile are split, the deterministic sum of the partial
// tiles in rank order (no atomics: through distributed shared memory on
// Hopper, through device scratch and a second kernel elsewhere), the split
// that fills the GPU, and the cached multiprocessor count the dispatch
// sizes grids with. Not installed.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../cuda_check.hpp"
#include "../features.hpp"
#include "../scratch.hpp"
#include "../stream.hpp"
#include "correlation.cuh"

namespace marg::detail::cuda {

/// Largest tap split (cluster size) of the tile kernels: the portable limit.
inline constexpr int max_tap_split = 8;

/// Largest tap split of a device without clusters, whose partial tiles meet
/// in scratch (launch_cluster_tiles): no cluster bounds it, and the long
/// single problems the split serves keep gaining up to 16.
inline constexpr int max_memory_split = 16;

__device__ inline std::int64_t dmin(std::int64_t x, std::int64_t y) {
  return x < y ? x : y;
}
__device__ inline std::int64_t dmax(std::int64_t x, std::int64_t y) {
  return x > y ? x : y;
}

/// Gathers one stage of an operand into registers: thread i of the block
/// takes r[n] = src[g * step] with g = first + i + n * Threads, or 0 where g
/// lies outside [0, end) or i + n * Threads >= Len (zero padding of the band).
/// @tparam Threads threads per block
/// @tparam Len values in the stage
/// @param src the operand (element 0)
/// @param step elements between consecutive values (negative: reversed)
/// @param first index of the stage's first value
/// @param end values of the operand
/// @param r the thread's values
template <int Threads, int Len, class T, int N>
__device__ __forceinline__ void gather_stage(const T* src, std::int64_t step, std::int64_t first,
                                             std::int64_t end, T (&r)[N]) {
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int idx = threadIdx.x + n * Threads;
    const std::int64_t g = first + idx;
    r[n] = (idx < Len && g >= 0 && g < end) ? src[g * step] : T(0);
  }
}

/// @return the multiprocessors of the current device (current_device_features,
/// cached per host thread and device: the launches ask every time)
inline int multiprocessors() {
  return current_device_features().multiprocessors;
}

/// Slots of the whole waves that `items` take, `slots` to a wave: items
/// rounded up to a multiple of slots (items / wave_slots is how full the
/// waves are).
/// @param items blocks, groups or tiles to run (>= 0)
/// @param slots how many of them one wave runs (> 0)
/// @return ceil(items / slots) x slots
inline std::int64_t wave_slots(std::int64_t items, std::int64_t slots) {
  return (items + slots - 1) / slots * slots;
}

/// Output tiles of tile shape C (C::TJ outputs each) over all problems.
/// @param c the correlation
/// @return tiles of every problem together
template <class C, class T>
std::int64_t tiles_of(const correlation_view<T>& c) {
  return (std::int64_t{c.lout} + C::TJ - 1) / C::TJ * c.batch;
}

/// Blocks sharing the taps of one tile: enough for `want` blocks in all,
/// never more than a tile has stages.
/// @param tiles output tiles of all problems
/// @param stages shared-memory stages of one tile
/// @param want blocks wanted in the grid
/// @return the split, 1..max_tap_split
inline int tap_split_for(std::int64_t tiles, std::int64_t stages, std::int64_t want) {
  const std::int64_t split = (want + tiles - 1) / tiles;
  return static_cast<int>(std::clamp<std::int64_t>(std::min(split, stages), 1, max_tap_split));
}

/// What a tap split costs in batch_tap_split's model.
struct tap_split_costs {
  /// the cluster sum of a split, in taps' worth of time
  std::int64_t sum_taps = 0;
  /// blocks per SM, in halves, beyond which blocks queue
  int resident_halves = 5;
  /// splits only while tiles x split <= this x SMs, one wave of resident
  /// blocks (0: no bound)
  int max_blocks_per_sm = 0;
  /// splits 1, 2, 4, 8 only; else also 3 and 6
  bool powers_of_two = true;
};

/// Blocks sharing the taps of one tile: the split (1..8, at most the tile's
/// stages; powers of two or also 3 and 6, as `costs` says) of least
/// modelled time, (taps of the longest part + the cluster sum when split) x
/// max(1, blocks / (resident_halves / 2 blocks per SM)). A part is whole
/// stages and every block repeats the staging and the sum, so a split pays
/// only where it shortens the longest part and the tiles are few. The model
/// picks within 5 % of the best forced split far more often than
/// tap_split_for's fill rule (docs/kernel-notes.md, FMA tiles and tensor
/// cores); the float mid tile and the DMMA tile of more than 1024 outputs
/// have their own constants.
/// @param tiles output tiles of all problems
/// @param span taps one tile reads
/// @param stage taps per shared-memory stage
/// @param sms multiprocessors of the device
/// @param costs the model's constants
/// @return the split, 1..max_tap_split
inline int batch_tap_split(std::int64_t tiles, std::int64_t span, std::int64_t stage, int sms,
                           const tap_split_costs& costs) {
  static constexpr int candidates[] = {1, 2, 3, 4, 6, 8};  // the splits the model is fitted on
  const std::int64_t stages = (span + stage - 1) / stage;
  std::int64_t best_time = -1;
  int best = 1;
  for (const int s : candidates) {
    if (s > max_tap_split || s > stages) break;
    if (costs.powers_of_two && (s & (s - 1)) != 0) continue;
    if (s > 1 && costs.max_blocks_per_sm > 0 &&
        tiles * s > std::int64_t{costs.max_blocks_per_sm} * sms)
      break;
    const std::int64_t longest = std::min(span, (stages + s - 1) / s * stage);
    const std::int64_t part = longest + (s > 1 ? costs.sum_taps : 0);
    // blocks / (resident_halves / 2 per SM), as 2 x blocks against
    // resident_halves x sms (a common factor)
    const std::int64_t time =
        part * std::max<std::int64_t>(2 * tiles * s, costs.resident_halves * std::int64_t{sms});
    if (best_time < 0 || time < best_time) best_time = time, best = s;
  }
  return best;
}

/// batch_tap_split with the cluster sum costing one stage.
inline int batch_tap_split(std::int64_t tiles, std::int64_t span, std::int64_t stage, int sms) {
  return batch_tap_split(tiles, span, stage, sms, {.sum_taps = stage});
}

/// The body of a tile kernel: block (x, y, z) runs tile blockIdx.x of
/// problems blockIdx.z, blockIdx.z + gridDim.z, ... over tap split
/// blockIdx.y of gridDim.y (the cluster rank). `agent.run_tile(c, a, x, J0,
/// kt, ck)` leaves the block's partial tile in shared memory, output i at
/// part[index(i)]; with one split the tile is stored as it is; a split with
/// c.partial stores the partial tile there for kernel_sum_partials; a split
/// over a cluster sums the ck partial tiles in rank order and rank kt stores
/// its slice.
/// @tparam TJ outputs per tile
/// @tparam Threads threads per block
/// @param c the correlation
/// @param agent the block's work (run_tile)
/// @param part the partial tile in this block's shared memory
/// @param index shared-memory index of output i of the tile
template <int TJ, int Threads, class T, class Agent, class Index>
__device__ __forceinline__ void run_cluster_tiles(const correlation_view<T>& c, const Agent& agent,
                                                  T* part, Index index) {
  const std::int64_t J0 = std::int64_t{blockIdx.x} * TJ;
  const int ck = gridDim.y, kt = blockIdx.y;
  for (std::int64_t b = blockIdx.z; b < c.batch; b += gridDim.z) {
    const T* a = c.a + b * c.a_batch;
    const T* x = c.x + b * c.x_batch;
    T* out = c.out + b * c.out_batch;
    agent.run_tile(c, a, x, J0, kt, ck);
    if (ck == 1 || c.partial != nullptr) {
      // unsplit: the tile is the output; split without a cluster: the
      // partial tile goes to its rank's row of scratch (kernel_sum_partials)
      T* dst = ck == 1 ? out : c.partial + (std::int64_t{kt} * c.batch + b) * c.lout;
      const std::int64_t step = ck == 1 ? c.out_step : 1;
      __syncthreads();
      for (int i = threadIdx.x; i < TJ && J0 + i < c.lout; i += Threads)
        dst[(J0 + i) * step] = part[index(i)];
    } else {
#if MARG_CUDA_HOPPER_CODE
      namespace cg = cooperative_groups;
      cg::cluster_group cluster = cg::this_cluster();
      cluster.sync();
      const int lo = TJ * kt / ck, hi = TJ * (kt + 1) / ck;
      for (int i = lo + threadIdx.x; i < hi && J0 + i < c.lout; i += Threads) {
        T s = 0;
        for (int q = 0; q < ck; ++q) s += cluster.map_shared_rank(part, q)[index(i)];
        out[(J0 + i) * c.out_step] = s;
      }
      cluster.sync();  // peers read this block's shared memory until here
#else
      __trap();  // split tiles need clusters: the dispatch splits only on sm_90
#endif
    }
    __syncthreads();
  }
}

/// The second kernel of a tap split without a cluster: out = the sum over
/// ranks q = 0, 1, ... of c.partial's rows (split x batch x lout), in rank
/// order from 0, the order of the cluster sum (run_cluster_tiles): the same
/// split gives bitwise the same outputs on every device.
/// @param c the correlation, with partial set
/// @param split the ranks
template <class T>
__global__ void kernel_sum_partials(const correlation_view<T> c, int split) {
  const std::int64_t n = std::int64_t{c.lout} * c.batch;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t b = i / c.lout, j = i - b * c.lout;
    T s = 0;
    for (int q = 0; q < split; ++q) s += c.partial[q * n + i];
    c.out[b * c.out_batch + j * c.out_step] = s;
  }
}

/// Largest scratch (bytes) a tap split without a cluster writes its partial
/// tiles to: the split pays where few tiles leave the GPU idle, and such
/// problems are long, not many (tap_split_of).
inline constexpr std::int64_t split_scratch_max_bytes = std::int64_t{32} << 20;

/// @return the scratch (bytes) a split of `split` ranks without a cluster
///         writes `c`'s partial tiles to (launch_cluster_tiles)
template <class T>
std::int64_t split_scratch_bytes(const correlation_view<T>& c, int split) {
  return std::int64_t{c.lout} * c.batch * split * std::int64_t{sizeof(T)};
}

/// @param d a device
/// @return the largest tap split the tile kernels run on `d`: a cluster's
///         with the Hopper features, a split through scratch's without
inline int largest_split(const device_features& d) {
  return d.hopper ? max_tap_split : max_memory_split;
}

/// Programmatic dependent launch, kernel side: waits until the kernel before
/// this one on the stream has finished and its writes are visible (a no-op
/// when the launch did not allow an early start), then lets the next kernel
/// on the stream start its launch. A kernel launched with `early_start`
/// (launch_with) must call it before touching global memory.
__device__ __forceinline__ void await_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// How a kernel is launched (launch_with).
struct launch_shape {
  dim3 grid;             ///< blocks
  unsigned threads = 0;  ///< threads per block
  std::size_t smem = 0;  ///< dynamic shared memory per block, bytes
  int split = 1;         ///< cluster size along y (1: no cluster)
  /// programmatic dependent launch: the launch overlaps the previous kernel's
  /// tail (the kernel calls await_previous_kernel first)
  bool early_start = false;
};

/// Launches `kernel(args...)` as `shape` says: a plain launch, or
/// cudaLaunchKernelEx with the cluster and early-start attributes that
/// `shape` asks for. Checks the launch.
/// @param shape grid, block, shared memory, cluster and early start
/// @param stream the stream
/// @param kernel the kernel
/// @param args the kernel's arguments
template <class... Params, class... Args>
void launch_with(const launch_shape& shape, cudaStream_t stream, void (*kernel)(Params...),
                 const Args&... args) {
  // clusters and early start need sm_90 (current_device_features().hopper):
  // the dispatch asks for them only there
  MARG_EXPECTS(shape.split == 1 || current_device_features().hopper,
               "marg: a tap split over a cluster needs a Hopper (sm_90) device");
  if (shape.split == 1 && (!shape.early_start || !current_device_features().hopper)) {
    kernel<<<shape.grid, shape.threads, shape.smem, stream>>>(args...);
  } else {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = shape.grid;
    cfg.blockDim = dim3(shape.threads);
    cfg.dynamicSmemBytes = shape.smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    if (shape.split > 1) {
      attr[n].id = cudaLaunchAttributeClusterDimension;
      attr[n].val.clusterDim.x = 1;
      attr[n].val.clusterDim.y = static_cast<unsigned>(shape.split);
      attr[n].val.clusterDim.z = 1;
      ++n;
    }
    if (shape.early_start) {
      attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[n].val.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    cfg.attrs = attr;
    cfg.numAttrs = n;
    MARG_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, args...));
  }
  MARG_CHECK_LAUNCH(stream);
}

/// Launches `kernel(c)` on `grid` x `threads` (launch_with over one
/// correlation), with a cluster of `split` blocks along y when split > 1 and,
/// with `early_start`, programmatic dependent launch.
/// @param kernel the kernel
/// @param grid the grid
/// @param threads threads per block
/// @param split cluster size along y (1: no cluster)
/// @param early_start allow programmatic dependent launch
/// @param c the correlation
/// @param stream the stream
/// @param smem dynamic shared memory per block, bytes
template <class T>
void launch_with(void (*kernel)(correlation_view<T>), dim3 grid, unsigned threads, int split,
                 bool early_start, const correlation_view<T>& c, cudaStream_t stream,
                 std::size_t smem = 0) {
  launch_with(
      {.grid = grid, .threads = threads, .smem = smem, .split = split, .early_start = early_start},
      stream, kernel, c);
}

/// Launches a tile kernel on tiles x split x problems blocks (at most 65535
/// along z; blocks walk the rest), as clusters of `split` along y on Hopper;
/// elsewhere a split launches without a cluster and sums its partial tiles
/// through device scratch (kernel_sum_partials).
/// @tparam TJ outputs per tile
/// @tparam Threads threads per block
/// @param kernel the kernel (its body: run_cluster_tiles)
/// @param c the correlation
/// @param split blocks sharing the taps of one tile (1..max_tap_split)
/// @param stream the stream
/// @param early_start programmatic dependent launch (the kernel must call
///        await_previous_kernel before touching global memory)
template <int TJ, int Threads, class T>
void launch_cluster_tiles(void (*kernel)(correlation_view<T>), const correlation_view<T>& c,
                          int split, cudaStream_t stream, bool early_start = false) {
  const unsigned tiles = static_cast<unsigned>((std::int64_t{c.lout} + TJ - 1) / TJ);
  const unsigned gz = static_cast<unsigned>(std::min(c.batch, 65535));
  const dim3 grid(tiles, static_cast<unsigned>(split), gz);
  if (split == 1 || current_device_features().hopper) {
    launch_with(kernel, grid, Threads, split, early_start, c, stream);
    return;
  }
  // no clusters: the ranks write their partial tiles to scratch and a second
  // kernel sums them in rank order
  const std::int64_t n = std::int64_t{c.lout} * c.batch;
  const device_scratch scratch(static_cast<std::size_t>(split_scratch_bytes(c, split)),
                               current_device_id(), stream);
  correlation_view<T> s = c;
  s.partial = static_cast<T*>(scratch.data());
  launch_with(kernel, grid, Threads, 1, false, s, stream);
  constexpr unsigned sum_threads = 256;
  const std::int64_t blocks = std::min<std::int64_t>((n + sum_threads - 1) / sum_threads,
                                                     std::int64_t{8} * multiprocessors());
  launch_with({.grid = dim3(static_cast<unsigned>(blocks)), .threads = sum_threads}, stream,
              kernel_sum_partials<T>, s, split);
}

}  // namespace marg::detail::cuda
