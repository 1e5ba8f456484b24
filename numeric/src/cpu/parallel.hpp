// Fork-join over host threads for the CPU backend. Not installed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace marg::detail::cpu {

/// Splits [0, count) into at most `threads` contiguous chunks and runs
/// fn(begin, end) for each, the first chunk on the calling thread. The first
/// exception thrown by any chunk is rethrown after all chunks finish.
template <class F>
void parallel_for(std::int64_t count, int threads, F&& fn) {
  const std::int64_t chunks = std::min<std::int64_t>(std::max(threads, 1), count);
  if (chunks <= 1) {
    if (count > 0) fn(std::int64_t{0}, count);
    return;
  }
  std::vector<std::exception_ptr> errors(chunks);
  auto body = [&](std::int64_t c) {
    try {
      fn(count * c / chunks, count * (c + 1) / chunks);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(chunks - 1);
  for (std::int64_t c = 1; c < chunks; ++c) pool.emplace_back(body, c);
  body(0);
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace marg::detail::cpu
