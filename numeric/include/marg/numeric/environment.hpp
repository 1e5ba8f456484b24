/// @file environment.hpp
/// @brief The environment variables libmarg reads, and their check.
///
/// | variable | accepted values | sets |
/// |---|---|---|
/// | `MARG_NUM_THREADS` | an integer in 1..4096 | the initial cpu_threads() |
/// | `MARG_POOL_LIMIT` | bytes, optional K, M, G or T suffix (powers of 1024), at least
/// pool_minimum_limit() | the initial pool_limit() | | `MARG_BACKEND` | `automatic`, `cpu` or
/// `cuda` | the initial requested_backend() | | `MARG_PLAN` | `estimate` (default) or `measure` |
/// the initial current_planner_mode() (planner.hpp) | | `MARG_WISDOM` | a file path | wisdom
/// imported before the first CUDA product, written back at exit in measure mode (planner.hpp) |
///
/// Unset or empty variables give the defaults. A bad value is never ignored:
/// every computing call (the convolutions and everything built on them, pool
/// allocations for MARG_POOL_LIMIT, current_backend() for MARG_BACKEND)
/// throws marg::invalid_argument naming the variable, its value and what it
/// accepts, until the program sets that value through the API
/// (set_cpu_threads, set_pool_limit, set_backend), which overrides the
/// variable.
#pragma once

namespace marg {

/// Checks the environment variables libmarg reads (each parsed once per
/// process) that the program has not overridden through the API.
/// @throws marg::invalid_argument naming the first bad variable, its value
///         and the accepted values
void check_environment();

}  // namespace marg
