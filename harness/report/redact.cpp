#include "harness/report/redact.hpp"

#include <regex>
#include <set>
#include <string>

namespace nodeaudit::report {

namespace {

bool is_identifying_key(const std::string& key) {
  static const std::set<std::string> keys = {"hostname", "hosts", "uuid", "pci_bus_id", "command", "serial", "board_id"};
  return keys.count(key) > 0 || key.find("serial") != std::string::npos;
}

// Collects the string values of identifying fields (to scrub them elsewhere), then removes them.
void remove_identifying(nlohmann::json& node, std::set<std::string>& removed_values) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end();) {
      if (is_identifying_key(it.key())) {
        if (it->is_string()) removed_values.insert(it->get<std::string>());
        for (const auto& item : *it)
          if (item.is_string()) removed_values.insert(item.get<std::string>());
        it = node.erase(it);
      } else {
        remove_identifying(*it, removed_values);
        ++it;
      }
    }
  } else if (node.is_array()) {
    for (auto& item : node) remove_identifying(item, removed_values);
  }
}

std::string scrub(std::string text, const std::set<std::string>& removed_values) {
  for (const auto& value : removed_values) {
    if (value.size() < 3) continue;  // too short to be specific; would mangle ordinary words
    for (std::size_t at = text.find(value); at != std::string::npos; at = text.find(value, at + 1))
      text.replace(at, value.size(), redacted_text);
  }
  static const std::regex uuid("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  return std::regex_replace(text, uuid, redacted_text);
}

void scrub_strings(nlohmann::json& node, const std::set<std::string>& removed_values) {
  if (node.is_string()) {
    node = scrub(node.get<std::string>(), removed_values);
  } else if (node.is_structured()) {
    for (auto& item : node) scrub_strings(item, removed_values);
  }
}

}  // namespace

nlohmann::json redact_result(const nlohmann::json& result_doc) {
  nlohmann::json doc = result_doc;
  std::set<std::string> removed_values;
  remove_identifying(doc, removed_values);
  scrub_strings(doc, removed_values);
  return doc;
}

}  // namespace nodeaudit::report
