/// @file cuda_memory.hpp
/// @brief What the device tests need from the CUDA runtime itself, without
/// CUDA headers in the test sources: device memory on a chosen device, user
/// streams, and CUDA's own current device (cudaSetDevice / cudaGetDevice).
#pragma once

#include <cstddef>

namespace marg::test::cuda {

/// @param device a device index
/// @param bytes size
/// @return device memory (cudaMalloc) on `device`; the current device is unchanged
void* malloc_on(int device, std::size_t bytes);
/// @param p from malloc_on
void free_device(void* p);
/// Copy between any two kinds of memory (cudaMemcpyDefault), complete on
/// the device memory's device when it returns; the current device is unchanged.
/// @param dst destination
/// @param src source
/// @param bytes number of bytes
void copy(void* dst, const void* src, std::size_t bytes);
/// @param device a device index
/// @return a new stream (cudaStreamNonBlocking) of `device`; the current device is unchanged
void* stream_on(int device);
/// @param stream from stream_on
void destroy_stream(void* stream);
/// cudaSetDevice, as a program that uses CUDA directly calls it.
/// @param device a device index
void set_current(int device);
/// @return cudaGetDevice
int current();

}  // namespace marg::test::cuda
