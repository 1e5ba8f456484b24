// marg.convolve, convolve_grad_p, convolve_grad_q and log_convolve on arrays
// of any framework: taken through DLPack or the buffer protocol without a
// copy, leading axes mapped to the batched calls (a length-1 axis broadcasts
// with stride 0), the result allocated here and handed back as the first
// operand's array type on its device.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <marg/marg.hpp>

#include "dlpack_exchange.hpp"
#include "module.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace marg::python {
namespace {

using any_array = nb::ndarray<nb::ro>;
using any_out = nb::ndarray<>;

constexpr int max_dims = 32;

/// Where an array came from: the result is handed back in the same framework.
enum class framework { numpy, torch, jax, cupy };

/// What an array's type tells: its framework and, for torch tensors whose
/// type publishes DLPack's C exchange API with the functions used here, that
/// table.
struct type_info {
  framework f = framework::numpy;
  const dlpack_exchange::api* exchange = nullptr;
};

/// The exchange API of a type: its `__dlpack_c_exchange_api__` capsule's
/// table of major version 1 (walking older tables), or null.
const dlpack_exchange::api* exchange_api_of(PyTypeObject* t) {
  PyObject* cap =
      PyObject_GetAttrString(reinterpret_cast<PyObject*>(t), "__dlpack_c_exchange_api__");
  if (!cap) {
    PyErr_Clear();
    return nullptr;
  }
  const void* table = PyCapsule_IsValid(cap, "dlpack_exchange_api")
                          ? PyCapsule_GetPointer(cap, "dlpack_exchange_api")
                          : nullptr;
  Py_DECREF(cap);  // the table lives as long as the process (dlpack.h)
  const auto* h = static_cast<const dlpack_exchange::api_header*>(table);
  while (h && h->ver.major > 1) h = h->prev_api;
  if (!h || h->ver.major != 1) return nullptr;
  const auto* x = reinterpret_cast<const dlpack_exchange::api*>(h);
  return x->managed_tensor_allocator && x->managed_tensor_to_py_object_no_sync &&
                 x->dltensor_from_py_object_no_sync && x->current_work_stream
             ? x
             : nullptr;
}

/// Whether torch tensors go through the exchange API where torch publishes
/// it (marg._core._set_dlpack_exchange turns it off, so that tests cover the
/// path for older torch).
bool use_exchange_api = true;

/// The type_info of an array's type, worked out once per type.
type_info info_of(nb::handle o) {
  // keyed by type, read and written under the GIL; the last type seen is
  // compared first, since a call's operands are mostly of one type
  static std::unordered_map<PyTypeObject*, type_info> cache;
  static PyTypeObject* last_type = nullptr;
  static type_info last;
  PyTypeObject* t = Py_TYPE(o.ptr());
  if (t == last_type) return last;
  if (auto it = cache.find(t); it != cache.end()) {
    last_type = t;
    last = it->second;
    return last;
  }
  // the first class of the type's method resolution order whose module is a
  // framework's: a user's subclass of torch.Tensor is torch's
  type_info info;  // numpy and other buffer-protocol objects
  const nb::handle type(reinterpret_cast<PyObject*>(t));
  nb::object mro = nb::getattr(type, "__mro__", nb::none());
  if (!nb::isinstance<nb::tuple>(mro)) mro = nb::make_tuple(type);
  for (nb::handle cls : nb::borrow<nb::tuple>(mro)) {
    nb::object mod = nb::getattr(cls, "__module__", nb::none());
    const std::string name = nb::isinstance<nb::str>(mod) ? nb::cast<std::string>(mod) : "";
    if (name.rfind("torch", 0) == 0) {
      info.f = framework::torch;
      info.exchange = exchange_api_of(t);
    } else if (name.rfind("jax", 0) == 0) {
      info.f = framework::jax;
    } else if (name.rfind("cupy", 0) == 0) {
      info.f = framework::cupy;
    } else if (name.rfind("numpy", 0) != 0) {
      continue;
    }
    break;
  }
  cache.emplace(t, info);
  last_type = t;
  last = info;
  return info;
}

bool is_cuda(int device_type) {
  return device_type == nb::device::cuda::value || device_type == nb::device::cuda_managed::value;
}

/// One operand: the support is the last axis, leading axes are a batch.
struct operand {
  const void* data = nullptr;
  int ndim = 0;  // batch axes
  std::int64_t shape[max_dims] = {};
  std::int64_t stride[max_dims] = {};  // elements
  std::int64_t length = 0;             // last axis
  std::int64_t inc = 1;
  int device_type = 0, device_id = 0;
  bool f32 = false;
};

template <class Array>
operand describe(const char* function, const char* name, const Array& a) {
  operand o;
  // the message is built only when a check fails
  auto fail = [&](const char* what) {
    throw nb::value_error((std::string(function) + ": " + name + what).c_str());
  };
  if (a.ndim() < 1 || a.ndim() > max_dims) fail(" must have 1 to 32 axes");
  if (a.dtype() == nb::dtype<double>())
    o.f32 = false;
  else if (a.dtype() == nb::dtype<float>())
    o.f32 = true;
  else
    fail(" must be float32 or float64");
  o.data = a.data();
  o.ndim = static_cast<int>(a.ndim()) - 1;
  for (int i = 0; i < o.ndim; ++i) {
    o.shape[i] = static_cast<std::int64_t>(a.shape(i));
    o.stride[i] = a.shape(i) == 1 ? 0 : a.stride(i);
  }
  o.length = static_cast<std::int64_t>(a.shape(a.ndim() - 1));
  // an empty array's strides may be anything
  o.inc = o.length == 1 || a.size() == 0 ? 1 : a.stride(a.ndim() - 1);
  if (o.inc < 1) fail(": the last axis needs a positive stride (make the array contiguous)");
  if (o.length > INT_MAX || o.inc > INT_MAX) fail(": the last axis is longer than 2^31 - 1");
  o.device_type = a.device_type();
  o.device_id = a.device_id();
  if (a.device_type() != nb::device::cpu::value && !is_cuda(a.device_type()))
    fail(" must be in host or CUDA memory");
  return o;
}

/// torch's names, looked up once. Torch tensors are taken through
/// torch.utils.dlpack.to_dlpack, a C function that exports a capsule without
/// a stream or an event, at about a third of the cost of reading the
/// tensor's attributes one by one; Tensor.__dlpack__, which nanobind calls
/// for other arrays, records and waits on an event for CUDA tensors, most of
/// a small call's time. The names are interned, as Python's own attribute
/// names are, so that dictionary lookups match them by identity. Never freed:
/// it may outlive the interpreter.
struct torch_api {
  nb::object to_dlpack, raw_stream;
  /// torch.OutOfMemoryError (torch.cuda.OutOfMemoryError before torch 2.5),
  /// which torch's allocator raises when it is exhausted
  nb::object out_of_memory;
  nb::str requires_grad = intern("requires_grad"), data_ptr = intern("data_ptr"),
          new_empty = intern("new_empty");
  static nb::str intern(const char* name) {
    PyObject* s = PyUnicode_InternFromString(name);
    if (!s) throw nb::python_error();
    return nb::steal<nb::str>(s);
  }
  torch_api() {
    nb::module_ torch = nb::module_::import_("torch");
    nb::module_ dlpack = nb::module_::import_("torch.utils.dlpack");
    to_dlpack = nb::hasattr(dlpack, "to_dlpack") ? dlpack.attr("to_dlpack") : nb::object();
    if (nb::hasattr(torch, "OutOfMemoryError"))
      out_of_memory = torch.attr("OutOfMemoryError");
    else if (nb::object cuda = torch.attr("cuda"); nb::hasattr(cuda, "OutOfMemoryError"))
      out_of_memory = cuda.attr("OutOfMemoryError");
    // the current stream's handle as an int, without building a Stream
    // object (torch.cuda.current_stream(d).cuda_stream where it is missing)
    nb::object c = torch.attr("_C");
    raw_stream = nb::hasattr(c, "_cuda_getCurrentRawStream") ? c.attr("_cuda_getCurrentRawStream")
                                                             : nb::object();
  }
  static torch_api& get() {
    static torch_api* api = new torch_api();
    return *api;
  }
  /// torch's current stream on `device`
  void* current_stream(int device) const {
    if (raw_stream.is_valid())
      return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(raw_stream(device)));
    nb::object s = nb::module_::import_("torch").attr("cuda").attr("current_stream")(device);
    return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(s.attr("cuda_stream")));
  }
};

