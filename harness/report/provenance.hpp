// Results that do not belong together are named, never silently mixed: a result run for another
// profile than the one the report judges for, results from different levels or nodeaudit versions.
// (A result of another schema never gets this far: the loader refuses it, naming its schema.)
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::report {

struct Provenance {
  std::string node;
  std::string schema, profile, level, tool_version;  // "" when the result does not say
};

Provenance provenance_of(const std::string& node, const nlohmann::json& doc);

// One sentence per field that differs across the results (or, for the profile, from the profile
// judged for), naming which nodes hold which value; at most `names_shown` names per value.
std::vector<std::string> provenance_notes(const std::vector<Provenance>& results, const std::string& judged_profile,
                                          std::size_t names_shown = 10);

}  // namespace nodeaudit::report
