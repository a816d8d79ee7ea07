// Profiles: every shipped profile parses with sensible derived figures; bad profiles are refused
// with `file:line:column` and the rule that was broken.
#include <gtest/gtest.h>

#include <string>

#include "harness/core/errors.hpp"
#include "harness/score/score.hpp"

namespace ns = nodeaudit::score;

namespace {

std::string fixture_profile(const std::string& name) {
  return std::string(NODEAUDIT_FIXTURES) + "/profiles/" + name + ".toml";
}

// The UsageError text of loading `name`, or "" when it loads.
std::string load_error(const std::string& path) {
  try {
    ns::load_profile(path);
  } catch (const nodeaudit::UsageError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST(ShippedProfiles, AllSevenAreListed) {
  const std::vector<std::string> expected{"cv-detection",    "cv-resnet50-imagenet", "diffusion-finetune",
                                          "llm-finetune-7b", "llm-inference-batch",  "llm-lora-7b",
                                          "llm-pretrain-7b"};
  EXPECT_EQ(ns::shipped_profile_names(), expected);
}

TEST(ShippedProfiles, EveryOneParsesUnderItsOwnName) {
  for (const std::string& name : ns::shipped_profile_names()) {
    const ns::Profile profile = ns::load_profile(name);
    EXPECT_EQ(profile.name, name);
    EXPECT_FALSE(profile.description.empty()) << name;
    EXPECT_GT(profile.flops_per_sample(), 0) << name;
    EXPECT_TRUE(profile.target_run_samples().has_value()) << name;
  }
}

TEST(ShippedProfiles, FinetuneDerivedFigures) {
  const ns::Profile p = ns::load_profile("llm-finetune-7b");
  // 6 x 6.74e9 parameters x 2048 tokens = 8.282e13 FLOP per sample.
  EXPECT_DOUBLE_EQ(p.flops_per_sample(), 6 * 6.74e9 * 2048);
  // AdamW mixed precision: 16 bytes per parameter -> 107.84 GB of model state.
  EXPECT_DOUBLE_EQ(p.model_state_bytes(), 16 * 6.74e9);
  EXPECT_EQ(p.samples_per_step_per_gpu(), 16);
  EXPECT_EQ(p.training.sharding, ns::Sharding::full);
}

TEST(ShippedProfiles, LoraKeepsFrozenWeightsAtTwoBytes) {
  const ns::Profile p = ns::load_profile("llm-lora-7b");
  // (6.74e9 - 4,194,304) x 2 + 4,194,304 x 16 bytes.
  EXPECT_DOUBLE_EQ(p.model_state_bytes(), (6.74e9 - 4194304) * 2 + 4194304.0 * 16);
  EXPECT_DOUBLE_EQ(p.gradient_bytes(), 4194304.0 * 2);
}

TEST(ShippedProfiles, ResNetSizesComeFromStrings) {
  const ns::Profile p = ns::load_profile("cv-resnet50-imagenet");
  EXPECT_DOUBLE_EQ(p.data.sample_bytes, 110 * 1024.0);
  EXPECT_EQ(p.data.decode, ns::DecodeKind::jpeg);
  EXPECT_EQ(p.data.access, ns::AccessPattern::small_files);
  EXPECT_DOUBLE_EQ(p.model.gradient_bytes_per_parameter, 4);
}

TEST(ShippedProfiles, InferenceHasNoGradientsAndALatencyLimit) {
  const ns::Profile p = ns::load_profile("llm-inference-batch");
  EXPECT_EQ(p.category, ns::Category::latency_sensitive);
  EXPECT_DOUBLE_EQ(p.gradient_bytes(), 0);
  ASSERT_TRUE(p.thresholds.step_time_max_s.has_value());
  EXPECT_DOUBLE_EQ(*p.thresholds.step_time_max_s, 5.0);
}

TEST(BadProfiles, SyntaxErrorNamesLineAndColumn) {
  const std::string path = fixture_profile("syntax-error");
  EXPECT_EQ(load_error(path).rfind(path + ":3:", 0), 0u) << load_error(path);
  EXPECT_NE(load_error(path).find("TOML syntax error"), std::string::npos);
}

TEST(BadProfiles, UnknownKeyListsAcceptedKeys) {
  const std::string path = fixture_profile("unknown-key");
  const std::string error = load_error(path);
  EXPECT_EQ(error.rfind(path + ":8:1: unknown key 'activation_byte_per_sample' in [model]; accepted: ", 0), 0u)
      << error;
  EXPECT_NE(error.find("activation_bytes_per_sample"), std::string::npos);
}

TEST(BadProfiles, NegativeSizeIsRefused) {
  const std::string path = fixture_profile("negative-size");
  EXPECT_EQ(load_error(path), path + ":10:15: 'sample_size' in [data] is -4096; must not be negative");
}

TEST(BadProfiles, MissingRequiredFieldNamesTheSection) {
  const std::string path = fixture_profile("missing-field");
  EXPECT_EQ(load_error(path), path + ":14:1: missing required field 'micro_batch_per_gpu' in [training]");
}

TEST(BadProfiles, ThresholdAboveOneWhereAFractionIsMeant) {
  const std::string path = fixture_profile("fraction-above-one");
  EXPECT_EQ(load_error(path), path + ":20:17: 'data_wait_max' in [thresholds] is 30; must be a fraction from 0 to 1");
}

TEST(BadProfiles, WrongTypeIsRefused) {
  const std::string path = fixture_profile("wrong-type");
  EXPECT_EQ(load_error(path), path + ":15:23: 'micro_batch_per_gpu' in [training] must be an integer, got a string");
}

TEST(BadProfiles, UnknownShippedNameListsTheShippedOnes) {
  const std::string error = load_error("no-such-profile");
  EXPECT_NE(error.find("--profile no-such-profile: no such shipped profile"), std::string::npos) << error;
  EXPECT_NE(error.find("llm-finetune-7b"), std::string::npos);
}

TEST(BadProfiles, SizeStringWithUnknownUnit) {
  const std::string text = R"(name = "x"
description = "x"
category = "compute-intensive"
[model]
parameters = 1e9
flops_per_sample = 1e12
[data]
sample_size = "110K"
dataset_size = "1TB"
access = "small-files"
[training]
micro_batch_per_gpu = 1
model_efficiency = 0.5
target_samples = 1
)";
  try {
    ns::parse_profile(text, "inline.toml");
    FAIL() << "a bare K must be refused";
  } catch (const nodeaudit::UsageError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("inline.toml:8:15: 'sample_size' in [data]: size '110K'", 0), 0u)
        << error.what();
  }
}

TEST(Profiles, SizeDistributionGivesTheMean) {
  const std::string text = R"(name = "x"
description = "x"
category = "data-throughput-intensive"
[model]
parameters = 1e6
flops_per_sample = 1e9
[data]
sample_size_distribution = [{ size = "100KiB", share = 0.75 }, { size = "500KiB", share = 0.25 }]
dataset_size = "1TB"
access = "small-files"
[training]
micro_batch_per_gpu = 1
model_efficiency = 0.5
target_samples = 1
)";
  const ns::Profile p = ns::parse_profile(text, "inline.toml");
  // 0.75 x 100 KiB + 0.25 x 500 KiB = 200 KiB.
  EXPECT_DOUBLE_EQ(p.data.sample_bytes, 200 * 1024.0);
  EXPECT_DOUBLE_EQ(p.data.device_bytes_per_sample, 200 * 1024.0);
}
