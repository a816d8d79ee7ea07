#include "expected.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpu_table.hpp"
#include "result_view.hpp"

namespace nodeaudit::score {

using nlohmann::json;

namespace {

// How far below its reference a figure may fall. 10% is gpu-fryer's rule for a GPU against the best
// of its node, and about what software versions move a MAMF or nccl-tests figure; FAIL past 20%
// for on-chip figures (GEMM, device memory), past 25% for figures that also depend on the platform
// (PCIe root ports, NVSwitch firmware, NCCL version).
struct Thresholds {
  double warn, fail;
};
constexpr Thresholds on_chip{10, 20};
constexpr Thresholds platform{10, 25};

struct GpuModels {
  std::vector<const GpuModel*> by_index;  // nullptr: not in the table
  std::vector<std::string> names;
};

GpuModels models_of(const json& result, std::vector<std::string>& not_graded) {
  GpuModels out;
  if (!result.contains("env") || !result["env"].contains("gpus") || !result["env"]["gpus"].is_array()) return out;
  for (const json& gpu : result["env"]["gpus"]) {
    const std::string name = gpu.is_object() ? gpu.value("name", "") : "";
    const GpuModel* model = find_gpu_model_by_device(name);
    const bool has_references = model && (!model->gemm_tflops.empty() || model->hbm_gbps || model->h2d_gbps);
    if (!has_references)
      not_graded.push_back(fmt::format("GPU {} ({}): no reference for this model", out.by_index.size(),
                                       name.empty() ? "unnamed" : name));
    out.by_index.push_back(has_references ? model : nullptr);
    out.names.push_back(name);
  }
  return out;
}

const GpuModel* model_of_gpu(const GpuModels& models, const std::string& gpu) {
  try {
    const std::size_t index = std::stoul(gpu);
    return index < models.by_index.size() ? models.by_index[index] : nullptr;
  } catch (const std::exception&) {
    return nullptr;
  }
}

Grade make_grade(std::string figure, std::string gpu, const GpuModel& model, double measured,
                 const SourcedValue& expected, std::string unit, Thresholds limits) {
  Grade grade{std::move(figure), std::move(gpu), model.name, measured, expected.value, std::move(unit),
              expected.source, 0, limits.warn, limits.fail, Verdict::pass};
  grade.below_pct = (expected.value - measured) / expected.value * 100;
  grade.verdict = grade.below_pct > limits.fail ? Verdict::fail
                  : grade.below_pct > limits.warn ? Verdict::warn
                                                  : Verdict::pass;
  return grade;
}

// One per-GPU figure: every matching metric of `probe`, against what `reference` says for its GPU.
template <typename Reference>
void grade_per_gpu(const json& result, const GpuModels& models, const std::string& probe_id, const std::string& name,
                   const LabelFilter& filter, const std::string& unit, Thresholds limits, Reference reference,
                   Grading& grading) {
  const ProbeState probe = probe_state(result, probe_id);
  if (!probe.measured() || is_datasheet(*probe.probe)) return;
  for (const json* metric : select_metrics(*probe.probe, name, filter)) {
    const std::string gpu = label_of(*metric, "gpu");
    const GpuModel* model = model_of_gpu(models, gpu);
    if (!model) continue;  // said once per GPU in not_graded
    LabelFilter shown = filter;
    for (const auto& [key, value] : (*metric)["labels"].items())
      if (key != "gpu" && value.is_string()) shown[key] = value.template get<std::string>();
    const std::string figure = probe_id + " " + name + describe_filter(shown);
    const std::optional<SourcedValue> expected = reference(*model, shown);
    if (!expected || !expected->measured || expected->derived) {
      grading.not_graded.push_back(fmt::format("{} on GPU {} ({}): {}", figure, gpu, model->name,
                                               expected && expected->derived
                                                   ? "the table's figure is derived from another measurement"
                                                   : "no published measurement for this model"));
      continue;
    }
    grading.grades.push_back(make_grade(figure, gpu, *model, metric_median(*metric), *expected, unit, limits));
  }
}

// The all-reduce at the largest size measured over the curve's GPU count, against the curve's
// point nearest that size (within 1.5x, or not graded), when every GPU is of one model.
void grade_allreduce(const json& result, const GpuModels& models, Grading& grading) {
  const ProbeState probe = probe_state(result, "comm.allreduce");
  if (!probe.measured() || is_datasheet(*probe.probe) || models.by_index.empty()) return;
  const GpuModel* model = models.by_index.front();
  if (!model || !model->allreduce || !model->allreduce->measured) return;
  for (const GpuModel* other : models.by_index)
    if (other != model) return grading.not_graded.push_back("comm.allreduce: the node's GPUs are of several models");
  const std::string gpus = std::to_string(model->allreduce->gpus);
  const json* largest = nullptr;
  double largest_bytes = 0;
  for (const json* metric : select_metrics(*probe.probe, "busbw", {{"gpus", gpus}})) {
    const double bytes = std::atof(label_of(*metric, "size").c_str());
    if (bytes > largest_bytes) largest = metric, largest_bytes = bytes;
  }
  if (!largest) {
    grading.not_graded.push_back(fmt::format("comm.allreduce: no busbw over {} GPUs (the reference's count)", gpus));
    return;
  }
  const AllreducePoint point = model->allreduce->nearest(largest_bytes);
  if (std::fabs(std::log(point.bytes / largest_bytes)) > std::log(1.5)) {
    grading.not_graded.push_back(
        fmt::format("comm.allreduce: largest size measured {:.0f} B has no reference within 1.5x", largest_bytes));
    return;
  }
  const SourcedValue expected{point.busbw_gbps, fmt::format("{} at {:.0f} B", model->allreduce->source, point.bytes),
                              true};
  grading.grades.push_back(make_grade(fmt::format("comm.allreduce busbw [gpus={}, size={:.0f}]", gpus, largest_bytes),
                                      "node", *model, metric_median(*largest), expected, "GB/s", platform));
}

}  // namespace

Grading grade_expected(const json& result) {
  Grading grading;
  const GpuModels models = models_of(result, grading.not_graded);
  grade_per_gpu(result, models, "gpu.gemm", "tflops", {}, "TFLOP/s", on_chip,
                [](const GpuModel& m, const LabelFilter& labels) -> std::optional<SourcedValue> {
                  const auto it = labels.find("dtype");
                  if (it == labels.end()) return std::nullopt;
                  const auto rate = m.gemm_tflops.find(it->second);
                  return rate == m.gemm_tflops.end() ? std::nullopt : std::optional<SourcedValue>(rate->second);
                },
                grading);
  grade_per_gpu(result, models, "gpu.memory-bandwidth", "bandwidth", {{"kernel", "copy"}}, "GB/s", on_chip,
                [](const GpuModel& m, const LabelFilter&) { return m.hbm_gbps; }, grading);
  // nvbandwidth copies to one GPU at a time: the single-GPU figure is the one to compare.
  grade_per_gpu(result, models, "gpu.pcie", "h2d_bandwidth", {{"memory", "pinned"}, {"mode", "single"}}, "GB/s",
                platform, [](const GpuModel& m, const LabelFilter&) { return m.h2d_gbps; }, grading);
  grade_allreduce(result, models, grading);
  return grading;
}

json to_json(const Grading& grading) {
  json grades = json::array();
  for (const Grade& g : grading.grades)
    grades.push_back({{"figure", g.figure},
                      {"gpu", g.gpu},
                      {"model", g.model},
                      {"measured", g.measured},
                      {"expected", g.expected},
                      {"unit", g.unit},
                      {"below_pct", g.below_pct},
                      {"warn_below_pct", g.warn_below_pct},
                      {"fail_below_pct", g.fail_below_pct},
                      {"verdict", to_string(g.verdict)},
                      {"source", g.source}});
  return {{"grades", grades}, {"not_graded", grading.not_graded}};
}

std::optional<Rule> expected_values_rule(const Grading& grading) {
  if (grading.grades.empty()) return std::nullopt;
  const Grade& worst = *std::max_element(grading.grades.begin(), grading.grades.end(),
                                         [](const Grade& a, const Grade& b) { return a.below_pct < b.below_pct; });
  int failed = 0, warned = 0;
  for (const Grade& g : grading.grades) {
    failed += g.verdict == Verdict::fail;
    warned += g.verdict == Verdict::warn;
  }
  Rule rule;
  rule.name = "expected_values";
  rule.verdict = failed ? Verdict::fail : warned ? Verdict::warn : Verdict::pass;
  rule.figure = worst.below_pct;
  rule.threshold = worst.warn_below_pct;
  rule.fail_threshold = worst.fail_below_pct;
  rule.unit = "% below expected";
  const std::string where = worst.gpu == "node" ? "" : fmt::format(" on GPU {}", worst.gpu);
  rule.text = fmt::format(
      "expected_values: {} figures graded against published measurements, {} below their warn limit, {} past their "
      "fail limit; furthest: {}{} {:.4g} {} vs {:.4g} expected for {} ({:+.1f}%; WARN past -{:.0f}%, FAIL past "
      "-{:.0f}%)",
      grading.grades.size(), warned + failed, failed, worst.figure, where, worst.measured,
      worst.unit, worst.expected, worst.model, -worst.below_pct, worst.warn_below_pct, worst.fail_below_pct);
  return rule;
}

}  // namespace nodeaudit::score
