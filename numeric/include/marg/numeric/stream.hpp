/// @file stream.hpp
/// @brief A non-owning view of a CUDA stream, usable without CUDA headers.
#pragma once

namespace marg {

/// A non-owning handle of a CUDA stream. Default-constructed, it names the
/// calling host thread's own libmarg stream (created on first use, never
/// destroyed, handed to a new thread when its thread exits; it synchronizes
/// with the legacy default stream). Construct it from a `cudaStream_t` with
/// `marg::stream_view{static_cast<void*>(s)}`; such a stream must outlive the
/// work and the pool blocks ordered on it. The CPU backend ignores it (CPU
/// calls complete before returning).
class stream_view {
 public:
  /// The calling thread's default libmarg stream.
  constexpr stream_view() noexcept = default;
  /// @param handle a `cudaStream_t` cast to `void*`; nullptr means the default
  constexpr explicit stream_view(void* handle) noexcept : handle_(handle) {}
  /// @return the `cudaStream_t` as `void*`, or nullptr for the default
  constexpr void* handle() const noexcept { return handle_; }
  /// @return true for the calling thread's default stream
  constexpr bool is_default() const noexcept { return handle_ == nullptr; }

 private:
  void* handle_ = nullptr;
};

/// Blocks the host until the work queued on `stream` has finished. A no-op
/// on a machine without a usable GPU.
/// @param stream the stream; default: the calling thread's libmarg stream
/// @throws marg::cuda_error when the stream reports an error
void synchronize(stream_view stream = {});

}  // namespace marg
