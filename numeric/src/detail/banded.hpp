// Internal description of one (batched) banded product, shared by the
// dispatch layer and the backends. Not installed.
#pragma once

#include <cstdint>

#include <marg/numeric/stream.hpp>

namespace marg::detail {

/// Which of the three banded products.
enum class banded_op {
  convolve,  ///< r  = band(p, n) q;   a = p, b = q
  grad_p,    ///< gp = band(q, m)^T g; a = g, b = q
  grad_q     ///< gq = band(p, n)^T g; a = g, b = p
};

/// A checked (batched) banded product. Problem i reads a + i*stride_a and
/// b + i*stride_b and writes out + i*stride_out.
template <class T>
struct banded_args {
  banded_op op;
  int m, n;
  const T* a;
  int inc_a;
  std::int64_t stride_a;
  const T* b;
  int inc_b;
  std::int64_t stride_b;
  T* out;
  int inc_out;
  std::int64_t stride_out;
  int batch;
};

/// Lengths of the operands of one problem.
struct banded_lengths {
  std::int64_t a, b, out;
};

/// @return the operand lengths of `op` for sizes m, n
constexpr banded_lengths lengths_of(banded_op op, std::int64_t m, std::int64_t n) noexcept {
  const std::int64_t r = m + n - 1;
  switch (op) {
    case banded_op::convolve:
      return {m, n, r};
    case banded_op::grad_p:
      return {r, n, m};
    case banded_op::grad_q:
      return {r, m, n};
  }
  return {0, 0, 0};
}

/// @return the public function of `op` (batched or not), for messages
inline const char* name_of(banded_op op, bool batched) {
  switch (op) {
    case banded_op::convolve:
      return batched ? "marg::convolve_batched" : "marg::convolve";
    case banded_op::grad_p:
      return batched ? "marg::convolve_grad_p_batched" : "marg::convolve_grad_p";
    case banded_op::grad_q:
      return batched ? "marg::convolve_grad_q_batched" : "marg::convolve_grad_q";
  }
  return "marg::convolve";
}

/// Operand names as the public signatures spell them.
struct operand_names {
  const char *a, *inc_a, *stride_a, *b, *inc_b, *stride_b, *out, *inc_out, *stride_out;
};

/// @return the operand names of `op`, for messages
inline operand_names names_of(banded_op op) {
  switch (op) {
    case banded_op::convolve:
      return {"p", "incp", "stridep", "q", "incq", "strideq", "r", "incr", "strider"};
    case banded_op::grad_p:
      return {"g", "incg", "strideg", "q", "incq", "strideq", "gp", "incgp", "stridegp"};
    case banded_op::grad_q:
      return {"g", "incg", "strideg", "p", "incp", "stridep", "gq", "incgq", "stridegq"};
  }
  return {};
}
namespace cpu {

/// Runs on host threads; pointers must be host-readable.
template <class T>
void run(const banded_args<T>& args);
}  // namespace cpu

namespace cuda {
/// Enqueues on `stream`; host pointers are staged by the caller.
template <class T>
void run(const banded_args<T>& args, stream_view stream);
/// @return the number of usable devices (0 on any driver error)
int device_count() noexcept;
}  // namespace cuda

}  // namespace marg::detail
