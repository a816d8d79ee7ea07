#include "comm/collective_math.hpp"

#include <algorithm>
#include <cmath>

namespace nodeaudit::comm {

const char* collective_name(Collective kind) {
  switch (kind) {
    case Collective::allreduce: return "allreduce";
    case Collective::allgather: return "allgather";
    case Collective::reducescatter: return "reducescatter";
    case Collective::broadcast: return "broadcast";
    case Collective::alltoall: return "alltoall";
  }
  return "?";
}

std::optional<Collective> parse_collective(const std::string& name) {
  for (Collective kind : {Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::broadcast,
                          Collective::alltoall})
    if (name == collective_name(kind)) return kind;
  return std::nullopt;
}

double bus_factor(Collective kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case Collective::allreduce: return 2.0 * (n - 1) / n;
    case Collective::allgather:
    case Collective::reducescatter:
    case Collective::alltoall: return (n - 1) / n;
    case Collective::broadcast: return 1.0;
  }
  return 1.0;
}

CollectiveLayout collective_layout(Collective kind, std::uint64_t size_bytes, int ranks, int element_bytes) {
  const std::uint64_t n = static_cast<std::uint64_t>(ranks);
  const std::uint64_t elements = size_bytes / static_cast<std::uint64_t>(element_bytes);
  CollectiveLayout layout;
  switch (kind) {
    case Collective::allreduce:
    case Collective::broadcast:
      layout.send_elements = layout.recv_elements = layout.chunk_elements = elements;
      break;
    case Collective::allgather:
      layout.chunk_elements = elements / n;
      layout.send_elements = layout.chunk_elements;
      layout.recv_elements = layout.chunk_elements * n;
      break;
    case Collective::reducescatter:
      layout.chunk_elements = elements / n;
      layout.send_elements = layout.chunk_elements * n;
      layout.recv_elements = layout.chunk_elements;
      break;
    case Collective::alltoall:
      layout.chunk_elements = elements / n;
      layout.send_elements = layout.recv_elements = layout.chunk_elements * n;
      break;
  }
  layout.size_bytes = std::max(layout.send_elements, layout.recv_elements) * static_cast<std::uint64_t>(element_bytes);
  return layout;
}

std::uint64_t device_bytes_needed(const CollectiveLayout& layout, int element_bytes) {
  return (layout.send_elements + layout.recv_elements) * static_cast<std::uint64_t>(element_bytes);
}

RateFigures rate_figures(Collective kind, std::uint64_t size_bytes, int ranks, double seconds) {
  RateFigures f;
  f.time_us = seconds * 1e6;
  f.algbw_gbps = static_cast<double>(size_bytes) / 1e9 / seconds;
  f.busbw_gbps = f.algbw_gbps * bus_factor(kind, ranks);
  return f;
}

std::vector<std::uint64_t> size_schedule(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t free_bytes,
                                         double usable_fraction, Collective kind, int ranks, int element_bytes) {
  std::vector<std::uint64_t> sizes;
  const double usable = static_cast<double>(free_bytes) * usable_fraction;
  for (std::uint64_t size = min_bytes; size <= max_bytes && size != 0; size *= 2) {
    const CollectiveLayout layout = collective_layout(kind, size, ranks, element_bytes);
    if (static_cast<double>(device_bytes_needed(layout, element_bytes)) > usable) break;
    if (layout.chunk_elements > 0) sizes.push_back(size);
  }
  return sizes;
}

double curve_peak_gbps(const std::vector<CurvePoint>& curve) {
  double peak = 0;
  for (const CurvePoint& p : curve) peak = std::max(peak, p.busbw_gbps);
  return peak;
}

std::uint64_t size_at_fraction_of_peak(const std::vector<CurvePoint>& curve, double fraction) {
  const double threshold = fraction * curve_peak_gbps(curve);
  for (const CurvePoint& p : curve)
    if (p.busbw_gbps >= threshold) return p.size_bytes;
  return 0;
}

int iterations_for(double seconds_per_iteration, double target_s, int max_iterations) {
  if (!(seconds_per_iteration > 0) || !std::isfinite(seconds_per_iteration)) return 1;
  const double wanted = std::ceil(target_s / seconds_per_iteration);
  return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(max_iterations)));
}

}  // namespace nodeaudit::comm
