#include <marg/numeric/error.hpp>

#include <cstring>
#include <sstream>

namespace marg::detail {

void throw_invalid_argument(const char* file, int line, const char* condition,
                            const std::string& message) {
  // the file name only: a build's absolute paths mean nothing to a user
  const char* slash = std::strrchr(file, '/');
  std::ostringstream s;
  s << message << " [" << (slash != nullptr ? slash + 1 : file) << ':' << line << ": " << condition
    << ']';
  throw marg::invalid_argument(s.str());
}

std::string bad_argument(const char* function, const char* name, std::int64_t value,
                         const char* requirement) {
  std::ostringstream s;
  s << function << ": " << name << " = " << value << " (must be " << requirement << ')';
  return s.str();
}

std::string bad_real_argument(const char* function, const char* name, double value,
                              const char* requirement) {
  std::ostringstream s;
  s.precision(17);
  s << function << ": " << name << " = " << value << " (must be " << requirement << ')';
  return s.str();
}

}  // namespace marg::detail
