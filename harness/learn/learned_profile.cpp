#include "harness/learn/learned_profile.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/score/profile.hpp"

namespace nodeaudit::learn {

namespace {

LearnedFieldValue learned_number(const Learned& figure) {
  return {figure.value, figure.how};
}
LearnedFieldValue learned_text(const LearnedText& figure) {
  return {figure.value, figure.how};
}
std::optional<LearnedFieldValue> learned_number(const std::optional<Learned>& figure) {
  if (!figure) return std::nullopt;
  return learned_number(*figure);
}

}  // namespace

std::optional<LearnedFieldValue> learned_field(const LearnedJob& job, score::FieldId id) {
  using score::FieldId;
  const LearnedProfileFields& f = job.fields;
  // Both checkpoint fields or neither: a size without its interval is no profile.
  const bool checkpoint = f.checkpoint_size && f.checkpoint_interval_s;
  switch (id) {
    case FieldId::category: return LearnedFieldValue{f.category, f.category_how};
    case FieldId::parameters: return learned_number(f.parameters);
    case FieldId::trainable_parameters: return learned_number(f.trainable_parameters);
    case FieldId::dtype: return learned_text(f.dtype);
    case FieldId::flops_per_sample: return learned_number(f.flops_per_sample);
    case FieldId::tokens_per_sample: return learned_number(f.tokens_per_sample);
    case FieldId::optimizer: return learned_text(f.optimizer);
    case FieldId::bytes_per_parameter: return learned_number(f.bytes_per_parameter);
    case FieldId::gradient_bytes_per_parameter: return learned_number(f.gradient_bytes_per_parameter);
    case FieldId::activation_bytes_per_sample: return learned_number(f.activation_bytes_per_sample);
    case FieldId::sample_size: return learned_number(f.sample_size);
    case FieldId::dataset_size: return learned_number(f.dataset_size);
    case FieldId::access: return learned_text(f.access);
    case FieldId::decode: return learned_text(f.decode);
    case FieldId::loader: return learned_text(f.loader);
    case FieldId::device_bytes_per_sample: return learned_number(f.device_bytes_per_sample);
    case FieldId::micro_batch_per_gpu: return learned_number(f.micro_batch);
    case FieldId::gradient_accumulation: return learned_number(f.accumulation);
    case FieldId::model_efficiency: return learned_number(f.model_efficiency);
    case FieldId::comm_overlap: return learned_number(f.comm_overlap);
    case FieldId::sharding:
      return LearnedFieldValue{score::to_string(score::Sharding::none),
                               job.distributed ? "assumption: a full replica per rank (FSDP is not detected)"
                                               : "one process: a full replica"};
    case FieldId::checkpoint_size: return checkpoint ? learned_number(f.checkpoint_size) : std::nullopt;
    case FieldId::checkpoint_interval: return checkpoint ? learned_number(f.checkpoint_interval_s) : std::nullopt;
    case FieldId::target_samples: return learned_number(f.target_samples);
    // Written apart (name, description) or not learned: the profile's defaults hold.
    case FieldId::name:
    case FieldId::description:
    case FieldId::flops_per_token_per_parameter:
    case FieldId::memory_traffic_bytes_per_sample:
    case FieldId::sample_size_distribution:
    case FieldId::target_tokens:
    case FieldId::utilization_healthy:
    case FieldId::utilization_min:
    case FieldId::memory_peak_max:
    case FieldId::comm_share_max:
    case FieldId::data_wait_max:
    case FieldId::host_ram_to_gpu_memory_min:
    case FieldId::cpu_cores_per_gpu_min:
    case FieldId::gpu_spread_max:
    case FieldId::upgrade_utilization_min:
    case FieldId::upgrade_memory_min:
    case FieldId::upgrade_wait_max:
    case FieldId::step_time_max: return std::nullopt;
  }
  return std::nullopt;
}

std::string learned_profile_toml(const LearnedJob& job, const std::string& name, const std::string& command_text) {
  using score::FieldId;
  std::string out = fmt::format(
      "# Learned by `nodeaudit learn` from the job below: {} warm-up, {} measured and {} counted optimizer step(s)\n"
      "# on {} rank(s). Each field says how it was obtained; edit the assumptions to your run.\n",
      job.warmup, job.measured, job.counted, job.world_size);
  out += score::toml_field_line(score::profile_field(FieldId::name), name);
  out += score::toml_field_line(score::profile_field(FieldId::description), "learned from: " + command_text);
  std::string_view section;
  for (const score::ProfileField& field : score::profile_fields()) {
    const std::optional<LearnedFieldValue> learned = learned_field(job, field.id);
    if (!learned) {
      if (field.id == FieldId::checkpoint_size)
        out += fmt::format("# {}, {}: no torch.save call in the steps learned\n", field.key,
                           score::profile_field(FieldId::checkpoint_interval).key);
      continue;
    }
    if (field.section != section) out += fmt::format("\n[{}]\n", field.section), section = field.section;
    score::FieldValue value = learned->value;
    // A count of micro-batches or samples is at least one.
    if (field.kind == score::FieldKind::integer) value = std::max(1.0, std::get<double>(value));
    out += score::toml_field_line(field, value, learned->how);
  }
  return out;
}

void check_learned_profile(const std::string& toml_text, const std::string& path) {
  (void)score::parse_profile(toml_text, path);
}

}  // namespace nodeaudit::learn
