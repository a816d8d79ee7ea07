// The seed rules, each with a PASS limit and a FAIL limit (see profiles/README.md, [thresholds]).
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/score/verdict.hpp"

namespace nodeaudit::score {

using nlohmann::json;

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return "PASS";
    case Verdict::warn: return "WARN";
    case Verdict::fail: return "FAIL";
    case Verdict::not_judged: return "NOT_JUDGED";
  }
  return "?";
}

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", fraction * 100);
}

namespace {

using Show = std::function<std::string(double)>;

std::string ratio_text(double value) {
  return value < 0.95 ? fmt::format("{:.2f}x", value) : fmt::format("{:.1f}x", value);
}
std::string cores_text(double value) {
  return value < 1 ? fmt::format("{:.2f}", value) : fmt::format("{:.1f}", value);
}
std::string seconds_text(double value) {
  return fmt::format("{:.3g} s", value);
}

Rule not_judged(std::string name, std::string why) {
  Rule rule;
  rule.name = std::move(name);
  rule.reason = std::move(why);
  rule.text = fmt::format("{}: not judged ({})", rule.name, rule.reason);
  return rule;
}

// PASS at or above pass_at, FAIL below fail_below, WARN between.
Rule at_least(std::string name, const std::string& what, double figure, double pass_at, double fail_below,
              const Show& show, std::string unit) {
  Rule rule{std::move(name), Verdict::warn, figure, pass_at, fail_below, std::move(unit), "", ""};
  const std::string head = fmt::format("{}: {} {}", rule.name, what, show(figure));
  if (figure >= pass_at) {
    rule.verdict = Verdict::pass;
    rule.text = fmt::format("{} >= {}", head, show(pass_at));
  } else if (figure < fail_below) {
    rule.verdict = Verdict::fail;
    rule.text = fmt::format("{} < {}", head, show(fail_below));
  } else {
    rule.text = fmt::format("{} < {} (FAIL below {})", head, show(pass_at), show(fail_below));
  }
  return rule;
}

// PASS at or below pass_max, FAIL above fail_above, WARN between.
Rule at_most(std::string name, const std::string& what, double figure, double pass_max, double fail_above,
             const Show& show, std::string unit) {
  Rule rule{std::move(name), Verdict::warn, figure, pass_max, fail_above, std::move(unit), "", ""};
  const std::string head = fmt::format("{}: {} {}", rule.name, what, show(figure));
  if (figure <= pass_max) {
    rule.verdict = Verdict::pass;
    rule.text = fmt::format("{} <= {}", head, show(pass_max));
  } else if (figure > fail_above) {
    rule.verdict = Verdict::fail;
    rule.text = fmt::format("{} > {}", head, show(fail_above));
  } else {
    rule.text = fmt::format("{} > {} (FAIL above {})", head, show(pass_max), show(fail_above));
  }
  return rule;
}

std::string first_unmeasured(const StepModel& step, const std::vector<std::string>& resources) {
  for (const std::string& entry : step.unmeasured)
    for (const std::string& resource : resources)
      if (entry.rfind(resource + " ", 0) == 0) return entry;
  return "";
}

Rule utilization_rule(const Thresholds& t, const StepModel& step) {
  if (step.not_judged) return not_judged("utilization", *step.not_judged);
  // GPU-memory traffic is part of the GPU's busy time: without it the utilization is a guess.
  // A stage that was not measured could lengthen the step: the utilization is then only an upper bound.
  if (!step.unmeasured.empty()) return not_judged("utilization", step.unmeasured.front() + " not measured");
  return at_least("utilization", "predicted GPU utilization", step.utilization, t.utilization_healthy,
                  t.utilization_min, percent, "fraction");
}

Rule memory_rule(const Thresholds& t, const MemoryFit& memory) {
  if (memory.not_judged) return not_judged("memory_fit", *memory.not_judged);
  const std::string what =
      fmt::format("peak {} of {} usable per GPU =", format_bytes(memory.peak_bytes), format_bytes(memory.usable_bytes));
  return at_most("memory_fit", what, memory.ratio(), t.memory_peak_max, 1.0, percent, "fraction");
}

Rule communication_rule(const Thresholds& t, const NodeModel& node) {
  const Stage& comm = *node.stage("communication");
  if (comm.not_judged) return not_judged("communication", *comm.not_judged);
  if (node.step.not_judged) return not_judged("communication", *node.step.not_judged);
  const std::string what = comm.needed ? "exposed all-reduce" : "no gradient exchange (" + comm.note + "),";
  return at_most("communication", what + " share of the step", node.step.exposed_comm_share, t.comm_share_max,
                 std::min(1.0, 2 * t.comm_share_max), percent, "fraction");
}

Rule data_wait_rule(const Thresholds& t, const StepModel& step) {
  if (step.not_judged) return not_judged("data_wait", *step.not_judged);
  const std::string missing = first_unmeasured(step, {"storage", "cpu_decode", "host_to_device"});
  if (!missing.empty()) return not_judged("data_wait", missing);
  return at_most("data_wait", "GPUs wait for data", step.data_wait_share, t.data_wait_max,
                 std::min(1.0, 2 * t.data_wait_max), percent, "fraction");
}

Rule host_ram_rule(const Thresholds& t, const HostFit& host) {
  if (host.ram_not_judged) return not_judged("host_ram", *host.ram_not_judged);
  const std::string what = fmt::format("host RAM {}{} / total GPU memory {} =", format_bytes(host.ram_total_bytes),
                                       host.limited ? " (this run's container/cgroup limit)" : "",
                                       format_bytes(host.gpu_memory_total_bytes));
  return at_least("host_ram", what, host.ram_total_bytes / host.gpu_memory_total_bytes, t.host_ram_to_gpu_memory_min,
                  t.host_ram_to_gpu_memory_min / 2, ratio_text, "ratio");
}

Rule cpu_cores_rule(const Thresholds& t, const HostFit& host) {
  if (host.cores_not_judged) return not_judged("cpu_cores", *host.cores_not_judged);
  return at_least("cpu_cores", host.limited ? "CPU cores per GPU (this run's container/cgroup limit)" : "CPU cores per GPU",
                  host.cores_per_gpu, t.cpu_cores_per_gpu_min,
                  t.cpu_cores_per_gpu_min / 2, cores_text, "cores/GPU");
}

Rule uniformity_rule(const Thresholds& t, const Uniformity& uniformity) {
  if (uniformity.not_judged) return not_judged("uniformity", *uniformity.not_judged);
  const std::string what = fmt::format("GEMM rate spread across {} GPU{}", uniformity.per_gpu.size(),
                                       uniformity.per_gpu.size() == 1 ? "" : "s");
  return at_most("uniformity", what, uniformity.spread, t.gpu_spread_max, std::min(1.0, 2 * t.gpu_spread_max), percent,
                 "fraction");
}

// A judged rule resting on --target-gpus table figures says which, in its text and its JSON.
void label_datasheet_inputs(std::vector<Rule>& rules, const NodeModel& node) {
  std::vector<std::string> step_inputs;
  for (const Stage& stage : node.stages)
    if (stage.judged() && stage.datasheet) step_inputs.push_back(stage.resource);
  const std::vector<std::string> gpu_memory{"GPU memory per GPU"};
  const std::vector<std::string> gpu_count{"GPU count of the target"};
  const Stage& comm = *node.stage("communication");
  for (Rule& rule : rules) {
    if (rule.verdict == Verdict::not_judged) continue;
    if (rule.name == "utilization" || rule.name == "data_wait" || rule.name == "step_time")
      rule.datasheet_inputs = step_inputs;
    else if (rule.name == "communication")
      rule.datasheet_inputs = comm.datasheet ? step_inputs : std::vector<std::string>{};
    else if (rule.name == "memory_fit" && node.memory.datasheet)
      rule.datasheet_inputs = gpu_memory;
    else if (rule.name == "host_ram" && node.host.gpus_from_target)
      rule.datasheet_inputs = gpu_memory;
    else if (rule.name == "cpu_cores" && node.host.gpus_from_target)
      rule.datasheet_inputs = gpu_count;
    if (rule.datasheet_inputs.empty()) continue;
    std::string inputs;
    for (const std::string& input : rule.datasheet_inputs) inputs += (inputs.empty() ? "" : ", ") + input;
    rule.text += fmt::format(" [{}: {}]", gpu_table_label, inputs);
  }
}

}  // namespace

