// The emulated compute time and checkpoint schedule follow the profile and the datasheet table.
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
  EXPECT_EQ(accepted_gpu_names(), "h100, h200, a100, l40s");
}

TEST(ComputeModel, CheckpointsKeepTheProfilesWriteDemand) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  const CheckpointPlan plan = scale_checkpoints(profile, 100, 0.5);
  EXPECT_EQ(plan.every_steps, 50);
  // 205 MB every 15 min = bytes per second of training, kept over a 25 s interval.
  EXPECT_NEAR(plan.bytes, 205e6 * 25 / 900, 1);
}

}  // namespace
}  // namespace nodeaudit::pipeline
