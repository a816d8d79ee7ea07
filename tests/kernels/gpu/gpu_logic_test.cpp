// Shape candidates, FLOP/byte counts, tolerances, peaks, patterns, config rules and stress math.
#include <gtest/gtest.h>

#include "config_rules.hpp"
#include "gemm_plan.hpp"
#include "gpu_select.hpp"
#include "memory_patterns.hpp"
#include "peak_table.hpp"
#include "stress_math.hpp"

namespace nodeaudit::gpu {
namespace {

TEST(GemmPlan, CandidatesAreMultiplesOf256AndFitTheBudget) {
  const auto all = shape_candidates(Dtype::bf16, 8192, 2, 1ull << 40);
  ASSERT_EQ(all.size(), 5u);
  for (const auto& s : all) EXPECT_EQ((s.m | s.n | s.k) % 256, 0);
  EXPECT_EQ(all[1], (GemmShape{4096, 4096, 4096}));
  // 2 copies of 8192^3 bf16: 3 * 128 MiB * 2 = 768 MiB; a 700 MiB budget keeps only the half size.
  const auto small = shape_candidates(Dtype::bf16, 8192, 2, 700ull << 20);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0], (GemmShape{4096, 4096, 4096}));
}

TEST(GemmPlan, FlopsAndBytes) {
  EXPECT_DOUBLE_EQ(gemm_flops({8192, 4096, 256}), 2.0 * 8192 * 4096 * 256);
  EXPECT_EQ(gemm_bytes({256, 512, 1024}, Dtype::fp8), 256u * 1024 + 1024u * 512 + 256u * 512 * 2);
  EXPECT_EQ(gemm_bytes({256, 256, 256}, Dtype::fp64), 3u * 256 * 256 * 8);
}

TEST(GemmPlan, DtypeParsingAndSupport) {
  EXPECT_EQ(parse_dtype_list("bf16,fp8").dtypes, (std::vector<Dtype>{Dtype::bf16, Dtype::fp8}));
  EXPECT_NE(parse_dtype_list("bf16,int4").error.find("int4"), std::string::npos);
  EXPECT_TRUE(dtype_unsupported_reason(Dtype::fp8, 80).has_value());
  EXPECT_FALSE(dtype_unsupported_reason(Dtype::fp8, 90).has_value());
  EXPECT_FALSE(dtype_unsupported_reason(Dtype::fp64, 70).has_value());
}

TEST(GemmPlan, ToleranceAcceptsRoundingAndRejectsAWrongElement) {
  const std::int64_t k = 8192;
  const double ref = 40, sum_abs = 2000;
  EXPECT_LT(allowed_error(Dtype::bf16, k, ref, sum_abs), 2.0);   // a wrong element misses by ~|ref|
  EXPECT_GT(allowed_error(Dtype::bf16, k, ref, sum_abs), ref * 0x1p-8);  // one bf16 ulp of the output passes
  EXPECT_LT(allowed_error(Dtype::fp64, k, ref, sum_abs), 1e-9);
  EXPECT_GT(allowed_error(Dtype::tf32, k, ref, sum_abs), allowed_error(Dtype::fp32, k, ref, sum_abs));
  const double a[] = {1, -2, 0.5}, b[] = {3, 1, -4};
  const ReferenceDot dot = reference_dot(a, b, 3);
  EXPECT_DOUBLE_EQ(dot.value, 3 - 2 - 2);
  EXPECT_DOUBLE_EQ(dot.sum_abs_products, 3 + 2 + 2);
}

TEST(PeakTable, KnownAndUnknownDevices) {
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H200", Dtype::bf16), 989.4);
  EXPECT_DOUBLE_EQ(*peak_memory_gbps("NVIDIA H200"), 4800);
  EXPECT_FALSE(peak_tflops("NVIDIA A100-SXM4-80GB", Dtype::fp8).has_value());
  EXPECT_FALSE(peak_tflops("Some Future GPU", Dtype::bf16).has_value());
  EXPECT_DOUBLE_EQ(*percent_of_peak(494.7, peak_tflops("NVIDIA H200", Dtype::tf32)), 100.0);
  EXPECT_FALSE(percent_of_peak(100, std::nullopt).has_value());
}

