// call_graph and capture_calls: a CUDA graph on the GPU (src/cuda/graph.cu,
// through the device interface), the stored calls on the CPU backend.
#include <marg/numeric/backend.hpp>
#include <marg/numeric/error.hpp>
#include <marg/numeric/graph.hpp>

#include <utility>

#include "memory/device_memory.hpp"

namespace marg {

call_graph::call_graph(call_graph&& other) noexcept
    : exec_(std::exchange(other.exec_, nullptr)), calls_(std::exchange(other.calls_, nullptr)) {}

call_graph& call_graph::operator=(call_graph&& other) noexcept {
  if (this != &other) {
    call_graph old(std::move(*this));
    exec_ = std::exchange(other.exec_, nullptr);
    calls_ = std::exchange(other.calls_, nullptr);
  }
  return *this;
}

call_graph::~call_graph() {
  detail::device::destroy_graph(exec_);
  delete calls_;
}

void call_graph::replay(stream_view stream) const {
  MARG_EXPECTS(!empty(),
               "marg::call_graph::replay: the call_graph is empty (default-constructed or moved "
               "from)");
  if (exec_ != nullptr)
    detail::device::replay(exec_, stream.handle());
  else
    (*calls_)();
}

call_graph capture_calls(stream_view stream, const std::function<void()>& calls) {
  MARG_EXPECTS(static_cast<bool>(calls), "marg::capture_calls: calls is empty");
  call_graph g;
  if (current_backend() != backend::cuda) {
    g.calls_ = new std::function<void()>(calls);
    return g;
  }
  detail::device::begin_capture(stream.handle());
  try {
    calls();
  } catch (...) {
    detail::device::end_capture(stream.handle(), false);
    throw;
  }
  g.exec_ = detail::device::end_capture(stream.handle(), true);
  return g;
}

}  // namespace marg
