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

/** How the CUDA backend picks a kernel variant (see marg::planner_mode). */
typedef enum marg_planner_mode {
  MARG_PLANNER_ESTIMATE = 0, /**< the planner's rules and wisdom held (default) */
  MARG_PLANNER_MEASURE = 1,  /**< also time the variants of a shape class without wisdom */
  /** not a mode: gives the enum the range of int */
  MARG_PLANNER_MAX_ENUM = 0x7FFFFFFF
} marg_planner_mode;

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
 * Why the CUDA backend cannot run here, if it cannot (see
 * marg::cuda_unusable_reason): no CUDA backend in this build, no driver or
 * device, a device older than compute capability 7.5, or a device whose
 * architecture this build has no kernel code for. Then MARG_BACKEND_AUTOMATIC
 * computes on the CPU and marg_set_backend(MARG_BACKEND_CUDA) fails.
 * @return "" when the CUDA backend is usable, else one sentence (static
 *         storage)
 */
const char* marg_cuda_unusable_reason(void);

/**
 * Sets the planner mode for later calls (process-wide; see
 * marg::set_planner_mode): MARG_PLANNER_MEASURE times every variant that can
 * run the first product of a shape class without wisdom and keeps the
 * fastest.
 * @param mode the mode
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT for another value
 */
marg_status marg_set_planner_mode(marg_planner_mode mode);

/**
 * @param mode receives the planner mode
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT for a null pointer or
 *         a bad MARG_PLAN
 */
marg_status marg_get_planner_mode(marg_planner_mode* mode);

/**
 * Writes the wisdom held to a file, replacing it (see marg::export_wisdom).
 * @param path the file, 0-terminated
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT for a null path or a
 *         file that cannot be written (the message names it)
 */
marg_status marg_export_wisdom(const char* path);

/**
 * Adds wisdom from a file that marg_export_wisdom or marg::export_wisdom
 * wrote (see marg::import_wisdom).
 * @param path the file, 0-terminated
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT for a null path, a
 *         file that cannot be read, or the first bad line (the message names
 *         the file; nothing is imported then)
 */
marg_status marg_import_wisdom(const char* path);

/**
 * The wisdom held, as text (see marg::wisdom_text).
 * @param text receives the text and a terminating 0 when it fits in
 *        capacity bytes (may be null when capacity is 0)
 * @param capacity bytes at text
 * @param length receives the text's length without the terminating 0
 *        (capacity must exceed it)
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT for a null length or
 *         a text that does not fit (length then says how long it is)
 */
marg_status marg_export_wisdom_text(char* text, size_t capacity, size_t* length);

/**
 * Adds wisdom from text that marg_export_wisdom_text or marg::wisdom_text
 * wrote (see marg::import_wisdom_text).
 * @param text the wisdom, 0-terminated
 * @return MARG_SUCCESS, or MARG_ERROR_INVALID_ARGUMENT naming the first bad
 *         line (nothing is imported then)
 */
marg_status marg_import_wisdom_text(const char* text);

/**
 * Forgets all wisdom (see marg::forget_wisdom).
 * @return MARG_SUCCESS
 */
marg_status marg_forget_wisdom(void);

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
 * log P(x + y = k) = log sum_j p_j q_{k - lower_x - lower_y - j} for x with
 * probabilities p on {lower_x, ..., lower_x + m - 1} and y with q on
 * {lower_y, ..., lower_y + n - 1}, without forming the PMF of the sum.
 * Like every numeric call (marg_convolve_*), it takes the values as given and
 * does not normalize them: unnormalized weights give the log of the
 * unnormalized sum (build a marg_pmf with marg_pmf_categorical_* to
 * normalize). p and q may be host, managed or device memory; the call waits
 * for the work queued on `stream` before reading them, and returns with
 * *log_prob (host memory) written. The sum is taken in long double.
 * @param m number of values of p (>= 1)
 * @param p probabilities of x, finite and >= 0
 * @param incp stride of p (>= 1)
 * @param lower_x smallest value of x
 * @param n number of values of q (>= 1)
 * @param q probabilities of y, finite and >= 0
 * @param incq stride of q (>= 1)
 * @param lower_y smallest value of y
 * @param k the observed sum
 * @param log_prob receives log P(x + y = k), -infinity when k is impossible
 * @param stream a cudaStream_t or NULL
 * @return a status code
 */
marg_status marg_log_prob_sum_f32(int m, const float* p, int incp, int64_t lower_x, int n,
                                  const float* q, int incq, int64_t lower_y, int64_t k,
                                  float* log_prob, void* stream);
/** Double-precision marg_log_prob_sum_f32. @copydetails marg_log_prob_sum_f32 */
marg_status marg_log_prob_sum_f64(int m, const double* p, int incp, int64_t lower_x, int n,
                                  const double* q, int incq, int64_t lower_y, int64_t k,
                                  double* log_prob, void* stream);

