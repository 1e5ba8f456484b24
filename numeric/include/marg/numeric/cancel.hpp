/// @file cancel.hpp
/// @brief Bounding and stopping long work: a stop token (std::stop_token), a
/// work budget and a time budget for the libmarg calls a thread makes.
///
/// A cancel_scope is set on the calling thread for its lifetime; every
/// convolution (convolve, the batched forms, the gradients, log_convolve)
/// and every pmf operation built on them (operator+, sum, condition_on_sum,
/// ...) that the thread starts while it lives obeys it:
///
/// - a call whose product needs more multiply-adds than `max_work` throws
///   marg::cancelled before it starts;
/// - on the CPU backend a running product checks the token and the deadline
///   between blocks of its work (every few milliseconds) and throws
///   marg::cancelled once stop is requested or the deadline has passed;
///   sum() also checks between levels of its tree;
/// - on the CUDA backend the checks run before and after each call (a launched
///   kernel runs to its end).
///
/// Another thread stops the work with the std::stop_source the token came
/// from. Results of a cancelled call are unspecified; nothing leaks and the
/// library stays usable.
///
///     std::stop_source stop;
///     std::thread worker([&] {
///       marg::cancel_scope scope(stop.get_token(), {.max_time = std::chrono::seconds(10)});
///       try { auto z = x + y; } catch (const marg::cancelled& e) { ... }
///     });
///     stop.request_stop();  // from any thread
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <stop_token>
#include <string>

namespace marg {

/// Thrown when work stops: its scope's token asked for a stop, its deadline
/// passed, or a call needs more work than its budget allows. The message says
/// which.
class cancelled : public std::runtime_error {
 public:
  /// @param what the reason, for what()
  explicit cancelled(const std::string& what) : std::runtime_error(what) {}
};

/// Limits on the work of one cancel_scope; zero means no limit.
struct work_budget {
  /// the most multiply-adds one product may need (m * n per problem, times the
  /// batch count), checked before it starts
  std::int64_t max_work = 0;
  /// the wall time allowed from the scope's construction
  std::chrono::duration<double> max_time{0};
};

/// Sets a stop token and a budget for the libmarg calls of the calling thread
/// while it lives. Scopes nest: an inner scope obeys its outer scopes too.
/// Not copyable or movable; destroy scopes in reverse order of construction,
/// on the thread that made them.
class cancel_scope {
 public:
  /// @param token stops the work once its source requests a stop (a default
  ///        token never does)
  /// @param budget the work and time limits (zero: none)
  /// @throws std::invalid_argument when a limit is negative or not a number
  explicit cancel_scope(std::stop_token token, work_budget budget = {});
  /// Restores the thread's enclosing scope (or none).
  ~cancel_scope();
  /// Not copyable: a scope belongs to one thread and one lifetime.
  cancel_scope(const cancel_scope&) = delete;
  /// Not assignable.
  cancel_scope& operator=(const cancel_scope&) = delete;

  /// @return true once this scope or an outer one has a stop requested or a
  ///         passed deadline; callable from any thread
  bool stop_requested() const noexcept;

  /// Throws marg::cancelled when stop_requested(), naming the reason.
  void throw_if_stopped() const;

  /// Throws marg::cancelled when a call of `work` multiply-adds exceeds the
  /// budget of this scope or an outer one.
  /// @param work multiply-adds the call needs
  /// @param what the call, for the message
  void check_work(std::int64_t work, const char* what) const;

  /// @return the innermost scope of the calling thread, or nullptr
  static const cancel_scope* current() noexcept;

 private:
  std::stop_token token_;
  work_budget budget_;
  std::chrono::steady_clock::time_point deadline_;
  const cancel_scope* outer_;
};

/// Throws marg::cancelled when the calling thread's cancel_scope (if any) has
/// a stop requested or a passed deadline: what a caller's own long loop calls
/// between steps.
void throw_if_cancelled();

}  // namespace marg
