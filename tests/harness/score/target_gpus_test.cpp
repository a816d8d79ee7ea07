// --target-gpus: the spec and file parsing (bad input named with what is accepted), the GPU table's
// sources, and recorded results scored for GPUs they do not have: the GPU side from the table,
// labelled datasheet (not measured), the host side as measured.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/errors.hpp"
#include "harness/score/score.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit::score {
namespace {

using nlohmann::json;

json fixture(const std::string& name) { return test_files::fixture_json("results/" + name); }

std::string usage_error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const UsageError& error) {
    return error.what();
  }
  return "(no error)";
}

const json& resource(const json& assessment, const std::string& name) {
  for (const json& r : assessment["resources"])
    if (r["resource"] == name) return r;
  throw std::runtime_error("no resource " + name);
}

const json& rule(const json& assessment, const std::string& name) {
  for (const json& r : assessment["rules"])
    if (r["rule"] == name) return r;
  throw std::runtime_error("no rule " + name);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TargetGpusSpec, ModelTimesCountWithAliasesAndAnyCase) {
  const TargetGpus h100 = parse_target_gpus("h100x8");
  EXPECT_EQ(h100.model.name, "h100");
  EXPECT_EQ(h100.count, 8);
  EXPECT_TRUE(h100.file.empty());
  EXPECT_EQ(parse_target_gpus("A100x4").model.name, "a100-80gb");
  EXPECT_EQ(parse_target_gpus("a100-80gbx4").count, 4);
  EXPECT_EQ(parse_target_gpus("l40sx4").model.name, "l40s");
  EXPECT_EQ(parse_target_gpus("h200x1").count, 1);
}

TEST(TargetGpusSpec, BadSpecsNameThePartAndWhatIsAccepted) {
  const std::string zero = usage_error_of([] { parse_target_gpus("h100x0"); });
  EXPECT_TRUE(has(zero, "--target-gpus h100x0: GPU count 0 is outside 1 to 8 (GPUs of one h100 node")) << zero;
  const std::string huge = usage_error_of([] { parse_target_gpus("h100x9999"); });
  EXPECT_TRUE(has(huge, "GPU count 9999 is outside 1 to 8")) << huge;
  // The all-reduce figures were measured within one 8-GPU node: 16 H100s are two nodes, not one.
  const std::string two_nodes = usage_error_of([] { parse_target_gpus("h100x16"); });
  EXPECT_TRUE(has(two_nodes, "GPU count 16 is outside 1 to 8")) << two_nodes;
  EXPECT_EQ(parse_target_gpus("l40sx10").count, 10);
  const std::string unknown = usage_error_of([] { parse_target_gpus("v100x8"); });
  EXPECT_TRUE(has(unknown, "unknown GPU model 'v100'; known: h100 (h100-sxm), h200")) << unknown;
  const std::string no_count = usage_error_of([] { parse_target_gpus("h100"); });
  EXPECT_TRUE(has(no_count, "write MODELxCOUNT")) << no_count;
  const std::string peaks_only = usage_error_of([] { parse_target_gpus("h100-pciex8"); });
  EXPECT_TRUE(has(peaks_only, "only datasheet peaks for h100-pcie")) << peaks_only;
  const std::string missing_file = usage_error_of([] { parse_target_gpus("/nonexistent/b200.toml"); });
  EXPECT_TRUE(has(missing_file, "cannot be read")) << missing_file;
}

const std::string good_toml = R"toml(
name = "b200"
description = "B200 SXM 180 GB"
count = 8
source = "vendor datasheet (example)"
memory = "180GB"
memory_bandwidth_gbps = 8000
h2d_gbps = 55
allreduce_busbw_gbps = 700
[gemm_tflops]
bf16 = 2250
)toml";

std::string without(const std::string& text, const std::string& line) {
  std::string out = text;
  out.erase(out.find(line), line.size());
  return out;
}

TEST(TargetGpusFile, AFileDescribesAGpuTheTableLacks) {
  const TargetGpus b200 = parse_target_gpus_toml(good_toml, "b200.toml");
  EXPECT_EQ(b200.model.name, "b200");
  EXPECT_EQ(b200.count, 8);
  EXPECT_EQ(b200.file, "b200.toml");
  EXPECT_DOUBLE_EQ(b200.model.gemm_rate("bf16")->value, 2250);
  EXPECT_FALSE(b200.model.gemm_rate("bf16")->measured);  // a file's figures are peaks unless it says measured
  EXPECT_DOUBLE_EQ(b200.model.memory_bytes->value, 180e9);
  EXPECT_DOUBLE_EQ(b200.model.allreduce->nearest(1e9).busbw_gbps, 700);
}

