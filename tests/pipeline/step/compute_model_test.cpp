// The emulated compute and all-reduce times and the checkpoint schedule follow the profile and the
// datasheet table.
#include <gtest/gtest.h>

#include "harness/score/score.hpp"
#include "pipeline/step/compute_model.hpp"

namespace nodeaudit::pipeline {
namespace {

// The emulated step uses the same GEMM rate --target-gpus scores with: the published measurement
// (MAMF 792.1 TFLOP/s on H100 SXM), not the 989.4 TFLOP/s datasheet peak.
TEST(ComputeModel, ResNetOnH100IsFlopsOverTheTablesMeasuredRateTimesEfficiency) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  std::string error;
  const ComputeDemand d = derive_compute(profile, 256, *score::find_gpu_model("H100"), error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_DOUBLE_EQ(d.flops_per_step, 256 * 24.5e9);
  EXPECT_NEAR(d.compute_s, 256 * 24.5e9 / (792.1e12 * 0.22), 1e-9);
  EXPECT_NE(d.source.find("published measurement (another node: "), std::string::npos) << d.source;
  EXPECT_NE(d.source.find("MAMF"), std::string::npos) << d.source;
}

TEST(ComputeModel, AGpuWithoutARateForTheDtypeIsRefusedNamingIt) {
  score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  profile.model.dtype = "fp8";
  std::string error;
  derive_compute(profile, 256, *score::find_gpu_model("a100"), error);  // A100 has no fp8 tensor cores
  EXPECT_NE(error.find("no fp8 rate for a100-80gb"), std::string::npos) << error;
}

TEST(ComputeModel, UnknownGpuAndAcceptedNames) {
  EXPECT_EQ(score::find_gpu_model("v100"), nullptr);
  EXPECT_NE(accepted_gpu_names().find("h100 (h100-sxm), h200 (h200-sxm), a100-80gb (a100, a100-sxm), l40s"),
            std::string::npos)
      << accepted_gpu_names();
}

TEST(ComputeModel, CheckpointsKeepTheProfilesWriteDemand) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  const CheckpointPlan plan = scale_checkpoints(profile, 100, 0.5);
  EXPECT_EQ(plan.every_steps, 50);
  // 205 MB every 15 min = bytes per second of training, kept over a 25 s interval.
  EXPECT_NEAR(plan.bytes, 205e6 * 25 / 900, 1);
}

TEST(CommModel, AllReduceIsGradientBytesTimesBusFactorOverBusbw) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  const CommDemand c = derive_comm(profile, 8, 100, "given");
  const double gradient_bytes = 25557032.0 * 4;  // fp32 gradients under AMP
  EXPECT_DOUBLE_EQ(c.gradient_bytes, gradient_bytes);
  EXPECT_NEAR(c.bus_bytes, gradient_bytes * 2 * 7 / 8, 1);
  EXPECT_NEAR(c.time_s, gradient_bytes * 2 * 7 / 8 / 100e9, 1e-12);
  EXPECT_NEAR(c.exposed_s, c.time_s * (1 - 0.90), 1e-12);  // the profile overlaps 90%
}

TEST(CommModel, OneGpuHasNoAllReduceAndFullShardingMovesOneAndAHalfVolumes) {
  const score::Profile resnet = score::load_profile("cv-resnet50-imagenet");
  EXPECT_EQ(derive_comm(resnet, 1, 100, "given").time_s, 0);
  const score::Profile fsdp = score::load_profile("llm-finetune-7b");
  const CommDemand c = derive_comm(fsdp, 4, 100, "given");
  EXPECT_NEAR(c.bus_bytes, fsdp.gradient_bytes() * 2 * 3 / 4 * 1.5 * fsdp.training.gradient_accumulation, 1);
}

// The emulated all-reduce takes the table's nccl-tests busbw at the size nearest the gradients:
// ResNet-50's 102 MB of fp32 gradients sit nearest 128 MiB on the 8 x H100 curve (400.61 GB/s).
TEST(CommModel, TableBusbwIsTheCurvePointNearestTheGradientsAndSaysItIsNotMeasured) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  std::string source;
  EXPECT_DOUBLE_EQ(table_busbw(profile, *score::find_gpu_model("h100"), source), 400.61);
  EXPECT_NE(source.find("published measurement (another node: "), std::string::npos) << source;
  EXPECT_NE(source.find("134217728 B"), std::string::npos) << source;
  EXPECT_EQ(table_busbw(profile, *score::find_gpu_model("h100-pcie"), source), 0);  // peaks only
}

}  // namespace
}  // namespace nodeaudit::pipeline
