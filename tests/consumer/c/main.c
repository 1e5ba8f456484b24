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
  printf("consumer (C): libmarg %s, P(sum=7) = %.6f, %s\n", marg_version(), sum[5],
         bad ? "WRONG" : "ok");
  return bad == 0 ? 0 : 1;
}
