// `nodeaudit report R1.json R2.json ..`: several nodes side by side for a vendor comparison, with
// each node's assessment for a profile and the cost of one effective training run. Prints the
// Markdown; --md/--html also write it to files that must not exist. With --fleet: many nodes judged
// against each other (harness/report/fleet_judge.hpp), exit 1 when a node fails.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "harness/cli/commands.hpp"
#include "harness/cli/workload_options.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/report/cli_args.hpp"
#include "harness/report/fleet_cli.hpp"
#include "harness/report/report_formats.hpp"
#include "harness/report/report_markdown.hpp"
#include "harness/report/report_model.hpp"

namespace nodeaudit::cli {

namespace {

struct ReportCliOptions {
  std::vector<std::string> results;
  std::vector<std::string> names, prices;
  std::string profile;
  std::map<std::string, std::string> format_files;  // a report format's option -> the file it writes (report_formats.hpp)
  std::string target_gpus;
  std::string expect;
  bool redact = false;
  bool fleet = false;
  report::FleetOptionText fleet_options;
};

std::string file_for(const ReportCliOptions& o, const std::string& option) {
  const auto it = o.format_files.find(option);
  return it == o.format_files.end() ? "" : it->second;
}

// --fleet judges the nodes against each other: the per-node options of a vendor report do not apply.
int run_fleet_report(const ReportCliOptions& o) {
  const std::vector<std::pair<std::string, bool>> vendor_only = {
      {"--name", !o.names.empty()}, {"--price", !o.prices.empty()}, {"--profile", !o.profile.empty()},
      {"--target-gpus", !o.target_gpus.empty()}, {"--redact", o.redact}};
  for (const auto& [option, given] : vendor_only)
    if (given)
      throw UsageError(option + " with --fleet", "a fleet report judges nodes against each other and names them by "
                                                 "hostname; drop " + option + ", or drop --fleet for a vendor report");
  const report::FleetRun run = report::run_fleet(o.results, report::parse_fleet_options(o.fleet_options),
                                                 file_for(o, "--md"), file_for(o, "--html"));
  std::cout << run.markdown;
  return run.any_node_failed ? exit_fail : exit_ok;
}

// --name KEY=NAME: KEY is the path as given, the file name or its stem.
std::string name_for(const std::string& path, std::size_t index, const std::map<std::string, std::string>& names, bool redact,
                     std::set<std::string>& used_keys) {
  const std::filesystem::path p(path);
  for (const auto& key : {path, p.filename().string(), p.stem().string()})
    if (const auto it = names.find(key); it != names.end()) return used_keys.insert(key), it->second;
  // A result's default file name carries its hostname, so a redacted report numbers the nodes.
  return redact ? "node-" + std::to_string(index + 1) : p.stem().string();
}

std::vector<report::NodeInput> load_inputs(const ReportCliOptions& o) {
  std::map<std::string, std::string> names;
  for (const auto& text : o.names) names.insert(report::split_assignment("--name", text));
  std::map<std::string, double> prices;
  for (const auto& text : o.prices) {
    const auto [name, amount] = report::split_assignment("--price", text);
    prices[name] = report::parse_amount("--price " + name, amount);
  }
  std::vector<report::NodeInput> inputs;
  std::set<std::string> used_keys, node_names;
  for (std::size_t i = 0; i < o.results.size(); ++i) {
    std::error_code ec;
    if (std::filesystem::is_directory(o.results[i], ec))
      throw UsageError(o.results[i], "is a directory; give result files, or --fleet to read every result in a directory");
    report::NodeInput input{name_for(o.results[i], i, names, o.redact, used_keys), o.results[i], load_result_file(o.results[i]), {}};
    if (!node_names.insert(input.name).second)
      throw UsageError("node name '" + input.name + "'", "given to two results; name them apart with --name FILE=NAME");
    if (const auto it = prices.find(input.name); it != prices.end()) input.price_per_hour = it->second;
    inputs.push_back(std::move(input));
  }
  for (const auto& [key, name] : names)
    if (!used_keys.count(key)) throw UsageError("--name " + key + "=" + name, "matches no result given (use the path, file name or stem)");
  std::string known;
  for (const auto& name : node_names) known += (known.empty() ? "" : ", ") + name;
  for (const auto& [name, amount] : prices)
    if (!node_names.count(name)) throw UsageError("--price " + name, "names no node; the nodes are: " + known);
  return inputs;
}

int run_report(const ReportCliOptions& o) {
  if (o.fleet) return run_fleet_report(o);
  const report::FleetOptionText& f = o.fleet_options;
  for (const auto& [option, given] : std::vector<std::pair<std::string, bool>>{
           {"--outlier-mad", !f.outlier_mad.empty()}, {"--outlier-floor", !f.outlier_floor.empty()},
           {"--gpu-below-best", !f.gpu_below_best.empty()}, {"--fail-on-drift", f.fail_on_drift},
           {"--all-runs", f.all_runs}})
    if (given) throw UsageError(option, "applies only with --fleet");
  std::vector<report::OutputFile> outputs;
  for (const report::ReportFormat& format : report::report_formats())
    outputs.push_back({format.option, file_for(o, format.option)});
  report::check_outputs_are_new(outputs);
  const std::vector<report::NodeInput> inputs = load_inputs(o);
  std::optional<score::Profile> profile;
  if (!o.profile.empty()) profile = score::load_profile(o.profile);
  if (!o.expect.empty()) {
    if (!profile)
      throw UsageError("--expect " + o.expect, "needs --profile: the grades are part of each node's assessment");
    score::apply_expect_file(*profile, o.expect);
  }
  std::optional<score::TargetGpus> target;
  if (!o.target_gpus.empty()) {
    if (!profile) throw UsageError("--target-gpus " + o.target_gpus, "needs --profile: the GPUs are judged for a workload");
    target = score::parse_target_gpus(o.target_gpus);
    score::check_target_serves(*target, *profile);
  }
  const report::Report built =
      report::build_report(inputs, profile ? &*profile : nullptr, o.redact, target ? &*target : nullptr);
  for (const report::ReportFormat& format : report::report_formats())
    if (const std::string path = file_for(o, format.option); !path.empty())
      write_file_atomic(path, format.render(built), true);
  std::cout << report::render_report_markdown(built);
  return exit_ok;
}

}  // namespace

void add_report_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand(
      "report", "Several nodes side by side: shared figures, assessment per node, cost of one effective run (Markdown, HTML)");
  auto o = std::make_shared<ReportCliOptions>();
  cmd->add_option("results", o->results, "Result files (nodeaudit.result/1 JSON), one per node; with --fleet also directories")
      ->required();
  cmd->add_option("--name", o->names, "FILE=NAME: what to call a node (FILE is the path, file name or stem); repeatable");
  cmd->add_option("--price", o->prices, "NAME=PRICE: hourly price of a node, to cost one run (needs --profile); repeatable");
  add_profile_option(*cmd, o->profile);
  add_target_gpus_option(*cmd, o->target_gpus);
  add_expect_option(*cmd, o->expect);
  for (const report::ReportFormat& format : report::report_formats())
    cmd->add_option(format.option, o->format_files[format.option], format.help);
  cmd->add_flag("--redact", o->redact, "Remove hostnames, serial numbers, UUIDs, PCI bus ids and command lines");
  cmd->add_flag("--fleet", o->fleet,
                "Judge many nodes against each other (RESULTS may be directories): outlier nodes and GPUs against the "
                "fleet median (median and MAD), GPUs against their node's best, configuration drift; exit 1 when a node fails");
  cmd->add_option("--outlier-mad", o->fleet_options.outlier_mad,
                  "With --fleet: a node or GPU fails a figure beyond K scaled MADs from the fleet median (default 3)");
  cmd->add_option("--outlier-floor", o->fleet_options.outlier_floor,
                  "With --fleet: ... and beyond PCT of the median, so near-identical nodes do not fail on noise (default 5%)");
  cmd->add_option("--gpu-below-best", o->fleet_options.gpu_below_best,
                  "With --fleet: a GPU more than PCT below the best GPU of its node fails (default 10%)");
  cmd->add_flag("--fail-on-drift", o->fleet_options.fail_on_drift,
                "With --fleet: nodes off the most common driver, firmware, kernel, ... value fail too");
  cmd->add_flag("--all-runs", o->fleet_options.all_runs,
                "With --fleet: judge every result of a node, each run a row 'host @ start time' (drift over time); "
                "by default a node's newest run is judged and the older ones are listed as left out");
  cmd->callback([&action, o] { action = [o] { return run_report(*o); }; });
}

}  // namespace nodeaudit::cli