/* ======================================================================
 * Distributions: pmf handles (see marg::pmf and docs/embedding.md)
 *
 * A marg_pmf is an immutable probability mass function on lower..upper that
 * carries its element type (float or double). Handles are created by the
 * factories and operations below and freed with marg_pmf_destroy; copying
 * one (marg_pmf_copy) shares its storage. A handle may be read from several
 * threads at once. Every array these calls read or write is host memory
 * (the C++ calls take and return std::vector); the probabilities themselves
 * live in the pool (device-visible managed memory with a GPU).
 *
 * Normalization: the factories normalize (categorical weights are divided
 * by their sum); the numeric calls above never do. The _f32/_f64 suffix of
 * a call names the element type of its array arguments; a handle of the
 * other type gives MARG_ERROR_INVALID_ARGUMENT. Calls without a suffix take
 * handles of either type (both operands of the same type) and report
 * log-likelihoods in double. On failure nothing is written to any output.
 * ====================================================================== */

/** An opaque pmf handle. */
typedef struct marg_pmf marg_pmf;

/** Element types of handles. */
typedef enum marg_dtype {
  MARG_DTYPE_F32 = 0,              /**< float */
  MARG_DTYPE_F64 = 1,              /**< double */
  MARG_DTYPE_MAX_ENUM = 0x7FFFFFFF /**< not a type: gives the enum the range of int */
} marg_dtype;

/**
 * Frees a handle (other handles sharing its storage are unaffected).
 * @param x a handle, or NULL
 */
void marg_pmf_destroy(marg_pmf* x);

/**
 * A second handle on the same pmf (O(1): the storage is shared).
 * @param x the pmf
 * @param out receives the new handle
 * @return a status code
 */
marg_status marg_pmf_copy(const marg_pmf* x, marg_pmf** out);

/**
 * @param x the pmf
 * @param dtype receives its element type
 * @return a status code
 */
marg_status marg_pmf_dtype(const marg_pmf* x, marg_dtype* dtype);

/**
 * The support lower..upper.
 * @param x the pmf
 * @param lower receives the smallest value (may be NULL)
 * @param upper receives the largest value (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_support(const marg_pmf* x, int64_t* lower, int64_t* upper);

/**
 * @param x the pmf
 * @param size receives upper - lower + 1
 * @return a status code
 */
marg_status marg_pmf_size(const marg_pmf* x, int64_t* size);

/**
 * Host copy of P(x = lower), ..., P(x = upper).
 * @param x the pmf (float)
 * @param out receives the probabilities
 * @param count capacity of out, >= the size of x (size values are written)
 * @return a status code
 */
marg_status marg_pmf_probs_f32(const marg_pmf* x, float* out, int64_t count);
/** Double-precision marg_pmf_probs_f32. @copydetails marg_pmf_probs_f32 */
marg_status marg_pmf_probs_f64(const marg_pmf* x, double* out, int64_t count);

/**
 * Host copy of log P(x = lower), ..., log P(x = upper), finite wherever the
 * probability is non-zero, also below the type's range.
 * @param x the pmf (float)
 * @param out receives the log-probabilities
 * @param count capacity of out, >= the size of x (size values are written)
 * @return a status code
 */
marg_status marg_pmf_log_probs_f32(const marg_pmf* x, float* out, int64_t count);
/** Double-precision marg_pmf_log_probs_f32. @copydetails marg_pmf_log_probs_f32 */
marg_status marg_pmf_log_probs_f64(const marg_pmf* x, double* out, int64_t count);

/**
 * P(x = k); 0 outside the support.
 * @param x the pmf (float)
 * @param k a value
 * @param out receives the probability
 * @return a status code
 */
marg_status marg_pmf_prob_f32(const marg_pmf* x, int64_t k, float* out);
/** Double-precision marg_pmf_prob_f32. @copydetails marg_pmf_prob_f32 */
marg_status marg_pmf_prob_f64(const marg_pmf* x, int64_t k, double* out);

/**
 * log P(x = k); -infinity outside the support or where it is 0.
 * @param x the pmf (float)
 * @param k a value
 * @param out receives the log-probability
 * @return a status code
 */
marg_status marg_pmf_log_prob_f32(const marg_pmf* x, int64_t k, float* out);
/** Double-precision marg_pmf_log_prob_f32. @copydetails marg_pmf_log_prob_f32 */
marg_status marg_pmf_log_prob_f64(const marg_pmf* x, int64_t k, double* out);

/**
 * P(x <= k).
 * @param x the pmf (float)
 * @param k a value
 * @param out receives the probability
 * @return a status code
 */
marg_status marg_pmf_cdf_f32(const marg_pmf* x, int64_t k, float* out);
/** Double-precision marg_pmf_cdf_f32. @copydetails marg_pmf_cdf_f32 */
marg_status marg_pmf_cdf_f64(const marg_pmf* x, int64_t k, double* out);

