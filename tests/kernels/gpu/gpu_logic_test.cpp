// Shape candidates, FLOP/byte counts, tolerances, peaks, patterns, config rules and stress math.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/gpu/gemm_plan.hpp"
#include "kernels/gpu/gpu_config_rules.hpp"
#include "kernels/gpu/gpu_select.hpp"
#include "kernels/gpu/memory_patterns.hpp"
#include "kernels/gpu/peak_table.hpp"
#include "kernels/gpu/stress_math.hpp"

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

TEST(GemmPlan, ProductsPerTimingSpanTheTargetWithinBounds) {
  EXPECT_EQ(products_per_timing(1.4e-3, 0.01), 8);    // bf16 8192^3 on an H200: 8 products = 11 ms
  EXPECT_EQ(products_per_timing(3e-3, 0.01), 4);      // rounded up: at least the target
  EXPECT_EQ(products_per_timing(0.3, 0.01), 1);       // a long fp64 product is timed alone
  EXPECT_EQ(products_per_timing(1e-6, 0.01), 64);     // capped
  EXPECT_EQ(products_per_timing(0.0, 0.01), 64);      // below the event resolution
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

// Host emulation of what the device does to a dot product, to check that the tolerance passes
// honest rounding (a false fail on a healthy GPU would be our bug). Precision counts the implicit bit.
double round_to_bits(double x, int precision, bool truncate = false) {
  if (x == 0) return 0;
  int exponent = 0;
  const double mantissa = std::frexp(x, &exponent);  // [0.5, 1)
  const double scale = std::ldexp(1.0, precision);
  return std::ldexp((truncate ? std::trunc(mantissa * scale) : std::nearbyint(mantissa * scale)) / scale, exponent);
}
double to_e4m3(double x) {  // 4 bits of precision, subnormal spacing 2^-9 below 2^-6
  return std::fabs(x) < 0x1p-6 ? std::nearbyint(x * 0x1p9) * 0x1p-9 : round_to_bits(x, 4);
}

// One output element as the device computes it: the stored inputs (`a`, `b`), the inputs the
// tensor cores see (tf32 drops 13 bits), accumulation in the reverse order of the reference in
// fp32 (fp8: ~14 bits inside each 128-deep chunk, promoted to fp32 after it), output rounding.
double emulated_device_dot(Dtype dtype, const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t k = a.size();
  if (dtype == Dtype::fp64) {
    double sum = 0;
    for (std::size_t i = k; i-- > 0;) sum = std::fma(a[i], b[i], sum);
    return sum;
  }
  float sum = 0, chunk = 0;
  for (std::size_t i = k; i-- > 0;) {
    const double x = dtype == Dtype::tf32 ? round_to_bits(a[i], 11, true) : a[i];
    const double y = dtype == Dtype::tf32 ? round_to_bits(b[i], 11, true) : b[i];
    if (dtype != Dtype::fp8) {
      sum = std::fma(static_cast<float>(x), static_cast<float>(y), sum);
      continue;
    }
    chunk = static_cast<float>(round_to_bits(chunk + x * y, 14));
    if (i % 128 == 0) sum += chunk, chunk = 0;
  }
  switch (dtype) {
    case Dtype::fp16: return round_to_bits(sum, 11);
    case Dtype::bf16:
    case Dtype::fp8: return round_to_bits(sum, 8);
    default: return sum;
  }
}

TEST(GemmPlan, ToleranceAcceptsEveryElementOfAnHonestlyRoundedProduct) {
  const std::int64_t k = 32768;  // the deepest product of the soak level's shape search
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (Dtype dtype : all_dtypes()) {
    auto quantize = [&](double x) {
      switch (dtype) {
        case Dtype::fp32:
        case Dtype::tf32: return static_cast<double>(static_cast<float>(x));
        case Dtype::fp16: return round_to_bits(x, 11);
        case Dtype::bf16: return round_to_bits(x, 8);
        case Dtype::fp8: return to_e4m3(x);
        default: return x;
      }
    };
    double worst_share = 0;  // |error| / allowed, over the elements
    for (int element = 0; element < 64; ++element) {
      std::vector<double> a(k), b(k);
      for (std::int64_t i = 0; i < k; ++i) a[i] = quantize(uniform(random)), b[i] = quantize(uniform(random));
      const ReferenceDot ref = reference_dot(a.data(), b.data(), k);
      const double error = std::fabs(emulated_device_dot(dtype, a, b) - ref.value);
      worst_share = std::max(worst_share, error / allowed_error(dtype, k, ref.value, ref.sum_abs_products));
    }
    EXPECT_LT(worst_share, 0.5) << to_string(dtype) << ": honest rounding uses too much of the tolerance";
  }
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
                     .throttle_reasons = 0x2, .repair = {.row_remap_pending = true}};
  std::vector<std::string> codes;
  for (const auto& f : check_gpu_config(g)) codes.push_back(f.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"gpu_config.persistence", "gpu_config.pcie_width", "gpu_config.pcie_gen",
                                             "gpu_config.clocks_locked", "gpu_config.row_remap", "gpu_config.pcie_replays",
                                             "gpu_config.nvlink"}));
  g.throttle_reasons = 0x1;  // idle: a low generation is power saving, info only, and still said
  int idle_gen_findings = 0;
  for (const auto& f : check_gpu_config(g)) {
    if (f.code == "gpu_config.pcie_gen") {
      ++idle_gen_findings;
      EXPECT_EQ(f.severity, Severity::info);
    }
  }
  EXPECT_EQ(idle_gen_findings, 1) << "the idle GPU's PCIe generation 4 of 5 is reported once, as info";
  const auto old_driver = check_software({.driver_cuda_version = 12040, .runtime_cuda_version = 13000});
  ASSERT_EQ(old_driver.size(), 1u);
  EXPECT_EQ(old_driver[0].severity, Severity::fail);
  EXPECT_NE(old_driver[0].message.find("12.4"), std::string::npos);
  EXPECT_NEAR(*pcie_link_gbps(5, 16), 63.015, 0.01);
  EXPECT_FALSE(pcie_link_gbps(9, 16).has_value());
}

