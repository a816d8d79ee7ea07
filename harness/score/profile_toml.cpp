// TOML -> Profile: one reader per section, then the cross-field checks. Field meanings and defaults
// are documented in profiles/README.md; keep the two in step.
#include <fstream>
#include <sstream>

#include "harness/core/input_file.hpp"
#include "harness/score/expect_toml.hpp"
#include "harness/score/profile.hpp"
#include "harness/score/toml_section.hpp"

namespace nodeaudit::score {
namespace {

using detail::Bound;
using detail::Section;

const toml::table* subtable(Section& top, const toml::table& root, const std::string& key, bool required) {
  (void)root;
  const toml::node* node = top.raw(key);
  if (!node) {
    if (required) detail::fail_at(top.path(), {1, 1}, fmt::format("missing required section [{}]", key));
    return nullptr;
  }
  if (!node->is_table()) top.fail(*node, fmt::format("'{}' must be a table ([{}])", key, key));
  return node->as_table();
}

// A hundred times the largest models trained today: a larger count is a typo (1e308), and would
// carry the memory and time arithmetic past what a double holds.
constexpr double max_parameters = 1e15;
constexpr double max_bytes_per_parameter = 1024;

double default_bytes_per_parameter(const std::string& optimizer, double dtype_bytes) {
  if (optimizer == "adamw") return 16;  // 16-bit weights + grads, fp32 master, m, v (ZeRO paper, 16 bytes/param)
  if (optimizer == "sgd") return 12;    // 16-bit weights + grads, fp32 master, momentum
  return dtype_bytes;                   // none: weights only
}

void read_model(Section& s, ModelSpec& m) {
  m.parameters = s.require(s.number("parameters", Bound::positive, max_parameters), "parameters");
  m.dtype = s.choice("dtype", {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"}).value_or(m.dtype);
  m.optimizer = s.choice("optimizer", {"adamw", "sgd", "none"}).value_or(m.optimizer);
  m.trainable_parameters =
      s.number("trainable_parameters", Bound::non_negative, max_parameters).value_or(m.optimizer == "none" ? 0.0 : m.parameters);
  if (m.trainable_parameters > m.parameters)
    s.fail_here(
        fmt::format("trainable_parameters {} in [model] exceeds parameters {}", m.trainable_parameters, m.parameters));
  m.flops_per_sample = s.number("flops_per_sample", Bound::positive);
  m.tokens_per_sample = s.number("tokens_per_sample", Bound::positive, 1e12);
  m.flops_per_token_per_parameter = s.number("flops_per_token_per_parameter", Bound::positive, 1e6).value_or(6);
  if (!m.flops_per_sample && !m.tokens_per_sample)
    s.fail_here("missing required field 'flops_per_sample' or 'tokens_per_sample' in [model]");
  m.bytes_per_parameter = s.number("bytes_per_parameter", Bound::positive, max_bytes_per_parameter)
                              .value_or(default_bytes_per_parameter(m.optimizer, bytes_per_element(m.dtype)));
  m.gradient_bytes_per_parameter =
      s.number("gradient_bytes_per_parameter", Bound::positive, max_bytes_per_parameter).value_or(bytes_per_element(m.dtype));
  m.activation_bytes_per_sample = s.size("activation_bytes_per_sample", Bound::non_negative).value_or(0);
  m.memory_traffic_bytes_per_sample = s.size("memory_traffic_bytes_per_sample", Bound::non_negative).value_or(0);
  s.finish();
}

void read_distribution(Section& s, const toml::array& entries, DataSpec& d) {
  double share_sum = 0;
  for (const toml::node& entry : entries) {
    if (!entry.is_table())
      s.fail(entry, "each entry of 'sample_size_distribution' must be a table {size = ..., share = ...}");
    Section item(*entry.as_table(), "data.sample_size_distribution", s.path());
    SizeShare bucket;
    bucket.bytes = item.require(item.size("size", Bound::positive), "size");
    bucket.share = item.require(item.number("share", Bound::fraction), "share");
    item.finish();
    share_sum += bucket.share;
    d.sample_size_distribution.push_back(bucket);
  }
  if (d.sample_size_distribution.empty() || std::abs(share_sum - 1.0) > 0.01)
    s.fail(entries,
           fmt::format("the shares of 'sample_size_distribution' in [data] add up to {}; they must add up to 1",
                       share_sum));
  d.sample_bytes = 0;
  for (const auto& bucket : d.sample_size_distribution) d.sample_bytes += bucket.bytes * bucket.share;
}

void read_data(Section& s, DataSpec& d) {
  const auto sample = s.size("sample_size", Bound::positive);
  const toml::array* distribution = s.array("sample_size_distribution");
  if (sample && distribution) s.fail_here("[data] gives both 'sample_size' and 'sample_size_distribution'; give one");
  if (distribution)
    read_distribution(s, *distribution, d);
  else
    d.sample_bytes = s.require(sample, "sample_size");
  d.dataset_bytes = s.require(s.size("dataset_size", Bound::positive), "dataset_size");
  const auto access = s.require(s.choice("access", {"sequential-shards", "small-files", "random", "memmap"}), "access");
  d.access = access == "small-files" ? AccessPattern::small_files
             : access == "random"    ? AccessPattern::random
             : access == "memmap"    ? AccessPattern::memmap
                                     : AccessPattern::sequential_shards;
  d.decode = s.choice("decode", {"jpeg", "none"}).value_or("none") == "jpeg" ? DecodeKind::jpeg : DecodeKind::none;
  d.loader = s.choice("loader", {"pytorch", "native"}).value_or("pytorch") == "native" ? LoaderKind::native : LoaderKind::pytorch;
  d.device_bytes_per_sample = s.size("device_bytes_per_sample", Bound::non_negative).value_or(d.sample_bytes);
  s.finish();
}

void read_training(Section& s, TrainingSpec& t, const ModelSpec& model) {
  t.micro_batch_per_gpu = s.require(s.integer("micro_batch_per_gpu", 1), "micro_batch_per_gpu");
  t.gradient_accumulation = s.integer("gradient_accumulation", 1).value_or(1);
  t.model_efficiency = s.require(s.number("model_efficiency", Bound::fraction), "model_efficiency");
  if (t.model_efficiency == 0) s.fail_here("'model_efficiency' in [training] is 0; must be a fraction above 0");
  t.comm_overlap = s.number("comm_overlap", Bound::fraction).value_or(0);
  t.sharding = s.choice("sharding", {"none", "full"}).value_or("none") == "full" ? Sharding::full : Sharding::none;
  t.checkpoint_bytes = s.size("checkpoint_size", Bound::non_negative).value_or(0);
  t.checkpoint_interval_s = s.duration("checkpoint_interval").value_or(0);
  if (t.checkpoint_bytes > 0 && t.checkpoint_interval_s <= 0)
    s.fail_here("'checkpoint_size' in [training] needs a 'checkpoint_interval' above 0");
  t.target_samples = s.number("target_samples", Bound::positive);
  t.target_tokens = s.number("target_tokens", Bound::positive);
  if (!t.target_samples && !t.target_tokens)
    s.fail_here("missing required field 'target_samples' or 'target_tokens' in [training]");
  if (t.target_samples && t.target_tokens)
    s.fail_here("[training] gives both 'target_samples' and 'target_tokens'; give one");
  if (t.target_tokens && !model.tokens_per_sample)
    s.fail_here("'target_tokens' in [training] needs 'tokens_per_sample' in [model]");
  s.finish();
}

void read_thresholds(Section& s, Thresholds& t) {
  auto fraction = [&](const char* key, double& field) { field = s.number(key, Bound::fraction).value_or(field); };
  fraction("utilization_healthy", t.utilization_healthy);
  fraction("utilization_min", t.utilization_min);
  fraction("memory_peak_max", t.memory_peak_max);
  fraction("comm_share_max", t.comm_share_max);
  fraction("data_wait_max", t.data_wait_max);
  fraction("gpu_spread_max", t.gpu_spread_max);
  fraction("upgrade_utilization_min", t.upgrade_utilization_min);
  fraction("upgrade_memory_min", t.upgrade_memory_min);
  fraction("upgrade_wait_max", t.upgrade_wait_max);
  t.host_ram_to_gpu_memory_min =
      s.number("host_ram_to_gpu_memory_min", Bound::positive).value_or(t.host_ram_to_gpu_memory_min);
  t.cpu_cores_per_gpu_min = s.number("cpu_cores_per_gpu_min", Bound::positive).value_or(t.cpu_cores_per_gpu_min);
  t.step_time_max_s = s.duration("step_time_max");
  if (t.utilization_min > t.utilization_healthy)
    s.fail_here(fmt::format("'utilization_min' {} in [thresholds] is above 'utilization_healthy' {}", t.utilization_min,
                            t.utilization_healthy));
  s.finish();
}

Category parse_category(const std::string& text) {
  if (text == "memory-intensive") return Category::memory_intensive;
  if (text == "data-throughput-intensive") return Category::data_throughput_intensive;
  if (text == "latency-sensitive") return Category::latency_sensitive;
  return Category::compute_intensive;
}

}  // namespace

Profile parse_profile(const std::string& toml_text, const std::string& path) {
  const toml::table root = detail::parse_toml(toml_text, path);
  Profile profile;
  profile.source_path = path;
  Section top(root, "", path);
  profile.name = top.require(top.text("name"), "name");
  profile.description = top.require(top.text("description"), "description");
  profile.category =
      parse_category(top.require(top.choice("category", {"compute-intensive", "memory-intensive",
                                                         "data-throughput-intensive", "latency-sensitive"}),
                                 "category"));
  Section model(*subtable(top, root, "model", true), "model", path);
  read_model(model, profile.model);
  Section data(*subtable(top, root, "data", true), "data", path);
  read_data(data, profile.data);
  Section training(*subtable(top, root, "training", true), "training", path);
  read_training(training, profile.training, profile.model);
  if (const toml::table* table = subtable(top, root, "thresholds", false)) {
    Section thresholds(*table, "thresholds", path);
    read_thresholds(thresholds, profile.thresholds);
  }
  if (const toml::table* table = subtable(top, root, "expect", false)) {
    profile.expect = read_expect_table(*table, path, "profile " + profile.name);
    check_limits(profile.expect, path);
  }
  top.finish();
  return profile;
}

Profile load_profile_file(const std::string& path) {
  return parse_profile(read_input_file(path, "profile '" + path + "'", max_profile_bytes), path);
}

}  // namespace nodeaudit::score
