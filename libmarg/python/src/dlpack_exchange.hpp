// DLPack's C exchange API (dlpack.h 1.3, "DLPack C Exchange API"): a table of
// C functions that an array type publishes as the PyCapsule
// `type.__dlpack_c_exchange_api__` (named "dlpack_exchange_api"), through
// which a consumer views an array, asks for the framework's current stream
// and allocates a result in the framework's own allocator without calling
// Python. torch.Tensor publishes it from torch 2.10 on.
//
// The declarations follow dlpack.h's ABI (version 1.x); DLTensor is
// nanobind's copy of it. Debian packages an older dlpack.h without them.
#pragma once
#include <nanobind/ndarray.h>

#include <cstdint>

namespace marg::python::dlpack_exchange {

/// DLPackVersion
struct version {
  std::uint32_t major;
  std::uint32_t minor;
};

/// DLManagedTensorVersioned
struct managed_tensor {
  version ver;
  void* manager_ctx;
  void (*deleter)(managed_tensor* self);
  std::uint64_t flags;
  nanobind::dlpack::dltensor dl_tensor;
};

/// DLPackExchangeAPIHeader
struct api_header {
  version ver;
  api_header* prev_api;
};

/// DLPackExchangeAPI. Every function is called with the GIL held; the
/// *_no_sync ones neither wait for nor order anything on a stream.
struct api {
  api_header header;
  /// a new array of the prototype's dtype, shape and device, in the
  /// framework's allocator; 0 on success, else -1 after set_error
  int (*managed_tensor_allocator)(nanobind::dlpack::dltensor* prototype, managed_tensor** out,
                                  void* error_ctx,
                                  void (*set_error)(void* error_ctx, const char* kind,
                                                    const char* message));
  /// an owning view of a Python array; -1 with a Python exception set
  int (*managed_tensor_from_py_object_no_sync)(void* py_object, managed_tensor** out);
  /// the framework's Python array owning `tensor` (stolen); -1 with a
  /// Python exception set
  int (*managed_tensor_to_py_object_no_sync)(managed_tensor* tensor, void** out_py_object);
  /// a view valid while the Python array lives (may be null); -1 with a
  /// Python exception set
  int (*dltensor_from_py_object_no_sync)(void* py_object, nanobind::dlpack::dltensor* out);
  /// the framework's current stream of a device (null on the host); -1 with
  /// a Python exception set
  int (*current_work_stream)(std::int32_t device_type, std::int32_t device_id, void** out_stream);
};

}  // namespace marg::python::dlpack_exchange