TEST(ConfigRules, MemoryRepairAndPowerLimit) {
  auto codes_of = [](const GpuConfigReading& g) {
    std::vector<std::string> codes;
    for (const auto& f : check_gpu_config(g))
      if (f.code != "gpu_config.persistence" && f.code != "gpu_config.ecc" && f.code != "gpu_config.mig" &&
          f.code != "gpu_config.pcie_link" && f.code != "gpu_config.pcie_replays" && f.code != "gpu_config.nvlink")
        codes.push_back(f.code);
    return codes;
  };
  GpuConfigReading healthy{.index = 0, .power_limit_w = 700, .power_limit_default_w = 700,
                           .repair = {.remapped_rows_correctable = 0, .remapped_rows_uncorrectable = 0,
                                      .row_remap_pending = false, .row_remap_failed = false}};
  EXPECT_TRUE(codes_of(healthy).empty());

  GpuConfigReading capped = healthy;
  capped.power_limit_w = 500;
  const auto capped_findings = check_gpu_config(capped);
  const auto power = std::find_if(capped_findings.begin(), capped_findings.end(),
                                  [](const ConfigFinding& f) { return f.code == "gpu_config.power_limit"; });
  ASSERT_NE(power, capped_findings.end());
  EXPECT_EQ(power->severity, Severity::warn);
  EXPECT_NE(power->message.find("500 W"), std::string::npos);
  EXPECT_NE(power->message.find("700 W"), std::string::npos);
  capped.power_limit_w = 680;  // within 5% of the default: rounding, not a cap
  EXPECT_TRUE(codes_of(capped).empty());

  GpuConfigReading worn = healthy;
  worn.repair.remapped_rows_correctable = 3, worn.repair.remapped_rows_uncorrectable = 2;
  worn.repair.row_remap_failed = true;
  EXPECT_EQ(codes_of(worn), (std::vector<std::string>{"gpu_config.row_remap_failed", "gpu_config.remapped_rows"}));

  GpuConfigReading old_gpu{.index = 2, .repair = {.retired_pages = 4, .retired_pages_pending = true}};
  EXPECT_EQ(codes_of(old_gpu), (std::vector<std::string>{"gpu_config.retired_pages", "gpu_config.retired_page_count"}));
  EXPECT_EQ(codes_of(GpuConfigReading{}), (std::vector<std::string>{"gpu_config.memory_repair"}));
}

