// Fork-join over host threads for the CPU backend. Not installed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace marg::detail::cpu {

/// Runs call(context, c) for every c in [0, chunks) on the calling thread and
/// the persistent worker threads, and returns when all have finished.
/// @return false, doing nothing, when another caller is using the workers
///         (or this is a worker itself): the caller then forks its own threads
bool run_on_workers(int chunks, void (*call)(void*, int), void* context);

/// Splits [0, count) into at most `threads` contiguous chunks and runs
/// fn(begin, end) for each, the first on the calling thread. The first
/// exception thrown by any chunk is rethrown after all chunks finish.
template <class F>
void parallel_for(std::int64_t count, int threads, F&& fn) {
  const int chunks = static_cast<int>(std::min<std::int64_t>(std::max(threads, 1), count));
  if (chunks <= 1) {
    if (count > 0) fn(std::int64_t{0}, count);
    return;
  }
  std::vector<std::exception_ptr> errors(chunks);
  auto body = [&](int c) {
    try {
      fn(count * c / chunks, count * (c + 1) / chunks);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  };
  using body_t = decltype(body);
  const auto call = [](void* b, int c) { (*static_cast<body_t*>(b))(c); };
  if (!run_on_workers(chunks, call, &body)) {
    // the workers are busy with another caller: threads of our own
    std::vector<std::thread> pool;
    pool.reserve(chunks - 1);
    for (int c = 1; c < chunks; ++c) pool.emplace_back(body, c);
    body(0);
    for (auto& t : pool) t.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace marg::detail::cpu