/// self.name(*extra): PyObject_VectorcallMethod calls the method without
/// making a bound method object, which `self.attr(name)(...)` makes on every
/// call.
/// @param self the object
/// @param name the method's name
/// @param extra the positional arguments (at most max_dims + 1)
/// @param n how many
nb::object call_method(nb::handle self, nb::handle name, const nb::object* extra = nullptr,
                       int n = 0) {
  PyObject* args[max_dims + 3] = {nullptr, self.ptr()};  // args[0]: room for the callee
  for (int i = 0; i < n; ++i) args[i + 2] = extra[i].ptr();
  PyObject* r = PyObject_VectorcallMethod(
      name.ptr(), args + 1, static_cast<std::size_t>(n + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET,
      nullptr);
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

/// Refuses a torch tensor that requires grad: marg.convolve does not record
/// an autograd graph.
void refuse_grad(const char* function, const char* name, nb::handle t) {
  if (nb::cast<bool>(t.attr(torch_api::get().requires_grad)))
    throw nb::value_error(
        (std::string(function) + ": " + name +
         " requires grad: marg.torch.convolve differentiates, or pass a detached tensor")
            .c_str());
}

[[noreturn]] void refuse_layout(const char* function, const char* name) {
  throw nb::value_error(
      (std::string(function) + ": " + name + " must be a dense tensor in host or CUDA memory")
          .c_str());
}

/// A torch tensor as an operand: refused when it requires grad, then
/// imported from to_dlpack's capsule (else through DLPack as any array) into
/// `keep`, which holds it for the call, and checked as describe() checks.
template <class Array>
operand describe_torch(const char* function, const char* name, nb::handle t, Array& keep) {
  refuse_grad(function, name, t);
  torch_api& api = torch_api::get();
  nb::object capsule;
  if (api.to_dlpack.is_valid()) {
    capsule = nb::steal(PyObject_CallOneArg(api.to_dlpack.ptr(), t.ptr()));
    if (!capsule.is_valid()) PyErr_Clear();  // a layout DLPack lacks: refused below
  }
  if (!nb::try_cast(capsule.is_valid() ? nb::handle(capsule) : t, keep, false))
    refuse_layout(function, name);
  return describe(function, name, keep);
}

/// A DLTensor seen through the accessors describe() reads.
struct dl_view {
  const nb::dlpack::dltensor& t;
  std::size_t ndim() const { return static_cast<std::size_t>(t.ndim); }
  nb::dlpack::dtype dtype() const { return t.dtype; }
  const void* data() const { return static_cast<const char*>(t.data) + t.byte_offset; }
  std::size_t shape(std::size_t i) const { return static_cast<std::size_t>(t.shape[i]); }
  /// in elements; dlpack.h's null strides mean a C-contiguous array
  std::int64_t stride(std::size_t i) const {
    if (t.strides) return t.strides[i];
    std::int64_t s = 1;
    for (std::size_t j = i + 1; j < ndim(); ++j) s *= t.shape[j];
    return s;
  }
  std::size_t size() const {
    std::size_t n = 1;
    for (std::size_t i = 0; i < ndim(); ++i) n *= shape(i);
    return n;
  }
  int device_type() const { return t.device.device_type; }
  int device_id() const { return t.device.device_id; }
};

/// A torch tensor as an operand through torch's exchange API: a view that
/// holds no reference (the caller's argument keeps the tensor alive for the
/// call), checked as describe() checks.
operand describe_exchange(const char* function, const char* name, nb::handle t,
                          const dlpack_exchange::api& x) {
  refuse_grad(function, name, t);
  nb::dlpack::dltensor dl;
  if (x.dltensor_from_py_object_no_sync(t.ptr(), &dl) != 0) {
    PyErr_Clear();  // sparse, nested or without storage: refused with the library's words
    refuse_layout(function, name);
  }
  return describe(function, name, dl_view{dl});
}

/// The error a framework's allocator reports through dlpack.h's SetError.
struct allocator_error {
  std::string message;
  static void set(void* ctx, const char* kind, const char* message) {
    static_cast<allocator_error*>(ctx)->message =
        std::string(kind ? kind : "allocator") + ": " + (message ? message : "failed");
  }
  /// An exhausted device raises `out_of_memory` (MemoryError where it is
  /// null), anything else RuntimeError
  [[noreturn]] void raise(const char* function, nb::handle out_of_memory) const {
    const std::string what = std::string(function) + ": the result's allocation failed (" +
                             (message.empty() ? "no message" : message) + ")";
    PyObject* type = PyExc_RuntimeError;
    if (message.find("out of memory") != std::string::npos)
      type = out_of_memory.is_valid() ? out_of_memory.ptr() : PyExc_MemoryError;
    PyErr_SetString(type, what.c_str());
    throw nb::python_error();
  }
};

/// A new array from the framework's allocator through its exchange API, of
/// `proto`'s dtype, shape and device, as the framework's Python object.
/// @param data receives its first element's address
/// @param strides receives its strides in elements (proto.ndim of them)
nb::object exchange_new(const dlpack_exchange::api& x, nb::dlpack::dltensor& proto,
                        const char* function, void** data, std::int64_t* strides) {
  allocator_error error;
  dlpack_exchange::managed_tensor* mt = nullptr;
  if (x.managed_tensor_allocator(&proto, &mt, &error, allocator_error::set) != 0 || !mt)
    error.raise(function, torch_api::get().out_of_memory);
  // the layout the allocator chose (at::empty's is contiguous), read while
  // `mt` is still ours
  const dl_view v{mt->dl_tensor};
  *data = const_cast<void*>(v.data());
  for (std::size_t i = 0; i < v.ndim(); ++i) strides[i] = v.stride(i);
  // the Python object owns the block from here on, also when a later step throws
  void* py = nullptr;
  if (x.managed_tensor_to_py_object_no_sync(mt, &py) != 0) throw nb::python_error();
  return nb::steal(static_cast<PyObject*>(py));
}

/// The batch shape shared by a and b (numpy's broadcasting rules), with each
/// operand's strides over it (0 along broadcast axes).
struct batch_layout {
  int ndim = 0;
  std::int64_t shape[max_dims] = {};
  std::int64_t sa[max_dims] = {}, sb[max_dims] = {}, sr[max_dims] = {};
  std::int64_t count = 1;
};

batch_layout broadcast(const char* function, const operand& a, const operand& b) {
  batch_layout l;
  l.ndim = std::max(a.ndim, b.ndim);
  for (int i = 0; i < l.ndim; ++i) {
    const int ia = i - (l.ndim - a.ndim), ib = i - (l.ndim - b.ndim);
    const std::int64_t na = ia >= 0 ? a.shape[ia] : 1, nb_ = ib >= 0 ? b.shape[ib] : 1;
    if (na != nb_ && na != 1 && nb_ != 1)
      throw nb::value_error((std::string(function) + ": batch shapes do not broadcast (" +
                             std::to_string(na) + " against " + std::to_string(nb_) + ")")
                                .c_str());
    l.shape[i] = std::max(na, nb_);
    if (na == 0 || nb_ == 0) l.shape[i] = 0;
    l.sa[i] = ia >= 0 && na != 1 ? a.stride[ia] : 0;
    l.sb[i] = ib >= 0 && nb_ != 1 ? b.stride[ib] : 0;
    l.count *= l.shape[i];
  }
  return l;
}

/// The result's storage: host memory aligned to 64 bytes (frameworks that
/// alias only aligned buffers, such as jax on the CPU, then take it without a
/// copy), or pool memory (managed, usable by any CUDA stream and by the host)
/// for CUDA operands. Owned by a capsule once the values are in it.
struct block {
  void* ptr;
  std::size_t bytes;
  bool pool;
  block(std::size_t size, bool cuda) : ptr(nullptr), bytes(size), pool(cuda) {
    ptr = cuda ? marg::allocate(bytes) : std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!ptr) throw std::bad_alloc();
  }
  block(const block&) = delete;
  block& operator=(const block&) = delete;
  ~block() {
    if (pool)
      marg::deallocate(ptr, bytes);
    else
      std::free(ptr);
  }
};

nb::capsule own(std::unique_ptr<block> blk) {
  return nb::capsule(blk.release(), [](void* p) noexcept { delete static_cast<block*>(p); });
}

template <class T>
nb::object wrap(framework f, T* data, int ndim, const std::size_t* shape, nb::handle owner,
                int device_type, int device_id) {
  const auto dt = nb::dtype<T>();
  switch (f) {
    case framework::torch:
      return nb::cast(nb::ndarray<nb::pytorch, T>(data, ndim, shape, owner, nullptr, dt,
                                                  device_type, device_id));
    case framework::jax:
      return nb::cast(
          nb::ndarray<nb::jax, T>(data, ndim, shape, owner, nullptr, dt, device_type, device_id));
    case framework::cupy:
      return nb::cast(
          nb::ndarray<nb::cupy, T>(data, ndim, shape, owner, nullptr, dt, device_type, device_id));
    case framework::numpy:
      if (is_cuda(device_type))  // CUDA memory through the buffer protocol cannot be numpy
        return nb::cast(nb::ndarray<nb::cupy, T>(data, ndim, shape, owner, nullptr, dt, device_type,
                                                 device_id));
      return nb::cast(
          nb::ndarray<nb::numpy, T>(data, ndim, shape, owner, nullptr, dt, device_type, device_id));
  }
  return nb::none();
}

/// Which of the four calls: each maps (a, b) to r with r's length from m, n.
enum class op { convolve, grad_p, grad_q, log_convolve };

template <class T>
void run_batched(op kind, int m, int n, const T* a, int inca, std::int64_t sa, const T* b, int incb,
                 std::int64_t sb, T* r, int incr, std::int64_t sr, int batch, marg::stream_view s) {
  switch (kind) {
    case op::convolve:
      if (batch == 1) return marg::convolve<T>(m, n, a, inca, b, incb, r, incr, s);
      return marg::convolve_batched<T>(m, n, a, inca, sa, b, incb, sb, r, incr, sr, batch, s);
    case op::grad_p:  // a = g, b = q
      if (batch == 1) return marg::convolve_grad_p<T>(m, n, a, inca, b, incb, r, incr, s);
      return marg::convolve_grad_p_batched<T>(m, n, a, inca, sa, b, incb, sb, r, incr, sr, batch,
                                              s);
    case op::grad_q:  // a = g, b = p
      if (batch == 1) return marg::convolve_grad_q<T>(m, n, a, inca, b, incb, r, incr, s);
      return marg::convolve_grad_q_batched<T>(m, n, a, inca, sa, b, incb, sb, r, incr, sr, batch,
                                              s);
    case op::log_convolve:
      if (batch == 1) return marg::log_convolve<T>(m, n, a, inca, b, incb, r, incr, s);
      return marg::log_convolve_batched<T>(m, n, a, inca, sa, b, incb, sb, r, incr, sr, batch, s);
  }
}

/// Runs `kind` over every problem of the layout: the innermost batch axis is
/// one batched call, the outer ones a loop (adjacent axes whose strides
/// allow it are merged first, so contiguous batches are one call).
template <class T>
void run_all(op kind, int m, int n, const operand& a, const operand& b, batch_layout l, T* r,
             std::int64_t incr, marg::stream_view stream) {
  // merge axis i into i+1 where every operand steps uniformly across both
  int nd = 0;
  std::int64_t shape[max_dims], sa[max_dims], sb[max_dims], sr[max_dims];
  for (int i = 0; i < l.ndim; ++i) {
    if (l.shape[i] == 1) continue;
    if (nd > 0 && sa[nd - 1] == l.sa[i] * l.shape[i] && sb[nd - 1] == l.sb[i] * l.shape[i] &&
        sr[nd - 1] == l.sr[i] * l.shape[i]) {
      shape[nd - 1] *= l.shape[i];
      sa[nd - 1] = l.sa[i];
      sb[nd - 1] = l.sb[i];
      sr[nd - 1] = l.sr[i];
      continue;
    }
    shape[nd] = l.shape[i];
    sa[nd] = l.sa[i];
    sb[nd] = l.sb[i];
    sr[nd] = l.sr[i];
    ++nd;
  }
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  const int inca = static_cast<int>(a.inc), incb = static_cast<int>(b.inc);
  if (nd == 0) {
    run_batched<T>(kind, m, n, pa, inca, 0, pb, incb, 0, r, static_cast<int>(incr), 0, 1, stream);
    return;
  }
  const std::int64_t inner = shape[nd - 1];
  std::int64_t outer = 1;
  for (int i = 0; i + 1 < nd; ++i) outer *= shape[i];
  std::int64_t index[max_dims] = {};
  for (std::int64_t o = 0; o < outer; ++o) {
    std::int64_t oa = 0, ob = 0, orr = 0;
    for (int i = 0; i + 1 < nd; ++i) {
      oa += index[i] * sa[i];
      ob += index[i] * sb[i];
      orr += index[i] * sr[i];
    }
    for (std::int64_t s = 0; s < inner; s += INT_MAX) {
      const int count = static_cast<int>(std::min<std::int64_t>(INT_MAX, inner - s));
      run_batched<T>(kind, m, n, pa + oa + s * sa[nd - 1], inca, sa[nd - 1],
                     pb + ob + s * sb[nd - 1], incb, sb[nd - 1], r + orr + s * sr[nd - 1],
                     static_cast<int>(incr), sr[nd - 1], count, stream);
    }
    for (int i = nd - 2; i >= 0; --i) {  // next outer index
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
}

const char* name_of(op kind) {
  switch (kind) {
    case op::convolve:
      return "marg.convolve";
    case op::grad_p:
      return "marg.convolve_grad_p";
    case op::grad_q:
      return "marg.convolve_grad_q";
    case op::log_convolve:
      return "marg.log_convolve";
  }
  return "marg";
}

/// Runs the call into r without the GIL, on the operands' device. With a
/// producer's stream (torch's current stream) the work is ordered on it and
/// left running, as a torch operation is; otherwise CUDA work is complete on
/// return, for a consumer on any stream.
void compute(op kind, std::int64_t m, std::int64_t n, const operand& a, const operand& b,
             const batch_layout& l, void* r, std::int64_t incr, bool cuda,
             std::optional<marg::stream_view> producer) {
  if (l.count == 0) return;
  nb::gil_scoped_release release;
  // the operands' device, not the thread's current one (torch places work
  // by the tensors' device too)
  marg::detail::device_guard on(cuda ? a.device_id : -1);
  const marg::stream_view s = producer.value_or(marg::stream_view{});
  if (a.f32)
    run_all<float>(kind, static_cast<int>(m), static_cast<int>(n), a, b, l, static_cast<float*>(r),
                   incr, s);
  else
    run_all<double>(kind, static_cast<int>(m), static_cast<int>(n), a, b, l,
                    static_cast<double*>(r), incr, s);
  if (cuda && !producer) marg::synchronize();
}

/// The common body of the four calls. `size` is m for grad_p, n for grad_q,
/// unused otherwise.
nb::object call(op kind, nb::handle a_obj, nb::handle b_obj, std::int64_t size,
                nb::handle out_obj) {
  const char* fn = name_of(kind);
  const bool grad = kind == op::grad_p || kind == op::grad_q;
  const char* na = grad ? "g" : (kind == op::log_convolve ? "a" : "p");
  const char* nbn = kind == op::grad_p
                        ? "q"
                        : (kind == op::grad_q ? "p" : (kind == op::log_convolve ? "b" : "q"));
  // torch tensors (all operands torch) through torch's C exchange API where
  // every operand's type publishes the same one, else through to_dlpack
  // (describe_torch); any other array through DLPack or the buffer protocol
  const type_info ia = info_of(a_obj), ib = info_of(b_obj);
  const type_info io = out_obj.is_none() ? ia : info_of(out_obj);
  const framework f = ia.f;
  const bool torch = f == framework::torch && ib.f == framework::torch && io.f == framework::torch;
  const dlpack_exchange::api* x = torch && use_exchange_api && ia.exchange &&
                                          ib.exchange == ia.exchange && io.exchange == ia.exchange
                                      ? ia.exchange
                                      : nullptr;
  any_array a_arr, b_arr;  // keep the imported arrays alive during the call
  operand a, b;
  if (x) {
    a = describe_exchange(fn, na, a_obj, *x);
    b = describe_exchange(fn, nbn, b_obj, *x);
  } else if (torch) {
    a = describe_torch(fn, na, a_obj, a_arr);
    b = describe_torch(fn, nbn, b_obj, b_arr);
  } else {
    if (!nb::try_cast(a_obj, a_arr, false))
      throw nb::type_error(
          (std::string(fn) + ": " + na + " is not an array (DLPack or buffer protocol)").c_str());
    if (!nb::try_cast(b_obj, b_arr, false))
      throw nb::type_error(
          (std::string(fn) + ": " + nbn + " is not an array (DLPack or buffer protocol)").c_str());
    a = describe(fn, na, a_arr);
    b = describe(fn, nbn, b_arr);
  }
  if (a.f32 != b.f32) throw nb::value_error((std::string(fn) + ": dtypes differ").c_str());
  if (a.device_type != b.device_type || a.device_id != b.device_id)
    throw nb::value_error((std::string(fn) + ": operands are on different devices").c_str());
  // m, n and the result's length
  std::int64_t m = 0, n = 0, len = 0;
  if (!grad) {
    m = a.length;
    n = b.length;
    len = m + n - 1;
  } else {
    if (size < 1 || size > INT_MAX)
      throw nb::value_error((std::string(fn) + ": " + (kind == op::grad_p ? "m" : "n") + " = " +
                             std::to_string(size) + " (must be in 1..2^31-1)")
                                .c_str());
    if (kind == op::grad_p) {
      m = size;
      n = b.length;
      len = m;
    } else {
      m = b.length;
      n = size;
      len = n;
    }
    if (a.length != m + n - 1)
      throw nb::value_error(
          (std::string(fn) + ": g has " + std::to_string(a.length) +
           " values on its last axis (must be m + n - 1 = " + std::to_string(m + n - 1) + ")")
              .c_str());
  }
  if (m > INT_MAX || n > INT_MAX || len > INT_MAX)
    throw nb::value_error((std::string(fn) + ": the result is longer than 2^31 - 1").c_str());
  batch_layout l = broadcast(fn, a, b);
  const std::size_t elem = a.f32 ? sizeof(float) : sizeof(double);
  const bool cuda = is_cuda(a.device_type);
  // torch's CUDA work goes on torch's current stream of the tensors' device
  std::optional<marg::stream_view> producer;
  if (torch && cuda) {
    void* stream = nullptr;
    if (x) {
      if (x->current_work_stream(a.device_type, a.device_id, &stream) != 0)
        throw nb::python_error();
    } else {
      stream = torch_api::get().current_stream(a.device_id);
    }
    producer = marg::stream_view(stream);
  }

  if (!out_obj.is_none()) {
    operand o;
    any_out o_arr;
    if (x) {
      o = describe_exchange(fn, "out", out_obj, *x);
    } else if (torch) {
      o = describe_torch(fn, "out", out_obj, o_arr);
    } else {
      if (!nb::try_cast(out_obj, o_arr, false))
        throw nb::type_error((std::string(fn) + ": out is not a writable array").c_str());
      o = describe(fn, "out", o_arr);
    }
    bool ok = o.ndim == l.ndim && o.length == len && o.f32 == a.f32 &&
              o.device_type == a.device_type && o.device_id == a.device_id;
    for (int i = 0; ok && i < l.ndim; ++i) ok = o.shape[i] == l.shape[i];
    if (!ok)
      throw nb::value_error(
          (std::string(fn) + ": out must have the result's shape, dtype and device").c_str());
    for (int i = 0; i < l.ndim; ++i) l.sr[i] = o.stride[i];
    compute(kind, m, n, a, b, l, const_cast<void*>(o.data), o.inc, cuda, producer);
    return nb::borrow(out_obj);
  }
  // a new result, contiguous
  std::size_t shape[max_dims + 1];
  std::int64_t st = len;
  for (int i = l.ndim - 1; i >= 0; --i) {
    shape[i] = static_cast<std::size_t>(l.shape[i]);
    l.sr[i] = l.shape[i] == 1 ? 0 : st;
    st *= l.shape[i];
  }
  shape[l.ndim] = static_cast<std::size_t>(len);
  if (x) {
    // torch's allocator (stream-ordered on torch's current stream of the
    // device), called from C: at::empty of the prototype's shape
    std::int64_t dims[max_dims + 1];
    for (int i = 0; i <= l.ndim; ++i) dims[i] = static_cast<std::int64_t>(shape[i]);
    nb::dlpack::dltensor proto;
    proto.device = {a.device_type, a.device_id};
    proto.ndim = l.ndim + 1;
    proto.dtype = a.f32 ? nb::dtype<float>() : nb::dtype<double>();
    proto.shape = dims;
    void* out = nullptr;
    std::int64_t strides[max_dims + 1];
    nb::object result = exchange_new(*x, proto, fn, &out, strides);
    const std::int64_t incr = strides[l.ndim];
    for (int i = 0; i < l.ndim; ++i) l.sr[i] = l.shape[i] == 1 ? 0 : strides[i];
    compute(kind, m, n, a, b, l, out, incr, cuda, producer);
    return result;
  }
  if (torch) {
    // torch's allocator (stream-ordered on torch's stream): a contiguous
    // tensor of a's dtype and device, so only its address is read
    torch_api& api = torch_api::get();
    // the sizes as separate arguments, new_empty(d0, ..., dk): torch's
    // argument parser reads separate integers faster than one tuple
    nb::object dims[max_dims + 1];
    for (int i = 0; i <= l.ndim; ++i) {
      PyObject* d = PyLong_FromSize_t(shape[i]);
      if (!d) throw nb::python_error();
      dims[i] = nb::steal(d);
    }
    nb::object result = call_method(a_obj, api.new_empty, dims, l.ndim + 1);
    void* out =
        reinterpret_cast<void*>(nb::cast<std::uintptr_t>(call_method(result, api.data_ptr)));
    compute(kind, m, n, a, b, l, out, 1, cuda, producer);
    return result;
  }
  const std::size_t bytes = static_cast<std::size_t>(l.count * len) * elem;
  // the result is computed before it is wrapped: a framework may copy the
  // buffer when it imports it (jax does for unaligned host buffers)
  auto blk = std::make_unique<block>(bytes ? bytes : elem, cuda);
  void* data = blk->ptr;
  compute(kind, m, n, a, b, l, data, 1, cuda, producer);
  nb::capsule owner = own(std::move(blk));
  const int nd = l.ndim + 1;
  return a.f32 ? wrap<float>(f, static_cast<float*>(data), nd, shape, owner, a.device_type,
                             a.device_id)
               : wrap<double>(f, static_cast<double*>(data), nd, shape, owner, a.device_type,
                              a.device_id);
}

marg::backend parse_backend(const std::string& name) {
  if (name == "automatic") return marg::backend::automatic;
  if (name == "cpu") return marg::backend::cpu;
  if (name == "cuda") return marg::backend::cuda;
  throw nb::value_error(
      ("marg.set_backend: backend = '" + name + "' (must be 'automatic', 'cpu' or 'cuda')")
          .c_str());
}

const char* backend_name(marg::backend b) {
  switch (b) {
    case marg::backend::automatic:
      return "automatic";
    case marg::backend::cpu:
      return "cpu";
    case marg::backend::cuda:
      return "cuda";
  }
  return "automatic";
}

}  // namespace

void bind_numeric(nb::module_& m) {
  m.def(
      "convolve",
      [](nb::handle p, nb::handle q, nb::handle out) { return call(op::convolve, p, q, 0, out); },
      "p"_a, "q"_a, "out"_a = nb::none());
  m.def(
      "convolve_grad_p",
      [](nb::handle g, nb::handle q, std::int64_t m_, nb::handle out) {
        return call(op::grad_p, g, q, m_, out);
      },
      "g"_a, "q"_a, "m"_a, "out"_a = nb::none());
  m.def(
      "convolve_grad_q",
      [](nb::handle g, nb::handle p, std::int64_t n_, nb::handle out) {
        return call(op::grad_q, g, p, n_, out);
      },
      "g"_a, "p"_a, "n"_a, "out"_a = nb::none());
  m.def(
      "log_convolve",
      [](nb::handle a, nb::handle b, nb::handle out) {
        return call(op::log_convolve, a, b, 0, out);
      },
      "a"_a, "b"_a, "out"_a = nb::none());
  m.def(
      "set_backend", [](const std::string& b) { marg::set_backend(parse_backend(b)); },
      "backend"_a);
  m.def("current_backend", [] { return std::string(backend_name(marg::current_backend())); });
  m.def("cuda_available", [] { return *marg::cuda_unusable_reason() == '\0'; });
  m.def("cuda_unusable_reason", [] { return std::string(marg::cuda_unusable_reason()); });
  m.def("cuda_compiled", [] { return marg::cuda_compiled(); });
  m.def(
      "set_planner_mode",
      [](const std::string& mode) {
        if (mode != "estimate" && mode != "measure")
          throw nb::value_error(
              ("marg.set_planner_mode: mode = '" + mode + "' (must be 'estimate' or 'measure')")
                  .c_str());
        marg::set_planner_mode(mode == "measure" ? marg::planner_mode::measure
                                                 : marg::planner_mode::estimate);
      },
      "mode"_a);
  m.def("planner_mode", [] {
    return std::string(marg::current_planner_mode() == marg::planner_mode::measure ? "measure"
                                                                                   : "estimate");
  });
  // paths as str or os.PathLike, like open()
  m.def(
      "export_wisdom",
      [](const std::filesystem::path& path) { marg::export_wisdom(path.string()); }, "path"_a);
  m.def(
      "import_wisdom",
      [](const std::filesystem::path& path) { marg::import_wisdom(path.string()); }, "path"_a);
  m.def("wisdom_text", [] { return marg::wisdom_text(); });
  m.def(
      "import_wisdom_text", [](const std::string& text) { marg::import_wisdom_text(text); },
      "text"_a);
  m.def("forget_wisdom", [] { marg::forget_wisdom(); });
  m.def(
      "_time_cpp_convolve_arrays",
      [](nb::ndarray<nb::ro, double, nb::ndim<1>, nb::c_contig> p,
         nb::ndarray<nb::ro, double, nb::ndim<1>, nb::c_contig> q,
         nb::ndarray<double, nb::ndim<1>, nb::c_contig> r, int calls,
         std::optional<std::uintptr_t> stream, bool wait) {
        // the C++ side of bench/python/overhead.py for arrays of any
        // framework and device, doing what marg.convolve does around the
        // product: on a producer's stream the calls are ordered on it and
        // waited for once at the end (inside the timed region with `wait`,
        // after it without); otherwise CUDA memory is synchronized per call
        const int m_ = static_cast<int>(p.shape(0)), n_ = static_cast<int>(q.shape(0));
        if (r.shape(0) != p.shape(0) + q.shape(0) - 1 || p.device_type() != r.device_type() ||
            q.device_type() != r.device_type())
          throw nb::value_error("_time_cpp_convolve_arrays: r must have length m + n - 1");
        const bool cuda = is_cuda(r.device_type());
        const marg::stream_view s(stream ? reinterpret_cast<void*>(*stream) : nullptr);
        nb::gil_scoped_release release;
        marg::detail::device_guard on(cuda ? r.device_id() : -1);
        auto once = [&] {
          marg::convolve<double>(m_, n_, p.data(), 1, q.data(), 1, r.data(), 1, s);
          if (cuda && !stream) marg::synchronize();
        };
        once();
        if (cuda) marg::synchronize(s);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) once();
        auto t1 = std::chrono::steady_clock::now();
        if (cuda) {
          marg::synchronize(s);
          if (wait) t1 = std::chrono::steady_clock::now();
        }
        return std::chrono::duration<double>(t1 - t0).count() / calls;
      },
      "p"_a, "q"_a, "r"_a, "calls"_a, "stream"_a = nb::none(), "wait"_a = true,
      "Seconds per call of marg::convolve<double> on the arrays' memory (host or CUDA), timed in "
      "C++ over `calls` calls after one untimed call: on `stream` (a CUDA stream handle) the "
      "calls are waited for once at the end, else synchronized per call for CUDA memory as "
      "marg.convolve does. With wait=True the final wait is inside the timed region; with "
      "wait=False the clock stops when the last call is issued and the wait follows, so the "
      "time is the host's time to issue the calls.");
  m.def(
      "_set_dlpack_exchange",
      [](bool enabled) {
        const bool was = use_exchange_api;
        use_exchange_api = enabled;
        return was;
      },
      "enabled"_a,
      "Whether torch tensors go through torch's DLPack C exchange API where torch publishes it "
      "(the default) or through torch.utils.dlpack.to_dlpack and Tensor.new_empty, as for torch "
      "before 2.10; returns the previous setting. For tests and benchmarks.");
  m.def(
      "_dlpack_exchange_available",
      [](nb::handle tensor) { return info_of(tensor).exchange != nullptr; }, "tensor"_a,
      "Whether the array's type publishes a DLPack C exchange API that marg uses.");
  m.def(
      "_time_dlpack_exchange_result",
      [](nb::handle like, int calls) {
        // the part of marg.convolve that makes a new torch result, timed
        // alone for bench/python/overhead.py: torch's allocator and tensor
        // object through the exchange API, then the tensor's release
        const dlpack_exchange::api* x = info_of(like).exchange;
        if (!x)
          throw nb::value_error("_time_dlpack_exchange_result: no exchange API for this type");
        if (calls < 1) throw nb::value_error("_time_dlpack_exchange_result: calls must be >= 1");
        nb::dlpack::dltensor proto;
        if (x->dltensor_from_py_object_no_sync(like.ptr(), &proto) != 0) throw nb::python_error();
        std::int64_t strides[max_dims + 1];
        if (proto.ndim > max_dims + 1)
          throw nb::value_error("_time_dlpack_exchange_result: too many axes");
        const auto once = [&] {
          void* data = nullptr;
          exchange_new(*x, proto, "_time_dlpack_exchange_result", &data, strides);
        };
        once();
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) once();
        const auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double>(t1 - t0).count() / calls;
      },
      "like"_a, "calls"_a,
      "Seconds per new torch tensor shaped like `like`, made as marg.convolve makes a result "
      "through torch's DLPack C exchange API (allocation and tensor object) and released at "
      "once, timed in C++ over `calls` tensors after one untimed one.");
  m.def(
      "_data_ptr",
      [](nb::handle x) {
        any_array a;
        if (!nb::try_cast(x, a, false)) throw nb::type_error("not an array");
        return reinterpret_cast<std::uintptr_t>(a.data());
      },
      "x"_a, "The address nanobind sees for an array (tests check that nothing is copied).");
}

}  // namespace marg::python
