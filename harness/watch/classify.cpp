#include "harness/watch/classify.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "harness/node/nvml.hpp"

namespace nodeaudit::watch {
namespace {

struct GpuView {
  const GpuFacts& facts;
  const std::vector<double>& util;
  const std::vector<double>& mem;
  const std::vector<double>& power;
  const std::vector<double>& pcie_rx;
  const std::vector<double>& pcie_tx;
  const std::vector<double>& throttle;
  std::string name() const { return fmt::format("GPU {}", facts.index); }
};

GpuView view_of(const WatchSeries& s, const GpuFacts& g) {
  const std::string p = fmt::format("gpu{}.", g.index);
  return {g, s.column(p + "util_pct"), s.column(p + "mem_used_bytes"), s.column(p + "power_w"),
          s.column(p + "pcie_rx_bytes_per_s"), s.column(p + "pcie_tx_bytes_per_s"), s.column(p + "throttle_mask")};
}

double share(std::size_t part, std::size_t whole) { return whole == 0 ? 0 : static_cast<double>(part) / static_cast<double>(whole); }

std::optional<double> memory_share(const GpuView& g) {
  const auto used = mean_of(g.mem);
  if (!used || !g.facts.memory_total_bytes || *g.facts.memory_total_bytes <= 0) return std::nullopt;
  return *used / *g.facts.memory_total_bytes;
}

// The power the GPU is judged against: its limit when known, else the peak seen while it ran at or
// above 70% in this watch; none when it never did (then idleness is judged on utilization alone).
std::pair<std::optional<double>, std::string> power_reference(const GpuView& g) {
  if (g.facts.power_limit_w) return {g.facts.power_limit_w, "power limit"};
  std::optional<double> peak;
  for (std::size_t i = 0; i < g.power.size() && i < g.util.size(); ++i)
    if (std::isfinite(g.power[i]) && g.util[i] >= 70 && (!peak || g.power[i] > *peak)) peak = g.power[i];
  if (!peak) return {std::nullopt, "no power limit known and the GPU never ran busy"};
  return {peak, "peak power seen while busy"};
}

void judge_utilization(const GpuView& g, const Thresholds& th, Diagnosis& out) {
  const auto values = finite(g.util);
  if (values.empty()) return;
  const Summary s = summarize(values);
  std::size_t above = 0;
  for (double v : values) above += v >= th.healthy_util_pct ? 1 : 0;
  const double above_share = share(above, values.size());
  WatchFinding f;
  f.gpu = g.facts.index;
  f.evidence = {{"mean_util_pct", s.mean}, {"stdev_pct", s.stdev}, {"p5_pct", s.p5},
                {"time_at_or_above_70_pct", 100 * above_share}, {"samples", values.size()}};
  const std::string figures = fmt::format("mean utilization {:.0f}% (stdev {:.0f} points), {:.0f}% of samples at or above {:.0f}%",
                                          s.mean, s.stdev, 100 * above_share, th.healthy_util_pct);
  if (s.mean >= th.healthy_util_pct && above_share >= th.healthy_time_share) {
    f.code = "watch.utilization_healthy";
    f.headline = fmt::format("{}: {}: healthy (the 70% line).", g.name(), figures);
  } else if (s.mean >= th.healthy_util_pct) {
    f.severity = Severity::warn;
    f.code = "watch.utilization_unstable";
    f.headline = fmt::format("{}: {}: the mean passes the 70% line but utilization is unstable.", g.name(), figures);
    f.action = "Find what interrupts the steps (data loader, checkpoints, evaluation, synchronization); see the other findings.";
  } else {
    f.severity = Severity::warn;
    f.code = "watch.utilization_low";
    const bool not_bound = s.mean < th.not_compute_bound_pct;
    f.headline = fmt::format("{}: {}: below the 70% line{}.", g.name(), figures, not_bound ? ", the job is not compute-bound" : "");
    f.action = "The GPU waits on something else; the findings below say what it correlates with.";
  }
  out.findings.push_back(std::move(f));
}

void judge_sawtooth(const WatchSeries& s, const GpuView& g, const Thresholds& th, Diagnosis& out) {
  const DropAnalysis d = analyse_drops(s.t_s, g.util, th.drops);
  if (d.drops < th.drops.min_drops) return;
  WatchFinding f;
  f.gpu = g.facts.index;
  f.evidence = {{"drops", d.drops}, {"period_s", d.period_s}, {"period_cv", d.period_cv},
                {"near_zero_time_pct", 100 * d.near_zero_share}, {"mean_drop_s", d.mean_drop_s},
                {"busy_level_pct", d.busy_level_pct}};
  if (d.periodic) {
    f.severity = Severity::warn;
    f.code = "watch.sawtooth";
    f.headline = fmt::format("{}: utilization drops from ~{:.0f}% to near zero every {:.1f} s ({} drops, period varies {:.0f}%), "
                             "{:.0f}% of the time near zero: the data loader is behind.",
                             g.name(), d.busy_level_pct, d.period_s, d.drops, 100 * d.period_cv, 100 * d.near_zero_share);
    f.action = "Feed the GPU faster: more DataLoader workers, pin_memory and a deeper prefetch, a faster or cached data set "
               "(local NVMe, page cache), decode on the GPU (DALI) or pre-process offline.";
  } else {
    f.code = "watch.stalls";
    f.headline = fmt::format("{}: utilization fell to near zero {} times at irregular intervals ({:.0f}% of the time near zero).",
                             g.name(), d.drops, 100 * d.near_zero_share);
    f.action = "Irregular stalls point at checkpoints, evaluation or logging rather than the loader; time them in the job's log.";
  }
  out.findings.push_back(std::move(f));
}

void judge_memory_idle(const GpuView& g, const Thresholds& th, Diagnosis& out) {
  const auto mem = memory_share(g);
  const auto util = mean_of(g.util);
  if (!mem || !util || *mem < th.memory_full_share || *util >= th.not_compute_bound_pct) return;
  WatchFinding f;
  f.severity = Severity::warn;
  f.gpu = g.facts.index;
  f.code = "watch.memory_full_idle";
  f.evidence = {{"memory_used_pct", 100 * *mem}, {"mean_util_pct", *util}};
  f.headline = fmt::format("{}: memory {:.0f}% full while utilization averages {:.0f}%.", g.name(), 100 * *mem, *util);
  f.action = "Memory, not compute, limits the job: revisit batch size and gradient accumulation (activation checkpointing or "
             "mixed precision free memory for a larger micro-batch) and how the model is split across GPUs.";
  out.findings.push_back(std::move(f));
}

}  // namespace

// In classify_gpu_links.cpp.
void judge_input_starvation(const WatchSeries& s, const GpuFacts& facts, const Thresholds& th, Diagnosis& out);
void judge_communication(const WatchSeries& s, const GpuFacts& facts, const Thresholds& th, Diagnosis& out);
void judge_throttle(const WatchSeries& s, const GpuFacts& facts, const Thresholds& th, Diagnosis& out);
void judge_node(const WatchSeries& s, const Thresholds& th, Diagnosis& out);
void add_gpu_metrics(const WatchSeries& s, const Thresholds& th, std::vector<Metric>& metrics);
std::string summary_paragraph(const WatchSeries& s, const Diagnosis& d);

namespace detail {
std::optional<double> gpu_memory_share(const WatchSeries& s, const GpuFacts& g) { return memory_share(view_of(s, g)); }
std::pair<std::optional<double>, std::string> gpu_power_reference(const WatchSeries& s, const GpuFacts& g) {
  return power_reference(view_of(s, g));
}
}  // namespace detail

Diagnosis diagnose(const WatchSeries& series, const Thresholds& th) {
  Diagnosis out;
  if (series.size() < th.min_samples) {
    WatchFinding f;
    f.code = "watch.short";
    f.evidence = {{"samples", series.size()}, {"duration_s", series.t_s.empty() ? 0.0 : series.t_s.back()}};
    f.headline = fmt::format("Only {} samples were collected; the diagnosis wants minutes of a running job (15-30 min).", series.size());
    out.findings.push_back(std::move(f));
  }
  for (const GpuFacts& g : series.gpus) {
    const GpuView v = view_of(series, g);
    judge_utilization(v, th, out);
    judge_sawtooth(series, v, th, out);
    judge_memory_idle(v, th, out);
    judge_input_starvation(series, g, th, out);
    judge_communication(series, g, th, out);
    judge_throttle(series, g, th, out);
  }
  judge_node(series, th, out);
  diagnose_host(series, th, out);
  add_gpu_metrics(series, th, out.metrics);
  add_host_metrics(series, out.metrics);
  out.summary = summary_paragraph(series, out);
  return out;
}

Finding to_finding(const WatchFinding& f) {
  return {f.severity, f.code, f.action.empty() ? f.headline : f.headline + " Action: " + f.action};
}

const WatchFinding* find_code(const Diagnosis& d, const std::string& code, int gpu) {
  for (const auto& f : d.findings)
    if (f.code == code && (gpu == -2 || f.gpu == gpu)) return &f;
  return nullptr;
}

bool has_code(const Diagnosis& d, const std::string& code, int gpu) { return find_code(d, code, gpu) != nullptr; }

}  // namespace nodeaudit::watch
