// The prediction beside a measured step (harness/score/step_prediction.hpp), checked by hand on the
// round-number profile: 4 samples of 1e12 FLOPs at 80 TFLOP/s and 50% efficiency is 0.1 s of
// compute; a loader of 20 samples/s takes 0.2 s for them, so the step is 0.2 s and the GPU busy 50%.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "harness/score/score.hpp"
#include "harness/score/step_demand.hpp"
#include "harness/score/step_prediction.hpp"

namespace {

using nlohmann::json;

json step_entry(double loader_samples_per_s, double au_pct) {
  const auto profile =
      nodeaudit::score::load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
  const json inputs = {{"step_demand", nodeaudit::score::step_demand_of(profile).to_json()},
                       {"gemm_tflops", 80.0},
                       {"gpus", 1},
                       {"loader_read_samples_per_s_per_gpu", loader_samples_per_s},
                       {"decode_samples_per_s_per_gpu", 1e6},
                       {"framework_loader", false},
                       {"cache", "none"},
                       {"sample_bytes", 1e6},
                       {"busbw_gbps", 0.0},
                       {"gradient_bytes", 0.0}};
  return {{"id", "pipeline.step"},
          {"metrics", {{{"name", "au"}, {"unit", "%"}, {"labels", json::object()}, {"median", au_pct}}}},
          {"findings", json::array()},
          {"info", {{"prediction_inputs", inputs}}}};
}

const json* metric_named(const json& entry, const std::string& name) {
  for (const json& m : entry["metrics"])
    if (m["name"] == name) return &m;
  return nullptr;
}

bool has_finding(const json& entry, const std::string& code) {
  for (const json& f : entry["findings"])
    if (f["code"] == code) return true;
  return false;
}

TEST(StepPrediction, LoaderBoundStepIsPredictedAsComputeOverStep) {
  json entry = step_entry(20, 50);
  nodeaudit::score::add_step_prediction(entry);
  const json* predicted = metric_named(entry, "predicted_utilization");
  ASSERT_TRUE(predicted) << entry.dump(1);
  EXPECT_EQ((*predicted)["unit"], "%");
  EXPECT_NEAR((*predicted)["median"].get<double>(), 50.0, 0.5);
  EXPECT_FALSE(has_finding(entry, "pipeline.prediction_gap")) << entry["findings"].dump();
}

TEST(StepPrediction, MeasuredAuMoreThanTenPointsAwayIsAWarning) {
  json entry = step_entry(20, 75);
  nodeaudit::score::add_step_prediction(entry);
  ASSERT_TRUE(metric_named(entry, "predicted_utilization"));
  EXPECT_TRUE(has_finding(entry, "pipeline.prediction_gap")) << entry["findings"].dump();
}

TEST(StepPrediction, NoLoaderRateIsNoPredictionWithTheReason) {
  json entry = step_entry(0, 50);
  nodeaudit::score::add_step_prediction(entry);
  EXPECT_FALSE(metric_named(entry, "predicted_utilization"));
  ASSERT_TRUE(has_finding(entry, "pipeline.no_prediction"));
  EXPECT_NE(entry["findings"][0]["message"].get<std::string>().find("no compute rate or loader rate"),
            std::string::npos);
}

// Every shipped profile, at one round-number node, is either predicted (a utilization between 0 and
// 100%) or says why not; some are predicted, so the check above compares something.
TEST(StepPrediction, EveryShippedProfileIsPredictedOrSaysWhyNot) {
  int predicted = 0;
  for (const std::string& name : nodeaudit::score::shipped_profile_names()) {
    SCOPED_TRACE(name);
    const auto profile = nodeaudit::score::load_profile(name);
    json entry = step_entry(3000, 50);
    auto& inputs = entry["info"]["prediction_inputs"];
    inputs["step_demand"] = nodeaudit::score::step_demand_of(profile).to_json();
    inputs["gemm_tflops"] = 400.0;
    inputs["gpus"] = 8;
    inputs["decode_samples_per_s_per_gpu"] = 900.0;
    inputs["busbw_gbps"] = 150.0;
    inputs["sample_bytes"] = profile.data.sample_bytes;
    inputs["gradient_bytes"] = profile.gradient_bytes();
    nodeaudit::score::add_step_prediction(entry);
    if (const json* m = metric_named(entry, "predicted_utilization")) {
      EXPECT_GT((*m)["median"].get<double>(), 0.0);
      EXPECT_LE((*m)["median"].get<double>(), 100.0 + 1e-9);
      ++predicted;
    } else {
      EXPECT_TRUE(has_finding(entry, "pipeline.no_prediction")) << entry.dump(1);
    }
  }
  EXPECT_GT(predicted, 0) << "no shipped profile was predicted";
}

TEST(StepPrediction, AnEntryWithoutInputsIsLeftAsItIs) {
  json entry = {{"id", "storage.read"}, {"metrics", json::array()}, {"findings", json::array()}, {"info", json::object()}};
  const json before = entry;
  nodeaudit::score::add_step_prediction(entry);
  EXPECT_EQ(entry, before);
}

}  // namespace