/**
 * E[x].
 * @param x the pmf (float)
 * @param out receives the mean
 * @return a status code
 */
marg_status marg_pmf_mean_f32(const marg_pmf* x, float* out);
/** Double-precision marg_pmf_mean_f32. @copydetails marg_pmf_mean_f32 */
marg_status marg_pmf_mean_f64(const marg_pmf* x, double* out);

/**
 * Var[x].
 * @param x the pmf (float)
 * @param out receives the variance
 * @return a status code
 */
marg_status marg_pmf_variance_f32(const marg_pmf* x, float* out);
/** Double-precision marg_pmf_variance_f32. @copydetails marg_pmf_variance_f32 */
marg_status marg_pmf_variance_f64(const marg_pmf* x, double* out);

/**
 * The mass a truncated family dropped (0 for bounded families).
 * @param x the pmf (float)
 * @param out receives the mass
 * @return a status code
 */
marg_status marg_pmf_truncated_mass_f32(const marg_pmf* x, float* out);
/** Double-precision marg_pmf_truncated_mass_f32. @copydetails marg_pmf_truncated_mass_f32 */
marg_status marg_pmf_truncated_mass_f64(const marg_pmf* x, double* out);

/* ---- factories (see marg::categorical and the others); tail == 0 means the
 *      default tail (1e-38 for float, 1e-300 for double) ---- */

/**
 * Categorical law on lower, lower+1, ... proportional to `weights`.
 * @param weights count non-negative finite weights, not all zero (host memory)
 * @param count number of weights (>= 1)
 * @param lower the value of the first weight
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_categorical_f32(const float* weights, int64_t count, int64_t lower,
                                     marg_pmf** out);
/** Double-precision marg_pmf_categorical_f32. @copydetails marg_pmf_categorical_f32 */
marg_status marg_pmf_categorical_f64(const double* weights, int64_t count, int64_t lower,
                                     marg_pmf** out);

/**
 * Categorical law proportional to exp(log_weights) (see marg::categorical_log).
 * @param log_weights count log-weights, numbers or -inf, not all -inf (host memory)
 * @param count number of log-weights (>= 1)
 * @param lower the value of the first weight
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_categorical_log_f32(const float* log_weights, int64_t count, int64_t lower,
                                         marg_pmf** out);
/** Double-precision marg_pmf_categorical_log_f32. @copydetails marg_pmf_categorical_log_f32 */
marg_status marg_pmf_categorical_log_f64(const double* log_weights, int64_t count, int64_t lower,
                                         marg_pmf** out);

/**
 * Bernoulli(p) on {0, 1}.
 * @param p success probability in [0, 1]
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_bernoulli_f32(float p, marg_pmf** out);
/** Double-precision marg_pmf_bernoulli_f32. @copydetails marg_pmf_bernoulli_f32 */
marg_status marg_pmf_bernoulli_f64(double p, marg_pmf** out);

/**
 * Binomial(n, p) on 0..n.
 * @param n number of trials, 0 <= n < INT_MAX
 * @param p success probability in [0, 1]
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_binomial_f32(int64_t n, float p, marg_pmf** out);
/** Double-precision marg_pmf_binomial_f32. @copydetails marg_pmf_binomial_f32 */
marg_status marg_pmf_binomial_f64(int64_t n, double p, marg_pmf** out);

/**
 * Uniform on a..b.
 * @param a smallest value
 * @param b largest value, a <= b
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_uniform_int_f32(int64_t a, int64_t b, marg_pmf** out);
/** Double-precision marg_pmf_uniform_int_f32. @copydetails marg_pmf_uniform_int_f32 */
marg_status marg_pmf_uniform_int_f64(int64_t a, int64_t b, marg_pmf** out);

/**
 * Beta-binomial(n, a, b) on 0..n.
 * @param n number of trials, 0 <= n < INT_MAX
 * @param a first shape, finite and > 0
 * @param b second shape, finite and > 0
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_beta_binomial_f32(int64_t n, float a, float b, marg_pmf** out);
/** Double-precision marg_pmf_beta_binomial_f32. @copydetails marg_pmf_beta_binomial_f32 */
marg_status marg_pmf_beta_binomial_f64(int64_t n, double a, double b, marg_pmf** out);

/**
 * Poisson(lambda), truncated where the remaining mass falls below `tail`.
 * @param lambda the mean, finite and >= 0
 * @param tail bound on the dropped mass, in (0, 1), or 0 for the default
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_poisson_f32(float lambda, float tail, marg_pmf** out);
/** Double-precision marg_pmf_poisson_f32. @copydetails marg_pmf_poisson_f32 */
marg_status marg_pmf_poisson_f64(double lambda, double tail, marg_pmf** out);

