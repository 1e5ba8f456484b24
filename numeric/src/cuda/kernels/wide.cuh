// Wide-tile variant of a single float or double correlation
// (kernel_variant::wide): a block owns G groups of 16 outputs and every tap
// that meets them. Its threads split the taps, 16 each, so each thread does
// 16 x 16 FMA from registers; the block then reduces in the warp (a
// reduce-scatter of shuffles) and across warps through 2 KB of shared
// memory. One staging round trip and one barrier per block, no cluster: the
// tiled kernels' tap split over a cluster pays two cluster-scope releases on
// the critical path (docs/kernel-notes.md).
// Unit strides and 16-byte aligned operands only. docs/kernel-notes.md
// has the measurements. Not installed.
#pragma once

#include <cstdint>

#include "async_copy.cuh"
#include "cluster.cuh"
#include "correlation.cuh"

namespace marg::detail::cuda {

/// Shape constants of the wide kernel.
struct wide_tuning {
  static constexpr int R = 16;  ///< outputs per thread and per group
  static constexpr int U = 16;  ///< taps per thread
};

/// Elements of type T in one 16-byte vector (the unit of staging and of
/// shared-memory loads).
template <class T>
inline constexpr int wide_vec = 16 / static_cast<int>(sizeof(T));

/// The operands as the wide kernel reads them. A convolution is
/// out_j = sum_i t_i x_{j-i} (t the shorter operand, not reversed); a gradient
/// is the correlation out_j = sum_k t_k x_{j+k}.
template <class T>
struct wide_operands {
  const T* t;  ///< taps, 16-byte aligned, unit stride
  int lt;      ///< number of taps
  const T* x;  ///< the other operand, 16-byte aligned, unit stride
  int lx;      ///< its length
  T* out;      ///< outputs, unit stride
  int lout;    ///< number of outputs
  int ncmax;   ///< 16-tap chunks a block may meet (shared-memory layout)
  int ntg;     ///< threads per group (>= ncmax, whole warps)
};

/// Shared-memory index of element i of a staged row: 16 bytes of padding
/// every 128, so that the 16-byte loads of 8 lanes 64 bytes (float) or 128
/// bytes (double) apart hit distinct banks.
template <class T>
__host__ __device__ constexpr int wide_skew(int i) {
  constexpr int row_shift = sizeof(T) == 4 ? 5 : 4;  // 128 bytes: 32 floats, 16 doubles
  return i + wide_vec<T> * (i >> row_shift);
}

/// Shared-memory layout of a block meeting at most `ncmax` chunks of taps:
/// the taps from element 0, the x values from wide_x_at(ncmax).
/// @return the element where the x values start (16-byte aligned)
template <class T>
__host__ __device__ constexpr int wide_x_at(int ncmax) {
  return wide_skew<T>(wide_tuning::U * ncmax) + wide_vec<T>;
}

/// @return the dynamic shared memory of a block of G groups, in elements
template <class T>
__host__ __device__ constexpr int wide_smem_elems(int ncmax, int groups) {
  return wide_x_at<T>(ncmax) + wide_skew<T>(wide_tuning::U * ncmax + wide_tuning::R * groups) +
         2 * wide_vec<T>;
}

/// Reduce-scatter step: lanes 2H apart swap halves of acc[0, 2H) and add, so
/// that acc[0, H) holds the pair's sums of the half this lane keeps.
template <int H, class T>
__device__ __forceinline__ void wide_scatter(T (&acc)[wide_tuning::R], int lane) {
  const bool up = lane & (2 * H);
#pragma unroll
  for (int i = 0; i < H; ++i) {
    const T keep = up ? acc[i + H] : acc[i], give = up ? acc[i] : acc[i + H];
    acc[i] = keep + __shfl_xor_sync(0xffffffffu, give, 2 * H);
  }
}

/// Loads the 16-byte vector at src (shared memory, 16-byte aligned) into
/// dst[0, wide_vec<T>).
template <class T>
__device__ __forceinline__ void wide_load16(T* dst, const T* src) {
  if constexpr (sizeof(T) == 4) {
    const float4 v = *reinterpret_cast<const float4*>(src);
    dst[0] = v.x, dst[1] = v.y, dst[2] = v.z, dst[3] = v.w;
  } else {
    const double2 v = *reinterpret_cast<const double2*>(src);
    dst[0] = v.x, dst[1] = v.y;
  }
}

/// Stages the 16-byte vector at src, of which the first n (0..wide_vec<T>)
/// elements lie inside the row, into dst (16-byte aligned): a whole vector
/// by one 16-byte copy, a partial one element by element (a 16-byte copy
/// would read past the row's end), an empty one as zeros.
/// @param dst shared-memory destination
/// @param src the vector's first element
/// @param row any readable element of the row (the source of skipped copies)
/// @param n elements inside the row
template <class T>
__device__ __forceinline__ void wide_stage16(T* dst, const T* src, const T* row, int n) {
  constexpr int V = wide_vec<T>;
  if (n == V) {
    async_copy16(dst, src);
  } else if (n <= 0) {
    if constexpr (sizeof(T) == 4)
      *reinterpret_cast<float4*>(dst) = make_float4(0.f, 0.f, 0.f, 0.f);
    else
      *reinterpret_cast<double2*>(dst) = make_double2(0.0, 0.0);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) async_copy(dst + e, e < n ? src + e : row, e < n);
  }
}

