#include "harness/score/target_gpus.hpp"

#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/figure_info.hpp"
#include "harness/core/input_file.hpp"
#include "harness/score/gpu_table_text.hpp"
#include "harness/score/label_selectors.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/score/result_view.hpp"
#include "harness/score/toml_section.hpp"

namespace nodeaudit::score {

using nlohmann::json;
namespace R = resource_figure;

namespace {

std::string count_range(int max = max_target_gpus) { return fmt::format("1 to {}", max); }

std::string how_to_write() {
  return fmt::format("write MODELxCOUNT with a model of the table ({}) and a count from 1 to its GPUs per node (8; "
                     "10 for l40s), e.g. h100x8; or a FILE.toml for a GPU the table lacks (profiles/README.md, "
                     "\"Target GPUs\")",
                     known_gpu_models());
}

bool names_a_file(const std::string& spec) {
  return spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".toml") == 0;
}

const std::vector<std::string> table_dtypes{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

std::map<std::string, SourcedValue> read_gemm_rates(detail::Section& top, const std::string& path,
                                                    const std::string& source, bool measured) {
  const toml::node* node = top.raw("gemm_tflops");
  if (!node) top.fail_here("missing required field 'gemm_tflops' (a table: dtype = TFLOP/s, e.g. bf16 = 790)");
  if (!node->is_table()) top.fail(*node, "'gemm_tflops' must be a table ([gemm_tflops] with bf16 = 790, ...)");
  detail::Section rates(*node->as_table(), "gemm_tflops", path);
  std::map<std::string, SourcedValue> out;
  for (const std::string& dtype : table_dtypes)
    if (auto rate = rates.number(dtype, detail::Bound::positive)) out[dtype] = {*rate, source, measured};
  rates.finish();
  if (out.empty()) rates.fail_here("[gemm_tflops] gives no rate; give at least one of fp64, fp32, tf32, fp16, bf16, fp8");
  return out;
}

// A metric entry as the probe would record it, with the unit its declaration gives.
json one_metric(const ResourceFigure& figure, double value, json labels, const SourcedValue& from) {
  return {{"name", figure.metric},        {"unit", figure_info(figure.probe, figure.metric).unit},
          {"labels", labels},    {"median", value},
          {"samples", {value}},  {"source", from.label()}};
}

json datasheet_probe(const std::string& id, const TargetGpus& target, json metrics) {
  return {{"id", id},
          {"status", "ok"},
          {"datasheet", {{"target", target.spec}, {"source", target.file.empty() ? "the GPU table" : target.file}}},
          {"metrics", std::move(metrics)}};
}

json gpu_side_probes(const TargetGpus& target) {
  const GpuModel& m = target.model;
  const json gpu0{{"gpu", "0"}};
  json probes = json::array();
  json gemm = json::array();
  for (const std::string& dtype : table_dtypes)
    if (auto rate = m.gemm_rate(dtype))
      gemm.push_back(one_metric(R::compute, rate->value, {{"dtype", dtype}, {"gpu", "0"}}, *rate));
  probes.push_back(datasheet_probe(R::compute.probe, target, gemm));
  if (m.memory_bytes)
    probes.push_back(datasheet_probe(R::gpu_memory_capacity.probe, target,
                                     {one_metric(R::gpu_memory_capacity, m.memory_bytes->value, gpu0, *m.memory_bytes)}));
  if (auto bandwidth = m.memory_bandwidth())
    probes.push_back(
        datasheet_probe(R::gpu_memory_bandwidth.probe, target,
                        {one_metric(R::gpu_memory_bandwidth, bandwidth->value,
                                    label_selector::with_label(label_selector::copy_kernel, "gpu", "0"), *bandwidth)}));
  if (m.h2d_gbps) {
    // Published per-GPU copies run one GPU at a time; each GPU of an HGX board has its own x16 link,
    // so the per-GPU figure stands for all GPUs copying at once (an assumption, said in the source).
    SourcedValue all_at_once = *m.h2d_gbps;
    all_at_once.source += "; measured one GPU at a time and taken for all GPUs copying at once: an upper bound "
                          "(HGX boards put two GPUs behind one PCIe switch uplink)";
    probes.push_back(datasheet_probe(
        R::host_to_device.probe, target,
        {one_metric(R::host_to_device, all_at_once.value,
                    label_selector::with_label(label_selector::pinned_all_gpus_at_once, "gpu", "0"), all_at_once)}));
  }
  if (m.allreduce && target.count > 1) {
    json busbw = json::array();
    const SourcedValue from{0, m.allreduce->source + (m.allreduce->gpus > 0 && m.allreduce->gpus != target.count
                                                          ? fmt::format(" (measured over {} GPUs; used for {})",
                                                                        m.allreduce->gpus, target.count)
                                                          : ""),
                            m.allreduce->measured};
    for (const AllreducePoint& point : m.allreduce->points)
      busbw.push_back(one_metric(R::communication, point.busbw_gbps,
                                 {{"size", point.bytes > 0 ? fmt::format("{:.0f}", point.bytes) : std::string("any")},
                                  {"gpus", std::to_string(target.count)}},
                                 from));
    probes.push_back(datasheet_probe(R::communication.probe, target, busbw));
  }
  return probes;
}

bool replaced(const std::string& id) {
  for (const std::string& probe : target_replaced_probes())
    if (probe == id) return true;
  return false;
}

int measured_gpu_count(const json& result) {
  if (!result.is_object() || !result.contains("env") || !result["env"].contains("gpus") ||
      !result["env"]["gpus"].is_array())
    return 0;
  return static_cast<int>(result["env"]["gpus"].size());
}

}  // namespace

const std::vector<std::string>& target_replaced_probes() {
  static const std::vector<std::string> ids{R::compute.probe, R::gpu_memory_capacity.probe, R::gpu_memory_bandwidth.probe,
                                            R::host_to_device.probe, R::communication.probe};
  return ids;
}

TargetGpus parse_target_gpus(const std::string& spec) {
  if (names_a_file(spec)) {
    TargetGpus target = parse_target_gpus_toml(read_input_file(spec, "--target-gpus " + spec, max_profile_bytes), spec);
    target.spec = spec;
    return target;
  }
  static const std::regex shape(R"(^(.+)x([0-9]+)$)", std::regex::icase);
  std::smatch match;
  if (!std::regex_match(spec, match, shape)) throw UsageError("--target-gpus " + spec, how_to_write());
  const GpuModel* model = find_gpu_model(match[1].str());
  if (!model)
    throw UsageError("--target-gpus " + spec,
                     fmt::format("unknown GPU model '{}'; known: {}; or a FILE.toml", match[1].str(), known_gpu_models()));
  const std::string digits = match[2].str();
  const int count = digits.size() > 6 ? max_target_gpus + 1 : std::stoi(digits);
  if (count < 1 || count > model->max_per_node)
    throw UsageError("--target-gpus " + spec,
                     fmt::format("GPU count {} is outside {} (GPUs of one {} node; its all-reduce figures were measured "
                                 "within one node)",
                                 digits, count_range(model->max_per_node), model->name));
  if (model->gemm_tflops.empty() && !model->h2d_gbps)
    throw UsageError("--target-gpus " + spec,
                     fmt::format("the table holds only datasheet peaks for {} (for percent of peak), not the figures a "
                                 "target needs; use one of h100, h200, a100-80gb, l40s or a FILE.toml",
                                 model->name));
  return {spec, *model, count, ""};
}

TargetGpus parse_target_gpus_toml(const std::string& toml_text, const std::string& path) {
  const toml::table root = detail::parse_toml(toml_text, path);
  using detail::Bound;
  detail::Section top(root, "", path);
  TargetGpus target;
  target.file = path;
  GpuModel& m = target.model;
  m.name = top.require(top.text("name"), "name");
  m.description = top.text("description").value_or(m.name);
  const std::string source = top.require(top.text("source"), "source");
  if (source.empty()) top.fail(*top.raw("source"), "'source' is empty; say where the figures come from");
  const toml::node* measured_node = top.raw("measured");
  if (measured_node && !measured_node->is_boolean())
    top.fail(*measured_node, "'measured' must be true or false (are the figures measurements?)");
  const bool measured = measured_node && measured_node->value_or(false);
  const toml::node* count = top.raw("count");
  if (!count) top.fail_here("missing required field 'count' (GPUs of the node, " + count_range() + ")");
  const std::optional<std::int64_t> value = count->value<std::int64_t>();
  if (!count->is_integer() || !value || *value < 1 || *value > max_target_gpus)
    top.fail(*count, fmt::format("'count' must be an integer from {} (GPUs of the node)", count_range()));
  target.count = static_cast<int>(*value);
  m.max_per_node = max_target_gpus;
  m.gemm_tflops = read_gemm_rates(top, path, source, measured);
  m.memory_bytes = SourcedValue{top.require(top.size("memory", Bound::positive), "memory"), source, false};
  m.hbm_gbps = SourcedValue{top.require(top.number("memory_bandwidth_gbps", Bound::positive), "memory_bandwidth_gbps"),
                            source, measured};
  m.h2d_gbps = SourcedValue{top.require(top.number("h2d_gbps", Bound::positive), "h2d_gbps"), source, measured};
  AllreduceCurve curve;
  curve.points.push_back(
      {0, top.require(top.number("allreduce_busbw_gbps", Bound::positive), "allreduce_busbw_gbps")});
  curve.source = source;
  curve.measured = measured;
  m.allreduce = curve;
  top.finish();
  return target;
}

json apply_target(const json& result, const TargetGpus& target) {
  json out = result.is_object() ? result : json::object();
  json gpus = json::array();
  for (int i = 0; i < target.count; ++i) {
    json gpu{{"index", i}, {"name", target.model.description}, {"datasheet", true}};
    if (target.model.memory_bytes) gpu["memory_total_bytes"] = target.model.memory_bytes->value;
    gpus.push_back(gpu);
  }
  out["env"]["gpus"] = gpus;
  out["env"]["gpu_status"] = fmt::format("{} x {} from the GPU table, not measured on this node", target.count,
                                         target.model.description);
  json probes = json::array();
  if (out.contains("probes") && out["probes"].is_array())
    for (json probe : out["probes"]) {
      const std::string id = probe.value("id", "");
      if (replaced(id)) continue;
      // A rate shared among this node's own GPUs does not hold for the target's; the per-core
      // (per-worker) figure is shared among the target's GPUs instead.
      const std::string per_gpu = id == R::native_decode.probe        ? R::native_decode.metric
                                  : id == R::framework_loader.probe ? R::framework_loader.metric
                                                                    : "";
      if (!per_gpu.empty() && probe.contains("metrics") && probe["metrics"].is_array()) {
        json kept = json::array();
        for (const json& metric : probe["metrics"])
          if (metric.value("name", "") != per_gpu) kept.push_back(metric);
        probe["metrics"] = kept;
      }
      probes.push_back(std::move(probe));
    }
  for (json& probe : gpu_side_probes(target)) probes.push_back(std::move(probe));
  out["probes"] = probes;
  return out;
}

void check_target_serves(const TargetGpus& target, const Profile& profile) {
  if (!target.model.gemm_rate(profile.model.dtype))
    throw UsageError("--target-gpus " + target.spec,
                     fmt::format("{} has no {} GEMM rate, the dtype profile {} computes in{}", target.model.name,
                                 profile.model.dtype, profile.name,
                                 target.file.empty() ? "" : "; add it to [gemm_tflops] in " + target.file));
}

json target_json(const TargetGpus& target, const json& result) {
  const GpuModel& m = target.model;
  json out{{"spec", target.spec},
           {"model", m.name},
           {"description", m.description},
           {"count", target.count},
           {"label", gpu_table_label},
           {"table", target.file.empty() ? "the built-in GPU table (`nodeaudit profiles gpus " + m.name + "`)" : target.file},
           {"figures", gpu_model_figures(m)},
           {"not_applicable", {"uniformity: the target's GPUs come from the GPU table, nothing per GPU to compare"}}};
  const int own = measured_gpu_count(result);
  if (own > 0)
    out["own_gpus"] = fmt::format("the node's own {} GPU{} (env.gpus) {} not used: judged for {} x {}", own,
                                  own == 1 ? "" : "s", own == 1 ? "was" : "were", target.count, m.description);
  return out;
}

}  // namespace nodeaudit::score
