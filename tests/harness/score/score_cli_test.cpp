// `nodeaudit score` and `nodeaudit profiles` end to end: exit codes (0 ok, 1 FAIL verdict, 2 bad
// input) and the one-line `file:line:column` errors for bad profiles and result files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/harness/score/score_cli.hpp"
#include "tests/support/fixtures.hpp"

namespace {

using nodeaudit::score_test::CliRun;
using nodeaudit::score_test::run_cli;

using nodeaudit::test_files::fixture;
const std::string test_profile = fixture("profiles/balance-test.toml");

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("nodeaudit-score-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

}  // namespace

TEST(ProfilesCommand, ListShowsEveryShippedProfile) {
  const CliRun run = run_cli("profiles list");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  for (const char* name : {"llm-pretrain-7b", "llm-finetune-7b", "llm-lora-7b", "cv-resnet50-imagenet", "cv-detection",
                           "diffusion-finetune", "llm-inference-batch"})
    EXPECT_NE(run.out.find(name), std::string::npos) << name;
}

TEST(ProfilesCommand, ShowPrintsDerivedFiguresAsJson) {
  const CliRun run = run_cli("profiles show llm-finetune-7b --format json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto profile = nlohmann::json::parse(run.out);
  EXPECT_DOUBLE_EQ(profile["model"]["model_state_bytes"].get<double>(), 16 * 6.74e9);
}

TEST(ProfilesCommand, EveryBadProfileExitsTwoWithItsLocation) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"syntax-error", ":3:"},           {"unknown-key", ":8:1: unknown key"},
      {"negative-size", ":10:15:"},      {"missing-field", ":14:1: missing required field"},
      {"fraction-above-one", ":20:17:"}, {"wrong-type", ":15:23:"}};
  for (const auto& [name, location] : cases) {
    const std::string path = fixture("profiles/" + name + ".toml");
    const CliRun run = run_cli("profiles show " + path);
    EXPECT_EQ(run.exit_code, 2) << name << ": " << run.out;
    EXPECT_EQ(run.out.rfind("nodeaudit: " + path + location, 0), 0u) << run.out;
  }
}

TEST(ScoreCommand, BalancedResultPassesAndStarvedOneFails) {
  const CliRun balanced = run_cli("score " + fixture("results/balanced.json") + " --profile " + test_profile);
  EXPECT_EQ(balanced.exit_code, 0) << balanced.out;
  EXPECT_NE(balanced.out.find("Overall: PASS"), std::string::npos) << balanced.out;
  const CliRun starved = run_cli("score " + fixture("results/storage-starved.json") + " --profile " + test_profile);
  EXPECT_EQ(starved.exit_code, 1) << starved.out;
  EXPECT_NE(starved.out.find("Limiting resource: storage: 800 MB/s of 1.49 GB/s needed"), std::string::npos)
      << starved.out;
}

TEST(ScoreCommand, BadProfileIsUsageError) {
  const CliRun run =
      run_cli("score " + fixture("results/balanced.json") + " --profile " + fixture("profiles/unknown-key.toml"));
  EXPECT_EQ(run.exit_code, 2) << run.out;
}

TEST(ScoreCommand, JsonCarriesCostAndOutWritesTheAssessmentIntoTheResult) {
  const std::string out = temp_path("scored.json");
  std::filesystem::remove(out);
  const CliRun run = run_cli("score " + fixture("results/balanced.json") + " --profile " + test_profile +
                            " --price-per-hour 20 --ops-cost 1 --format json --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto assessment = nlohmann::json::parse(run.out);
  // 20/h x 0.16927 h + 1 = 4.385
  EXPECT_NEAR(assessment["cost"]["run_cost"].get<double>(), 20 * 1e6 * 0.0195 / 32 / 3600 + 1, 1e-9);
  std::ifstream in(out);
  const auto written = nlohmann::json::parse(in);
  EXPECT_EQ(written["assessment"]["overall"]["verdict"], "PASS");
  EXPECT_EQ(written["profile"], "balance-test");
  std::filesystem::remove(out);
}

TEST(ScoreCommand, RefusesOtherSchemasAndCorruptFiles) {
  const std::string other = temp_path("other-schema.json");
  std::ofstream(other) << R"({"schema": "nodeaudit.result/2", "probes": []})";
  EXPECT_EQ(run_cli("score " + other + " --profile " + test_profile).exit_code, 2);
  const std::string corrupt = temp_path("corrupt.json");
  std::ofstream(corrupt) << R"({"schema": "nodeaudit.result/1", "probes": [)";
  EXPECT_EQ(run_cli("score " + corrupt + " --profile " + test_profile).exit_code, 2);
  const std::string empty = temp_path("empty.json");
  std::ofstream(empty) << "";
  EXPECT_EQ(run_cli("score " + empty + " --profile " + test_profile).exit_code, 2);
  for (const auto& path : {other, corrupt, empty}) std::filesystem::remove(path);
}

TEST(ScoreCommand, BadPriceIsUsageError) {
  const CliRun run =
      run_cli("score " + fixture("results/balanced.json") + " --profile " + test_profile + " --price-per-hour -3");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("--price-per-hour -3"), std::string::npos) << run.out;
}

