// clang-format off
// The cost model's coefficients (cost_model.hpp), indexed [double][gradient]
// [variant]: {fitted, fixed, per_wave, per_step, per_mac, per_elem, per_byte};
// and the split's sum through scratch: {fixed, per_byte}.
// Written by scripts/fit-cost-model from these marg_tune --dump measurements:
// - bench/cuda/cost-data/h200-big-seed9.csv.xz: 120 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:39 UTC
//   command: build/bench/cuda/marg_tune --dump 120 --big --seed 9 --out /root/out/r/hbig9.csv
//   device: capability=90 hopper=1 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-big-every-split.csv.xz: 26 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:32 UTC
//   command: build/bench/cuda/marg_tune --dump 1 --shape convolve:float:8192:8192:1 --shape convolve:float:16384:16384:1 --shape convolve:float:32768:32768:1 --shape convolve:float:65536:65536:1 --shape convolve:float:16384:16384:4 --shape convolve:float:4096:131072:1 --shape convolve:double:8192:8192:1 --shape convolve:double:16384:16384:1 --shape convolve:double:32768:32768:1 --shape convolve:double:65536:65536:1 --shape convolve:double:16384:16384:4 --shape convolve:double:4096:131072:1 --shape grad_p:float:8192:8192:1 --shape grad_p:float:16384:16384:1 --shape grad_p:float:32768:32768:1 --shape grad_p:float:65536:65536:1 --shape grad_p:float:16384:16384:4 --shape grad_p:float:4096:131072:1 --shape grad_p:double:8192:8192:1 --shape grad_p:double:16384:16384:1 --shape grad_p:double:32768:32768:1 --shape grad_p:double:65536:65536:1 --shape grad_p:double:16384:16384:4 --shape grad_p:double:4096:131072:1 --shape grad_p:float:1024:65536:1 --shape grad_p:double:1024:65536:1 --every-split --out /root/out/r/gbig.csv
//   device: capability=90 hopper=0 multiprocessors=132 clock_mhz=1980 bandwidth_gbs=4814
// - bench/cuda/cost-data/h200-generic-big-seed9-every-split.csv.xz: 120 shapes
//   libmarg 0.1.0, NVIDIA H200 (sm_90, 132 SMs), CUDA driver 13.0, 2026-11-29 15:38 UTC
//   command: build/bench/cuda/marg_tune --dump 120 --big --seed 9 --every-split --out /root/out/r/gbig9.csv
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

// from 3477 timings of split one-stage shapes
inline constexpr split_sum_coefficients split_sum_fit = {5.02202, 2.6216};

inline constexpr cost_coefficients cost_fit[2][2][9] = {
    {
        {
            {true, 2.68825, 0, 0.892447, 0, 0.735882, 0.160296},        // warp: 433 timings
            {true, 2.90083, 0.367655, 0.386723, 0, 0.878952, 3.13191},  // small: 898 timings
            {true, 2.89538, 0.00897015, 0.862022, 0.000703299, 1.42483,
             1.6397},                                                   // mid: 899 timings
            {true, 2.47257, 0, 1.50802, 0.0718217, 0.95995, 1.64208},   // large: 902 timings
            {true, 3.55725, 0, 1.01918, 0.0349669, 0.372022, 1.77645},  // mma: 898 timings
            {true, 0, 3.12626, 0, 0.318012, 0.124856, 1.18262},         // lane: 122 timings
            {true, 2.81796, 0, 2.9819, 0.0172799, 0, 0.329112},         // pairs: 171 timings
            {true, 0, 14.2469, 0, 0.0148799, 2.67294, 0},               // wgmma: 262 timings
            {true, 0.375245, 0, 6.2367, 0, 0.157286, 6.18168},          // wide: 196 timings
        },
        {
            {true, 2.29721, 0.269466, 1.09006, 0.00845224, 0.26852, 1.02784},  // warp: 984 timings
            {true, 2.68407, 0.554682, 0.351443, 0, 1.00337, 0.542936},  // small: 2011 timings
            {true, 2.7689, 0.23963, 0.547071, 0.00110974, 1.67406, 0.329486},  // mid: 2017 timings
            {true, 2.38551, 0.39988, 1.0439, 0.0735549, 0.930993, 1.09085},  // large: 2028 timings
            {true, 3.31921, 0, 1.75565, 0.0246426, 0.503418, 0.424589},      // mma: 2039 timings
            {true, 0, 3.22879, 0, 0.321022, 0.137855, 1.1839},               // lane: 249 timings
            {true, 3.22236, 0, 2.19359, 0.0143333, 0, 0.318189},             // pairs: 407 timings
            {true, 0, 14.6075, 0, 0.0182324, 3.37487, 0},                    // wgmma: 571 timings
            {true, 0.160891, 0, 6.72966, 0.00170643, 0.0576915, 11.3152},    // wide: 368 timings
        },
    },
    {
        {
            {true, 2.58432, 0, 1.07724, 0.0166741, 0.396985, 0.47426},  // warp: 456 timings
            {true, 3.03032, 0.118228, 0.383422, 0, 1.93625, 1.57122},   // small: 987 timings
            {true, 2.96489, 0, 0.550056, 0.0242989, 2.02698, 0},        // mid: 993 timings
            {true, 2.65743, 0, 0.854592, 0.138778, 1.64301, 0.162632},  // large: 991 timings
            {true, 2.4631, 0.984542, 1.5749, 0.039847, 0, 1.83593},     // mma: 262 timings
            {true, 0, 3.19035, 0, 0.657642, 0.128608, 0.871796},        // lane: 87 timings
            {true, 3.37176, 0.831288, 0, 0.0419685, 0, 0.534268},       // pairs: 149 timings
            {},                                                         // wgmma: not measured
            {true, 0, 3.43604, 0, 0, 0.484836, 10.0472},                // wide: 206 timings
        },
        {
            {true, 2.26304, 0.228858, 1.26588, 0.0266745, 0, 0.855981},   // warp: 993 timings
            {true, 2.81455, 0.297232, 0.406786, 0, 1.96779, 0.684587},    // small: 2043 timings
            {true, 2.85756, 0, 0.811448, 0.0225727, 1.82946, 0.0615659},  // mid: 2046 timings
            {true, 2.56774, 0, 1.32659, 0.139526, 1.32948, 0.281953},     // large: 2051 timings
            {true, 2.28181, 1.04908, 1.96382, 0.0340257, 0, 0.985491},    // mma: 598 timings
            {true, 0, 3.47184, 0, 0.642104, 0.1493, 0.971337},            // lane: 209 timings
            {true, 3.53852, 0, 1.55321, 0.0273204, 0, 0.643895},          // pairs: 362 timings
            {},                                                           // wgmma: not measured
            {true, 0, 3.51493, 0, 0, 0.257766, 6.9322},                   // wide: 365 timings
        },
    },
};

}  // namespace marg::detail::cuda
