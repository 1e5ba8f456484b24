// The CUDA planner's cost model (cost_model.hpp): each variant's work units,
// how many a multiprocessor holds at once, and the fitted coefficients.
#include <algorithm>
#include <cstdint>

#include "cost_model.hpp"
#include "cost_model_fit.hpp"
#include "kernels/lane_bulk.cuh"
#include "kernels/pairs.cuh"
#include "kernels/tiled.cuh"
#include "kernels/warp.cuh"
#include "kernels/wgmma_tf32.cuh"
#include "launch.hpp"

namespace marg::detail::cuda {
namespace {

/// The cycles of a multiply-add in the FP64 mma variant's m8n8k4 steps
/// (devices without the Hopper features) over those in sm_90's m16n8k16
/// steps, so that one fit serves both: the unsplit tiles' time ratio on an
/// H200, 1.31 to 1.34 on single problems of 8192 to 65536
/// (bench/cuda/cost-data/h200-generic-double-every-split and
/// h200-double-every-split).
constexpr double dmma_m8n8k4_mac_cost = 1.33;

// ceil(a / b)
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/// One variant's work on one correlation: its units, how many a
/// multiprocessor holds at once, the serial stages of its longest unit and
/// of an average one (0: as many as the longest), and an average unit's
/// multiply-adds per warp and elements loaded.
struct unit_work {
  std::int64_t units = 1, resident = 1, steps = 1;
  double mean_steps = 0, macs = 0, elems = 0;
};

// an output tile of shape t (TJ outputs) whose taps, split over `split`
// blocks, stage t.stage at a time, with t.warps warps sharing its
// multiply-adds. A tile reads
// the taps its outputs meet and TJ - 1 more (the band's slant), at most la:
// all la in a gradient, fewer towards the ends of a full convolution, whose
// tiles average la lx / lout + TJ - 1
template <class T>
unit_work tile_work(const correlation_view<T>& c, const tile_shape& t, int split) {
  const std::int64_t tj = t.outputs, kc = t.stage, warps = t.warps;
  const std::int64_t taps = std::min<std::int64_t>(c.la, tj + c.lx - 1);
  const double mean_taps =
      std::min(double(taps), double(band_macs(c)) / double(c.lout) + double(tj - 1));
  const double parts = split;
  return {.units = ceil_div(c.lout, tj) * c.batch * split,
          .resident = t.resident,
          .steps = ceil_div(ceil_div(taps, split), kc),
          .mean_steps = std::ceil(mean_taps / parts / double(kc)),
          .macs = double(tj) * mean_taps / parts / double(warps),
          .elems = (double(tj) + 2 * mean_taps) / parts};
}

// The units of each variant follow its kernel's tiling (kernels/): the
// model needs their scale and how they fill the device; the fitted
// coefficients absorb the rest.
template <class T>
unit_work work_of(kernel_variant v, const correlation_view<T>& c, int split,
                  const device_features& d) {
  using tun = tiled_tunings<T>;
  const std::int64_t lout = c.lout, la = c.la, lx = c.lx;
  const auto taps_of = [&](std::int64_t out) { return std::min<std::int64_t>(la, out + lx - 1); };
  const double band = double(la) * double(c.lead > 0 ? lx : lout);
  switch (v) {
    case kernel_variant::small:
      return tile_work(c, tile_shape_of<typename tun::small>(), split);
    case kernel_variant::mid:
      return tile_work(c, tile_shape_of<typename tun::mid>(), split);
    case kernel_variant::large:
      return tile_work(c, tile_shape_of<typename tun::large>(), split);
    case kernel_variant::mma: {  // tensor-core tiles, of launch_mma's tuning
      unit_work u = tile_work(c, mma_tile(c), split);
      // double without the Hopper features steps in m8n8k4 instructions
      if (sizeof(T) == 8 && !d.hopper) u.macs *= dmma_m8n8k4_mac_cost;
      return u;
    }
    case kernel_variant::warp: {  // a warp per problem, 128-output passes, 32 warps an SM
      using w = typename tun::warp;
      const std::int64_t passes = ceil_div(lout, w::TJ), taps = taps_of(w::TJ);
      return {.units = c.batch,
              .resident = 32,
              .steps = passes * ceil_div(taps, w::KC),
              .macs = double(passes) * double(w::TJ) * double(taps),
              .elems = double(passes) * double(w::TJ + 2 * taps)};
    }
    case kernel_variant::pairs: {  // a warp per problem; its layout pads the
                                   // outputs to whole 512-output halves and
                                   // skips the band's zero triangles
      const std::int64_t out = ceil_div(lout, 512) * 512;
      return {.units = c.batch,
              .resident = pairs_tuning::W * pairs_tuning::resident,
              .steps = 1,
              .macs = band * double(out) / double(lout),
              .elems = double(la + lx + out)};
    }
    case kernel_variant::lane:  // a lane per problem: groups of 32 problems, a
                                // warp each, two blocks an SM (float's bound;
                                // double's coefficients absorb its one)
      return {.units = ceil_div(c.batch, 32),
              .resident = 2 * lane_bulk_tuning::W,
              .steps = 1,
              .macs = band,
              .elems = 32.0 * double(la + lx + lout)};
    case kernel_variant::wgmma: {  // the units of its plan, a warpgroup each
      if constexpr (sizeof(T) == 4) {
        const wgmma_tf32_work w = wgmma_tf32_work_of(c, std::max(d.multiprocessors, 1));
        return {.units = std::max<std::int64_t>(w.units, 1),
                .resident = std::max(w.resident, 1),
                .steps = std::max(w.k_steps, 1),
                .macs = double(w.outputs) * 8.0 * double(w.k_steps) / 4,
                .elems = double(w.outputs) + 16.0 * double(w.k_steps)};
      }
      return {};  // double: no kernel
    }
    case kernel_variant::wide: {  // 16 outputs a group, 16 taps a thread (launch_wide)
      const std::int64_t g = ceil_div(lout, 16) >= 32 ? 2 : 1;
      const std::int64_t chunks =
          c.lead > 0 ? (std::min<std::int64_t>(la, lx + 16 * g - 1) + 30) / 16 : ceil_div(la, 16);
      const std::int64_t threads = g * ceil_div(chunks, 32) * 32;
      const std::int64_t taps = taps_of(16 * g);
      return {.units = ceil_div(lout, 16 * g),
              .resident = std::clamp<std::int64_t>(2048 / threads, 1, 32),
              .steps = 1,
              .macs = double(16 * g) * double(taps) / (double(threads) / 32),
              .elems = double(16 * g + 2 * taps)};
    }
  }
  return {};
}

}  // namespace

template <class T>
cost_terms cost_terms_of(kernel_variant v, const correlation_view<T>& c, int split,
                         const device_features& d) {
  const unit_work u = work_of(v, c, split, d);
  const std::int64_t sms = std::max(d.multiprocessors, 1);
  const double clock = d.clock_mhz > 0 ? d.clock_mhz : 1500.0;
  const double bandwidth = d.bandwidth_gbs > 0 ? d.bandwidth_gbs : 1000.0;
  const double waves = double(ceil_div(u.units, sms * u.resident));
  const double load = double(ceil_div(u.units, sms));
  cost_terms t;
  t.waves = waves;
  // the waves before the last run average units; the last one waits for the longest
  const double mean_steps = u.mean_steps > 0 ? u.mean_steps : double(u.steps);
  t.wave_steps_us = ((waves - 1) * mean_steps + double(u.steps)) * 1000.0 / clock;
  t.load_macs_us = load * u.macs / clock;
  t.load_elems_us = load * u.elems / clock;
  t.bytes_us = double(c.batch) * double(c.la + c.lx + c.lout) * sizeof(T) / (1e3 * bandwidth);
  // a split without clusters (launch_cluster_tiles): split partial tiles
  // written and read back, then the outputs
  if (split > 1 && !d.hopper) {
    t.split_sums = 1;
    t.split_bytes_us =
        double(c.lout) * double(c.batch) * double(2 * split + 1) * sizeof(T) / (1e3 * bandwidth);
  }
  return t;
}

template <class T>
double modelled_us(kernel_variant v, const correlation_view<T>& c, int split,
                   const device_features& d) {
  // the table fitted to devices with the Hopper features where those are used,
  // else the one fitted to every device measured
  const cost_coefficients& k =
      cost_fit[d.hopper ? 1 : 0][sizeof(T) == 8][c.lead == 0][static_cast<int>(v)];
  if (!k.fitted) return -1;
  const cost_terms t = cost_terms_of(v, c, split, d);
  return k.fixed + k.per_wave * t.waves + k.per_step * t.wave_steps_us +
         k.per_mac * t.load_macs_us + k.per_elem * t.load_elems_us + k.per_byte * t.bytes_us +
         split_sum_fit.fixed * t.split_sums + split_sum_fit.per_byte * t.split_bytes_us;
}

template <class T>
kernel_plan modelled_plan(const correlation_view<T>& c, const device_features& d) {
  kernel_plan best{kernel_variant::small, tap_split_of(kernel_variant::small, c, d)};
  double best_us = -1;
  for (const kernel_variant v : all_variants) {
    if (!variant_supports(v, c, d)) continue;
    const int split = tap_split_of(v, c, d);
    const double t = modelled_us(v, c, split, d);
    if (t >= 0 && (best_us < 0 || t < best_us)) best_us = t, best = {v, split};
  }
  return best;
}

template <class T>
double modelled_time(kernel_variant v, const banded_args<T>& x, const device_features& d) {
  const correlation_view<T> c = correlation_of(x);
  return modelled_us(v, c, tap_split_of(v, c, d), d);
}

template double modelled_time<float>(kernel_variant, const banded_args<float>&,
                                     const device_features&);
template double modelled_time<double>(kernel_variant, const banded_args<double>&,
                                      const device_features&);
template cost_terms cost_terms_of<float>(kernel_variant, const correlation_view<float>&, int,
                                         const device_features&);
template cost_terms cost_terms_of<double>(kernel_variant, const correlation_view<double>&, int,
                                          const device_features&);
template double modelled_us<float>(kernel_variant, const correlation_view<float>&, int,
                                   const device_features&);
template double modelled_us<double>(kernel_variant, const correlation_view<double>&, int,
                                    const device_features&);
template kernel_plan modelled_plan<float>(const correlation_view<float>&, const device_features&);
template kernel_plan modelled_plan<double>(const correlation_view<double>&, const device_features&);

}  // namespace marg::detail::cuda
