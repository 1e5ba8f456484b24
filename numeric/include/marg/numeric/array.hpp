/// @file array.hpp
/// @brief marg::array<T>: a 1-D owning buffer from the libmarg pool.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

#include <marg/numeric/pool.hpp>
#include <marg/numeric/stream.hpp>

namespace marg {

namespace detail {
/// Blocks the host until work queued on `stream` has finished (no-op on the CPU).
void wait_for_stream(stream_view stream);
}  // namespace detail

/// A 1-D owning buffer from the pool. Move-only: copy with clone().
/// Host element access (operator[], begin, end, to_vector) first waits for
/// GPU work pending on the array's stream.
template <class T>
class array {
 public:
  /// An empty array.
  array() noexcept = default;
  /// @param size number of elements (uninitialized)
  /// @param stream the stream the array's work is ordered on
  explicit array(std::size_t size, stream_view stream = {})
      : data_(static_cast<T*>(allocate(size * sizeof(T), stream))), size_(size), stream_(stream) {}
  /// @param size number of elements
  /// @param value value of every element
  array(std::size_t size, const T& value) : array(size) { std::fill(data_, data_ + size_, value); }
  /// @param values the elements
  explicit array(const std::vector<T>& values) : array(values.size()) {
    std::copy(values.begin(), values.end(), data_);
  }
  /// @param values the elements
  array(std::initializer_list<T> values) : array(values.size()) {
    std::copy(values.begin(), values.end(), data_);
  }
  array(const array&) = delete;
  array& operator=(const array&) = delete;
  /// Moves; the source is left empty.
  array(array&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        stream_(other.stream_) {}
  /// Moves; the source is left empty.
  array& operator=(array&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      stream_ = other.stream_;
    }
    return *this;
  }
  ~array() { release(); }

  /// @return a deep copy on the same stream
  array clone() const {
    array c(size_, stream_);
    detail::wait_for_stream(stream_);
    std::copy(data_, data_ + size_, c.data_);
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
  /// @param i index below size()
  /// @return element i, after pending GPU work on the array finished
  T& operator[](std::size_t i) {
    detail::wait_for_stream(stream_);
    return data_[i];
  }
  /// @param i index below size()
  /// @return element i, after pending GPU work on the array finished
  const T& operator[](std::size_t i) const {
    detail::wait_for_stream(stream_);
    return data_[i];
  }
  /// @return iterator to the first element, after pending GPU work finished
  T* begin() {
    detail::wait_for_stream(stream_);
    return data_;
  }
  /// @return iterator past the last element
  T* end() { return data_ + size_; }
  /// @return iterator to the first element, after pending GPU work finished
  const T* begin() const {
    detail::wait_for_stream(stream_);
    return data_;
  }
  /// @return iterator past the last element
  const T* end() const { return data_ + size_; }
  /// @return a host copy of the elements
  std::vector<T> to_vector() const {
    detail::wait_for_stream(stream_);
    return std::vector<T>(data_, data_ + size_);
  }

 private:
  void release() noexcept {
    if (data_ != nullptr) deallocate(data_, size_ * sizeof(T), stream_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  stream_view stream_{};
};

}  // namespace marg
