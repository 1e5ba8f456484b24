/// @file log_convolve.hpp
/// @brief The convolution of log-probabilities and its two vector-Jacobian
/// products, exact in every element also where `T` cannot hold the
/// probability itself.
///
/// With `a` (length m) and `b` (length n) log-probabilities:
///
///     r_i  = log sum_j exp(a_j + b_{i-j}),                 i = 0..m+n-2
///     ga_j = sum_i g_i exp(a_j + b_{i-j} - r_i),           j = 0..m-1
///     gb_k = sum_i g_i exp(a_{i-k} + b_k - r_i),           k = 0..n-1
///
/// `-inf` entries are allowed (zero probabilities); an output with no finite
/// term is `-inf`. A NaN or `+inf` input makes every output of its problem
/// NaN. Each input is cut into runs whose finite values lie within a window
/// of the run's maximum (300 in double, 20 in float), so that the scaled
/// values `exp(a_j - max)` and their products stay far from underflow; each
/// pair of runs is one direct linear convolution (marg::convolve's kernels)
/// and the pairs are summed with a running log-sum-exp in double. Every
/// output therefore keeps the relative accuracy of the linear product (about
/// the number of terms times epsilon), with no floor: an output of
/// `exp(-100000)` is as accurate as one of `0.5`. When each input fits one
/// window (most PMFs whose probabilities are all above 1e-130 in double or
/// 1e-8 in float), the whole problem is one linear convolution on the current
/// backend, batches included.
///
/// Pointers may be host, pool (managed) or device memory, as for
/// marg::convolve. On the CUDA backend with device or managed operands the
/// forward product runs on the device, ordered on the stream without a wait
/// (as marg::convolve; marg::array's host access waits for it): operands
/// that span more than one window are summed there directly, with a running
/// log-sum-exp in double, and a NaN or +inf input gives NaN outputs there
/// too. With a host-memory operand the scaling passes and the run-pair
/// products run on the host and the call returns with the outputs written.
/// The gradients always scale on the host. Arguments are checked as for
/// marg::convolve (marg::invalid_argument).
#pragma once

#include <cstdint>

#include <marg/numeric/stream.hpp>

namespace marg {

/// Log-space convolution r_i = log sum_j exp(a_j + b_{i-j}) (the log-PMF of x + y).
/// @param m length of a (>= 1)
/// @param n length of b (>= 1)
/// @param a log-probabilities of x, elements a[0], a[inca], ...
/// @param inca stride of a (>= 1)
/// @param b log-probabilities of y
/// @param incb stride of b (>= 1)
/// @param r output, m + n - 1 elements
/// @param incr stride of r (>= 1)
/// @param stream CUDA stream the work is ordered on (CUDA backend)
template <class T>
void log_convolve(int m, int n, const T* a, int inca, const T* b, int incb, T* r, int incr,
                  stream_view stream = {});

/// A batch of log-space convolutions: problem i reads a + i*stridea and
/// b + i*strideb and writes r + i*strider (a stride of 0 repeats one input).
/// @param m length of each a
/// @param n length of each b
/// @param a first operands
/// @param inca element stride within one a
/// @param stridea elements between consecutive a (0: the same a for all)
/// @param b second operands
/// @param incb element stride within one b
/// @param strideb elements between consecutive b (0: the same b for all)
/// @param r outputs, m + n - 1 elements each
/// @param incr element stride within one r
/// @param strider elements between consecutive r
/// @param batch number of problems (>= 0)
/// @param stream CUDA stream
template <class T>
void log_convolve_batched(int m, int n, const T* a, int inca, std::int64_t stridea, const T* b,
                          int incb, std::int64_t strideb, T* r, int incr, std::int64_t strider,
                          int batch, stream_view stream = {});

/// Vector-Jacobian product with respect to a: ga_j = sum_i g_i exp(a_j + b_{i-j} - r_i),
/// where r = log_convolve(a, b) is passed in (as the forward pass computed it).
/// @param m length of a (and of ga)
/// @param n length of b
/// @param g gradient with respect to r, m + n - 1 elements
/// @param incg stride of g
/// @param a first operand of the forward pass
/// @param inca stride of a
/// @param b second operand of the forward pass
/// @param incb stride of b
/// @param r result of the forward pass, m + n - 1 elements
/// @param incr stride of r
/// @param ga output, m elements
/// @param incga stride of ga
/// @param stream CUDA stream
template <class T>
void log_convolve_grad_a(int m, int n, const T* g, int incg, const T* a, int inca, const T* b,
                         int incb, const T* r, int incr, T* ga, int incga, stream_view stream = {});

/// Vector-Jacobian product with respect to b: gb_k = sum_i g_i exp(a_{i-k} + b_k - r_i).
/// @param m length of a
/// @param n length of b (and of gb)
/// @param g gradient with respect to r, m + n - 1 elements
/// @param incg stride of g
/// @param a first operand of the forward pass
/// @param inca stride of a
/// @param b second operand of the forward pass
/// @param incb stride of b
/// @param r result of the forward pass, m + n - 1 elements
/// @param incr stride of r
/// @param gb output, n elements
/// @param incgb stride of gb
/// @param stream CUDA stream
template <class T>
void log_convolve_grad_b(int m, int n, const T* g, int incg, const T* a, int inca, const T* b,
                         int incb, const T* r, int incr, T* gb, int incgb, stream_view stream = {});

}  // namespace marg
