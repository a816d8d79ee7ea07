// Text of an assessment (read back from its JSON, so a stored assessment prints the same) and of a
// profile with its derived figures.
#include "harness/score/render.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/table.hpp"
#include "harness/core/units.hpp"
#include "harness/score/profile_fields.hpp"
#include "harness/score/result_view.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::score {

using nlohmann::json;

namespace {

double number(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_number() ? object[key].get<double>() : 0.0;
}
std::string text(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "";
}
std::string pct(double fraction) {
  return fmt::format("{:.1f}%", fraction * 100);
}

// "  not measured: 13 probes skipped: <reason>" and their ids; the lines below that rest on one of
// them say "<probe> skipped" only.
std::string skipped_lines(const json& skipped) {
  std::vector<SkipGroup> groups;
  for (const json& g : skipped)
    if (g.is_object()) groups.push_back({text(g, "reason"), g.value("probes", std::vector<std::string>{})});
  if (groups.empty()) return "";
  return "  not measured:\n" + render_skip_groups(groups, "    ");
}

std::string step_lines(const json& step) {
  if (step.contains("not_judged")) return fmt::format("  step: not predicted ({})\n", text(step, "not_judged"));
  const std::string basis = step.contains("basis") ? " [" + text(step, "basis") + "]" : "";
  std::string out = fmt::format(
      "  step{}: {:.0f} samples per GPU, predicted {:.4g} s; GPU utilization {}, exposed communication {}, "
      "data wait {}\n",
      basis,
      number(step, "samples_per_gpu"), number(step, "time_s"), pct(number(step, "gpu_utilization")),
      pct(number(step, "exposed_comm_share")), pct(number(step, "data_wait_share")));
  out += fmt::format("  throughput: {:.1f} samples/s per node", number(step, "samples_per_s"));
  if (step.contains("tokens_per_s")) out += fmt::format(", {:.0f} tokens/s per node", number(step, "tokens_per_s"));
  return out + "\n";
}

std::string resource_line(const json& resource) {
  const std::string name = text(resource, "resource");
  if (!resource.value("needed", true)) return fmt::format("  {:<21} not needed: {}\n", name, text(resource, "note"));
  if (resource.contains("not_judged"))
    return fmt::format("  {:<21} not judged ({})\n", name, text(resource, "not_judged"));
  const json& demand = resource["demand"];
  const json& capacity = resource["capacity"];
  std::string line =
      fmt::format("  {:<21} {:>11} {:>6}  {} at {} ({})", name, format_quantity(number(resource, "time_per_step_s"), "s"),
                  pct(number(resource, "share_of_step")), format_quantity(number(demand, "value"), text(demand, "unit")),
                  format_quantity(number(capacity, "value"), text(capacity, "unit")), text(capacity, "metric"));
  if (resource.contains("note")) line += "; " + text(resource, "note");
  else if (text(capacity, "basis").rfind("upper bound", 0) == 0) line += "; " + text(capacity, "basis");
  return line + "\n";
}

// "[GPU table, not measured on this node]" after a figure the --target-gpus table gave.
std::string basis_mark(const json& object, const char* key) {
  const std::string basis = text(object, key);
  return basis.empty() || basis == "measured" || basis == measured_here_label ? "" : " [" + std::string(gpu_table_label) + "]";
}

std::string memory_host_lines(const json& assessment) {
  const json& memory = assessment["memory"];
  std::string out;
  if (memory.contains("not_judged"))
    out += fmt::format("  memory: peak {} per GPU; usable not measured ({})\n",
                       format_bytes(number(memory, "peak_bytes")), text(memory, "not_judged"));
  else
    out += fmt::format("  memory: peak {} of {} usable per GPU{}, headroom {:.1f}% (model state {} + activations {})\n",
                       format_bytes(number(memory, "peak_bytes")), format_bytes(number(memory, "usable_bytes")),
                       basis_mark(memory, "basis"), number(memory, "headroom_pct"),
                       format_bytes(number(memory, "model_state_bytes")),
                       format_bytes(number(memory, "activation_bytes")));
  const json& host = assessment["host"];
  if (!host.contains("ram_not_judged"))
    out += fmt::format("  host: RAM {} for {} of GPU memory{} ({:.2f}x)", format_bytes(number(host, "ram_total_bytes")),
                       format_bytes(number(host, "gpu_memory_total_bytes")),
                       host.contains("gpus_basis") ? " [" + std::string(gpu_table_label) + "]" : "",
                       number(host, "ram_to_gpu_memory"));
  if (!host.contains("cores_not_judged"))
    out += fmt::format("{}{:.1f} CPU cores per GPU", host.contains("ram_not_judged") ? "  host: " : "; ",
                       number(host, "cpu_cores_per_gpu"));
  if (!host.contains("ram_not_judged") || !host.contains("cores_not_judged")) out += "\n";
  return out;
}

// The graded figures that fell below their warn limit, and what could not be graded (once a line).
std::string expected_lines(const json& assessment) {
  if (!assessment.contains("expected")) return "";
  const json& expected = assessment["expected"];
  std::string out;
  const json grades = expected.value("grades", json::array());
  if (!grades.empty()) {
    int below = 0;
    for (const json& g : grades) below += text(g, "verdict") != "PASS";
    out += fmt::format("  expected values: {} figures graded against their expected values, {} below the warn limit\n",
                       grades.size(), below);
    // Where each figure's limits came from: the built-in table, the profile's [expect] or --expect FILE.
    const json all_limits = expected.value("limits", json::object());
    for (const auto& [figure, limits] : all_limits.items()) {
      const std::string warn_source = text(limits, "warn_source"), fail_source = text(limits, "fail_source");
      out += fmt::format(
          "    limits {}: WARN past -{:.4g}%, FAIL past -{:.4g}% ({})\n", figure, number(limits, "warn_below_pct"),
          number(limits, "fail_below_pct"),
          warn_source == fail_source ? warn_source : "WARN from " + warn_source + "; FAIL from " + fail_source);
    }
    for (const json& g : grades)
      if (text(g, "verdict") != "PASS")
        out += fmt::format("    {:<5} {}{}: {:.4g} {} vs {:.4g} for {} ({:+.1f}%)\n", text(g, "verdict"),
                           text(g, "figure"), text(g, "gpu") == "node" ? "" : " GPU " + text(g, "gpu"),
                           number(g, "measured"), text(g, "unit"), number(g, "expected"), text(g, "model"),
                           -number(g, "below_pct"));
  }
  std::vector<std::string> said;
  for (const json& line : expected.value("not_graded", json::array())) {
    // "GPU 3 (NVIDIA L4): no reference for this model" said once for all GPUs of a model.
    std::string reason = line.get<std::string>();
    if (const auto paren = reason.find(" ("); reason.rfind("GPU ", 0) == 0 && paren != std::string::npos)
      reason = "GPUs" + reason.substr(paren);
    if (std::find(said.begin(), said.end(), reason) == said.end()) said.push_back(reason);
  }
  for (const std::string& reason : said) out += "  not graded: " + reason + "\n";
  return out;
}

// Who the node was judged for when --target-gpus was given, and what happened to its own GPUs.
std::string target_lines(const json& assessment) {
  if (!assessment.contains("target_gpus")) return "";
  const json& target = assessment["target_gpus"];
  std::string out = fmt::format("  judged for {} x {} (--target-gpus {}): GPU-side figures from {}, not measured on this "
                                "node (each a published measurement on another node or a datasheet peak)\n",
                                number(target, "count"), text(target, "description"), text(target, "spec"),
                                text(target, "table"));
  if (target.contains("own_gpus")) out += "  " + text(target, "own_gpus") + "\n";
  for (const json& line : target.value("not_applicable", json::array()))
    out += "  not applicable: " + line.get<std::string>() + "\n";
  return out;
}

std::string cost_line(const json& cost) {
  if (cost.is_null()) return "";
  if (cost.contains("not_judged")) return fmt::format("Cost: not judged ({})\n", text(cost, "not_judged"));
  const double extras = number(cost, "storage_cost") + number(cost, "transfer_cost") + number(cost, "ops_cost");
  std::string line = fmt::format("Cost: {:.2f}/h x {:.2f} h + {:.2f} extras = {:.2f} per run; {:.4g} per 1M {}",
                                 number(cost, "price_per_hour"), number(cost, "predicted_hours"), extras,
                                 number(cost, "run_cost"), number(cost, "per_million"), text(cost, "per_million_unit"));
  if (cost.contains("note")) line += " (" + text(cost, "note") + ")";
  if (cost.contains("basis")) line += " [" + text(cost, "basis") + "]";
  return line + "\n";
}

}  // namespace

