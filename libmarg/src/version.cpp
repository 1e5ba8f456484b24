#include <marg/version.hpp>

namespace marg {

const char* version() noexcept {
  return MARG_VERSION_STRING;
}

}  // namespace marg
