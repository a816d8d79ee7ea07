#include "harness/report/history.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "harness/core/change_test.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/core/stats.hpp"
#include "harness/report/metric_index.hpp"

namespace nodeaudit::report {

namespace fs = std::filesystem;

std::string host_of(const nlohmann::json& doc) {
  const nlohmann::json::json_pointer pointer("/env/host/hostname");
  if (doc.contains(pointer) && doc.at(pointer).is_string()) return doc.at(pointer).get<std::string>();
  return "unknown host";
}

namespace {

bool same_file(const fs::path& a, const std::string& b) {
  if (b.empty()) return false;
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

std::string hosts_text(const std::map<std::string, int>& hosts) {
  if (hosts.empty()) return "no nodeaudit results at all";
  std::string text;
  for (const auto& [host, count] : hosts)
    text += fmt::format("{}{} ({} run{})", text.empty() ? "" : ", ", host, count, count == 1 ? "" : "s");
  return "results of " + text + " only";
}

}  // namespace

namespace {

// The runs of `host` in `dir`, oldest first, and how many results each host has there.
std::vector<LabelledResult> runs_in(const std::string& dir, const std::string& host, const std::string& except_path,
                                    std::map<std::string, int>& hosts) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json" && !same_file(entry.path(), except_path))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, LabelledResult>> runs;  // start time, result
  for (const auto& file : files) {
    nlohmann::json doc;
    try {
      doc = load_result_file(file.string());
    } catch (const UsageError&) {
      continue;  // not a result (a profile, a watch document, a damaged file): not a run of this node
    }
    const std::string its_host = host_of(doc);
    ++hosts[its_host];
    if (its_host == host) runs.push_back({doc.value("started_at", ""), LabelledResult{file.string(), std::move(doc)}});
  }
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<LabelledResult> out;
  for (auto& [started, result] : runs) out.push_back(std::move(result));
  return out;
}

}  // namespace

std::vector<LabelledResult> load_history(const std::string& option, const std::string& dir, const std::string& host,
                                         const std::string& except_path) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(option + " " + dir, "not a folder; give the results folder of earlier runs (results/)");
  std::map<std::string, int> hosts;
  std::vector<LabelledResult> runs = runs_in(dir, host, except_path, hosts);
  if (runs.empty())
    throw UsageError(option + " " + dir,
                     fmt::format("no run of this host ({}) in it; it holds {}", host, hosts_text(hosts)));
  return runs;
}

std::string history_line(const nlohmann::json& doc, const std::string& out_path) {
  const fs::path dir = fs::path(out_path).parent_path().empty() ? fs::path(".") : fs::path(out_path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "";
  std::map<std::string, int> hosts;
  const std::vector<LabelledResult> runs = runs_in(dir.string(), host_of(doc), out_path, hosts);
  std::string line = fmt::format("earlier runs of this host in {}/: {}", dir.string(), runs.size());
  if (runs.size() < 2)
    return line + "; a compare measures the noise between runs from 2 or more (`compare " + dir.string() +
           "/ NEW.json`)\n";
  std::vector<std::string> parts;
  std::set<std::string> probes_seen;
  for (const auto& headline : collect_metrics(doc)) {
    if (!probes_seen.insert(headline.probe).second) continue;  // each probe's first figure is its headline
    std::vector<double> values;
    const std::string key = pairing_key(headline);
    for (const auto& run : runs)
      for (const auto& record : collect_metrics(run.doc))
        if (pairing_key(record) == key) {
          values.push_back(record.median);
          break;
        }
    const double pct = smallest_callable_change_pct(values);
    parts.push_back(fmt::format("{} {} {}", headline.probe, headline.name,
                                std::isfinite(pct)
                                    ? fmt::format("{:.1f}%", pct)
                                    : fmt::format("not known ({} earlier runs hold it)", values.size())));
  }
  if (parts.empty()) return line + "\n";
  line +=
      "; the smallest change of each probe's first figure a compare of one new run with them can call (99% t-interval "
      "from their scatter): ";
  for (std::size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : "") + parts[i];
  return line + "\n";
}

double smallest_callable_change_pct(const std::vector<double>& history_runs) {
  const Summary runs = summarize(history_runs);
  if (runs.n < 2 || runs.mean == 0) return HUGE_VAL;
  return 100.0 * smallest_callable_change(runs.stdev / std::fabs(runs.mean), runs.n, 1);
}

}  // namespace nodeaudit::report
