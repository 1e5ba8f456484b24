// Wisdom (numeric/planner.hpp): the table, its text form, the planner mode
// and the environment variables MARG_PLAN and MARG_WISDOM. Plain C++ in
// every build, so that wisdom files can be read and checked without a GPU.
#include <marg/numeric/error.hpp>
#include <marg/numeric/planner.hpp>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cuda/plan.hpp"
#include "detail/environment.hpp"
#include "detail/wisdom.hpp"

namespace marg::detail {
namespace {

constexpr const char* header = "# libmarg wisdom 1";
constexpr const char* columns =
    "# capability multiprocessors features type product taps outputs problems operands variant "
    "microseconds";

struct table {
  std::mutex mutex;
  std::map<wisdom_key, wisdom_entry> entries;
  // entries measured by this process since the last import (MARG_WISDOM is
  // written back at exit only then)
  bool measured = false;
};

table& wisdom() {
  static table* t = new table;  // never destroyed: the exit writer reads it
  return *t;
}

// some wisdom is held (the dispatch's lock-free check)
std::atomic<bool> held{false};
// planner_mode set through the API, -1: the environment's
std::atomic<int> mode_set{-1};

std::string format(const wisdom_key& k, const wisdom_entry& e) {
  char us[32];
  std::snprintf(us, sizeof us, "%.3f", e.microseconds);
  std::ostringstream o;
  o << k.capability << ' ' << k.multiprocessors << ' ' << (k.hopper ? "hopper" : "generic") << ' '
    << (k.value_bytes == 4 ? "float" : "double") << ' '
    << (k.convolution ? "convolution" : "gradient") << ' ' << k.taps << ' ' << k.outputs << ' '
    << k.batch << ' ' << (k.unit_aligned ? "aligned" : "strided") << ' '
    << cuda::variant_name(static_cast<cuda::kernel_variant>(e.variant)) << ' ' << us;
  return o.str();
}

// reads one of two words into `flag`
bool word(std::istream& in, const char* yes, const char* no, bool& flag) {
  std::string w;
  if (!(in >> w) || (w != yes && w != no)) return false;
  flag = w == yes;
  return true;
}

bool integer(std::istream& in, int lo, int hi, int& v) {
  std::string w;
  if (!(in >> w) || w.empty() || w.size() > 9 || w.find_first_not_of("0123456789") != w.npos)
    return false;
  v = std::stoi(w);
  return v >= lo && v <= hi;
}

// parses one entry line; "" or the reason it is bad
std::string parse_line(const std::string& line, wisdom_key& k, wisdom_entry& e) {
  std::istringstream in(line);
  bool is_float = false;
  if (!integer(in, 10, 1000, k.capability)) return "a compute capability x 10 (e.g. 90)";
  if (!integer(in, 1, 1000000, k.multiprocessors)) return "a multiprocessor count";
  if (!word(in, "hopper", "generic", k.hopper)) return "hopper or generic";
  if (!word(in, "float", "double", is_float)) return "float or double";
  k.value_bytes = is_float ? 4 : 8;
  if (!word(in, "convolution", "gradient", k.convolution)) return "convolution or gradient";
  if (!integer(in, 0, 63, k.taps) || !integer(in, 0, 63, k.outputs) || !integer(in, 0, 63, k.batch))
    return "three bit widths (taps, outputs, problems) in 0..63";
  if (!word(in, "aligned", "strided", k.unit_aligned)) return "aligned or strided";
  std::string name;
  in >> name;
  e.variant = -1;
  for (const cuda::kernel_variant v : cuda::all_variants)
    if (name == cuda::variant_name(v)) e.variant = static_cast<int>(v);
  if (e.variant < 0)
    return "a variant name (warp, small, mid, large, mma, lane, pairs, wgmma, wide)";
  std::string t;
  if (!(in >> t)) return "a time in microseconds";
  char* end = nullptr;
  e.microseconds = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(e.microseconds) || e.microseconds < 0)
    return "a time in microseconds";
  if (in >> t) return "nothing after the time";
  return "";
}

std::vector<std::pair<wisdom_key, wisdom_entry>> parse(const std::string& text, const char* f) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::pair<wisdom_key, wisdom_entry>> r;
  int n = 0;
  bool seen_header = false;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!seen_header) {
      MARG_EXPECTS(line == header, std::string(f) + ": line 1 is '" + line + "', not the header '" +
                                       header +
                                       "' (what marg::export_wisdom or marg::wisdom_text wrote)");
      seen_header = true;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    wisdom_key k;
    wisdom_entry e;
    const std::string why = parse_line(line, k, e);
    MARG_EXPECTS(why.empty(), std::string(f) + ": line " + std::to_string(n) + " ('" + line +
                                  "'): expected " + why);
    r.emplace_back(k, e);
  }
  MARG_EXPECTS(seen_header, std::string(f) + ": empty text (no header '" + header + "')");
  return r;
}

