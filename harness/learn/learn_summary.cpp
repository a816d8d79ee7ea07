#include "harness/learn/learn_summary.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "harness/core/stats.hpp"

#include "harness/core/units.hpp"

namespace nodeaudit::learn {

namespace {

std::string si(double value, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (std::fabs(value) >= 1000 && i < 6) value /= 1000, ++i;
  return fmt::format("{:.3g} {}{}", value, prefixes[i], unit);
}

std::string seconds(double s) { return s < 1 ? fmt::format("{:.1f} ms", s * 1e3) : fmt::format("{:.3g} s", s); }

struct Line {
  std::string label, value, how;
};

// NVML's utilization and memory in use over the window, and the ranks' peak allocated memory; or
// why they were not measured.
Line gpu_row(const JobLoad& load) {
  if (load.gpus.empty()) return {"GPU", "not measured: " + load.gpu_not_measured, ""};
  std::string value;
  for (const auto& g : load.gpus) {
    const double mem = g.mem_used_bytes.empty() ? NAN : *std::max_element(g.mem_used_bytes.begin(), g.mem_used_bytes.end());
    value += fmt::format("{}GPU {}: utilization {} median, memory in use up to {}", value.empty() ? "" : "; ", g.index,
                         g.util_pct.empty() ? std::string("unknown") : fmt::format("{:.0f}%", median_or_nan(g.util_pct)),
                         std::isnan(mem) ? std::string("unknown") : format_bytes(mem));
  }
  if (!load.peak_allocated_bytes.empty())
    value += fmt::format("; peak allocated {} (largest rank)", format_bytes(*std::max_element(load.peak_allocated_bytes.begin(), load.peak_allocated_bytes.end())));
  else
    value += "; peak allocated not measured: the job did not use CUDA";
  const bool found = std::all_of(load.gpus.begin(), load.gpus.end(), [](const GpuLoad& g) { return g.job_context_known; });
  return {"GPU", value, fmt::format("NVML over the {}, {}; peak allocated: torch.cuda.max_memory_allocated", load.window,
                                    found ? "the GPUs the job's processes ran on" : "every GPU: the job's processes were not among those NVML listed (another PID namespace, or no CUDA)")};
}

// The rows both renderings print, in order.
std::vector<Line> rows(const LearnedJob& job, const JobLoad& load, const std::optional<DataWaitCheck>& data_wait) {
  const LearnedTiming& t = job.timing;
  const LearnedProfileFields& f = job.fields;
  std::vector<Line> out;
  if (!t.measured_step_s.empty()) {
    const auto [lo, hi] = std::minmax_element(t.measured_step_s.begin(), t.measured_step_s.end());
    out.push_back({"step time", fmt::format("{} median of {} steps ({} to {})", seconds(t.step_time_s), t.measured_step_s.size(), seconds(*lo), seconds(*hi)), ""});
    out.push_back({"throughput", fmt::format("{:.4g} samples/s on {} rank(s), {:.4g} samples per step per rank", t.samples_per_s, job.world_size, t.samples_per_step), ""});
    out.push_back({"where the steps went", fmt::format("data wait {:.1f}%, backward {:.1f}%, optimizer {:.1f}%, checkpoint {:.1f}%, forward and the rest {:.1f}%",
                                                       100 * t.shares.data_wait, 100 * t.shares.backward, 100 * t.shares.optimizer,
                                                       100 * t.shares.checkpoint, 100 * t.shares.other),
                   job.ddp ? "DDP's all-reduce overlaps backward and is counted in it" : ""});
    if (data_wait)
      out.push_back({"data wait", data_wait_line(*data_wait), fmt::format("{}; node figures from {}", data_wait->basis, data_wait->source)});
  }
  if (!load.cpu_cores.empty())
    out.push_back({"job's processes", fmt::format("{:.2f} cores busy, storage reads {}/s (median over the {})", median_or_nan(load.cpu_cores),
                                                  load.read_bytes_per_s.empty() ? std::string("unknown") : si(median_or_nan(load.read_bytes_per_s), "B"), load.window), ""});
  out.push_back(gpu_row(load));
  if (job.steps_done == 0) return out;
  out.push_back({"parameters", fmt::format("{:.0f} ({:.0f} trainable), {}, {} ({:.3g} bytes per trainable parameter)", f.parameters.value,
                                           f.trainable_parameters.value, f.dtype.value, f.optimizer.value, f.bytes_per_parameter.value), f.bytes_per_parameter.how});
  if (f.flops_per_sample.value > 0) out.push_back({"FLOPs per sample", si(f.flops_per_sample.value, "FLOP"), f.flops_per_sample.how});
  out.push_back({"activations", fmt::format("{} per sample", format_bytes(std::round(f.activation_bytes_per_sample.value))), f.activation_bytes_per_sample.how});
  out.push_back({"batch", fmt::format("micro-batch {:.0f} x accumulation {:.0f}{}", f.micro_batch.value, f.accumulation.value,
                                      f.tokens_per_sample ? fmt::format(", {:.0f} tokens per sample", f.tokens_per_sample->value) : ""), f.micro_batch.how});
  out.push_back({"data", fmt::format("{} per sample, {}, decode {}, data set {}", format_bytes(std::round(f.sample_size.value)), f.access.value,
                                     f.decode.value, format_bytes(std::round(f.dataset_size.value))), f.sample_size.how});
  out.push_back({"loader", f.loader.value, f.loader.how});
  if (job.world_size > 1 || job.distributed)
    out.push_back({"data parallel", fmt::format("{} ranks ({}), gradient all-reduce {} per step", job.world_size, job.backend.empty() ? "?" : job.backend,
                                                format_bytes(std::round(job.all_reduce_bytes_per_step))), job.all_reduce_how});
  out.push_back({"model_efficiency", fmt::format("{:.2f}", f.model_efficiency.value), f.model_efficiency.how});
  return out;
}

std::vector<std::string> next_commands(const SummaryPaths& p) {
  if (p.profile_path.empty()) return {};
  return {fmt::format("nodeaudit run --profile {}", p.profile_path),
          fmt::format("nodeaudit run --profile {} --target-gpus h100x8", p.profile_path),
          fmt::format("nodeaudit score {} --profile {} --target-gpus h100x8", p.result_path, p.profile_path)};
}

}  // namespace

std::string render_learn_summary(const LearnedJob& job, const JobLoad& load, const SummaryPaths& paths) {
  std::string out = fmt::format("\nlearned from `{}`: {} of {} optimizer steps on {} rank(s) ({} warm-up, {} measured, {} counted for FLOPs)\n",
                                paths.command_text, job.steps_done, job.steps_needed, job.world_size, job.warmup, job.measured, job.counted);
  for (const auto& r : rows(job, load, paths.data_wait)) {
    out += fmt::format("  {:<21} {}\n", r.label, r.value);
    if (!r.how.empty()) out += fmt::format("  {:<21} ({})\n", "", r.how);
  }
  for (const auto& note : job.notes) out += "  not learned: " + note + "\n";
  if (!paths.profile_path.empty()) out += "profile written to " + paths.profile_path + "\n";
  else if (!paths.no_profile_reason.empty()) out += "no profile written: " + paths.no_profile_reason + "\n";
  out += "result written to " + paths.result_path + "\n";
  const auto next = next_commands(paths);
  if (!next.empty()) {
    out += "next: judge this node for the job, or this host with 8 H100s, with the learned profile:\n";
    for (const auto& c : next) out += "  " + c + "\n";
  }
  return out;
}

std::string render_learn_markdown(const LearnedJob& job, const JobLoad& load, const SummaryPaths& paths) {
  std::string out = fmt::format("# Learned profile of `{}`\n\n{} of {} optimizer steps on {} rank(s): {} warm-up, {} measured, {} counted for FLOPs.\n\n",
                                paths.command_text, job.steps_done, job.steps_needed, job.world_size, job.warmup, job.measured, job.counted);
  out += "| figure | value | how it was obtained |\n|---|---|---|\n";
  for (const auto& r : rows(job, load, paths.data_wait)) out += fmt::format("| {} | {} | {} |\n", r.label, r.value, r.how);
  if (!job.notes.empty()) {
    out += "\n## Not learned\n\n";
    for (const auto& note : job.notes) out += "- " + note + "\n";
  }
  out += "\n## Files\n\n";
  if (!paths.profile_path.empty()) out += "- profile: `" + paths.profile_path + "`\n";
  else if (!paths.no_profile_reason.empty()) out += "- no profile written: " + paths.no_profile_reason + "\n";
  out += "- result: `" + paths.result_path + "`\n";
  const auto next = next_commands(paths);
  if (!next.empty()) {
    out += "\n## Next\n\n```\n";
    for (const auto& c : next) out += c + "\n";
    out += "```\n";
  }
  return out;
}

}  // namespace nodeaudit::learn