TEST(ConfigRules, PcieReplaysAndNvlinkState) {
  auto finding = [](const GpuConfigReading& g, const std::string& code) {
    std::vector<ConfigFinding> matching;
    for (const auto& f : check_gpu_config(g))
      if (f.code == code) matching.push_back(f);
    EXPECT_EQ(matching.size(), 1u) << code;
    return matching.empty() ? ConfigFinding{} : matching.front();
  };
  GpuConfigReading g{.index = 3};
  ConfigFinding replays = finding(g, "gpu_config.pcie_replays");
  EXPECT_EQ(replays.severity, Severity::info);
  EXPECT_NE(replays.message.find("not judged"), std::string::npos) << "an unread counter is never a clean link";
  g.links.pcie_replays = 0;
  EXPECT_EQ(finding(g, "gpu_config.pcie_replays").message, "GPU 3: 0 PCIe replays since the driver loaded; expected 0");
  g.links.pcie_replays = 1742;
  replays = finding(g, "gpu_config.pcie_replays");
  EXPECT_EQ(replays.severity, Severity::warn);
  EXPECT_NE(replays.message.find("1742 PCIe replays"), std::string::npos) << replays.message;

  EXPECT_NE(finding(g, "gpu_config.nvlink").message.find("no NVLink state reported"), std::string::npos);
  for (unsigned link = 0; link < 18; ++link) g.links.nvlink_up.emplace_back(link, true);
  EXPECT_EQ(finding(g, "gpu_config.nvlink").message, "GPU 3: all 18 NVLinks up; expected all up");
  g.links.nvlink_up[4].second = false, g.links.nvlink_up[11].second = false;
  const ConfigFinding down = finding(g, "gpu_config.nvlink");
  EXPECT_EQ(down.severity, Severity::warn);
  EXPECT_NE(down.message.find("NVLink 4, 11 down (16 of 18 up)"), std::string::npos) << down.message;
  for (auto& link : g.links.nvlink_up) link.second = false;
  const ConfigFinding none_up = finding(g, "gpu_config.nvlink");
  EXPECT_EQ(none_up.severity, Severity::info);
  EXPECT_NE(none_up.message.find("not judged"), std::string::npos) << none_up.message;
}

TEST(StressMath, DropThrottleSpreadAndSlowGpus) {
  EXPECT_DOUBLE_EQ(drop_pct({800, 790, 720}), 10.0);
  EXPECT_DOUBLE_EQ(throttle_pct({0x0, 0x4, std::nullopt, 0x1, 0x40}), 50.0);
  EXPECT_DOUBLE_EQ(spread_pct({700, 800}), 12.5);
  const auto slow = slower_than_fastest({{0, 800}, {1, 790}, {2, 600}}, 10.0);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_DOUBLE_EQ(slow.at(2), 25.0);
}

TEST(StressMath, IntervalCountFillsTheDuration) {
  EXPECT_EQ(interval_count(30, 10), 3);  // the quick level: three 10 s intervals, not two
  EXPECT_EQ(interval_count(300, 30), 10);
  EXPECT_EQ(interval_count(7200, 60), 120);
  EXPECT_EQ(interval_count(35, 10), 3);  // a partial interval is not run
  EXPECT_EQ(interval_count(10, 10), 1);
  EXPECT_EQ(interval_count(0.3 * 3, 0.3), 3);  // decimal durations that do not divide exactly in binary
}

TEST(StressMath, MemoryHealthChangesNameWhatGotWorse) {
  const MemoryHealth before{.repair = {.remapped_rows_correctable = 1, .remapped_rows_uncorrectable = 0,
                                       .row_remap_pending = false, .row_remap_failed = false},
                            .ecc_volatile_uncorrected = 0};
  EXPECT_TRUE(memory_health_changes(before, before).empty());
  MemoryHealth after = before;
  after.ecc_volatile_uncorrected = 3;
  after.repair.remapped_rows_uncorrectable = 1;
  after.repair.row_remap_pending = true;
  EXPECT_EQ(memory_health_changes(before, after),
            (std::vector<std::string>{"uncorrectable ECC errors (volatile) rose from 0 to 3",
                                      "rows remapped after uncorrectable errors rose from 0 to 1", "a row remap became pending"}));
  // A reading missing on one side is not compared; a count that fell (a reset) is not a fault.
  MemoryHealth unknown = after;
  unknown.ecc_volatile_uncorrected.reset();
  unknown.repair = {};
  EXPECT_TRUE(memory_health_changes(before, unknown).empty());
  EXPECT_TRUE(memory_health_changes(after, before).empty());
}

TEST(GpuSelect, AllByDefaultAndErrorsForMissingGpus) {
  EXPECT_EQ(select_gpus(std::nullopt, 3).devices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(select_gpus(std::vector<int>{2, 0, 2}, 3).devices, (std::vector<int>{2, 0}));
  EXPECT_NE(select_gpus(std::vector<int>{4}, 2).error.find("GPU 4 does not exist"), std::string::npos);
  EXPECT_EQ(split_range(10, 3, 2).begin, 7u);
}

}  // namespace
}  // namespace nodeaudit::gpu