/**
 * Geometric(p): failures before the first success, truncated.
 * @param p success probability in (0, 1]
 * @param tail bound on the dropped mass, in (0, 1), or 0 for the default
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_geometric_f32(float p, float tail, marg_pmf** out);
/** Double-precision marg_pmf_geometric_f32. @copydetails marg_pmf_geometric_f32 */
marg_status marg_pmf_geometric_f64(double p, double tail, marg_pmf** out);

/**
 * Negative binomial(r, p): failures before the r-th success, truncated.
 * @param r number of successes, finite and > 0
 * @param p success probability in (0, 1]
 * @param tail bound on the dropped mass, in (0, 1), or 0 for the default
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_negative_binomial_f32(float r, float p, float tail, marg_pmf** out);
/** Double-precision marg_pmf_negative_binomial_f32.
 *  @copydetails marg_pmf_negative_binomial_f32 */
marg_status marg_pmf_negative_binomial_f64(double r, double p, double tail, marg_pmf** out);

/**
 * The point mass at k.
 * @param k the value
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_delta_f32(int64_t k, marg_pmf** out);
/** Double-precision marg_pmf_delta_f32. @copydetails marg_pmf_delta_f32 */
marg_status marg_pmf_delta_f64(int64_t k, marg_pmf** out);

/* ---- algebra of independent pmfs (see marg::operator+ and marg::sum) ---- */

/**
 * The law of x + y.
 * @param x first term
 * @param y second term (same type)
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_add(const marg_pmf* x, const marg_pmf* y, marg_pmf** out);

/**
 * The law of x - y.
 * @param x first term
 * @param y subtracted term (same type)
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_sub(const marg_pmf* x, const marg_pmf* y, marg_pmf** out);

/**
 * The law of -x.
 * @param x the pmf
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_neg(const marg_pmf* x, marg_pmf** out);

/**
 * The law of x + k (O(1), shares storage).
 * @param x the pmf
 * @param k the shift
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_shift(const marg_pmf* x, int64_t k, marg_pmf** out);

/**
 * The law of the sum of independent terms (balanced tree, see marg::sum).
 * @param xs count handles of one type (host array)
 * @param count number of terms, >= 1 (the element type comes from the terms)
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_sum(const marg_pmf* const* xs, int64_t count, marg_pmf** out);

/* ---- observing x + y (see marg::log_prob_sum, marg::condition_on_sum) ---- */

/**
 * log P(x + y = k) in O(min(m, n)).
 * @param x first term
 * @param y second term (same type)
 * @param k the observed sum
 * @param out receives the log probability (-infinity when impossible)
 * @return a status code
 */
marg_status marg_pmf_log_prob_sum(const marg_pmf* x, const marg_pmf* y, int64_t k, double* out);

/**
 * Posteriors of x and y given x + y = k. When the observation is impossible
 * *log_likelihood is -infinity and *first, *second are NULL.
 * @param x first term
 * @param y second term (same type)
 * @param k the observed sum
 * @param log_likelihood receives log P(x + y = k) (may be NULL)
 * @param first receives the posterior of x (may be NULL: not made)
 * @param second receives the posterior of y (may be NULL: not made)
 * @return a status code
 */
marg_status marg_pmf_condition_on_sum(const marg_pmf* x, const marg_pmf* y, int64_t k,
                                      double* log_likelihood, marg_pmf** first, marg_pmf** second);

/**
 * Posteriors of x and y given soft evidence L on x + y; L[i] belongs to the
 * value lower(x) + lower(y) + i. Impossible evidence: -infinity and NULL handles.
 * @param x first term (float)
 * @param y second term (float)
 * @param likelihood count finite non-negative values (host memory)
 * @param count size(x) + size(y) - 1
 * @param log_likelihood receives log sum_i P(x + y = i) L_i (may be NULL)
 * @param first receives the posterior of x (may be NULL)
 * @param second receives the posterior of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_condition_on_sum_soft_f32(const marg_pmf* x, const marg_pmf* y,
                                               const float* likelihood, int64_t count,
                                               double* log_likelihood, marg_pmf** first,
                                               marg_pmf** second);
/** Double-precision marg_pmf_condition_on_sum_soft_f32.
 *  @copydetails marg_pmf_condition_on_sum_soft_f32 */
marg_status marg_pmf_condition_on_sum_soft_f64(const marg_pmf* x, const marg_pmf* y,
                                               const double* likelihood, int64_t count,
                                               double* log_likelihood, marg_pmf** first,
                                               marg_pmf** second);

/**
 * As marg_pmf_condition_on_sum_soft_f32 with the evidence given as log L_i
 * (each finite or -infinity), for evidence below the type's range.
 * @param x first term (float)
 * @param y second term (float)
 * @param log_likelihood_values count log-likelihoods (host memory)
 * @param count size(x) + size(y) - 1
 * @param log_likelihood receives log sum_i P(x + y = i) L_i (may be NULL)
 * @param first receives the posterior of x (may be NULL)
 * @param second receives the posterior of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_condition_on_sum_log_f32(const marg_pmf* x, const marg_pmf* y,
                                              const float* log_likelihood_values, int64_t count,
                                              double* log_likelihood, marg_pmf** first,
                                              marg_pmf** second);
/** Double-precision marg_pmf_condition_on_sum_log_f32.
 *  @copydetails marg_pmf_condition_on_sum_log_f32 */
