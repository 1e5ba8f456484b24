// The device side of capture_calls / call_graph: CUDA stream capture in
// this thread's mode, the managed ranges the captured calls would have
// prefetched (prefetched again before every replay: a graph cannot hold a
// prefetch), one graph launch per replay.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <marg/numeric/error.hpp>

#include "../memory/device_memory.hpp"
#include "cuda_check.hpp"
#include "stream.hpp"

namespace marg::detail::cuda {
namespace {

struct managed_range {
  const void* ptr;
  std::size_t bytes;
};

struct recording {
  cudaGraphExec_t exec = nullptr;
  std::vector<managed_range> managed;
  int device = 0;    // the device the calls were captured on: replays run there
  std::mutex mutex;  // replays from several threads launch one at a time
};

// the capture this thread runs (capture_calls does not nest)
struct capture_state {
  cudaStream_t stream = nullptr;
  std::vector<managed_range> managed;
};
thread_local capture_state* tl_capture = nullptr;

}  // namespace

bool capturing(cudaStream_t stream) {
  if (tl_capture != nullptr && tl_capture->stream == stream) return true;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  MARG_CUDA_TRY(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

bool note_captured_prefetch(const void* ptr, std::size_t bytes, cudaStream_t stream) {
  if (tl_capture == nullptr || tl_capture->stream != stream) return false;
  tl_capture->managed.push_back({ptr, bytes});
  return true;
}

}  // namespace marg::detail::cuda

namespace marg::detail::device {

void begin_capture(void* handle) {
  const cudaStream_t s = cuda::resolve(stream_view{handle});
  MARG_EXPECTS(cuda::tl_capture == nullptr && !cuda::capturing(s),
               "marg::capture_calls: the stream is already being captured (captures do not nest)");
  auto state = std::make_unique<cuda::capture_state>();
  state->stream = s;
  // this thread's mode: other threads' unrelated CUDA calls stay legal
  MARG_CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cuda::tl_capture = state.release();
}

void* end_capture(void* handle, bool keep) {
  // the captured stream, also when the thread changed devices since
  const cudaStream_t s =
      cuda::tl_capture != nullptr ? cuda::tl_capture->stream : cuda::resolve(stream_view{handle});
  std::unique_ptr<cuda::capture_state> state(cuda::tl_capture);
  cuda::tl_capture = nullptr;
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  if (!keep) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // an invalidated capture is expected here
    return nullptr;
  }
  MARG_CUDA_TRY(ended);
  auto rec = std::make_unique<cuda::recording>();
  const cudaError_t made = cudaGraphInstantiate(&rec->exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  MARG_CUDA_TRY(made);
  rec->managed = std::move(state->managed);
  rec->device = cuda::device_of(s);
  return rec.release();
}

void replay(const void* graph, void* handle) {
  auto* rec = static_cast<cuda::recording*>(const_cast<void*>(graph));
  const cuda::call_scope call(stream_view{handle});
  MARG_EXPECTS(call.device == rec->device,
               "marg::call_graph::replay: the calls were captured on CUDA device " +
                   std::to_string(rec->device) + ", but the replay runs on device " +
                   std::to_string(call.device) + " (the current device, or the stream's)");
  const cudaStream_t s = call.stream;
  const std::lock_guard lock(rec->mutex);
  // skipped when these bytes are still on the device from this stream's work
  for (const cuda::managed_range& r : rec->managed) cuda::prefetch_managed(r.ptr, r.bytes, true, s);
  MARG_CUDA_TRY(cudaGraphLaunch(rec->exec, s));
  cuda::mark_enqueued(s);
}

void destroy_graph(void* graph) noexcept {
  auto* rec = static_cast<cuda::recording*>(graph);
  if (rec == nullptr) return;
  (void)cudaGraphExecDestroy(rec->exec);
  delete rec;
}

}  // namespace marg::detail::device
