/// @file convolve.hpp
/// @brief The three banded products: convolution and its two gradients.
///
/// With `x` on {0..m-1} (probabilities p) and `y` on {0..n-1} (q):
///
///     r    = band(p, n) q      r_i  = sum_j p_j q_{i-j},  i = 0..m+n-2
///     g_p  = band(q, m)^T g    gp_j = sum_k q_k g_{j+k},  j = 0..m-1
///     g_q  = band(p, n)^T g    gq_j = sum_k p_k g_{j+k},  j = 0..n-1
///
/// Every element is a direct sum (no FFT): on non-negative input each element
/// has a relative error of about (number of terms) * epsilon, tails included.
///
/// Pointers may be host, pool (managed) or device memory. Outputs must not
/// overlap inputs (checked: marg::invalid_argument). Arguments are checked
/// before any work: m, n >= 1, m + n - 1 <= INT_MAX, strides >= 1, pointers
/// not null, batch >= 0, batch strides >= 0 (0 repeats one input for every
/// problem), output batch stride large enough that problems do not overlap.
#pragma once

#include <cstdint>

#include <marg/numeric/stream.hpp>

namespace marg {

/// Full convolution r = p * q (the PMF of x + y).
/// @param m length of p (>= 1)
/// @param n length of q (>= 1)
/// @param p first operand, elements p[0], p[incp], ...
/// @param incp stride of p (>= 1)
/// @param q second operand
/// @param incq stride of q (>= 1)
/// @param r output, m + n - 1 elements
/// @param incr stride of r (>= 1)
template <class T>
void convolve(int m, int n, const T* p, int incp, const T* q, int incq, T* r, int incr);

/// Full convolution on a stream (see the overload without stream).
/// @param m length of p
/// @param n length of q
/// @param p first operand
/// @param incp stride of p
/// @param q second operand
/// @param incq stride of q
/// @param r output, m + n - 1 elements
/// @param incr stride of r
/// @param stream CUDA stream the work is ordered on (CUDA backend)
template <class T>
void convolve(int m, int n, const T* p, int incp, const T* q, int incq, T* r, int incr,
              stream_view stream);

/// Gradient with respect to p: gp = band(q, m)^T g.
/// @param m length of p (and of gp)
/// @param n length of q
/// @param g gradient with respect to r, m + n - 1 elements
/// @param incg stride of g
/// @param q second operand of the forward convolution
/// @param incq stride of q
/// @param gp output, m elements
/// @param incgp stride of gp
template <class T>
void convolve_grad_p(int m, int n, const T* g, int incg, const T* q, int incq, T* gp, int incgp);

/// Gradient with respect to p on a stream.
/// @param m length of p
/// @param n length of q
/// @param g gradient with respect to r
/// @param incg stride of g
/// @param q second operand
/// @param incq stride of q
/// @param gp output, m elements
/// @param incgp stride of gp
/// @param stream CUDA stream
template <class T>
void convolve_grad_p(int m, int n, const T* g, int incg, const T* q, int incq, T* gp, int incgp,
                     stream_view stream);

/// Gradient with respect to q: gq = band(p, n)^T g.
/// @param m length of p
/// @param n length of q (and of gq)
/// @param g gradient with respect to r, m + n - 1 elements
/// @param incg stride of g
/// @param p first operand of the forward convolution
/// @param incp stride of p
/// @param gq output, n elements
/// @param incgq stride of gq
template <class T>
void convolve_grad_q(int m, int n, const T* g, int incg, const T* p, int incp, T* gq, int incgq);

/// Gradient with respect to q on a stream.
/// @param m length of p
/// @param n length of q
/// @param g gradient with respect to r
/// @param incg stride of g
/// @param p first operand
/// @param incp stride of p
/// @param gq output, n elements
/// @param incgq stride of gq
/// @param stream CUDA stream
template <class T>
void convolve_grad_q(int m, int n, const T* g, int incg, const T* p, int incp, T* gq, int incgq,
                     stream_view stream);

/// A batch of convolutions: problem b reads p + b*stridep, q + b*strideq and
/// writes r + b*strider. All problems run in one call (one launch on CUDA).
/// @param m length of each p
/// @param n length of each q
/// @param p first operands
/// @param incp element stride within one p
/// @param stridep elements between consecutive p (0: the same p for all)
/// @param q second operands
/// @param incq element stride within one q
/// @param strideq elements between consecutive q (0: the same q for all)
/// @param r outputs, m + n - 1 elements each
/// @param incr element stride within one r
/// @param strider elements between consecutive r
/// @param batch number of problems (>= 0)
/// @param stream CUDA stream
template <class T>
void convolve_batched(int m, int n, const T* p, int incp, std::int64_t stridep, const T* q,
                      int incq, std::int64_t strideq, T* r, int incr, std::int64_t strider,
                      int batch, stream_view stream = {});

/// A batch of gradients with respect to p (see convolve_batched for the layout).
/// @param m length of each p
/// @param n length of each q
/// @param g gradients with respect to r, m + n - 1 elements each
/// @param incg element stride within one g
/// @param strideg elements between consecutive g
/// @param q second operands
/// @param incq element stride within one q
/// @param strideq elements between consecutive q (0: the same q for all)
/// @param gp outputs, m elements each
/// @param incgp element stride within one gp
/// @param stridegp elements between consecutive gp
/// @param batch number of problems (>= 0)
/// @param stream CUDA stream
template <class T>
void convolve_grad_p_batched(int m, int n, const T* g, int incg, std::int64_t strideg, const T* q,
                             int incq, std::int64_t strideq, T* gp, int incgp,
                             std::int64_t stridegp, int batch, stream_view stream = {});

/// A batch of gradients with respect to q (see convolve_batched for the layout).
/// @param m length of each p
/// @param n length of each q
/// @param g gradients with respect to r, m + n - 1 elements each
/// @param incg element stride within one g
/// @param strideg elements between consecutive g
/// @param p first operands
/// @param incp element stride within one p
/// @param stridep elements between consecutive p (0: the same p for all)
/// @param gq outputs, n elements each
/// @param incgq element stride within one gq
/// @param stridegq elements between consecutive gq
/// @param batch number of problems (>= 0)
/// @param stream CUDA stream
template <class T>
void convolve_grad_q_batched(int m, int n, const T* g, int incg, std::int64_t strideg, const T* p,
                             int incp, std::int64_t stridep, T* gq, int incgq,
                             std::int64_t stridegq, int batch, stream_view stream = {});

}  // namespace marg
