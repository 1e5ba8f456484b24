// Issue 10 experiment (session 8), NOT built by CMake: latency and
// throughput of mma.sync.m16n8k8 tf32 (K independent chains per warp).
// Build: nvcc -O3 -arch=sm_90a -o hmma_rate hmma_rate.cu
#include <cuda_runtime.h>
#include <cstdio>
template <int K>
__global__ void hm(float* out, int iters, long long* clk) {
  float d[K][4];
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < 4; ++i) d[k][i] = 0.f;
  unsigned a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, b0 = a0 * 3, b1 = a0 * 5;
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < K; ++k)
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  long long t1 = clock64();
  float s = 0;
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < 4; ++i) s += d[k][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0 && blockIdx.x == 0) *clk = t1 - t0;
}
template <int K>
void run(int warps_per_block, int blocks) {
  float* out;
  long long* clk;
  cudaMalloc(&out, 4 << 20);
  cudaMalloc(&clk, 8);
  const int iters = 4096;
  hm<K><<<blocks, 32 * warps_per_block>>>(out, 16, clk);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  hm<K><<<blocks, 32 * warps_per_block>>>(out, iters, clk);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  long long c;
  cudaMemcpy(&c, clk, 8, cudaMemcpyDeviceToHost);
  const double hmma = double(K) * iters * warps_per_block * blocks;
  printf(
      "K=%d warps/block=%d blocks=%d: %.2f clk per HMMA per warp (block0 warp0), %.3f ms, %.1f "
      "MAC/clk/SM @1.98GHz (per SM %.0f HMMA/us)\n",
      K, warps_per_block, blocks, double(c) / (K * iters), ms,
      hmma * 1024 / (ms * 1e-3 * 1.98e9) / 132, hmma / 132 / (ms * 1e3));
  cudaFree(out);
  cudaFree(clk);
}
int main() {
  run<1>(1, 1);
  run<2>(1, 1);
  run<4>(1, 1);
  run<8>(1, 1);
  run<1>(4, 132);
  run<2>(4, 132);
  run<4>(4, 132);
  run<8>(4, 132);
  run<2>(8, 132);
  run<4>(8, 132);
  run<3>(12, 132);
  run<4>(16, 132);
  run<8>(16, 132);
  return 0;
}
