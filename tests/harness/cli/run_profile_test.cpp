// `run --profile` end to end, the README's main workflow: the assessment in the result, profile
// sizes reaching the probes, --price-per-hour needing a profile, the order of exit codes (bad input,
// then probe failure, then the verdict), --skip and --telemetry-out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "harness/core/result.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;
using nodeaudit::proc::expect_one_line_usage_error;
using nodeaudit::proc::files_in;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::probe_in;
using nodeaudit::proc::run_process;

namespace {

const std::string balance_test_profile = std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml";

class RunProfile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("run-profile"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

// balance-test with its [data] sample size and decoder replaced.
std::string profile_variant(const std::string& dir, const std::string& sample_size, const std::string& decode) {
  std::ifstream in(balance_test_profile);
  std::string text{std::istreambuf_iterator<char>(in), {}};
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("sample_size = \"1MB\"", "sample_size = \"" + sample_size + "\"");
  replace("decode = \"jpeg\"", "decode = \"" + decode + "\"");
  const std::string path = dir + "/variant-" + decode + ".toml";
  std::ofstream(path) << text;
  return path;
}

TEST_F(RunProfile, WritesTheAssessmentIntoTheResultAndExitsByItsVerdict) {
  const std::string out = dir_ + "/r.json";
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--profile", balance_test_profile, "--out", out});
  const nlohmann::json doc = load_result_file(out);
  ASSERT_TRUE(doc.contains("assessment")) << doc.dump();
  const auto& assessment = doc["assessment"];
  EXPECT_EQ(assessment["profile"], "balance-test");
  EXPECT_EQ(assessment["profile_path"], fs::canonical(balance_test_profile).string());
  const std::string verdict = assessment["overall"]["verdict"];
  // test.ok measures no figure this profile's rules read: every rule resting on a GPU probe is not
  // judged; the rules that read the node's own description (RAM and cores per GPU, the interconnect)
  // can be judged only where it lists GPUs. So NOT_JUDGED on a node without GPUs, else WARN (some
  // rules not judged) or FAIL from one of those rules.
  bool a_rule_failed = false;
  for (const auto& rule : assessment["rules"]) {
    const std::string name = rule["rule"];
    if (name == "utilization" || name == "memory_fit" || name == "data_wait" || name == "uniformity") {
      EXPECT_EQ(rule["verdict"], "NOT_JUDGED") << rule.dump();
    }
    a_rule_failed |= rule["verdict"] == "FAIL";
  }
  const bool node_has_gpus = !doc["env"]["gpus"].empty();
  EXPECT_EQ(verdict, !node_has_gpus ? "NOT_JUDGED" : a_rule_failed ? "FAIL" : "WARN") << assessment["overall"].dump();
  EXPECT_EQ(r.exit_code, verdict == "FAIL" ? 1 : 0) << verdict << "\n" << r.err;
  EXPECT_NE(r.out.find("Overall: " + verdict), std::string::npos) << r.out;
}

TEST_F(RunProfile, TheProfilesSampleAndImageSizesReachTheProbes) {
  const std::string jpeg = dir_ + "/jpeg.json", raw = dir_ + "/raw.json";
  ASSERT_EQ(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.sizes", "--profile", balance_test_profile, "--out", jpeg}).exit_code, 0);
  const auto with_jpeg = probe_in(load_result_file(jpeg), "test.sizes");
  EXPECT_EQ(with_jpeg["params"]["sample-size"], 1000000) << with_jpeg["params"].dump();
  EXPECT_EQ(with_jpeg["params"]["image-size"], 1000000) << "a JPEG workload's samples are its images";
  // No JPEG decoding: the sample size applies, the image size keeps its default.
  const std::string profile = profile_variant(dir_, "2MB", "none");
  ASSERT_EQ(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.sizes", "--profile", profile, "--out", raw}).exit_code, 0);
  const auto without_jpeg = probe_in(load_result_file(raw), "test.sizes");
  EXPECT_EQ(without_jpeg["params"]["sample-size"], 2000000) << without_jpeg["params"].dump();
  EXPECT_EQ(without_jpeg["params"]["image-size"], 4096);
}

TEST_F(RunProfile, PricePerHourNeedsAProfile) {
  expect_one_line_usage_error(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--price-per-hour", "12", "--out", dir_}),
                              "needs --profile");
  EXPECT_TRUE(files_in(dir_).empty());
}

TEST_F(RunProfile, BadInputComesBeforeProbeFailureWhichComesBeforeTheVerdict) {
  // A bad profile is refused before any probe runs.
  const std::string bad_profile = std::string(NODEAUDIT_FIXTURES) + "/profiles/unknown-key.toml";
  expect_one_line_usage_error(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.fail", "--profile", bad_profile, "--out", dir_}),
                              "unknown-key.toml");
  EXPECT_TRUE(files_in(dir_).empty());
  // A probe's refused input: 2, even beside a failed probe.
  const std::string refused = dir_ + "/refused.json";
  const auto r2 = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.fail,test.bad-input", "--profile", balance_test_profile, "--out", refused});
  EXPECT_EQ(r2.exit_code, 2) << r2.err;
  EXPECT_EQ(probe_in(load_result_file(refused), "test.bad-input")["reason"], "--path /nowhere: asked to refuse");
  // A failed probe: 1, whatever the verdict.
  const std::string failed = dir_ + "/failed.json";
  const auto r1 = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.fail,test.ok", "--profile", balance_test_profile, "--out", failed});
  EXPECT_EQ(r1.exit_code, 1) << r1.err;
  EXPECT_TRUE(load_result_file(failed).contains("assessment")) << "the verdict is still written";
}

// The README's workflow on a machine without GPUs: the host measured, judged for 8 H100s from the
// GPU table. Every figure the table gave carries its label, the host's figures do not, and the run
// ends in the verdict, bottleneck and cost sentences.
TEST_F(RunProfile, TargetGpusJudgeTheMeasuredHostAndLabelEveryDatasheetFigure) {
  const std::string out = dir_ + "/target.json";
  const auto r = run_process({NODEAUDIT_BINARY, "run", "--only", "host.*,storage.*", "--profile", "cv-resnet50-imagenet",
                              "--target-gpus", "h100x8", "--data-dir", dir_, "--out", out});
  const nlohmann::json doc = load_result_file(out);
  ASSERT_TRUE(doc.contains("assessment")) << r.err;
  const nlohmann::json& a = doc["assessment"];
  EXPECT_EQ(a["target_gpus"]["spec"], "h100x8");
  EXPECT_EQ(a["gpus"], 8);
  const std::string verdict = a["overall"]["verdict"];
  EXPECT_NE(verdict, "NOT_JUDGED") << a["overall"];
  bool probe_failed = false;
  for (const auto& probe : doc["probes"]) probe_failed |= probe["status"] != "ok" && probe["status"] != "skipped";
  EXPECT_EQ(r.exit_code, probe_failed || verdict == "FAIL" ? 1 : 0) << r.err;
  int labelled = 0;
  for (const auto& resource : a["resources"]) {
    if (!resource.contains("capacity")) continue;
    const std::string metric = resource["capacity"]["metric"];
    // The basis marks a line resting on the GPU table (an upper bound says its own basis).
    const bool from_table = resource["capacity"].value("basis", "") == "GPU table, not measured on this node";
    EXPECT_EQ(from_table, (metric.rfind("published measurement (another node: ", 0) == 0 || metric.rfind("datasheet peak (", 0) == 0)) << metric;
    const std::string name = resource["resource"];
    const bool gpu_side = name == "compute" || name == "host_to_device" || name == "communication";
    EXPECT_EQ(from_table, gpu_side) << name << ": " << metric;
    labelled += from_table;
  }
  EXPECT_EQ(labelled, 3);  // compute, host-to-device, communication (ResNet-50 reads no GPU memory stage)
  for (const auto& rule : a["rules"]) {
    if (rule["verdict"] == "NOT_JUDGED") continue;
    EXPECT_TRUE(rule.contains("datasheet_inputs")) << rule;  // every judged rule here rests on the table somewhere
    EXPECT_NE(rule["text"].get<std::string>().find("[GPU table, not measured on this node: "), std::string::npos) << rule;
  }
  EXPECT_EQ(a["memory"]["basis"], "GPU table, not measured on this node");
  EXPECT_NE(r.out.find("\nVerdict for cv-resnet50-imagenet on 8 x H100 SXM5 80 GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nLimiting resource: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nCost of one effective run: not computed (give --price-per-hour"), std::string::npos) << r.out;
}

// A FAIL verdict is exit 1 from a real run: 1.6 TB of model state per GPU fits no target GPU.
TEST_F(RunProfile, FailVerdictForTheTargetExitsOne) {
  const std::string out = dir_ + "/fail.json";
  const std::string profile = std::string(NODEAUDIT_FIXTURES) + "/profiles/too-big-for-one-gpu.toml";
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--profile", profile, "--target-gpus",
                              "h200x1", "--out", out});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json doc = load_result_file(out);
  EXPECT_EQ(doc["assessment"]["overall"]["verdict"], "FAIL");
  EXPECT_EQ(doc["assessment"]["bottleneck"]["resource"], "memory");
  EXPECT_NE(r.out.find("memory_fit: peak 1.5 TiB of 140.4 GiB usable per GPU"), std::string::npos) << r.out;
}

TEST_F(RunProfile, BadTargetGpusAreRefusedBeforeAnyProbeRuns) {
  for (const std::string spec : {"h100x0", "h100x9999", "v100x8"})
    expect_one_line_usage_error(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--profile",
                                             balance_test_profile, "--target-gpus", spec, "--out", dir_}),
                                "--target-gpus " + spec);
  expect_one_line_usage_error(
      run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--target-gpus", "h100x8", "--out", dir_}),
      "needs --profile");
  const std::string fp8_only = dir_ + "/fp8-only.toml";
  std::ofstream(fp8_only) << "name = \"x\"\ncount = 8\nsource = \"example\"\nmemory = \"80GB\"\n"
                             "memory_bandwidth_gbps = 3000\nh2d_gbps = 50\nallreduce_busbw_gbps = 400\n"
                             "[gemm_tflops]\nfp8 = 1500\n";
  expect_one_line_usage_error(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--profile",
                                           balance_test_profile, "--target-gpus", fp8_only, "--out", dir_}),
                              "x has no bf16 GEMM rate, the dtype profile balance-test computes in; add it to");
  fs::remove(fp8_only);
  EXPECT_TRUE(files_in(dir_).empty());
}

