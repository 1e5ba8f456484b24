// The cost model's coefficients (cost_model.hpp), indexed [double][gradient]
// [variant]: {fitted, fixed, per_wave, per_step, per_mac, per_elem, per_byte}.
// Written by scripts/fit-cost-model; command: scripts/fit-cost-model h200-seed7.csv
// h200-generic-seed7.csv from these marg_tune --dump measurements:
// - h200-seed7.csv: 799 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 11:54 UTC
//   command: build/bench/cuda/marg_tune --dump 800 --seed 7 --out /root/out/dump_h200.csv
//   device: capability=90 hopper=1 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - h200-generic-seed7.csv: 799 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 11:54 UTC
//   command: build/bench/cuda/marg_tune --dump 800 --seed 7 --out /root/out/dump_generic.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// Not installed.
#pragma once

#include "cost_model.hpp"

namespace marg::detail::cuda {

inline constexpr cost_coefficients cost_fit[2][2][9] = {
    {
        {
            {true, 0, 2.8485, 0.911361, 0, 0.787627, 0},  // warp: 270 timings
            {true, 2.84555, 0.715176, 0.383191, 0.0285108, 0.147797,
             2.11364},                                                   // small: 270 timings
            {true, 2.66745, 0.732947, 0.685047, 0.0410435, 0, 1.44384},  // mid: 270 timings
            {true, 1.79766, 2.01417, 0, 0.10587, 0, 1.36918},            // large: 270 timings
            {true, 3.78962, 0, 1.28908, 0.0228244, 0, 1.24206},          // mma: 270 timings
            {true, 0, 3.07056, 0, 0.319079, 0.113675, 0.994341},         // lane: 63 timings
            {true, 4.51145, 0, 0, 0.0129267, 0.240731, 0},               // pairs: 114 timings
            {true, 0, 14.2205, 0, 0.0245179, 2.87086, 0},                // wgmma: 135 timings
            {true, 0.766438, 0, 5.82882, 0, 0.153558, 7.76324},          // wide: 136 timings
        },
        {
            {true, 0, 2.83607, 1.07512, 0.0108382, 0.10955, 1.71912},          // warp: 542 timings
            {true, 2.74487, 0.630274, 0.374152, 0, 0.974784, 0.530103},        // small: 542 timings
            {true, 2.90676, 0.233564, 0.581431, 0.00648861, 1.45327, 0.6422},  // mid: 542 timings
            {true, 1.77762, 1.62676, 0.886246, 0.0925555, 0, 1.04354},         // large: 542 timings
            {true, 3.53169, 0, 1.93417, 0.0232312, 0, 0},                      // mma: 542 timings
            {true, 0, 3.13327, 0, 0.314979, 0.152442, 1.12672},                // lane: 127 timings
            {true, 4.59314, 0, 0, 0.0235166, 0.171699, 0},                     // pairs: 256 timings
            {true, 0, 14.5757, 0, 0.0307291, 0, 17.6157},                      // wgmma: 269 timings
            {true, 1.06666, 2.68264, 0, 0.00889654, 0.0703477, 10.8133},       // wide: 242 timings
        },
    },
    {
        {
            {true, 0, 2.67672, 1.21734, 0.0221401, 0, 1.55465},  // warp: 246 timings
            {true, 2.63549, 0.857549, 0.397173, 0.0876372, 0.202778,
             0.841863},                                                  // small: 246 timings
            {true, 2.69237, 0.579655, 0.820304, 0.0692675, 0, 1.02552},  // mid: 246 timings
            {true, 1.95562, 0.746066, 1.95856, 0.161816, 0, 1.11253},    // large: 246 timings
            {true, 2.36767, 1.20931, 1.22426, 0.0352504, 0, 1.99424},    // mma: 123 timings
            {true, 0, 3.10862, 0, 0.667198, 0.127138, 0.602807},         // lane: 46 timings
            {true, 2.06781, 2.32956, 0, 0.0670466, 0, 0},                // pairs: 94 timings
            {},                                                          // wgmma: not measured
            {true, 0, 3.69535, 0, 0, 0.527016, 9.28516},                 // wide: 114 timings
        },
        {
            {true, 0, 2.71065, 1.22353, 0.0314502, 0, 0.771603},              // warp: 542 timings
            {true, 2.76613, 0.486497, 0.467845, 0, 1.81529, 0.398955},        // small: 542 timings
            {true, 2.8875, 0.159419, 0.87321, 0.0408547, 1.07292, 0.711263},  // mid: 542 timings
            {true, 2.0979, 0.724704, 1.7951, 0.161927, 0, 1.05111},           // large: 542 timings
            {true, 2.31059, 0.858286, 2.16038, 0.0267294, 0, 1.47969},        // mma: 271 timings
            {true, 0, 3.40089, 0, 0.67397, 0.139253, 1.54678},                // lane: 100 timings
            {true, 3.87061, 0.608555, 0, 0.0997908, 0, 0},                    // pairs: 216 timings
            {},                                                               // wgmma: not measured
            {true, 0, 3.71495, 0, 0, 0.267025, 7.01985},                      // wide: 224 timings
        },
    },
};

}  // namespace marg::detail::cuda
