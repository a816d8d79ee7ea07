#include "harness/score/step_prediction.hpp"

#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "harness/core/result.hpp"
#include "harness/score/label_selectors.hpp"
#include "harness/score/score.hpp"
#include "harness/score/step_demand.hpp"

namespace nodeaudit::score {

using nlohmann::json;

namespace {

// The series the scorer selects, so the figures written here are the ones it reads.
namespace label_selector = score::label_selector;

// The figures of the node a step ran on, as the probe recorded them (info.prediction_inputs).
struct StepNodeFigures {
  double gemm_tflops = 0;  // per GPU: the rate that gives back the step's compute time
  int gpus = 1;
  // Per GPU: the probe ran one GPU's loader; with several GPUs each GPU's process runs its own
  // loader workers, so the node's storage figure is gpus x this (an assumption, labelled there).
  double loader_samples_per_s = 0;             // reading only
  std::optional<double> decode_samples_per_s;  // decode + augmentation, when the loader decodes
  bool framework_loader = false;               // the decode figure is a PyTorch DataLoader's
  std::string cache = "page";
  double sample_bytes = 0;
  double busbw_gbps = 0;
  double gradient_bytes = 0;
};

StepNodeFigures figures_of(const json& inputs) {
  StepNodeFigures f;
  f.gemm_tflops = inputs.value("gemm_tflops", 0.0);
  f.gpus = inputs.value("gpus", 1);
  f.loader_samples_per_s = inputs.value("loader_read_samples_per_s_per_gpu", 0.0);
  const double decode = inputs.value("decode_samples_per_s_per_gpu", 0.0);
  if (decode > 0) f.decode_samples_per_s = decode;
  f.framework_loader = inputs.value("framework_loader", false);
  f.cache = inputs.value("cache", std::string("page"));
  f.sample_bytes = inputs.value("sample_bytes", 0.0);
  f.busbw_gbps = inputs.value("busbw_gbps", 0.0);
  f.gradient_bytes = inputs.value("gradient_bytes", 0.0);
  return f;
}

json single_metric(const std::string& name, const std::string& unit, double value, json labels) {
  return {{"name", name}, {"unit", unit}, {"labels", std::move(labels)}, {"median", value}, {"samples", {value}}};
}

json storage_probe(const Profile& profile, const StepNodeFigures& figures) {
  if (profile.data.access == AccessPattern::sequential_shards) {
    const double gbps = figures.loader_samples_per_s * figures.gpus * figures.sample_bytes / 1e9;
    return {{"id", "storage.read"},
            {"status", "ok"},
            {"metrics",
             {single_metric("bandwidth", "GB/s", gbps,
                            label_selector::with_label(label_selector::sequential_read, "cache", figures.cache))}}};
  }
  return {{"id", "storage.dataset"},
          {"status", "ok"},
          {"metrics",
           {single_metric("samples_per_s", "samples/s", figures.loader_samples_per_s * figures.gpus,
                          {{"cache", figures.cache}})}}};
}

// A result document (results/SCHEMA.md) with the step's GPUs, gpu.gemm, storage.dataset or
// storage.read, and host.decode / host.dataloader / comm.allreduce when the step had them.
json figures_as_result(const Profile& profile, const StepNodeFigures& figures) {
  json gemm_metrics = json::array(), gpus = json::array();
  for (int i = 0; i < figures.gpus; ++i) {
    gemm_metrics.push_back(single_metric("tflops", "TFLOP/s", figures.gemm_tflops,
                                         {{"dtype", profile.model.dtype}, {"gpu", std::to_string(i)}}));
    gpus.push_back({{"index", i}});
  }
  json probes{{{"id", "gpu.gemm"}, {"status", "ok"}, {"metrics", gemm_metrics}}, storage_probe(profile, figures)};
  if (figures.decode_samples_per_s && figures.framework_loader)
    probes.push_back({{"id", "host.dataloader"},
                      {"status", "ok"},
                      {"metrics",
                       {single_metric("samples_per_s_per_gpu", "samples/s", *figures.decode_samples_per_s,
                                      label_selector::pil_decoder)}}});
  else if (figures.decode_samples_per_s)
    probes.push_back(
        {{"id", "host.decode"},
         {"status", "ok"},
         {"metrics",
          {single_metric("images_per_s_per_gpu", "images/s", *figures.decode_samples_per_s,
                         label_selector::full_decode_stage)}}});
  if (figures.busbw_gbps > 0 && figures.gpus > 1)
    probes.push_back({{"id", "comm.allreduce"},
                      {"status", "ok"},
                      {"metrics",
                       {single_metric("busbw", "GB/s", figures.busbw_gbps,
                                      {{"size", fmt::format("{:.0f}", figures.gradient_bytes)},
                                       {"gpus", std::to_string(figures.gpus)}})}}});
  return {{"env", {{"gpus", gpus}}}, {"probes", probes}};
}

// The predicted utilization in percent, or why there is none.
std::optional<double> predicted_utilization_pct(const json& inputs, std::string& why_not) {
  const StepNodeFigures figures = figures_of(inputs);
  if (figures.gemm_tflops <= 0 || figures.loader_samples_per_s <= 0) {
    why_not = "no compute rate or loader rate to score";
    return std::nullopt;
  }
  Profile profile = profile_of_demand(StepDemand::from_json(inputs.at("step_demand")));
  if (figures.framework_loader) profile.data.loader = LoaderKind::pytorch;
  const json assessment = assess(profile, figures_as_result(profile, figures), CostOptions{});
  const json& step = assessment.at("step");
  if (step.contains("not_judged")) {
    why_not = "the scorer did not predict the step: " + step["not_judged"].get<std::string>();
    return std::nullopt;
  }
  return step.at("gpu_utilization").get<double>() * 100;
}

std::optional<double> measured_au_pct(const json& entry) {
  for (const json& metric : entry.value("metrics", json::array()))
    if (metric.value("name", "") == "au" && metric.contains("median")) return metric["median"].get<double>();
  return std::nullopt;
}

}  // namespace

void add_step_prediction(json& entry) {
  if (!entry.contains("info") || !entry["info"].contains("prediction_inputs")) return;
  std::string why_not;
  const auto predicted = predicted_utilization_pct(entry["info"]["prediction_inputs"], why_not);
  if (!predicted) {
    entry["findings"].push_back(finding_to_json(
        {Severity::info, "pipeline.no_prediction", "predicted_utilization not recorded: " + why_not}));
    return;
  }
  entry["metrics"].push_back(
      metric_to_json(Metric{"predicted_utilization", unit::percent, Better::higher, {}, {*predicted}}));
  const auto au = measured_au_pct(entry);
  if (au && std::fabs(*predicted - *au) > 10)
    entry["findings"].push_back(finding_to_json(
        {Severity::warn, "pipeline.prediction_gap",
         fmt::format("measured AU {:.1f}% and the scorer's predicted utilization {:.1f}% are more than 10 points "
                     "apart: the balance model or a probe figure is wrong for this pipeline",
                     *au, *predicted)}));
}

}  // namespace nodeaudit::score
