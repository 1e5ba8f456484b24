// Dispatch of the CUDA backend: maps every banded product onto one batched
// correlation (kernels/correlation.cuh), picks the tile variant by size and
// splits the taps of a tile over a cluster when tiles alone cannot fill the
// GPU. One launch per call, batches included; nothing synchronizes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "../detail/wisdom.hpp"
#include "cost_model.hpp"
#include "cuda_check.hpp"
#include "kernels/cluster.cuh"
#include "kernels/tiled.cuh"
#include "kernels/warp.cuh"
#include "kernels/wgmma_tf32.cuh"
#include "launch.hpp"
#include "scratch.hpp"
#include "stream.hpp"

namespace marg::detail::cuda {
namespace {

/// Thresholds of the dispatch, in one place.
struct dispatch_tuning {
  /// warp per problem: batches of at least this many problems, or of
  /// warp_short_from_batch with at most warp_short_taps taps ... (the warps
  /// of a large batch fill the GPU without tiles' tap splitting, and short
  /// problems waste most of a tile; with fewer problems the tiles win)
  static constexpr std::int64_t warp_from_batch = 512;
  static constexpr std::int64_t warp_short_from_batch = 256, warp_short_taps = 32;
  /// ... but double convolutions of more than warp_double_conv_taps taps from
  /// warp_late_batch problems, float gradients of warp_grad_taps-
  /// warp_grad_mid_taps taps (and as many outputs) from warp_late_batch and
  /// of more from warp_grad_wide_batch, where the tiles or DMMA win below
  /// those batches (with half as many outputs the warp stays faster)
  static constexpr std::int64_t warp_late_batch = 1024, warp_double_conv_taps = 64;
  static constexpr std::int64_t warp_grad_taps = 160, warp_grad_mid_taps = 192;
  static constexpr std::int64_t warp_grad_wide_batch = 3072;
  /// ... with at most this many outputs and taps each
  static constexpr std::int64_t warp_max_out = 256;
  static constexpr std::int64_t warp_max_taps = 256;
  /// outputs per problem from which the large tile (TJ = 1024) is used
  /// (below, the mid tile's four times as many tiles fill more SMs)
  static constexpr std::int64_t large_from_out = 8192;
  /// ... and taps per problem from which it is used, when its tiles make at
  /// least half a wave over the multiprocessors or the taps are more than
  /// large_wave_float_taps (float) or long_taps (double): with fewer tiles
  /// the mid tile's four times as many tiles fill the GPU and run faster,
  /// until the taps are so many that the large tile's reuse dominates
  /// (docs/kernel-notes.md has the measurements)
  static constexpr std::int64_t large_from_taps = 512;
  static constexpr std::int64_t large_wave_float_taps = 1536;
  /// double batches of at most large_double_max_taps taps and at least
  /// large_double_from_out outputs per problem take the large tile when its
  /// tiles fill their waves to large_double_fill_pct %: full waves of large
  /// tiles beat the mid tile, while a partial wave (fewer tiles than a wave,
  /// or a second wave barely begun) leaves SMs idle and loses; from about 53
  /// taps the two tie (docs/kernel-notes.md has the measurements)
  static constexpr std::int64_t large_double_max_taps = 48, large_double_from_out = 6000;
  static constexpr std::int64_t large_double_fill_pct = 70;
  /// batched float full convolutions: outputs and taps per problem from which
  /// the large tile is used (up to one tile per problem)
  static constexpr std::int64_t large_batched_from_out = 768;
  static constexpr std::int64_t large_batched_from_taps = 384;
  /// batched float gradients of at least this many taps and outputs from
  /// large_grad_batch problems, where the large tile's register blocking
  /// wins; with fewer problems the mid tile's more tiles fill the GPU better
  static constexpr std::int64_t large_grad_from = 1024, large_grad_batch = 256;
  /// outputs per problem from which the mid tile (TJ = 256) is used, and
  /// from batched_mid_from_out in batches of batched_mid_from_batch or more
  /// (the batch fills the GPU, so the wider tile's reuse wins); double
  /// from double_batched_mid_from_out and float gradients of at least
  /// float_grad_mid_taps taps from float_grad_mid_from_out in batches of
  /// float_grad_mid_batch, where mid already beats the small tile
  static constexpr std::int64_t mid_from_out = 384;
  static constexpr std::int64_t batched_mid_from_out = 256, batched_mid_from_batch = 64;
  static constexpr std::int64_t double_batched_mid_from_out = 128;
  static constexpr std::int64_t float_grad_mid_taps = 160, float_grad_mid_from_out = 160;
  static constexpr std::int64_t float_grad_mid_batch = 128;
  /// gradients, and double convolution batches, of fewer than
  /// batched_mid_from_batch problems whose mid tiles are fewer than the
  /// multiprocessors take the small tile ("underfilled") up to
  /// few_tiles_max_taps taps and few_tiles_macs (float, double)
  /// multiply-adds in all: there the small tile's more tiles fill the GPU
  static constexpr std::int64_t few_tiles_max_taps = 1024;
  static constexpr std::int64_t few_tiles_float_macs = std::int64_t{4} << 20;
  static constexpr std::int64_t few_tiles_double_macs = std::int64_t{3} << 19;
  /// blocks per multiprocessor the tap split aims for
  static constexpr std::int64_t blocks_per_sm = 4;
  /// the float mid tile's costs in batch_tap_split's model: its cluster sum
  /// costs two stages and two resident blocks fill an SM (with the default
  /// costs the model splits long float batches of few problems that run
  /// faster unsplit)
  static constexpr tap_split_costs float_mid_split{.sum_taps = 2 * std::int64_t{tiled_mid_f::KC},
                                                   .resident_halves = 4};
  /// single problems of more taps than this, or of more outputs than
  /// long_out, take long_taps_tile's or long_out_tile's rules
  static constexpr std::int64_t long_taps = 2048, long_out = 32768;
  /// ... where float takes the large tile from outputs = long_ratio x taps
  /// (convolutions only up to long_large_max_taps taps)
  static constexpr std::int64_t long_ratio = 6, long_large_max_taps = 4096;
  /// ... and float convolutions the small tile below this many outputs
  static constexpr std::int64_t long_small_below_out = 14336;
};

// blocks sharing the taps of a tile: for single problems enough blocks to
// fill the GPU, never more than a tile has stages; for batches the modelled
// split of batch_tap_split: the fill rule splits batches more than pays,
// as every part repeats the staging and the cluster sum
template <class C, class T>
int tap_split(const correlation_view<T>& c, const device_features& dev) {
  const std::int64_t tiles = tiles_of<C>(c);
  const std::int64_t taps = std::min<std::int64_t>(c.la, std::int64_t{C::TJ} + c.lx - 1);
  if (c.batch > 1) {
    if constexpr (std::is_same_v<C, tiled_mid_f>)
      return batch_tap_split(tiles, taps, C::KC, dev.multiprocessors,
                             dispatch_tuning::float_mid_split);
    return batch_tap_split(tiles, taps, C::KC, dev.multiprocessors);
  }
  const std::int64_t stages = (taps + C::KC - 1) / C::KC;
  return tap_split_for(tiles, stages, dispatch_tuning::blocks_per_sm * dev.multiprocessors);
}

// full convolutions (lead > 0) whose mid tiles cannot fill the GPU take the
// small tile: narrower warps waste less on the band's zero triangles, and
// more tiles need less tap splitting; gradients have no triangles and stay
// on mid. Not in batches of 256-383 taps, nor of 16 or fewer problems from
// 512 taps, where mid wins, nor in double batches,
// whose small tile loses to mid at most such shapes. Gradients and double
// batches of fewer problems whose mid tiles do not make one wave, and whose
// work is small, take the small tile after all, as small's four times as
// many tiles fill more of the GPU (docs/kernel-notes.md has the
// measurements).
template <class T>
bool underfilled(const correlation_view<T>& c, const device_features& dev) {
  using d = dispatch_tuning;
  const std::int64_t tiles = tiles_of<typename tiled_tunings<T>::mid>(c);
  if (c.lead == 0 || (sizeof(T) == 8 && c.batch > 1)) {
    const std::int64_t macs = band_macs(c) * c.batch;
    return c.batch < d::batched_mid_from_batch && tiles < dev.multiprocessors &&
           c.la <= d::few_tiles_max_taps &&
           macs <= (sizeof(T) == 8 ? d::few_tiles_double_macs : d::few_tiles_float_macs);
  }
  if (c.batch > 1 && ((c.la >= 256 && c.la < 384) || (c.la >= 512 && c.batch <= 16))) return false;
  return tiles < d::blocks_per_sm * dev.multiprocessors;
}

// batches of double problems of few taps and long outputs whose large tiles
// fill their waves take the large tile (dispatch_tuning::large_double_*; a
// wave: the large tile's min_blocks per multiprocessor)
template <class T>
bool large_double_few_taps(const correlation_view<T>& c, const device_features& dev) {
  using d = dispatch_tuning;
  using large = typename tiled_tunings<T>::large;
  if (sizeof(T) != 8 || c.batch < 2 || c.la > d::large_double_max_taps ||
      c.lout < d::large_double_from_out)
    return false;
  const std::int64_t tiles = tiles_of<large>(c);
  return 100 * tiles >=
         d::large_double_fill_pct * wave_slots(tiles, large::min_blocks * dev.multiprocessors);
}

// whether the large tiles of `c` make at least half a wave over the
// multiprocessors, or its taps are many (dispatch_tuning::large_from_taps)
template <class T>
bool large_wave(const correlation_view<T>& c, const device_features& dev) {
  using d = dispatch_tuning;
  const std::int64_t tiles = tiles_of<typename tiled_tunings<T>::large>(c);
  return 2 * tiles >= dev.multiprocessors ||
         c.la > (sizeof(T) == 4 ? d::large_wave_float_taps : d::long_taps);
}

// The tile for a single problem of more than long_out outputs and at most
// long_taps taps that no other variant takes (each tile forced beside the
// dispatch over 3-2048 taps x 40000-1048576 outputs; docs/kernel-notes.md
// has the measurements). Few taps are memory-bound there, and the large
// tile streams best once there are enough outputs:
// - float: small up to 65536 outputs up to 128 taps, large from 131072
//   below 128 taps and from 262144 at 128-511, large from 512 taps, else mid;
// - double: small at 32-64 taps up to 65536 outputs, large from 256 taps
//   and below 16 taps from a million outputs, else mid (the "underfilled"
//   rule's choice).
template <class T>
kernel_variant long_out_tile(const correlation_view<T>& c) {
  const std::int64_t out = c.lout, taps = c.la;
  if constexpr (sizeof(T) == 4) {
    if (taps >= 512) return kernel_variant::large;
    if (taps <= 128 && out <= 65536) return kernel_variant::small;
    if (out >= (taps >= 128 ? 262144 : 131072)) return kernel_variant::large;
    return kernel_variant::mid;
  } else {
    if (taps >= 256 || (taps < 16 && out >= (std::int64_t{1} << 20))) return kernel_variant::large;
    if (taps >= 32 && taps <= 64 && out <= 65536) return kernel_variant::small;
    return kernel_variant::mid;
  }
}

// The tile for a single problem of more than long_taps taps that no other
// variant takes (each tile forced beside the dispatch over 2560-49152 taps;
// docs/kernel-notes.md has the measurements):
// - double: mid (large and small lose to it everywhere there);
// - float: the large tile from long_ratio outputs per tap (for convolutions
//   only up to long_large_max_taps taps: beyond, mid is faster), and for gradients
//   whose outputs are at most 1.5x their taps; otherwise convolutions below
//   long_small_below_out outputs take small, whose more tiles fill the GPU,
//   the rest mid.
template <class T>
kernel_variant long_taps_tile(const correlation_view<T>& c) {
  using d = dispatch_tuning;
  if (c.lout < d::mid_from_out) return kernel_variant::small;
  if constexpr (sizeof(T) == 8) return kernel_variant::mid;
  const std::int64_t out = c.lout, taps = c.la;
  if (c.lead > 0) {
    if (out >= d::long_ratio * taps && taps <= d::long_large_max_taps) return kernel_variant::large;
    return out < d::long_small_below_out ? kernel_variant::small : kernel_variant::mid;
  }
  const bool large =
      out >= d::large_from_out && (out >= d::long_ratio * taps || 2 * out <= 3 * taps);
  return large ? kernel_variant::large : kernel_variant::mid;
}

// batches of float full convolutions whose problem fits one large tile take
// the large tile: its R = 16 register blocking makes up for more work on the
// band's zero triangles (a small gain); from 64 problems only, since with
// fewer the mid tile's four times as many tiles fill the GPU better
// (docs/kernel-notes.md has the measurements)
template <class T>
bool batched_full_float(const correlation_view<T>& c) {
  return sizeof(T) == 4 && c.lead > 0 && c.batch >= 64 &&
         c.lout >= dispatch_tuning::large_batched_from_out &&
         c.la >= dispatch_tuning::large_batched_from_taps && c.lout <= tiled_tunings<T>::large::TJ;
}

// single large float problems on Hopper's wgmma (wgmma_tf32_preferred says
// which); inside a stream capture too, where its workspace becomes the
// graph's allocation and free nodes
template <class T>
bool wgmma_first(const correlation_view<T>& c, const device_features& dev) {
  if constexpr (std::is_same_v<T, float>)
    return wgmma_tf32_preferred(c) && wgmma_tf32_supports(c, dev);
  return false;
}

// batched float gradients of many taps take the large tile
// (dispatch_tuning::large_grad_from)
template <class T>
bool batched_grad_float(const correlation_view<T>& c) {
  using d = dispatch_tuning;
  return sizeof(T) == 4 && c.lead == 0 && c.batch >= d::large_grad_batch &&
         c.la >= d::large_grad_from && c.lout >= d::large_grad_from;
}

// warp per problem: batches of short problems (dispatch_tuning::warp_*)
template <class T>
bool warp_preferred(const correlation_view<T>& c) {
  using d = dispatch_tuning;
  if (c.lout > d::warp_max_out || c.la > d::warp_max_taps) return false;
  std::int64_t from = c.la <= d::warp_short_taps ? d::warp_short_from_batch : d::warp_from_batch;
  if (sizeof(T) == 8 && c.lead > 0 && c.la > d::warp_double_conv_taps) from = d::warp_late_batch;
  if (sizeof(T) == 4 && c.lead == 0 && c.la >= d::warp_grad_taps && c.lout >= d::warp_grad_taps)
    from = c.la <= d::warp_grad_mid_taps ? d::warp_late_batch : d::warp_grad_wide_batch;
  return c.batch >= from;
}

/// A cost model of float convolutions of min_taps-max_taps taps and
/// min_out-max_out outputs from min_batch problems, where pairs, lane and warp each
/// win somewhere and their ratios follow how full their last waves are.
/// ln(t_v / t_pairs) = c0 + c1 ln(lane fill) + c2 ln(pairs fill) + c3 ln(la)
/// + c4 ln(lout / la) + c5 ln(min(batch, 8192)) for v = lane, warp; lane
/// fill: groups of 32 problems over the SMs' first waves, pairs fill: lout
/// over whole 512-output halves. The coefficients are a least-squares fit to
/// timings on a 132-SM Hopper chip; held-out shapes check that the model
/// picks within 5 % of the best variant far more often than fixed thresholds
/// do (docs/kernel-notes.md has the measurements and the fit).
struct conv_model {
  static constexpr int min_taps = 32, max_taps = 256, min_out = 319, max_out = 1023;
  static constexpr std::int64_t min_batch = 512, batch_cap = 8192;
  static constexpr std::int64_t lane_group = 32, pairs_half = 512;
  static constexpr double lane[6] = {-1.0496, -0.5639, 0.6626, 0.1150, 0.2092, 0.0192};
  static constexpr double warp[6] = {-1.6686, -0.1255, 0.6362, 0.2446, 0.0896, 0.0789};
};

// the variant of conv_model, or none outside its range
template <class T>
std::optional<kernel_variant> modelled_conv(const correlation_view<T>& c,
                                            const device_features& dev) {
  using d = conv_model;
  if (sizeof(T) != 4 || c.lead == 0 || c.batch < d::min_batch || c.la < d::min_taps ||
      c.la > d::max_taps || c.lout < d::min_out || c.lout > d::max_out)
    return std::nullopt;
  const std::int64_t sms = dev.multiprocessors;
  const std::int64_t groups = (c.batch + d::lane_group - 1) / d::lane_group;
  const double lane_fill = double(groups) / double(wave_slots(groups, sms));
  const double pairs_fill = double(c.lout) / double(wave_slots(c.lout, d::pairs_half));
  const double f[6] = {1.0,
                       std::log(lane_fill),
                       std::log(pairs_fill),
                       std::log(double(c.la)),
                       std::log(double(c.lout) / c.la),
                       std::log(double(std::min<std::int64_t>(c.batch, d::batch_cap)))};
  double lane = 0, warp = 0;
  for (int i = 0; i < 6; ++i) lane += d::lane[i] * f[i], warp += d::warp[i] * f[i];
  // ln(t / t_pairs): pairs is 0; the fits (shared-memory layouts) last
  if (lane < 0 && lane <= warp && lane_slab_fits(c, dev)) return kernel_variant::lane;
  if (warp < 0) return kernel_variant::warp;
  if (pairs_supports(c, dev)) return kernel_variant::pairs;
  return std::nullopt;
}

/// Rules for batches of more than 256 outputs per problem, where the tiles
/// are not the best variant (they read off an audit of random shapes over
/// the whole shape space, with held-out shapes to check them;
/// docs/kernel-notes.md has the measurements): pairs for float problems of
/// up to 1023 outputs and 256 taps from 300 problems; a warp per problem for
/// few taps in enough problems to fill the SMs with warps, whatever the
/// outputs; the tensor-core kernels for long outputs in fewer problems.
struct batch_audit {
  /// outputs per problem from which these rules apply: where warp_preferred stops
  static constexpr std::int64_t min_out = dispatch_tuning::warp_max_out + 1;
  static constexpr std::int64_t pairs_max_out = 1023, pairs_batch = 300, pairs_taps = 256;
  /// pairs also for float gradients of more taps up to pairs_grad_out outputs from
  /// pairs_grad_batch problems, where a pair of blocks per problem beats the tiles;
  /// with fewer problems the tiles win as often, and longer
  /// outputs go to big_grad_batch's rule (docs/kernel-notes.md has the measurements)
  static constexpr std::int64_t pairs_grad_out = 512, pairs_grad_batch = 340;
  /// float gradients of more taps and pairs_grad_out + 1 .. mma_grad_out - 1 outputs
  /// from big_grad_batch problems: lane from big_grad_lane_batch where it fits, else
  /// pairs, else lane: at such batches lane and pairs beat the tiles
  /// (docs/kernel-notes.md has the measurements)
  static constexpr std::int64_t big_grad_batch = 1500, big_grad_lane_batch = 3000;
  /// warp: up to few_taps taps from few_batch problems, or up to some_taps
  /// from some_batch (float, double), whatever the outputs: a warp per
  /// problem streams few taps at any length, and the problems alone fill
  /// the SMs with warps
  static constexpr std::int64_t few_taps = 64, few_batch_f = 880, few_batch_d = 600;
  static constexpr std::int64_t some_taps = 128, some_batch_f = 2000, some_batch_d = 1800;
  /// float mma: from mma_out outputs and mma_batch problems, problems x
  /// outputs from mma_work, up to mma_short_taps taps, or up to mma_taps
  /// from mma_long_out outputs (between, the tiles win as often as mma)
  static constexpr std::int64_t mma_out = 1024, mma_batch = 8, mma_work = 250'000;
  static constexpr std::int64_t mma_short_taps = 192, mma_long_out = 16384, mma_taps = 1024;
  /// ... and gradients of more than mma_short_taps up to mma_taps taps and
  /// mma_grad_out outputs or more from mma_grad_batch problems: there the
  /// tensor cores beat every tile that pairs does not take first; with fewer
  /// outputs the tile is as often faster (docs/kernel-notes.md has the
  /// measurements)
  static constexpr std::int64_t mma_grad_out = 768, mma_grad_batch = 300;
  /// double mma (DMMA): from dmma_out outputs and dmma_taps taps, problems x
  /// outputs from dmma_work
  static constexpr std::int64_t dmma_out = 2048, dmma_taps = 128, dmma_work = 40'000;
};

// the variant of batch_audit's rules, or none outside them
template <class T>
std::optional<kernel_variant> audited_batch(const correlation_view<T>& c,
                                            const device_features& dev) {
  using d = batch_audit;
  constexpr bool is_float = sizeof(T) == 4;
  const std::int64_t batch = c.batch, taps = c.la, out = c.lout;
  if (batch < 2 || out < d::min_out) return std::nullopt;
  const bool pairs_short =
      out <= d::pairs_max_out && batch >= d::pairs_batch && taps <= d::pairs_taps;
  // float gradients of more taps than pairs_short takes (pairs_grad, big_grad_*)
  const bool long_grad = is_float && c.lead == 0 && taps > d::pairs_taps;
  const bool pairs_grad = long_grad && out <= d::pairs_grad_out && batch >= d::pairs_grad_batch;
  if (is_float && (pairs_short || pairs_grad) && pairs_supports(c, dev))
    return kernel_variant::pairs;
  if (long_grad && out > d::pairs_grad_out && out < d::mma_grad_out && batch >= d::big_grad_batch) {
    const bool lane = lane_supports(c, dev);
    if (lane && batch >= d::big_grad_lane_batch) return kernel_variant::lane;
    if (pairs_supports(c, dev)) return kernel_variant::pairs;
    if (lane) return kernel_variant::lane;
  }
  const bool few = taps <= d::few_taps && batch >= (is_float ? d::few_batch_f : d::few_batch_d);
  const bool some = taps <= d::some_taps && batch >= (is_float ? d::some_batch_f : d::some_batch_d);
  if (few || some) return kernel_variant::warp;
  const bool mma_grad = c.lead == 0 && out >= d::mma_grad_out && batch >= d::mma_grad_batch &&
                        taps > d::mma_short_taps && taps <= d::mma_taps;
  if (!mma_supports(c, dev)) return std::nullopt;
  if (is_float ? (out >= d::mma_out && batch >= d::mma_batch && batch * out >= d::mma_work &&
                  (taps <= d::mma_short_taps || (out >= d::mma_long_out && taps <= d::mma_taps))) ||
                     mma_grad
               : out >= d::dmma_out && taps >= d::dmma_taps && batch * out >= d::dmma_work)
    return kernel_variant::mma;
  return std::nullopt;
}

// outputs per problem from which the mid tile is taken (dispatch_tuning)
template <class T>
std::int64_t mid_from_out(const correlation_view<T>& c) {
  using d = dispatch_tuning;
  if (c.batch < d::batched_mid_from_batch) return d::mid_from_out;
  if (sizeof(T) == 8) return d::double_batched_mid_from_out;
  if (c.lead == 0 && c.la >= d::float_grad_mid_taps && c.batch >= d::float_grad_mid_batch)
    return d::float_grad_mid_from_out;
  return d::batched_mid_from_out;
}

// The tile a device runs `c` on when it lacks the features of the variant
// chosen (variant_supports): without a tap split, the largest tile whose
// tiles still give every multiprocessor a block, else the small tile.
template <class T>
kernel_variant generic_tile(const correlation_view<T>& c, const device_features& dev) {
  using tun = tiled_tunings<T>;
  const std::int64_t sms = dev.multiprocessors;
  if (c.lout >= dispatch_tuning::large_from_out && tiles_of<typename tun::large>(c) >= sms)
    return kernel_variant::large;
  if (c.lout >= dispatch_tuning::mid_from_out && tiles_of<typename tun::mid>(c) >= sms)
    return kernel_variant::mid;
  return kernel_variant::small;
}

// The plan of variant v with `split`, or of generic_tile where device `d`
// cannot run v; a device without clusters runs every tile unsplit. Every
// plan choose() returns passes through here: whatever the rules above
// prefer, the device runs what it supports.
template <class T>
kernel_plan on_device(kernel_variant v, const correlation_view<T>& c, int split,
                      const device_features& dev) {
  if (!variant_supports(v, c, dev)) {
    v = generic_tile(c, dev);
    split = tap_split_of(v, c, dev);
  }
  if (!dev.hopper) split = 1;
  return {v, split};
}

// The preference rules in order: the first that claims `c` names the variant.
template <class T>
kernel_plan choose_rules(const correlation_view<T>& c, const device_features& dev) {
  using tun = tiled_tunings<T>;
  if (const auto v = modelled_conv(c, dev)) return on_device(*v, c, 1, dev);
  if (lane_preferred(c, dev)) return on_device(kernel_variant::lane, c, 1, dev);
  if (pairs_preferred(c, dev)) return on_device(kernel_variant::pairs, c, 1, dev);
  if (const auto a = audited_batch(c, dev)) return on_device(*a, c, tap_split_of(*a, c, dev), dev);
  if (wgmma_first(c, dev)) return on_device(kernel_variant::wgmma, c, 1, dev);
  if (wide_preferred(c, dev) && wide_supports(c, dev))
    return on_device(kernel_variant::wide, c, 1, dev);
  if (mma_preferred(c, dev) && mma_supports(c, dev))
    return on_device(kernel_variant::mma, c, mma_split(c, dev), dev);
  if (warp_preferred(c)) return on_device(kernel_variant::warp, c, 1, dev);
  if (c.batch == 1 && (c.la > dispatch_tuning::long_taps || c.lout > dispatch_tuning::long_out)) {
    const kernel_variant v =
        c.la > dispatch_tuning::long_taps ? long_taps_tile(c) : long_out_tile(c);
    return on_device(v, c, tap_split_of(v, c, dev), dev);
  }
  if ((c.lout >= dispatch_tuning::large_from_out && c.la >= dispatch_tuning::large_from_taps &&
       large_wave(c, dev)) ||
      batched_full_float(c) || batched_grad_float(c) || large_double_few_taps(c, dev))
    return on_device(kernel_variant::large, c, tap_split<typename tun::large>(c, dev), dev);
  if (c.lout >= mid_from_out(c) && !underfilled(c, dev))
    return on_device(kernel_variant::mid, c, tap_split<typename tun::mid>(c, dev), dev);
  return on_device(kernel_variant::small, c, tap_split<typename tun::small>(c, dev), dev);
}

// The plan of `c` on `dev` from `source`.
template <class T>
kernel_plan plan_by(plan_source source, const correlation_view<T>& c, const device_features& dev) {
  return source == plan_source::model ? modelled_plan(c, dev) : choose_rules(c, dev);
}

// How much slower than its own plan the cost model must time the rules'
// plan before the model's plan runs instead on the rules' device class: the
// rules are fitted to batches of at most 4096 problems and miss shapes
// beyond (tiny problems in tens of thousands, where lane outruns their
// warp); a margin keeps them wherever they and the model nearly agree,
// which is where they are the better judge (marg_tune --replay of the dumps
// in bench/cuda/cost-data picks the margin).
constexpr double rules_overruled_at = 1.3;

// The plans of the shapes a host thread met last. The plan is a pure
// function of the correlation's lengths, strides and operands' alignment and
// of the device, and a shape met again is the common case (a loop of
// inference steps), where the model's search over the variants and splits
// would cost about a microsecond on every call.
class plan_memo {
 public:
  static constexpr int slots = 16;
  using key = std::array<std::int64_t, 19>;