marg_status marg_pmf_condition_on_sum_log_f64(const marg_pmf* x, const marg_pmf* y,
                                              const double* log_likelihood_values, int64_t count,
                                              double* log_likelihood, marg_pmf** first,
                                              marg_pmf** second);

/**
 * The law of x + y given soft evidence L (see marg::sum_given_evidence);
 * NULL when the evidence is impossible.
 * @param x first term (float)
 * @param y second term (float)
 * @param likelihood count finite non-negative values (host memory)
 * @param count size(x) + size(y) - 1
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_sum_given_evidence_f32(const marg_pmf* x, const marg_pmf* y,
                                            const float* likelihood, int64_t count, marg_pmf** out);
/** Double-precision marg_pmf_sum_given_evidence_f32.
 *  @copydetails marg_pmf_sum_given_evidence_f32 */
marg_status marg_pmf_sum_given_evidence_f64(const marg_pmf* x, const marg_pmf* y,
                                            const double* likelihood, int64_t count,
                                            marg_pmf** out);

/* ---- sampling with caller-supplied uniforms in [0, 1): any host generator
 *      drives it; the C++ samplers draw generate_canonical<double, 53>(g)
 *      and give the same values for the same uniforms ---- */

/**
 * One draw by inversion (marg::pmf::sample).
 * @param x the pmf
 * @param u a uniform number in [0, 1)
 * @param out receives the value
 * @return a status code
 */
marg_status marg_pmf_sample(const marg_pmf* x, double u, int64_t* out);

/**
 * A joint draw of (x, y) given x + y = k (marg::sample_given_sum).
 * @param x first term
 * @param y second term (same type)
 * @param k the observed sum (must be possible)
 * @param u a uniform number in [0, 1)
 * @param x_value receives the draw of x
 * @param y_value receives k - x_value
 * @return a status code
 */
marg_status marg_pmf_sample_given_sum(const marg_pmf* x, const marg_pmf* y, int64_t k, double u,
                                      int64_t* x_value, int64_t* y_value);

/**
 * A joint draw of (x, y) given soft evidence L on x + y
 * (marg::sample_given_evidence): u_sum draws the sum, u_x then x given it.
 * @param x first term (float)
 * @param y second term (float)
 * @param likelihood count finite non-negative values (host memory)
 * @param count size(x) + size(y) - 1
 * @param u_sum a uniform number in [0, 1)
 * @param u_x a uniform number in [0, 1)
 * @param x_value receives the draw of x
 * @param y_value receives the draw of y
 * @return a status code
 */
marg_status marg_pmf_sample_given_evidence_f32(const marg_pmf* x, const marg_pmf* y,
                                               const float* likelihood, int64_t count, double u_sum,
                                               double u_x, int64_t* x_value, int64_t* y_value);
/** Double-precision marg_pmf_sample_given_evidence_f32.
 *  @copydetails marg_pmf_sample_given_evidence_f32 */
marg_status marg_pmf_sample_given_evidence_f64(const marg_pmf* x, const marg_pmf* y,
                                               const double* likelihood, int64_t count,
                                               double u_sum, double u_x, int64_t* x_value,
                                               int64_t* y_value);

/* ---- gradients (see marg::sum_grad, marg::log_prob_sum_grad) ---- */

/**
 * Reverse mode through r = x + y: gx = band(q, m)^T g, gy = band(p, n)^T g.
 * @param x first term (float)
 * @param y second term (float)
 * @param g df/dr over the support of x + y (host memory)
 * @param count size(x) + size(y) - 1
 * @param gx receives df/dp (size(x) values)
 * @param count_x capacity of gx, >= size(x)
 * @param gy receives df/dq (size(y) values)
 * @param count_y capacity of gy, >= size(y)
 * @return a status code
 */
marg_status marg_pmf_sum_grad_f32(const marg_pmf* x, const marg_pmf* y, const float* g,
                                  int64_t count, float* gx, int64_t count_x, float* gy,
                                  int64_t count_y);
/** Double-precision marg_pmf_sum_grad_f32. @copydetails marg_pmf_sum_grad_f32 */
marg_status marg_pmf_sum_grad_f64(const marg_pmf* x, const marg_pmf* y, const double* g,
                                  int64_t count, double* gx, int64_t count_x, double* gy,
                                  int64_t count_y);