std::string render_assessment(const json& assessment) {
  if (!assessment.is_object() || !assessment.contains("rules")) return "Assessment: none\n";
  std::string out =
      fmt::format("Assessment for {} ({}) on {} GPU{}\n", text(assessment, "profile"), text(assessment, "category"),
                  number(assessment, "gpus"), number(assessment, "gpus") == 1 ? "" : "s");
  out += target_lines(assessment);
  out += skipped_lines(assessment.value("skipped", json::array()));
  out += step_lines(assessment["step"]);
  out += "  resources (time per step, share of the step, demand at capacity):\n";
  for (const json& resource : assessment["resources"]) out += "  " + resource_line(resource);
  out += memory_host_lines(assessment);
  out += expected_lines(assessment);
  out += "Rules:\n";
  for (const json& rule : assessment["rules"])
    out += fmt::format("  {:<10} {}\n", text(rule, "verdict"), text(rule, "text"));
  out += fmt::format("Overall: {}\n", text(assessment["overall"], "text"));
  const std::string basis =
      assessment["bottleneck"].contains("basis") ? " [" + text(assessment["bottleneck"], "basis") + "]" : "";
  out += fmt::format("Limiting resource: {}{}\n", text(assessment["bottleneck"], "text"), basis);
  out += fmt::format("Upgrade: {}\n", text(assessment["upgrade"], "text"));
  return out + cost_line(assessment.value("cost", json()));
}

