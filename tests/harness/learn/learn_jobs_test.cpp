// `nodeaudit learn` on jobs as they are written in practice: two optimizers in one job (their
// parameters, gradients and state summed), and AMP (torch.autocast on the CPU in bfloat16: the
// compute dtype is the matmuls', while the weights, gradients and optimizer state stay fp32).
// Gradient accumulation and torch.compile are in learn_cli_test.cpp. Every figure is computed here
// from the layer shapes of tests/harness/learn/train_mlp.py. With --warmup 0, where the first step's
// time starts: at the loop's first batch request, or (no DataLoader) at the process's start, said.
#include <gtest/gtest.h>

#include "harness/score/profile.hpp"
#include "tests/harness/learn/learn_test_util.hpp"

namespace nodeaudit::learn::test {
namespace {

// train_mlp.py's defaults: linear 32->64 (SGD with momentum), ReLU, linear 64->10 (AdamW); batch 16.
constexpr double in = 32, hidden = 64, classes = 10, batch = 16;
constexpr double first_params = in * hidden + hidden, second_params = hidden * classes + classes;

// Weights and gradients fp32 for both layers; SGD's momentum buffer (4 bytes a parameter) for the
// first; AdamW's exp_avg and exp_avg_sq (8 bytes a parameter) and one fp32 step counter per tensor
// (weight and bias: 2) for the second.
double bytes_per_trainable_parameter() {
  const double params = first_params + second_params;
  const double state = first_params * 4 + second_params * 8 + 2 * 4;
  return (params * 4 + params * 4 + state) / params;
}

// PyTorch's FLOP counter: 2 x multiply-adds per matmul. Forward: both layers. Backward: both
// layers' weight gradients and the second layer's input gradient (the first layer's input, the
// data, needs none).
double training_flops_per_sample() {
  const double first = 2 * in * hidden, second = 2 * hidden * classes;
  return (first + second) + (first + second) + second;
}

void expect_two_optimizers_summed(const score::Profile& p, const std::string& profile_text) {
  EXPECT_EQ(p.model.trainable_parameters, first_params + second_params);
  EXPECT_NEAR(p.model.bytes_per_parameter, bytes_per_trainable_parameter(), 1e-4) << "the profile's 6 significant digits";
  EXPECT_DOUBLE_EQ(p.model.gradient_bytes_per_parameter, 4);
  EXPECT_EQ(p.model.optimizer, "adamw") << "the profile's optimizer names the stateful one of the two";
  EXPECT_NE(profile_text.find("SGD + AdamW"), std::string::npos) << "the comment names both optimizers: " << profile_text;
  EXPECT_NEAR(*p.model.flops_per_sample / training_flops_per_sample(), 1.0, 1e-6) << *p.model.flops_per_sample;
  EXPECT_EQ(p.training.micro_batch_per_gpu, batch);
  EXPECT_EQ(p.training.gradient_accumulation, 1);
}

TEST_F(LearnCli, TwoOptimizersInOneJobAreSummed) {
  TORCH_OR_SKIP();
  const auto r = learn({"--warmup", "1", "--steps", "3"}, {script("train_mlp.py")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const score::Profile p = score::load_profile_file(profile_path());
  expect_two_optimizers_summed(p, profile_text());
  EXPECT_EQ(p.model.dtype, "fp32");
  EXPECT_NEAR(learn_entry()["info"]["learned"]["bytes_per_parameter"]["value"].get<double>(), bytes_per_trainable_parameter(), 1e-9);
  // Each step covers both optimizers: 3 measured steps, each with one backward call.
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(metric(e, "step_time")["n"], 3);
  for (const auto& step : e["info"]["timeline"]) EXPECT_EQ(step["backward_calls"], 1) << step.dump();
}

TEST_F(LearnCli, AutocastBfloat16IsTheComputeDtypeWithFp32State) {
  TORCH_OR_SKIP();
  const auto r = learn({"--warmup", "1", "--steps", "2"}, {script("train_mlp.py"), "--amp"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const score::Profile p = score::load_profile_file(profile_path());
  EXPECT_EQ(p.model.dtype, "bf16") << profile_text();
  EXPECT_NE(profile_text().find("bf16"), std::string::npos);
  // autocast casts the matmul inputs; the parameters, their gradients and the optimizer state stay fp32.
  expect_two_optimizers_summed(p, profile_text());
}

// Freezing the second layer changes what autograd saves only by its weight (saved to pass the
// gradient to the first layer); the weight is not an activation, so the activation bytes are the
// same as when it trains (its input, the ReLU's output, is saved either way).
TEST_F(LearnCli, AFrozenLayersWeightIsNotCountedAsActivations) {
  TORCH_OR_SKIP();
  auto activation_bytes = [&](std::vector<std::string> job) {
    std::filesystem::remove(result_path());  // this test's own outputs of the run before
    std::filesystem::remove(profile_path());
    const auto r = learn({"--warmup", "1", "--steps", "1"}, job);
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return learn_entry()["info"]["learned"]["activation_bytes_per_sample"]["value"].get<double>();
  };
  const double trained = activation_bytes({script("train_mlp.py")});
  const double frozen = activation_bytes({script("train_mlp.py"), "--freeze-second"});
  ASSERT_GT(trained, 0);
  EXPECT_DOUBLE_EQ(frozen, trained) << "a frozen 64x10 weight would add " << hidden * classes * 4 / batch << " bytes per sample";
}

TEST_F(LearnCli, WithNoWarmupTheFirstStepStartsAtTheLoopsFirstBatchRequest) {
  TORCH_OR_SKIP();
  const std::string images = dir_ + "/images";
  ASSERT_EQ(run_python({script("make_jpegs.py"), images, "8", "32"}), 0);
  const auto r = learn({"--warmup", "0", "--steps", "2"}, {script("train_cnn.py"), images});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json first = learn_entry()["info"]["timeline"][0];
  EXPECT_EQ(first["began_at"], "first batch request") << first.dump();
  // Importing torch and torchvision and building the data set took well over 0.2 s before the loop
  // asked for its first batch; none of it is in the step.
  EXPECT_LT(first["duration_s"].get<double>(), first["end_s"].get<double>() - 0.2) << first.dump();
  EXPECT_EQ(r.out.find("interpreter's start-up"), std::string::npos) << r.out;
  EXPECT_FALSE(learn_entry()["info"]["timeline"][1].contains("began_at"));
}

TEST_F(LearnCli, WithNoWarmupAndNoDataLoaderTheFirstStepSaysItHoldsTheStartUp) {
  TORCH_OR_SKIP();
  const auto r = learn({"--warmup", "0", "--steps", "2"}, {script("train_mlp.py")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json first = learn_entry()["info"]["timeline"][0];
  EXPECT_EQ(first["began_at"], "process start") << first.dump();
  EXPECT_DOUBLE_EQ(first["duration_s"].get<double>(), first["end_s"].get<double>());
  EXPECT_NE(r.out.find("measured step 1 began at the process's start"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nodeaudit::learn::test
