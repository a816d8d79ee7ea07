#include "harness/score/gpu_table_text.hpp"

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/score/result_view.hpp"

namespace nodeaudit::score {

using nlohmann::json;

namespace {

const char* const dtypes[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

json sourced(const SourcedValue& value, const std::string& unit) {
  json out{{"value", value.value}, {"unit", unit}, {"source", value.source}, {"kind", value.kind()}, {"label", value.label()}};
  if (value.from_peak) out["scaled_from_peak"] = true;
  return out;
}

std::string short_figure(const std::optional<SourcedValue>& value, const std::string& unit) {
  if (!value) return "-";
  return fmt::format("{:.4g} {}{}", value->value, unit, value->measured ? "" : value->from_peak ? " (peak x ratio)" : " (peak)");
}

std::string line(const std::string& what, const SourcedValue& value, const std::string& unit) {
  if (unit == "bytes") return fmt::format("  {:<22} {:>10.5g} {:<8} {}\n", what, value.value / 1e9, "GB", value.label());
  return fmt::format("  {:<22} {:>10.5g} {:<8} {}\n", what, value.value, unit, value.label());
}

}  // namespace

json gpu_model_figures(const GpuModel& m) {
  json figures = json::object();
  for (const char* dtype : dtypes)
    if (auto rate = m.gemm_rate(dtype)) figures[std::string("gemm_tflops_") + dtype] = sourced(*rate, "TFLOP/s");
  if (m.memory_bytes) figures["memory_bytes"] = sourced(*m.memory_bytes, "bytes");
  if (auto bandwidth = m.memory_bandwidth()) figures["memory_bandwidth_gbps"] = sourced(*bandwidth, "GB/s");
  if (m.h2d_gbps) figures["h2d_gbps"] = sourced(*m.h2d_gbps, "GB/s");
  if (m.allreduce) {
    json points = json::array();
    for (const AllreducePoint& point : m.allreduce->points)
      points.push_back({{"bytes", point.bytes}, {"busbw_gbps", point.busbw_gbps}});
    figures["allreduce_busbw"] = {{"points", points},
                                  {"gpus_measured", m.allreduce->gpus},
                                  {"source", m.allreduce->source},
                                  {"kind", m.allreduce->measured ? "published measurement" : "datasheet peak"},
                                  {"label", m.allreduce->measured ? "published measurement (another node: " + m.allreduce->source + ")"
                                                                  : "datasheet peak (" + m.allreduce->source + ")"}};
  }
  return figures;
}

std::string render_gpu_table() {
  std::string out = fmt::format("{:<16} {:<34} {:<22} {:<11} {:<15} {}\n", "MODEL", "DESCRIPTION", "GEMM bf16",
                                "MEMORY", "H2D", "ALL-REDUCE (largest size)");
  for (const GpuModel& m : gpu_table()) {
    std::string allreduce = "-";
    if (m.allreduce && !m.allreduce->points.empty())
      allreduce = fmt::format("{:.4g} GB/s{}", m.allreduce->points.back().busbw_gbps, m.allreduce->measured ? "" : " (bound)");
    out += fmt::format("{:<16} {:<34} {:<22} {:<11} {:<15} {}\n", m.name, m.description,
                       short_figure(m.gemm_rate("bf16"), "TFLOP/s"),
                       m.memory_bytes ? format_bytes(m.memory_bytes->value) : "-", short_figure(m.h2d_gbps, "GB/s"),
                       allreduce);
  }
  return out + "No figure here was measured on this node. Each is a published measurement (another node) or a datasheet "
               "peak, marked (peak); (peak x ratio) is a peak scaled by the mean published GEMM/peak ratio of the models "
               "that have both. `nodeaudit profiles gpus MODEL` names each figure's source, revision and date.\n";
}

std::string render_gpu_model(const GpuModel& m) {
  std::string out = fmt::format("{}: {}\n", m.name, m.description);
  if (!m.aliases.empty()) {
    std::string aliases;
    for (const std::string& alias : m.aliases) aliases += (aliases.empty() ? "" : ", ") + alias;
    out += "  also accepted as " + aliases + "\n";
  }
  for (const char* dtype : dtypes)
    if (auto rate = m.gemm_rate(dtype)) out += line(std::string("GEMM ") + dtype, *rate, "TFLOP/s");
  for (const char* dtype : dtypes)
    if (auto it = m.peak_tflops.find(dtype); it != m.peak_tflops.end() && m.gemm_tflops.count(dtype))
      out += line(std::string("peak ") + dtype, it->second, "TFLOP/s");
  if (m.memory_bytes) out += line("GPU memory", *m.memory_bytes, "bytes");
  if (m.hbm_gbps) out += line("device memory copy", *m.hbm_gbps, "GB/s");
  if (m.hbm_peak_gbps) out += line("device memory peak", *m.hbm_peak_gbps, "GB/s");
  if (m.h2d_gbps) out += line("pinned host-to-device", *m.h2d_gbps, "GB/s");
  if (m.allreduce) {
    out += m.allreduce->measured
               ? fmt::format("  all-reduce busbw       published measurement (another node: {})\n", m.allreduce->source)
               : fmt::format("  all-reduce busbw       datasheet peak, an upper bound ({})\n", m.allreduce->source);
    for (const AllreducePoint& point : m.allreduce->points)
      out += point.bytes > 0 ? fmt::format("    {:>10} {:>8.4g} GB/s\n", format_bytes(point.bytes), point.busbw_gbps)
                             : fmt::format("    {:>10} {:>8.4g} GB/s\n", "any size", point.busbw_gbps);
  }
  return out;
}

}  // namespace nodeaudit::score
