#include "harness/report/provenance.hpp"

#include <map>

#include <fmt/format.h>

namespace nodeaudit::report {

namespace {

std::string text_or_empty(const nlohmann::json& doc, const std::string& key) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
}

// "`llm-finetune-7b` (vendor-b), none (vendor-a, vendor-c)", values in first-seen order.
std::string holders(const std::vector<Provenance>& results, std::string Provenance::*field, std::size_t names_shown,
                    const std::string& when_empty = "not recorded") {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> nodes_of;
  for (const auto& result : results) {
    auto& nodes = nodes_of[result.*field];
    if (nodes.empty()) order.push_back(result.*field);
    nodes.push_back(result.node);
  }
  std::string text;
  for (const auto& value : order) {
    const auto& nodes = nodes_of[value];
    std::string names;
    for (std::size_t i = 0; i < nodes.size() && i < names_shown; ++i) names += (i ? ", " : "") + nodes[i];
    if (nodes.size() > names_shown) names += fmt::format(" and {} more", nodes.size() - names_shown);
    text += fmt::format("{}{} ({})", text.empty() ? "" : "; ", value.empty() ? when_empty : "`" + value + "`", names);
  }
  return text;
}

bool all_equal(const std::vector<Provenance>& results, std::string Provenance::*field) {
  for (const auto& result : results)
    if (result.*field != results.front().*field) return false;
  return true;
}

}  // namespace

Provenance provenance_of(const std::string& node, const nlohmann::json& doc) {
  const nlohmann::json tool = doc.value("tool", nlohmann::json::object());
  return {node, text_or_empty(doc, "schema"), text_or_empty(doc, "profile"), text_or_empty(doc, "level"),
          tool.is_object() ? text_or_empty(tool, "version") : ""};
}

std::vector<std::string> provenance_notes(const std::vector<Provenance>& results, const std::string& judged_profile,
                                          std::size_t names_shown) {
  std::vector<std::string> notes;
  if (results.empty()) return notes;
  if (!all_equal(results, &Provenance::schema))
    notes.push_back("Results of different schemas: " + holders(results, &Provenance::schema, names_shown) + ".");
  bool other_profile = false;
  for (const auto& result : results)
    other_profile =
        other_profile || (!judged_profile.empty() && !result.profile.empty() && result.profile != judged_profile);
  if (other_profile)
    notes.push_back(
        fmt::format("Judged here for `{}`; the runs were planned for: {}. A run planned for another profile "
                    "may lack probes this one needs.",
                    judged_profile, holders(results, &Provenance::profile, names_shown, "no profile")));
  else if (judged_profile.empty() && !all_equal(results, &Provenance::profile))
    notes.push_back("Runs planned for different profiles: " +
                    holders(results, &Provenance::profile, names_shown, "no profile") + ".");
  if (!all_equal(results, &Provenance::level))
    notes.push_back("Runs at different levels (repetitions and sizes differ): " +
                    holders(results, &Provenance::level, names_shown) + ".");
  if (!all_equal(results, &Provenance::tool_version))
    notes.push_back(
        "Runs by different nodeaudit versions: " + holders(results, &Provenance::tool_version, names_shown) + ".");
  return notes;
}

}  // namespace nodeaudit::report