/// Threads per block the wide kernel is compiled for: float 1024 (64
/// registers), double 512 (128 registers for its 16 x 16 doubles).
template <class T>
inline constexpr int wide_max_threads = sizeof(T) == 4 ? 1024 : 512;

/// One block per 16 G outputs; thread (g, c) of the block computes outputs
/// 16 g + [0, 16) of the block's tile over the block's taps chunk c.
/// Launched with early start (it waits for the previous kernel first).
template <class T, bool Conv, int G>
__global__ void __launch_bounds__(wide_max_threads<T>) kernel_banded_wide(wide_operands<T> w) {
#if MARG_CUDA_AMPERE_CODE
  constexpr int R = wide_tuning::R, U = wide_tuning::U, V = wide_vec<T>;
  extern __shared__ __align__(16) unsigned char wide_smem_bytes[];
  __shared__ T red[wide_max_threads<T> / 32][R];  // a row per warp
  await_previous_kernel();
  T* A = reinterpret_cast<T*>(wide_smem_bytes);
  T* W = A + wide_x_at<T>(w.ncmax);
  const int j0 = blockIdx.x * R * G, tid = threadIdx.x, nt = blockDim.x;
  // the block's taps: chunks c_lo .. c_lo + nc - 1 of 16
  int c_lo = 0, nc;
  if (Conv) {
    const int ilo = max(0, j0 - (w.lx - 1)), ihi = min(w.lt - 1, j0 + R * G - 1);
    c_lo = ilo / U;
    nc = ihi >= ilo ? ihi / U - c_lo + 1 : 0;
  } else {
    const int khi = min(w.lt - 1, w.lx - 1 - j0);
    nc = khi >= 0 ? khi / U + 1 : 0;
  }
  // stage taps [U c_lo, U (c_lo + nc)) and the x values they meet, zeros
  // outside the rows; origins are multiples of 16 elements, so a vector of x
  // lies wholly before the row or starts inside it
  const int tbase = U * c_lo;
  const int xbase = Conv ? j0 - U * (c_lo + nc - 1) - U : j0;
  for (int v = tid; v < U / V * nc; v += nt) {
    const int e = tbase + V * v;
    wide_stage16(A + wide_skew<T>(V * v), w.t + e, w.t, min(V, w.lt - e));
  }
  for (int v = tid; v < U / V * nc + R / V * G; v += nt) {
    const int e = xbase + V * v;
    wide_stage16(W + wide_skew<T>(V * v), e < 0 ? w.x : w.x + e, w.x, e < 0 ? 0 : min(V, w.lx - e));
  }
  async_commit();
  async_wait<0>();
  __syncthreads();
  const int g = tid / w.ntg, c = tid - g * w.ntg;
  T acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = T(0);
  if (c < nc) {
    T a[U], x[U + R];
    const int wb = R * g + (Conv ? U * (nc - 1 - c) : U * c);
#pragma unroll
    for (int i = 0; i < U / V; ++i) {
      wide_load16(a + V * i, A + wide_skew<T>(U * c + V * i));
    }
#pragma unroll
    for (int i = 0; i < (U + R) / V; ++i) {
      wide_load16(x + V * i, W + wide_skew<T>(wb + V * i));
    }
    // conv: x_{j-i} for output r and tap u sits at W[wb + 16 + r - u];
    // correlation: x_{j+k} at W[wb + r + u]
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = fma(a[u], x[Conv ? U + r - u : r + u], acc[r]);
  }
  // after the steps lane l holds output l >> 1 summed over the lanes that
  // differ from it in bits 1-4; the last shuffle adds bit 0
  const int lane = tid & 31, warp = tid >> 5;
  wide_scatter<8>(acc, lane);
  wide_scatter<4>(acc, lane);
  wide_scatter<2>(acc, lane);
  wide_scatter<1>(acc, lane);
  acc[0] += __shfl_xor_sync(0xffffffffu, acc[0], 1);
  if ((lane & 1) == 0) red[warp][lane >> 1] = acc[0];
  __syncthreads();
  if (tid < R * G && j0 + tid < w.lout) {
    const int w0 = tid / R * (w.ntg / 32);
    T s = red[w0][tid % R];
    for (int k = 1; k < w.ntg / 32; ++k) s += red[w0 + k][tid % R];
    w.out[j0 + tid] = s;
  }
#else
  __trap();  // needs sm_80: the dispatch runs it only there
#endif
}

}  // namespace marg::detail::cuda
