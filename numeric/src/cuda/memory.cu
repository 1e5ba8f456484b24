// Managed memory and events for the pool (src/memory/pool.cpp). Every
// function here is noexcept: CUDA errors come back as nullptr or false and are
// cleared, so that the pool's hooks and deallocate never throw.
#include <mutex>
#include <vector>

#include <marg/numeric/backend.hpp>

#include "../memory/device_memory.hpp"
#include "cuda_check.hpp"
#include "stream.hpp"

namespace marg::detail::device {
namespace {

// recycled events (creating one costs more than recording it)
struct event_pool {
  std::mutex mutex;
  std::vector<cudaEvent_t> spare;
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

void* record_event(void* stream) noexcept {
  cudaEvent_t e = nullptr;
  {
    event_pool& p = events();
    const std::lock_guard lock(p.mutex);
    if (!p.spare.empty()) {
      e = p.spare.back();
      p.spare.pop_back();
    }
  }
  if (e == nullptr && cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  if (cudaEventRecord(e, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaEventDestroy(e);
    return nullptr;
  }
  return e;
}

bool event_done(void* event) noexcept {
  const cudaError_t s = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (s == cudaErrorNotReady) return false;
  cuda::note_host_observed();
  // an error other than not-ready: the work will never run, so nothing uses the blocks
  if (s != cudaSuccess) (void)cudaGetLastError();
  return true;
}

void release_event(void* event) noexcept {
  event_pool& p = events();
  try {
    const std::lock_guard lock(p.mutex);
    p.spare.push_back(static_cast<cudaEvent_t>(event));
  } catch (...) {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
}

void wait_and_release_event(void* event) noexcept {
  if (cudaEventSynchronize(static_cast<cudaEvent_t>(event)) != cudaSuccess)
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
