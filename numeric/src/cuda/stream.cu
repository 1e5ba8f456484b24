// The per-thread libmarg streams and the bookkeeping that lets host access
// skip synchronization when libmarg queued nothing since the last wait, and
// lets a device prefetch be skipped when the same bytes were prefetched to
// the same device on the same stream since the host last learned of any
// completed work.
//
// A thread's stream is created on first use (blocking with respect to the
// legacy default stream, so that it also orders against callers' work there),
// handed to the next new thread when its thread exits, and never destroyed:
// arrays keep the stream they were made on, and pool blocks wait on it.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "../memory/device_memory.hpp"
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
  std::atomic<std::uint64_t> queued{0};  // libmarg operations queued so far
  std::atomic<std::uint64_t> waited{0};  // queued count the last host wait covered
  prefetched_ranges on_device;           // managed ranges prefetched on this stream
};

struct registry {
  std::mutex mutex;
  std::vector<stream_state*> all;    // every libmarg stream
  std::vector<stream_state*> spare;  // streams of exited threads
};

registry& streams() {
  static auto* r = new registry;  // never destroyed
  return *r;
}

// trivially destructible, so readable during the thread's exit
thread_local stream_state* tl_state = nullptr;
thread_local bool tl_exited = false;

struct thread_stream_guard {
  ~thread_stream_guard() {
    if (tl_state != nullptr) {
      registry& r = streams();
      const std::lock_guard lock(r.mutex);
      r.spare.push_back(tl_state);
    }
    tl_state = nullptr;
    tl_exited = true;
  }
};

stream_state* new_state() {
  registry& r = streams();
  const std::lock_guard lock(r.mutex);
  if (!r.spare.empty()) {
    stream_state* s = r.spare.back();
    r.spare.pop_back();
    return s;
  }
  cudaStream_t s = nullptr;
  MARG_CUDA_TRY(cudaStreamCreate(&s));
  auto* st = new stream_state;
  st->stream = s;
  r.all.push_back(st);
  return st;
}

stream_state* thread_state() {
  if (tl_state != nullptr) return tl_state;
  if (tl_exited) {
    // late frees during thread exit: one shared stream for all of them
    static stream_state* const orphan = new_state();
    return orphan;
  }
  tl_state = new_state();
  thread_local thread_stream_guard guard;
  (void)guard;
  return tl_state;
}

// the state of a libmarg stream, or nullptr for a stream libmarg does not own
stream_state* find_state(cudaStream_t s) noexcept {
  if (tl_state != nullptr && tl_state->stream == s) return tl_state;
  registry& r = streams();
  const std::lock_guard lock(r.mutex);
  for (stream_state* st : r.all)
    if (st->stream == s) return st;
  return nullptr;
}

bool can_prefetch() noexcept {
  static const bool ok = [] {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return v != 0;
  }();
  return ok;
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

cudaStream_t resolve(stream_view stream) {
  return stream.is_default() ? thread_state()->stream : static_cast<cudaStream_t>(stream.handle());
}

void note_host_observed() noexcept {
  observed_epoch.fetch_add(1);
}

void mark_enqueued(cudaStream_t stream) noexcept {
  if (stream_state* st = find_state(stream)) st->queued.fetch_add(1);
}

void prefetch_managed(const void* ptr, std::size_t bytes, bool to_device, cudaStream_t stream) {
  if (bytes == 0 || !can_prefetch()) return;
  int dev = cudaCpuDeviceId;
  stream_state* st = nullptr;
  const auto b = reinterpret_cast<std::uintptr_t>(ptr);
  if (to_device) {
    if (note_captured_prefetch(ptr, bytes, stream)) return;
    MARG_CUDA_TRY(cudaGetDevice(&dev));
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
  if (ptr != nullptr && bytes != 0 && cuda::is_managed(ptr))
    cuda::prefetch_managed(ptr, bytes, false, s);
  const std::uint64_t q = st != nullptr ? st->queued.load() : 0;  // what this wait covers
  MARG_CUDA_TRY(cudaStreamSynchronize(s));
  cuda::note_host_observed();
  if (st != nullptr) cuda::note_waited(st, q);
}

void prefetch(const void* ptr, std::size_t bytes, bool to_device, void* handle) {
  const cudaStream_t s = cuda::resolve(stream_view{handle});
  if (cuda::is_managed(ptr)) cuda::prefetch_managed(ptr, bytes, to_device, s);
}

}  // namespace marg::detail::device
