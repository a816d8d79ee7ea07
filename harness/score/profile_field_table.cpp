// The field table of a workload profile: each field's key, kind, unit, range, default and meaning,
// and where its value lives in a Profile. Meanings and defaults are written as profiles/README.md
// shows them; the rules between fields (a distribution or a size, a run length in samples or tokens)
// stay with the reader (profile_toml.cpp).
#include <cmath>
#include <stdexcept>

#include "harness/score/profile_fields.hpp"

namespace nodeaudit::score {
namespace {

using detail::Bound;

// A hundred times the largest models trained today: a larger count is a typo (1e308), and would
// carry the memory and time arithmetic past what a double holds.
constexpr double max_parameters = 1e15;
constexpr double max_bytes_per_parameter = 1024;

template <typename E>
E enum_from_text(const std::string& text, std::initializer_list<E> values) {
  for (const E value : values)
    if (to_string(value) == text) return value;
  throw std::invalid_argument("profile field: unknown value '" + text + "'");
}

// Member values as field values and back, one overload per member type.
FieldValue value_of(double value) {
  return value;
}
FieldValue value_of(int value) {
  return static_cast<double>(value);
}
FieldValue value_of(const std::optional<double>& value) {
  return value ? FieldValue(*value) : FieldValue();
}
FieldValue value_of(const std::string& value) {
  return value;
}
FieldValue value_of(const std::vector<SizeShare>& value) {
  return value.empty() ? FieldValue() : FieldValue(value);
}
template <typename E>
requires std::is_enum_v<E> FieldValue value_of(E value) {
  return to_string(value);
}

void assign_from(const FieldValue& v, double& out) {
  if (const double* number = std::get_if<double>(&v)) out = *number;
}
void assign_from(const FieldValue& v, int& out) {
  if (const double* number = std::get_if<double>(&v)) out = static_cast<int>(std::llround(*number));
}
void assign_from(const FieldValue& v, std::optional<double>& out) {
  const double* number = std::get_if<double>(&v);
  out = number ? std::optional<double>(*number) : std::nullopt;
}
void assign_from(const FieldValue& v, std::string& out) {
  if (const std::string* text = std::get_if<std::string>(&v)) out = *text;
}
void assign_from(const FieldValue& v, Category& out) {
  if (const std::string* text = std::get_if<std::string>(&v))
    out = enum_from_text(*text, {Category::compute_intensive, Category::memory_intensive,
                                 Category::data_throughput_intensive, Category::latency_sensitive});
}
void assign_from(const FieldValue& v, AccessPattern& out) {
  if (const std::string* text = std::get_if<std::string>(&v))
    out = enum_from_text(*text, {AccessPattern::sequential_shards, AccessPattern::small_files, AccessPattern::random,
                                 AccessPattern::memmap});
}
void assign_from(const FieldValue& v, DecodeKind& out) {
  if (const std::string* text = std::get_if<std::string>(&v))
    out = enum_from_text(*text, {DecodeKind::none, DecodeKind::jpeg});
}
void assign_from(const FieldValue& v, LoaderKind& out) {
  if (const std::string* text = std::get_if<std::string>(&v))
    out = enum_from_text(*text, {LoaderKind::pytorch, LoaderKind::native});
}
void assign_from(const FieldValue& v, Sharding& out) {
  if (const std::string* text = std::get_if<std::string>(&v))
    out = enum_from_text(*text, {Sharding::none, Sharding::full});
}

// A member of Profile (top_member<&Profile::name>) or of one of its sections (section_member<&Profile::model,
// &ModelSpec::dtype>).
template <auto member>
FieldAccess top_member() {
  return {[](const Profile& p) { return value_of(p.*member); },
          [](Profile& p, const FieldValue& v) { assign_from(v, p.*member); }};
}
template <auto part, auto member>
FieldValue get_in(const Profile& p) {
  return value_of((p.*part).*member);
}
template <auto part, auto member>
FieldAccess section_member() {
  return {get_in<part, member>, [](Profile& p, const FieldValue& v) { assign_from(v, (p.*part).*member); }};
}

// The distribution's mean is the sample size the scorer uses.
void set_distribution(Profile& p, const FieldValue& v) {
  const auto* buckets = std::get_if<std::vector<SizeShare>>(&v);
  if (!buckets || buckets->empty()) return;
  p.data.sample_size_distribution = *buckets;
  p.data.sample_bytes = 0;
  for (const auto& bucket : p.data.sample_size_distribution) p.data.sample_bytes += bucket.bytes * bucket.share;
}

double default_bytes_per_parameter(const std::string& optimizer, double dtype_bytes) {
  if (optimizer == "adamw") return 16;  // 16-bit weights + grads, fp32 master, m, v (ZeRO paper, 16 bytes/param)
  if (optimizer == "sgd") return 12;    // 16-bit weights + grads, fp32 master, momentum
  return dtype_bytes;                   // none: weights only
}

std::vector<ProfileField> top_and_model_fields() {
  return {
      {.id = FieldId::name,
       .section = "",
       .key = "name",
       .kind = FieldKind::text,
       .unit = "",
       .required = true,
       .default_text = "required",
       .meaning = "the profile's name; shipped profiles use their file name",
       .access = top_member<&Profile::name>()},
      {.id = FieldId::description,
       .section = "",
       .key = "description",
       .kind = FieldKind::text,
       .unit = "",
       .required = true,
       .default_text = "required",
       .meaning = "one line for `profiles list`",
       .access = top_member<&Profile::description>()},
      {.id = FieldId::category,
       .section = "",
       .key = "category",
       .kind = FieldKind::choice,
       .unit = "",
       .accepted = {"compute-intensive", "memory-intensive", "data-throughput-intensive", "latency-sensitive"},
       .required = true,
       .default_text = "required",
       .meaning = "`compute-intensive`, `memory-intensive`, `data-throughput-intensive` or `latency-sensitive`",
       .access = top_member<&Profile::category>()},
      {.id = FieldId::parameters,
       .section = "model",
       .key = "parameters",
       .kind = FieldKind::number,
       .unit = "count",
       .bound = Bound::positive,
       .max_value = max_parameters,
       .required = true,
       .default_text = "required",
       .meaning = "total parameters N",
       .access = section_member<&Profile::model, &ModelSpec::parameters>()},
      {.id = FieldId::trainable_parameters,
       .section = "model",
       .key = "trainable_parameters",
       .kind = FieldKind::number,
       .unit = "count",
       .bound = Bound::non_negative,
       .max_value = max_parameters,
       .default_text = "N (0 with `optimizer = \"none\"`)",
       .meaning = "parameters that get gradients and optimizer state (LoRA: the adapters)",
       .access = section_member<&Profile::model, &ModelSpec::trainable_parameters>(),
       .fill_default =
           [](Profile& p) { p.model.trainable_parameters = p.model.optimizer == "none" ? 0.0 : p.model.parameters; }},
      {.id = FieldId::dtype,
       .section = "model",
       .key = "dtype",
       .kind = FieldKind::choice,
       .unit = "",
       .accepted = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"},
       .default_text = "`bf16`",
       .meaning = "compute dtype: `fp64`, `fp32`, `tf32`, `fp16`, `bf16`, `fp8`. Selects the `gpu.gemm tflops [dtype]` "
                  "figure and the bytes of a frozen weight",
       .access = section_member<&Profile::model, &ModelSpec::dtype>()},
      {.id = FieldId::flops_per_sample,
       .section = "model",
       .key = "flops_per_sample",
       .kind = FieldKind::number,
       .unit = "FLOP",
       .bound = Bound::positive,
       .default_text = "—",
       .meaning = "training FLOPs of one sample (forward + backward). Give this **or** `tokens_per_sample`",
       .access = section_member<&Profile::model, &ModelSpec::flops_per_sample>()},
      {.id = FieldId::tokens_per_sample,
       .section = "model",
       .key = "tokens_per_sample",
       .kind = FieldKind::number,
       .unit = "tokens",
       .bound = Bound::positive,
       .max_value = 1e12,
       .default_text = "—",
       .meaning = "tokens per sample; FLOPs per sample = tokens x `flops_per_token_per_parameter` x N",
       .access = section_member<&Profile::model, &ModelSpec::tokens_per_sample>()},
      {.id = FieldId::flops_per_token_per_parameter,
       .section = "model",
       .key = "flops_per_token_per_parameter",
       .kind = FieldKind::number,
       .unit = "FLOP",
       .bound = Bound::positive,
       .max_value = 1e6,
       .default_text = "6",
       .meaning = "6 for training (6·N rule), 4 when the weights are frozen (no weight gradients), 2 for forward only",
       .access = section_member<&Profile::model, &ModelSpec::flops_per_token_per_parameter>()},
      {.id = FieldId::optimizer,
       .section = "model",
       .key = "optimizer",
       .kind = FieldKind::choice,
       .unit = "",
       .accepted = {"adamw", "sgd", "none"},
       .default_text = "`adamw`",
       .meaning = "`adamw`, `sgd` or `none`; sets the default `bytes_per_parameter`",
       .access = section_member<&Profile::model, &ModelSpec::optimizer>()},
      {.id = FieldId::bytes_per_parameter,
       .section = "model",
       .key = "bytes_per_parameter",
       .kind = FieldKind::number,
       .unit = "bytes",
       .bound = Bound::positive,
       .max_value = max_bytes_per_parameter,
       .default_text = "adamw 16, sgd 12, none = dtype bytes",
       .meaning = "bytes per **trainable** parameter for weights + gradients + optimizer state (mixed-precision AdamW: "
                  "2 + 2 + 4 + 4 + 4)",
       .access = section_member<&Profile::model, &ModelSpec::bytes_per_parameter>(),
       .fill_default =
           [](Profile& p) {
             p.model.bytes_per_parameter = default_bytes_per_parameter(p.model.optimizer, p.dtype_bytes());
           }},
      {.id = FieldId::gradient_bytes_per_parameter,
       .section = "model",
       .key = "gradient_bytes_per_parameter",
       .kind = FieldKind::number,
       .unit = "bytes",
       .bound = Bound::positive,
       .max_value = max_bytes_per_parameter,
       .default_text = "dtype bytes",
       .meaning = "bytes per trainable parameter the gradient all-reduce moves (AMP with fp32 gradients: 4)",
       .access = section_member<&Profile::model, &ModelSpec::gradient_bytes_per_parameter>(),
       .fill_default = [](Profile& p) { p.model.gradient_bytes_per_parameter = p.dtype_bytes(); }},
      {.id = FieldId::activation_bytes_per_sample,
       .section = "model",
       .key = "activation_bytes_per_sample",
       .kind = FieldKind::size,
       .unit = "bytes",
       .bound = Bound::non_negative,
       .default_text = "0",
       .meaning = "peak activation memory (or KV cache) per sample of a micro-batch",
       .access = section_member<&Profile::model, &ModelSpec::activation_bytes_per_sample>()},
      {.id = FieldId::memory_traffic_bytes_per_sample,
       .section = "model",
       .key = "memory_traffic_bytes_per_sample",
       .kind = FieldKind::size,
       .unit = "bytes",
       .bound = Bound::non_negative,
       .default_text = "0",
       .meaning = "GPU-memory bytes per sample that GEMMs do not hide (decode-phase inference streams the weights); 0 "
                  "leaves it out",
       .access = section_member<&Profile::model, &ModelSpec::memory_traffic_bytes_per_sample>()},
  };
}

std::vector<ProfileField> data_and_training_fields() {
  return {
      {.id = FieldId::sample_size,
       .section = "data",
       .key = "sample_size",
       .json_key = "sample_bytes",
       .kind = FieldKind::size,
       .unit = "bytes",
       .bound = Bound::positive,
       .default_text = "required unless a distribution is given",
       .meaning = "stored size of one sample",
       .access = section_member<&Profile::data, &DataSpec::sample_bytes>()},
      {.id = FieldId::sample_size_distribution,
       .section = "data",
       .key = "sample_size_distribution",
       .kind = FieldKind::size_distribution,
       .unit = "bytes, fraction",
       .default_text = "—",
       .meaning =
           "instead of `sample_size`: `[{ size = \"50KiB\", share = 0.7 }, { size = \"400KiB\", share = 0.3 }]`; "
           "shares add up to 1; the mean is used",
       .access = {get_in<&Profile::data, &DataSpec::sample_size_distribution>, set_distribution}},
      {.id = FieldId::dataset_size,
       .section = "data",
       .key = "dataset_size",
       .json_key = "dataset_bytes",
       .kind = FieldKind::size,
       .unit = "bytes",
       .bound = Bound::positive,
       .required = true,
       .default_text = "required",
       .meaning = "size of the data set; when it fits in free host RAM (`env.host.ram_available_bytes`) the page-cache "
                  "figures are used",
       .access = section_member<&Profile::data, &DataSpec::dataset_bytes>()},
      {.id = FieldId::access,
       .section = "data",
       .key = "access",
       .kind = FieldKind::choice,
       .unit = "",
       .accepted = {"sequential-shards", "small-files", "random", "memmap"},
       .required = true,
       .default_text = "required",
       .meaning =
           "`sequential-shards` (scored with `storage.read bandwidth [pattern=seq]`), `small-files` or `random` "
           "(scored with `storage.dataset samples_per_s`, best worker count), `memmap` (windows of one file read "
           "through a memory mapping, as a Dataset over `np.memmap` reads them: scored with `storage.dataset "
           "samples_per_s [read=mmap]`, which `run --profile` measures with `--read mmap` and a file the data "
           "set's size, up to 4 GiB; the page faults' read-around, not the sample size, decides what the device "
           "reads)",
       .access = section_member<&Profile::data, &DataSpec::access>()},
      {.id = FieldId::decode,
       .section = "data",
       .key = "decode",
       .kind = FieldKind::choice,
       .unit = "",
       .accepted = {"jpeg", "none"},
       .default_text = "`none`",
       .meaning = "CPU decode per sample: `jpeg` (scored with `host.dataloader`, else `host.decode`) or `none`",
       .access = section_member<&Profile::data, &DataSpec::decode>()},
      {.id = FieldId::loader,
       .section = "data",
       .key = "loader",
       .kind = FieldKind::choice,
       .unit = "",
       .accepted = {"pytorch", "native"},
       .default_text = "`pytorch`",
       .meaning =
           "who decodes: `pytorch` (a DataLoader in Python workers: cpu_decode is `host.dataloader`'s PIL "
           "figure when measured, else `host.decode`'s native figure labelled \"upper bound: native decoder; the "
           "framework loader was not measured (why)\") or `native` (C++/GPU decode, DALI: `host.decode`)",
       .access = section_member<&Profile::data, &DataSpec::loader>()},
      {.id = FieldId::device_bytes_per_sample,
       .section = "data",
       .key = "device_bytes_per_sample",
       .kind = FieldKind::size,
       .unit = "bytes",
       .bound = Bound::non_negative,
       .default_text = "`sample_size`",
       .meaning = "bytes copied host-to-device per sample (the decoded tensor); 0 for none",
       .access = section_member<&Profile::data, &DataSpec::device_bytes_per_sample>(),
       .fill_default = [](Profile& p) { p.data.device_bytes_per_sample = p.data.sample_bytes; }},
      {.id = FieldId::micro_batch_per_gpu,
       .section = "training",
       .key = "micro_batch_per_gpu",
       .kind = FieldKind::integer,
       .unit = "samples",
       .bound = Bound::positive,
       .required = true,
       .default_text = "required",
       .meaning = "samples per GPU per forward/backward; activations are held for these",
       .access = section_member<&Profile::training, &TrainingSpec::micro_batch_per_gpu>()},
      {.id = FieldId::gradient_accumulation,
       .section = "training",
       .key = "gradient_accumulation",
       .kind = FieldKind::integer,
       .unit = "micro-batches",
       .bound = Bound::positive,
       .default_text = "1",
       .meaning = "micro-batches per optimizer step",
       .access = section_member<&Profile::training, &TrainingSpec::gradient_accumulation>()},
      {.id = FieldId::model_efficiency,
       .section = "training",
       .key = "model_efficiency",
       .kind = FieldKind::number,
       .unit = "fraction",
       .bound = Bound::fraction,
       .required = true,
       .default_text = "required",
       .meaning =
           "achieved FLOP rate as a fraction (0..1] of the **measured** dense GEMM rate for the dtype (not of the "
           "datasheet peak): the node's `gpu.gemm` figure, or the GPU table's published measurement for "
           "`--target-gpus` and `pipeline.step`'s emulated GPUs, so all three mean the same",
       .access = section_member<&Profile::training, &TrainingSpec::model_efficiency>()},
      {.id = FieldId::comm_overlap,
       .section = "training",
       .key = "comm_overlap",
       .kind = FieldKind::number,
       .unit = "fraction",
       .bound = Bound::fraction,
       .default_text = "0",
       .meaning = "share of gradient communication hidden behind compute",
       .access = section_member<&Profile::training, &TrainingSpec::comm_overlap>()},
      {.id = FieldId::sharding,
       .section = "training",
       .key = "sharding",
       .kind = FieldKind::choice,
       .unit = "",
       .accepted = {"none", "full"},
       .default_text = "`none`",
       .meaning = "`none`: a full replica per GPU and one gradient all-reduce per step (DDP); `full`: FSDP / ZeRO-3 "
                  "across the node: model state / GPUs, and 1.5 all-reduce volumes per micro-batch (all-gather for "
                  "forward and backward, reduce-scatter of gradients)",
       .access = section_member<&Profile::training, &TrainingSpec::sharding>()},
      {.id = FieldId::checkpoint_size,
       .section = "training",
       .key = "checkpoint_size",
       .json_key = "checkpoint_bytes",
       .kind = FieldKind::size,
       .unit = "bytes",
       .bound = Bound::non_negative,
       .default_text = "0",
       .meaning = "one checkpoint's size; the write time at `storage.checkpoint write_bandwidth` is added to the run's "
                  "wall time (synchronous save)",
       .access = section_member<&Profile::training, &TrainingSpec::checkpoint_bytes>()},
      {.id = FieldId::checkpoint_interval,
       .section = "training",
       .key = "checkpoint_interval",
       .json_key = "checkpoint_interval_s",
       .kind = FieldKind::duration,
       .unit = "s",
       .bound = Bound::non_negative,
       .default_text = "0",
       .meaning = "how often a checkpoint is written; above 0 when `checkpoint_size` is",
       .access = section_member<&Profile::training, &TrainingSpec::checkpoint_interval_s>()},
      {.id = FieldId::target_samples,
       .section = "training",
       .key = "target_samples",
       .kind = FieldKind::number,
       .unit = "samples",
       .bound = Bound::positive,
       .default_text = "required: this **or** `target_tokens`",
       .meaning = "length of one run, for its predicted hours and cost",
       .access = section_member<&Profile::training, &TrainingSpec::target_samples>()},
      {.id = FieldId::target_tokens,
       .section = "training",
       .key = "target_tokens",
       .kind = FieldKind::number,
       .unit = "tokens",
       .bound = Bound::positive,
       .default_text = "—",
       .meaning = "instead of `target_samples`: the run's length in tokens (needs `tokens_per_sample`)",
       .access = section_member<&Profile::training, &TrainingSpec::target_tokens>()},
  };
}

ProfileField threshold(FieldId id, std::string_view key, std::string_view default_text, std::string_view meaning,
                       FieldAccess access) {
  return {.id = id,
          .section = "thresholds",
          .key = key,
          .kind = FieldKind::number,
          .unit = "fraction",
          .bound = Bound::fraction,
          .default_text = default_text,
          .meaning = meaning,
          .access = access};
}

std::vector<ProfileField> threshold_fields() {
  using T = Thresholds;
  return {
      threshold(FieldId::utilization_healthy, "utilization_healthy", "0.70", "`utilization`: PASS at or above",
                section_member<&Profile::thresholds, &T::utilization_healthy>()),
      threshold(FieldId::utilization_min, "utilization_min", "0.50", "`utilization`: FAIL below (not compute-bound)",
                section_member<&Profile::thresholds, &T::utilization_min>()),
      threshold(FieldId::memory_peak_max, "memory_peak_max", "0.80",
                "`memory_fit`: PASS when peak / usable GPU memory is at or below; FAIL above 1",
                section_member<&Profile::thresholds, &T::memory_peak_max>()),
      threshold(FieldId::comm_share_max, "comm_share_max", "0.20",
                "`communication`: exposed communication share of the step",
                section_member<&Profile::thresholds, &T::comm_share_max>()),
      threshold(FieldId::data_wait_max, "data_wait_max", "0.30",
                "`data_wait`: share of the step the GPUs wait for storage, CPU decode or host-to-device copies",
                section_member<&Profile::thresholds, &T::data_wait_max>()),
      {.id = FieldId::host_ram_to_gpu_memory_min,
       .section = "thresholds",
       .key = "host_ram_to_gpu_memory_min",
       .kind = FieldKind::number,
       .unit = "ratio",
       .bound = Bound::positive,
       .default_text = "2.0",
       .meaning = "`host_ram`: host RAM / total GPU memory of the node (a ratio, not a fraction)",
       .access = section_member<&Profile::thresholds, &T::host_ram_to_gpu_memory_min>()},
      {.id = FieldId::cpu_cores_per_gpu_min,
       .section = "thresholds",
       .key = "cpu_cores_per_gpu_min",
       .kind = FieldKind::number,
       .unit = "cores",
       .bound = Bound::positive,
       .default_text = "4",
       .meaning = "`cpu_cores`: physical cores per GPU",
       .access = section_member<&Profile::thresholds, &T::cpu_cores_per_gpu_min>()},
      threshold(FieldId::gpu_spread_max, "gpu_spread_max", "0.10",
                "`uniformity`: (max − min) / max of the per-GPU GEMM rates",
                section_member<&Profile::thresholds, &T::gpu_spread_max>()),
      threshold(FieldId::upgrade_utilization_min, "upgrade_utilization_min", "0.85",
                "upgrade advice: utilization must be above",
                section_member<&Profile::thresholds, &T::upgrade_utilization_min>()),
      threshold(FieldId::upgrade_memory_min, "upgrade_memory_min", "0.75",
                "upgrade advice: peak / usable memory must be at or above (\"near its limit\")",
                section_member<&Profile::thresholds, &T::upgrade_memory_min>()),
      threshold(FieldId::upgrade_wait_max, "upgrade_wait_max", "0.05",
                "upgrade advice: data wait and exposed communication must each be at or below",
                section_member<&Profile::thresholds, &T::upgrade_wait_max>()),
      {.id = FieldId::step_time_max,
       .section = "thresholds",
       .key = "step_time_max",
       .json_key = "step_time_max_s",
       .kind = FieldKind::duration,
       .unit = "s",
       .bound = Bound::non_negative,
       .default_text = "none",
       .meaning = "`step_time` (latency-sensitive profiles): predicted step time limit, a duration; PASS or FAIL",
       .access = section_member<&Profile::thresholds, &T::step_time_max_s>()},
  };
}

std::vector<ProfileField> every_field() {
  std::vector<ProfileField> out = top_and_model_fields();
  for (auto part : {data_and_training_fields(), threshold_fields()})
    for (ProfileField& field : part) out.push_back(std::move(field));
  for (std::size_t i = 0; i < out.size(); ++i)
    if (static_cast<std::size_t>(out[i].id) != i) throw std::logic_error("profile field table out of FieldId order");
  return out;
}

}  // namespace

const std::vector<ProfileField>& profile_fields() {
  static const std::vector<ProfileField> fields = every_field();
  return fields;
}

const ProfileField& profile_field(FieldId id) {
  return profile_fields().at(static_cast<std::size_t>(id));
}

const std::vector<std::string_view>& profile_field_sections() {
  static const std::vector<std::string_view> sections{"", "model", "data", "training", "thresholds"};
  return sections;
}

}  // namespace nodeaudit::score