std::vector<Rule> judge_rules(const Profile& profile, const NodeModel& node) {
  const Thresholds& t = profile.thresholds;
  std::vector<Rule> rules{utilization_rule(t, node.step), memory_rule(t, node.memory), communication_rule(t, node),
                          data_wait_rule(t, node.step),   host_ram_rule(t, node.host), cpu_cores_rule(t, node.host)};
  // Under --target-gpus the rule has nothing to compare; the assessment's target_gpus block says so,
  // and a host that passes every other rule may PASS.
  if (node.uniformity.applicable) rules.push_back(uniformity_rule(t, node.uniformity));
  if (t.step_time_max_s) {
    if (node.step.not_judged)
      rules.push_back(not_judged("step_time", *node.step.not_judged));
    else
      rules.push_back(at_most("step_time", "predicted step time", node.step.step_s, *t.step_time_max_s,
                              *t.step_time_max_s, seconds_text, "s"));
  }
  label_datasheet_inputs(rules, node);
  return rules;
}

json to_json(const Rule& rule) {
  json out{{"rule", rule.name}, {"verdict", to_string(rule.verdict)}, {"text", rule.text}};
  if (rule.figure) out["figure"] = *rule.figure;
  if (rule.threshold) out["threshold"] = *rule.threshold;
  if (rule.fail_threshold) out["fail_threshold"] = *rule.fail_threshold;
  if (!rule.unit.empty()) out["unit"] = rule.unit;
  if (!rule.reason.empty()) out["reason"] = rule.reason;
  if (!rule.datasheet_inputs.empty()) out["datasheet_inputs"] = rule.datasheet_inputs;
  return out;
}

