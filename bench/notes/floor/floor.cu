// Copy floor of float convolve 16384 x 64 in bench_cuda's launch pattern
// (issue 10, session 15): the forward's traffic (read 2 x 16384 x 64 floats,
// write 16384 x 127), rotated over the same number of buffer sets as
// bench_cuda (7), bursts of >= 200 us, median of 21 bursts. Experiment source,
// not part of the build: nvcc -O3 -std=c++20 -arch=sm_90 floor.cu -o floor
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x)                                                                \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

__device__ __forceinline__ void pdl_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

__global__ void empty_kernel(int) {
  pdl_wait();
}

// out4[i] = the i-th float4 of a ++ b: reads ~all of a and b, writes all of out
template <int U>
__global__ void copy_kernel(const float4* __restrict__ a, const float4* __restrict__ b,
                            float4* __restrict__ out, long na4, long nout4) {
  pdl_wait();
  const long stride = long(gridDim.x) * blockDim.x;
  for (long i0 = long(blockIdx.x) * blockDim.x + threadIdx.x; i0 < nout4; i0 += stride * U) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long i = i0 + u * stride;
      if (i < nout4) v[u] = i < na4 ? __ldg(a + i) : __ldg(b + (i - na4));
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long i = i0 + u * stride;
      if (i < nout4) out[i] = v[u];
    }
  }
}

__global__ void read_kernel(const float4* __restrict__ a, float4* __restrict__ sink, long n4) {
  pdl_wait();
  float s = 0;
  for (long i = long(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += long(gridDim.x) * blockDim.x) {
    const float4 v = __ldg(a + i);
    s += v.x + v.y + v.z + v.w;
  }
  if (s == -1.f) sink[0] = make_float4(s, s, s, s);  // never true: keeps the loads
}

__global__ void write_kernel(float4* __restrict__ out, long n4) {
  pdl_wait();
  for (long i = long(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += long(gridDim.x) * blockDim.x)
    out[i] = make_float4(1.f, 2.f, 3.f, 4.f);
}

int main() {
  const long batch = 16384, la = 64, lout = 127;
  const long na4 = batch * la / 4, nout4 = batch * lout / 4;
  const int sets = 7;  // bench_cuda: clamp(128e6 / set bytes, 1, 8)
  std::vector<float4*> a(sets), b(sets), o(sets);
  for (int s = 0; s < sets; ++s) {
    CK(cudaMalloc(&a[s], na4 * 16));
    CK(cudaMalloc(&b[s], na4 * 16));
    CK(cudaMalloc(&o[s], nout4 * 16 + 16));
    CK(cudaMemset(a[s], 0, na4 * 16));
    CK(cudaMemset(b[s], 0, na4 * 16));
  }
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs; sets %d, bytes per call %.2f MB\n", prop.name, sms, sets,
              (2.0 * na4 + nout4) * 16 / 1e6);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  struct variant {
    const char* name;
    int kind;  // 0 empty, 1 copy U=1, 2 copy U=4, 3 read, 4 write
    int grid, block;
  };
  const int one = static_cast<int>((nout4 + 255) / 256);
  const std::vector<variant> vs = {
      {"empty", 0, sms, 256},
      {"copy, one float4 per thread", 1, one, 256},
      {"copy, 4 float4 per thread", 2, (one + 3) / 4, 256},
      {"copy, sms x 8 x 256, 4 in flight", 2, sms * 8, 256},
      {"copy, sms x 4 x 256, 4 in flight", 2, sms * 4, 256},
      {"copy, 256 x 288 (lane grid)", 1, 256, 288},
      {"read only (8.4 MB)", 3, one, 256},
      {"write only (8.3 MB)", 4, one, 256},
  };
  for (int pdl = 0; pdl < 2; ++pdl) {
    for (const variant& v : vs) {
      int next = 0;
      auto launch = [&](int s) {
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(v.grid);
        cfg.blockDim = dim3(v.block);
        cfg.stream = st;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = pdl;
        switch (v.kind) {
          case 0:
            return cudaLaunchKernelEx(&cfg, empty_kernel, 0);
          case 1:
            return cudaLaunchKernelEx(&cfg, copy_kernel<1>, (const float4*)a[s],
                                      (const float4*)b[s], o[s], na4, nout4);
          case 2:
            return cudaLaunchKernelEx(&cfg, copy_kernel<4>, (const float4*)a[s],
                                      (const float4*)b[s], o[s], na4, nout4);
          case 3:
            return cudaLaunchKernelEx(&cfg, read_kernel, (const float4*)a[s], o[s], 2 * na4);
          default:
            return cudaLaunchKernelEx(&cfg, write_kernel, o[s], nout4);
        }
      };
      auto burst_ms = [&](int n) -> double {
        cudaEventRecord(e0, st);
        for (int i = 0; i < n; ++i)
          if (launch(next++ % sets) != cudaSuccess) return -1;
        cudaEventRecord(e1, st);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        return ms;
      };
      burst_ms(3);
      const double warm = burst_ms(3) / 3;
      burst_ms(std::clamp(int(3.0 / (warm + 1e-6)), 1, 2000));
      const double one_ms = burst_ms(3) / 3;
      const int burst = std::clamp(int(0.2 / (one_ms + 1e-6)), 1, 1000);
      std::vector<double> t;
      for (int r = 0; r < 21; ++r) t.push_back(burst_ms(burst) * 1e3 / burst);
      std::sort(t.begin(), t.end());
      CK(cudaGetLastError());
      std::printf("%-36s %-5s grid %6d x %3d  median %6.2f us  (min %6.2f, max %6.2f)\n", v.name,
                  pdl ? "PDL" : "plain", v.grid, v.block, t[10], t[0], t[20]);
    }
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
