// Node-wide rules (no GPU, all GPUs idle, oversized node), the per-GPU metrics and the summary.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/watch/classify.hpp"

namespace nodeaudit::watch {
namespace detail {
std::optional<double> gpu_memory_share(const WatchSeries& s, const GpuFacts& g);
}

namespace {


double window_s(const WatchSeries& s) { return s.t_s.empty() ? 0 : s.t_s.back() - s.t_s.front() + s.interval_s; }

void judge_no_gpu(const WatchSeries& s, Diagnosis& out) {
  const std::string why = s.gpu_note.empty() ? "no GPU was found" : s.gpu_note;
  out.findings.push_back({Severity::info, "watch.no_gpu", -1,
                          "No GPU telemetry (" + why + "); host series only, so no GPU rule was judged.", "",
                          {{"gpu_note", why}}});
}

}  // namespace

void judge_node(const WatchSeries& s, const Thresholds& th, Diagnosis& out) {
  if (s.gpus.empty()) return judge_no_gpu(s, out);
  double util_sum = 0, mem_sum = 0, peak = 0;
  std::size_t util_n = 0, mem_n = 0;
  for (const auto& g : s.gpus) {
    const auto u = finite(s.column(gpu_column_prefix(g) + "util_pct"));
    for (double v : u) util_sum += v, ++util_n, peak = std::max(peak, v);
    if (auto m = detail::gpu_memory_share(s, g)) mem_sum += *m, ++mem_n;
  }
  if (util_n == 0) return;
  const double util = util_sum / static_cast<double>(util_n);
  const double mem = mem_n ? mem_sum / static_cast<double>(mem_n) : NAN;  // NaN: memory size unknown
  nlohmann::json evidence = {{"mean_util_pct", util}, {"peak_util_pct", peak}, {"gpus", s.gpus.size()}, {"window_s", window_s(s)}};
  if (mem_n) evidence["mean_memory_used_pct"] = 100 * mem;
  if (util < th.idle_util_pct && peak < th.drops.low_pct) {
    out.findings.push_back({Severity::warn, "watch.gpus_idle", -1,
                            fmt::format("No GPU work during the watch: utilization averaged {:.1f}% and never passed {:.0f}%.", util, peak),
                            "Is the job running on this node? Give --pid to follow it, or check that it sees the GPUs (CUDA_VISIBLE_DEVICES).",
                            evidence});
  }
  if (util < th.oversized_util_pct && mem_n && mem < th.oversized_memory_share) {
    out.findings.push_back({Severity::warn, "watch.oversized", -1,
                            fmt::format("Node mean utilization {:.0f}% (< {:.0f}%) and memory {:.0f}% used (< {:.0f}%) over {}: the node is "
                                        "oversized for this job (the seed rule is meant over days; this window is shorter).",
                                        util, th.oversized_util_pct, 100 * mem, 100 * th.oversized_memory_share,
                                        format_duration(window_s(s))),
                            "Run the job on fewer or smaller GPUs, or share the node (more jobs, MIG partitions).", evidence});
  }
}

void add_gpu_metrics(const WatchSeries& s, const Thresholds& th, std::vector<Metric>& metrics) {
  for (const auto& g : s.gpus) {
    const Labels gpu{{"gpu", std::to_string(g.index)}};
    const auto util = finite(s.column(gpu_column_prefix(g) + "util_pct"));
    if (!util.empty()) {
      metrics.push_back({"gpu_util", "%", Better::higher, gpu, util});
      const double above = static_cast<double>(std::count_if(util.begin(), util.end(), [&](double v) { return v >= th.healthy_util_pct; }));
      metrics.push_back({"gpu_util_time_above_70", "%", Better::higher, gpu, {100 * above / static_cast<double>(util.size())}});
      const DropAnalysis d = analyse_drops(s.t_s, s.column(gpu_column_prefix(g) + "util_pct"), th.drops);
      metrics.push_back({"gpu_near_zero_time", "%", Better::lower, gpu, {100 * d.near_zero_share}});
      if (d.periodic) metrics.push_back({"sawtooth_period", "s", Better::higher, gpu, {d.period_s}});
    }
    const auto mem = finite(s.column(gpu_column_prefix(g) + "mem_used_bytes"));
    if (!mem.empty()) metrics.push_back({"gpu_mem_used", "bytes", Better::higher, gpu, mem});
    if (auto share = detail::gpu_memory_share(s, g)) metrics.push_back({"gpu_mem_used_share", "%", Better::higher, gpu, {100 * *share}});
  }
}

std::string summary_paragraph(const WatchSeries& s, const Diagnosis& d) {
  std::string text = s.gpus.empty() ? fmt::format("Watched the host only ({})", s.gpu_note.empty() ? "no GPU found" : s.gpu_note)
                                    : fmt::format("Watched {} GPU{}", s.gpus.size(), s.gpus.size() == 1 ? "" : "s");
  text += fmt::format(" for {} at {} intervals ({} samples{}).", format_duration(window_s(s)), format_duration(s.interval_s), s.size(),
                      s.pid ? fmt::format(", following process {}", *s.pid) : "");
  std::size_t shown = 0;
  const WatchFinding* first_action = nullptr;
  for (const auto& f : d.findings) {
    if (f.severity == Severity::info && f.code != "watch.utilization_healthy" && f.code != "watch.no_gpu") continue;
    if (shown++ < 5) text += " " + f.headline;
    const bool generic = f.code.rfind("watch.utilization_", 0) == 0;
    if (!first_action && f.severity != Severity::info && !generic) first_action = &f;
  }
  const bool any_warn = std::any_of(d.findings.begin(), d.findings.end(), [](const WatchFinding& f) { return f.severity != Severity::info; });
  if (first_action) text += " First: " + first_action->action;
  else if (!any_warn) text += " No sign of idle time worth acting on.";
  return text;
}

}  // namespace nodeaudit::watch
