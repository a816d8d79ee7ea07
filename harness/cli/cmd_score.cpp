// `nodeaudit score RESULT.json --profile NAME`: re-score a stored result for a (possibly other)
// workload, with an optional run cost. Prints the assessment; --out writes the result document with
// this assessment in it.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/workload_options.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/core/units.hpp"
#include "harness/score/model.hpp"
#include "harness/score/predict.hpp"
#include "harness/score/score.hpp"
#include "harness/session/result_file.hpp"

namespace nodeaudit::cli {

namespace {

struct ScoreOptions {
  std::string result_path;
  std::string profile;
  std::string price_per_hour;
  std::string storage_cost;
  std::string transfer_cost;
  std::string ops_cost;
  std::string format = "table";
  std::string out;
  std::string target_gpus;
  std::string expect;
};

// A money amount as typed; empty stays unset.
std::optional<double> parse_amount(const std::string& option, const std::string& text) {
  if (text.empty()) return std::nullopt;
  const std::optional<double> value = parse_finite_number(text);
  if (!value || *value < 0) throw UsageError(option + " " + text, "expected a non-negative number in any currency (12, 12.5)");
  return value;
}

score::CostOptions cost_options(const ScoreOptions& o) {
  score::CostOptions cost;
  cost.price_per_hour = parse_amount("--price-per-hour", o.price_per_hour);
  cost.storage_cost = parse_amount("--storage-cost", o.storage_cost).value_or(0);
  cost.transfer_cost = parse_amount("--transfer-cost", o.transfer_cost).value_or(0);
  cost.ops_cost = parse_amount("--ops-cost", o.ops_cost).value_or(0);
  const bool extras = cost.storage_cost > 0 || cost.transfer_cost > 0 || cost.ops_cost > 0;
  if (extras && !cost.price_per_hour)
    throw UsageError("--storage-cost/--transfer-cost/--ops-cost", "need --price-per-hour to price the run");
  return cost;
}

int run_score(const ScoreOptions& o) {
  if (o.format != "table" && o.format != "json") throw UsageError("--format " + o.format, "expected table or json");
  const score::CostOptions cost = cost_options(o);
  std::optional<score::TargetGpus> target;
  if (!o.target_gpus.empty()) target = score::parse_target_gpus(o.target_gpus);
  // A learn result as the profile: the job's own measurements judge the node (score/predict.hpp).
  const bool learned = std::filesystem::path(o.profile).extension() == ".json";
  score::PredictJob job = learned ? score::load_predict_job(o.profile) : score::PredictJob{};
  score::Profile profile = learned ? job.profile : score::load_profile(o.profile);
  if (!o.expect.empty()) score::apply_expect_file(profile, o.expect);
  if (target) score::check_target_serves(*target, profile);
  nlohmann::json result = load_result_file(o.result_path);
  score::JobDemand demand;
  demand.profile = &profile;
  if (job.measured) demand.measured = &*job.measured, demand.job_node = &job.job_node;
  const nlohmann::json assessment = score::assess(demand, result, cost, target ? &*target : nullptr);
  if (!o.out.empty()) {
    result["profile"] = profile.name;
    result["assessment"] = assessment;
    const session::ResultFile scored(session::OutPath{o.out, false, false}, result, 2);  // a new file: never overwrites
  }
  std::cout << (o.format == "json" ? assessment.dump(2) + "\n" : score::render_assessment(assessment));
  return score::exit_code_for(assessment);
}

}  // namespace

void add_score_command(CLI::App& root, Action& action) {
  CLI::App* cmd =
      root.add_subcommand("score", "Score a stored result for a workload profile: bottleneck, verdict, cost");
  auto o = std::make_shared<ScoreOptions>();
  cmd->add_option("result", o->result_path, "Result file (nodeaudit.result/1 JSON)")->required();
  add_profile_option(*cmd, o->profile)->required();
  cmd->add_option("--price-per-hour", o->price_per_hour, "Hourly price of the node, to cost one target run");
  cmd->add_option("--storage-cost", o->storage_cost, "Storage cost per run (same currency)");
  cmd->add_option("--transfer-cost", o->transfer_cost, "Data transfer cost per run");
  cmd->add_option("--ops-cost", o->ops_cost, "Operations cost per run");
  add_target_gpus_option(*cmd, o->target_gpus);
  add_expect_option(*cmd, o->expect);
  cmd->add_option("--format", o->format, "table or json")->capture_default_str();
  cmd->add_option("--out", o->out, "Also write the result document with this assessment to FILE (must not exist)");
  cmd->callback([&action, o] { action = [o] { return run_score(*o); }; });
}

}  // namespace nodeaudit::cli