  template <class T>
  static key key_of(const correlation_view<T>& c, const device_features& d) {
    // the operands' low address bits: every alignment the planner asks about
    const auto low = [](const void* p) {
      return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) & 255);
    };
    return {sizeof(T),
            c.la,
            c.lx,
            c.lead,
            c.lout,
            c.batch,
            c.a_step,
            c.a_batch,
            c.x_step,
            c.x_batch,
            c.out_step,
            c.out_batch,
            low(c.a) | low(c.x) << 8 | low(c.out) << 16,
            d.capability,
            int{d.hopper} | int{d.ampere} << 1 | int{d.wgmma} << 2,
            d.multiprocessors,
            d.max_smem,
            d.clock_mhz,
            d.bandwidth_gbs};
  }

  /// the plan of `k`, made by `make` on a miss
  template <class Make>
  static kernel_plan find(const key& k, Make&& make) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
    for (const std::int64_t w : k) h = (h ^ static_cast<std::uint64_t>(w)) * 1099511628211ull;
    entry& e = memo[h % slots];
    if (!e.used || e.k != k) e = {true, k, make()};
    return e.plan;
  }

 private:
  struct entry {
    bool used;
    key k;
    kernel_plan plan;
  };
  static thread_local entry memo[slots];
};

thread_local plan_memo::entry plan_memo::memo[plan_memo::slots] = {};

