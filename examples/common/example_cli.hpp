// Shared by the example programs: the command line (CLI11, with --help and
// --version), the exit statuses, and output that is checked at every step.
#pragma once

#include <marg/marg.hpp>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace marg_example {

/// Exit statuses of every example program.
enum exit_status : int {
  exit_ok = 0,
  exit_check_failed = 1,   ///< --check found a wrong result
  exit_bad_input = 2,      ///< bad arguments, environment or input data
  exit_output_failed = 3,  ///< a result could not be written
  exit_filter_failed = 4,  ///< the computation broke down (e.g. a collapsed filter)
  exit_too_large = 5       ///< the problem is above the program's size cap
};

/// An output that could not be written (its message names the path and the reason).
struct output_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Adds --version to a command line and shows every option's default in --help.
inline void standard_options(CLI::App& app) {
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", app.get_name() + " (libmarg " + marg::version() + ")");
}

/// Parses the command line; --help and --version exit 0, errors exit 2
/// (CLI11 prints the message and the usage). Then checks libmarg's MARG_*
/// environment variables: a bad value exits 2 before any work.
inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    std::fflush(stdout);
    std::exit(rc == 0 ? exit_ok : exit_bad_input);
  }
  try {
    marg::check_environment();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    std::exit(exit_bad_input);
  }
}

/// The status to exit with once everything is printed: `status`, or
/// exit_output_failed when standard output could not be written (a full disk,
/// a closed pipe), with a message on stderr.
inline int finish(const char* program, int status) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "%s: cannot write standard output: %s\n", program,
                 std::strerror(errno ? errno : EIO));
    return exit_output_failed;
  }
  return status;
}

/// A file written with every call checked: open, each write, flush and close
/// throw output_error naming the path and the system's reason.
class output_file {
 public:
  explicit output_file(std::string path) : path_(std::move(path)) {
    f_ = std::fopen(path_.c_str(), "w");
    if (f_ == nullptr) fail("cannot open for writing");
  }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file() {
    if (f_ != nullptr) std::fclose(f_);
  }

  /// fprintf to the file, checked.
  template <class... A>
  void print(const char* format, A... args) {
    if (std::fprintf(f_, format, args...) < 0) fail("cannot write");
  }

  /// Flushes and closes, checked (a full disk shows here at the latest).
  void close() {
    std::FILE* f = std::exchange(f_, nullptr);
    const bool bad = std::fflush(f) != 0 || std::ferror(f);
    const int saved = errno;
    if (std::fclose(f) != 0 || bad) {
      errno = bad ? saved : errno;
      fail("cannot write");
    }
  }

  /// @return the path
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw output_error(path_ + ": " + what + ": " + std::strerror(errno ? errno : EIO));
  }
  std::string path_;
  std::FILE* f_ = nullptr;
};

}  // namespace marg_example
