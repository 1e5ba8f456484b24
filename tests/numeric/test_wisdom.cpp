// Wisdom and the planner mode (numeric/planner.hpp): the text form and the
// file read and written back, errors that name the bad line and import nothing, and on a
// GPU the measuring mode, whose products stay exact and whose classes are
// measured once. The expected texts are the format's specification, written
// out by hand.
#include <catch2/catch.hpp>

#include <marg/numeric/planner.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "numeric_fixture.hpp"

using namespace marg::test;

namespace {

const std::string header =
    "# libmarg wisdom 1\n"
    "# capability multiprocessors features type product taps outputs problems operands variant "
    "microseconds\n";

// forgets the wisdom and restores the estimate mode around a case:
// wisdom left behind would change other cases' kernels
struct wisdom_guard {
  wisdom_guard() { marg::forget_wisdom(); }
  wisdom_guard(const wisdom_guard&) = delete;
  wisdom_guard& operator=(const wisdom_guard&) = delete;
  ~wisdom_guard() {
    marg::forget_wisdom();
    marg::set_planner_mode(marg::planner_mode::estimate);
  }
};

}  // namespace

TEST_CASE("wisdom: text round trip", "[numeric][wisdom]") {
  const wisdom_guard guard;
  CHECK(marg::wisdom_text() == header);
  const std::string two =
      "90 132 hopper float convolution 17 17 1 aligned wgmma 104.200\n"
      "80 108 generic double gradient 12 9 10 strided mid 51.000\n";
  marg::import_wisdom_text("# libmarg wisdom 1\n\n# a comment\n" + two);
  // entries in the order of their classes: capability first
  const std::string want = header +
                           "80 108 generic double gradient 12 9 10 strided mid 51.000\n"
                           "90 132 hopper float convolution 17 17 1 aligned wgmma 104.200\n";
  CHECK(marg::wisdom_text() == want);
  // what export wrote imports to the same wisdom
  const std::string out = marg::wisdom_text();
  marg::forget_wisdom();
  CHECK(marg::wisdom_text() == header);
  marg::import_wisdom_text(out);
  CHECK(marg::wisdom_text() == want);
  // an entry of a class held replaces it; Windows line ends are read too
  marg::import_wisdom_text(
      "# libmarg wisdom 1\r\n90 132 hopper float convolution 17 17 1 aligned mma 99\r\n");
  CHECK(marg::wisdom_text() == header +
                                   "80 108 generic double gradient 12 9 10 strided mid 51.000\n"
                                   "90 132 hopper float convolution 17 17 1 aligned mma 99.000\n");
}

