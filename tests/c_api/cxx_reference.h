/* The C++ API's results on given inputs, for the C tests to compare the C
 * API against (tests/c_api/cxx_reference.cpp). */
#ifndef MARG_TESTS_CXX_REFERENCE_H
#define MARG_TESTS_CXX_REFERENCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Families of cxx_factory. */
enum cxx_family {
  CXX_CATEGORICAL, /* weights a[0..n-1], lower k */
  CXX_CATEGORICAL_LOG,
  CXX_BERNOULLI,         /* a[0] */
  CXX_BINOMIAL,          /* n, a[0] */
  CXX_UNIFORM_INT,       /* k..n */
  CXX_BETA_BINOMIAL,     /* n, a[0], a[1] */
  CXX_POISSON,           /* a[0], tail a[1] */
  CXX_GEOMETRIC,         /* a[0], tail a[1] */
  CXX_NEGATIVE_BINOMIAL, /* a[0], a[1], tail a[2] */
  CXX_DELTA,             /* k */
  CXX_FAMILIES
};

/**
 * The probabilities of a factory's pmf through the C++ API, as double.
 * @return the size written to out (<= cap), or -1 when the C++ call threw
 */
int64_t cxx_factory(int family, int is_float, const double* a, int64_t n, int64_t k, double* out,
                    int64_t cap, int64_t* lower, double* truncated);

/**
 * One batched SIR-style step through the C++ API (binomial_batch, negation,
 * binomial_count_evidence, detail::sample_given_evidence_with), double rows.
 * @return 0, or -1 when the C++ call threw
 */
int cxx_batch_step(int batch, const int64_t* n_inf, const double* p_inf, const int64_t* n_rec,
                   const double* p_rec, const int64_t* offsets, int64_t observed, const double* rho,
                   int64_t n_max, double tail, const double* u, double* log_likelihood,
                   int64_t* first, int64_t* second);

#ifdef __cplusplus
}
#endif

#endif
