// What the current device can run: the hardware features the kernel variants
// need, read from its compute capability, so that the dispatch never picks a
// variant the device cannot run. Not installed.
#pragma once

namespace marg::detail::cuda {

/// The oldest compute capability the CUDA backend runs on (x 10): Turing.
inline constexpr int min_capability = 75;

/// The features of one device that decide which kernel variants it runs.
struct device_features {
  /// compute capability as major x 10 + minor (90: Hopper)
  int capability = 0;
  /// thread-block clusters, distributed shared memory, mbarrier transaction
  /// counts, st.async, TMA and programmatic dependent launch (sm_90 and
  /// later, unless MARG_CUDA_GENERIC is set): tap splits over a cluster, the
  /// lane variant's bulk copies and the wgmma variant need them
  bool hopper = false;
  /// mma.sync on FP64 and TF32 and cp.async (sm_80 and later): the mma
  /// variant needs them
  bool ampere = false;
  /// the binary's sm_90a machine code runs here (a Hopper device with the
  /// Hopper features): the wgmma variant needs it
  bool wgmma = false;
  /// streaming multiprocessors: the dispatch sizes grids and waves with them
  int multiprocessors = 0;
  /// shared memory one block may opt in to, in bytes: the lane variant's
  /// slabs must fit
  int max_smem = 0;
  /// the multiprocessors' clock in MHz: the cost model's cycles (0: unknown,
  /// the model assumes 1500)
  int clock_mhz = 0;
  /// memory bandwidth in GB/s: the cost model's streaming time (0: unknown,
  /// the model assumes 1000)
  int bandwidth_gbs = 0;
};

/// @return the features of the calling thread's current device (cached per
///         host thread and device). The dispatch reads the device only
///         through them: choose() (launch.hpp) is a function of them and the
///         problem, so tests describe made-up devices on a machine without a
///         GPU.
const device_features& current_device_features();

/// @return true when the environment variable MARG_CUDA_GENERIC is set (and
///         not "0"): every device is treated as having no Hopper features, so
///         that a Hopper GPU runs the generic path of older GPUs
bool generic_forced() noexcept;

/// Whether the CUDA backend can run on every visible device: a device with
/// compute capability below 7.5, or one this build has no kernel image for
/// (no machine code for its architecture and no PTX it can compile), makes
/// it unusable. Probed once.
/// @return "" when usable, else the reason, one sentence naming the device
const char* unusable_reason() noexcept;

}  // namespace marg::detail::cuda

/// 1 where device code may use sm_90 features (clusters, mbarrier
/// transaction counts, st.async, TMA): the host pass and device passes for
/// sm_90 and later. Elsewhere such code becomes a trap that the dispatch
/// never reaches (device_features::hopper is false there).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define MARG_CUDA_HOPPER_CODE 1
#else
#define MARG_CUDA_HOPPER_CODE 0
#endif

/// 1 where device code may use sm_80 features (mma.sync on FP64 and TF32,
/// cp.async); elsewhere as MARG_CUDA_HOPPER_CODE.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define MARG_CUDA_AMPERE_CODE 1
#else
#define MARG_CUDA_AMPERE_CODE 0
#endif
