// TOML -> Profile: each section's fields as the field table declares them (profile_fields.hpp), then
// the rules between fields.
#include <algorithm>

#include "harness/core/input_file.hpp"
#include "harness/score/expect_toml.hpp"
#include "harness/score/profile.hpp"
#include "harness/score/profile_fields.hpp"
#include "harness/score/toml_section.hpp"

namespace nodeaudit::score {
namespace {

using detail::Bound;
using detail::Section;

const toml::table* subtable(Section& top, const std::string& key, bool required) {
  const toml::node* node = top.raw(key);
  if (!node) {
    if (required) detail::fail_at(top.path(), {1, 1}, fmt::format("missing required section [{}]", key));
    return nullptr;
  }
  if (!node->is_table()) top.fail(*node, fmt::format("'{}' must be a table ([{}])", key, key));
  return node->as_table();
}

std::vector<SizeShare> read_distribution(Section& s, const toml::array& entries) {
  std::vector<SizeShare> buckets;
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
    buckets.push_back(bucket);
  }
  if (buckets.empty() || std::abs(share_sum - 1.0) > 0.01)
    s.fail(entries,
           fmt::format("the shares of 'sample_size_distribution' in [data] add up to {}; they must add up to 1",
                       share_sum));
  return buckets;
}

// One value of the field from its section, checked against the field's kind and range; absent: none.
FieldValue read_value(Section& s, const ProfileField& field) {
  const std::string key(field.key);
  auto number = [](const std::optional<double>& value) { return value ? FieldValue(*value) : FieldValue(); };
  switch (field.kind) {
    case FieldKind::text: {
      const auto text = s.text(key);
      return text ? FieldValue(*text) : FieldValue();
    }
    case FieldKind::choice: {
      const auto choice = s.choice(key, field.accepted);
      return choice ? FieldValue(*choice) : FieldValue();
    }
    case FieldKind::number: return number(s.number(key, field.bound, field.max_value));
    case FieldKind::integer: {
      const auto value = s.integer(key, field.bound == Bound::positive ? 1 : 0);
      return value ? FieldValue(static_cast<double>(*value)) : FieldValue();
    }
    case FieldKind::size: return number(s.size(key, field.bound, field.max_value));
    case FieldKind::duration: return number(s.duration(key));
    case FieldKind::size_distribution: {
      const toml::array* entries = s.array(key);
      return entries ? FieldValue(read_distribution(s, *entries)) : FieldValue();
    }
  }
  return {};
}

// Every field of the section in the table's order (the order an unknown key's message lists them
// in): a required one absent is refused, an optional one keeps its default, computed after the
// section's other fields where it rests on them. Returns the fields given.
std::vector<FieldId> read_section_fields(Section& s, std::string_view section, Profile& profile) {
  std::vector<FieldId> given;
  std::vector<const ProfileField*> defaulted;
  for (const ProfileField& field : profile_fields()) {
    if (field.section != section) continue;
    const FieldValue value = read_value(s, field);
    if (std::holds_alternative<std::monostate>(value)) {
      if (field.required) s.fail_here(fmt::format("missing required field '{}' in {}", field.key, s.where()));
      if (field.fill_default) defaulted.push_back(&field);
      continue;
    }
    field.access.set(profile, value);
    given.push_back(field.id);
  }
  for (const ProfileField* field : defaulted) field->fill_default(profile);
  return given;
}

bool was_given(const std::vector<FieldId>& given, FieldId id) {
  return std::find(given.begin(), given.end(), id) != given.end();
}

// The rules between fields, once a section's fields are read.
void check_model(const Section& s, const ModelSpec& m) {
  if (m.trainable_parameters > m.parameters)
    s.fail_here(
        fmt::format("trainable_parameters {} in [model] exceeds parameters {}", m.trainable_parameters, m.parameters));
  if (!m.flops_per_sample && !m.tokens_per_sample)
    s.fail_here("missing required field 'flops_per_sample' or 'tokens_per_sample' in [model]");
}

void check_data(const Section& s, const std::vector<FieldId>& given) {
  const bool size = was_given(given, FieldId::sample_size);
  const bool distribution = was_given(given, FieldId::sample_size_distribution);
  if (size && distribution) s.fail_here("[data] gives both 'sample_size' and 'sample_size_distribution'; give one");
  if (!size && !distribution) s.fail_here("missing required field 'sample_size' in [data]");
}

void check_training(const Section& s, const TrainingSpec& t, const ModelSpec& model) {
  if (t.model_efficiency == 0) s.fail_here("'model_efficiency' in [training] is 0; must be a fraction above 0");
  if (t.checkpoint_bytes > 0 && t.checkpoint_interval_s <= 0)
    s.fail_here("'checkpoint_size' in [training] needs a 'checkpoint_interval' above 0");
  if (!t.target_samples && !t.target_tokens)
    s.fail_here("missing required field 'target_samples' or 'target_tokens' in [training]");
  if (t.target_samples && t.target_tokens)
    s.fail_here("[training] gives both 'target_samples' and 'target_tokens'; give one");
  if (t.target_tokens && !model.tokens_per_sample)
    s.fail_here("'target_tokens' in [training] needs 'tokens_per_sample' in [model]");
}

void check_thresholds(const Section& s, const Thresholds& t) {
  if (t.utilization_min > t.utilization_healthy)
    s.fail_here(fmt::format("'utilization_min' {} in [thresholds] is above 'utilization_healthy' {}", t.utilization_min,
                            t.utilization_healthy));
}

}  // namespace

Profile parse_profile(const std::string& toml_text, const std::string& path) {
  const toml::table root = detail::parse_toml(toml_text, path);
  Profile profile;
  profile.source_path = path;
  Section top(root, "", path);
  read_section_fields(top, "", profile);
  Section model(*subtable(top, "model", true), "model", path);
  read_section_fields(model, "model", profile);
  check_model(model, profile.model);
  model.finish();
  Section data(*subtable(top, "data", true), "data", path);
  check_data(data, read_section_fields(data, "data", profile));
  data.finish();
  Section training(*subtable(top, "training", true), "training", path);
  read_section_fields(training, "training", profile);
  check_training(training, profile.training, profile.model);
  training.finish();
  if (const toml::table* table = subtable(top, "thresholds", false)) {
    Section thresholds(*table, "thresholds", path);
    read_section_fields(thresholds, "thresholds", profile);
    check_thresholds(thresholds, profile.thresholds);
    thresholds.finish();
  }
  if (const toml::table* table = subtable(top, "expect", false)) {
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
