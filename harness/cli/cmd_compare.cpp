// `nodeaudit compare BASELINE.json CANDIDATE.json`: which figures moved beyond noise after an
// upgrade, environment differences first. Exit 0 no regression, 1 regression, 2 bad input.
#include <iostream>
#include <memory>

#include "../errors.hpp"
#include "../result.hpp"
#include "commands.hpp"
#include "report/cli_args.hpp"
#include "report/compare.hpp"
#include "report/compare_render.hpp"

namespace nodeaudit::cli {

namespace {

struct CompareCliOptions {
  std::string baseline, candidate;
  std::string tolerance = "5%";
  std::vector<std::string> metric_tolerances;
  std::string junit, md;
};

report::CompareOptions compare_options(const CompareCliOptions& o) {
  report::CompareOptions options;
  options.tolerance_pct = report::parse_percent("--tolerance", o.tolerance);
  for (const auto& text : o.metric_tolerances) {
    const auto [name, percent] = report::split_assignment("--metric-tolerance", text);
    options.metric_tolerance_pct[name] = report::parse_percent("--metric-tolerance " + name, percent);
  }
  return options;
}

int run_compare(const CompareCliOptions& o) {
  const report::CompareOptions options = compare_options(o);
  report::check_outputs_are_new({{"--junit", o.junit}, {"--md", o.md}});
  const nlohmann::json baseline = load_result_file(o.baseline);
  const nlohmann::json candidate = load_result_file(o.candidate);
  report::Comparison comparison = report::compare_results(baseline, candidate, options);
  comparison.baseline_label = o.baseline;
  comparison.candidate_label = o.candidate;
  const std::string markdown = report::render_compare_markdown(comparison);
  if (!o.junit.empty()) write_file_atomic(o.junit, report::render_compare_junit(comparison), true);
  if (!o.md.empty()) write_file_atomic(o.md, markdown, true);
  std::cout << markdown;
  return comparison.has_regression() ? exit_fail : exit_ok;
}

}  // namespace

void add_compare_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand(
      "compare", "Compare two results: environment changes, then each figure that moved beyond noise (exit 1 on a regression)");
  auto o = std::make_shared<CompareCliOptions>();
  cmd->add_option("baseline", o->baseline, "Result before the change (nodeaudit.result/1 JSON)")->required();
  cmd->add_option("candidate", o->candidate, "Result after the change")->required();
  cmd->add_option("--tolerance", o->tolerance, "Change in a median that counts, when the 95% intervals also do not overlap")
      ->capture_default_str();
  cmd->add_option("--metric-tolerance", o->metric_tolerances,
                  "NAME=PCT for one metric: NAME is a metric name (latency_p99) or PROBE:METRIC (storage.read:latency_p99); repeatable");
  cmd->add_option("--junit", o->junit, "Also write JUnit XML, one testcase per metric (FILE must not exist)");
  cmd->add_option("--md", o->md, "Also write the Markdown printed on stdout to FILE (must not exist)");
  cmd->callback([&action, o] { action = [o] { return run_compare(*o); }; });
}

}  // namespace nodeaudit::cli
