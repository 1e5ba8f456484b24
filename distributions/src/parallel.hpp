// Fork-join over rows for the distributions layer's host loops (the idea of
// numeric/src/cpu/parallel.hpp, which is internal to the numeric layer). Not
// installed.
#pragma once

#include <marg/numeric/backend.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

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
  const std::int64_t chunks = (count + grain - 1) / grain;
  const int threads = static_cast<int>(std::min<std::int64_t>(std::max(cpu_threads(), 1), chunks));
  if (threads <= 1) {
    for (std::int64_t c = 0; c < chunks; ++c) fn(c, c * grain, std::min(count, (c + 1) * grain));
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(chunks));
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    for (std::int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      try {
        fn(c, c * grain, std::min(count, (c + 1) * grain));
      } catch (...) {
        errors[static_cast<std::size_t>(c)] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace marg::detail