// Two findings, each under its own word: the step's limiting resource (what sets the step time,
// from the balance model) and the failed rules (the sizing checks that did not pass, FAIL before
// WARN, the first one in full).
std::string failed_rules_line(const json& assessment) {
  std::vector<std::string> failed, warned;
  std::string first;
  for (const char* verdict : {"FAIL", "WARN"})
    for (const json& rule : assessment.value("rules", json::array())) {
      if (text(rule, "verdict") != verdict) continue;
      (std::string(verdict) == "FAIL" ? failed : warned).push_back(text(rule, "rule"));
      if (first.empty()) first = text(rule, "text");
    }
  if (first.empty()) return "Failed rules: none.\n";
  auto joined = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out.empty() ? std::string("none") : out;
  };
  return fmt::format("Failed rules: FAIL {}; WARN {}. First: {}.\n", joined(failed), joined(warned), first);
}

std::string render_summary(const json& assessment) {
  if (!assessment.is_object() || !assessment.contains("overall")) return "";
  std::string node = fmt::format("this node's {} GPU{}", number(assessment, "gpus"), number(assessment, "gpus") == 1 ? "" : "s");
  if (assessment.contains("target_gpus")) {
    const json& target = assessment["target_gpus"];
    node = fmt::format("{} x {} (GPU figures {})", number(target, "count"), text(target, "description"), gpu_table_label);
  }
  std::string out = fmt::format("Verdict for {} on {}: {}.\n", text(assessment, "profile"), node,
                                text(assessment["overall"], "text"));
  if (assessment.contains("target_gpus") && assessment["target_gpus"].contains("step_from_datasheet_peak"))
    out += fmt::format("  ({})\n", text(assessment["target_gpus"], "step_from_datasheet_peak"));
  for (const json& resource : assessment.value("resources", json::array())) {
    const std::string basis = resource.contains("capacity") ? text(resource["capacity"], "basis") : "";
    if (basis.rfind("upper bound", 0) == 0) out += fmt::format("  ({}: {})\n", text(resource, "resource"), basis);
  }
  const std::string limiting = text(assessment["bottleneck"], "text");
  out += fmt::format("Limiting resource: {}{}.\n", limiting,
                     assessment.contains("target_gpus") ? " [GPU side " + std::string(gpu_table_label) + "]" : "");
  out += failed_rules_line(assessment);
  const json cost = assessment.value("cost", json());
  if (cost.is_null())
    out += "Cost of one effective run: not computed (give --price-per-hour, the node's price per hour).\n";
  else if (cost.contains("not_judged"))
    out += fmt::format("Cost of one effective run: not computed ({}).\n", text(cost, "not_judged"));
  else
    out += fmt::format("Cost of one effective run: {:.2f} ({:.2f}/h x {:.2f} h predicted{}).\n", number(cost, "run_cost"),
                       number(cost, "price_per_hour"), number(cost, "predicted_hours"),
                       cost.contains("basis") ? ", GPU side " + std::string(gpu_table_label) : "");
  return out;
}