TEST(TargetGpusFile, MissingFieldsAndNegativeRatesAreNamedWithTheRange) {
  const std::string missing = usage_error_of([] { parse_target_gpus_toml(without(good_toml, "h2d_gbps = 55\n"), "t.toml"); });
  EXPECT_TRUE(has(missing, "t.toml:") && has(missing, "missing required field 'h2d_gbps'")) << missing;
  std::string negative = good_toml;
  negative.replace(negative.find("bf16 = 2250"), 11, "bf16 = -5");
  const std::string rate = usage_error_of([&] { parse_target_gpus_toml(negative, "t.toml"); });
  EXPECT_TRUE(has(rate, "'bf16' in [gemm_tflops] is -5; must not be negative")) << rate;
  std::string zero_count = good_toml;
  zero_count.replace(zero_count.find("count = 8"), 9, "count = 0");
  const std::string count = usage_error_of([&] { parse_target_gpus_toml(zero_count, "t.toml"); });
  EXPECT_TRUE(has(count, "'count' must be an integer from 1 to 64")) << count;
  const std::string no_rates = usage_error_of([] {
    parse_target_gpus_toml(without(good_toml, "bf16 = 2250\n"), "t.toml");
  });
  EXPECT_TRUE(has(no_rates, "[gemm_tflops] gives no rate")) << no_rates;
  const std::string unknown = usage_error_of([] { parse_target_gpus_toml(good_toml + "\n[extra]\nx = 1\n", "t.toml"); });
  EXPECT_TRUE(has(unknown, "unknown key 'extra'")) << unknown;
}

// Every value of the table says where it comes from; published measurements are preferred and
// sit below their datasheet peaks; the all-reduce curves rise with the message size.
TEST(GpuTable, EveryFigureHasASourceAndMeasuredOnesStayBelowThePeak) {
  for (const GpuModel& m : gpu_table()) {
    for (const auto& [dtype, peak] : m.peak_tflops) {
      EXPECT_FALSE(peak.source.empty()) << m.name << " " << dtype;
      EXPECT_FALSE(peak.measured) << m.name << " " << dtype;
    }
    for (const auto& [dtype, rate] : m.gemm_tflops) {
      EXPECT_TRUE(rate.measured) << m.name << " " << dtype;
      EXPECT_LT(rate.value, m.peak_tflops.at(dtype).value) << m.name << " " << dtype;
    }
    if (m.hbm_gbps) {
      EXPECT_LT(m.hbm_gbps->value, m.hbm_peak_gbps->value) << m.name;
    }
    if (m.allreduce && m.allreduce->measured) {
      for (std::size_t i = 1; i < m.allreduce->points.size(); ++i) {
        EXPECT_GT(m.allreduce->points[i].bytes, m.allreduce->points[i - 1].bytes) << m.name;
      }
    }
  }
  EXPECT_EQ(find_gpu_model_by_device("NVIDIA H200")->name, "h200");
  EXPECT_EQ(find_gpu_model_by_device("NVIDIA H100 80GB HBM3")->name, "h100");
  EXPECT_EQ(find_gpu_model_by_device("Some Future GPU"), nullptr);
}

