// Device paths of the batched distributions (src/cuda/batch_device.cu): the
// row work of binomial_batch, negation, binomial-count evidence and
// sample_given_evidence on the GPU when the CUDA backend is current. No CUDA
// types here: the .cpp files call these. Not installed.
#pragma once

#include <cstdint>
#include <vector>

#include <marg/numeric/array.hpp>

namespace marg::detail::gpu {

/// @return true when batched row work runs on the device: a CUDA build with
///         the CUDA backend current (false in builds without CUDA)
bool active();

/// Rows of binomial_batch built on the device, bit for bit the values of the
/// host path (the same recurrence, no contraction into FMA).
template <class T>
struct binomial_rows {
  array<T> values;  ///< B x length, pool memory, written by the device
  int length = 0;
  std::vector<std::int64_t> lowers;
  std::vector<T> truncated;
};

/// @param ns trials per row (checked)
/// @param ps success probabilities (checked)
/// @param batch rows
/// @param tail the mass dropped at either end
/// @param f the public function's name, for the length error
/// @return the rows
template <class T>
binomial_rows<T> binomial_rows_on_device(const std::int64_t* ns, const double* ps, int batch,
                                         double tail, const char* f);

/// Row-wise reversal on the device.
/// @param x batch x length values (pool or device memory)
/// @param batch rows
/// @param length values per row
/// @return the reversed rows in pool memory
template <class T>
array<T> reverse_rows_on_device(const T* x, int batch, int length);

/// Binomial-count evidence rows (see marg::binomial_count_evidence) on the device.
/// @param batch rows
/// @param length values per row
/// @param base per row: the count N at index 0
/// @param observed per row
/// @param rho per row
/// @param n_max the largest possible N
/// @param log_scale out: per row, log of the value each row was divided by
/// @return the rows in pool memory
template <class T>
array<T> count_evidence_on_device(int batch, int length, const std::int64_t* base,
                                  const std::int64_t* observed, const double* rho,
                                  std::int64_t n_max, std::vector<double>& log_scale);

/// One row's result of the device sampler, finished on the host.
struct draw_row {
  double sum;    ///< sum_z P(z) L(z), times 2^-exponent (0: impossible)
  int exponent;  ///< 0 where the row was summed in plain double (as on the host)
  int status;    ///< 0 impossible, 1 drawn, 2 the likelihood row has a bad entry
  int first;     ///< index of the draw within x's row
  int second;    ///< index of the draw within y's row
};

/// sample_given_evidence's row work on the device: z = the law of the sums
/// (B x len, written on the calling thread's stream), the likelihood, the
/// uniforms; complete on return.
/// @param batch rows
/// @param m length of x's rows
/// @param n length of y's rows
/// @param x x's rows
/// @param y y's rows
/// @param sq stride between y's rows (0: one row)
/// @param z the law of each row's sum
/// @param like the likelihood rows (host memory when like_on_host, else pool or device)
/// @param like_on_host where `like` lives
/// @param u 2 * batch uniforms (host)
/// @return one result per row
template <class T>
std::vector<draw_row> draws_on_device(int batch, int m, int n, const T* x, const T* y,
                                      std::int64_t sq, const T* z, const T* like, bool like_on_host,
                                      const double* u);

}  // namespace marg::detail::gpu