// Every field under its JSON name (profile_fields.hpp), and the figures derived from them beside
// the fields they come from; flops_per_sample is the given or derived figure.
json profile_to_json(const Profile& p) {
  json out = profile_fields_json(p);
  out["path"] = p.source_path;
  const ProfileField& flops = profile_field(FieldId::flops_per_sample);
  out[std::string(flops.section)][std::string(flops.json_name())] = p.flops_per_sample();
  out["model"]["model_state_bytes"] = p.model_state_bytes();
  out["model"]["gradient_bytes"] = p.gradient_bytes();
  out["training"]["samples_per_step_per_gpu"] = p.samples_per_step_per_gpu();
  out["training"]["target_run_samples"] = p.target_run_samples().value_or(0);
  return out;
}

std::string render_profile(const Profile& p) {
  std::string out =
      fmt::format("{} ({})\n  {}\n  file: {}\n", p.name, to_string(p.category), p.description, p.source_path);
  out += fmt::format(
      "  model: {:.3g} parameters ({:.3g} trainable), {}, optimizer {} ({:.0f} bytes per trainable parameter); "
      "{:.3g} FLOP per sample; model state {}; activations {} per sample\n",
      p.model.parameters, p.model.trainable_parameters, p.model.dtype, p.model.optimizer, p.model.bytes_per_parameter,
      p.flops_per_sample(), format_bytes(p.model_state_bytes()), format_bytes(p.model.activation_bytes_per_sample));
  out += fmt::format("  data: {} per sample ({} to the GPU), dataset {}, access {}, decode {}\n",
                     format_bytes(p.data.sample_bytes), format_bytes(p.data.device_bytes_per_sample),
                     format_bytes(p.data.dataset_bytes), to_string(p.data.access), to_string(p.data.decode));
  out += fmt::format(
      "  training: micro-batch {} x accumulation {} per GPU, model efficiency {:.0f}%, comm overlap {:.0f}%, "
      "sharding {}, target run {:.3g} samples\n",
      p.training.micro_batch_per_gpu, p.training.gradient_accumulation, p.training.model_efficiency * 100,
      p.training.comm_overlap * 100, to_string(p.training.sharding), p.target_run_samples().value_or(0));
  if (p.training.checkpoint_bytes > 0)
    out += fmt::format("  checkpoint: {} every {:.0f} s\n", format_bytes(p.training.checkpoint_bytes),
                       p.training.checkpoint_interval_s);
  const Thresholds& t = p.thresholds;
  out += fmt::format(
      "  thresholds: utilization >= {:.0f}% (FAIL < {:.0f}%), memory peak <= {:.0f}%, communication <= {:.0f}%, "
      "data wait <= {:.0f}%, host RAM >= {:.1f}x GPU memory, >= {:.1f} cores/GPU, GPU spread <= {:.0f}%\n",
      t.utilization_healthy * 100, t.utilization_min * 100, t.memory_peak_max * 100, t.comm_share_max * 100,
      t.data_wait_max * 100, t.host_ram_to_gpu_memory_min, t.cpu_cores_per_gpu_min, t.gpu_spread_max * 100);
  return out;
}

}  // namespace nodeaudit::score
