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

// from 3513 timings of split one-stage shapes
inline constexpr split_sum_coefficients split_sum_fit = {5.02296, 2.61589};

inline constexpr cost_coefficients cost_fit[2][2][9] = {
    {
        {
            {true, 2.67675, 0, 0.903593, 0, 0.706981, 0.301741},        // warp: 485 timings
            {true, 2.86573, 0.420881, 0.340126, 0, 0.939088, 2.75501},  // small: 1054 timings
            {true, 2.88008, 0.0908636, 0.740388, 0.00737178, 1.31247,
             1.86896},                                                   // mid: 1055 timings
            {true, 2.52698, 0, 1.36083, 0.0692424, 1.01264, 1.87596},    // large: 1058 timings
            {true, 3.58998, 0, 0.968481, 0.0332878, 0.438582, 1.39243},  // mma: 1054 timings
            {true, 0, 3.12626, 0, 0.318012, 0.124856, 1.18262},          // lane: 122 timings
            {true, 2.81796, 0, 2.9819, 0.0172799, 0, 0.329112},          // pairs: 171 timings
            {true, 6.38447, 0, 0.177027, 0.0075923, 0.688116, 3.29295},  // wgmma: 288 timings
            {true, 0, 0, 6.97969, 0, 0.160305, 5.8683},                  // wide: 200 timings
        },
        {
            {true, 2.27142, 0.271981, 1.10678, 0.00881514, 0.265917,
             1.00336},                                                   // warp: 1076 timings
            {true, 2.68891, 0.540984, 0.360574, 0, 0.998406, 0.595021},  // small: 2287 timings
            {true, 2.76552, 0.233778, 0.552649, 0.000398608, 1.70115,
             0.331107},                                                       // mid: 2293 timings
            {true, 2.42664, 0.293386, 1.11666, 0.0711043, 1.00756, 1.18637},  // large: 2304 timings
            {true, 3.35809, 0, 1.68348, 0.023878, 0.579018, 0.18617},         // mma: 2315 timings
            {true, 0, 3.22879, 0, 0.321022, 0.137855, 1.1839},                // lane: 249 timings
            {true, 3.22236, 0, 2.19359, 0.0143333, 0, 0.318189},              // pairs: 407 timings
            {true, 8.00938, 0, 0, 0.0134303, 0.629057, 2.93788},              // wgmma: 614 timings
            {true, 0.160891, 0, 6.72966, 0.00170643, 0.0576915, 11.3152},     // wide: 368 timings
        },
    },
    {
        {
            {true, 2.58288, 0, 1.05842, 0.0165231, 0.495692, 0.350857},   // warp: 512 timings
            {true, 3.00737, 0.165043, 0.332272, 0, 2.03897, 1.33196},     // small: 1155 timings
            {true, 2.96771, 0, 0.548127, 0.0226231, 2.03848, 0.0112648},  // mid: 1161 timings
            {true, 2.68353, 0, 0.81344, 0.134692, 1.66564, 0.146843},     // large: 1159 timings
            {true, 2.48807, 0.856372, 1.81858, 0.036199, 0, 1.87431},     // mma: 290 timings
            {true, 0, 3.19035, 0, 0.657642, 0.128608, 0.871796},          // lane: 87 timings
            {true, 3.37176, 0.831288, 0, 0.0419685, 0, 0.534268},         // pairs: 149 timings
            {},                                                           // wgmma: not measured
            {true, 0, 3.43604, 0, 0, 0.484836, 10.0472},                  // wide: 206 timings
        },
        {
            {true, 2.27508, 0.180812, 1.29019, 0.0280757, 0, 0.826876},  // warp: 1093 timings
            {true, 2.81826, 0.289497, 0.411031, 0, 1.95949, 0.727167},   // small: 2343 timings
            {true, 2.86506, 0, 0.803918, 0.0230814, 1.81062, 0.099925},  // mid: 2346 timings
            {true, 2.60271, 0, 1.23172, 0.139556, 1.39439, 0.231395},    // large: 2351 timings
            {true, 2.23698, 1.12617, 1.9059, 0.0346143, 0, 0.915957},    // mma: 648 timings
            {true, 0, 3.47184, 0, 0.642104, 0.1493, 0.971337},           // lane: 209 timings
            {true, 3.53852, 0, 1.55321, 0.0273204, 0, 0.643895},         // pairs: 362 timings
            {},                                                          // wgmma: not measured
            {true, 0, 3.51493, 0, 0, 0.257766, 6.9322},                  // wide: 365 timings
        },
    },
};

}  // namespace marg::detail::cuda
