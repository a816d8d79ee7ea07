// The real-GPU step's work as planned on the host: the step's FLOPs as whole square GEMMs, the
// backward share split into gradient buckets, and the all-reduce bytes and buffer.
#include <gtest/gtest.h>

#include "harness/score/score.hpp"
#include "pipeline/step/gpu_step_plan.hpp"

namespace nodeaudit::pipeline {
namespace {

TEST(StepGemms, LargestSideThatStillGivesEnoughProducts) {
  const double one_8192 = 2.0 * 8192 * 8192 * 8192;
  const StepGemms big = plan_step_gemms(100 * one_8192, gpu::Dtype::bf16);
  EXPECT_EQ(big.side, 8192);
  EXPECT_EQ(big.products, 100);
  EXPECT_EQ(big.forward, 33);  // a third forward, the rest backward
  EXPECT_DOUBLE_EQ(big.executed_flops, 100 * one_8192);

  // 10 products of 8192 are too few to split: 4096 (8x cheaper) gives 80.
  const StepGemms mid = plan_step_gemms(10 * one_8192, gpu::Dtype::bf16);
  EXPECT_EQ(mid.side, 4096);
  EXPECT_EQ(mid.products, 80);
}

TEST(StepGemms, RoundingStaysCloseAndTinyStepsRunOneProduct) {
  const double demanded = 3.7e12;
  const StepGemms plan = plan_step_gemms(demanded, gpu::Dtype::fp16);
  EXPECT_GE(plan.products, 24);
  EXPECT_NEAR(plan.executed_flops / demanded, 1.0, 0.5 / 24);
  const StepGemms tiny = plan_step_gemms(1e3, gpu::Dtype::fp16);
  EXPECT_EQ(tiny.side, 256);
  EXPECT_EQ(tiny.products, 1);
  EXPECT_EQ(tiny.forward, 0);
}

TEST(StepGemms, ProfileDtypeMapsToATrainingGemm) {
  score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  std::string error;
  profile.model.dtype = "fp32";
  EXPECT_EQ(gemm_dtype_for(profile, error), gpu::Dtype::tf32);
  profile.model.dtype = "bf16";
  EXPECT_EQ(gemm_dtype_for(profile, error), gpu::Dtype::bf16);
  EXPECT_EQ(error, "");
  profile.model.dtype = "fp64";
  gemm_dtype_for(profile, error);
  EXPECT_NE(error.find("model.dtype fp64"), std::string::npos) << error;
}

TEST(StepAllReduce, OverlappedProfilesIssueBucketsDuringBackward) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");  // overlaps 90%, fp32 gradients
  const StepGemms gemms = plan_step_gemms(30 * 2.0 * 4096 * 4096 * 4096, gpu::Dtype::bf16);
  const StepAllReduce a = plan_step_allreduce(profile, gemms, 4, 16 << 20);
  EXPECT_DOUBLE_EQ(a.bytes, profile.gradient_bytes());
  EXPECT_EQ(a.element_bytes, 4);
  EXPECT_EQ(a.buckets, 4);
  EXPECT_EQ(a.bucket_bytes() % 4, 0u);
  EXPECT_GE(a.bucket_bytes() * 4, a.bytes);
  EXPECT_EQ(a.buffer_bytes, 16u << 20);  // a 25 MB bucket loops over a 16 MiB buffer
  // Buckets close at even shares of the backward products; the last one with the last product.
  EXPECT_EQ(products_before_bucket(gemms, 4, 0), gemms.forward + (gemms.products - gemms.forward) / 4);
  EXPECT_EQ(products_before_bucket(gemms, 4, 3), gemms.products);
}

TEST(StepAllReduce, WithoutOverlapOneBucketAfterCompute) {
  score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  profile.training.comm_overlap = 0;
  const StepGemms gemms = plan_step_gemms(1e13, gpu::Dtype::bf16);
  const StepAllReduce a = plan_step_allreduce(profile, gemms);
  EXPECT_EQ(a.buckets, 1);
  EXPECT_EQ(products_before_bucket(gemms, 1, 0), gemms.products);
  EXPECT_LE(a.buffer_bytes, 256u << 20);
  EXPECT_EQ(a.buffer_bytes % 256, 0u);
}

}  // namespace
}  // namespace nodeaudit::pipeline