void add(const std::vector<std::pair<wisdom_key, wisdom_entry>>& entries) {
  table& t = wisdom();
  const std::lock_guard<std::mutex> lock(t.mutex);
  for (const auto& [k, e] : entries) t.entries[k] = e;
  if (!t.entries.empty()) held.store(true);
}

// writes `text` to the file `path`, replacing it; false when it cannot
bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return !out.fail();
}

// the text of the file `path`; nullopt when it cannot be read (a directory
// opens as a stream on Linux but reads nothing)
std::optional<std::string> read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();  // an empty file sets failbit on text only: still read
  if (in.bad()) return std::nullopt;
  return text.str();
}

std::string wisdom_path() {
  const char* p = std::getenv("MARG_WISDOM");
  return p == nullptr ? std::string() : std::string(p);
}

// at exit, in measure mode: the wisdom back to MARG_WISDOM when this process
// measured something
void write_back() {
  table& t = wisdom();
  {
    const std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.measured) return;
  }
  const std::string path = wisdom_path();
  if (!write_file(path, marg::wisdom_text()))
    std::fprintf(stderr, "libmarg: could not write wisdom to MARG_WISDOM = '%s'\n", path.c_str());
}

// MARG_WISDOM, once: imported when the file exists; the exit writer
// registered either way
void import_environment() {
  const std::string path = wisdom_path();
  if (path.empty()) return;
  std::atexit(write_back);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;  // not written yet: measure mode creates it
  const std::string what = "environment variable MARG_WISDOM = '" + path + "'";
  const std::optional<std::string> text = read_file(path);
  MARG_EXPECTS(text.has_value(), what + ": cannot read the file");
  add(parse(*text, what.c_str()));
}

}  // namespace

int size_class(std::int64_t x) noexcept {
  return x <= 0 ? 0 : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(x)));
}

bool planner_measures() {
  const int m = mode_set.load(std::memory_order_relaxed);
  if (m >= 0) return m == static_cast<int>(planner_mode::measure);
  env_check(env_var::planner);
  const env_setting& e = environment(env_var::planner);
  return e.present && e.value == static_cast<int>(planner_mode::measure);
}

bool wisdom_active() {
  static std::once_flag once;
  std::call_once(once, import_environment);
  return held.load(std::memory_order_relaxed) || planner_measures();
}

std::optional<wisdom_entry> wisdom_find(const wisdom_key& k) {
  table& t = wisdom();
  const std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.entries.find(k);
  if (it == t.entries.end()) return std::nullopt;
  return it->second;
}

void wisdom_store(const wisdom_key& k, const wisdom_entry& e) {
  table& t = wisdom();
  const std::lock_guard<std::mutex> lock(t.mutex);
  t.entries[k] = e;
  t.measured = true;
  held.store(true);
}

}  // namespace marg::detail

namespace marg {

void set_planner_mode(planner_mode mode) {
  MARG_EXPECTS(mode == planner_mode::estimate || mode == planner_mode::measure,
               "marg::set_planner_mode: mode is not a planner_mode");
  detail::env_override(detail::env_var::planner);
  detail::mode_set.store(static_cast<int>(mode));
}

planner_mode current_planner_mode() {
  return detail::planner_measures() ? planner_mode::measure : planner_mode::estimate;
}

std::string wisdom_text() {
  detail::table& t = detail::wisdom();
  const std::lock_guard<std::mutex> lock(t.mutex);
  std::string s = std::string(detail::header) + '\n' + detail::columns + '\n';
  for (const auto& [k, e] : t.entries) s += detail::format(k, e) + '\n';
  return s;
}

void import_wisdom_text(const std::string& text) {
  detail::add(detail::parse(text, "marg::import_wisdom_text"));
}

void export_wisdom(const std::string& path) {
  const bool written = detail::write_file(path, wisdom_text());
  MARG_EXPECTS(written, "marg::export_wisdom: cannot write the file '" + path + "'");
}

void import_wisdom(const std::string& path) {
  const std::optional<std::string> text = detail::read_file(path);
  MARG_EXPECTS(text.has_value(), "marg::import_wisdom: cannot read the file '" + path + "'");
  detail::add(detail::parse(*text, ("marg::import_wisdom: '" + path + "'").c_str()));
}

void forget_wisdom() {
  detail::table& t = detail::wisdom();
  const std::lock_guard<std::mutex> lock(t.mutex);
  t.entries.clear();
  t.measured = false;
  detail::held.store(false);
}

}  // namespace marg
