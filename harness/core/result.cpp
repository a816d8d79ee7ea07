#include "harness/core/result.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/input_file.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/version.hpp"

namespace nodeaudit {

nlohmann::json metric_to_json(const Metric& metric) {
  const Summary s = summarize(metric.samples);
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : metric.labels) labels[k] = v;
  return {{"name", metric.name},     {"unit", metric.unit},     {"better", metric.better == Better::higher ? "higher" : "lower"},
          {"labels", labels},        {"n", s.n},                {"median", s.median},
          {"mean", s.mean},          {"min", s.min},            {"max", s.max},
          {"p5", s.p5},              {"p95", s.p95},            {"stdev", s.stdev},
          {"cv", s.cv},              {"ci95", {s.ci95_lo, s.ci95_hi}}, {"samples", metric.samples}};
}

nlohmann::json finding_to_json(const Finding& finding) {
  return {{"severity", to_string(finding.severity)}, {"code", finding.code}, {"message", finding.message}};
}

nlohmann::json probe_entry(const ProbeRecord& r) {
  nlohmann::json entry = {{"id", r.id},
                          {"status", to_string(r.outcome.status)},
                          {"reason", r.outcome.reason},
                          {"params", r.params},
                          {"duration_s", r.duration_s},
                          {"metrics", nlohmann::json::array()},
                          {"findings", nlohmann::json::array()},
                          {"info", r.info},
                          {"telemetry", nlohmann::json::object()}};
  if (r.outcome.input_error) entry["input_error"] = true;
  for (const auto& m : r.metrics) entry["metrics"].push_back(metric_to_json(m));
  for (const auto& f : r.findings) entry["findings"].push_back(finding_to_json(f));
  return entry;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string default_result_name(const std::string& host) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return host + "-" + buf + ".json";
}

nlohmann::json new_result_document(const std::string& level, const std::string& profile,
                                   const std::vector<std::string>& command, const nlohmann::json& env) {
  return {{"schema", result_schema},
          {"tool", {{"version", version_string()}, {"git_commit", git_commit()}}},
          {"started_at", utc_now_iso8601()},
          {"finished_at", nullptr},
          {"level", level},
          {"profile", profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(profile)},
          {"command", command},
          {"env", env},
          {"probes", nlohmann::json::array()},
          {"assessment", nullptr}};
}

