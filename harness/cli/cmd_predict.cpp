// `nodeaudit predict JOB NODE.json.. ` and `nodeaudit match JOBS.. NODES..`: a job (a learn result,
// which carries what the job measured about itself, or a profile) against nodes' results, through
// the one prediction model. predict: per node the step, samples/s, data wait, GPU utilization, the
// limiting resource and the cost of one effective run; match: a jobs x nodes table with the best
// node for each job. Bad input (a file of another schema, a --price for a node not given): exit 2.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "harness/cli/common_options.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/report/cli_args.hpp"
#include "harness/report/predict_render.hpp"
#include "harness/score/predict.hpp"

namespace nodeaudit::cli {

namespace {

namespace fs = std::filesystem;

struct PredictOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> prices;
  std::string format = "table";
  std::string out, md, html;
  std::string steps, warmup;  // --steps / --warmup: a run of these steps from a cold page cache
};

// The most steps a cold-start prediction follows the page cache through.
constexpr int max_cold_run_steps = 1000000;

std::optional<score::ColdRun> cold_run_of(const PredictOptions& o) {
  if (o.steps.empty()) {
    if (!o.warmup.empty()) throw UsageError("--warmup " + o.warmup, "needs --steps: the warm-up steps before the ones predicted");
    return std::nullopt;
  }
  score::ColdRun run;
  run.steps = whole_number_in("--steps", o.steps, 1, max_cold_run_steps);
  run.warmup_steps = o.warmup.empty() ? 0 : whole_number_in("--warmup", o.warmup, 0, max_cold_run_steps);
  return run;
}

struct Node {
  std::string name, path;
  nlohmann::json doc;
};

// --price NODE=PRICE: NODE is the node's name (its file's stem) or the path as given.
std::map<std::string, double> prices_by_node(const std::vector<std::string>& prices, const std::vector<Node>& nodes) {
  std::map<std::string, double> out;
  for (const auto& text : prices) {
    const auto [key, value] = report::split_assignment("--price", text);
    const double price = report::parse_amount("--price " + text, value);
    std::string matched;
    for (const auto& node : nodes)
      if (key == node.name || key == node.path) matched = node.name;
    if (matched.empty()) {
      std::string names;
      for (const auto& node : nodes) names += (names.empty() ? "" : ", ") + node.name;
      throw UsageError("--price " + text, fmt::format("names no node given; the nodes are: {}", names));
    }
    out[matched] = price;
  }
  return out;
}

Node load_node(const std::string& path, std::set<std::string>& names) {
  Node node{fs::path(path).stem().string(), path, load_result_file(path)};
  if (score::is_learn_result(node.doc))
    throw UsageError(path, "is a learn result (a job), given where a node's result belongs; give the job first");
  if (!names.insert(node.name).second)
    throw UsageError(path, fmt::format("has the same name ({}) as another node given; rename one file", node.name));
  return node;
}

nlohmann::json prediction_document(const std::vector<score::PredictJob>& jobs, const std::vector<Node>& nodes,
                                   const std::map<std::string, double>& prices, const std::optional<score::ColdRun>& cold_run) {
  nlohmann::json doc{{"schema", "nodeaudit.prediction/1"}, {"jobs", nlohmann::json::array()},
                     {"nodes", nlohmann::json::array()}, {"cells", nlohmann::json::array()}};
  for (const auto& node : nodes) doc["nodes"].push_back(node.name);
  for (const auto& job : jobs) {
    doc["jobs"].push_back({{"name", job.name}, {"source", job.source},
                           {"basis", job.measured ? "the job's own measurements carried to each node" : "the profile's declared demand"}});
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& node : nodes) {
      score::CostOptions cost;
      if (const auto it = prices.find(node.name); it != prices.end()) cost.price_per_hour = it->second;
      cells.push_back(score::predict_on_node(job, node.doc, node.name, cost, cold_run));
    }
    doc["cells"].push_back(cells);
  }
  doc["best"] = report::best_nodes(doc);
  return doc;
}

void write_outputs(const PredictOptions& o, const nlohmann::json& doc, bool match) {
  if (!o.out.empty()) write_file_atomic(o.out, doc.dump(2) + "\n", true);
  if (!o.md.empty()) write_file_atomic(o.md, match ? report::render_match_markdown(doc) : report::render_predict_markdown(doc), true);
  if (!o.html.empty()) write_file_atomic(o.html, report::render_match_html(doc), true);
  if (o.format == "json") std::cout << doc.dump(2) << "\n";
  else if (o.format == "md") std::cout << (match ? report::render_match_markdown(doc) : report::render_predict_markdown(doc));
  else std::cout << (match ? report::render_match_terminal(doc) : report::render_predict_terminal(doc));
}

