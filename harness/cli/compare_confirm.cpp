#include "harness/cli/compare_confirm.hpp"

#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/owned_dir.hpp"
#include "harness/core/process_group.hpp"
#include "harness/core/result.hpp"
#include "harness/node/env.hpp"
#include "harness/report/history.hpp"
#include "harness/report/metric_index.hpp"
#include "harness/session/run_options.hpp"

namespace nodeaudit::cli {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> recorded_command(const nlohmann::json& doc) {
  std::vector<std::string> words;
  for (const auto& w : doc.value("command", nlohmann::json::array()))
    if (w.is_string()) words.push_back(w.get<std::string>());
  return words;
}

// The recorded run's options that decide what a probe measures (its level, its data, its rounds),
// and none that writes a file or picks probes.
std::vector<std::string> measuring_options(const std::vector<std::string>& recorded) {
  static const std::set<std::string> kept = {"--level", "--data-dir", "--rounds"};
  std::vector<std::string> out;
  for (std::size_t i = 2; i < recorded.size(); ++i) {
    const std::string& word = recorded[i];
    const auto eq = word.find('=');
    if (kept.count(word.substr(0, eq))) {
      out.push_back(word);
      if (eq == std::string::npos && i + 1 < recorded.size()) out.push_back(recorded[++i]);
    }
  }
  return out;
}

std::string regressed_probes(const report::Comparison& comparison) {
  std::set<std::string> probes;
  for (const auto& m : comparison.metrics)
    if (m.verdict == report::Verdict::regression) probes.insert(m.candidate.probe);
  std::string list;
  for (const auto& p : probes) list += (list.empty() ? "" : ",") + p;
  return list;
}

// Runs `nodeaudit run --only PROBES` as the candidate was run, into a scratch folder of its own;
// the re-run's result document.
nlohmann::json rerun(const std::vector<std::string>& recorded, const std::string& probes) {
  std::string error;
  const std::string dir = make_owned_dir(fs::temp_directory_path().string(), "nodeaudit-confirm", error);
  if (dir.empty()) throw UsageError("--confirm", "cannot make a scratch folder for the re-run: " + error);
  std::vector<std::string> args = {session::self_exe_path(), "run", "--only", probes, "--out", dir + "/rerun.json"};
  for (auto& w : measuring_options(recorded)) args.push_back(std::move(w));
  std::cerr << "compare --confirm: running " << probes << " again on this node\n";
  const GroupEnd end = run_in_own_group(args, dir + "/rerun.log", 3 * 3600.0, [] { return false; });
  nlohmann::json doc;
  std::string why;
  try {
    if (end.started && end.exit_code >= 0 && end.exit_code != 2)
      doc = load_result_file(dir + "/rerun.json");
    else
      why =
          end.start_error.empty() ? fmt::format("the re-run ended with exit code {}", end.exit_code) : end.start_error;
  } catch (const UsageError& e) {
    why = e.what();
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (doc.is_null()) throw UsageError("--confirm", "the re-run of " + probes + " gave no result: " + why);
  return doc;
}

}  // namespace

void check_confirmable(const report::LabelledResult& candidate) {
  const std::string host = report::host_of(candidate.doc), here = host_name();
  if (host != here)
    throw UsageError(
        "--confirm",
        fmt::format("the candidate {} was run on {}, not on this host ({}): only this node's probes can be "
                    "run again here",
                    candidate.label, host, here));
  const auto recorded = recorded_command(candidate.doc);
  if (recorded.size() < 2 || recorded[1] != "run")
    throw UsageError("--confirm", "the candidate " + candidate.label +
                                      " was not written by `nodeaudit run`; only a run's probes can be run again");
}

void confirm_regressions(report::Comparison& comparison, const std::vector<report::LabelledResult>& baselines,
                         const report::LabelledResult& candidate, const report::CompareOptions& options) {
  const std::string probes = regressed_probes(comparison);
  if (probes.empty()) return;
  const report::LabelledResult again{"re-run", rerun(recorded_command(candidate.doc), probes)};
  const report::Comparison second = report::compare_results(baselines, again, options);
  for (auto& m : comparison.metrics) {
    if (m.verdict != report::Verdict::regression) continue;
    const auto repeat = std::find_if(second.metrics.begin(), second.metrics.end(), [&](const report::MetricChange& c) {
      return report::pairing_key(c.candidate) == report::pairing_key(m.candidate);
    });
    if (repeat != second.metrics.end() && repeat->verdict == report::Verdict::regression) {
      m.why += fmt::format("; confirmed: the re-run on this node moved it {:+.1f}% too", repeat->delta_pct.value_or(0));
      continue;
    }
    m.verdict = report::Verdict::inconclusive;
    m.why += "; not confirmed: the re-run on this node " +
             (repeat == second.metrics.end() ? std::string("did not measure it")
                                             : "was " + report::to_string(repeat->verdict) + " (" + repeat->why + ")");
  }
}

}  // namespace nodeaudit::cli
