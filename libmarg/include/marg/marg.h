/**
 * @file marg.h
 * @brief The C API of libmarg (C99; no C++ types cross it).
 *
 * Every function returns a marg_status; on failure
 * marg_last_error_message() gives the reason (thread-local, valid until the
 * next failing call on the same thread). Nothing throws across this boundary.
 * Streams are `cudaStream_t` values passed as `void*`; NULL means the calling
 * thread's libmarg stream (ignored by the CPU backend).
 */
#ifndef MARG_MARG_H
#define MARG_MARG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes of the C API. */
typedef enum marg_status {
  MARG_SUCCESS = 0,                 /**< the call did what it was asked */
  MARG_ERROR_INVALID_ARGUMENT = 1,  /**< bad input; nothing was written */
  MARG_ERROR_OUT_OF_MEMORY = 2,     /**< the pool or the system ran out of memory */
  MARG_ERROR_CUDA = 3,              /**< the CUDA runtime reported a failure */
  MARG_ERROR_INTERNAL = 4,          /**< any other failure (a bug: please report it) */
  MARG_STATUS_MAX_ENUM = 0x7FFFFFFF /**< not a status: gives the enum the range of int */
} marg_status;

/** Compute backends (see marg::backend). */
typedef enum marg_backend {
  MARG_BACKEND_AUTOMATIC = 0, /**< CUDA when usable, else CPU */
  MARG_BACKEND_CPU = 1,       /**< Eigen block-Toeplitz path on host threads */
  MARG_BACKEND_CUDA = 2,      /**< CUDA kernels */
  /** not a backend: gives the enum the range of int, so that any value a C
      caller passes is well defined in C++ too (and rejected) */
  MARG_BACKEND_MAX_ENUM = 0x7FFFFFFF
} marg_backend;

/**
 * @param status a status code
 * @return a static, human-readable name of the code
 */
const char* marg_status_string(marg_status status);

/** @return the message of the last failing call on this thread ("" if none) */
const char* marg_last_error_message(void);

/** @return the library version, "major.minor.patch" */
const char* marg_version(void);

/**
 * Selects the backend for later calls (process-wide).
 * @param backend the backend
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT when CUDA is unusable
 */
marg_status marg_set_backend(marg_backend backend);

/**
 * @param backend receives the backend the next call runs on (CPU or CUDA)
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT for a null pointer
 */
marg_status marg_get_backend(marg_backend* backend);

/**
 * @param count receives the number of usable CUDA devices (0 without GPU)
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT for a null pointer
 */
marg_status marg_device_count(int* count);

/**
 * Blocks until all libmarg work queued on a stream has finished. Needed
 * before the host reads an output in device or managed memory; outputs in
 * plain host memory are complete when the call that wrote them returns.
 * @param stream a cudaStream_t, or NULL for the calling thread's libmarg stream
 * @return MARG_SUCCESS or MARG_ERROR_CUDA
 */
marg_status marg_synchronize(void* stream);

/** A recorded sequence of libmarg numeric calls (see marg::call_graph). */
typedef struct marg_graph marg_graph;

/**
 * Records the numeric calls (marg_convolve_*, their gradients and batched
 * forms) that `calls(user)` makes, without running them; replay them with
 * marg_graph_replay. On a GPU, `calls` runs once now with `stream` in CUDA
 * stream capture: every call in it must pass `stream` and use device or
 * managed memory (a host operand makes the call fail with
 * MARG_ERROR_INVALID_ARGUMENT). On the CPU backend `calls` and `user` are
 * kept and called at each replay. The buffers stay fixed: keep them (and
 * `user`) valid while the graph can be replayed. See marg::capture_calls.
 * @param stream a cudaStream_t, or NULL for the calling thread's libmarg stream
 * @param calls makes the calls; returns MARG_SUCCESS or the status of the
 *        first call that failed (the capture is then abandoned and that
 *        status returned)
 * @param user passed to `calls`
 * @param graph receives the recording (free it with marg_graph_destroy)
 * @return a status code
 */
marg_status marg_capture(void* stream, marg_status (*calls)(void* user), void* user,
                         marg_graph** graph);

/**
 * Runs a recording again: on a GPU queued on `stream` (marg_synchronize
 * before reading its outputs), on the CPU finished on return.
 * @param graph from marg_capture
 * @param stream a cudaStream_t, or NULL for the calling thread's libmarg stream
 * @return a status code
 */
marg_status marg_graph_replay(const marg_graph* graph, void* stream);

/**
 * Frees a recording (work already queued by replays is unaffected).
 * @param graph from marg_capture, or NULL
 */
