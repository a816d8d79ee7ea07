// Each shipped training profile, on the GPU table's figures, predicts a per-GPU throughput close to
// a published measurement of the same workload (profiles/README.md, "Profiles beside published
// throughput"). Compute only (the loaders keep up in those runs): GEMM rate x model efficiency /
// FLOPs per sample. A profile whose prediction leaves the band is recalibrated, not the band.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/score/score.hpp"

namespace nodeaudit::score {
namespace {

struct PublishedThroughput {
  std::string profile;
  std::string gpu;   // a model of the GPU table
  double per_gpu;    // samples/s, or tokens/s when `tokens`
  bool tokens;
  std::string source;
};

// The band a prediction must stay in: +-15% of the published figure.
constexpr double band = 0.15;

const std::vector<PublishedThroughput>& references() {
  static const std::vector<PublishedThroughput> list{
      {"cv-resnet50-imagenet", "h100", 7000, false, "MLPerf Training v3.0, DGX H100 (DALI GPU decode)"},
      {"cv-resnet50-imagenet", "a100-80gb", 2274, false,
       "DeepLearningExamples ResNet-50 v1.5 AMP, A100-80GB: 2,078-2,470 (middle)"},
      {"llm-finetune-7b", "h100", 10643, true, "llm-foundry MPT-7B, 2048 tokens, 8 x H100, FSDP"},
      {"llm-pretrain-7b", "h100", 8611, true, "llm-foundry MPT-7B, 4096 tokens, 8 x H100, FSDP + activation checkpointing"},
      {"cv-detection", "h100", 170, false, "MLPerf Training v2.1, DGX H100 Mask R-CNN, 12 images per GPU"},
      {"diffusion-finetune", "a100-80gb", 36, false, "mosaicml/diffusion SD-2 UNet, latents precomputed, A100-80GB"},
  };
  return list;
}

double predicted_per_gpu(const Profile& profile, const GpuModel& gpu, bool tokens) {
  const double samples_per_s =
      gpu.gemm_rate(profile.model.dtype)->value * 1e12 * profile.training.model_efficiency / profile.flops_per_sample();
  return tokens ? samples_per_s * profile.model.tokens_per_sample.value_or(0) : samples_per_s;
}

TEST(ProfileReferences, PredictionsOnTheGpuTableStayWithinFifteenPercentOfPublishedThroughput) {
  for (const PublishedThroughput& ref : references()) {
    const Profile profile = load_profile(ref.profile);
    const GpuModel* gpu = find_gpu_model(ref.gpu);
    ASSERT_NE(gpu, nullptr) << ref.gpu;
    const double predicted = predicted_per_gpu(profile, *gpu, ref.tokens);
    EXPECT_NEAR(predicted / ref.per_gpu, 1.0, band)
        << ref.profile << " on " << ref.gpu << ": predicted " << predicted << " vs " << ref.per_gpu << " ("
        << ref.source << ")";
  }
}

// Every shipped training profile is either in the list above or says in profiles/README.md why not.
TEST(ProfileReferences, EveryCalibratedProfileIsListed) {
  std::vector<std::string> listed;
  for (const PublishedThroughput& ref : references()) listed.push_back(ref.profile);
  for (const std::string& name : shipped_profile_names()) {
    const bool without_reference = name == "llm-lora-7b" || name == "llm-inference-batch";
    EXPECT_TRUE(without_reference || std::find(listed.begin(), listed.end(), name) != listed.end()) << name;
  }
}

}  // namespace
}  // namespace nodeaudit::score
