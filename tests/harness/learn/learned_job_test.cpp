// learn_from_records on hand-made records: the arithmetic that turns a GPU job's records into its
// model_efficiency against this node's GEMM rate (no GPU on the test machine runs a real job), and
// the category default a CPU job keeps.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/learn/learned_job.hpp"
#include "harness/learn/learned_profile.hpp"

namespace nodeaudit::learn {
namespace {

using nlohmann::json;

// One rank: 2 measured steps of 0.1 s with 8 samples each, a counted step of 8 samples and 8e12 FLOP
// (1e12 FLOP per sample), bf16 matmuls, on a GPU.
JobRecords gpu_job() {
  json timeline = json::array();
  for (int step = 1; step <= 3; ++step)
    timeline.push_back({{"step", step}, {"phase", step < 3 ? "measured" : "counted"}, {"duration_s", 0.1}, {"data_wait_s", 0.01},
                        {"backward_s", 0.05}, {"optimizer_s", 0.01}, {"checkpoint_s", 0.0}, {"backward_calls", 1}, {"batches", 1},
                        {"batch_samples", 8}, {"batch_bytes", 8 * 1024}});
  json rank = {{"kind", "rank"}, {"pid", 1}, {"status", "done"}, {"steps_done", 3}, {"timeline", timeline},
               {"optimizers", json::array({{{"class", "AdamW"}, {"parameters", 1000}, {"trainable_parameters", 1000},
                                            {"param_bytes", 2000}, {"grad_bytes", 2000}, {"grad_elements", 1000},
                                            {"grad_dtypes", {"torch.bfloat16"}}, {"state_bytes", 12000}}})},
               {"counted", {{"steps", {3, 3}}, {"flops", 8e12}, {"matmul_dtypes", {{"bf16", 10}}}, {"model_parameters", 1000}}},
               {"gpu", {{"name", "H100"}, {"peak_allocated_bytes", 16000 + 8 * 4096}}},
               {"distributed", {{"initialized", false}}}, {"loader", json::object()}, {"dataloaders", json::array()}};
  JobRecords records;
  records.ranks.push_back(rank);
  return records;
}

TEST(LearnedJob, ModelEfficiencyIsTheAchievedRateOverTheNodesGemmRate) {
  LearnInputs inputs{0, 2, 1, {{"compute-intensive", 0.44}}, {{"bf16", 800}}, "node.json"};
  const LearnedJob job = learn_from_records(gpu_job(), inputs);
  ASSERT_TRUE(job.complete);
  EXPECT_DOUBLE_EQ(job.fields.flops_per_sample.value, 1e12);
  EXPECT_DOUBLE_EQ(job.timing.samples_per_s, 80);  // 16 samples in 0.2 s
  EXPECT_NEAR(job.fields.model_efficiency.value, 80 * 1e12 / 800e12, 1e-12);
  EXPECT_NE(job.fields.model_efficiency.how.find("measured: 80 TFLOP/s per GPU"), std::string::npos) << job.fields.model_efficiency.how;
  // Peak allocated minus model state (weights + gradients + optimizer state), per sample of the micro-batch.
  EXPECT_DOUBLE_EQ(job.fields.activation_bytes_per_sample.value, 4096);
  EXPECT_EQ(job.fields.dtype.value, "bf16");
}

TEST(LearnedJob, WithoutTheDtypesGemmFigureTheCategoryDefaultStays) {
  LearnInputs inputs{0, 2, 1, {{"compute-intensive", 0.44}}, {{"fp8", 1400}}, "node.json"};
  const LearnedJob job = learn_from_records(gpu_job(), inputs);
  EXPECT_DOUBLE_EQ(job.fields.model_efficiency.value, 0.44);
  EXPECT_EQ(job.fields.model_efficiency.how.rfind("default for the category", 0), 0u) << job.fields.model_efficiency.how;
}

// The profile learn writes is read back, field by field through the table, as the values it learned
// (integers rounded, numbers as the TOML keeps them).
TEST(LearnedJob, TheLearnedProfileReadsBackAsLearned) {
  LearnInputs inputs{0, 2, 1, {{"compute-intensive", 0.44}}, {{"bf16", 800}}, "node.json"};
  const LearnedJob job = learn_from_records(gpu_job(), inputs);
  const score::Profile profile = score::parse_profile(learned_profile_toml(job, "job", "python train.py"), "learned.toml");
  int compared = 0;
  for (const score::ProfileField& field : score::profile_fields()) {
    const auto learned = learned_field(job, field.id);
    if (!learned) continue;
    SCOPED_TRACE(std::string(field.key));
    const score::FieldValue read = field.access.get(profile);
    if (const auto* text = std::get_if<std::string>(&learned->value)) {
      EXPECT_EQ(std::get<std::string>(read), *text);
    } else {
      const double value = std::get<double>(learned->value);
      const double expected = field.kind == score::FieldKind::integer ? std::max(1.0, std::round(value)) : value;
      // From 1000 up the TOML holds whole numbers; below, 6 significant digits.
      EXPECT_NEAR(std::get<double>(read), expected, std::fabs(expected) >= 1e3 ? 0.5 : 1e-5 * std::max(1.0, std::fabs(expected)));
    }
    ++compared;
  }
  EXPECT_GE(compared, 20);
}

}  // namespace
}  // namespace nodeaudit::learn