void check_format_and_outputs(const PredictOptions& o) {
  if (o.format != "table" && o.format != "json" && o.format != "md")
    throw UsageError("--format " + o.format, "expected table, json or md");
  report::check_outputs_are_new({{"--out", o.out}, {"--md", o.md}, {"--html", o.html}});
}

int run_predict(const PredictOptions& o) {
  check_format_and_outputs(o);
  const auto cold_run = cold_run_of(o);
  if (o.inputs.size() < 2) throw UsageError("predict", "give a job (a learn result or a profile) and at least one node's result");
  std::vector<score::PredictJob> jobs{score::load_predict_job(o.inputs.front())};
  std::vector<Node> nodes;
  std::set<std::string> names;
  for (std::size_t i = 1; i < o.inputs.size(); ++i) nodes.push_back(load_node(o.inputs[i], names));
  const auto prices = prices_by_node(o.prices, nodes);
  write_outputs(o, prediction_document(jobs, nodes, prices, cold_run), false);
  return 0;
}

// A learn result or a profile is a job; any other result is a node.
bool names_a_job(const std::string& path) {
  const fs::path file(path);
  if (file.extension() == ".toml" || (!file.has_extension() && !file.has_parent_path())) return true;
  return score::is_learn_result(load_result_file(path));
}

int run_match(const PredictOptions& o) {
  check_format_and_outputs(o);
  const auto cold_run = cold_run_of(o);
  std::vector<score::PredictJob> jobs;
  std::vector<Node> nodes;
  std::set<std::string> names;
  for (const auto& path : o.inputs) {
    if (names_a_job(path)) jobs.push_back(score::load_predict_job(path));
    else nodes.push_back(load_node(path, names));
  }
  if (jobs.empty() || nodes.empty())
    throw UsageError("match", fmt::format("needs at least one job (a learn result or a profile) and one node's result; given {} "
                                          "job{} and {} node{}",
                                          jobs.size(), jobs.size() == 1 ? "" : "s", nodes.size(), nodes.size() == 1 ? "" : "s"));
  const auto prices = prices_by_node(o.prices, nodes);
  write_outputs(o, prediction_document(jobs, nodes, prices, cold_run), true);
  return 0;
}

void add_common(CLI::App* cmd, const std::shared_ptr<PredictOptions>& o, bool html) {
  cmd->add_option("--price", o->prices, "NODE=PRICE: the node's hourly price, to cost one effective run (NODE: its file's stem)");
  cmd->add_option("--format", o->format, "table, json or md (to standard output)")->capture_default_str();
  cmd->add_option("--out", o->out, "Also write the predictions as JSON to FILE (must not exist)");
  cmd->add_option("--md", o->md, "Also write them as Markdown to FILE (must not exist)");
  if (html) cmd->add_option("--html", o->html, "Also write them as HTML with a chart to FILE (must not exist)");
  cmd->add_option("--steps", o->steps,
                  "Predict the mean of N steps of a run that starts with none of its data in the page cache (as learn --steps N "
                  "measures on a cold node), instead of a long run's steady state");
  cmd->add_option("--warmup", o->warmup, "With --steps: the steps before them, not in the mean (as learn --warmup)");
}

}  // namespace

void add_predict_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand("predict", "Predict a job's step on other nodes: a learn result (or a profile) against node results");
  auto o = std::make_shared<PredictOptions>();
  cmd->add_option("inputs", o->inputs, "JOB (a learn result or a profile) then NODE.json ..")->required();
  add_common(cmd, o, false);
  cmd->callback([&action, o] { action = [o] { return run_predict(*o); }; });
}

void add_match_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand("match", "Jobs x nodes: predicted samples/s and cost per run, the best node for each job");
  auto o = std::make_shared<PredictOptions>();
  cmd->add_option("inputs", o->inputs, "Jobs (learn results or profiles) and nodes (results), in any order")->required();
  add_common(cmd, o, true);
  cmd->callback([&action, o] { action = [o] { return run_match(*o); }; });
}

}  // namespace nodeaudit::cli