// A node without GPUs, qualified for 8 x H100 for ResNet-50: its 16 cores decode 150 images/s
// each, 2 cores per GPU = 300 images/s per GPU against the ~7,100 an H100 consumes at the
// profile's efficiency. CPU decode is the bottleneck, named with the figure and the need; storage
// and host RAM are judged from the measured host; the GPU-side lines carry the label.
TEST(TargetGpusAssess, CpuOnlyResultJudgedForH100sFailsOnCpuDecodeNamingFigureAndNeed) {
  const TargetGpus target = parse_target_gpus("h100x8");
  const json a = assess(load_profile("cv-resnet50-imagenet"), fixture("cpu-only.json"), CostOptions{}, &target);
  EXPECT_EQ(a["gpus"], 8);
  EXPECT_EQ(a["overall"]["verdict"], "FAIL");
  EXPECT_EQ(a["bottleneck"]["resource"], "cpu_decode");
  EXPECT_TRUE(has(a["bottleneck"]["text"], "cpu_decode: 300 images/s per GPU of 7,100 needed")) << a["bottleneck"];
  EXPECT_EQ(rule(a, "data_wait")["verdict"], "FAIL");
  const json& decode = resource(a, "cpu_decode");
  EXPECT_DOUBLE_EQ(decode["capacity"]["value"].get<double>(), 300);
  // The host's native decode rate was measured; for this PyTorch profile it is an upper bound (the
  // DataLoader was not measured in the fixture), and the basis says so.
  EXPECT_EQ(decode["capacity"].value("basis", "").rfind("upper bound: the native decoder's rate", 0), 0u) << decode;
  EXPECT_FALSE(resource(a, "storage")["capacity"].contains("basis"));
  EXPECT_EQ(resource(a, "compute")["capacity"]["basis"], "GPU table, not measured on this node");
  EXPECT_TRUE(has(resource(a, "compute")["capacity"]["metric"], "published measurement (another node: ml-engineering MAMF"));
  EXPECT_EQ(resource(a, "communication")["capacity"]["basis"], "GPU table, not measured on this node");
  // host RAM 256 GB against 8 x 80 GB of GPU memory: judged, and says the GPU memory is the table's.
  EXPECT_EQ(rule(a, "host_ram")["verdict"], "FAIL");
  EXPECT_EQ(rule(a, "host_ram")["datasheet_inputs"], json::array({"GPU memory per GPU"}));
  EXPECT_EQ(rule(a, "cpu_cores")["verdict"], "WARN");  // 16 cores / 8 GPUs = 2.0, FAIL below 2
  EXPECT_THROW(rule(a, "uniformity"), std::runtime_error);  // nothing per GPU to compare: not a rule here
  EXPECT_TRUE(has(a["target_gpus"]["not_applicable"][0], "uniformity: the target's GPUs come from the GPU table"));
  EXPECT_EQ(a["step"]["basis"], "GPU side from the GPU table, not measured on this node");
  EXPECT_EQ(a["bottleneck"]["basis"], "GPU side from the GPU table, not measured on this node");
  // Every judged line resting on the table says so.
  for (const json& r : a["rules"]) {
    if (r["verdict"] == "NOT_JUDGED" || !r.contains("datasheet_inputs")) continue;
    EXPECT_TRUE(has(r["text"], "[GPU table, not measured on this node: ")) << r["text"];
  }
  EXPECT_TRUE(has(rule(a, "utilization")["text"], "[GPU table, not measured on this node: compute")) << rule(a, "utilization");
  EXPECT_EQ(a["target_gpus"]["spec"], "h100x8");
  EXPECT_FALSE(a["target_gpus"].contains("own_gpus")) << "the node has no GPUs of its own";
  const std::string text = render_assessment(a);
  EXPECT_TRUE(has(text, "judged for 8 x H100 SXM5 80 GB")) << text;
  EXPECT_TRUE(has(text, "usable per GPU [GPU table, not measured on this node]")) << text;
}

TEST(TargetGpusAssess, MemoryFitOfTheSevenBillionFineTuneRestsOnTheTablesUsableMemory) {
  const TargetGpus target = parse_target_gpus("a100-80gbx8");
  const json a = assess(load_profile("llm-finetune-7b"), fixture("cpu-only.json"), CostOptions{}, &target);
  EXPECT_EQ(a["memory"]["basis"], "GPU table, not measured on this node");
  EXPECT_DOUBLE_EQ(a["memory"]["usable_bytes"].get<double>(), 81920.0 * 1024 * 1024);  // nvidia-smi memory.total
  EXPECT_NE(rule(a, "memory_fit")["verdict"], "NOT_JUDGED");
  EXPECT_EQ(rule(a, "memory_fit")["datasheet_inputs"], json::array({"GPU memory per GPU"}));
  EXPECT_NE(a["overall"]["verdict"], "NOT_JUDGED");
}

// A result measured on real GPUs, judged for other ones: the table's figures replace the measured
// GPU side, and the assessment says the node's own GPUs were not used.
TEST(TargetGpusAssess, RealGpusPlusTargetUseTheTableAndSaySo) {
  const Profile profile = load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
  const json measured = assess(profile, fixture("balanced.json"), CostOptions{});
  EXPECT_FALSE(resource(measured, "compute")["capacity"].contains("basis"));
  const TargetGpus target = parse_target_gpus("h200x4");
  const json a = assess(profile, fixture("balanced.json"), CostOptions{}, &target);
  EXPECT_EQ(a["gpus"], 4);
  EXPECT_EQ(resource(a, "compute")["capacity"]["basis"], "GPU table, not measured on this node");
  EXPECT_NE(resource(a, "compute")["capacity"]["value"], resource(measured, "compute")["capacity"]["value"]);
  EXPECT_TRUE(has(a["target_gpus"]["own_gpus"], "the node's own 8 GPUs (env.gpus) were not used: judged for 4 x H200"))
      << a["target_gpus"];
  EXPECT_TRUE(has(render_assessment(a), "were not used"));
}

