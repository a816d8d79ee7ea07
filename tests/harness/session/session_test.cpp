// The session engine's seam to the probes that emulate a step: the profile is parsed once, in the
// session, and its step demand reaches the probe (a child of `run`, or `probe` in this process)
// beside its parameters, never inside the recorded ones; --workload is parsed by the session too.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/core/result.hpp"
#include "harness/score/score.hpp"
#include "harness/score/step_demand.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;
using nodeaudit::proc::expect_one_line_usage_error;
using nodeaudit::proc::json_output;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::probe_in;
using nodeaudit::proc::run_process;

namespace {

const std::string balance_test_profile = std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml";

// The demand the probe recorded, turned back into the profile the way pipeline.step does.
score::Profile demand_seen(const nlohmann::json& entry) {
  EXPECT_EQ(entry.value("status", ""), "ok") << entry.dump();
  return score::profile_of_demand(StepDemand::from_json(entry.at("info").at("step_demand")));
}

void expect_same_step(const score::Profile& seen, const score::Profile& scorer) {
  EXPECT_EQ(seen.name, scorer.name);
  EXPECT_EQ(seen.model.dtype, scorer.model.dtype);
  EXPECT_EQ(seen.flops_per_sample(), scorer.flops_per_sample());
  EXPECT_EQ(seen.samples_per_step_per_gpu(), scorer.samples_per_step_per_gpu());
  EXPECT_EQ(seen.gradient_bytes(), scorer.gradient_bytes());
  EXPECT_EQ(seen.compute_time_s(1, 100), scorer.compute_time_s(1, 100));
  EXPECT_EQ(seen.data.sample_bytes, scorer.data.sample_bytes);
  EXPECT_EQ(seen.data.decode, scorer.data.decode);
  EXPECT_EQ(seen.training.checkpoint_bytes, scorer.training.checkpoint_bytes);
}

TEST(SessionStepDemand, RunHandsItsProfileToTheChildBesideTheParams) {
  const std::string dir = make_temp_dir("session-demand");
  const std::string out = dir + "/r.json";
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.workload", "--rounds", "1", "--profile",
                              balance_test_profile, "--out", out});
  const nlohmann::json entry = probe_in(load_result_file(out), "test.workload");
  expect_same_step(demand_seen(entry), score::load_profile(balance_test_profile));
  EXPECT_EQ(entry["params"]["workload"], "") << "the demand travels beside the params, not in them";
  fs::remove_all(dir);
}

TEST(SessionStepDemand, RunWithoutAProfileGivesTheDefaultProfile) {
  const std::string dir = make_temp_dir("session-default");
  const std::string out = dir + "/r.json";
  run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.workload", "--rounds", "1", "--out", out});
  expect_same_step(demand_seen(probe_in(load_result_file(out), "test.workload")),
                   score::load_profile(default_step_profile));
  fs::remove_all(dir);
}

TEST(SessionStepDemand, ProbeParsesItsWorkloadOnce) {
  const auto r = run_process({NODEAUDIT_TESTBIN, "probe", "test.workload", "--workload", "llm-finetune-7b", "--rounds",
                              "1", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json entry = probe_in(json_output(r), "test.workload");
  expect_same_step(demand_seen(entry), score::load_profile("llm-finetune-7b"));
  EXPECT_EQ(entry["params"]["workload"], "llm-finetune-7b");
}

TEST(SessionStepDemand, ABadWorkloadIsOneLineNamingWorkload) {
  expect_one_line_usage_error(
      run_process({NODEAUDIT_TESTBIN, "probe", "test.workload", "--workload", "no-such-profile"}),
      "test.workload: --workload no-such-profile: no such shipped profile");
}

TEST(SessionStepDemand, AProbeThatEmulatesNoStepGetsNone) {
  const auto r = run_process({NODEAUDIT_TESTBIN, "probe", "test.ok", "--rounds", "1", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(probe_in(json_output(r), "test.ok")["info"].contains("step_demand"));
}

}  // namespace
