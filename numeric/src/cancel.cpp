#include <marg/numeric/cancel.hpp>
#include <marg/numeric/error.hpp>

#include <cmath>
#include <string>

namespace marg {
namespace {

thread_local const cancel_scope* tl_scope = nullptr;

}  // namespace

cancel_scope::cancel_scope(std::stop_token token, work_budget budget)
    : token_(std::move(token)), budget_(budget), outer_(tl_scope) {
  const double seconds = budget.max_time.count();
  MARG_EXPECTS(budget.max_work >= 0, std::string("marg::cancel_scope: budget.max_work = ") +
                                         std::to_string(budget.max_work) +
                                         " (must be >= 0; 0: no limit)");
  MARG_EXPECTS(std::isfinite(seconds) && seconds >= 0,
               std::string("marg::cancel_scope: budget.max_time = ") + std::to_string(seconds) +
                   " s (must be finite and >= 0; 0: no limit)");
  deadline_ =
      seconds > 0
          ? std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(budget.max_time)
          : std::chrono::steady_clock::time_point::max();
  tl_scope = this;
}

cancel_scope::~cancel_scope() {
  tl_scope = outer_;
}

bool cancel_scope::stop_requested() const noexcept {
  for (const cancel_scope* s = this; s != nullptr; s = s->outer_) {
    if (s->token_.stop_requested()) return true;
    if (s->deadline_ != std::chrono::steady_clock::time_point::max() &&
        std::chrono::steady_clock::now() >= s->deadline_)
      return true;
  }
  return false;
}

void cancel_scope::throw_if_stopped() const {
  for (const cancel_scope* s = this; s != nullptr; s = s->outer_) {
    if (s->token_.stop_requested()) throw cancelled("marg: work cancelled (stop requested)");
    if (s->deadline_ != std::chrono::steady_clock::time_point::max() &&
        std::chrono::steady_clock::now() >= s->deadline_)
      throw cancelled("marg: work cancelled: the time budget of " +
                      std::to_string(s->budget_.max_time.count()) + " s ran out");
  }
}

void cancel_scope::check_work(std::int64_t work, const char* what) const {
  for (const cancel_scope* s = this; s != nullptr; s = s->outer_)
    if (s->budget_.max_work > 0 && work > s->budget_.max_work)
      throw cancelled(std::string(what) + ": needs " + std::to_string(work) +
                      " multiply-adds, above the work budget of " +
                      std::to_string(s->budget_.max_work));
  throw_if_stopped();
}

const cancel_scope* cancel_scope::current() noexcept {
  return tl_scope;
}

void throw_if_cancelled() {
  if (const cancel_scope* s = tl_scope) s->throw_if_stopped();
}

}  // namespace marg