// A host with the RAM and cores 8 H100s need, for a workload the GPUs bound: nothing left unjudged
// stands between it and a PASS.
TEST(TargetGpusAssess, AHostThatKeepsUpPassesForTheTarget) {
  json result = fixture("cpu-only.json");
  result["env"]["host"]["ram_total_bytes"] = 2e12;
  result["env"]["host"]["cores"] = 64;
  const TargetGpus target = parse_target_gpus("h100x8");
  const json a = assess(load_profile("llm-finetune-7b"), result, CostOptions{}, &target);
  EXPECT_EQ(a["overall"]["verdict"], "PASS") << a["overall"];
  EXPECT_EQ(a["overall"]["complete"], true);
}

TEST(TargetGpusAssess, ALinkRateBoundIsShownAsABoundNotAMeasuredSize) {
  const TargetGpus target = parse_target_gpus("l40sx4");
  const json a = assess(load_profile("llm-finetune-7b"), fixture("cpu-only.json"), CostOptions{}, &target);
  const std::string metric = resource(a, "communication")["capacity"]["metric"];
  EXPECT_TRUE(has(metric, "an upper bound for all-reduce busbw without NVLink")) << metric;
  EXPECT_TRUE(has(metric, "a bound at any size")) << metric;
  EXPECT_FALSE(has(metric, " at 1 B")) << metric;
}

TEST(TargetGpusAssess, ATargetWithoutARateForTheProfilesDtypeIsRefused) {
  Profile fp8 = load_profile("llm-finetune-7b");
  fp8.model.dtype = "fp8";
  const std::string error = usage_error_of([&] { check_target_serves(parse_target_gpus("a100x8"), fp8); });
  EXPECT_TRUE(has(error, "a100-80gb has no fp8 GEMM rate, the dtype profile llm-finetune-7b computes in")) << error;
  EXPECT_EQ(usage_error_of([&] { check_target_serves(parse_target_gpus("h100x8"), fp8); }), "(no error)");
}

TEST(TargetGpusAssess, OneTargetGpuHasNoAllReduce) {
  const TargetGpus target = parse_target_gpus("h100x1");
  const json a = assess(load_profile("cv-resnet50-imagenet"), fixture("cpu-only.json"), CostOptions{}, &target);
  EXPECT_EQ(resource(a, "communication")["needed"], false);
  EXPECT_EQ(rule(a, "cpu_cores")["figure"], 16);
}

}  // namespace
// A model with a datasheet peak only (L40S) is taken at the peak times the mean published GEMM/peak
// ratio of the models that have both for that dtype (H100 SXM and A100 SXM bf16), and the verdict
// says the step rests on a datasheet peak.
TEST(TargetGpusAssess, APeakOnlyModelIsScaledByThePublishedRatioAndTheVerdictSaysSo) {
  const double ratio = (792.1 / 989.4 + 267.9 / 312.0) / 2;
  const auto rate = parse_target_gpus("l40sx4").model.gemm_rate("bf16");
  ASSERT_TRUE(rate.has_value());
  EXPECT_TRUE(rate->from_peak);
  EXPECT_NEAR(rate->value, 362.05 * ratio, 1e-9);
  EXPECT_EQ(rate->label().rfind("datasheet peak (NVIDIA L40S datasheet", 0), 0u) << rate->label();
  EXPECT_NE(rate->label().find("h100 bf16 0.80, a100-80gb bf16 0.86"), std::string::npos) << rate->label();
  const TargetGpus target = parse_target_gpus("l40sx4");
  const json a = assess(load_profile("cv-resnet50-imagenet"), fixture("cpu-only.json"), CostOptions{}, &target);
  const std::string summary = render_summary(a);
  EXPECT_NE(summary.find("(the step is predicted from a datasheet peak: fp16 GEMM"), std::string::npos) << summary;
  // A published measurement is taken as it is.
  EXPECT_FALSE(parse_target_gpus("h100x8").model.gemm_rate("bf16")->from_peak);
}

}  // namespace nodeaudit::score