// The plan of `c` on `dev`: the rules on the device class they are fitted
// to, unless the cost model times their plan rules_overruled_at times its
// own; the cost model elsewhere.
template <class T>
kernel_plan plan_anew(const correlation_view<T>& c, const device_features& dev) {
  if (!rules_fitted_to(dev)) return modelled_plan(c, dev);
  const kernel_plan rules = choose_rules(c, dev), model = modelled_plan(c, dev);
  if (model.variant == rules.variant && model.split == rules.split) return rules;
  const double by_rules = modelled_us(rules.variant, c, rules.split, dev),
               by_model = modelled_us(model.variant, c, model.split, dev);
  return by_rules > 0 && by_model > 0 && by_rules > rules_overruled_at * by_model ? model : rules;
}

// plan_anew's plan, remembered for the shapes met last
template <class T>
kernel_plan choose_for(const correlation_view<T>& c, const device_features& dev) {
  return plan_memo::find(plan_memo::key_of(c, dev), [&] { return plan_anew(c, dev); });
}

}  // namespace

namespace {

// the split variant v's rule gives `c` on `dev`, clusters or not
template <class T>
int split_rule(kernel_variant v, const correlation_view<T>& c, const device_features& dev) {
  using tun = tiled_tunings<T>;
  switch (v) {
    case kernel_variant::small:
      return tap_split<typename tun::small>(c, dev);
    case kernel_variant::mid:
      return tap_split<typename tun::mid>(c, dev);
    case kernel_variant::large:
      return tap_split<typename tun::large>(c, dev);
    case kernel_variant::mma:
      return mma_split(c, dev);
    default:  // the registry's entries that split are the four above
      return 1;
  }
}

}  // namespace

