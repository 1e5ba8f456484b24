/// @file version.hpp
/// @brief The libmarg version.
#pragma once

namespace marg {

/// @return the version of the libmarg that the program runs with, "major.minor.patch"
///         (the same string as the C API's marg_version())
const char* version() noexcept;

}  // namespace marg