void marg_graph_destroy(marg_graph* graph);

/**
 * Sets the cap of the memory pool.
 * @param bytes the new cap (>= 1)
 * @return MARG_SUCCESS or MARG_ERROR_INVALID_ARGUMENT
 */
marg_status marg_set_pool_limit(size_t bytes);

/**
 * Reads the pool counters.
 * @param in_use receives bytes allocated and not freed (may be NULL)
 * @param reserved receives bytes obtained from the system (may be NULL)
 * @param limit receives the cap (may be NULL)
 * @return MARG_SUCCESS
 */
marg_status marg_pool_stats(size_t* in_use, size_t* reserved, size_t* limit);

/**
 * r = p * q, the full convolution (m + n - 1 elements). See marg::convolve.
 * @param m length of p
 * @param n length of q
 * @param p first operand
 * @param incp stride of p
 * @param q second operand
 * @param incq stride of q
 * @param r output
 * @param incr stride of r
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_convolve_f32(int m, int n, const float* p, int incp, const float* q, int incq,
                              float* r, int incr, void* stream);
/** Double-precision marg_convolve_f32. @copydetails marg_convolve_f32 */
marg_status marg_convolve_f64(int m, int n, const double* p, int incp, const double* q, int incq,
                              double* r, int incr, void* stream);

/**
 * gp = band(q, m)^T g, the gradient with respect to p. See marg::convolve_grad_p.
 * @param m length of p and gp
 * @param n length of q
 * @param g gradient with respect to r (m + n - 1 elements)
 * @param incg stride of g
 * @param q second operand
 * @param incq stride of q
 * @param gp output
 * @param incgp stride of gp
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_convolve_grad_p_f32(int m, int n, const float* g, int incg, const float* q,
                                     int incq, float* gp, int incgp, void* stream);
/** Double-precision marg_convolve_grad_p_f32. @copydetails marg_convolve_grad_p_f32 */
marg_status marg_convolve_grad_p_f64(int m, int n, const double* g, int incg, const double* q,
                                     int incq, double* gp, int incgp, void* stream);

/**
 * gq = band(p, n)^T g, the gradient with respect to q. See marg::convolve_grad_q.
 * @param m length of p
 * @param n length of q and gq
 * @param g gradient with respect to r (m + n - 1 elements)
 * @param incg stride of g
 * @param p first operand
 * @param incp stride of p
 * @param gq output
 * @param incgq stride of gq
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_convolve_grad_q_f32(int m, int n, const float* g, int incg, const float* p,
                                     int incp, float* gq, int incgq, void* stream);
/** Double-precision marg_convolve_grad_q_f32. @copydetails marg_convolve_grad_q_f32 */
marg_status marg_convolve_grad_q_f64(int m, int n, const double* g, int incg, const double* p,
                                     int incp, double* gq, int incgq, void* stream);

/**
 * A batch of convolutions; problem b reads p + b*stridep, q + b*strideq and
 * writes r + b*strider. See marg::convolve_batched.
 * @param m length of each p
 * @param n length of each q
 * @param p first operands
 * @param incp stride within one p
 * @param stridep elements between consecutive p (0: shared)
 * @param q second operands
 * @param incq stride within one q
 * @param strideq elements between consecutive q (0: shared)
 * @param r outputs
 * @param incr stride within one r
 * @param strider elements between consecutive r
 * @param batch number of problems
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_convolve_batched_f32(int m, int n, const float* p, int incp, int64_t stridep,
                                      const float* q, int incq, int64_t strideq, float* r, int incr,
                                      int64_t strider, int batch, void* stream);
/** Double-precision marg_convolve_batched_f32. @copydetails marg_convolve_batched_f32 */
marg_status marg_convolve_batched_f64(int m, int n, const double* p, int incp, int64_t stridep,
                                      const double* q, int incq, int64_t strideq, double* r,
                                      int incr, int64_t strider, int batch, void* stream);

/**
 * A batch of gradients with respect to p. See marg::convolve_grad_p_batched.
 * @param m length of each p
 * @param n length of each q
 * @param g gradients with respect to r
 * @param incg stride within one g
 * @param strideg elements between consecutive g
 * @param q second operands
 * @param incq stride within one q
 * @param strideq elements between consecutive q (0: shared)
 * @param gp outputs
 * @param incgp stride within one gp
 * @param stridegp elements between consecutive gp
 * @param batch number of problems
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_convolve_grad_p_batched_f32(int m, int n, const float* g, int incg,
                                             int64_t strideg, const float* q, int incq,
                                             int64_t strideq, float* gp, int incgp,
                                             int64_t stridegp, int batch, void* stream);
/** Double-precision marg_convolve_grad_p_batched_f32. @copydetails marg_convolve_grad_p_batched_f32
 */