// Worst of the judged rules; a rule that could not be judged lifts a PASS to WARN (never a silent
// PASS), and nothing judged at all is NOT_JUDGED.
json overall_verdict(const std::vector<Rule>& rules) {
  Verdict worst = Verdict::pass;
  std::vector<std::string> failed, warned, unjudged;
  for (const Rule& rule : rules) {
    if (rule.verdict == Verdict::not_judged) unjudged.push_back(rule.name);
    if (rule.verdict == Verdict::fail) failed.push_back(rule.name);
    if (rule.verdict == Verdict::warn) warned.push_back(rule.name);
  }
  worst = !failed.empty() ? Verdict::fail : !warned.empty() ? Verdict::warn : Verdict::pass;
  const bool nothing_judged = unjudged.size() == rules.size();
  const Verdict judged_worst = worst;
  if (nothing_judged)
    worst = Verdict::not_judged;
  else if (worst == Verdict::pass && !unjudged.empty())
    worst = Verdict::warn;
  auto names = [](const std::vector<std::string>& list) {
    std::string out;
    for (const auto& name : list) out += (out.empty() ? "" : ", ") + name;
    return out;
  };
  std::string text = to_string(worst);
  if (!failed.empty()) text += fmt::format(": failed {}", names(failed));
  if (!warned.empty()) text += fmt::format("{} warned {}", failed.empty() ? ":" : ";", names(warned));
  if (!unjudged.empty())
    text += fmt::format("{} not judged {}", failed.empty() && warned.empty() ? ":" : ";", names(unjudged));
  if (failed.empty() && warned.empty() && unjudged.empty()) text += ": every rule passed";
  return {{"verdict", to_string(worst)},
          {"worst_judged", nothing_judged ? "NOT_JUDGED" : to_string(judged_worst)},
          {"complete", unjudged.empty()},
          {"not_judged", unjudged},
          {"text", text}};
}

}  // namespace nodeaudit::score
