// Arithmetic of the stress soak and the spread across GPUs: pure functions on recorded figures.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/node/nvml.hpp"

namespace nodeaudit::gpu {

// Intervals of `interval_s` that make up a soak of `duration_s`: floor(duration / interval), at
// least 1. Counted up front: a loop that starts another interval only while elapsed + interval fits
// drops the last one, because every interval overruns by its verification (30 s at 10 s ran 20 s).
int interval_count(double duration_s, double interval_s);

// (first - last) / first * 100: how much the last interval lost against the first. 0 for < 2 values.
double drop_pct(const std::vector<double>& interval_tflops);

// Share of telemetry samples whose throttle mask has any of the bits that cost clocks: sw_power_cap
// (0x4), hw_slowdown (0x8), sw_thermal (0x20), hw_thermal (0x40), hw_power_brake (0x80).
// gpu_idle and applications-clocks bits are not throttling. Samples without a mask are not counted.
double throttle_pct(const std::vector<std::optional<unsigned long long>>& masks);
inline constexpr unsigned long long throttling_bits = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// (max - min) / max * 100 over the GPUs' figures; 0 for fewer than 2 GPUs.
double spread_pct(const std::vector<double>& per_gpu);

// GPUs more than `threshold_pct` slower than the fastest: gpu index -> percent slower.
std::map<int, double> slower_than_fastest(const std::map<int, double>& per_gpu, double threshold_pct);

// Memory health of one GPU read before and after the soak.
struct MemoryHealth {
  NvmlMemoryRepair repair;
  std::optional<unsigned long long> ecc_volatile_uncorrected;
};

// What got worse during the soak: new uncorrectable ECC errors, newly retired pages, new row
// remaps, a remap that became pending or failed. One sentence each, with the before -> after counts;
// readings absent on either side are not compared.
std::vector<std::string> memory_health_changes(const MemoryHealth& before, const MemoryHealth& after);

}  // namespace nodeaudit::gpu
