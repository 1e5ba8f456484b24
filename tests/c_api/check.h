/* The CHECK macro of the C tests: counts passed and failed checks and names
 * each failing one. */
#ifndef MARG_TESTS_CHECK_H
#define MARG_TESTS_CHECK_H

#include <stdio.h>

static int passed = 0, failed = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#endif