template <class T>
int tap_split_of(kernel_variant v, const correlation_view<T>& c, const device_features& dev) {
  if (!entry_of<T>(v).splits_taps) return 1;
  if (dev.hopper) return split_rule(v, c, dev);
  // without clusters the partial tiles go through scratch and a second
  // kernel (launch_cluster_tiles): the split of 1, 2, 4, 8 or 16 the cost
  // model times fastest, where the scratch stays bounded
  static_assert(max_memory_split == 16);
  int best = 1;
  double best_us = modelled_us(v, c, 1, dev);
  for (const int split : {2, 4, 8, 16}) {
    if (split > c.la || split_scratch_bytes(c, split) > split_scratch_max_bytes) break;
    const double t = modelled_us(v, c, split, dev);
    if (t >= 0 && t < best_us) best_us = t, best = split;
  }
  return best;
}

bool rules_fitted_to(const device_features& dev) {
  return dev.capability == 90 && dev.hopper;
}

template <class T>
kernel_plan choose(const banded_args<T>& x, const device_features& dev) {
  return choose_for(correlation_of(x), dev);
}

template <class T>
kernel_plan choose_from(plan_source source, const banded_args<T>& x, const device_features& dev) {
  return plan_by(source, correlation_of(x), dev);
}

namespace {

// the wisdom class of `c` on `dev`
template <class T>
wisdom_key key_of(const correlation_view<T>& c, const device_features& dev) {
  const bool unit = c.a_step == (c.lead > 0 ? -1 : 1) && c.x_step == 1 && c.out_step == 1;
  return {.capability = dev.capability,
          .multiprocessors = dev.multiprocessors,
          .hopper = dev.hopper,
          .value_bytes = static_cast<int>(sizeof(T)),
          .convolution = c.lead > 0,
          .taps = size_class(c.la),
          .outputs = size_class(c.lout),
          .batch = size_class(c.batch),
          .unit_aligned = unit && aligned16(taps_row(c)) && aligned16(c.x) && aligned16(c.out)};
}

// `rules` (choose_for's plan), or the wisdom's variant for c's class where
// dev supports it for c
template <class T>
kernel_plan wise(const correlation_view<T>& c, const device_features& dev, kernel_plan rules,
                 const std::optional<wisdom_entry>& e) {
  if (!e) return rules;
  const auto v = static_cast<kernel_variant>(e->variant);
  if (v == rules.variant || !variant_supports(v, c, dev)) return rules;
  return {v, tap_split_of(v, c, dev)};
}

// Two CUDA events, destroyed however measure() leaves.
struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  event_pair() {
    MARG_CUDA_TRY(cudaEventCreate(&start));
    if (const cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) {
      cudaEventDestroy(start);
      MARG_CUDA_TRY(e);
    }
  }
  ~event_pair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
};

