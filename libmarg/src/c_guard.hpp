// The guard every C entry point runs its body in: exceptions become status
// codes and a thread-local message. Not installed.
#pragma once

#include <marg/marg.h>

#include <marg/marg.hpp>

#include <exception>
#include <new>
#include <string>

namespace marg::detail::c_api {

/// The message of the last failing C call on this thread.
inline thread_local std::string last_error;

/// Stores `what` as the thread's last error.
/// @param status the status to return
/// @param what the message
/// @return status
inline marg_status fail(marg_status status, const char* what) noexcept {
  try {
    last_error = what;
  } catch (...) {
    // keep the status even when the message cannot be stored
  }
  return status;
}

/// Runs fn; maps each libmarg exception to its status code.
/// @param fn the body of a C entry point
/// @return MARG_SUCCESS or the status of the exception fn threw
template <class F>
marg_status guarded(F&& fn) noexcept {
  try {
    fn();
    return MARG_SUCCESS;
  } catch (const std::invalid_argument& e) {
    return fail(MARG_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const marg::out_of_memory& e) {
    return fail(MARG_ERROR_OUT_OF_MEMORY, e.what());
  } catch (const std::bad_alloc& e) {
    return fail(MARG_ERROR_OUT_OF_MEMORY, e.what());
  } catch (const marg::cuda_error& e) {
    return fail(MARG_ERROR_CUDA, e.what());
  } catch (const std::exception& e) {
    return fail(MARG_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(MARG_ERROR_INTERNAL, "unknown exception");
  }
}

}  // namespace marg::detail::c_api
