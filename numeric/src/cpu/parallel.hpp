// Fork-join for the CPU backend: contiguous ranges over host threads. Not installed.
#pragma once

#include <marg/numeric/parallel.hpp>

#include <algorithm>
#include <cstdint>

namespace marg::detail::cpu {

/// Splits [0, count) into at most `threads` contiguous chunks and runs
/// fn(begin, end) for each (see marg::parallel_chunks).
template <class F>
void parallel_for(std::int64_t count, int threads, F&& fn) {
  const std::int64_t chunks = std::min<std::int64_t>(std::max(threads, 1), count);
  parallel_chunks(chunks, threads,
                  [&](std::int64_t c) { fn(count * c / chunks, count * (c + 1) / chunks); });
}

}  // namespace marg::detail::cpu