marg_status marg_convolve_grad_p_batched_f64(int m, int n, const double* g, int incg,
                                             int64_t strideg, const double* q, int incq,
                                             int64_t strideq, double* gp, int incgp,
                                             int64_t stridegp, int batch, void* stream);

/**
 * A batch of gradients with respect to q. See marg::convolve_grad_q_batched.
 * @param m length of each p
 * @param n length of each q
 * @param g gradients with respect to r
 * @param incg stride within one g
 * @param strideg elements between consecutive g
 * @param p first operands
 * @param incp stride within one p
 * @param stridep elements between consecutive p (0: shared)
 * @param gq outputs
 * @param incgq stride within one gq
 * @param stridegq elements between consecutive gq
 * @param batch number of problems
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_convolve_grad_q_batched_f32(int m, int n, const float* g, int incg,
                                             int64_t strideg, const float* p, int incp,
                                             int64_t stridep, float* gq, int incgq,
                                             int64_t stridegq, int batch, void* stream);
/** Double-precision marg_convolve_grad_q_batched_f32. @copydetails marg_convolve_grad_q_batched_f32
 */
marg_status marg_convolve_grad_q_batched_f64(int m, int n, const double* g, int incg,
                                             int64_t strideg, const double* p, int incp,
                                             int64_t stridep, double* gq, int incgq,
                                             int64_t stridegq, int batch, void* stream);

/* ---- log space: r_i = log sum_j exp(a_j + b_{i-j}), see marg::log_convolve ---- */

/**
 * Log-space convolution of log-probabilities a and b, exact in every element
 * also below the type's range; -inf entries allowed. See marg::log_convolve.
 * @param m length of a
 * @param n length of b
 * @param a first operand (log-probabilities)
 * @param inca stride of a
 * @param b second operand (log-probabilities)
 * @param incb stride of b
 * @param r output, m + n - 1 elements
 * @param incr stride of r
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_log_convolve_f32(int m, int n, const float* a, int inca, const float* b, int incb,
                                  float* r, int incr, void* stream);
/** Double-precision marg_log_convolve_f32. @copydetails marg_log_convolve_f32 */
marg_status marg_log_convolve_f64(int m, int n, const double* a, int inca, const double* b,
                                  int incb, double* r, int incr, void* stream);

/**
 * A batch of log-space convolutions. See marg::log_convolve_batched.
 * @param m length of each a
 * @param n length of each b
 * @param a first operands
 * @param inca stride within one a
 * @param stridea elements between consecutive a (0: shared)
 * @param b second operands
 * @param incb stride within one b
 * @param strideb elements between consecutive b (0: shared)
 * @param r outputs
 * @param incr stride within one r
 * @param strider elements between consecutive r
 * @param batch number of problems
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_log_convolve_batched_f32(int m, int n, const float* a, int inca, int64_t stridea,
                                          const float* b, int incb, int64_t strideb, float* r,
                                          int incr, int64_t strider, int batch, void* stream);
/** Double-precision marg_log_convolve_batched_f32. @copydetails marg_log_convolve_batched_f32 */
marg_status marg_log_convolve_batched_f64(int m, int n, const double* a, int inca, int64_t stridea,
                                          const double* b, int incb, int64_t strideb, double* r,
                                          int incr, int64_t strider, int batch, void* stream);

/**
 * Vector-Jacobian product of marg_log_convolve with respect to a:
 * ga_j = sum_i g_i exp(a_j + b_{i-j} - r_i). See marg::log_convolve_grad_a.
 * @param m length of a and ga
 * @param n length of b
 * @param g gradient with respect to r (m + n - 1 elements)
 * @param incg stride of g
 * @param a first operand of the forward call
 * @param inca stride of a
 * @param b second operand of the forward call
 * @param incb stride of b
 * @param r result of the forward call
 * @param incr stride of r
 * @param ga output, m elements
 * @param incga stride of ga
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_log_convolve_grad_a_f32(int m, int n, const float* g, int incg, const float* a,
                                         int inca, const float* b, int incb, const float* r,
                                         int incr, float* ga, int incga, void* stream);
/** Double-precision marg_log_convolve_grad_a_f32. @copydetails marg_log_convolve_grad_a_f32 */
marg_status marg_log_convolve_grad_a_f64(int m, int n, const double* g, int incg, const double* a,
                                         int inca, const double* b, int incb, const double* r,
                                         int incr, double* ga, int incga, void* stream);

