/// @file array.hpp
/// @brief marg::array<T>: a 1-D owning buffer from the libmarg pool.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <marg/numeric/error.hpp>
#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>

namespace marg {

namespace detail {
/// Blocks the host until work queued on `stream` has finished (no-op on the CPU).
/// @param stream the stream
void wait_for_stream(stream_view stream);
/// Readies `bytes` of pool memory at `ptr` for host access: when libmarg work
/// on `stream` may be pending, migrates the range to the host on `stream` and
/// waits for the stream. No CUDA call without a GPU, and none on a libmarg
/// stream with nothing queued since it was last waited for.
/// @param ptr first byte
/// @param bytes number of bytes
/// @param stream the stream the memory's work is ordered on
void prepare_host_access(const void* ptr, std::size_t bytes, stream_view stream);
/// @param stream a stream, or the default
/// @return `stream`, with the default replaced by the calling thread's libmarg
///         stream when a GPU is usable (unchanged otherwise)
stream_view resolve_stream(stream_view stream);
/// @param stream a resolved stream (see resolve_stream)
/// @return the CUDA device `stream` belongs to, or -1 without a usable GPU
int device_of(stream_view stream);
}  // namespace detail

/// A 1-D owning buffer from the pool. Move-only: copy with clone().
/// The array keeps the stream it was made on (the default resolves to the
/// constructing thread's stream of its current device) and so its device, and host element access
/// (operator[], begin, to_vector, clone, the filling constructors) first waits for libmarg work
/// pending on that stream and migrates the elements to the host. Pass stream() to numeric calls on
/// the array; after work of your own on the stream, call marg::synchronize(stream()) before host
/// access.
template <class T>
class array {
 public:
  /// An empty array.
  array() noexcept = default;
  /// @param size number of elements (uninitialized)
  /// @param stream the stream the array's work is ordered on
  explicit array(std::size_t size, stream_view stream = {})
      : stream_(detail::resolve_stream(stream)),
        device_(detail::device_of(stream_)),
        data_(static_cast<T*>(allocate(bytes_of(size), stream_))),
        size_(size) {}
  /// @param size number of elements
  /// @param value value of every element
  array(std::size_t size, const T& value) : array(size) { std::fill(begin(), end(), value); }
  /// @param values the elements
  explicit array(const std::vector<T>& values) : array(values.size()) {
    std::copy(values.begin(), values.end(), begin());
  }
  /// @param values the elements
  array(std::initializer_list<T> values) : array(values.size()) {
    std::copy(values.begin(), values.end(), begin());
  }
  // not copyable: use clone()
  /// @cond
  array(const array&) = delete;
  array& operator=(const array&) = delete;
  /// @endcond
  /// Moves; the source is left empty.
  /// @param other the array to move from
  array(array&& other) noexcept
      : stream_(other.stream_),
        device_(other.device_),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  /// Moves; the source is left empty.
  /// @param other the array to move from
  /// @return *this
  array& operator=(array&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      stream_ = other.stream_;
      device_ = other.device_;
    }
    return *this;
  }
  ~array() { release(); }

  /// @return a deep copy on the same stream
  array clone() const {
    array c(size_, stream_);
    std::copy(begin(), end(), c.begin());
    return c;
  }
  /// @return number of elements
  std::size_t size() const noexcept { return size_; }
  /// @return true when there are no elements
  bool empty() const noexcept { return size_ == 0; }
  /// @return pointer to the first element (no wait: for kernels and numeric calls)
  T* data() noexcept { return data_; }
  /// @return pointer to the first element (no wait)
  const T* data() const noexcept { return data_; }
  /// @return the stream the array's work is ordered on
  stream_view stream() const noexcept { return stream_; }
  /// @return the CUDA device of the array's stream and pool (-1 without a
  ///         usable GPU)
  int device() const noexcept { return device_; }
  /// @param i index below size()
  /// @return element i, after pending GPU work on the array finished
  T& operator[](std::size_t i) {
    host_access();
    return data_[i];
  }
  /// @param i index below size()
  /// @return element i, after pending GPU work on the array finished
  const T& operator[](std::size_t i) const {
    host_access();
    return data_[i];
  }
  /// @return iterator to the first element, after pending GPU work finished
  T* begin() {
    host_access();
    return data_;
  }
  /// @return iterator past the last element
  T* end() { return data_ + size_; }
  /// @return iterator to the first element, after pending GPU work finished
  const T* begin() const {
    host_access();
    return data_;
  }
  /// @return iterator past the last element
  const T* end() const { return data_ + size_; }
  /// @return a host copy of the elements
  std::vector<T> to_vector() const {
    host_access();
    return std::vector<T>(data_, data_ + size_);
  }

 private:
  static std::size_t bytes_of(std::size_t size) {
    if (size > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw out_of_memory("marg::array: size = " + std::to_string(size) +
                          " elements overflow the address space");
    return size * sizeof(T);
  }
  void host_access() const { detail::prepare_host_access(data_, size_ * sizeof(T), stream_); }
  void release() noexcept {
    if (data_ != nullptr) deallocate(data_, size_ * sizeof(T), stream_);
    data_ = nullptr;
    size_ = 0;
  }
  stream_view stream_{};  // first: the allocation in the constructor uses it
  int device_ = -1;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace marg