TEST_CASE("wisdom: file round trip", "[numeric][wisdom]") {
  const wisdom_guard guard;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("marg-wisdom-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "w.txt").string();
  const std::string entry = "86 84 generic float convolution 9 10 3 aligned small 12.500\n";
  marg::import_wisdom_text("# libmarg wisdom 1\n" + entry);
  const std::string want = header + entry;
  REQUIRE(marg::wisdom_text() == want);
  marg::export_wisdom(path);
  // the file holds exactly the text
  std::ifstream in(path, std::ios::binary);
  std::ostringstream file;
  file << in.rdbuf();
  CHECK(file.str() == want);
  marg::forget_wisdom();
  CHECK(marg::wisdom_text() == header);
  marg::import_wisdom(path);
  CHECK(marg::wisdom_text() == want);
  // export replaces the file: no wisdom, the header alone
  marg::forget_wisdom();
  marg::export_wisdom(path);
  marg::import_wisdom_text("# libmarg wisdom 1\n" + entry);
  marg::import_wisdom(path);  // adds nothing, keeps what is held
  CHECK(marg::wisdom_text() == want);

  using Catch::Matchers::Contains;
  // unreadable and unwritable paths are named
  const std::string missing = (dir / "missing.txt").string();
  CHECK_THROWS_AS(marg::import_wisdom(missing), marg::invalid_argument);
  CHECK_THROWS_WITH(marg::import_wisdom(missing), Contains("'" + missing + "'"));
  CHECK_THROWS_WITH(marg::import_wisdom(dir.string()), Contains("'" + dir.string() + "'"));
  const std::string nowhere = (dir / "no-such-folder" / "w.txt").string();
  CHECK_THROWS_AS(marg::export_wisdom(nowhere), marg::invalid_argument);
  CHECK_THROWS_WITH(marg::export_wisdom(nowhere), Contains("'" + nowhere + "'"));
  CHECK_FALSE(fs::exists(nowhere));
  // a bad file names the path and its line and imports nothing
  marg::forget_wisdom();
  std::ofstream(path, std::ios::trunc) << "# libmarg wisdom 1\n" << entry << "90 1 hopper\n";
  CHECK_THROWS_AS(marg::import_wisdom(path), marg::invalid_argument);
  CHECK_THROWS_WITH(marg::import_wisdom(path), Contains("'" + path + "'") && Contains("line 3"));
  CHECK(marg::wisdom_text() == header);
  fs::remove_all(dir);
}

TEST_CASE("wisdom: a bad text names its line and imports nothing", "[numeric][wisdom]") {
  const wisdom_guard guard;
  using Catch::Matchers::Contains;
  const std::string good = "90 132 hopper float convolution 17 17 1 aligned mma 1.5\n";
  const std::pair<std::string, std::string> bad[] = {
      {"", "empty text"},
      {"90 132 hopper float convolution 17 17 1 aligned mma 1.5\n", "not the header"},
      {"# libmarg wisdom 2\n", "not the header"},
      {"# libmarg wisdom 1\n" + good + "90 132 hopper float convolution 17 17 1 aligned fast 1\n",
       "line 3"},
      {"# libmarg wisdom 1\n90 132 hopper half convolution 17 17 1 aligned mma 1\n",
       "float or double"},
      {"# libmarg wisdom 1\n90 132 hopper float convolution 17 17 1 aligned mma -1\n",
       "microseconds"},
      {"# libmarg wisdom 1\n90 132 hopper float convolution 17 17 1 aligned mma nan\n",
       "microseconds"},
      {"# libmarg wisdom 1\n90 132 hopper float convolution 17 64 1 aligned mma 1\n", "bit widths"},
      {"# libmarg wisdom 1\n90 0 hopper float convolution 17 17 1 aligned mma 1\n",
       "multiprocessor"},
      {"# libmarg wisdom 1\n90 132 hopper float convolution 17 17 1 aligned mma 1 extra\n",
       "nothing after"},
      {"# libmarg wisdom 1\n90 132 hopper float convolution 17 17\n", "bit widths"},
  };
  for (const auto& [text, why] : bad) {
    CAPTURE(text);
    CHECK_THROWS_WITH(marg::import_wisdom_text(text), Contains(why));
    CHECK_THROWS_AS(marg::import_wisdom_text(text), marg::invalid_argument);
    CHECK(marg::wisdom_text() == header);
  }
}

TEST_CASE("wisdom: the planner mode", "[numeric][wisdom]") {
  const wisdom_guard guard;
  marg::set_planner_mode(marg::planner_mode::measure);
  CHECK(marg::current_planner_mode() == marg::planner_mode::measure);
  marg::set_planner_mode(marg::planner_mode::estimate);
  CHECK(marg::current_planner_mode() == marg::planner_mode::estimate);
  CHECK_THROWS_AS(marg::set_planner_mode(static_cast<marg::planner_mode>(7)),
                  marg::invalid_argument);
}

TEMPLATE_TEST_CASE("wisdom: measuring keeps products exact and measures a class once",
                   "[numeric][wisdom]", cuda_f, cuda_d) {
  using T = typename TestType::T;
  MARG_RANDOM_CASE(TestType);
  const wisdom_guard guard;
  marg::set_planner_mode(marg::planner_mode::measure);
  // two sizes of one class (taps 2500 and 2600: bit width 12; outputs 5499
  // and 5699: 13), then another
  const std::pair<int, int> sizes[] = {{3000, 2500}, {2600, 3100}, {300, 70}};
  const auto entries = [] {
    int lines = 0;
    for (const char ch : marg::wisdom_text()) lines += ch == '\n';
    return lines - 2;  // the header's two lines
  };
  std::string after_first;
  for (const auto& [m, n] : sizes) {
    CAPTURE(m, n);
    problem pr{op::convolve, m, n};
    check_problem<T>(g, pr);
    if (m == 3000) {
      CHECK(entries() == 1);
      after_first = marg::wisdom_text();
    }
    // the second size is of the first's class: measured once, kept as it was
    if (m == 2600) CHECK(marg::wisdom_text() == after_first);
  }
  // the wisdom reproduces: the same products again, in estimate mode
  const std::string w = marg::wisdom_text();
  marg::set_planner_mode(marg::planner_mode::estimate);
  for (const auto& [m, n] : sizes) {
    problem pr{op::convolve, m, n};
    check_problem<T>(g, pr);
  }
  CHECK(marg::wisdom_text() == w);
}
