/// @file parallel.hpp
/// @brief Fork-join over libmarg's persistent host worker threads: what the
/// CPU backend and the batched distributions run on, open to programs that
/// want their own per-row loops on the same threads (examples/sir does).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace marg {

namespace detail {
/// Runs call(context, t) for every t in [0, tasks) on the calling thread and
/// libmarg's persistent worker threads, and returns when all have finished.
/// @param tasks number of tasks (>= 1)
/// @param call what to run; must not throw
/// @param context passed to call
/// @return false, doing nothing, when another caller is using the workers or
///         the caller is a worker itself: the caller then forks its own threads
bool run_on_workers(int tasks, void (*call)(void*, int), void* context);
}  // namespace detail

/// Runs fn(c) for every chunk c in [0, chunks) on up to `threads` host
/// threads (libmarg's persistent workers and the calling thread); chunks are
/// taken in order as threads become free, so what a chunk computes never
/// depends on the thread count: cut work into chunks by its size, not by the
/// number of threads, and results are the same on any machine. When chunks
/// throw, the exception of the lowest-numbered one is rethrown after all
/// chunks finish. Safe to call from several host threads and from inside a
/// chunk (such calls run on threads of their own).
/// @param chunks number of chunks
/// @param threads most threads to use (the caller included)
/// @param fn callable taking the chunk index (std::int64_t)
template <class F>
void parallel_chunks(std::int64_t chunks, int threads, F&& fn) {
  if (chunks <= 0) return;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(chunks));
  auto one = [&](std::int64_t c) {
    try {
      fn(c);
    } catch (...) {
      errors[static_cast<std::size_t>(c)] = std::current_exception();
    }
  };
  const int workers = static_cast<int>(std::min<std::int64_t>(std::max(threads, 1), chunks));
  if (workers <= 1) {
    for (std::int64_t c = 0; c < chunks; ++c) one(c);
  } else {
    std::atomic<std::int64_t> next{0};
    auto task = [&](int) {
      for (std::int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) one(c);
    };
    using task_t = decltype(task);
    const auto call = [](void* t, int i) { (*static_cast<task_t*>(t))(i); };
    if (!detail::run_on_workers(workers, call, &task)) {
      // the workers are busy with another caller: threads of our own
      std::vector<std::thread> own;
      own.reserve(static_cast<std::size_t>(workers - 1));
      for (int t = 1; t < workers; ++t) own.emplace_back(task, t);
      task(0);
      for (auto& t : own) t.join();
    }
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace marg
