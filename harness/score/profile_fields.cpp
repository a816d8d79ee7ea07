// What is generic over the field table (profile_field_table.cpp): JSON both ways, TOML values and
// lines, and the Markdown tables of profiles/README.md.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/score/profile_fields.hpp"

namespace nodeaudit::score {
namespace {

// Whole numbers as TOML integers (counts, bytes); others with 6 significant digits.
std::string toml_number_text(double value) {
  if (std::fabs(value) < 9e18 && std::fabs(value - std::round(value)) < 1e-9 * std::max(1.0, std::fabs(value)))
    return fmt::format("{}", static_cast<long long>(std::llround(value)));
  if (std::fabs(value) >= 1e3) return fmt::format("{}", static_cast<long long>(std::llround(value)));
  return fmt::format("{:.6g}", value);
}

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

nlohmann::json json_value(const ProfileField& field, const FieldValue& value) {
  if (const double* number = std::get_if<double>(&value))
    return field.kind == FieldKind::integer ? nlohmann::json(std::llround(*number)) : nlohmann::json(*number);
  if (const std::string* text = std::get_if<std::string>(&value)) return *text;
  nlohmann::json buckets = nlohmann::json::array();
  for (const SizeShare& bucket : std::get<std::vector<SizeShare>>(value))
    buckets.push_back({{"bytes", bucket.bytes}, {"share", bucket.share}});
  return buckets;
}

FieldValue field_value_from_json(const ProfileField& field, const nlohmann::json& j) {
  if (j.is_null()) return {};
  if (field.kind == FieldKind::text || field.kind == FieldKind::choice) return j.get<std::string>();
  if (field.kind != FieldKind::size_distribution) return j.get<double>();
  std::vector<SizeShare> buckets;
  for (const nlohmann::json& bucket : j)
    buckets.push_back({bucket.at("bytes").get<double>(), bucket.at("share").get<double>()});
  return buckets;
}

}  // namespace

nlohmann::json profile_fields_json(const Profile& profile) {
  nlohmann::json out = nlohmann::json::object();
  for (const ProfileField& field : profile_fields()) {
    const FieldValue value = field.access.get(profile);
    if (std::holds_alternative<std::monostate>(value)) continue;
    nlohmann::json& place = field.section.empty() ? out : out[std::string(field.section)];
    place[std::string(field.json_name())] = json_value(field, value);
  }
  return out;
}

Profile profile_from_fields_json(const nlohmann::json& fields) {
  Profile profile;
  for (const ProfileField& field : profile_fields()) {
    const nlohmann::json* place = &fields;
    if (!field.section.empty()) {
      const auto section = fields.find(std::string(field.section));
      if (section == fields.end()) continue;
      place = &*section;
    }
    const auto found = place->find(std::string(field.json_name()));
    if (found != place->end()) field.access.set(profile, field_value_from_json(field, *found));
  }
  return profile;
}

std::string toml_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

std::string toml_value_text(const ProfileField& field, const FieldValue& value) {
  if (const double* number = std::get_if<double>(&value))
    return field.kind == FieldKind::integer ? fmt::format("{}", std::llround(*number)) : toml_number_text(*number);
  if (const std::string* text = std::get_if<std::string>(&value)) return toml_quoted(*text);
  if (const auto* buckets = std::get_if<std::vector<SizeShare>>(&value)) {
    std::string out;
    for (const SizeShare& bucket : *buckets)
      out += fmt::format("{}{{ size = {}, share = {} }}", out.empty() ? "" : ", ", toml_number_text(bucket.bytes),
                         toml_number_text(bucket.share));
    return "[" + out + "]";
  }
  return "";
}

std::string toml_field_line(const ProfileField& field, const FieldValue& value,
                            std::optional<std::string_view> comment) {
  const std::string line = fmt::format("{} = {}", field.key, toml_value_text(field, value));
  return comment ? fmt::format("{}  # {}\n", line, one_line(*comment)) : line + "\n";
}

std::string profile_fields_markdown(std::string_view section) {
  const std::string_view wanted = section == "top" ? "" : section;
  std::string out = "| key | unit | default | meaning |\n|---|---|---|---|\n";
  for (const ProfileField& field : profile_fields())
    if (field.section == wanted)
      out += fmt::format("| `{}` | {} | {} | {} |\n", field.key, field.unit.empty() ? "—" : field.unit,
                         field.default_text, field.meaning);
  return out;
}

}  // namespace nodeaudit::score
