// The per-thread libmarg streams and the bookkeeping that lets host access
// skip synchronization when libmarg queued nothing since the last wait, and
// lets a device prefetch be skipped when the same bytes were prefetched to
// the same device on the same stream since the host last learned of any
// completed work.
//
// A thread has one stream per device, created on first use on that device
// (blocking with respect to the legacy default stream, so that it also
// orders against callers' work there), handed to the next new thread that
// uses the device when its thread exits, and never destroyed: arrays keep
// the stream they were made on, and pool blocks wait on it.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <marg/numeric/backend.hpp>
#include <marg/numeric/device.hpp>

#include "../memory/device_memory.hpp"
#include "../memory/pool_extents.hpp"
#include "cuda_check.hpp"
#include "stream.hpp"

namespace marg::detail::cuda {
namespace {

// Byte ranges of managed memory prefetched to a device on one stream. Once
// the host learns that any work completed (a stream wait, an event found
// done, a free) it may touch those pages, so every such observation bumps
// `observed_epoch` and the sets of all streams are dropped. Managed memory is
// coherent: a skip that turns out wrong (the host touched the pages after a
// wait libmarg did not see) costs page faults, never a wrong result.
std::atomic<std::uint64_t> observed_epoch{0};

struct prefetched_ranges {
  struct range {
    std::uintptr_t begin, end;
    int device;
  };
  static constexpr std::size_t capacity = 8;  // oldest dropped first
  std::mutex mutex;
  std::uint64_t epoch = 0;
  std::size_t count = 0;
  range r[capacity];

  // drops the set when the host observed completion since it was filled
  void refresh() noexcept {
    const std::uint64_t e = observed_epoch.load();
    if (e != epoch) {
      epoch = e;
      count = 0;
    }
  }
  bool contains(std::uintptr_t b, std::uintptr_t e, int dev) noexcept {
    const std::lock_guard lock(mutex);
    refresh();
    for (std::size_t i = 0; i < count; ++i)
      if (r[i].device == dev && r[i].begin <= b && e <= r[i].end) return true;
    return false;
  }
  // adds [b, e), merged with the ranges it overlaps or touches
  void add(std::uintptr_t b, std::uintptr_t e, int dev) noexcept {
    const std::lock_guard lock(mutex);
    refresh();
    for (std::size_t i = 0; i < count;) {
      if (r[i].device == dev && r[i].begin <= e && b <= r[i].end) {
        b = std::min(b, r[i].begin);
        e = std::max(e, r[i].end);
        std::copy(r + i + 1, r + count, r + i);
        --count;
      } else {
        ++i;
      }
    }
    if (count == capacity) {
      std::copy(r + 1, r + count, r);
      --count;
    }
    r[count++] = {b, e, dev};
  }
};

struct stream_state {
  cudaStream_t stream = nullptr;
  int device = 0;
  std::atomic<std::uint64_t> queued{0};  // libmarg operations queued so far
  std::atomic<std::uint64_t> waited{0};  // queued count the last host wait covered
  prefetched_ranges on_device;           // managed ranges prefetched on this stream
};

struct registry {
  std::mutex mutex;
  std::vector<stream_state*> all;                 // every libmarg stream
  std::vector<stream_state*> spare[max_devices];  // streams of exited threads, by device
  stream_state* orphan[max_devices] = {};         // late frees during thread exits
};

registry& streams() {
  static auto* r = new registry;  // never destroyed
  return *r;
}

// trivially destructible, so readable during the thread's exit
thread_local stream_state* tl_state[max_devices] = {};
thread_local bool tl_exited = false;
// the device of the thread's last call: find_state checks its stream first
thread_local int tl_last_device = 0;

struct thread_stream_guard {
  ~thread_stream_guard() {
    registry& r = streams();
    const std::lock_guard lock(r.mutex);
    for (int d = 0; d < max_devices; ++d) {
      if (tl_state[d] != nullptr) r.spare[d].push_back(tl_state[d]);
      tl_state[d] = nullptr;
    }
    tl_exited = true;
  }
};

// a stream of `dev`, which is the current device
stream_state* new_state(int dev) {
  registry& r = streams();
  const std::lock_guard lock(r.mutex);
  if (!r.spare[dev].empty()) {
    stream_state* s = r.spare[dev].back();
    r.spare[dev].pop_back();
    return s;
  }
  cudaStream_t s = nullptr;
  MARG_CUDA_TRY(cudaStreamCreate(&s));
  auto* st = new stream_state;
  st->stream = s;
  st->device = dev;
  r.all.push_back(st);
  return st;
}

int checked_device(int dev) {
  MARG_EXPECTS(dev >= 0 && dev < max_devices, "marg: CUDA device " + std::to_string(dev) +
                                                  " is beyond the " + std::to_string(max_devices) +
                                                  " devices libmarg serves");
  return dev;
}

// the calling thread's stream of `dev`, which is the current device
stream_state* thread_state(int dev) {
  if (tl_state[checked_device(dev)] != nullptr) return tl_state[dev];
  if (tl_exited) {
    // late frees during thread exit: one shared stream per device for all of them
    registry& r = streams();
    {
      const std::lock_guard lock(r.mutex);
      if (r.orphan[dev] != nullptr) return r.orphan[dev];
    }
    stream_state* st = new_state(dev);
    const std::lock_guard lock(r.mutex);
    if (r.orphan[dev] == nullptr)
      r.orphan[dev] = st;
    else
      r.spare[dev].push_back(st);
    return r.orphan[dev];
  }
  tl_state[dev] = new_state(dev);
  thread_local thread_stream_guard guard;
  (void)guard;
  return tl_state[dev];
}

// the state of a libmarg stream, or nullptr for a stream libmarg does not own
stream_state* find_state(cudaStream_t s) noexcept {
  // the thread's own streams first, without the lock
  const int here = tl_last_device;
  if (tl_state[here] != nullptr && tl_state[here]->stream == s) return tl_state[here];
  registry& r = streams();
  const std::lock_guard lock(r.mutex);
  for (stream_state* st : r.all)
    if (st->stream == s) return st;
  return nullptr;
}

// per device: 0 not asked yet, 1 yes, 2 no (a device's answer never changes)
std::atomic<unsigned char> prefetch_ok[max_devices];

bool can_prefetch(int dev) noexcept {
  const unsigned char known = prefetch_ok[dev].load(std::memory_order_relaxed);
  if (known != 0) return known == 1;
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    v = 0;
  }
  prefetch_ok[dev].store(v != 0 ? 1 : 2, std::memory_order_relaxed);
  return v != 0;
}

bool is_managed(const void* p) noexcept {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeManaged;
}

void note_waited(stream_state* st, std::uint64_t q) noexcept {
  std::uint64_t w = st->waited.load();
  while (w < q && !st->waited.compare_exchange_weak(w, q)) {
  }
}

}  // namespace