/**
 * Gradient of log P(x + y = k) with respect to the probabilities of x and y.
 * @param x first term (float)
 * @param y second term (float)
 * @param k the observed sum (must be possible)
 * @param gx receives d/dp (size(x) values)
 * @param count_x capacity of gx, >= size(x)
 * @param gy receives d/dq (size(y) values)
 * @param count_y capacity of gy, >= size(y)
 * @return a status code
 */
marg_status marg_pmf_log_prob_sum_grad_f32(const marg_pmf* x, const marg_pmf* y, int64_t k,
                                           float* gx, int64_t count_x, float* gy, int64_t count_y);
/** Double-precision marg_pmf_log_prob_sum_grad_f32.
 *  @copydetails marg_pmf_log_prob_sum_grad_f32 */
marg_status marg_pmf_log_prob_sum_grad_f64(const marg_pmf* x, const marg_pmf* y, int64_t k,
                                           double* gx, int64_t count_x, double* gy,
                                           int64_t count_y);

/* ======================================================================
 * Distributions: pmf batch handles (see marg::pmf_batch): B pmfs padded to a
 * common length, each operation one batched call. Arrays are host memory.
 * ====================================================================== */

/** An opaque handle on a batch of pmfs. */
typedef struct marg_pmf_batch marg_pmf_batch;

/** Soft evidence over the sums of two batches, kept in pool memory (marg::batch_evidence). */
typedef struct marg_batch_evidence marg_batch_evidence;

/**
 * Frees a batch handle.
 * @param x a handle, or NULL
 */
void marg_pmf_batch_destroy(marg_pmf_batch* x);

/**
 * Frees an evidence handle.
 * @param e a handle, or NULL
 */
void marg_batch_evidence_destroy(marg_batch_evidence* e);

/**
 * A second handle on the same batch (O(1)).
 * @param x the batch
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_copy(const marg_pmf_batch* x, marg_pmf_batch** out);

/**
 * A batch from pmfs of one type, padded with zeros to the longest.
 * @param rows count handles (host array)
 * @param count number of rows, >= 1
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_from_rows(const marg_pmf* const* rows, int count, marg_pmf_batch** out);

/**
 * A batch from a row-major padded buffer (checked).
 * @param batch number of rows, >= 1
 * @param length padded row length, >= 1
 * @param lowers batch lower bounds (host memory)
 * @param values batch * length probabilities or weights, finite, >= 0, no row all zero
 * @param normalize non-zero: divide each row by its sum
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_create_f32(int batch, int length, const int64_t* lowers,
                                      const float* values, int normalize, marg_pmf_batch** out);
/** Double-precision marg_pmf_batch_create_f32. @copydetails marg_pmf_batch_create_f32 */
marg_status marg_pmf_batch_create_f64(int batch, int length, const int64_t* lowers,
                                      const double* values, int normalize, marg_pmf_batch** out);

/**
 * Binomial(ns[b], ps[b]) per row, each trimmed to the window holding all but
 * `tail` of its mass at each end (marg::binomial_batch).
 * @param batch number of rows, >= 1
 * @param ns trials per row (host memory)
 * @param ps success probability per row (host memory)
 * @param tail the largest mass dropped at either end, in (0, 1)
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_binomial_f32(int batch, const int64_t* ns, const double* ps, double tail,
                                        marg_pmf_batch** out);
/** Double-precision marg_pmf_batch_binomial_f32. @copydetails marg_pmf_batch_binomial_f32 */
marg_status marg_pmf_batch_binomial_f64(int batch, const int64_t* ns, const double* ps, double tail,
                                        marg_pmf_batch** out);

/**
 * @param x the batch
 * @param dtype receives its element type (may be NULL)
 * @param batch receives the number of rows (may be NULL)
 * @param length receives the padded row length (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_batch_shape(const marg_pmf_batch* x, marg_dtype* dtype, int* batch,
                                 int* length);

/**
 * @param x the batch
 * @param out receives the lower bound of every row
 * @param count capacity of out, >= the number of rows
 * @return a status code
 */
marg_status marg_pmf_batch_lowers(const marg_pmf_batch* x, int64_t* out, int64_t count);

/**
 * Host copy of the row-major padded probabilities.
 * @param x the batch (float)
 * @param out receives batch * length values
 * @param count capacity of out, >= batch * length
 * @return a status code
 */
marg_status marg_pmf_batch_probs_f32(const marg_pmf_batch* x, float* out, int64_t count);
/** Double-precision marg_pmf_batch_probs_f32. @copydetails marg_pmf_batch_probs_f32 */
marg_status marg_pmf_batch_probs_f64(const marg_pmf_batch* x, double* out, int64_t count);

/**
 * Host copy of the row-major padded log-probabilities: finite wherever a
 * probability is non-zero, also below the type's range (rows with such
 * values keep their log-probabilities), -inf at zeros and padding.
 * @param x the batch (float)
 * @param out receives batch * length values
 * @param count capacity of out, >= batch * length
 * @return a status code
 */
