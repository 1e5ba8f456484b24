// Run by test_environment.cpp under different MARG_* environment values (the
// environment is read once per process): prints one line per libmarg call,
// "name: ok ..." or "name: <exception type>: <message>", and exits 0.
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <marg/numeric/backend.hpp>
#include <marg/numeric/convolve.hpp>
#include <marg/numeric/environment.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/planner.hpp>
#include <marg/numeric/pool.hpp>

namespace {

template <class F>
void probe(const char* name, F&& f) {
  try {
    const std::string extra = f();
    std::printf("%s: ok%s\n", name, extra.c_str());
  } catch (const marg::invalid_argument& e) {
    std::printf("%s: invalid_argument: %s\n", name, e.what());
  } catch (const marg::out_of_memory& e) {
    std::printf("%s: out_of_memory: %s\n", name, e.what());
  } catch (const std::exception& e) {
    std::printf("%s: other: %s\n", name, e.what());
  }
}

std::string convolve_once() {
  std::vector<double> p{0.5, 0.5}, r(3);
  marg::convolve(2, 2, p.data(), 1, p.data(), 1, r.data(), 1);
  return r[1] == 0.5 ? "" : " WRONG";
}

std::string allocate_once() {
  void* p = marg::allocate(4096);
  marg::deallocate(p, 4096);
  return "";
}

}  // namespace

int main() {
  probe("check_environment", [] {
    marg::check_environment();
    return std::string();
  });
  probe("cpu_threads", [] { return " " + std::to_string(marg::cpu_threads()); });
  probe("current_backend", [] {
    return std::string(marg::current_backend() == marg::backend::cuda ? " cuda" : " cpu");
  });
  probe("planner_mode", [] {
    return std::string(marg::current_planner_mode() == marg::planner_mode::measure ? " measure"
                                                                                   : " estimate");
  });
  probe("convolve", convolve_once);
  probe("pool_stats", [] { return " limit " + std::to_string(marg::pool_stats().limit); });
  probe("pool_minimum_limit", [] { return " " + std::to_string(marg::pool_minimum_limit()); });
  probe("allocate", allocate_once);
  // the API overrides the environment: everything works afterwards
  probe("override", [] {
    marg::set_cpu_threads(2);
    marg::set_backend(marg::backend::cpu);
    marg::set_pool_limit(std::size_t{1} << 30);
    marg::set_planner_mode(marg::planner_mode::estimate);
    return std::string();
  });
  probe("after.check_environment", [] {
    marg::check_environment();
    return std::string();
  });
  probe("after.planner_mode", [] {
    return std::string(marg::current_planner_mode() == marg::planner_mode::measure ? " measure"
                                                                                   : " estimate");
  });
  probe("after.convolve", convolve_once);
  probe("after.allocate", allocate_once);
  return 0;
}
