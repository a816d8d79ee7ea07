// `nodeaudit compare BASELINE.json [BASELINE.json ..] CANDIDATE.json`: which figures moved beyond
// the node's run-to-run noise after an upgrade, environment differences first. Several baselines
// (runs of the node before the change) pool their per-run figures into the noise band. A folder as a
// baseline, or --history DIR, takes this host's earlier runs from it (history.hpp), each a run of its
// own. --confirm re-runs on this node the probes of the figures it would call regressed and keeps a
// regression only where the re-run shows it too (compare_confirm.cpp). Exit 0 no regression, 1
// regression, 2 bad input; inconclusive and disturbed figures never exit 1.
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "harness/cli/commands.hpp"
#include "harness/cli/compare_confirm.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/report/cli_args.hpp"
#include "harness/report/compare.hpp"
#include "harness/report/compare_render.hpp"
#include "harness/report/history.hpp"

namespace nodeaudit::cli {

namespace {

struct CompareCliOptions {
  std::vector<std::string> files;  // baselines, then the candidate
  std::string tolerance = "5%";
  std::vector<std::string> metric_tolerances;
  std::string junit, md, history;
  bool confirm = false;
};

report::CompareOptions compare_options(const CompareCliOptions& o) {
  report::CompareOptions options;
  options.tolerance_pct = report::parse_percent("--tolerance", o.tolerance);
  if (options.tolerance_pct > 100)
    throw UsageError("--tolerance " + o.tolerance, "expected a percentage from 0 to 100 (5%, 2.5%, 10)");
  for (const auto& text : o.metric_tolerances) {
    const auto [name, percent] = report::split_assignment("--metric-tolerance", text);
    const double pct = report::parse_percent("--metric-tolerance " + name, percent);
    if (pct > 100)
      throw UsageError("--metric-tolerance " + text, "expected a percentage from 0 to 100 (5%, 2.5%, 10)");
    options.metric_tolerance_pct[name] = pct;
  }
  return options;
}

// A --metric-tolerance for a figure none of the results holds would silently change nothing.
void check_tolerances_name_figures(const report::CompareOptions& options, const report::Comparison& comparison) {
  std::set<std::string> names;
  auto add = [&names](const report::MetricRecord& r) {
    names.insert(r.name);
    names.insert(r.probe + ":" + r.name);
  };
  for (const auto& m : comparison.metrics) add(m.baseline);
  for (const auto& r : comparison.only_in_baseline) add(r);
  for (const auto& r : comparison.only_in_candidate) add(r);
  for (const auto& [name, pct] : options.metric_tolerance_pct)
    if (!names.count(name))
      throw UsageError("--metric-tolerance " + name,
                       "no figure of that name in these results; give a metric name (latency_p99) or "
                       "PROBE:METRIC (storage.read:latency_p99) that they hold");
}

// The baselines: each file as given, a folder's runs of the candidate's host, and --history's.
std::vector<report::LabelledResult> load_baselines(const CompareCliOptions& o, const report::LabelledResult& candidate,
                                                   report::CompareOptions& options) {
  std::vector<report::LabelledResult> baselines;
  const std::string host = report::host_of(candidate.doc);
  const auto add_history = [&](const std::string& option, const std::string& dir) {
    for (auto& run : report::load_history(option, dir, host, candidate.label)) baselines.push_back(std::move(run));
    options.each_file_one_run = true;
  };
  for (std::size_t i = 0; i + 1 < o.files.size(); ++i) {
    std::error_code ec;
    if (std::filesystem::is_directory(o.files[i], ec)) add_history("compare", o.files[i]);
    else baselines.push_back({o.files[i], load_result_file(o.files[i])});
  }
  if (!o.history.empty()) add_history("--history", o.history);
  if (baselines.empty())
    throw UsageError("compare " + o.files.back(), "no baseline: give BASELINE.json [..] CANDIDATE.json, a results folder, or --history DIR");
  return baselines;
}

int run_compare(const CompareCliOptions& o) {
  report::CompareOptions options = compare_options(o);
  report::check_outputs_are_new({{"--junit", o.junit}, {"--md", o.md}});
  const report::LabelledResult candidate{o.files.back(), load_result_file(o.files.back())};
  if (o.confirm) check_confirmable(candidate);
  const std::vector<report::LabelledResult> baselines = load_baselines(o, candidate, options);
  report::Comparison comparison = report::compare_results(baselines, candidate, options);
  check_tolerances_name_figures(options, comparison);
  if (o.confirm) confirm_regressions(comparison, baselines, candidate, options);
  const std::string markdown = report::render_compare_markdown(comparison);
  if (!o.junit.empty()) write_file_atomic(o.junit, report::render_compare_junit(comparison), true);
  if (!o.md.empty()) write_file_atomic(o.md, markdown, true);
  std::cout << markdown;
  return comparison.has_regression() ? exit_fail : exit_ok;
}

}  // namespace

void add_compare_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand(
      "compare",
      "Compare results: BASELINE [BASELINE ..] CANDIDATE; environment changes, then each figure that moved beyond the "
      "run-to-run noise (exit 1 on a regression)");
  auto o = std::make_shared<CompareCliOptions>();
  cmd->add_option("files", o->files,
                  "Results before the change (one or more runs of the node; nodeaudit.result/1 JSON, or a results folder whose runs "
                  "of the candidate's host are taken), then the result after it")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--history", o->history,
                  "A results folder: this host's earlier runs in it join the baselines, each as one run (their scatter is the noise band)");
  cmd->add_flag("--confirm", o->confirm,
                "Re-run on this node the probes of the figures that would be called regressed (the candidate must be this "
                "node's run) and call a regression only where the re-run shows it too");
  cmd->add_option("--tolerance", o->tolerance,
                  "Change that counts (0 to 100%), when it is also beyond the noise band measured on this "
                  "node from the rounds (wider for tail figures)")
      ->capture_default_str();
  cmd->add_option("--metric-tolerance", o->metric_tolerances,
                  "NAME=PCT for one metric: NAME is a metric name (latency_p99) or PROBE:METRIC (storage.read:latency_p99); repeatable");
  cmd->add_option("--junit", o->junit, "Also write JUnit XML, one testcase per metric (FILE must not exist)");
  cmd->add_option("--md", o->md, "Also write the Markdown printed on stdout to FILE (must not exist)");
  cmd->callback([&action, o] { action = [o] { return run_compare(*o); }; });
}

}  // namespace nodeaudit::cli
