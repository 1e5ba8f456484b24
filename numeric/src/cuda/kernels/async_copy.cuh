// Asynchronous global -> shared copies (cp.async, sm_80+) of one element with
// zero fill, and the group commit / wait around them. Not installed.
#pragma once

#include <cuda_runtime.h>

namespace marg::detail::cuda {

/// Starts copying *src into the shared element *dst, or zero-fills *dst when
/// `in` is false (then src is not read but must still be a valid address).
/// @param dst shared-memory destination
/// @param src global source
/// @param in whether to copy (false: write zero)
template <class T>
__device__ __forceinline__ void async_copy(T* dst, const T* src, bool in) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async copies 4 or 8 bytes here");
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int bytes = in ? static_cast<int>(sizeof(T)) : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src),
               "n"(static_cast<int>(sizeof(T))), "r"(bytes)
               : "memory");
}

/// Starts copying the 16 bytes at src into the 16 shared bytes at dst (both
/// 16-byte aligned, all 16 source bytes readable: the copy reads them whole
/// even when told to copy fewer). The copy allocates in L1, so blocks on one
/// SM that read the same bytes share them.
/// @param dst shared-memory destination
/// @param src global source
__device__ __forceinline__ void async_copy16(void* dst, const void* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

/// Closes the group of the copies this thread issued since the last commit.
__device__ __forceinline__ void async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most `Pending` of this thread's committed groups are still
/// in flight (a barrier then publishes the landed copies to the block).
/// @tparam Pending groups allowed to stay in flight
template <int Pending>
__device__ __forceinline__ void async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace marg::detail::cuda