// Times every variant dev supports for c (its plan's split) into a scratch
// output, `reps` launches each after one warm-up, and keeps the fastest (the
// smallest best time; ties: the earlier variant) as the wisdom of c's class.
// The scratch output keeps the caller's output and anything it overlaps
// untouched until the chosen variant runs.
template <class T>
kernel_plan measure(const correlation_view<T>& c, const device_features& dev, cudaStream_t stream) {
  constexpr int reps = 3;
  correlation_view<T> m = c;
  const std::size_t n = static_cast<std::size_t>(c.batch) * static_cast<std::size_t>(c.lout);
  const device_scratch scratch(n * sizeof(T), current_device_id(), stream);
  m.out = static_cast<T*>(scratch.data());
  m.out_step = 1;
  m.out_batch = c.lout;
  const event_pair ev;
  kernel_plan best{};
  float best_ms = -1;
  for (const kernel_variant v : all_variants) {
    if (!variant_supports(v, c, dev)) continue;
    const kernel_plan p{v, tap_split_of(v, c, dev)};
    launch_variant(v, m, p.split, stream);
    float fastest = -1;
    for (int r = 0; r < reps; ++r) {
      MARG_CUDA_TRY(cudaEventRecord(ev.start, stream));
      launch_variant(v, m, p.split, stream);
      MARG_CUDA_TRY(cudaEventRecord(ev.stop, stream));
      MARG_CUDA_TRY(cudaEventSynchronize(ev.stop));
      float ms = 0;
      MARG_CUDA_TRY(cudaEventElapsedTime(&ms, ev.start, ev.stop));
      if (fastest < 0 || ms < fastest) fastest = ms;
    }
    if (best_ms < 0 || fastest < best_ms) best_ms = fastest, best = p;
  }
  wisdom_store(key_of(c, dev), {static_cast<int>(best.variant), 1000.0 * best_ms});
  return best;
}