TEST(MemoryPatterns, CheckFindsFlippedBitsAndReportsTheirAddresses) {
  for (Pattern p : all_patterns) {
    std::vector<std::uint64_t> words(4096);
    fill_pattern(words.data(), words.size(), 0x7000000000, 100, p, 42);
    EXPECT_EQ(check_pattern(words.data(), words.size(), 0x7000000000, 100, p, 42).errors, 0u) << to_string(p);
    words[17] ^= 1ull << 5;
    words[3000] ^= 1ull << 63;
    const PatternErrors e = check_pattern(words.data(), words.size(), 0x7000000000, 100, p, 42);
    EXPECT_EQ(e.errors, 2u);
    EXPECT_EQ(e.first_addresses, (std::vector<std::uint64_t>{0x7000000000 + 17 * 8, 0x7000000000 + 3000 * 8}));
  }
  EXPECT_EQ(pattern_word(Pattern::walking_ones, 0, 70, 0), 1ull << 6);
  EXPECT_NE(pattern_word(Pattern::random, 0, 1, 1), pattern_word(Pattern::random, 0, 1, 2));
}

TEST(ConfigRules, FlagsWhatIsWrongAndSaysWhatIsExpected) {
  GpuConfigReading g{.index = 1, .persistence_mode = false, .ecc_enabled = true, .mig_enabled = false,
                     .pcie_gen_current = 4, .pcie_gen_max = 5, .pcie_width_current = 8, .pcie_width_max = 16,
                     .throttle_reasons = 0x2, .row_remap_pending = true};
  std::vector<std::string> codes;
  for (const auto& f : check_gpu_config(g)) codes.push_back(f.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"gpu_config.persistence", "gpu_config.pcie_width", "gpu_config.pcie_gen",
                                             "gpu_config.clocks_locked", "gpu_config.row_remap"}));
  g.throttle_reasons = 0x1;  // idle: a low generation is power saving, info only
  for (const auto& f : check_gpu_config(g))
    if (f.code == "gpu_config.pcie_gen") EXPECT_EQ(f.severity, Severity::info);
  const auto old_driver = check_software({.driver_cuda_version = 12040, .runtime_cuda_version = 13000});
  ASSERT_EQ(old_driver.size(), 1u);
  EXPECT_EQ(old_driver[0].severity, Severity::fail);
  EXPECT_NE(old_driver[0].message.find("12.4"), std::string::npos);
  EXPECT_NEAR(*pcie_link_gbps(5, 16), 63.015, 0.01);
  EXPECT_FALSE(pcie_link_gbps(9, 16).has_value());
}

TEST(StressMath, DropThrottleSpreadAndSlowGpus) {
  EXPECT_DOUBLE_EQ(drop_pct({800, 790, 720}), 10.0);
  EXPECT_DOUBLE_EQ(throttle_pct({0x0, 0x4, std::nullopt, 0x1, 0x40}), 50.0);
  EXPECT_DOUBLE_EQ(spread_pct({700, 800}), 12.5);
  const auto slow = slower_than_fastest({{0, 800}, {1, 790}, {2, 600}}, 10.0);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_DOUBLE_EQ(slow.at(2), 25.0);
}

TEST(GpuSelect, AllByDefaultAndErrorsForMissingGpus) {
  EXPECT_EQ(select_gpus(std::nullopt, 3).devices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(select_gpus(std::vector<int>{2, 0, 2}, 3).devices, (std::vector<int>{2, 0}));
  EXPECT_NE(select_gpus(std::vector<int>{4}, 2).error.find("GPU 4 does not exist"), std::string::npos);
  EXPECT_EQ(split_range(10, 3, 2).begin, 7u);
}

}  // namespace
}  // namespace nodeaudit::gpu