int current_device_id() {
  // one visible device: it is current on every thread, no need to ask
  if (marg::device_count() <= 1) return 0;
  int dev = 0;
  MARG_CUDA_TRY(cudaGetDevice(&dev));
  return checked_device(dev);
}

int device_of(cudaStream_t stream) {
  const int count = marg::device_count();
  if (count <= 1) return 0;
  // the thread's own streams without a lock, then the runtime (no registry lock per call)
  for (int d = 0; d < count && d < max_devices; ++d)
    if (tl_state[d] != nullptr && tl_state[d]->stream == stream) return d;
#if CUDART_VERSION >= 12080
  int dev = 0;
  MARG_CUDA_TRY(cudaStreamGetDevice(stream, &dev));
  return checked_device(dev);
#else
  if (const stream_state* st = find_state(stream)) return st->device;
  // no way to ask this runtime: the caller's stream is taken to be on the current device
  return current_device_id();
#endif
}

cudaStream_t resolve(stream_view stream) {
  if (!stream.is_default()) return static_cast<cudaStream_t>(stream.handle());
  const int dev = current_device_id();
  tl_last_device = dev;
  return thread_state(dev)->stream;
}

call_scope::call_scope(stream_view sv) {
  const int here = current_device_id();
  if (sv.is_default()) {
    device = here;
    tl_last_device = here;
    stream = thread_state(here)->stream;
    return;
  }
  stream = static_cast<cudaStream_t>(sv.handle());
  device = device_of(stream);
  if (device != here) {
    // kernels launch on the current device, which must be the stream's
    MARG_CUDA_TRY(cudaSetDevice(device));
    restore_ = here;
  }
}

call_scope::~call_scope() {
  if (restore_ >= 0 && cudaSetDevice(restore_) != cudaSuccess) (void)cudaGetLastError();
}

