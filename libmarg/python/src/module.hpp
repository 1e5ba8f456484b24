// Parts of the extension module marg._core, one per source file.
#pragma once
#include <nanobind/nanobind.h>

namespace marg::python {
/// convolve, convolve_grad_p, convolve_grad_q, log_convolve, backends
void bind_numeric(nanobind::module_& m);
/// Pmf, Pmf32, PmfBatch, PmfBatch32, factories, sums, conditioning, gradients
void bind_distributions(nanobind::module_& m);
/// capsules of the XLA FFI handlers (empty dict when built without jaxlib)
void bind_xla_ffi(nanobind::module_& m);
}  // namespace marg::python
