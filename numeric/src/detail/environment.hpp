// The MARG_* environment variables, each parsed once; a bad value is kept as
// an error message that check_environment() throws until the API overrides it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace marg::detail {

/// The environment variables libmarg reads.
enum class env_var { num_threads, pool_limit, backend, planner, count };

/// One variable: unset, a parsed value, or an error.
struct env_setting {
  bool present = false;  ///< set and not empty
  std::string error;     ///< non-empty: the value is bad (the message to throw)
  std::int64_t value = 0;
};

/// @return the parsed variable (parsed on the first call)
const env_setting& environment(env_var v);

/// Marks `v` as set through the API: its environment value no longer counts.
void env_override(env_var v) noexcept;

/// @return true once the API has set what `v` sets
bool env_overridden(env_var v) noexcept;

/// Throws marg::invalid_argument when `v` is bad and not overridden.
void env_check(env_var v);

/// The message for a MARG_POOL_LIMIT below the pool's minimum.
std::string pool_limit_below_minimum(std::size_t limit, std::size_t minimum);

/// Parses a byte count with an optional K, M, G or T suffix (powers of 1024,
/// optionally followed by "iB" or "B").
/// @return false when `text` is not such a count or is 0 or overflows
bool parse_bytes(const std::string& text, std::size_t& bytes);

}  // namespace marg::detail
