// The CPU kernel of all three banded products: a valid-mode correlation
//   out_j = sum_{k < la} a_k X_{j+k},  j < lout,
// where X is x placed at offset `lead` in an infinite run of zeros.
//   convolve: a = reversed shorter operand, x = the other, lead = la - 1
//   grad_p:   a = q, x = g, lead = 0;   grad_q: a = p, x = g, lead = 0
// Compiled once per instruction set, in namespace marg::detail::cpu::<isa>
// (MARG_CPU_ISA_NS, cmake/marg_cpu_variants.cmake). Not installed.
#pragma once

#include <cmath>
#include <cstdint>

#ifndef MARG_CPU_ISA_NS
#error "the CPU kernels are compiled per ISA variant (cmake/marg_cpu_variants.cmake)"
#endif

namespace marg::detail::cpu::MARG_CPU_ISA_NS {

/// a * b + c, rounded once where the target has a fused multiply-add
/// instruction (x86-64-v3, aarch64); elsewhere rounded twice, as std::fma
/// there is libm's software emulation, many times slower than the kernel
template <class T>
inline T mul_add(T a, T b, T c) {
#if defined(__FP_FAST_FMA) || defined(__aarch64__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

/// Tile sizes and thresholds of the CPU backend, in one place, each the
/// faster path on one thread of an AVX2 x86-64 core: fewer
/// taps than simd_min_taps the direct loop; else the register tiles up to
/// simd_max_conv_work / simd_max_grad_work multiply-adds or where the shorter side is below
/// blocked_min; else the block-Toeplitz product.
struct tuning {
  /// taps below which the direct (axpy) loop beats the register tiles or
  /// ties: a tile's set-up is not repaid by so few taps (docs/kernel-notes.md,
  /// CPU backend)
  template <class T>
  static constexpr std::int64_t simd_min_taps = sizeof(T) == 4 ? 16 : 48;
  /// multiply-adds (la x lout) up to which the register tiles beat the
  /// block-Toeplitz product; gradients cross over at less work than
  /// convolutions (docs/kernel-notes.md, CPU backend)
  static constexpr std::int64_t simd_max_conv_work = std::int64_t{1} << 23;
  static constexpr std::int64_t simd_max_grad_work = std::int64_t{1} << 19;
  /// min(la, lout) below which the block-Toeplitz product is not used
  static constexpr std::int64_t blocked_min = 64;
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
  /// outputs per register tile of correlate_simd: four 32-byte vectors
  template <class T>
  static constexpr int simd_tile = 4 * 32 / static_cast<int>(sizeof(T));
  /// taps summed in T before they join the double accumulator (correlate_simd)
  static constexpr std::int64_t simd_chunk = 64;
  /// outputs up to which problems of fewer than simd_min_taps taps sum on the
  /// stack straight from their operands (banded_cpu.cpp, run_tiny): there a
  /// problem's fixed costs (scratch vectors, zeroing, copies) outweigh its
  /// multiply-adds; at around a thousand outputs run_tiny is no longer
  /// faster, so longer outputs keep correlate_direct
  static constexpr std::int64_t tiny_max_out = 128;
  /// outputs per block of run_tiny: two 32-byte vectors of double sums
  static constexpr int tiny_block = 8;
  /// outputs up to which run_tiny sums blocks in registers (faster than a
  /// dot product per output); beyond, one axpy per tap over all outputs,
  /// which is faster there
  static constexpr std::int64_t tiny_blocks_up_to = 32;
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

/// Direct loop over register tiles of outputs (tuning::simd_tile<T>): per tap
/// one broadcast and a fused multiply-add per output of the tile, the tile's
/// sums in `T` over tuning::simd_chunk taps, then in a `double` accumulator.
/// Tiles split over `threads` host threads (a tile's sums do not depend on
/// it). No heap allocation after a thread's first call of the size.
template <class T>
void correlate_simd(const correlation<T>& c, int threads);

/// Block-Toeplitz product: one GEMM per block diagonal, triangular edge blocks,
/// output block columns split over `threads` host threads.
template <class T>
void correlate_blocked(const correlation<T>& c, std::int64_t block, int threads);

/// Picks the direct or the blocked path by size.
template <class T>
void correlate(const correlation<T>& c, int threads);

}  // namespace marg::detail::cpu::MARG_CPU_ISA_NS
