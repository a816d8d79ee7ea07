#include "pipeline/step/predicted.hpp"

#include <fmt/format.h>

#include "harness/score/label_selectors.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::pipeline {

using nlohmann::json;
// The series the scorer selects, so the figures written here are the ones it reads.
namespace label_selector = score::label_selector;

namespace {

json single_metric(const std::string& name, const std::string& unit, double value, json labels) {
  return {{"name", name}, {"unit", unit}, {"labels", std::move(labels)}, {"median", value}, {"samples", {value}}};
}

json storage_probe(const score::Profile& profile, const NodeFigures& figures) {
  if (profile.data.access == score::AccessPattern::sequential_shards) {
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

}  // namespace

json figures_as_result(const score::Profile& profile, const NodeFigures& figures) {
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
    probes.push_back({{"id", "host.decode"},
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

Prediction predict_utilization(const score::Profile& profile, const NodeFigures& figures) {
  Prediction out;
  if (figures.gemm_tflops <= 0 || figures.loader_samples_per_s <= 0) {
    out.why_not = "no compute rate or loader rate to score";
    return out;
  }
  const json assessment = score::assess(profile, figures_as_result(profile, figures), score::CostOptions{});
  const json& step = assessment.at("step");
  if (step.contains("not_judged")) {
    out.why_not = "the scorer did not predict the step: " + step["not_judged"].get<std::string>();
    return out;
  }
  out.utilization_pct = step.at("gpu_utilization").get<double>() * 100;
  return out;
}

}  // namespace nodeaudit::pipeline
