// clang-format off
// The cost model's coefficients (cost_model.hpp), indexed [double][gradient]
// [variant]: {fitted, fixed, per_wave, per_step, per_mac, per_elem, per_byte};
// and the split's sum through scratch: {fixed, per_byte}.
// Written by scripts/fit-cost-model from these marg_tune --dump measurements:
// - bench/cuda/cost-data/h200-big-seed10-batch512.csv.xz: 150 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:53 UTC
//   command: build/bench/cuda/marg_tune --dump 150 --big --max-batch 512 --seed 10 --out /root/out/r/hbig10.csv
//   device: capability=90 hopper=1 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-big-seed9.csv.xz: 120 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:39 UTC
//   command: build/bench/cuda/marg_tune --dump 120 --big --seed 9 --out /root/out/r/hbig9.csv
//   device: capability=90 hopper=1 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-double-every-split.csv.xz: 21 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 19:09 UTC
//   command: build/bench/cuda/marg_tune --dump 1 --shape convolve:double:8192:8192:1 --shape convolve:double:16384:16384:1 --shape convolve:double:32768:32768:1 --shape convolve:double:65536:65536:1 --shape convolve:double:16384:16384:4 --shape convolve:double:4096:131072:1 --shape convolve:double:2048:2048:1 --shape convolve:double:512:512:4096 --shape convolve:double:64:64:16384 --shape grad_p:double:8192:8192:1 --shape grad_p:double:16384:16384:1 --shape grad_p:double:32768:32768:1 --shape grad_p:double:65536:65536:1 --shape grad_p:double:16384:16384:4 --shape grad_p:double:4096:131072:1 --shape grad_p:double:2048:2048:1 --shape grad_p:double:512:512:4096 --shape grad_p:double:64:64:16384 --shape grad_p:double:1024:65536:1 --shape grad_q:double:65536:65536:1 --shape grad_q:double:512:512:4096 --every-split --out /root/out/r/hD.csv
//   device: capability=90 hopper=1 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-big-every-split.csv.xz: 26 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:32 UTC
//   command: build/bench/cuda/marg_tune --dump 1 --shape convolve:float:8192:8192:1 --shape convolve:float:16384:16384:1 --shape convolve:float:32768:32768:1 --shape convolve:float:65536:65536:1 --shape convolve:float:16384:16384:4 --shape convolve:float:4096:131072:1 --shape convolve:double:8192:8192:1 --shape convolve:double:16384:16384:1 --shape convolve:double:32768:32768:1 --shape convolve:double:65536:65536:1 --shape convolve:double:16384:16384:4 --shape convolve:double:4096:131072:1 --shape grad_p:float:8192:8192:1 --shape grad_p:float:16384:16384:1 --shape grad_p:float:32768:32768:1 --shape grad_p:float:65536:65536:1 --shape grad_p:float:16384:16384:4 --shape grad_p:float:4096:131072:1 --shape grad_p:double:8192:8192:1 --shape grad_p:double:16384:16384:1 --shape grad_p:double:32768:32768:1 --shape grad_p:double:65536:65536:1 --shape grad_p:double:16384:16384:4 --shape grad_p:double:4096:131072:1 --shape grad_p:float:1024:65536:1 --shape grad_p:double:1024:65536:1 --every-split --out /root/out/r/gbig.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-big-seed10-batch512-every-split.csv.xz: 150 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:53 UTC
//   command: build/bench/cuda/marg_tune --dump 150 --big --max-batch 512 --seed 10 --every-split --out /root/out/r/gbig10.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-big-seed9-every-split.csv.xz: 120 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:38 UTC
//   command: build/bench/cuda/marg_tune --dump 120 --big --seed 9 --every-split --out /root/out/r/gbig9.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-double-every-split.csv.xz: 21 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 19:07 UTC
//   command: build/bench/cuda/marg_tune --dump 1 --shape convolve:double:8192:8192:1 --shape convolve:double:16384:16384:1 --shape convolve:double:32768:32768:1 --shape convolve:double:65536:65536:1 --shape convolve:double:16384:16384:4 --shape convolve:double:4096:131072:1 --shape convolve:double:2048:2048:1 --shape convolve:double:512:512:4096 --shape convolve:double:64:64:16384 --shape grad_p:double:8192:8192:1 --shape grad_p:double:16384:16384:1 --shape grad_p:double:32768:32768:1 --shape grad_p:double:65536:65536:1 --shape grad_p:double:16384:16384:4 --shape grad_p:double:4096:131072:1 --shape grad_p:double:2048:2048:1 --shape grad_p:double:512:512:4096 --shape grad_p:double:64:64:16384 --shape grad_p:double:1024:65536:1 --shape grad_q:double:65536:65536:1 --shape grad_q:double:512:512:4096 --every-split --out /root/out/r/gD.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-seed7-every-split.csv.xz: 500 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:27 UTC
//   command: build/bench/cuda/marg_tune --dump 500 --seed 7 --every-split --out /root/out/r/g7.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-seed8-batch65536-every-split.csv.xz: 500 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:27 UTC
//   command: build/bench/cuda/marg_tune --dump 500 --seed 8 --max-batch 65536 --every-split --out /root/out/r/g8.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-seed7.csv.xz: 799 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 11:54 UTC
//   command: build/bench/cuda/marg_tune --dump 800 --seed 7 --out /root/out/dump_h200.csv
//   device: capability=90 hopper=1 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-seed8-batch65536.csv.xz: 799 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 12:07 UTC
//   command: build/bench/cuda/marg_tune --dump 800 --seed 8 --max-batch 65536 --out /root/out/dump_h200_b.csv
//   device: capability=90 hopper=1 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// Not installed.
// clang-format on
#pragma once

