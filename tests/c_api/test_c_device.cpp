// The C API with device and managed memory and a caller's stream (CUDA
// builds; prints MARG_SKIP_NO_GPU, which ctest reports as skipped, without a
// GPU): marg_log_prob_sum_* reads operands that work queued on the stream is
// still writing, and gives the host-memory result bit for bit.
#include <marg/marg.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "FAILED: %s (%s)\n", what, marg_last_error_message());
  }
}

}  // namespace

int main() {
  int devices = 0;
  if (marg_device_count(&devices) != MARG_SUCCESS || devices == 0) {
    std::printf("MARG_SKIP_NO_GPU: no CUDA device on this host\n");
    return 0;
  }
  const int m = 300, n = 1000;
  std::vector<double> p(2 * m), q(n);
  for (int i = 0; i < 2 * m; ++i) p[i] = 1.0 + std::sin(0.1 * i);
  for (int i = 0; i < n; ++i) q[i] = 1.0 + std::cos(0.07 * i);
  double want = 0, got = 1, got_managed = 2;
  check(marg_log_prob_sum_f64(m, p.data(), 2, -5, n, q.data(), 1, 7, 400, &want, nullptr) ==
            MARG_SUCCESS,
        "host operands");

  cudaStream_t stream = nullptr;
  double *dp = nullptr, *dq = nullptr, *mp = nullptr, *mq = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess, "stream");
  check(cudaMalloc(&dp, sizeof(double) * p.size()) == cudaSuccess, "cudaMalloc p");
  check(cudaMalloc(&dq, sizeof(double) * q.size()) == cudaSuccess, "cudaMalloc q");
  check(cudaMallocManaged(&mp, sizeof(double) * p.size()) == cudaSuccess, "managed p");
  check(cudaMallocManaged(&mq, sizeof(double) * q.size()) == cudaSuccess, "managed q");
  if (failures == 0) {
    // queued, not waited for: the call must wait for the stream itself
    cudaMemcpyAsync(dp, p.data(), sizeof(double) * p.size(), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(dq, q.data(), sizeof(double) * q.size(), cudaMemcpyHostToDevice, stream);
    check(marg_log_prob_sum_f64(m, dp, 2, -5, n, dq, 1, 7, 400, &got, stream) == MARG_SUCCESS,
          "device operands");
    check(got == want, "device operands give the host result");
    cudaMemcpyAsync(mp, dp, sizeof(double) * p.size(), cudaMemcpyDeviceToDevice, stream);
    cudaMemcpyAsync(mq, dq, sizeof(double) * q.size(), cudaMemcpyDeviceToDevice, stream);
    check(
        marg_log_prob_sum_f64(m, mp, 2, -5, n, mq, 1, 7, 400, &got_managed, stream) == MARG_SUCCESS,
        "managed operands");
    check(got_managed == want, "managed operands give the host result");
  }
  cudaFree(dp), cudaFree(dq), cudaFree(mp), cudaFree(mq);
  if (stream) cudaStreamDestroy(stream);
  std::printf("c_api_device: log P = %.17g (host) %.17g (device) %.17g (managed): %s\n", want, got,
              got_managed, failures ? "FAILED" : "ok");
  return failures == 0 ? 0 : 1;
}