// choose_for's plan with the wisdom held, measuring an unknown class in
// measure mode (not inside a stream capture, where nothing may wait)
template <class T>
kernel_plan planned(const correlation_view<T>& c, const device_features& dev, cudaStream_t stream) {
  const kernel_plan rules = choose_for(c, dev);
  if (!wisdom_active()) return rules;
  const wisdom_key k = key_of(c, dev);
  const std::optional<wisdom_entry> e = wisdom_find(k);
  if (e || !planner_measures()) return wise(c, dev, rules, e);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  MARG_CUDA_TRY(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return rules;
  return measure(c, dev, stream);
}

}  // namespace

template <class T>
kernel_plan choose_with_wisdom(const banded_args<T>& x, const device_features& dev) {
  const correlation_view<T> c = correlation_of(x);
  const kernel_plan rules = choose_for(c, dev);
  return wise(c, dev, rules, wisdom_find(key_of(c, dev)));
}

template <class T>
void launch_banded(const banded_args<T>& x, cudaStream_t stream) {
  if (x.batch == 0) return;
  const correlation_view<T> c = correlation_of(x);
  const kernel_plan p = planned(c, current_device_features(), stream);
  launch_variant(p.variant, c, p.split, stream);
}

template void launch_banded<float>(const banded_args<float>&, cudaStream_t);
template void launch_banded<double>(const banded_args<double>&, cudaStream_t);
template kernel_plan choose<float>(const banded_args<float>&, const device_features&);
template kernel_plan choose<double>(const banded_args<double>&, const device_features&);
template kernel_plan choose_from<float>(plan_source, const banded_args<float>&,
                                        const device_features&);
template kernel_plan choose_from<double>(plan_source, const banded_args<double>&,
                                         const device_features&);
template kernel_plan choose_with_wisdom<float>(const banded_args<float>&, const device_features&);
template kernel_plan choose_with_wisdom<double>(const banded_args<double>&, const device_features&);
template int tap_split_of<float>(kernel_variant, const correlation_view<float>&,
                                 const device_features&);
template int tap_split_of<double>(kernel_variant, const correlation_view<double>&,
                                  const device_features&);

}  // namespace marg::detail::cuda
