// clang-format off
// The cost model's coefficients (cost_model.hpp), indexed [table][double]
// [gradient][variant]: {fitted, fixed, per_wave, per_step, per_mac, per_elem,
// per_byte}; table 0 is fitted to every dump below (any device), table 1 to
// those of devices with the Hopper features (hopper=1), which such devices
// use; and the split's sum through scratch: {fixed, per_byte}, from every dump.
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

inline constexpr cost_coefficients cost_fit[2][2][2][9] = {
    {
        // any device
        {
            {
                {true, 2.67675, 0, 0.903593, 0, 0.706981, 0.301741},        // warp: 485 timings
                {true, 2.87138, 0.415527, 0.340326, 0, 0.938776, 2.79566},  // small: 1054 timings
                {true, 2.88583, 0.0828717, 0.74128, 0.00675549, 1.33141,
                 1.86135},                                                   // mid: 1055 timings
                {true, 2.53487, 0, 1.33337, 0.0692036, 1.0265, 1.85548},     // large: 1058 timings
                {true, 3.59638, 0, 0.95455, 0.0332306, 0.448314, 1.35276},   // mma: 1054 timings
                {true, 0, 3.12626, 0, 0.318012, 0.124856, 1.18262},          // lane: 122 timings
                {true, 2.81796, 0, 2.9819, 0.0172799, 0, 0.329112},          // pairs: 171 timings
                {true, 6.38447, 0, 0.177027, 0.0075923, 0.688116, 3.29295},  // wgmma: 288 timings
                {true, 0, 0, 6.97969, 0, 0.160305, 5.8683},                  // wide: 200 timings
            },
            {
                {true, 2.27142, 0.271981, 1.10678, 0.00881514, 0.265917,
                 1.00336},                                                  // warp: 1076 timings
                {true, 2.69289, 0.537871, 0.360604, 0, 0.99818, 0.602641},  // small: 2287 timings
                {true, 2.77088, 0.227575, 0.553036, 0, 1.71354, 0.332327},  // mid: 2293 timings
                {true, 2.43381, 0.281192, 1.11858, 0.0709236, 1.01845,
                 1.17638},                                                   // large: 2304 timings
                {true, 3.35971, 0, 1.68177, 0.0238788, 0.579947, 0.166149},  // mma: 2315 timings
                {true, 0, 3.22879, 0, 0.321022, 0.137855, 1.1839},           // lane: 249 timings
                {true, 3.22236, 0, 2.19359, 0.0143333, 0, 0.318189},         // pairs: 407 timings
                {true, 8.00938, 0, 0, 0.0134303, 0.629057, 2.93788},         // wgmma: 614 timings
                {true, 0.160891, 0, 6.72966, 0.00170643, 0.0576915, 11.3152},  // wide: 368 timings
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
                {true, 2.72672, 0.513101, 1.93461, 0.0314887, 0.407177,
                 0.829103},                                          // mma: 757 timings
                {true, 0, 3.4722, 0, 0.633535, 0.151087, 0.932527},  // lane: 210 timings
                {true, 3.53872, 0, 1.55424, 0.0272481, 0, 0.64246},  // pairs: 364 timings
                {},                                                  // wgmma: not measured
                {true, 0, 3.5156, 0, 0, 0.26405, 6.85584},           // wide: 367 timings
            },
        },
    },
    {
        // the Hopper features
        {
            {
                {true, 2.41611, 0, 0.926972, 0, 0.756023, 0.0807709},        // warp: 293 timings
                {true, 2.2197, 1.06141, 0.230698, 0.0659615, 0, 0},          // small: 293 timings
                {true, 2.10071, 1.0329, 0.500518, 0.0527593, 0, 0.291851},   // mid: 293 timings
                {true, 1.30491, 2.15184, 0, 0.104691, 0, 1.21074},           // large: 293 timings
                {true, 3.22619, 0.412295, 1.35646, 0.0379457, 0, 2.44075},   // mma: 293 timings
                {true, 0, 3.12626, 0, 0.318012, 0.124856, 1.18262},          // lane: 122 timings
                {true, 2.77766, 0, 2.65782, 0.0172498, 0, 0.393405},         // pairs: 108 timings
                {true, 6.38447, 0, 0.177027, 0.0075923, 0.688116, 3.29295},  // wgmma: 288 timings
                {true, 0, 0, 6.6844, 0, 0.150709, 5.96525},                  // wide: 129 timings
            },
            {
                {true, 2.17959, 0.196553, 1.08754, 0.00938157, 0.275087,
                 0.920187},  // warp: 639 timings
                {true, 2.27943, 0.859681, 0.26655, 0.0351286, 0.587469,
                 0.306482},  // small: 639 timings
                {true, 2.21923, 0.828175, 0.399655, 0.0465888, 0.395207,
                 0.503722},                                                   // mid: 639 timings
                {true, 1.42739, 1.71048, 0.747083, 0.0971167, 0, 1.03014},    // large: 639 timings
                {true, 2.73526, 0.752924, 2.0693, 0.0263147, 0, 1.28269},     // mma: 639 timings
                {true, 0, 3.22879, 0, 0.321022, 0.137855, 1.1839},            // lane: 249 timings
                {true, 3.08412, 0, 2.08098, 0.0145648, 0, 0.265985},          // pairs: 255 timings
                {true, 8.00938, 0, 0, 0.0134303, 0.629057, 2.93788},          // wgmma: 614 timings
                {true, 0.382727, 0, 5.93493, 0.0121534, 0.0525348, 9.98852},  // wide: 234 timings
            },
        },
        {
            {
                {true, 2.33957, 0, 1.06624, 0.0110966, 0.536457, 0.371139},  // warp: 299 timings
                {true, 1.96752, 1.18122, 0.390513, 0.117614, 0, 0},          // small: 328 timings
                {true, 2.00556, 0.854032, 0.96331, 0.0678358, 0, 0.148019},  // mid: 328 timings
                {true, 1.18661, 0.825963, 2.67641, 0.159555, 0, 0.471185},   // large: 328 timings
                {true, 2.11538, 0.566892, 3.22891, 0.0310839, 0, 1.48683},   // mma: 327 timings
                {true, 0, 3.18742, 0, 0.664896, 0.127242, 0.939441},         // lane: 88 timings
                {true, 3.00676, 0.943802, 0, 0.0441518, 0, 0.429385},        // pairs: 88 timings
                {},                                                          // wgmma: not measured
                {true, 0, 3.25557, 0, 0, 0.478959, 9.17528},                 // wide: 121 timings
            },
            {
                {true, 2.02651, 0.259032, 1.27932, 0.0276396, 0, 0.759258},   // warp: 660 timings
                {true, 2.02324, 1.10561, 0.374767, 0.136677, 0, 0.123906},    // small: 698 timings
                {true, 2.10802, 0.804141, 0.793037, 0.0854837, 0, 0.283818},  // mid: 699 timings
                {true, 1.50585, 1.10207, 1.57634, 0.185, 0, 0.570454},        // large: 698 timings
                {true, 2.06438, 1.29033, 1.92889, 0.0362082, 0, 0.671283},    // mma: 697 timings
                {true, 0, 3.4722, 0, 0.633535, 0.151087, 0.932527},           // lane: 210 timings
                {true, 3.23104, 0, 1.81612, 0.0262654, 0, 0.469668},          // pairs: 230 timings
                {},                                                           // wgmma: not measured
                {true, 0, 3.35412, 0, 0, 0.24553, 6.205},                     // wide: 231 timings
            },
        },
    },
};

}  // namespace marg::detail::cuda