namespace {

void require(std::vector<std::string>& problems, bool ok, const std::string& what) {
  if (!ok) problems.push_back(what);
}

void validate_metric(std::vector<std::string>& problems, const nlohmann::json& m, const std::string& where) {
  if (!m.is_object()) return problems.push_back(where + " is not an object");
  require(problems, m.contains("name") && m["name"].is_string(), where + ".name missing or not a string");
  require(problems, m.contains("unit") && m["unit"].is_string(), where + ".unit missing or not a string");
  require(problems, m.value("better", "") == "higher" || m.value("better", "") == "lower", where + ".better must be higher or lower");
  require(problems, m.contains("labels") && m["labels"].is_object(), where + ".labels missing");
  for (const char* key : {"median", "mean", "min", "max", "p5", "p95", "cv"})
    require(problems, m.contains(key) && m[key].is_number(), where + "." + key + " missing or not a number");
  require(problems, m.contains("n") && m["n"].is_number_integer(), where + ".n missing");
  require(problems, m.contains("ci95") && m["ci95"].is_array() && m["ci95"].size() == 2, where + ".ci95 must be [lo, hi]");
  require(problems, m.contains("samples") && m["samples"].is_array(), where + ".samples missing");
  if (m.contains("samples") && m["samples"].is_array() && m.contains("n") && m["n"].is_number_integer())
    require(problems, m["samples"].size() == m["n"].get<std::size_t>(), where + ".n does not match the sample count");
  if (m.contains("round_medians")) {
    const nlohmann::json& medians = m["round_medians"];
    const bool numbers = medians.is_array() && std::all_of(medians.begin(), medians.end(), [](const auto& v) { return v.is_number(); });
    require(problems, numbers, where + ".round_medians must be an array of numbers");
  }
}

void validate_probe(std::vector<std::string>& problems, const nlohmann::json& p, const std::string& where) {
  if (!p.is_object()) return problems.push_back(where + " is not an object");
  require(problems, p.contains("id") && p["id"].is_string(), where + ".id missing");
  try {
    parse_status(p.value("status", ""));
  } catch (const std::exception&) {
    problems.push_back(where + ".status must be ok|skipped|failed|crashed|timeout|interrupted");
  }
  require(problems, p.contains("reason") && p["reason"].is_string(), where + ".reason missing");
  require(problems, p.contains("params") && p["params"].is_object(), where + ".params missing");
  require(problems, p.contains("duration_s") && p["duration_s"].is_number(), where + ".duration_s missing");
  require(problems, p.contains("findings") && p["findings"].is_array(), where + ".findings missing");
  require(problems, p.contains("telemetry") && p["telemetry"].is_object(), where + ".telemetry missing");
  if (p.contains("rounds")) require(problems, p["rounds"].is_number_integer() && p["rounds"].get<int>() >= 1, where + ".rounds must be a whole number >= 1");
  if (p.contains("disturbed")) require(problems, p["disturbed"].is_boolean(), where + ".disturbed must be true or false");
  if (p.value("disturbed", false))
    require(problems, p.contains("disturbance") && p["disturbance"].is_object(), where + ".disturbed without a disturbance block");
  if (!p.contains("metrics") || !p["metrics"].is_array()) return problems.push_back(where + ".metrics missing");
  for (std::size_t i = 0; i < p["metrics"].size(); ++i) validate_metric(problems, p["metrics"][i], fmt::format("{}.metrics[{}]", where, i));
  if (!p.contains("findings") || !p["findings"].is_array()) return;
  for (const auto& f : p["findings"]) {
    const std::string sev = f.is_object() ? f.value("severity", "") : "";
    require(problems, sev == "fail" || sev == "warn" || sev == "info", where + ".findings[].severity must be fail|warn|info");
  }
}

}  // namespace

std::vector<std::string> validate_result(const nlohmann::json& doc) {
  std::vector<std::string> problems;
  if (!doc.is_object()) return {"document is not a JSON object"};
  if (doc.value("schema", "") != result_schema) return {fmt::format("schema is not \"{}\"", result_schema)};
  require(problems, doc.contains("tool") && doc["tool"].contains("version") && doc["tool"].contains("git_commit"), "tool.version / tool.git_commit missing");
  require(problems, doc.contains("started_at") && doc["started_at"].is_string(), "started_at missing");
  require(problems, doc.contains("finished_at"), "finished_at missing");
  const std::string level = doc.value("level", "");
  require(problems, level == "quick" || level == "standard" || level == "soak", "level must be quick|standard|soak");
  require(problems, doc.contains("env") && doc["env"].contains("host"), "env.host missing");
  if (!doc.contains("probes") || !doc["probes"].is_array()) {
    problems.push_back("probes missing");
    return problems;
  }
  for (std::size_t i = 0; i < doc["probes"].size(); ++i) validate_probe(problems, doc["probes"][i], fmt::format("probes[{}]", i));
  return problems;
}

nlohmann::json load_result_file(const std::string& path) {
  const std::string text = read_input_file(path, path == "-" ? std::string("standard input") : path, max_result_bytes);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw UsageError(path, "is empty; expected a nodeaudit result (JSON)");
  const nlohmann::json doc = parse_json_input(text, path);
  if (!doc.is_object() || !doc.contains("schema"))
    throw UsageError(path, fmt::format("is not a nodeaudit result (no \"schema\": \"{}\")", result_schema));
  if (!doc["schema"].is_string() || doc["schema"] != result_schema)
    throw UsageError(path, fmt::format("has schema {}; this nodeaudit reads only \"{}\"", doc["schema"].dump(), result_schema));
  const auto problems = validate_result(doc);
  if (!problems.empty()) throw UsageError(path, "does not match the result schema: " + problems.front());
  return doc;
}

}  // namespace nodeaudit
