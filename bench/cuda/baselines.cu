// Baselines of bench_cuda (see baselines.cuh).
#include <cstdio>
#include <cstdlib>

#include "baselines.cuh"

namespace marg::bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

void check_fft(cufftResult e, const char* what) {
  if (e != CUFFT_SUCCESS) {
    std::fprintf(stderr, "%s: cufft error %d\n", what, static_cast<int>(e));
    std::exit(2);
  }
}

template <class T>
__global__ void kernel_blog_v0(int m, int n, const T* p, const T* q, T* r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m + n - 1) return;
  const int lo = i - n + 1 > 0 ? i - n + 1 : 0, hi = i < m - 1 ? i : m - 1;
  T s = 0;
  for (int j = lo; j <= hi; ++j) s += p[j] * q[i - j];
  r[i] = s;
}

// outputs i0..i0+B-1 need q[i - j] for p chunk j0..j0+B-1: a window of 2B - 1 values
template <class T>
__global__ void kernel_blog_v3(int m, int n, const T* p, const T* q, T* r) {
  extern __shared__ unsigned char smem_raw[];
  T* ps = reinterpret_cast<T*>(smem_raw);
  T* qs = ps + blockDim.x;
  const int B = blockDim.x, t = threadIdx.x;
  const int i0 = blockIdx.x * B, i = i0 + t;
  T s = 0;
  for (int j0 = 0; j0 < m; j0 += B) {
    if (j0 > i0 + B - 1) break;  // no output of the block reaches this chunk
    ps[t] = j0 + t < m ? p[j0 + t] : T(0);
    // qs[u] = q[i0 - j0 - (B - 1) + u], u < 2B - 1
    for (int u = t; u < 2 * B - 1; u += B) {
      const int k = i0 - j0 - (B - 1) + u;
      qs[u] = (k >= 0 && k < n) ? q[k] : T(0);
    }
    __syncthreads();
    for (int jj = 0; jj < B; ++jj) s += ps[jj] * qs[t - jj + B - 1];
    __syncthreads();
  }
  if (i < m + n - 1) r[i] = s;
}

template <class T>
__global__ void kernel_blog_v4(int m, int n, const T* p, const T* q, T* r) {
  const int lane = threadIdx.x % 32;
  const long long i = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
  if (i >= m + n - 1) return;
  const int lo = static_cast<int>(i - n + 1 > 0 ? i - n + 1 : 0);
  const int hi = static_cast<int>(i < m - 1 ? i : m - 1);
  T s = 0;
  for (int j = lo + lane; j <= hi; j += 32) s += p[j] * q[i - j];
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) r[i] = s;
}

template <class T>
__global__ void kernel_fft_multiply(int size, void* a, const void* b, T scale);

template <>
__global__ void kernel_fft_multiply<float>(int size, void* a, const void* b, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= size / 2 + 1) return;
  auto* x = static_cast<cufftComplex*>(a);
  const auto* y = static_cast<const cufftComplex*>(b);
  const cufftComplex u = x[i], v = y[i];
  x[i] = make_cuComplex((u.x * v.x - u.y * v.y) * scale, (u.x * v.y + u.y * v.x) * scale);
}

template <>
__global__ void kernel_fft_multiply<double>(int size, void* a, const void* b, double scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= size / 2 + 1) return;
  auto* x = static_cast<cufftDoubleComplex*>(a);
  const auto* y = static_cast<const cufftDoubleComplex*>(b);
  const cufftDoubleComplex u = x[i], v = y[i];
  x[i] = make_cuDoubleComplex((u.x * v.x - u.y * v.y) * scale, (u.x * v.y + u.y * v.x) * scale);
}

}  // namespace

template <class T>
void blog_v0(int m, int n, const T* p, const T* q, T* r, int block, cudaStream_t s) {
  const int out = m + n - 1;
  kernel_blog_v0<T><<<(out + block - 1) / block, block, 0, s>>>(m, n, p, q, r);
  check(cudaPeekAtLastError(), "blog_v0");
}

template <class T>
void blog_v3(int m, int n, const T* p, const T* q, T* r, int block, cudaStream_t s) {
  const int out = m + n - 1;
  const std::size_t smem = (3 * static_cast<std::size_t>(block)) * sizeof(T);
  kernel_blog_v3<T><<<(out + block - 1) / block, block, smem, s>>>(m, n, p, q, r);
  check(cudaPeekAtLastError(), "blog_v3");
}

