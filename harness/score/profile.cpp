// Derived figures of a profile and the names of its enumerations.
#include "harness/score/profile.hpp"

namespace nodeaudit::score {

std::string to_string(Category category) {
  switch (category) {
    case Category::compute_intensive: return "compute-intensive";
    case Category::memory_intensive: return "memory-intensive";
    case Category::data_throughput_intensive: return "data-throughput-intensive";
    case Category::latency_sensitive: return "latency-sensitive";
  }
  return "?";
}

std::string to_string(AccessPattern access) {
  switch (access) {
    case AccessPattern::sequential_shards: return "sequential-shards";
    case AccessPattern::small_files: return "small-files";
    case AccessPattern::random: return "random";
    case AccessPattern::memmap: return "memmap";
  }
  return "?";
}

std::string to_string(DecodeKind decode) {
  return decode == DecodeKind::jpeg ? "jpeg" : "none";
}
std::string to_string(LoaderKind loader) {
  return loader == LoaderKind::native ? "native" : "pytorch";
}
std::string to_string(Sharding sharding) {
  return sharding == Sharding::full ? "full" : "none";
}

double bytes_per_element(const std::string& dtype) {
  if (dtype == "fp64") return 8;
  if (dtype == "fp32" || dtype == "tf32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "fp8") return 1;
  return 0;
}

double Profile::dtype_bytes() const {
  return bytes_per_element(model.dtype);
}

double Profile::flops_per_sample() const {
  if (model.flops_per_sample) return *model.flops_per_sample;
  return model.tokens_per_sample.value_or(0) * model.flops_per_token_per_parameter * model.parameters;
}

double Profile::model_state_bytes() const {
  const double frozen = model.parameters - model.trainable_parameters;
  return frozen * dtype_bytes() + model.trainable_parameters * model.bytes_per_parameter;
}

double Profile::gradient_bytes() const {
  return model.trainable_parameters * model.gradient_bytes_per_parameter;
}

std::optional<double> Profile::target_run_samples() const {
  if (training.target_samples) return training.target_samples;
  if (training.target_tokens && model.tokens_per_sample && *model.tokens_per_sample > 0)
    return *training.target_tokens / *model.tokens_per_sample;
  return std::nullopt;
}

}  // namespace nodeaudit::score
