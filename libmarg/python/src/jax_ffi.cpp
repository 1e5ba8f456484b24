// XLA FFI handlers behind marg.jax: convolve, convolve_grad_p and
// convolve_grad_q on XLA buffers (float32 or float64; leading axes are a
// batch that the Python side has broadcast to a common shape), for the host
// and, in a CUDA build, for the GPU on XLA's stream. Exported as capsules
// that marg.jax registers with jax.ffi.register_ffi_target.
#include <nanobind/nanobind.h>

#include "module.hpp"

#ifdef MARG_PY_XLA_FFI
#include <cstdint>
#include <exception>
#include <string>

#include <marg/marg.hpp>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
#endif

namespace nb = nanobind;

namespace marg::python {

#ifdef MARG_PY_XLA_FFI
namespace {

enum class op { convolve, grad_p, grad_q };

std::int64_t last(const ffi::AnyBuffer& b) {
  const auto d = b.dimensions();
  return d.size() == 0 ? 1 : d.back();
}

template <class T>
void run(op kind, const ffi::AnyBuffer& a, const ffi::AnyBuffer& b, ffi::Result<ffi::AnyBuffer>& r,
         marg::stream_view stream) {
  const T* pa = static_cast<const T*>(a.untyped_data());
  const T* pb = static_cast<const T*>(b.untyped_data());
  T* pr = static_cast<T*>(r->untyped_data());
  const std::int64_t la = last(a), lb = last(b), lr = last(*r);
  if (la == 0 || lb == 0) throw marg::invalid_argument("marg.jax: empty last axis");
  const std::int64_t batch = static_cast<std::int64_t>(a.element_count()) / la;
  if (static_cast<std::int64_t>(b.element_count()) / lb != batch ||
      static_cast<std::int64_t>(r->element_count()) / lr != batch)
    throw marg::invalid_argument("marg.jax: operands have different batch sizes");
  if (batch == 0) return;
  const int ib = static_cast<int>(batch);
  switch (kind) {
    case op::convolve:  // a = p, b = q
      marg::convolve_batched<T>(static_cast<int>(la), static_cast<int>(lb), pa, 1, la, pb, 1, lb,
                                pr, 1, lr, ib, stream);
      break;
    case op::grad_p:  // a = g, b = q, r = gp
      marg::convolve_grad_p_batched<T>(static_cast<int>(lr), static_cast<int>(lb), pa, 1, la, pb, 1,
                                       lb, pr, 1, lr, ib, stream);
      break;
    case op::grad_q:  // a = g, b = p, r = gq
      marg::convolve_grad_q_batched<T>(static_cast<int>(lb), static_cast<int>(lr), pa, 1, la, pb, 1,
                                       lb, pr, 1, lr, ib, stream);
      break;
  }
}

ffi::Error dispatch(op kind, ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> r,
                    marg::stream_view stream) {
  try {
    if (a.element_type() != b.element_type() || a.element_type() != r->element_type())
      return ffi::Error::InvalidArgument("marg.jax: operands must have one dtype");
    if (a.element_type() == ffi::DataType::F64)
      run<double>(kind, a, b, r, stream);
    else if (a.element_type() == ffi::DataType::F32)
      run<float>(kind, a, b, r, stream);
    else
      return ffi::Error::InvalidArgument("marg.jax: dtype must be float32 or float64");
  } catch (const std::invalid_argument& e) {
    return ffi::Error::InvalidArgument(e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(e.what());
  }
  return ffi::Error::Success();
}

ffi::Error convolve_host(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> r) {
  // host buffers: the CPU backend, whatever the process-wide choice
  return dispatch(op::convolve, a, b, r, {});
}
ffi::Error grad_p_host(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> r) {
  return dispatch(op::grad_p, a, b, r, {});
}
ffi::Error grad_q_host(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> r) {
  return dispatch(op::grad_q, a, b, r, {});
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(
    marg_convolve_cpu, convolve_host,
    ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    marg_convolve_grad_p_cpu, grad_p_host,
    ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    marg_convolve_grad_q_cpu, grad_q_host,
    ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());

#ifdef MARG_PY_CUDA
ffi::Error convolve_cuda(void* stream, ffi::AnyBuffer a, ffi::AnyBuffer b,
                         ffi::Result<ffi::AnyBuffer> r) {
  return dispatch(op::convolve, a, b, r, marg::stream_view{stream});
}
ffi::Error grad_p_cuda(void* stream, ffi::AnyBuffer a, ffi::AnyBuffer b,
                       ffi::Result<ffi::AnyBuffer> r) {
  return dispatch(op::grad_p, a, b, r, marg::stream_view{stream});
}
ffi::Error grad_q_cuda(void* stream, ffi::AnyBuffer a, ffi::AnyBuffer b,
                       ffi::Result<ffi::AnyBuffer> r) {
  return dispatch(op::grad_q, a, b, r, marg::stream_view{stream});
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(marg_convolve_cuda, convolve_cuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void*>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(marg_convolve_grad_p_cuda, grad_p_cuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void*>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(marg_convolve_grad_q_cuda, grad_q_cuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void*>>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());
#endif

template <class F>
nb::capsule capsule(F* fn) {
  return nb::capsule(reinterpret_cast<void*>(fn));
}

}  // namespace
#endif

void bind_xla_ffi(nb::module_& m) {
  nb::dict targets;
#ifdef MARG_PY_XLA_FFI
  targets["convolve_cpu"] = capsule(marg_convolve_cpu);
  targets["convolve_grad_p_cpu"] = capsule(marg_convolve_grad_p_cpu);
  targets["convolve_grad_q_cpu"] = capsule(marg_convolve_grad_q_cpu);
#ifdef MARG_PY_CUDA
  targets["convolve_cuda"] = capsule(marg_convolve_cuda);
  targets["convolve_grad_p_cuda"] = capsule(marg_convolve_grad_p_cuda);
  targets["convolve_grad_q_cuda"] = capsule(marg_convolve_grad_q_cuda);
#endif
#endif
  m.attr("xla_ffi_targets") = targets;
}

}  // namespace marg::python
