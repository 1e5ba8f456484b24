/// @file planner.hpp
/// @brief How the CUDA backend picks a kernel variant for a product: its
/// planner's rules (the default, estimate: deterministic), or wisdom: the fastest
/// variant measured per shape class on this device class, kept, exported and
/// imported as a file or text (like FFTW's wisdom).
///
/// A shape class is the value type, convolution or gradient, the taps,
/// outputs and problems of the product each rounded to its power of two
/// (the bit width), and whether every operand has unit stride and 16-byte
/// alignment; a device class is the compute capability, the number of
/// multiprocessors and whether the Hopper features are used
/// (MARG_CUDA_GENERIC). Every variant computes the same product to the
/// type's accuracy, so wisdom changes speed and the last bits of rounding,
/// never correctness; with the same wisdom the same variant runs, so
/// results repeat.
#pragma once

#include <string>

namespace marg {

/// Whether the CUDA backend measures (FFTW's words).
enum class planner_mode {
  estimate,  ///< the planner's rules, and wisdom where imported or measured before (default;
             ///< the same inputs and wisdom run the same variant)
  measure    ///< additionally, the first product of a shape class that has no wisdom times
             ///< every variant that can run it (a few launches each, into a scratch output,
             ///< waiting for each) and keeps the fastest; not inside a stream capture
};

/// Sets the planner mode for all later calls (process-wide); overrides the
/// environment variable MARG_PLAN.
/// @param mode the mode
void set_planner_mode(planner_mode mode);

/// @return the planner mode (MARG_PLAN=estimate or measure sets the initial
///         one, estimate when unset; marg::invalid_argument for another value)
planner_mode current_planner_mode();

/// The wisdom this process holds, as text: a header line, then one line per
/// shape class and device class with the fastest variant and its time in
/// microseconds. import_wisdom_text reads it back.
/// @return the text (a header alone when there is none)
std::string wisdom_text();

/// Adds wisdom from text that wisdom_text or export_wisdom wrote (here or in
/// another process); an entry for a class already held replaces it.
/// @param text the wisdom
/// @throws marg::invalid_argument naming the first bad line (nothing is
///         imported then)
void import_wisdom_text(const std::string& text);

/// Writes the wisdom this process holds (the text of wisdom_text) to a file,
/// replacing it.
/// @param path the file
/// @throws marg::invalid_argument naming the path when it cannot be written
void export_wisdom(const std::string& path);

/// Adds wisdom from a file that export_wisdom wrote (here or in another
/// process), as import_wisdom_text does with its text. The environment
/// variable MARG_WISDOM names a file imported before the first CUDA
/// product; in measure mode the process writes its wisdom back to that file
/// when it exits.
/// @param path the file
/// @throws marg::invalid_argument naming the path when it cannot be read, or
///         naming the path and its first bad line (nothing is imported then)
void import_wisdom(const std::string& path);

/// Forgets all wisdom: the planner's rules alone decide again.
void forget_wisdom();

}  // namespace marg
