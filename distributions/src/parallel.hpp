// Fork-join over rows for the distributions layer's host loops, on the
// numeric layer's worker threads (marg/numeric/parallel.hpp). Not installed.
#pragma once

#include <marg/numeric/backend.hpp>
#include <marg/numeric/parallel.hpp>

#include <algorithm>
#include <cstdint>

namespace marg::detail {

/// Rows per chunk so that a chunk holds about 64k elements of `row_length`
/// (and at least 8 rows): enough work to amortize a thread, small enough to
/// balance.
inline std::int64_t rows_per_chunk(std::int64_t row_length) {
  return std::max<std::int64_t>(8, 65536 / std::max<std::int64_t>(row_length, 1));
}

/// Runs fn(chunk, begin, end) over [0, count) cut into chunks of `grain` rows
/// (the last one shorter): the chunks depend on count and grain only, never on
/// the thread count. Chunks go to up to marg::cpu_threads() threads, the
/// calling thread included, as they become free. When chunks throw, the
/// exception of the lowest-numbered one is rethrown after all finish, so the
/// error reported does not depend on the thread count either.
/// @param count number of rows
/// @param grain rows per chunk, >= 1
/// @param fn callable (std::int64_t chunk, std::int64_t begin, std::int64_t end)
template <class F>
void parallel_rows(std::int64_t count, std::int64_t grain, F&& fn) {
  if (count <= 0) return;
  parallel_chunks((count + grain - 1) / grain, cpu_threads(),
                  [&](std::int64_t c) { fn(c, c * grain, std::min(count, (c + 1) * grain)); });
}

}  // namespace marg::detail
