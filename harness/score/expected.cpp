#include "harness/score/expected.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/figure_info.hpp"
#include "harness/score/gpu_table.hpp"
#include "harness/score/label_selectors.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/score/result_view.hpp"

namespace nodeaudit::score {

using nlohmann::json;

namespace {

struct GpuModels {
  std::vector<const GpuModel*> by_index;  // nullptr: not in the table
  std::vector<std::string> names;
};

GpuModels models_of(const json& result, const ExpectSettings& settings, std::vector<std::string>& not_graded) {
  GpuModels out;
  if (!result.contains("env") || !result["env"].contains("gpus") || !result["env"]["gpus"].is_array()) return out;
  for (const json& gpu : result["env"]["gpus"]) {
    const std::string name = gpu.is_object() ? gpu.value("name", "") : "";
    const GpuModel* model = find_gpu_model_by_device(name);
    const bool has_references = model && (!model->gemm_tflops.empty() || model->hbm_gbps || model->h2d_gbps ||
                                          has_overrides_for_model(settings, model->name));
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
                 const SourcedValue& expected, std::string unit, const ResolvedLimits& limits) {
  Grade grade;
  grade.figure = std::move(figure);
  grade.gpu = std::move(gpu);
  grade.model = model.name;
  grade.measured = measured;
  grade.expected = expected.value;
  grade.unit = std::move(unit);
  grade.source = expected.source;
  grade.warn_below_pct = limits.warn.pct;
  grade.fail_below_pct = limits.fail.pct;
  grade.warn_source = limits.warn.source;
  grade.fail_source = limits.fail.source;
  grade.below_pct = (expected.value - measured) / expected.value * 100;
  grade.verdict = grade.below_pct > limits.fail.pct   ? Verdict::fail
                  : grade.below_pct > limits.warn.pct ? Verdict::warn
                                                      : Verdict::pass;
  return grade;
}

// What one graded figure is: its expect name, probe, metric, labels and unit.
struct GradedFigure {
  const char* expect_name;  // [expect.<name>]
  const char* probe;
  const char* metric;
  LabelFilter filter;
  std::string unit;
  const char* override_label;  // the label whose value keys an override ("dtype"), or "" for one value per model
};

namespace R = resource_figure;

GradedFigure graded(const char* expect_name, const ResourceFigure& figure, LabelFilter filter, const char* override_label) {
  return {expect_name, figure.probe, figure.metric, std::move(filter), figure_info(figure.probe, figure.metric).unit, override_label};
}

// One per-GPU figure: every matching metric of the probe, against the settings' value for its GPU
// model when one is given, else what `reference` says from the table.
template <typename Reference>
void grade_per_gpu(const json& result, const GpuModels& models, const GradedFigure& spec, const ExpectSettings& settings,
                   Reference reference, Grading& grading) {
  const ProbeState probe = probe_state(result, spec.probe);
  if (!probe.measured() || is_datasheet(*probe.probe)) return;
  const ResolvedLimits limits = resolve_limits(settings, spec.expect_name);
  for (const json* metric : select_metrics(*probe.probe, spec.metric, spec.filter)) {
    const std::string gpu = label_of(*metric, "gpu");
    const GpuModel* model = model_of_gpu(models, gpu);
    if (!model) continue;  // said once per GPU in not_graded
    LabelFilter shown = spec.filter;
    for (const auto& [key, value] : (*metric)["labels"].items())
      if (key != "gpu" && value.is_string()) shown[key] = value.template get<std::string>();
    const std::string figure = std::string(spec.probe) + " " + spec.metric + describe_filter(shown);
    const std::string key = *spec.override_label ? label_of(*metric, spec.override_label) : "";
    const SourcedValue* given = expected_override(settings, spec.expect_name, model->name, key);
    const std::optional<SourcedValue> expected = given ? std::optional<SourcedValue>(*given) : reference(*model, shown);
    if (!expected || !expected->measured || expected->derived) {
      grading.not_graded.push_back(fmt::format("{} on GPU {} ({}): {}", figure, gpu, model->name,
                                               expected && expected->derived
                                                   ? "the table's figure is derived from another measurement"
                                                   : "no published measurement for this model"));
      continue;
    }
    grading.grades.push_back(make_grade(figure, gpu, *model, metric_median(*metric), *expected, spec.unit, limits));
    grading.limits.emplace(spec.expect_name, limits);
  }
}

// The all-reduce at the largest size measured over the reference's GPU count, when every GPU is of
// one model: against the settings' value for that model when one is given (over the node's largest
// GPU count when the table has no curve), else the table curve's point nearest that size (within
// 1.5x, or not graded).
void grade_allreduce(const json& result, const GpuModels& models, const ExpectSettings& settings, Grading& grading) {
  const ResourceFigure& used = resource_figure::communication;
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured() || is_datasheet(*probe.probe) || models.by_index.empty()) return;
  const GpuModel* model = models.by_index.front();
  if (!model) return;
  const SourcedValue* given = expected_override(settings, "allreduce", model->name);
  const bool table_curve = model->allreduce && model->allreduce->measured && model->allreduce->gpus > 0;
  if (!given && !table_curve) return;
  for (const GpuModel* other : models.by_index)
    if (other != model) return grading.not_graded.push_back(fmt::format("{}: the node's GPUs are of several models", used.probe));
  int gpus = table_curve ? model->allreduce->gpus : 0;
  if (!table_curve)
    for (const json* metric : select_metrics(*probe.probe, used.metric, {}))
      gpus = std::max(gpus, std::atoi(label_of(*metric, "gpus").c_str()));
  const json* largest = nullptr;
  double largest_bytes = 0;
  for (const json* metric : select_metrics(*probe.probe, used.metric, {{"gpus", std::to_string(gpus)}})) {
    const double bytes = std::atof(label_of(*metric, "size").c_str());
    if (bytes > largest_bytes) largest = metric, largest_bytes = bytes;
  }
  if (!largest) {
    grading.not_graded.push_back(fmt::format("{}: no {} over {} GPUs (the reference's count)", used.probe, used.metric, gpus));
    return;
  }
  SourcedValue expected;
  if (given) {
    expected = *given;
    expected.source += fmt::format(", taken at the largest size measured ({:.0f} B)", largest_bytes);
  } else {
    const AllreducePoint point = model->allreduce->nearest(largest_bytes);
    if (std::fabs(std::log(point.bytes / largest_bytes)) > std::log(1.5)) {
      grading.not_graded.push_back(
          fmt::format("{}: largest size measured {:.0f} B has no reference within 1.5x", used.probe, largest_bytes));
      return;
    }
    expected = {point.busbw_gbps, fmt::format("{} at {:.0f} B", model->allreduce->source, point.bytes), true};
  }
  const ResolvedLimits limits = resolve_limits(settings, "allreduce");
  grading.grades.push_back(make_grade(fmt::format("{} {} [gpus={}, size={:.0f}]", used.probe, used.metric, gpus, largest_bytes),
                                      "node", *model, metric_median(*largest), expected, figure_info(used.probe, used.metric).unit,
                                      limits));
  grading.limits.emplace("allreduce", limits);
}

}  // namespace

Grading grade_expected(const json& result, const ExpectSettings& settings) {
  Grading grading;
  const GpuModels models = models_of(result, settings, grading.not_graded);
  grade_per_gpu(
      result, models, graded("gemm", R::compute, {}, "dtype"), settings,
      [](const GpuModel& m, const LabelFilter& labels) -> std::optional<SourcedValue> {
        const auto it = labels.find("dtype");
        if (it == labels.end()) return std::nullopt;
        const auto rate = m.gemm_tflops.find(it->second);
        return rate == m.gemm_tflops.end() ? std::nullopt : std::optional<SourcedValue>(rate->second);
      },
      grading);
  grade_per_gpu(
      result, models, graded("memory_copy", R::gpu_memory_bandwidth, label_selector::copy_kernel, ""), settings,
      [](const GpuModel& m, const LabelFilter&) { return m.hbm_gbps; }, grading);
  // nvbandwidth copies to one GPU at a time: the single-GPU figure is the one to compare.
  grade_per_gpu(
      result, models, graded("h2d_pinned", R::host_to_device, label_selector::pinned_one_gpu_at_a_time, ""), settings,
      [](const GpuModel& m, const LabelFilter&) { return m.h2d_gbps; }, grading);
  grade_allreduce(result, models, settings, grading);
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
                      {"warn_source", g.warn_source},
                      {"fail_source", g.fail_source},
                      {"verdict", to_string(g.verdict)},
                      {"source", g.source}});
  json limits = json::object();
  for (const auto& [figure, limit] : grading.limits)
    limits[figure] = {{"warn_below_pct", limit.warn.pct},
                      {"warn_source", limit.warn.source},
                      {"fail_below_pct", limit.fail.pct},
                      {"fail_source", limit.fail.source}};
  return {{"grades", grades}, {"not_graded", grading.not_graded}, {"limits", limits}};
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
  const std::string limits_from =
      worst.warn_source == worst.fail_source
          ? "limits from " + worst.warn_source
          : fmt::format("WARN limit from {}, FAIL limit from {}", worst.warn_source, worst.fail_source);
  rule.text = fmt::format(
      "expected_values: {} figures graded against their expected values, {} below their warn limit, {} past their "
      "fail limit; furthest: {}{} {:.4g} {} vs {:.4g} expected for {} ({:+.1f}%; WARN past -{:.4g}%, FAIL past "
      "-{:.4g}%; {})",
      grading.grades.size(), warned + failed, failed, worst.figure, where, worst.measured, worst.unit, worst.expected,
      worst.model, -worst.below_pct, worst.warn_below_pct, worst.fail_below_pct, limits_from);
  return rule;
}

}  // namespace nodeaudit::score
