#include <catch2/catch.hpp>

#include <marg/marg.hpp>

#include <vector>

TEST_CASE("smoke: convolve of two short vectors", "[numeric]") {
  std::vector<double> p{0.5, 0.5}, q{0.25, 0.75}, r(3);
  marg::convolve(2, 2, p.data(), 1, q.data(), 1, r.data(), 1);
  CHECK(r[0] == Approx(0.125));
  CHECK(r[1] == Approx(0.5));
  CHECK(r[2] == Approx(0.375));
}
