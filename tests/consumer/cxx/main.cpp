// Two dice through the public C++ API: the PMF of the sum, an observation,
// a posterior and the numeric layer; exits non-zero on a wrong answer.
#include <marg/marg.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const auto die = marg::uniform_int<double>(1, 6);
  const auto two = die + die;
  int bad = 0;
  for (int k = 2; k <= 12; ++k) {
    const double want = (6 - std::abs(k - 7)) / 36.0;
    if (std::fabs(two.prob(k) - want) > 1e-15) ++bad;
  }
  const auto post = marg::condition_on_sum(die, die, 11);
  if (std::fabs(post.first.prob(5) - 0.5) > 1e-15) ++bad;
  if (std::fabs(post.log_likelihood - std::log(2.0 / 36.0)) > 1e-14) ++bad;
  std::vector<float> p{0.5f, 0.5f}, r(3);
  marg::convolve(2, 2, p.data(), 1, p.data(), 1, r.data(), 1);
  if (std::fabs(r[1] - 0.5f) > 1e-7f) ++bad;
  std::printf("consumer (C++): libmarg %s, P(sum=7) = %.6f, %s\n", marg::version(), two.prob(7),
              bad ? "WRONG" : "ok");
  return bad == 0 ? 0 : 1;
}
