// Host-side arithmetic of the collective engine, shared by every plug-in and unit-tested on a CPU:
// how nccl-tests counts a collective's size, its bus factor, how much memory one GPU needs for
// it, the size schedule, and the summary figures of a busbw curve.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::comm {

enum class Collective { allreduce, allgather, reducescatter, broadcast, alltoall };

// "allreduce" -> probe id suffix and label text.
const char* collective_name(Collective kind);
std::optional<Collective> parse_collective(const std::string& name);

// nccl-tests' bus factor: busbw = algbw * factor.
//   all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast 1.
double bus_factor(Collective kind, int ranks);

// How a collective of `size_bytes` lays out, as nccl-tests counts it. `size_bytes` is the
// larger buffer of one rank (all-gather: the gathered output; reduce-scatter: the input), so
// algbw = size_bytes / time for every collective. Element counts are rounded down to a multiple
// of `ranks` for the collectives that split the buffer in chunks; a size too small to give every
// rank one element has chunk_elements == 0 and is skipped.
struct CollectiveLayout {
  std::uint64_t size_bytes = 0;      // the bytes algbw is counted over (after rounding)
  std::uint64_t send_elements = 0;   // per rank
  std::uint64_t recv_elements = 0;   // per rank
  std::uint64_t chunk_elements = 0;  // per peer chunk (== elements when not chunked)
};
CollectiveLayout collective_layout(Collective kind, std::uint64_t size_bytes, int ranks, int element_bytes);

// Device bytes one rank allocates for the send and receive buffers of `layout`.
std::uint64_t device_bytes_needed(const CollectiveLayout& layout, int element_bytes);

struct RateFigures {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};
// algbw = size / time (decimal GB/s), busbw = algbw * bus_factor.
RateFigures rate_figures(Collective kind, std::uint64_t size_bytes, int ranks, double seconds);

// 8 B, 16 B, ... up to the largest power of two <= max_bytes whose buffers fit `free_bytes`
// (using at most `usable_fraction` of it). Empty when not even min_bytes fits.
std::vector<std::uint64_t> size_schedule(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t free_bytes,
                                         double usable_fraction, Collective kind, int ranks, int element_bytes);

// The busbw curve of one run: size ascending, busbw at each size.
struct CurvePoint {
  std::uint64_t size_bytes = 0;
  double busbw_gbps = 0;
  double time_us = 0;
};
double curve_peak_gbps(const std::vector<CurvePoint>& curve);
// Smallest size whose busbw reaches `fraction` of the peak; 0 for an empty curve.
std::uint64_t size_at_fraction_of_peak(const std::vector<CurvePoint>& curve, double fraction);

// Iterations per timed repetition so that one repetition lasts about `target_s`, from a
// measured time per iteration; at least 1, at most max_iterations.
int iterations_for(double seconds_per_iteration, double target_s, int max_iterations);

}  // namespace nodeaudit::comm
