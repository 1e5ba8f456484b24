/// @file error.hpp
/// @brief Exception types of libmarg and the MARG_EXPECTS precondition macro.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace marg {

/// Bad input to a public entry point. The message names the function, the
/// argument and its value.
class invalid_argument : public std::invalid_argument {
 public:
  /// @param what the message
  explicit invalid_argument(const std::string& what) : std::invalid_argument(what) {}
};

/// A failure reported by the CUDA runtime; the message reads
/// `file:line: cudaErrorName: message`.
class cuda_error : public std::runtime_error {
 public:
  /// @param what the message
  explicit cuda_error(const std::string& what) : std::runtime_error(what) {}
};

/// The memory pool cannot satisfy a request within its cap. The message gives
/// the requested and the available sizes. The pool stays usable.
class out_of_memory : public std::bad_alloc {
 public:
  /// @param what the message
  explicit out_of_memory(std::string what)
      : what_(std::make_shared<const std::string>(std::move(what))) {}
  /// @return the message
  const char* what() const noexcept override { return what_->c_str(); }

 private:
  std::shared_ptr<const std::string> what_;  // shared: copying must not throw
};

namespace detail {
/// Throws marg::invalid_argument with `file:line: message (condition failed)`.
[[noreturn]] void throw_invalid_argument(const char* file, int line, const char* condition,
                                         const std::string& message);
/// Formats "function: name = value (must be requirement)".
std::string bad_argument(const char* function, const char* name, std::int64_t value,
                         const char* requirement);
/// Formats "function: name = value (must be requirement)" for a real value.
std::string bad_real_argument(const char* function, const char* name, double value,
                              const char* requirement);
/// Formats "function: name = value (must be requirement)" for an int.
inline std::string bad_argument(const char* function, const char* name, int value,
                                const char* requirement) {
  return bad_argument(function, name, static_cast<std::int64_t>(value), requirement);
}
}  // namespace detail

}  // namespace marg

/// Throws marg::invalid_argument carrying `message` when `condition` is false.
/// `message` is evaluated only on failure.
#define MARG_EXPECTS(condition, message)                                                 \
  do {                                                                                   \
    if (!(condition)) [[unlikely]]                                                       \
      ::marg::detail::throw_invalid_argument(__FILE__, __LINE__, #condition, (message)); \
  } while (0)
