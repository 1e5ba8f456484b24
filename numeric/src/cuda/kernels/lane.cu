// Lane-per-problem variant of the batched correlation (kernels/lane.cuh):
// launch, shared-memory opt-in and the dispatch rule.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "../cuda_check.hpp"
#include "../launch.hpp"
#include "../stream.hpp"
#include "lane.cuh"
#include "lane_bulk.cuh"
#include "lane_long.cuh"

namespace marg::detail::cuda {
namespace {

/// Device facts the launch needs.
struct lane_device {
  int device = -1;
  int max_smem = 0;  ///< opt-in shared memory per block, bytes
};

/// @return the current device's (current_device_features caches the
///         attribute per host thread and device)
lane_device current_lane_device() {
  return {current_device_id(), current_device_features().max_smem};
}

/// Thresholds of the preference: batches from batch_min problems (enough
/// groups of 32 to fill the GPU; fewer where the lanes still win) of at
/// least min_conv_taps taps (convolutions) or min_grad_taps (gradients;
/// float: min_grad_taps_float), gradients with at most max_out outputs.
/// There lane beats the warp kernel; float gradients from 32 taps, since
/// the tensor-copy kernel (kernel_banded_lane_tma) wins there too, where
/// double's does not (docs/kernel-notes.md).
struct lane_dispatch {
  static constexpr int batch_min = 4096;
  static constexpr int max_out = 256;
  static constexpr int min_conv_taps = 16;
  static constexpr int min_grad_taps = 48;
  static constexpr int min_grad_taps_float = 32;
  /// Ranges where lane is the fastest variant, every variant forced on
  /// batched shapes (docs/kernel-notes.md): float convolutions of up to
  /// conv_max_out outputs from conv_short_batch problems up to short_taps
  /// taps, conv_mid_batch up to mid_taps and batch_min up to wide_taps (at
  /// fewer problems warp or pairs win); float gradients from
  /// grad_short_batch problems up to short_taps and at mid_low_taps-mid_taps
  /// taps (at 96-128 taps warp wins below 4096 problems); double from
  /// batch_min up to mid_taps taps, with at most 2 x mid_taps outputs
  /// (convolutions) or mid_taps (gradients); gradients of more than
  /// double_grad_taps taps only with double_grad_min_out outputs or more
  /// (with fewer, a lane holds too little work and warp wins).
  static constexpr int short_taps = 64, mid_low_taps = 129, mid_taps = 192, wide_taps = 256;
  static constexpr int conv_short_batch = 2048, conv_mid_batch = 1536, grad_short_batch = 2048;
  static constexpr int conv_max_out = 511;
  // float convolutions of 32-256 taps and 319-1023 outputs from 512
  // problems are decided before this by launch_banded.cu's cost model
  // (conv_model), which also picks lane beyond 511 outputs
  static constexpr int double_grad_taps = 128, double_grad_min_out = 128;
};

/// Resident blocks per SM of `Kernel` with `bytes` of dynamic shared memory
/// (opt-in and occupancy cached per host thread).
template <auto Kernel>
int blocks_per_sm_of(const lane_device& d, std::int64_t bytes, int threads) {
  struct cache {
    int device = -1, per_sm = 0;
    std::int64_t bytes = -1;
  };
  static thread_local cache k;
  if (k.device != d.device) {
    MARG_CUDA_TRY(
        cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, d.max_smem));
    k = cache{d.device, 0, -1};
  }
  if (k.bytes != bytes) {
    MARG_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.per_sm, Kernel, threads,
                                                                static_cast<std::size_t>(bytes)));
    k.bytes = bytes;
  }
  return k.per_sm;
}

/// Launches `Kernel` (a bulk lane kernel) for `c` when every block gets at
/// most two groups with all blocks resident.
/// @return false when it does not
template <auto Kernel, class T>
bool launch_bulk_with(const correlation_view<T>& c, const lane_bulk_shape& s, const lane_device& d,
                      cudaStream_t stream) {
  constexpr int threads = lane_bulk_tuning::threads;
  const std::int64_t bytes = s.bytes<T>(2);
  const std::int64_t slots =
      multiprocessors() * std::int64_t{blocks_per_sm_of<Kernel>(d, bytes, threads)};
  const std::int64_t per_block = slots > 0 ? (s.groups + slots - 1) / slots : 3;
  if (per_block > 2) return false;
  launch_with(Kernel, dim3(static_cast<unsigned>((s.groups + per_block - 1) / per_block)), threads,
              1, true, c, stream, static_cast<std::size_t>(bytes));
  return true;
}

