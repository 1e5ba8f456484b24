/// @file graph.hpp
/// @brief Recording a fixed sequence of numeric-layer calls once and replaying
/// it many times (a CUDA graph on the GPU): for a PPL step that makes the same
/// products on the same buffers at every iteration.
///
/// On the CUDA backend, `capture_calls` records the kernels that the calls
/// enqueue on one stream (CUDA stream capture) without running them, and
/// `call_graph::replay` launches all of them with one graph launch: the
/// per-call host cost of each kernel launch is paid once per replay, not
/// once per call. On the CPU backend the calls are kept and run again at each
/// replay. Either way the pointers are fixed at capture: replays read the
/// inputs' current values and write the same outputs, so those buffers must
/// stay allocated while the call_graph can be replayed.
#pragma once

#include <functional>

#include <marg/numeric/stream.hpp>

namespace marg {

/// A recorded sequence of libmarg numeric-layer calls (`convolve`,
/// `convolve_grad_p`, `convolve_grad_q` and their `_batched` forms), replayed
/// as a unit. Move-only; an empty call_graph (default-constructed or moved
/// from) cannot be replayed.
class call_graph {
 public:
  /// An empty call_graph.
  call_graph() noexcept = default;
  /// @param other left empty
  call_graph(call_graph&& other) noexcept;
  /// @param other left empty
  /// @return *this
  call_graph& operator=(call_graph&& other) noexcept;
  call_graph(const call_graph&) = delete;
  call_graph& operator=(const call_graph&) = delete;
  /// Frees the recorded graph (work already queued by replays is unaffected).
  ~call_graph();

  /// Runs the recorded calls again. On the GPU they are queued on `stream`
  /// (managed operands are first prefetched to the device on it) and, as
  /// for any call, the host must `marg::synchronize(stream)` before reading
  /// what they wrote; on the CPU backend they have finished on return.
  /// @param stream where to queue them; default: the calling thread's libmarg
  ///        stream (it need not be the stream they were captured on)
  /// @throws marg::invalid_argument when the call_graph is empty
  /// @throws marg::cuda_error when the launch fails
  void replay(stream_view stream = {}) const;

  /// @return true when there is nothing to replay
  bool empty() const noexcept { return exec_ == nullptr && calls_ == nullptr; }

  /// @return true when replays launch a CUDA graph (false: CPU backend)
  bool on_device() const noexcept { return exec_ != nullptr; }

 private:
  friend call_graph capture_calls(stream_view stream, const std::function<void()>& calls);
  void* exec_ = nullptr;                    // the device graph (GPU)
  std::function<void()>* calls_ = nullptr;  // the calls themselves (CPU)
};

/// Records the numeric-layer calls that `calls` makes, without running them.
///
/// On the CUDA backend `calls` is invoked once, now, with `stream` in capture
/// mode: every libmarg call in it must pass `stream` (work on other streams is
/// not recorded and runs at once) and have device or managed operands
/// (`marg::array` data, `cudaMalloc` memory); a host operand would need a copy
/// and a wait, which a graph cannot replay, and is refused. Other host code in
/// `calls` runs only this once. On the CPU backend `calls` is stored (copied)
/// and not run until replay.
/// @param stream the stream to record on; default: the calling thread's
///        libmarg stream
/// @param calls the calls to record
/// @return the recording
/// @throws marg::invalid_argument when `stream` is already being captured,
///         when a recorded call has a host operand, or for any argument error
///         of a recorded call (the capture is then abandoned: nothing is
///         recorded or run, and `stream` is usable again)
/// @throws marg::cuda_error when CUDA cannot record or instantiate the graph
/// @note Everything `calls` throws is rethrown after the capture is ended.
call_graph capture_calls(stream_view stream, const std::function<void()>& calls);

}  // namespace marg
