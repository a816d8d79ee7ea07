// The emulated compute and all-reduce times and the checkpoint schedule follow the profile and the
// datasheet table.
#include <gtest/gtest.h>

#include "compute_model.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::pipeline {
namespace {

TEST(ComputeModel, ResNetOnH100IsFlopsOverPeakTimesEfficiency) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  std::string error;
  const ComputeDemand d = derive_compute(profile, 256, *find_gpu_peak("H100"), error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_DOUBLE_EQ(d.flops_per_step, 256 * 24.5e9);
  EXPECT_NEAR(d.compute_s, 256 * 24.5e9 / (989.4e12 * 0.22), 1e-9);
}

TEST(ComputeModel, UnknownGpuAndAcceptedNames) {
  EXPECT_EQ(find_gpu_peak("v100"), nullptr);
  EXPECT_EQ(accepted_gpu_names(), "h100, h200, a100, l40s");  // "none" (loader only) is accepted beside them
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

TEST(CommModel, DatasheetLinkFiguresSayTheyAreNotMeasured) {
  for (const GpuPeak& gpu : gpu_peak_table()) {
    EXPECT_GT(gpu.link_gbps, 0) << gpu.name;
    EXPECT_NE(gpu.link_source.find("datasheet (not measured)"), std::string::npos) << gpu.name;
  }
}

}  // namespace
}  // namespace nodeaudit::pipeline