/**
 * Vector-Jacobian product of marg_log_convolve with respect to b:
 * gb_k = sum_i g_i exp(a_{i-k} + b_k - r_i). See marg::log_convolve_grad_b.
 * @param m length of a
 * @param n length of b and gb
 * @param g gradient with respect to r (m + n - 1 elements)
 * @param incg stride of g
 * @param a first operand of the forward call
 * @param inca stride of a
 * @param b second operand of the forward call
 * @param incb stride of b
 * @param r result of the forward call
 * @param incr stride of r
 * @param gb output, n elements
 * @param incgb stride of gb
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_log_convolve_grad_b_f32(int m, int n, const float* g, int incg, const float* a,
                                         int inca, const float* b, int incb, const float* r,
                                         int incr, float* gb, int incgb, void* stream);
/** Double-precision marg_log_convolve_grad_b_f32. @copydetails marg_log_convolve_grad_b_f32 */
marg_status marg_log_convolve_grad_b_f64(int m, int n, const double* g, int incg, const double* a,
                                         int inca, const double* b, int incb, const double* r,
                                         int incr, double* gb, int incgb, void* stream);

/**
 * log P(x + y = k) for x with weights p on {lower_x, ..., lower_x + m - 1} and
 * y with weights q on {lower_y, ..., lower_y + n - 1}, without forming the PMF
 * of the sum (see marg::log_prob_sum). Weights are normalized as by
 * marg::categorical: non-negative, finite, not all zero.
 * @param m number of weights of x (>= 1)
 * @param p weights of x
 * @param incp stride of p (>= 1)
 * @param lower_x smallest value of x
 * @param n number of weights of y (>= 1)
 * @param q weights of y
 * @param incq stride of q (>= 1)
 * @param lower_y smallest value of y
 * @param k the observed sum
 * @param log_prob receives log P(x + y = k), -infinity when k is impossible
 * @return a status code
 */
marg_status marg_log_prob_sum_f32(int m, const float* p, int incp, int64_t lower_x, int n,
                                  const float* q, int incq, int64_t lower_y, int64_t k,
                                  float* log_prob);
/** Double-precision marg_log_prob_sum_f32. @copydetails marg_log_prob_sum_f32 */
marg_status marg_log_prob_sum_f64(int m, const double* p, int incp, int64_t lower_x, int n,
                                  const double* q, int incq, int64_t lower_y, int64_t k,
                                  double* log_prob);

/* ---- Devices (issue 34): which CUDA device a call runs on -------------- */

/**
 * Makes a CUDA device the calling thread's current device (cudaSetDevice):
 * later calls of this thread with the default (NULL) stream run there; a call
 * on an explicit stream runs on the stream's device (see marg/numeric/device.hpp).
 * @param device a device index in [0, marg_device_count())
 * @return MARG_SUCCESS, MARG_ERROR_INVALID_ARGUMENT for a device out of range
 *         (also without a GPU), or MARG_ERROR_CUDA
 */
marg_status marg_set_device(int device);

/**
 * @param device receives the device that the calling thread's next call with
 *        the default stream runs on (CUDA's current device), or -1 when no GPU
 *        is usable
 * @return MARG_SUCCESS, MARG_ERROR_INVALID_ARGUMENT for a null pointer, or
 *         MARG_ERROR_CUDA
 */
marg_status marg_get_device(int* device);

/**
 * Counters of one device's pool (each device has its own pool and cap).
 * @param device a CUDA device, or -1 for the calling thread's current device
 * @param in_use receives the bytes allocated and not freed (may be NULL)
 * @param reserved receives the bytes obtained from the system (may be NULL)
 * @param limit receives the cap on reserved bytes (may be NULL)
 * @return MARG_SUCCESS or MARG_ERROR_INVALID_ARGUMENT for a device out of range
 */
marg_status marg_device_pool_stats(int device, size_t* in_use, size_t* reserved, size_t* limit);

/**
 * Sets the cap on one device's pool.
 * @param device a CUDA device, or -1 for the calling thread's current device
 * @param bytes the new cap (>= 1)
 * @return MARG_SUCCESS or MARG_ERROR_INVALID_ARGUMENT
 */
marg_status marg_set_device_pool_limit(int device, size_t bytes);

/* ---- end of the device section ------------------------------------------ */

#ifdef __cplusplus
}
#endif

#endif /* MARG_MARG_H */
