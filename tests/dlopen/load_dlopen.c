/* Loads libmarg.so at run time, as a language runtime does (RTLD_NOW |
 * RTLD_LOCAL, no link-time dependency), and computes one convolution through
 * the C API, checked against a plain loop in long double.
 * usage: load_dlopen PATH-TO-libmarg.so */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>

typedef int (*convolve_f64)(int, int, const double*, int, const double*, int, double*, int, void*);
typedef const char* (*version_fn)(void);

int main(int argc, char** argv) {
  enum { m = 7, n = 5 };
  double p[m], q[n], r[m + n - 1];
  void* lib;
  convolve_f64 convolve;
  version_fn version;
  int i, j, status;
  double worst = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s libmarg.so\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 1;
  }
  *(void**)(&convolve) = dlsym(lib, "marg_convolve_f64");
  *(void**)(&version) = dlsym(lib, "marg_version");
  if (!convolve || !version) {
    fprintf(stderr, "dlsym failed: %s\n", dlerror());
    return 1;
  }
  for (i = 0; i < m; ++i) p[i] = (i + 1.0) / 28.0;
  for (j = 0; j < n; ++j) q[j] = (5.0 - j) / 15.0;
  status = convolve(m, n, p, 1, q, 1, r, 1, NULL);
  if (status != 0) {
    fprintf(stderr, "marg_convolve_f64 returned %d\n", status);
    return 1;
  }
  for (i = 0; i < m + n - 1; ++i) {
    long double want = 0;
    for (j = 0; j < n; ++j)
      if (i - j >= 0 && i - j < m) want += (long double)p[i - j] * q[j];
    worst = fmax(worst, fabs((double)((r[i] - want) / want)));
  }
  printf("dlopen %s (libmarg %s): max relative error %.3g\n", argv[1], version(), worst);
  if (dlclose(lib) != 0) {
    fprintf(stderr, "dlclose failed: %s\n", dlerror());
    return 1;
  }
  return worst < 1e-15 ? 0 : 1;
}
