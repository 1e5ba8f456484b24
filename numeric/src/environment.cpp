#include <marg/numeric/environment.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/pool.hpp>

#include <array>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <string>

#include "detail/environment.hpp"

namespace marg::detail {
namespace {

constexpr std::int64_t max_threads = 4096;

const char* name_of(env_var v) {
  switch (v) {
    case env_var::num_threads:
      return "MARG_NUM_THREADS";
    case env_var::pool_limit:
      return "MARG_POOL_LIMIT";
    case env_var::backend:
      return "MARG_BACKEND";
    case env_var::planner:
      return "MARG_PLAN";
    case env_var::count:
      break;
  }
  return "?";
}

env_setting parse(env_var v) {
  env_setting s;
  const char* raw = std::getenv(name_of(v));
  if (raw == nullptr || *raw == '\0') return s;
  s.present = true;
  const std::string text(raw);
  const auto bad = [&](const std::string& accepted) {
    s.error = std::string("environment variable ") + name_of(v) + " = '" + text + "' (must be " +
              accepted + "; unset it for the default)";
  };
  switch (v) {
    case env_var::num_threads: {
      const bool digits =
          text.size() <= 6 && text.find_first_not_of("0123456789") == std::string::npos;
      const std::int64_t t = digits ? std::stoll(text) : 0;
      if (!digits || t < 1 || t > max_threads)
        bad("an integer in 1.." + std::to_string(max_threads));
      else
        s.value = t;
      break;
    }
    case env_var::pool_limit: {
      std::size_t bytes = 0;
      if (!parse_bytes(text, bytes))
        bad("a positive number of bytes with an optional K, M, G or T suffix, e.g. 512M");
      else
        s.value = static_cast<std::int64_t>(bytes > INT64_MAX ? INT64_MAX : bytes);
      break;
    }
    case env_var::backend:
      if (text == "automatic" || text == "auto")
        s.value = 0;
      else if (text == "cpu")
        s.value = 1;
      else if (text == "cuda")
        s.value = 2;
      else
        bad("automatic, cpu or cuda");
      break;
    case env_var::planner:
      if (text == "estimate")
        s.value = 0;
      else if (text == "measure")
        s.value = 1;
      else
        bad("estimate or measure");
      break;
    case env_var::count:
      break;
  }
  return s;
}

std::array<std::atomic<bool>, static_cast<std::size_t>(env_var::count)> overridden{};

}  // namespace

const env_setting& environment(env_var v) {
  static const std::array<env_setting, static_cast<std::size_t>(env_var::count)> all = {
      parse(env_var::num_threads), parse(env_var::pool_limit), parse(env_var::backend),
      parse(env_var::planner)};
  return all[static_cast<std::size_t>(v)];
}

void env_override(env_var v) noexcept {
  overridden[static_cast<std::size_t>(v)].store(true);
}

bool env_overridden(env_var v) noexcept {
  return overridden[static_cast<std::size_t>(v)].load();
}

std::string pool_limit_below_minimum(std::size_t limit, std::size_t minimum) {
  return "environment variable MARG_POOL_LIMIT = " + std::to_string(limit) +
         " bytes is below the pool's minimum of " + std::to_string(minimum) +
         " bytes (the arena's own metadata); set at least that, or unset it";
}

void env_check(env_var v) {
  const env_setting& s = environment(v);
  if (!s.error.empty() && !overridden[static_cast<std::size_t>(v)].load())
    throw marg::invalid_argument(s.error);
}

bool parse_bytes(const std::string& t, std::size_t& bytes) {
  std::size_t i = 0;
  unsigned long long v = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
    const auto d = static_cast<unsigned long long>(t[i] - '0');
    if (v > (~0ull - d) / 10) return false;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0) return false;
  int shift = 0;
  if (i < t.size()) {
    switch (std::toupper(static_cast<unsigned char>(t[i]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        return false;
    }
    ++i;
    if (i < t.size() && (t[i] == 'i' || t[i] == 'I')) ++i;
    if (i < t.size() && (t[i] == 'B' || t[i] == 'b')) ++i;
  }
  if (i != t.size() || v == 0 || v > (~0ull >> shift)) return false;
  bytes = static_cast<std::size_t>(v << shift);
  return true;
}

}  // namespace marg::detail

namespace marg {

void check_environment() {
  using detail::env_var;
  detail::env_check(env_var::num_threads);
  detail::env_check(env_var::pool_limit);
  detail::env_check(env_var::backend);
  detail::env_check(env_var::planner);
  const detail::env_setting& limit = detail::environment(env_var::pool_limit);
  if (limit.present && !detail::env_overridden(env_var::pool_limit)) {
    const auto bytes = static_cast<std::size_t>(limit.value);
    if (const std::size_t minimum = pool_minimum_limit(); bytes < minimum)
      throw marg::invalid_argument(detail::pool_limit_below_minimum(bytes, minimum));
  }
}

}  // namespace marg
