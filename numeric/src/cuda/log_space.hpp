// The device path of log_convolve (src/cuda/log_space.cu), called by
// src/log_convolve.cpp. Not installed.
#pragma once

#include <cstdint>

#include <marg/numeric/stream.hpp>

namespace marg::detail::cuda {

/// A checked batch of log-space convolutions (layout as log_convolve_batched).
template <class T>
struct log_problem {
  int m, n;
  const T* a;
  int inca;
  std::int64_t stridea;
  const T* b;
  int incb;
  std::int64_t strideb;
  T* r;
  int incr;
  std::int64_t strider;
  int batch;
};

/// Queues the batch on the stream when every operand is device or managed
/// memory, without waiting for it. A problem whose operands do not each fit
/// one window is computed directly; one with a NaN or +inf input gets NaN
/// outputs, as on the host.
/// @param x the checked problem (batch >= 1)
/// @param stream the stream
/// @return false, having done nothing, when the host path must run the batch
template <class T>
bool log_convolve_on_device(const log_problem<T>& x, stream_view stream);

}  // namespace marg::detail::cuda
