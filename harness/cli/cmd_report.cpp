// `nodeaudit report R1.json R2.json ..`: several nodes side by side for a vendor comparison, with
// each node's assessment for a profile and the cost of one effective training run. Prints the
// Markdown; --md/--html also write it to files that must not exist.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "../errors.hpp"
#include "../result.hpp"
#include "commands.hpp"
#include "report/cli_args.hpp"
#include "report/report_html.hpp"
#include "report/report_markdown.hpp"
#include "report/report_model.hpp"

namespace nodeaudit::cli {

namespace {

struct ReportCliOptions {
  std::vector<std::string> results;
  std::vector<std::string> names, prices;
  std::string profile, md, html;
  std::string target_gpus;
  std::string expect;
  bool redact = false;
};

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
  report::check_outputs_are_new({{"--md", o.md}, {"--html", o.html}});
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
  const std::string markdown = report::render_report_markdown(built);
  if (!o.html.empty()) write_file_atomic(o.html, report::render_report_html(built), true);
  if (!o.md.empty()) write_file_atomic(o.md, markdown, true);
  std::cout << markdown;
  return exit_ok;
}

}  // namespace

void add_report_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand(
      "report", "Several nodes side by side: shared figures, assessment per node, cost of one effective run (Markdown, HTML)");
  auto o = std::make_shared<ReportCliOptions>();
  cmd->add_option("results", o->results, "Result files (nodeaudit.result/1 JSON), one per node")->required();
  cmd->add_option("--name", o->names, "FILE=NAME: what to call a node (FILE is the path, file name or stem); repeatable");
  cmd->add_option("--price", o->prices, "NAME=PRICE: hourly price of a node, to cost one run (needs --profile); repeatable");
  cmd->add_option("--profile", o->profile, "Workload profile NAME or FILE.toml to assess each node for");
  cmd->add_option("--target-gpus", o->target_gpus,
                  "Assess every node for these GPUs (MODELxCOUNT or FILE.toml) instead of its own; GPU-side figures "
                  "from the GPU table, labelled datasheet (not measured)");
  cmd->add_option("--expect", o->expect,
                  "TOML file with an [expect] section: grading limits and expected values (needs --profile)");
  cmd->add_option("--md", o->md, "Write the Markdown report to FILE (must not exist)");
  cmd->add_option("--html", o->html, "Write a self-contained HTML report with SVG charts to FILE (must not exist)");
  cmd->add_flag("--redact", o->redact, "Remove hostnames, serial numbers, UUIDs, PCI bus ids and command lines");
  cmd->callback([&action, o] { action = [o] { return run_report(*o); }; });
}

}  // namespace nodeaudit::cli
