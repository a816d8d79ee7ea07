#include "harness/score/step_demand.hpp"

namespace nodeaudit::score {
namespace {

using json = nlohmann::json;

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::optional<double> number_or_none(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

json model_block(const ModelSpec& m) {
  return {{"parameters", m.parameters},
          {"trainable_parameters", m.trainable_parameters},
          {"dtype", m.dtype},
          {"flops_per_sample", optional_number(m.flops_per_sample)},
          {"tokens_per_sample", optional_number(m.tokens_per_sample)},
          {"flops_per_token_per_parameter", m.flops_per_token_per_parameter},
          {"optimizer", m.optimizer},
          {"bytes_per_parameter", m.bytes_per_parameter},
          {"gradient_bytes_per_parameter", m.gradient_bytes_per_parameter},
          {"activation_bytes_per_sample", m.activation_bytes_per_sample},
          {"memory_traffic_bytes_per_sample", m.memory_traffic_bytes_per_sample}};
}

ModelSpec model_from(const json& j) {
  ModelSpec m;
  m.parameters = j.at("parameters").get<double>();
  m.trainable_parameters = j.at("trainable_parameters").get<double>();
  m.dtype = j.at("dtype").get<std::string>();
  m.flops_per_sample = number_or_none(j, "flops_per_sample");
  m.tokens_per_sample = number_or_none(j, "tokens_per_sample");
  m.flops_per_token_per_parameter = j.at("flops_per_token_per_parameter").get<double>();
  m.optimizer = j.at("optimizer").get<std::string>();
  m.bytes_per_parameter = j.at("bytes_per_parameter").get<double>();
  m.gradient_bytes_per_parameter = j.at("gradient_bytes_per_parameter").get<double>();
  m.activation_bytes_per_sample = j.at("activation_bytes_per_sample").get<double>();
  m.memory_traffic_bytes_per_sample = j.at("memory_traffic_bytes_per_sample").get<double>();
  return m;
}

json data_block(const DataSpec& d) {
  json distribution = json::array();
  for (const SizeShare& s : d.sample_size_distribution) distribution.push_back({s.bytes, s.share});
  return {{"sample_bytes", d.sample_bytes},
          {"sample_size_distribution", distribution},
          {"dataset_bytes", d.dataset_bytes},
          {"access", static_cast<int>(d.access)},
          {"decode", static_cast<int>(d.decode)},
          {"loader", static_cast<int>(d.loader)},
          {"device_bytes_per_sample", d.device_bytes_per_sample}};
}

DataSpec data_from(const json& j) {
  DataSpec d;
  d.sample_bytes = j.at("sample_bytes").get<double>();
  for (const json& s : j.at("sample_size_distribution"))
    d.sample_size_distribution.push_back({s.at(0).get<double>(), s.at(1).get<double>()});
  d.dataset_bytes = j.at("dataset_bytes").get<double>();
  d.access = static_cast<AccessPattern>(j.at("access").get<int>());
  d.decode = static_cast<DecodeKind>(j.at("decode").get<int>());
  d.loader = static_cast<LoaderKind>(j.at("loader").get<int>());
  d.device_bytes_per_sample = j.at("device_bytes_per_sample").get<double>();
  return d;
}

json training_block(const TrainingSpec& t) {
  return {{"micro_batch_per_gpu", t.micro_batch_per_gpu},     {"gradient_accumulation", t.gradient_accumulation},
          {"model_efficiency", t.model_efficiency},           {"comm_overlap", t.comm_overlap},
          {"sharding", static_cast<int>(t.sharding)},         {"checkpoint_bytes", t.checkpoint_bytes},
          {"checkpoint_interval_s", t.checkpoint_interval_s}, {"target_samples", optional_number(t.target_samples)},
          {"target_tokens", optional_number(t.target_tokens)}};
}

TrainingSpec training_from(const json& j) {
  TrainingSpec t;
  t.micro_batch_per_gpu = j.at("micro_batch_per_gpu").get<int>();
  t.gradient_accumulation = j.at("gradient_accumulation").get<int>();
  t.model_efficiency = j.at("model_efficiency").get<double>();
  t.comm_overlap = j.at("comm_overlap").get<double>();
  t.sharding = static_cast<Sharding>(j.at("sharding").get<int>());
  t.checkpoint_bytes = j.at("checkpoint_bytes").get<double>();
  t.checkpoint_interval_s = j.at("checkpoint_interval_s").get<double>();
  t.target_samples = number_or_none(j, "target_samples");
  t.target_tokens = number_or_none(j, "target_tokens");
  return t;
}

}  // namespace

StepDemand step_demand_of(const Profile& profile) {
  StepDemand demand;
  demand.profile = profile.name;
  demand.decode = to_string(profile.data.decode);
  demand.sample_bytes = profile.data.sample_bytes;
  demand.workload = {{"name", profile.name},
                     {"description", profile.description},
                     {"source_path", profile.source_path},
                     {"category", static_cast<int>(profile.category)},
                     {"model", model_block(profile.model)},
                     {"data", data_block(profile.data)},
                     {"training", training_block(profile.training)}};
  return demand;
}

Profile profile_of_demand(const StepDemand& demand) {
  const json& w = demand.workload;
  Profile profile;
  profile.name = w.at("name").get<std::string>();
  profile.description = w.at("description").get<std::string>();
  profile.source_path = w.at("source_path").get<std::string>();
  profile.category = static_cast<Category>(w.at("category").get<int>());
  profile.model = model_from(w.at("model"));
  profile.data = data_from(w.at("data"));
  profile.training = training_from(w.at("training"));
  return profile;
}

}  // namespace nodeaudit::score