marg_status marg_pmf_batch_log_probs_f32(const marg_pmf_batch* x, float* out, int64_t count);
/** Double-precision marg_pmf_batch_log_probs_f32. @copydetails marg_pmf_batch_log_probs_f32 */
marg_status marg_pmf_batch_log_probs_f64(const marg_pmf_batch* x, double* out, int64_t count);

/**
 * Row b as a pmf handle; NULL when the row is all zero (the posterior of an
 * impossible observation).
 * @param x the batch
 * @param b the row, 0 <= b < batch
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_row(const marg_pmf_batch* x, int b, marg_pmf** out);

/**
 * Row-wise x_b + y_b (y of x's rows, or of 1 row shared by all).
 * @param x batch
 * @param y batch (same type)
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_add(const marg_pmf_batch* x, const marg_pmf_batch* y,
                               marg_pmf_batch** out);

/**
 * Row-wise x_b + y for one pmf y.
 * @param x batch
 * @param y the common term (same type)
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_add_pmf(const marg_pmf_batch* x, const marg_pmf* y,
                                   marg_pmf_batch** out);

/**
 * Row-wise x_b - y_b.
 * @param x batch
 * @param y batch (same type; x's rows or 1)
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_sub(const marg_pmf_batch* x, const marg_pmf_batch* y,
                               marg_pmf_batch** out);

/**
 * Row-wise -x_b.
 * @param x batch
 * @param out receives the handle
 * @return a status code
 */
marg_status marg_pmf_batch_neg(const marg_pmf_batch* x, marg_pmf_batch** out);

/**
 * Row-wise log P(x_b + y_b = k_b).
 * @param x batch
 * @param y batch (same type; x's rows or 1)
 * @param k one observed sum per row of x (host memory)
 * @param count number of rows of x
 * @param out receives count log-likelihoods (-infinity where impossible)
 * @return a status code
 */
marg_status marg_pmf_batch_log_prob_sum(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                        const int64_t* k, int count, double* out);

/**
 * Row-wise hard evidence x_b + y_b = k_b: log-likelihoods and posterior rows
 * (all zero where impossible).
 * @param x batch
 * @param y batch (same type; x's rows or 1)
 * @param k one observed sum per row (host memory)
 * @param count number of rows of x
 * @param log_likelihood receives count values (may be NULL)
 * @param first receives the posterior rows of x (may be NULL)
 * @param second receives the posterior rows of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_batch_condition_on_sum(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                            const int64_t* k, int count, double* log_likelihood,
                                            marg_pmf_batch** first, marg_pmf_batch** second);

/**
 * Row-wise soft evidence on x_b + y_b.
 * @param x batch (float)
 * @param y batch (float; x's rows or 1)
 * @param likelihood row-major batch x (length(x) + length(y) - 1), finite, >= 0
 * @param count number of likelihood values
 * @param log_likelihood receives batch values (may be NULL)
 * @param first receives the posterior rows of x (may be NULL)
 * @param second receives the posterior rows of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_batch_condition_on_sum_soft_f32(const marg_pmf_batch* x,
                                                     const marg_pmf_batch* y,
                                                     const float* likelihood, int64_t count,
                                                     double* log_likelihood, marg_pmf_batch** first,
                                                     marg_pmf_batch** second);
/** Double-precision marg_pmf_batch_condition_on_sum_soft_f32.
 *  @copydetails marg_pmf_batch_condition_on_sum_soft_f32 */
marg_status marg_pmf_batch_condition_on_sum_soft_f64(const marg_pmf_batch* x,
                                                     const marg_pmf_batch* y,
                                                     const double* likelihood, int64_t count,
                                                     double* log_likelihood, marg_pmf_batch** first,
                                                     marg_pmf_batch** second);

/**
 * Reverse mode through r_b = x_b + y_b for every row (marg::sum_grad of batches).
 * @param x batch (float)
 * @param y batch (float; x's rows, or 1 row shared by all: then row b of gy
 *        is row b's contribution)
 * @param g row-major batch x (length(x) + length(y) - 1) values df/dr (host memory)
 * @param count number of values of g
 * @param gx receives batch x length(x) values df/dp, row-major
 * @param count_x capacity of gx
 * @param gy receives batch x length(y) values df/dq, row-major
 * @param count_y capacity of gy
 * @return a status code
 */
marg_status marg_pmf_batch_sum_grad_f32(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                        const float* g, int64_t count, float* gx, int64_t count_x,
                                        float* gy, int64_t count_y);
/** Double-precision marg_pmf_batch_sum_grad_f32. @copydetails marg_pmf_batch_sum_grad_f32 */
marg_status marg_pmf_batch_sum_grad_f64(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                        const double* g, int64_t count, double* gx, int64_t count_x,
                                        double* gy, int64_t count_y);