// A CPU-only result judged for 8 H100s: a verdict instead of NOT_JUDGED, the table's figures
// labelled in the text and the JSON.
TEST(ScoreCommand, TargetGpusJudgeACpuOnlyResult) {
  const std::string cpu_only = fixture("results/cpu-only.json");
  const CliRun plain = run_cli("score " + cpu_only + " --profile cv-resnet50-imagenet");
  EXPECT_NE(plain.out.find("Overall: NOT_JUDGED"), std::string::npos) << plain.out;
  const CliRun run = run_cli("score " + cpu_only + " --profile cv-resnet50-imagenet --target-gpus h100x8");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("Overall: FAIL"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Limiting resource: cpu_decode: 300 images/s per GPU of 7,100 needed"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("at 792 TFLOP/s (published measurement (another node: ml-engineering MAMF table"), std::string::npos)
      << run.out;
  const CliRun json_run =
      run_cli("score " + cpu_only + " --profile cv-resnet50-imagenet --target-gpus h100x8 --format json");
  const auto assessment = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(assessment["target_gpus"]["label"], "GPU table, not measured on this node");
  EXPECT_EQ(assessment["target_gpus"]["figures"]["gemm_tflops_bf16"]["kind"], "published measurement");
  // H100's fp16 figure is its bf16 MAMF taken for fp16 (same tensor-core rate): said so.
  EXPECT_EQ(assessment["target_gpus"]["figures"]["gemm_tflops_fp16"]["kind"], "published measurement");
  EXPECT_NE(assessment["target_gpus"]["figures"]["gemm_tflops_fp16"]["label"].get<std::string>().find(
                "the H100 SXM bf16 figure (fp16 runs on the same tensor cores"),
            std::string::npos);
}

TEST(ScoreCommand, BadTargetGpusExitTwoNamingWhatIsAcceptedAndWriteNothing) {
  const std::string out = temp_path("target-out.json");
  std::filesystem::remove(out);
  const std::string base = "score " + fixture("results/cpu-only.json") + " --profile cv-resnet50-imagenet --out " + out;
  const CliRun unknown = run_cli(base + " --target-gpus v100x8");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("unknown GPU model 'v100'; known: h100 (h100-sxm), h200 (h200-sxm), a100-80gb"),
            std::string::npos)
      << unknown.out;
  const CliRun zero = run_cli(base + " --target-gpus h100x0");
  EXPECT_EQ(zero.exit_code, 2) << zero.out;
  EXPECT_NE(zero.out.find("GPU count 0 is outside 1 to 8"), std::string::npos) << zero.out;
  const std::string toml = temp_path("no-h2d.toml");
  std::ofstream(toml) << "name = \"b200\"\ncount = 8\nsource = \"example\"\nmemory = \"180GB\"\n"
                         "memory_bandwidth_gbps = 8000\nallreduce_busbw_gbps = 700\n[gemm_tflops]\nbf16 = 2250\n";
  const CliRun missing = run_cli(base + " --target-gpus " + toml);
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("missing required field 'h2d_gbps'"), std::string::npos) << missing.out;
  EXPECT_EQ(std::count(missing.out.begin(), missing.out.end(), '\n'), 1) << missing.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove(toml);
}

TEST(ProfilesCommand, GpusListsTheTableAndOneModelsSourcedFigures) {
  const CliRun table = run_cli("profiles gpus");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  for (const char* model : {"h100 ", "h200 ", "a100-80gb ", "l40s "})
    EXPECT_NE(table.out.find(std::string("\n") + model), std::string::npos) << model << table.out;
  EXPECT_NE(table.out.find("No figure here was measured on this node"), std::string::npos) << table.out;
  const CliRun h100 = run_cli("profiles gpus h100 --format json");
  ASSERT_EQ(h100.exit_code, 0) << h100.out;
  const auto figures = nlohmann::json::parse(h100.out);
  EXPECT_DOUBLE_EQ(figures["gemm_tflops_bf16"]["value"].get<double>(), 792.1);
  EXPECT_EQ(figures["gemm_tflops_bf16"]["kind"], "published measurement");
  EXPECT_EQ(figures["gemm_tflops_tf32"]["kind"], "datasheet peak");  // no published tf32 GEMM: the peak, said so
  EXPECT_EQ(figures["allreduce_busbw"]["points"].size(), 14u);
  const CliRun unknown = run_cli("profiles gpus v100");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("profiles gpus v100: unknown model; known: h100"), std::string::npos) << unknown.out;
}
