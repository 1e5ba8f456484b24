// Managed memory and events for the pool (src/memory/pool.cpp). Every
// function here is noexcept: CUDA errors come back as nullptr or false and are
// cleared, so that the pool's hooks and deallocate never throw.
#include <mutex>
#include <new>
#include <vector>

#include <marg/numeric/backend.hpp>

#include "../memory/device_memory.hpp"
#include "cuda_check.hpp"
#include "stream.hpp"

namespace marg::detail::device {
namespace {

// an event and the device it was made on (an event records only on streams
// of its own device)
struct device_event {
  cudaEvent_t event;
  int device;
};

// recycled events per device (creating one costs more than recording it)
struct event_pool {
  std::mutex mutex;
  std::vector<device_event*> spare[cuda::max_devices];
};

event_pool& events() {
  static auto* p = new event_pool;  // never destroyed: used during static destruction
  return *p;
}

}  // namespace

bool usable() noexcept {
  try {
    return marg::device_count() > 0;
  } catch (...) {
    return false;
  }
}

void* alloc_managed(std::size_t bytes) noexcept {
  void* p = nullptr;
  if (cudaMallocManaged(&p, bytes, cudaMemAttachGlobal) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return p;
}

void free_managed(void* p) noexcept {
  if (p != nullptr && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
  cuda::note_host_observed();  // cudaFree waits; the addresses may come back
}

std::size_t free_memory() noexcept {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return free;
}

void make_current(int device) {
  MARG_CUDA_TRY(cudaSetDevice(device));
}

void restore_current(int device) noexcept {
  if (cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
}

void* record_event(void* stream) noexcept {
  const auto s = static_cast<cudaStream_t>(stream);
  int dev = 0;
  try {
    dev = cuda::device_of(s);
  } catch (...) {
    return nullptr;
  }
  device_event* e = nullptr;
  {
    event_pool& p = events();
    const std::lock_guard lock(p.mutex);
    if (!p.spare[dev].empty()) {
      e = p.spare[dev].back();
      p.spare[dev].pop_back();
    }
  }
  if (e == nullptr) {
    cudaEvent_t ev = nullptr;
    int here = 0;
    if (cudaGetDevice(&here) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    // an event belongs to the device current at its creation
    const bool other = here != dev;
    if ((other && cudaSetDevice(dev) != cudaSuccess) ||
        cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) {
      (void)cudaGetLastError();
      if (other) restore_current(here);
      return nullptr;
    }
    if (other) restore_current(here);
    e = new (std::nothrow) device_event{ev, dev};
    if (e == nullptr) {
      (void)cudaEventDestroy(ev);
      return nullptr;
    }
  }
  if (cudaEventRecord(e->event, s) != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaEventDestroy(e->event);
    delete e;
    return nullptr;
  }
  return e;
}

bool event_done(void* event) noexcept {
  const cudaError_t s = cudaEventQuery(static_cast<device_event*>(event)->event);
  if (s == cudaErrorNotReady) return false;
  cuda::note_host_observed();
  // an error other than not-ready: the work will never run, so nothing uses the blocks
  if (s != cudaSuccess) (void)cudaGetLastError();
  return true;
}

void release_event(void* event) noexcept {
  event_pool& p = events();
  auto* e = static_cast<device_event*>(event);
  try {
    const std::lock_guard lock(p.mutex);
    p.spare[e->device].push_back(e);
  } catch (...) {
    (void)cudaEventDestroy(e->event);
    delete e;
  }
}

void wait_and_release_event(void* event) noexcept {
  if (cudaEventSynchronize(static_cast<device_event*>(event)->event) != cudaSuccess)
    (void)cudaGetLastError();
  cuda::note_host_observed();
  release_event(event);
}

void synchronize_quietly(void* stream) noexcept {
  if (cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) != cudaSuccess)
    (void)cudaGetLastError();
  cuda::note_host_observed();
}

}  // namespace marg::detail::device

namespace marg::detail::device {

void copy_strided(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                  std::size_t size, std::size_t count) {
  if (count == 0) return;
  // cudaMemcpyDefault: unified addressing tells each side's kind (pageable
  // host memory included), so one call serves every pair of memory kinds
  MARG_CUDA_TRY(cudaMemcpy2D(dst, dst_pitch, src, src_pitch, size, count, cudaMemcpyDefault));
}

}  // namespace marg::detail::device
