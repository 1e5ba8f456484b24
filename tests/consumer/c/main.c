/* Two dice through the C API; exits non-zero on a wrong answer. */
#include <marg/marg.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  double die[6] = {1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6}, sum[11];
  int k, bad = 0;
  if (marg_convolve_f64(6, 6, die, 1, die, 1, sum, 1, NULL) != MARG_SUCCESS) {
    fprintf(stderr, "marg_convolve_f64: %s\n", marg_last_error_message());
    return 1;
  }
  for (k = 0; k < 11; ++k)
    if (fabs(sum[k] - (6 - abs(k + 2 - 7)) / 36.0) > 1e-15) ++bad;
  if (marg_convolve_f64(0, 6, die, 1, die, 1, sum, 1, NULL) != MARG_ERROR_INVALID_ARGUMENT) ++bad;
  /* the same through pmf handles: two dice on 1..6, their sum, a posterior */
  {
    marg_pmf *d = NULL, *two = NULL, *first = NULL;
    double p7 = 0, ll = 0, p_first = 0;
    int64_t lo = 0, hi = 0;
    if (marg_pmf_uniform_int_f64(1, 6, &d) != MARG_SUCCESS ||
        marg_pmf_add(d, d, &two) != MARG_SUCCESS ||
        marg_pmf_support(two, &lo, &hi) != MARG_SUCCESS ||
        marg_pmf_prob_f64(two, 7, &p7) != MARG_SUCCESS ||
        marg_pmf_condition_on_sum(d, d, 11, &ll, &first, NULL) != MARG_SUCCESS ||
        marg_pmf_prob_f64(first, 5, &p_first) != MARG_SUCCESS) {
      fprintf(stderr, "pmf handles: %s\n", marg_last_error_message());
      ++bad;
    } else {
      /* P(sum = 7) = 1/6; given sum 11 the first die is 5 or 6, each 1/2 */
      if (lo != 2 || hi != 12 || fabs(p7 - 1.0 / 6) > 1e-15) ++bad;
      if (fabs(ll - log(2.0 / 36)) > 1e-14 || fabs(p_first - 0.5) > 1e-15) ++bad;
    }
    if (marg_pmf_add(d, NULL, &two) != MARG_ERROR_INVALID_ARGUMENT) ++bad;
    marg_pmf_destroy(first);
    marg_pmf_destroy(two);
    marg_pmf_destroy(d);
  }
  printf("consumer (C): libmarg %s, P(sum=7) = %.6f, %s\n", marg_version(), sum[5],
         bad ? "WRONG" : "ok");
  return bad == 0 ? 0 : 1;
}
