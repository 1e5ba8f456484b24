// Wisdom: the fastest kernel variant measured per shape class and device
// class (numeric/planner.hpp), held process-wide behind a mutex; an atomic
// flag keeps the dispatch's check lock-free while there is none and nothing
// measures. Not installed.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>

namespace marg::detail {

/// A shape class on a device class.
struct wisdom_key {
  /// compute capability x 10
  int capability = 0;
  /// streaming multiprocessors
  int multiprocessors = 0;
  /// the Hopper features are used (not MARG_CUDA_GENERIC)
  bool hopper = false;
  /// bytes per value: 4 or 8
  int value_bytes = 0;
  /// a full convolution (else a gradient)
  bool convolution = false;
  /// bit widths of taps, outputs and problems
  int taps = 0, outputs = 0, batch = 0;
  /// every operand has unit stride and 16-byte alignment
  bool unit_aligned = false;
  /// the order of std::map
  auto operator<=>(const wisdom_key&) const = default;
};

/// What is known of a class: its fastest variant (kernel_variant's value)
/// and that variant's time.
struct wisdom_entry {
  /// the variant, as an int of marg::detail::cuda::kernel_variant
  int variant = 0;
  /// its time per call, microseconds
  double microseconds = 0;
};

/// @param x a length or count (>= 0)
/// @return its bit width: the class of a length in a wisdom_key
int size_class(std::int64_t x) noexcept;

/// @return true when the dispatch must consult the wisdom: some is held, or
///         the planner measures (imports MARG_WISDOM on the first call)
bool wisdom_active();

/// @return true in planner_mode::measure
bool planner_measures();

/// @param k a class
/// @return its entry, if any
std::optional<wisdom_entry> wisdom_find(const wisdom_key& k);

/// Keeps `e` for `k` (replacing an entry held).
void wisdom_store(const wisdom_key& k, const wisdom_entry& e);

}  // namespace marg::detail