memory_kind operand_kind(const void* p, int device, const char* function, const char* operand) {
  // pool blocks (every marg::array) are known without a driver call; managed
  // memory is readable on every device (prefetched to the call's)
  switch (pool_memory_of(p)) {
    case pool_memory::managed:
      return memory_kind::managed;
    case pool_memory::host:
      return memory_kind::host;
    case pool_memory::none:
      break;
  }
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return memory_kind::host;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      MARG_EXPECTS(attr.device == device,
                   std::string(function) + ": " + operand + " is device memory of CUDA device " +
                       std::to_string(attr.device) + ", but the call runs on device " +
                       std::to_string(device) +
                       " (the current device, or the stream's; libmarg never copies between "
                       "devices: make device " +
                       std::to_string(attr.device) + " current or pass a stream of it)");
      return memory_kind::device;
    case cudaMemoryTypeManaged:
      return memory_kind::managed;
    default:  // unregistered or pinned host memory: staged alike
      return memory_kind::host;
  }
}

void note_host_observed() noexcept {
  observed_epoch.fetch_add(1);
}

void mark_enqueued(cudaStream_t stream) noexcept {
  if (stream_state* st = find_state(stream)) st->queued.fetch_add(1);
}

void prefetch_managed(const void* ptr, std::size_t bytes, bool to_device, cudaStream_t stream) {
  if (bytes == 0) return;
  int dev = cudaCpuDeviceId;
  {
    int here = 0;
    MARG_CUDA_TRY(cudaGetDevice(&here));
    if (!can_prefetch(checked_device(here))) return;
    if (to_device) dev = here;
  }
  stream_state* st = nullptr;
  const auto b = reinterpret_cast<std::uintptr_t>(ptr);
  if (to_device) {
    if (note_captured_prefetch(ptr, bytes, stream)) return;
    // already moved there by earlier work on this stream, unobserved since
    st = find_state(stream);
    if (st != nullptr && st->on_device.contains(b, b + bytes, dev)) return;
    // a caller's own capture: a graph cannot hold a prefetch (pages then
    // migrate on first touch); checked only where a prefetch would be made
    if (capturing(stream)) return;
  } else {
    note_host_observed();  // pages leave the device: drop every stream's set
  }
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  where.id = to_device ? dev : 0;
  MARG_CUDA_TRY(cudaMemPrefetchAsync(ptr, bytes, where, 0, stream));
#else
  MARG_CUDA_TRY(cudaMemPrefetchAsync(ptr, bytes, dev, stream));
#endif
  if (st != nullptr) st->on_device.add(b, b + bytes, dev);
  mark_enqueued(stream);
}

}  // namespace marg::detail::cuda

namespace marg::detail::device {

void* resolve_stream(void* handle) {
  return cuda::resolve(stream_view{handle});
}

bool own_stream(void* stream) noexcept {
  return cuda::find_state(static_cast<cudaStream_t>(stream)) != nullptr;
}

void synchronize(void* handle) {
  const cudaStream_t s = cuda::resolve(stream_view{handle});
  cuda::stream_state* st = cuda::find_state(s);
  const std::uint64_t q = st != nullptr ? st->queued.load() : 0;
  MARG_CUDA_TRY(cudaStreamSynchronize(s));
  cuda::note_host_observed();
  if (st != nullptr) cuda::note_waited(st, q);
}

void host_access(const void* ptr, std::size_t bytes, void* handle) {
  const cudaStream_t s = cuda::resolve(stream_view{handle});
  cuda::stream_state* st = cuda::find_state(s);
  // nothing queued by libmarg since the last wait: no CUDA call at all
  if (st != nullptr && st->waited.load() >= st->queued.load()) return;
  if (ptr != nullptr && bytes != 0 && cuda::is_managed(ptr)) {
    const cuda::call_scope call(stream_view{s});  // on the stream's device, whatever is current
    cuda::prefetch_managed(ptr, bytes, false, s);
  }
  const std::uint64_t q = st != nullptr ? st->queued.load() : 0;  // what this wait covers
  MARG_CUDA_TRY(cudaStreamSynchronize(s));
  cuda::note_host_observed();
  if (st != nullptr) cuda::note_waited(st, q);
}

void prefetch(const void* ptr, std::size_t bytes, bool to_device, void* handle) {
  const cuda::call_scope call(stream_view{handle});  // to the stream's device
  if (cuda::is_managed(ptr)) cuda::prefetch_managed(ptr, bytes, to_device, call.stream);
}

int current() {
  return cuda::current_device_id();
}

int stream_device(void* stream) {
  return cuda::device_of(static_cast<cudaStream_t>(stream));
}

}  // namespace marg::detail::device
