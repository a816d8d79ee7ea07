#include "prometheus.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "errors.hpp"
#include "metric_index.hpp"
#include "result.hpp"

namespace nodeaudit::report {

namespace {

std::string sanitize_name(const std::string& text) {
  std::string out;
  for (const char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::string escape_label_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

std::string sample_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

std::string label_block(const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return "";
  std::string out;
  for (const auto& [key, value] : labels)
    out += (out.empty() ? "" : ",") + sanitize_name(key) + "=\"" + escape_label_value(value) + "\"";
  return "{" + out + "}";
}

struct Family {
  std::string help;
  std::vector<std::string> samples;
  std::set<std::string> series;  // label blocks seen: a repeated series would make the file invalid
};

void add_sample(std::map<std::string, Family>& families, std::vector<std::string>& order, const std::string& name,
                const std::string& help, const std::map<std::string, std::string>& labels, double value) {
  auto [it, inserted] = families.try_emplace(name);
  if (inserted) order.push_back(name), it->second.help = help;
  const std::string block = label_block(labels);
  if (!it->second.series.insert(block).second) return;  // the first of duplicate series wins
  it->second.samples.push_back(name + block + " " + sample_value(value));
}

}  // namespace

std::string prometheus_metric_name(const std::string& probe, const std::string& metric) {
  return sanitize_name("nodeaudit_" + probe + "_" + metric);
}

std::string render_prometheus(const nlohmann::json& doc) {
  std::map<std::string, Family> families;
  std::vector<std::string> order;
  for (const auto& probe : doc.at("probes")) {
    const std::string id = probe.at("id").get<std::string>();
    add_sample(families, order, "nodeaudit_probe_ok", "1 when the probe's status is ok, else 0 (the status is a label)",
               {{"probe", id}, {"status", probe.value("status", "?")}}, probe.value("status", "") == "ok" ? 1 : 0);
    add_sample(families, order, "nodeaudit_probe_duration_seconds", "Wall time of the probe, including set-up",
               {{"probe", id}}, probe.value("duration_s", 0.0));
  }
  for (const auto& record : collect_metrics(doc)) {
    const std::string help = fmt::format("{} {} in {} ({} is better), median of the repetitions", record.probe,
                                         record.name, record.unit, record.higher_is_better ? "higher" : "lower");
    add_sample(families, order, prometheus_metric_name(record.probe, record.name), help, record.labels, record.median);
  }
  std::string out = std::string(prometheus_header) + "\n";
  for (const auto& name : order) {
    const Family& family = families.at(name);
    out += "# HELP " + name + " " + escape_help(family.help) + "\n# TYPE " + name + " gauge\n";
    for (const auto& sample : family.samples) out += sample + "\n";
  }
  return out;
}

namespace {

bool is_our_textfile(const std::string& path) {
  std::ifstream in(path);
  std::string first_line;
  return in && std::getline(in, first_line) && first_line == prometheus_header;
}

}  // namespace

void write_prometheus_textfile(const nlohmann::json& result_doc, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !is_our_textfile(path))
    throw UsageError("--prometheus " + path,
                     "exists and was not written by nodeaudit (its first line is not \"" + std::string(prometheus_header) +
                         "\"); choose a new file or remove it");
  write_file_atomic(path, render_prometheus(result_doc), false);
}

}  // namespace nodeaudit::report