/// The driver's cuTensorMapEncodeTiled (null when the driver has none).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 f = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return PFN_cuTensorMapEncodeTiled_v12000{nullptr};
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return f;
}

/// Encodes a tiled tensor map of `rank` (1 or 2) dimensions over T values,
/// zeros outside the tensor.
/// @return false when the driver refuses it
template <class T>
bool encode_map(CUtensorMap& map, int rank, const T* base, std::uint64_t dim0, std::uint64_t dim1,
                std::uint64_t stride1, unsigned box0, unsigned box1) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {dim0, dim1};
  const cuuint64_t strides[1] = {stride1 * sizeof(T)};
  const cuuint32_t box[2] = {box0, box1};
  const cuuint32_t unit[2] = {1, 1};
  return encode(&map,
                sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                static_cast<cuuint32_t>(rank), const_cast<T*>(base), dims, strides, box, unit,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/// Launches kernel_banded_lane_tma<T, Rev, Run, Teams, S> when its S stages
/// fit and every block gets at most S groups with all blocks resident.
/// @return false when it does not
template <class T, bool Rev, bool Run, int Teams, int S>
bool launch_tma_with(const correlation_view<T>& c, const lane_bulk_shape& s,
                     const lane_tma_plan& pl, const CUtensorMap& ma, const CUtensorMap& mx,
                     const lane_device& d, cudaStream_t stream) {
  using C = lane_tuning;
  constexpr auto kernel = kernel_banded_lane_tma<T, Rev, Run, Teams, S>;
  const std::int64_t bytes =
      lane_tma_head(S) +
      S * (std::int64_t{pl.len} + std::int64_t{C::P} * s.po) * static_cast<std::int64_t>(sizeof(T));
  if (bytes > d.max_smem) return false;
  const int threads = 32 * lane_bulk_tuning::W * Teams + 32;
  const std::int64_t slots =
      multiprocessors() * std::int64_t{blocks_per_sm_of<kernel>(d, bytes, threads)};
  const std::int64_t per_block = slots > 0 ? (s.groups + slots - 1) / slots : S + 1;
  if (per_block > S) return false;
  launch_with({.grid = dim3(static_cast<unsigned>((s.groups + per_block - 1) / per_block)),
               .threads = static_cast<unsigned>(threads),
               .smem = static_cast<std::size_t>(bytes),
               .early_start = true},
              stream, kernel, c, s, pl, ma, mx);
  return true;
}

/// Runs `c` on kernel_banded_lane_tma (tensor-copy staging) when its taps
/// rows and its x rows (or, Run, its x run) can be tensor boxes: unit steps,
/// 16-byte aligned bases and batch strides, rows of at most 256 staged
/// elements; every block gets at most two groups (one block per SM of 2
/// teams: four) with all blocks resident.
/// @return false when it does not (then kernel_banded_lane_bulk is tried)
template <class T, bool Rev>
bool launch_lane_tma(const correlation_view<T>& c, lane_bulk_shape s, const lane_device& d,
                     cudaStream_t stream) {
  using C = lane_tuning;
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  const bool run = s.run_x;
  // a box starts at a 16-byte column (a tensor copy from another column faults),
  // so the reversed taps' front padding must be whole 16-byte units
  if (c.a_batch <= 0 || c.a_batch % V != 0 || !aligned16(taps_row(c)) || s.pa > 256 ||
      s.off_a % V != 0)
    return false;
  if (run) {
    if (std::int64_t{c.batch} * c.lx + lane_box_run > INT_MAX) return false;
  } else if (c.x_step != 1 || c.x_batch <= 0 || c.x_batch % V != 0 || !aligned16(c.x) ||
             s.px > 256) {
    return false;
  }
  lane_tma_plan pl{};
  pl.coord_a = -s.off_a;
  pl.len = s.buffer();
  if (!run) {
    // x_0 at X row offset 32 (a 128-byte aligned box destination); the box
    // starts at x column 0, its zero tail (>= 32 columns) fills the next
    // row's front and runs 32 elements past the last row
    pl.shift = 32;
    s.t_base = c.lead - pl.shift;
    s.px = lane_pitch<T>((c.lead + c.lx + C::R + 3 - s.t_base + C::G - 1) / C::G * C::G);
    if (s.px > 256) return false;
    pl.len = s.buffer() + pl.shift;
    // group 0's copies first: a forward's blocks then start computing sooner
    // (the gradients' run path is slower with it: not there)
    pl.stagger = true;
  }
  pl.coord_x = run ? C::P * c.lx : 0;
  pl.nbox = run ? (C::P * c.lx + lane_box_run - 1) / lane_box_run : 0;
  if (run && pl.nbox * lane_box_run > C::P * s.px) return false;
  pl.bytes = static_cast<unsigned>(
      (std::int64_t{C::P} * s.pa + (run ? std::int64_t{pl.nbox} * lane_box_run : C::P * s.px)) *
      sizeof(T));
  // Teams 2 (one block per SM, 2 teams of compute warps, up to 4 groups):
  // a float gradient's run path, all groups at once, and a float forward of
  // at most 2 groups per SM, group 1 once group 0 landed (at Teams 1 both
  // blocks of an SM load at once). A forward of 4 groups per SM stays on
  // Teams 1: one block per SM is slower in every order (docs/kernel-notes.md)
  // (a forward staggers its first copies for either instance, set above)
  const int teams = sizeof(T) == 4 && (run || s.groups <= 2 * multiprocessors()) ? 2 : 1;
  CUtensorMap ma{}, mx{};
  if (!encode_map(ma, 2, taps_row(c), static_cast<std::uint64_t>(c.la),
                  static_cast<std::uint64_t>(c.batch), static_cast<std::uint64_t>(c.a_batch),
                  static_cast<unsigned>(s.pa), C::P))
    return false;
  if (run ? !encode_map(mx, 1, c.x, std::uint64_t{static_cast<std::uint64_t>(c.batch)} * c.lx, 1, 0,
                        lane_box_run, 1)
          : !encode_map(mx, 2, c.x, static_cast<std::uint64_t>(c.lx),
                        static_cast<std::uint64_t>(c.batch), static_cast<std::uint64_t>(c.x_batch),
                        static_cast<unsigned>(s.px), C::P))
    return false;
  // (Teams 2 float only: its double instances spill and are not benchmarked)
  if constexpr (sizeof(T) == 4)
    if (teams == 2 && (run ? launch_tma_with<T, false, true, 2, 4>(c, s, pl, ma, mx, d, stream)
                           : launch_tma_with<T, Rev, false, 2, 4>(c, s, pl, ma, mx, d, stream)))
      return true;
  return run ? launch_tma_with<T, false, true, 1, 2>(c, s, pl, ma, mx, d, stream)
             : launch_tma_with<T, Rev, false, 1, 2>(c, s, pl, ma, mx, d, stream);
}

/// The kernel of kernels/lane_bulk.cuh when every block gets at most two
/// groups with all blocks resident at once (no stage refills): its copy
/// warp overlaps the staging with the compute, which beats the cp.async
/// kernel there. The kernel also refills stages when a block has more
/// groups, but that is slower and racecheck flags it (the copy warp's
/// cp.async into a stage is ordered with the compute warps' reads by
/// mbarriers only).
/// Operand rows that are not 16-byte runs (a gradient's x of 2n - 1 values)
/// are staged element by element, or, rows back to back, as one run per
/// group read in place (lane_bulk_shape::run_x): taken when the output
/// blocks keep at least half the compute warps busy or, with run_x, for
/// double; with fewer blocks the cp.async kernel is as fast or faster in
/// float (where the tensor-copy kernel takes such shapes anyway).
/// Where the operands allow tensor copies, kernel_banded_lane_tma runs
/// instead (launch_lane_tma), slightly faster than this kernel: two tensor
/// copies per group fill their own zero padding, with no per-thread copy loops.
/// @return false when it does not run `c` (then the cp.async kernel does)
template <class T, bool Rev>
bool launch_lane_bulk(const correlation_view<T>& c, const lane_device& d, cudaStream_t stream) {
  const lane_bulk_shape s = lane_bulk_shape_of(c);
  const std::int64_t bytes = s.bytes<T>(2);
  if (c.la <= 0 || c.lx <= 0 || bytes > d.max_smem) return false;
  const bool vec = s.vec_a && (s.vec_x || (s.run_x && sizeof(T) == 8));
  // few output blocks (2 nblk < W: most compute warps idle) only where the
  // tensor-copy kernel takes them: a float run_x of 2 or 3 blocks, where it
  // still beats the cp.async kernel (splitting each block's steps over 4
  // warps with partial slabs does not help; docs/kernel-notes.md)
  if (!vec && 2 * s.nblk < lane_bulk_tuning::W)
    return sizeof(T) == 4 && s.run_x && s.nblk >= 2 && launch_lane_tma<T, Rev>(c, s, d, stream);
  if (launch_lane_tma<T, Rev>(c, s, d, stream)) return true;
  // run_x implies forward taps (a_step > 0)
  if constexpr (!Rev)
    if (s.run_x) return launch_bulk_with<kernel_banded_lane_bulk<T, false, true>>(c, s, d, stream);
  return launch_bulk_with<kernel_banded_lane_bulk<T, Rev, false>>(c, s, d, stream);
}

/// Launches the long-row lane kernel (kernels/lane_long.cuh): one block per
/// SM at most, each walking its groups.
template <class T, bool Rev>
void launch_lane_long(const correlation_view<T>& c, const lane_device& d, cudaStream_t stream) {
  constexpr auto kernel = kernel_banded_lane_long<T, Rev>;
  constexpr int threads = lane_long_tuning::threads;
  const std::int64_t bytes = lane_long_bytes(c);
  const std::int64_t slots =
      multiprocessors() * std::int64_t{std::max(1, blocks_per_sm_of<kernel>(d, bytes, threads))};
  const std::int64_t grid = std::min<std::int64_t>(lane_bulk_shape_of(c).groups, slots);
  launch_with({.grid = dim3(static_cast<unsigned>(grid)),
               .threads = threads,
               .smem = static_cast<std::size_t>(bytes),
               .early_start = true},
              stream, kernel, c, lane_long_plan_of(c));
}

template <class T>
void launch_lane_t(const correlation_view<T>& c, cudaStream_t stream) {
  const lane_device d = current_lane_device();
  if (!lane_fits(c, d.max_smem)) {
    // rows too long for a group's buffers and slab: the long-row kernel
    if (!lane_long_fits(c, d.max_smem))
      throw marg::invalid_argument("lane kernel: the problem does not fit its shared memory");
    if (c.a_step < 0)
      launch_lane_long<T, true>(c, d, stream);
    else
      launch_lane_long<T, false>(c, d, stream);
    return;
  }
  if (c.a_step < 0 ? launch_lane_bulk<T, true>(c, d, stream)
                   : launch_lane_bulk<T, false>(c, d, stream))
    return;
  const lane_shape s = lane_shape_of(c);
  const std::int64_t sms = multiprocessors();
  // persistent grid: as few groups per block as the resident blocks allow,
  // spread evenly
  const auto go = [&](auto kernel, std::int64_t bytes, int per_sm) {
    const std::int64_t slots = std::max<std::int64_t>(1, sms * per_sm);
    const std::int64_t per_block = (s.groups + slots - 1) / slots;
    launch_with(kernel, dim3(static_cast<unsigned>((s.groups + per_block - 1) / per_block)),
                lane_tuning::threads, 1, true, c, stream, static_cast<std::size_t>(bytes));
  };
  // one buffer (more resident blocks) when every group gets its own block at
  // once or two buffers do not fit; otherwise two, so that a block's next
  // group loads while it computes
  const std::int64_t bytes1 = s.total(1) * static_cast<std::int64_t>(sizeof(T));
  const std::int64_t bytes2 = s.total(2) * static_cast<std::int64_t>(sizeof(T));
  const int per_sm1 = blocks_per_sm_of<kernel_banded_lane<T, 1>>(d, bytes1, lane_tuning::threads);
  if ((s.groups <= sms * per_sm1 || bytes2 > d.max_smem))
    go(kernel_banded_lane<T, 1>, bytes1, per_sm1);
  else
    go(kernel_banded_lane<T, 2>, bytes2,
       blocks_per_sm_of<kernel_banded_lane<T, 2>>(d, bytes2, lane_tuning::threads));
}

/// Where the long-row kernel (kernels/lane_long.cuh) is preferred: float
/// problems the slab kernels cannot hold, convolutions and gradients of at
/// most grad_max_out outputs, whose groups of 32 fill at least min_fill_pct %
/// of their waves of one group per SM (min_fill3_pct from 3 waves). There a
/// lane per problem beats pairs and the tiles; gradients of more outputs
/// lose to pairs, as do convolutions that fill only part of their last wave,
/// whose idle SMs cost more than the lanes save (docs/kernel-notes.md
/// has the measurements).
struct lane_long_dispatch {
  static constexpr int grad_max_out = 320;
  static constexpr int min_fill_pct = 75, min_fill3_pct = 65;
};

template <class T>
bool lane_long_preferred(const correlation_view<T>& c, const device_features& dev) {
  using L = lane_long_dispatch;
  if (sizeof(T) != 4 || (c.lead == 0 && c.lout > L::grad_max_out)) return false;
  const std::int64_t sms = dev.multiprocessors;
  const std::int64_t groups = (std::int64_t{c.batch} + lane_tuning::P - 1) / lane_tuning::P;
  const std::int64_t cap = wave_slots(groups, sms);
  const int pct = cap >= 3 * sms ? L::min_fill3_pct : L::min_fill_pct;
  return 100 * groups >= pct * cap && lane_long_fits(c, dev.max_smem);
}

template <class T>
bool lane_preferred_t(const correlation_view<T>& c, const device_features& dev) {
  using d = lane_dispatch;
  if (!dev.hopper) return false;
  if (!lane_fits(c, dev.max_smem)) return lane_long_preferred(c, dev);
  const bool conv = c.lead > 0;
  const int min_taps = conv             ? d::min_conv_taps
                       : sizeof(T) == 4 ? d::min_grad_taps_float
                                        : d::min_grad_taps;
  bool shape = false;  // the benchmarked range (the slab kernels fit: checked above)
  if (c.la < min_taps) return false;
  if constexpr (sizeof(T) == 4) {
    if (conv) {
      const int from = c.la <= d::short_taps ? d::conv_short_batch
                       : c.la <= d::mid_taps ? d::conv_mid_batch
                                             : d::batch_min;
      shape = c.la <= d::wide_taps && c.lout <= d::conv_max_out && c.batch >= from;
    } else {
      const bool short_run =
          c.la <= d::short_taps || (c.la >= d::mid_low_taps && c.la <= d::mid_taps);
      shape = c.la <= d::wide_taps && c.lout <= d::max_out &&
              c.batch >= (short_run ? d::grad_short_batch : d::batch_min);
    }
  } else {
    shape = c.batch >= d::batch_min && c.la <= d::mid_taps &&
            (conv ? c.lout <= 2 * d::mid_taps
                  : c.lout <= d::mid_taps &&
                        (c.la <= d::double_grad_taps || c.lout >= d::double_grad_min_out));
  }
  return shape;
}

template <class T>
bool lane_supports_t(const correlation_view<T>& c, const device_features& d) {
  // the lane kernels stage through mbarrier transactions and TMA (sm_90)
  if (!d.hopper) return false;
  return lane_fits(c, d.max_smem) || lane_long_fits(c, d.max_smem);
}

}  // namespace

bool lane_supports(const correlation_view<float>& c, const device_features& d) {
  return lane_supports_t(c, d);
}
bool lane_supports(const correlation_view<double>& c, const device_features& d) {
  return lane_supports_t(c, d);
}
bool lane_slab_fits(const correlation_view<float>& c, const device_features& d) {
  return d.hopper && lane_fits(c, d.max_smem);
}
bool lane_slab_fits(const correlation_view<double>& c, const device_features& d) {
  return d.hopper && lane_fits(c, d.max_smem);
}
bool lane_preferred(const correlation_view<float>& c, const device_features& d) {
  return lane_preferred_t(c, d);
}
bool lane_preferred(const correlation_view<double>& c, const device_features& d) {
  return lane_preferred_t(c, d);
}
void launch_lane(const correlation_view<float>& c, cudaStream_t stream) {
  launch_lane_t(c, stream);
}
void launch_lane(const correlation_view<double>& c, cudaStream_t stream) {
  launch_lane_t(c, stream);
}

}  // namespace marg::detail::cuda
