// Every field of a workload profile, declared once: its section and key, what it holds (its kind and
// unit), the range it accepts, its default and what it means, and where it lives in a Profile. The
// TOML reader (profile_toml.cpp), `profiles show --format json`, the step demand a probe receives
// (step_demand.cpp), learn's profile and document, and the field tables of profiles/README.md all
// read this table; a new field is one entry here (and the Profile member it fills).
// [expect] is not in it: it has its own reader and table (expect_settings.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/score/field_bound.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::score {

// One name per field, in the table's order (the order of profiles/README.md and of learn's TOML),
// a line per section.
// clang-format off
enum class FieldId {
  name, description, category,
  parameters, trainable_parameters, dtype, flops_per_sample, tokens_per_sample, flops_per_token_per_parameter,
  optimizer, bytes_per_parameter, gradient_bytes_per_parameter, activation_bytes_per_sample,
  memory_traffic_bytes_per_sample,
  sample_size, sample_size_distribution, dataset_size, access, decode, loader, device_bytes_per_sample,
  micro_batch_per_gpu, gradient_accumulation, model_efficiency, comm_overlap, sharding, checkpoint_size,
  checkpoint_interval, target_samples, target_tokens,
  utilization_healthy, utilization_min, memory_peak_max, comm_share_max, data_wait_max,
  host_ram_to_gpu_memory_min, cpu_cores_per_gpu_min, gpu_spread_max, upgrade_utilization_min,
  upgrade_memory_min, upgrade_wait_max, step_time_max,
};
// clang-format on

// How a field is written in TOML: text (any string), choice (one of `accepted`), number, integer,
// size (bytes, or a string such as "110KiB"), duration (seconds, or a string such as "15m"), or the
// one list of {size, share} tables.
enum class FieldKind { text, choice, number, integer, size, duration, size_distribution };

// A field's value: absent (an optional field not given), a number (sizes in bytes, durations in
// seconds, integers whole), a text (choices by their TOML spelling) or a size distribution.
using FieldValue = std::variant<std::monostate, double, std::string, std::vector<SizeShare>>;

// Where a field's value lives in a Profile: read it, write it.
struct FieldAccess {
  FieldValue (*get)(const Profile&) = nullptr;
  void (*set)(Profile&, const FieldValue&) = nullptr;
};

struct ProfileField {
  FieldId id;
  std::string_view section;   // "" for the top level
  std::string_view key;       // the TOML key
  std::string_view json_key;  // the name in JSON (and in Profile) where it differs: sizes in bytes, durations in s
  FieldKind kind;
  std::string_view unit;                     // as profiles/README.md shows it
  detail::Bound bound = detail::Bound::any;  // integers: positive is from 1
  double max_value = detail::default_max_value;
  std::vector<std::string> accepted;  // a choice's values
  bool required = false;
  std::string_view default_text;  // as profiles/README.md shows it
  std::string_view meaning;
  FieldAccess access;
  // A default computed from the fields of the profile read before it, set when the field is absent;
  // null where the Profile's own member default is the default.
  void (*fill_default)(Profile&) = nullptr;

  std::string_view json_name() const { return json_key.empty() ? key : json_key; }
};

const std::vector<ProfileField>& profile_fields();
const ProfileField& profile_field(FieldId id);
// "", "model", "data", "training", "thresholds": the sections of the table, in order.
const std::vector<std::string_view>& profile_field_sections();

// The fields as JSON: the top-level fields, then one object per section, each field under its
// json_name(); an absent optional field is left out; integers are JSON integers.
nlohmann::json profile_fields_json(const Profile& profile);
// The Profile those fields describe (the inverse of profile_fields_json); a field left out keeps the
// Profile's default.
Profile profile_from_fields_json(const nlohmann::json& fields);

// A value as TOML text: a quoted string, a whole number as an integer, others with 6 significant
// digits. And one line of a profile, "key = value", then "  # comment" (on one line) when given.
std::string toml_value_text(const ProfileField& field, const FieldValue& value);
std::string toml_field_line(const ProfileField& field, const FieldValue& value,
                            std::optional<std::string_view> comment = std::nullopt);
std::string toml_quoted(std::string_view text);

// The Markdown table of one section's fields (profiles/README.md holds it between the comments
// `<!-- profile fields: SECTION -->` and `<!-- end profile fields -->`; "top" for the top level).
std::string profile_fields_markdown(std::string_view section);

}  // namespace nodeaudit::score
