// clang-format off
// The cost model's coefficients (cost_model.hpp), indexed [double][gradient]
// [variant]: {fitted, fixed, per_wave, per_step, per_mac, per_elem, per_byte}.
// Written by scripts/fit-cost-model from these marg_tune --dump measurements:
// - bench/cuda/cost-data/h200-generic-seed7.csv.xz: 799 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 11:54 UTC
//   command: build/bench/cuda/marg_tune --dump 800 --seed 7 --out /root/out/dump_generic.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-seed8-batch65536.csv.xz: 799 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 12:08 UTC
//   command: build/bench/cuda/marg_tune --dump 800 --seed 8 --max-batch 65536 --out /root/out/dump_generic_b.csv
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

inline constexpr cost_coefficients cost_fit[2][2][9] = {
    {
        {
            {true, 2.77709, 0, 0.936903, 0, 0.744229, 0.0593845},         // warp: 508 timings
            {true, 2.62129, 0.927701, 0.359343, 0.0434408, 0, 0.762251},  // small: 508 timings
            {true, 2.58284, 0.852771, 0.575451, 0.0449915, 0, 1.02187},   // mid: 508 timings
            {true, 1.82353, 1.98688, 0, 0.104975, 0, 1.39902},            // large: 508 timings
            {true, 3.80524, 0, 1.21363, 0.0246914, 0, 1.46183},           // mma: 508 timings
            {true, 0, 3.12626, 0, 0.318012, 0.124856, 1.18262},           // lane: 122 timings
            {true, 3.58509, 0, 1.98647, 0.0129861, 0, 0.715546},          // pairs: 216 timings
            {true, 0, 14.219, 0, 0.0186187, 2.6315, 0},                   // wgmma: 249 timings
            {true, 0.272917, 0, 6.91484, 0, 0.126663, 6.64937},           // wide: 254 timings
        },
        {
            {true, 2.57779, 0.207084, 1.0703, 0.00814106, 0.297114,
             0.947951},                                                  // warp: 1092 timings
            {true, 2.65377, 0.695782, 0.364655, 0, 0.959979, 0.438158},  // small: 1092 timings
            {true, 2.85817, 0.272158, 0.597325, 0.00424019, 1.44779,
             0.725704},                                                   // mid: 1092 timings
            {true, 1.86979, 1.6277, 0.751254, 0.0933836, 0, 1.12695},     // large: 1092 timings
            {true, 3.57829, 0, 1.86942, 0.0203834, 0, 0},                 // mma: 1092 timings
            {true, 0, 3.22879, 0, 0.321022, 0.137855, 1.1839},            // lane: 249 timings
            {true, 3.50766, 0, 2.15882, 0.0142382, 0, 0.257077},          // pairs: 510 timings
            {true, 0, 14.51, 0, 0.0352804, 3.25818, 0},                   // wgmma: 524 timings
            {true, 0.621712, 0, 6.19121, 0.0116838, 0.0493062, 10.7997},  // wide: 468 timings
        },
    },
    {
        {
            {true, 2.68714, 0.0174236, 1.15291, 0.0256868, 0, 0.92484},   // warp: 476 timings
            {true, 2.545, 0.935766, 0.381988, 0.104082, 0, 0.935161},     // small: 476 timings
            {true, 2.63099, 0.618356, 0.838659, 0.0678038, 0, 0.903665},  // mid: 476 timings
            {true, 1.89907, 0.863612, 1.8426, 0.166445, 0, 0.911762},     // large: 476 timings
            {true, 2.40692, 0.940257, 1.72469, 0.0310142, 0, 1.93817},    // mma: 238 timings
            {true, 0, 3.19035, 0, 0.657642, 0.128608, 0.871796},          // lane: 87 timings
            {true, 3.3764, 1.09143, 0, 0.025376, 0, 0.703015},            // pairs: 174 timings
            {},                                                           // wgmma: not measured
            {true, 0, 3.64051, 0, 0, 0.470039, 9.44879},                  // wide: 240 timings
        },
        {
            {true, 2.38453, 0.319722, 1.25161, 0.0264241, 0, 0.833443},  // warp: 1124 timings
            {true, 2.76788, 0.48693, 0.453321, 0, 1.87525, 0.390935},    // small: 1124 timings
            {true, 2.91926, 0.111739, 0.852994, 0.0318393, 1.40874, 0.529207},  // mid: 1124 timings
            {true, 2.0397, 0.813811, 1.78319, 0.161534, 0, 0.917346},   // large: 1124 timings
            {true, 2.33516, 0.854245, 2.21586, 0.0223327, 0, 1.46204},  // mma: 562 timings
            {true, 0, 3.47184, 0, 0.642104, 0.1493, 0.971337},          // lane: 209 timings
            {true, 3.65362, 0, 1.86232, 0.0259957, 0, 0.498883},        // pairs: 458 timings
            {},                                                         // wgmma: not measured
            {true, 0, 3.72773, 0, 0, 0.23648, 6.87234},                 // wide: 460 timings
        },
    },
};

}  // namespace marg::detail::cuda
