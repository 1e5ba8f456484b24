// MARG_NUM_THREADS, MARG_POOL_LIMIT, MARG_BACKEND and MARG_PLAN: bad values are rejected
// with a message naming the variable and what it accepts; the API overrides
// them. Each case runs env_probe in a fresh process (the environment is read
// once per process).
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include <marg/numeric/pool.hpp>

namespace {

// env_probe beside this executable (a packed build runs anywhere)
std::string probe_path() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  const std::string exe(self, static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/') + 1) + MARG_ENV_PROBE_NAME;
}

// env_probe's output under `env` (assignments for sh)
std::string probe(const std::string& env) {
  const std::string cmd = env + " '" + probe_path() + "' 2>&1";
  std::FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f) != nullptr) out += buf;
  CHECK(pclose(f) == 0);
  return out;
}

// the line of `out` that starts with "name: "
std::string line_of(const std::string& out, const std::string& name) {
  const auto at = out.find("\n" + name + ": ");
  const std::size_t start = out.rfind(name + ": ", 0) == 0 ? 0
                            : at == std::string::npos      ? at
                                                           : at + 1;
  if (start == std::string::npos) return "(no line " + name + ")";
  return out.substr(start, out.find('\n', start) - start);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// every call fails with the variable's message before the override and works after it
void expect_rejected(const std::string& env, const std::string& variable, const std::string& value,
                     const std::string& accepted, const std::string& failing_call) {
  const std::string out = probe(env);
  INFO(env << "\n" << out);
  const std::string l = line_of(out, "check_environment");
  CHECK(contains(l, "invalid_argument"));
  CHECK(contains(l, variable));
  CHECK(contains(l, "'" + value + "'"));
  CHECK(contains(l, accepted));
  CHECK(contains(line_of(out, failing_call), "invalid_argument: environment variable " + variable));
  CHECK(line_of(out, "pool_stats").rfind("pool_stats: ok", 0) == 0);
  CHECK(line_of(out, "override") == "override: ok");
  CHECK(line_of(out, "after.check_environment") == "after.check_environment: ok");
  CHECK(line_of(out, "after.planner_mode") == "after.planner_mode: ok estimate");
  CHECK(line_of(out, "after.convolve") == "after.convolve: ok");
  CHECK(line_of(out, "after.allocate") == "after.allocate: ok");
}

}  // namespace

TEST_CASE("valid environment values are used", "[environment]") {
  const std::string out = probe("MARG_NUM_THREADS=3 MARG_POOL_LIMIT=64M MARG_BACKEND=cpu");
  INFO(out);
  CHECK(line_of(out, "check_environment") == "check_environment: ok");
  CHECK(line_of(out, "cpu_threads") == "cpu_threads: ok 3");
  CHECK(line_of(out, "current_backend") == "current_backend: ok cpu");
  CHECK(line_of(out, "convolve") == "convolve: ok");
  CHECK(line_of(out, "pool_stats") == "pool_stats: ok limit " + std::to_string(64u << 20));
  CHECK(line_of(out, "allocate") == "allocate: ok");
  CHECK(line_of(out, "planner_mode") == "planner_mode: ok estimate");  // MARG_PLAN unset
  // unset and empty are the defaults
  const std::string def = probe("MARG_NUM_THREADS= MARG_POOL_LIMIT= MARG_BACKEND= MARG_PLAN=");
  CHECK(line_of(def, "check_environment") == "check_environment: ok");
  CHECK(line_of(def, "convolve") == "convolve: ok");
  CHECK(line_of(def, "planner_mode") == "planner_mode: ok estimate");
}

TEST_CASE("MARG_PLAN sets the planner mode", "[environment][wisdom]") {
  for (const char* v : {"estimate", "measure"}) {
    const std::string out = probe(std::string("MARG_PLAN=") + v);
    INFO(out);
    CHECK(line_of(out, "check_environment") == "check_environment: ok");
    CHECK(line_of(out, "planner_mode") == std::string("planner_mode: ok ") + v);
    // set_planner_mode overrides it
    CHECK(line_of(out, "after.planner_mode") == "after.planner_mode: ok estimate");
  }
}

TEST_CASE("bad MARG_NUM_THREADS is rejected", "[environment]") {
  for (const char* v : {"0", "abc", "-3", "2x", "99999"}) {
    SECTION(v) {
      expect_rejected(std::string("MARG_NUM_THREADS='") + v + "'", "MARG_NUM_THREADS", v,
                      "an integer in 1..4096", "convolve");
    }
  }
}

TEST_CASE("bad MARG_BACKEND is rejected", "[environment]") {
  for (const char* v : {"gpu", "CPU", "1"}) {
    SECTION(v) {
      expect_rejected(std::string("MARG_BACKEND='") + v + "'", "MARG_BACKEND", v,
                      "automatic, cpu or cuda", "current_backend");
    }
  }
}

TEST_CASE("bad MARG_PLAN is rejected", "[environment][wisdom]") {
  // "deterministic" and the variable MARG_PLANNER are no part of the contract
  for (const char* v : {"deterministic", "MEASURE", "fast"}) {
    SECTION(v) {
      expect_rejected(std::string("MARG_PLAN='") + v + "'", "MARG_PLAN", v, "estimate or measure",
                      "planner_mode");
    }
  }
  const std::string out = probe("MARG_PLANNER=fast MARG_PLAN=measure");
  CHECK(line_of(out, "planner_mode") == "planner_mode: ok measure");
}

TEST_CASE("bad MARG_POOL_LIMIT is rejected", "[environment][pool]") {
  for (const char* v : {"abc", "0", "12Q", "-5M"}) {
    SECTION(v) {
      expect_rejected(std::string("MARG_POOL_LIMIT='") + v + "'", "MARG_POOL_LIMIT", v,
                      "bytes with an optional K, M, G or T suffix", "allocate");
    }
  }
}

TEST_CASE("MARG_POOL_LIMIT below the pool's minimum is rejected naming both",
          "[environment][pool]") {
  const std::size_t minimum = marg::pool_minimum_limit();
  REQUIRE(minimum > 0);
  for (const std::size_t limit : {std::size_t{1}, std::size_t{4096}, minimum - 1}) {
    const std::string out = probe("MARG_POOL_LIMIT=" + std::to_string(limit));
    INFO(out);
    for (const char* call : {"check_environment", "allocate", "convolve"}) {
      const std::string l = line_of(out, call);
      CHECK(contains(l, "invalid_argument"));
      CHECK(contains(l, std::to_string(limit) + " bytes"));
      CHECK(contains(l, "minimum of " + std::to_string(minimum) + " bytes"));
    }
    // the pool's other calls keep working, and the API overrides the value
    CHECK(line_of(out, "pool_stats").rfind("pool_stats: ok", 0) == 0);
    CHECK(line_of(out, "after.allocate") == "after.allocate: ok");
  }
  // exactly the minimum is accepted
  const std::string out = probe("MARG_POOL_LIMIT=" + std::to_string(minimum));
  INFO(out);
  CHECK(line_of(out, "check_environment") == "check_environment: ok");
  CHECK(line_of(out, "pool_stats") == "pool_stats: ok limit " + std::to_string(minimum));
}
