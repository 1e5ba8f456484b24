// Wide-tile variant of a single float or double correlation
// (kernels/wide.cuh): launch, support and dispatch rules.
#include <algorithm>
#include <cstdint>

#include "../cuda_check.hpp"
#include "../launch.hpp"
#include "wide.cuh"

namespace marg::detail::cuda {
namespace {

/// Taps the variant supports: float 4096 needs 257 chunks, so a block of two
/// groups stays within 1024 threads and 48 KB of shared memory (39 KB); double
/// 2048 needs 129 chunks, two groups of 160 threads within its 512 and 39 KB.
template <class T>
constexpr int wide_max_taps = sizeof(T) == 4 ? 4096 : 2048;

/// Shapes the dispatch sends to the variant: single problems where it is
/// faster than the kernel the dispatch takes otherwise, by skipping the
/// cluster's tap split (docs/kernel-notes.md has the measurements: grids
/// of 16-2048 taps and 256-32768 outputs in both types and both ops). Where
/// it is not, the rule keeps the tiled kernels:
/// - convolutions with few taps, whose small tile wastes little on the band:
///   float below 256 taps, double below 96;
/// - double gradients below 64 taps, of fewer than 512 outputs with
///   512-2047 taps (16 blocks of one or two warps leave most SMs idle), and
///   of more than 16384 outputs with fewer than 512 taps;
/// - double convolutions of more than 2016 taps beyond 12000 outputs (129
///   chunks: 320 threads of 114 registers, one block per SM).
/// Beyond 10000 outputs the rule covers problems of 256 or more taps only,
/// the range it is checked on.
/// Float problems of 2049-4096 taps take it while taps x outputs stays within
/// 2^26 (convolutions) or 9e7 (gradients); beyond, the large tile's reuse
/// wins (docs/kernel-notes.md).
/// Beyond 32768 outputs, problems of 512-2048 taps while taps x outputs
/// stays within 6e7 in float, 2.1e7 (convolutions) or 4.5e7 (gradients) in
/// double, where it beats the large tile and DMMA; at 256 taps the mid tile
/// wins. Inside the range the losses left are small (a fraction of a
/// microsecond at the edges).
template <class T>
struct wide_dispatch {
  static constexpr bool is_float = sizeof(T) == 4;
  static constexpr int min_conv_taps = is_float ? 256 : 96;
  static constexpr int min_grad_taps = is_float ? 16 : 64;
  static constexpr int max_taps = 2048;
  static constexpr int min_out = 64;
  static constexpr int max_out = 32768;
  /// beyond this many outputs only problems of at least long_taps taps
  static constexpr int short_max_out = 10000, long_taps = 256;
  /// double gradients beyond this many outputs only from long_grad_taps taps
  static constexpr int long_grad_from_out = 16384, long_grad_taps = 512;
  /// double convolutions of more taps than this (129 chunks) ...
  static constexpr int wide_conv_taps = 2016;
  /// ... up to this many outputs
  static constexpr int wide_conv_max_out = 12000;
  /// double gradients with fewer outputs than this ...
  static constexpr int few_out = 512;
  /// ... take the tiled kernels at these taps
  static constexpr int few_out_from_taps = 512, few_out_to_taps = 2047;
  /// float problems of more than max_taps taps: largest taps x outputs
  static constexpr std::int64_t long_conv_area = std::int64_t{1} << 26;
  static constexpr std::int64_t long_grad_area = 90'000'000;
  /// more than max_out outputs: from long_out_taps taps, largest taps x outputs
  static constexpr int long_out_taps = 512;
  static constexpr std::int64_t long_out_area = is_float ? 60'000'000 : 45'000'000;
  static constexpr std::int64_t long_out_conv_area = is_float ? 60'000'000 : 21'000'000;
  /// double problems of this many multiply-adds on the band (band_macs) go
  /// on to the DMMA kernel, at its modelled split: from there the FP64
  /// tensor cores' throughput beats the wide kernel's FMA (near 30 M the
  /// two tie; docs/kernel-notes.md has the measurements)
  static constexpr std::int64_t dmma_band_macs = 40'000'000;
};

/// Tiles of two groups from 32 tiles on; fewer tiles keep one group per
/// block, so that the few tiles still spread over more SMs.
constexpr int wide_two_groups_from_tiles = 32;

template <class T>
int groups_of(const correlation_view<T>& c) {
  const std::int64_t tiles = (std::int64_t{c.lout} + wide_tuning::R - 1) / wide_tuning::R;
  return tiles >= wide_two_groups_from_tiles ? 2 : 1;
}

template <class T, bool Conv, int G>
void launch_wide_t(const correlation_view<T>& c, cudaStream_t stream) {
  constexpr int R = wide_tuning::R, U = wide_tuning::U;
  wide_operands<T> w{taps_row(c), c.la, c.x, c.lx, c.out, c.lout, 0, 0};
  // chunks of 16 taps a block meets: a convolution's block sees at most
  // min(lt, lx + 16 G - 1) taps, starting anywhere in a chunk
  w.ncmax = Conv ? (std::min(w.lt, w.lx + R * G - 1) + 2 * U - 2) / U : (w.lt + U - 1) / U;
  w.ntg = (w.ncmax + 31) / 32 * 32;
  const std::size_t elems = wide_smem_elems<T>(w.ncmax, G);
  const unsigned blocks = static_cast<unsigned>((std::int64_t{c.lout} + R * G - 1) / (R * G));
  launch_with({.grid = dim3(blocks),
               .threads = static_cast<unsigned>(G * w.ntg),
               .smem = elems * sizeof(T),
               .early_start = true},
              stream, kernel_banded_wide<T, Conv, G>, w);
}

template <class T>
bool supports(const correlation_view<T>& c) {
  const bool conv = c.lead > 0;
  // a convolution's view reverses its taps (a_step -1); a gradient reads them
  // forwards; one tap has no direction
  const bool unit_taps = c.la == 1 || c.a_step == (conv ? -1 : 1);
  return c.batch == 1 && unit_taps && c.x_step == 1 && c.out_step == 1 &&
         (!conv || c.lead == c.la - 1) && c.la >= 1 && c.la <= wide_max_taps<T> && c.lout >= 1 &&
         aligned16(taps_row(c)) && aligned16(c.x);
}

template <class T>
bool preferred(const correlation_view<T>& c) {
  using d = wide_dispatch<T>;
  const bool conv = c.lead > 0;
  if (!d::is_float && band_macs(c) >= d::dmma_band_macs) return false;
  if (d::is_float && c.la > d::max_taps)
    return c.lout >= d::min_out &&
           std::int64_t{c.la} * c.lout <= (conv ? d::long_conv_area : d::long_grad_area) &&
           supports(c);
  if (c.lout > d::max_out)
    return c.la >= d::long_out_taps && c.la <= d::max_taps &&
           std::int64_t{c.la} * c.lout <= (conv ? d::long_out_conv_area : d::long_out_area) &&
           supports(c);
  if (c.la < (conv ? d::min_conv_taps : d::min_grad_taps) || c.la > d::max_taps ||
      c.lout < d::min_out || c.lout > (c.la >= d::long_taps ? d::max_out : d::short_max_out))
    return false;
  if (!d::is_float) {
    if (!conv && c.lout < d::few_out && c.la >= d::few_out_from_taps && c.la <= d::few_out_to_taps)
      return false;
    if (!conv && c.lout > d::long_grad_from_out && c.la < d::long_grad_taps) return false;
    if (conv && c.la > d::wide_conv_taps && c.lout > d::wide_conv_max_out) return false;
  }
  return supports(c);
}

template <class T>
void launch(const correlation_view<T>& c, cudaStream_t stream) {
  MARG_EXPECTS(supports(c), "marg: the wide variant does not support these operands");
  const bool conv = c.lead > 0;
  const int g = groups_of(c);
  if (conv)
    g == 2 ? launch_wide_t<T, true, 2>(c, stream) : launch_wide_t<T, true, 1>(c, stream);
  else
    g == 2 ? launch_wide_t<T, false, 2>(c, stream) : launch_wide_t<T, false, 1>(c, stream);
}

}  // namespace

// the wide tile stages through cp.async (sm_80)
bool wide_supports(const correlation_view<float>& c, const device_features& d) {
  return d.ampere && supports(c);
}
bool wide_supports(const correlation_view<double>& c, const device_features& d) {
  return d.ampere && supports(c);
}
bool wide_preferred(const correlation_view<float>& c, const device_features&) {
  return preferred(c);
}
bool wide_preferred(const correlation_view<double>& c, const device_features&) {
  return preferred(c);
}
void launch_wide(const correlation_view<float>& c, cudaStream_t stream) {
  launch(c, stream);
}
void launch_wide(const correlation_view<double>& c, cudaStream_t stream) {
  launch(c, stream);
}

}  // namespace marg::detail::cuda