/**
 * Row-wise joint draw of (x_b, y_b) given soft evidence rows L_b on their sum
 * (marg::sample_given_evidence, vector form): u[2b] draws the sum of row b,
 * u[2b+1] then x_b. Impossible rows: -infinity and draws 0.
 * @param x batch (float)
 * @param y batch (float; x's rows or 1)
 * @param likelihood row-major batch x (length(x) + length(y) - 1), finite, >= 0
 * @param count number of likelihood values
 * @param u 2 * batch uniforms in [0, 1) (host memory)
 * @param count_u number of uniforms, 2 * batch
 * @param log_likelihood receives batch values (may be NULL)
 * @param x_values receives batch draws of x (may be NULL)
 * @param y_values receives batch draws of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_batch_sample_given_evidence_soft_f32(
    const marg_pmf_batch* x, const marg_pmf_batch* y, const float* likelihood, int64_t count,
    const double* u, int64_t count_u, double* log_likelihood, int64_t* x_values, int64_t* y_values);
/** Double-precision marg_pmf_batch_sample_given_evidence_soft_f32.
 *  @copydetails marg_pmf_batch_sample_given_evidence_soft_f32 */
marg_status marg_pmf_batch_sample_given_evidence_soft_f64(
    const marg_pmf_batch* x, const marg_pmf_batch* y, const double* likelihood, int64_t count,
    const double* u, int64_t count_u, double* log_likelihood, int64_t* x_values, int64_t* y_values);

/**
 * Evidence from a binomially thinned count (marg::binomial_count_evidence):
 * row b holds P(Binomial(offsets[b] + z, rhos[b]) = observed[b]) over the
 * padded support z of x_b + y_b, 0 where offsets[b] + z > n_max. Each of
 * offsets, observed, rhos holds batch values or 1 shared by all rows.
 * @param x batch
 * @param y batch (same type; x's rows or 1)
 * @param offsets N at sum 0 (host memory)
 * @param n_offsets number of offsets (batch or 1)
 * @param observed observed counts, >= 0 (host memory)
 * @param n_observed number of observed counts (batch or 1)
 * @param rhos reporting probabilities in [0, 1] (host memory)
 * @param n_rhos number of rhos (batch or 1)
 * @param n_max the largest possible N, >= 0
 * @param out receives the evidence handle
 * @return a status code
 */
marg_status marg_batch_evidence_binomial_count(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                               const int64_t* offsets, int n_offsets,
                                               const int64_t* observed, int n_observed,
                                               const double* rhos, int n_rhos, int64_t n_max,
                                               marg_batch_evidence** out);

/**
 * Posteriors of every row given evidence from marg_batch_evidence_binomial_count
 * (marg::condition_on_sum, batch_evidence form): all-zero rows where impossible.
 * @param x batch
 * @param y batch (same type; x's rows or 1)
 * @param evidence from marg_batch_evidence_binomial_count for x and y
 * @param log_likelihood receives batch values, the evidence's scale included (may be NULL)
 * @param first receives the posterior rows of x (may be NULL)
 * @param second receives the posterior rows of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_batch_condition_on_evidence(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                                 const marg_batch_evidence* evidence,
                                                 double* log_likelihood, marg_pmf_batch** first,
                                                 marg_pmf_batch** second);

/**
 * Row-wise joint draw of (x_b, y_b) given evidence on their sum, with the
 * row's log-likelihood (marg::sample_given_evidence): u[2b] draws the sum of
 * row b, u[2b+1] then x_b. Impossible rows: -infinity and draws 0.
 * @param x batch
 * @param y batch (same type; x's rows or 1)
 * @param evidence from marg_batch_evidence_binomial_count for x and y
 * @param u 2 * batch uniforms in [0, 1) (host memory)
 * @param count number of uniforms, 2 * batch
 * @param log_likelihood receives batch values (may be NULL)
 * @param x_values receives batch draws of x (may be NULL)
 * @param y_values receives batch draws of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_batch_sample_given_evidence(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                                 const marg_batch_evidence* evidence,
                                                 const double* u, int64_t count,
                                                 double* log_likelihood, int64_t* x_values,
                                                 int64_t* y_values);

/**
 * Row-wise joint draw given x_b + y_b = k_b (marg::sample_given_sum): u[2b]
 * draws x_b (u[2b+1] is unused). Impossible rows: -infinity and draws 0.
 * @param x batch
 * @param y batch (same type; x's rows or 1)
 * @param k one observed sum per row (host memory)
 * @param u 2 * batch uniforms in [0, 1) (host memory)
 * @param count number of rows, batch
 * @param log_likelihood receives batch values (may be NULL)
 * @param x_values receives batch draws of x (may be NULL)
 * @param y_values receives batch draws of y (may be NULL)
 * @return a status code
 */
marg_status marg_pmf_batch_sample_given_sum(const marg_pmf_batch* x, const marg_pmf_batch* y,
                                            const int64_t* k, const double* u, int count,
                                            double* log_likelihood, int64_t* x_values,
                                            int64_t* y_values);

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