TEST_F(RunProfile, SkipLeavesProbesOutAndMayNotLeaveNone) {
  const std::string out = dir_ + "/r.json";
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok,test.fail,test.sizes", "--skip", "test.fail,test.si*", "--out", out});
  EXPECT_EQ(r.exit_code, 0) << "the failing probe was skipped\n" << r.err;
  const nlohmann::json doc = load_result_file(out);
  ASSERT_EQ(doc["probes"].size(), 1u) << doc["probes"].dump();
  EXPECT_EQ(doc["probes"][0]["id"], "test.ok");
  expect_one_line_usage_error(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--skip", "test.*", "--out", dir_ + "/none.json"}),
                              "leave no probe to run");
}

TEST_F(RunProfile, TelemetryOutKeepsTheSeriesAndNeverOverwrites) {
  const std::string csv = dir_ + "/telemetry.csv", out = dir_ + "/r.json";
  // One round: the result keeps one round's telemetry summary, the CSV every round's rows.
  const auto r = run_process(
      {NODEAUDIT_TESTBIN, "run", "--only", "test.hold", "--rounds", "1", "--telemetry-out", csv, "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto samples = probe_in(load_result_file(out), "test.hold")["telemetry"]["samples"].get<std::size_t>();
  EXPECT_GE(samples, 1u) << "test.hold lasts 1.5 s: the 0.5 s sampler has rows";
  std::ifstream in(csv);
  ASSERT_TRUE(in) << "no telemetry file";
  std::string header, row;
  std::getline(in, header);
  EXPECT_EQ(header, "probe,t_s,column,value");
  std::set<std::string> times;  // one row of the sampler is one line per column, all at one t_s
  while (std::getline(in, row)) {
    ASSERT_EQ(row.rfind("test.hold,", 0), 0u) << row;
    times.insert(row.substr(0, row.find(',', std::string("test.hold,").size())));
  }
  EXPECT_EQ(times.size(), samples) << "the CSV holds the rows the result summarizes";
  const auto size_before = fs::file_size(csv);
  expect_one_line_usage_error(run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--telemetry-out", csv, "--out", dir_ + "/r2.json"}),
                              "already exists");
  EXPECT_EQ(fs::file_size(csv), size_before);
  EXPECT_FALSE(fs::exists(dir_ + "/r2.json"));
}

}  // namespace