#include "cost_model.hpp"

namespace marg::detail::cuda {

// from 3545 timings of split one-stage shapes
inline constexpr split_sum_coefficients split_sum_fit = {5.01636, 2.65809};

inline constexpr cost_coefficients cost_fit[2][2][9] = {
    {
        {
            {true, 2.67675, 0, 0.903593, 0, 0.706981, 0.301741},        // warp: 485 timings
            {true, 2.87138, 0.415527, 0.340326, 0, 0.938776, 2.79566},  // small: 1054 timings
            {true, 2.88583, 0.0828717, 0.74128, 0.00675549, 1.33141, 1.86135},  // mid: 1055 timings
            {true, 2.53487, 0, 1.33337, 0.0692036, 1.0265, 1.85548},     // large: 1058 timings
            {true, 3.59638, 0, 0.95455, 0.0332306, 0.448314, 1.35276},   // mma: 1054 timings
            {true, 0, 3.12626, 0, 0.318012, 0.124856, 1.18262},          // lane: 122 timings
            {true, 2.81796, 0, 2.9819, 0.0172799, 0, 0.329112},          // pairs: 171 timings
            {true, 6.38447, 0, 0.177027, 0.0075923, 0.688116, 3.29295},  // wgmma: 288 timings
            {true, 0, 0, 6.97969, 0, 0.160305, 5.8683},                  // wide: 200 timings
        },
        {
            {true, 2.27142, 0.271981, 1.10678, 0.00881514, 0.265917,
             1.00336},                                                        // warp: 1076 timings
            {true, 2.69289, 0.537871, 0.360604, 0, 0.99818, 0.602641},        // small: 2287 timings
            {true, 2.77088, 0.227575, 0.553036, 0, 1.71354, 0.332327},        // mid: 2293 timings
            {true, 2.43381, 0.281192, 1.11858, 0.0709236, 1.01845, 1.17638},  // large: 2304 timings
            {true, 3.35971, 0, 1.68177, 0.0238788, 0.579947, 0.166149},       // mma: 2315 timings
            {true, 0, 3.22879, 0, 0.321022, 0.137855, 1.1839},                // lane: 249 timings
            {true, 3.22236, 0, 2.19359, 0.0143333, 0, 0.318189},              // pairs: 407 timings
            {true, 8.00938, 0, 0, 0.0134303, 0.629057, 2.93788},              // wgmma: 614 timings
            {true, 0.160891, 0, 6.72966, 0.00170643, 0.0576915, 11.3152},     // wide: 368 timings
        },
    },
    {
        {
            {true, 2.58599, 0, 1.03239, 0.00730962, 0.753199, 0.115883},  // warp: 530 timings
            {true, 2.98707, 0.160215, 0.393341, 0, 1.91498, 1.4002},      // small: 1238 timings
            {true, 2.92286, 0, 0.69451, 0.0213676, 1.86972, 0},           // mid: 1244 timings
            {true, 2.5713, 0, 1.1385, 0.134217, 1.51745, 0.0134456},      // large: 1242 timings
            {true, 2.74234, 0, 3.08923, 0.0337914, 0, 2.04213},           // mma: 372 timings
            {true, 0, 3.18742, 0, 0.664896, 0.127242, 0.939441},          // lane: 88 timings
            {true, 3.45062, 0.72631, 0, 0.0470562, 0, 0.480301},          // pairs: 151 timings
            {},                                                           // wgmma: not measured
            {true, 0, 3.4389, 0, 0, 0.492706, 9.98779},                   // wide: 208 timings
        },
        {
            {true, 2.2898, 0.165165, 1.29353, 0.0274825, 0, 0.827156},    // warp: 1117 timings
            {true, 2.80246, 0.301235, 0.412349, 0, 1.97442, 0.66339},     // small: 2453 timings
            {true, 2.85518, 0, 0.817021, 0.0226928, 1.81518, 0.0897161},  // mid: 2457 timings
            {true, 2.58624, 0, 1.25635, 0.13896, 1.4175, 0.161727},       // large: 2461 timings
            {true, 2.72672, 0.513101, 1.93461, 0.0314887, 0.407177, 0.829103},  // mma: 757 timings
            {true, 0, 3.4722, 0, 0.633535, 0.151087, 0.932527},                 // lane: 210 timings
            {true, 3.53872, 0, 1.55424, 0.0272481, 0, 0.64246},  // pairs: 364 timings
            {},                                                  // wgmma: not measured
            {true, 0, 3.5156, 0, 0, 0.26405, 6.85584},           // wide: 367 timings
        },
    },
};

}  // namespace marg::detail::cuda
