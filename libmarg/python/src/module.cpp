// The extension module marg._core: the numeric calls on arrays of any
// framework (DLPack or the buffer protocol), the distributions layer, the
// XLA FFI handlers of marg.jax, and libmarg's exceptions as Python ones.
#include <nanobind/nanobind.h>

#include <marg/marg.hpp>

#include "module.hpp"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "libmarg's compiled core; use the package marg";
  // marg::invalid_argument derives from std::invalid_argument (ValueError)
  // and marg::out_of_memory from std::bad_alloc (MemoryError): nanobind's
  // own translations keep the library's message
  static nb::exception<marg::cuda_error> cuda_error(m, "CudaError", PyExc_RuntimeError);
  marg::python::bind_numeric(m);
  marg::python::bind_distributions(m);
  marg::python::bind_xla_ffi(m);
}