template <class T>
void blog_v4(int m, int n, const T* p, const T* q, T* r, int block, cudaStream_t s) {
  const long long threads = 32LL * (m + n - 1);
  kernel_blog_v4<T>
      <<<static_cast<unsigned>((threads + block - 1) / block), block, 0, s>>>(m, n, p, q, r);
  check(cudaPeekAtLastError(), "blog_v4");
}

template <class T>
fft_convolver<T>::fft_convolver(int m, int n, cudaStream_t s) : m_(m), n_(n), stream_(s) {
  size_ = 1;
  while (size_ < m + n - 1) size_ *= 2;
  const bool dbl = sizeof(T) == 8;
  const std::size_t cbytes = (size_ / 2 + 1) * 2 * sizeof(T);
  check(cudaMalloc(&buf_p_, size_ * sizeof(T)), "fft alloc");
  check(cudaMalloc(&buf_q_, size_ * sizeof(T)), "fft alloc");
  check(cudaMalloc(&spec_p_, cbytes), "fft alloc");
  check(cudaMalloc(&spec_q_, cbytes), "fft alloc");
  check_fft(cufftPlan1d(&fwd_, size_, dbl ? CUFFT_D2Z : CUFFT_R2C, 1), "plan");
  check_fft(cufftPlan1d(&inv_, size_, dbl ? CUFFT_Z2D : CUFFT_C2R, 1), "plan");
  check_fft(cufftSetStream(fwd_, s), "stream");
  check_fft(cufftSetStream(inv_, s), "stream");
  check(cudaMemsetAsync(buf_p_, 0, size_ * sizeof(T), s), "memset");
  check(cudaMemsetAsync(buf_q_, 0, size_ * sizeof(T), s), "memset");
}

template <class T>
fft_convolver<T>::~fft_convolver() {
  cufftDestroy(fwd_);
  cufftDestroy(inv_);
  cudaFree(buf_p_);
  cudaFree(buf_q_);
  cudaFree(spec_p_);
  cudaFree(spec_q_);
}

template <class T>
void fft_convolver<T>::run(const T* p, const T* q, T* r) {
  // the zero padding beyond m and n stays zero from the constructor
  check(cudaMemcpyAsync(buf_p_, p, m_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_), "copy");
  check(cudaMemcpyAsync(buf_q_, q, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_), "copy");
  if constexpr (sizeof(T) == 8) {
    check_fft(cufftExecD2Z(fwd_, reinterpret_cast<double*>(buf_p_),
                           static_cast<cufftDoubleComplex*>(spec_p_)),
              "exec");
    check_fft(cufftExecD2Z(fwd_, reinterpret_cast<double*>(buf_q_),
                           static_cast<cufftDoubleComplex*>(spec_q_)),
              "exec");
  } else {
    check_fft(
        cufftExecR2C(fwd_, reinterpret_cast<float*>(buf_p_), static_cast<cufftComplex*>(spec_p_)),
        "exec");
    check_fft(
        cufftExecR2C(fwd_, reinterpret_cast<float*>(buf_q_), static_cast<cufftComplex*>(spec_q_)),
        "exec");
  }
  const int half = size_ / 2 + 1;
  kernel_fft_multiply<T>
      <<<(half + 255) / 256, 256, 0, stream_>>>(size_, spec_p_, spec_q_, T(1) / T(size_));
  check(cudaPeekAtLastError(), "fft multiply");
  if constexpr (sizeof(T) == 8) {
    check_fft(cufftExecZ2D(inv_, static_cast<cufftDoubleComplex*>(spec_p_),
                           reinterpret_cast<double*>(buf_p_)),
              "exec");
  } else {
    check_fft(
        cufftExecC2R(inv_, static_cast<cufftComplex*>(spec_p_), reinterpret_cast<float*>(buf_p_)),
        "exec");
  }
  check(cudaMemcpyAsync(r, buf_p_, (m_ + n_ - 1) * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
        "copy");
  // the next run's inputs must land on zero padding again
  check(cudaMemsetAsync(buf_p_ + m_, 0, (size_ - m_) * sizeof(T), stream_), "memset");
}

#define MARG_BENCH_INSTANTIATE(T)                                                \
  template void blog_v0<T>(int, int, const T*, const T*, T*, int, cudaStream_t); \
  template void blog_v3<T>(int, int, const T*, const T*, T*, int, cudaStream_t); \
  template void blog_v4<T>(int, int, const T*, const T*, T*, int, cudaStream_t); \
  template class fft_convolver<T>;
MARG_BENCH_INSTANTIATE(float)
MARG_BENCH_INSTANTIATE(double)

}  // namespace marg::bench
