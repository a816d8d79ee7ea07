// The result document (results/SCHEMA.md): building it, writing it atomically, checking it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/metric.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit {

inline constexpr const char* result_schema = "nodeaudit.result/1";

nlohmann::json metric_to_json(const Metric& metric);
nlohmann::json finding_to_json(const Finding& finding);

// What a probe's entry in the result document is made of, each part named where it is given (a
// probe left out is `{.id = ..., .outcome = Outcome::skipped(why)}`).
struct ProbeRecord {
  std::string id;
  Outcome outcome;
  nlohmann::json params = nlohmann::json::object();
  double duration_s = 0;
  std::vector<Metric> metrics;
  std::vector<Finding> findings;
  nlohmann::json info = nlohmann::json::object();
};

// A probe entry with everything but telemetry.
nlohmann::json probe_entry(const ProbeRecord& record);

// The top-level document with no probes yet.
nlohmann::json new_result_document(const std::string& level, const std::string& profile,
                                   const std::vector<std::string>& command, const nlohmann::json& env);

std::string utc_now_iso8601();
// "results/<host>-<UTC time>.json" under `dir`.
std::string default_result_name(const std::string& host);

// Problems found in a document against the schema; empty when it conforms.
std::vector<std::string> validate_result(const nlohmann::json& doc);

// Reads and checks a result file. Throws UsageError naming the file for: unreadable, empty,
// truncated or corrupt JSON, not a nodeaudit result, another schema version.
nlohmann::json load_result_file(const std::string& path);

// Writes `content` to `path` through a temp file in the same directory and rename(2), so readers
// never see half a file. With `must_be_new` the rename refuses to replace an existing file.
// Throws UsageError on failure, leaving no temp file behind.
void write_file_atomic(const std::string& path, const std::string& content, bool must_be_new);
// The same with a new name only, for a caller that picks another name when this one is taken:
// false when `path` exists (left untouched), true when written.
bool write_new_file_atomic(const std::string& path, const std::string& content);

}  // namespace nodeaudit
