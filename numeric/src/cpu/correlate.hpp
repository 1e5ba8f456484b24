// The CPU kernel of all three banded products: a valid-mode correlation
//   out_j = sum_{k < la} a_k X_{j+k},  j < lout,
// where X is x placed at offset `lead` in an infinite run of zeros.
//   convolve: a = reversed shorter operand, x = the other, lead = la - 1
//   grad_p:   a = q, x = g, lead = 0;   grad_q: a = p, x = g, lead = 0
// Not installed.
#pragma once

#include <cstdint>

namespace marg::detail::cpu {

/// Tile sizes and thresholds of the CPU backend, in one place.
struct tuning {
  /// min(la, lout) below this: the direct (axpy) loop
  static constexpr std::int64_t direct_below = 64;
  /// largest block T of the block-Toeplitz product
  static constexpr std::int64_t max_block = 256;
  /// smallest block T
  static constexpr std::int64_t min_block = 32;
  /// output block columns per GEMM call (fixed, so rounding is thread-independent)
  static constexpr std::int64_t chunk_columns = 64;
  /// block diagonals summed in T before they join the double accumulator
  static constexpr std::int64_t diagonal_group = 16;
  /// taps per partial sum of the direct path
  static constexpr std::int64_t direct_chunk = 256;
  /// problems with fewer multiply-adds than this run on one thread
  static constexpr std::int64_t parallel_min_work = std::int64_t{1} << 20;
};

/// One contiguous correlation problem.
template <class T>
struct correlation {
  const T* a;
  std::int64_t la;
  const T* x;
  std::int64_t lx;
  std::int64_t lead;
  T* out;  ///< contiguous, lout elements, overwritten
  std::int64_t lout;
};

/// Direct loop: la axpys over the output.
template <class T>
void correlate_direct(const correlation<T>& c);

/// Block-Toeplitz product: one GEMM per block diagonal, triangular edge blocks,
/// output block columns split over `threads` host threads.
template <class T>
void correlate_blocked(const correlation<T>& c, std::int64_t block, int threads);

/// Picks the direct or the blocked path by size.
template <class T>
void correlate(const correlation<T>& c, int threads);

}  // namespace marg::detail::cpu
