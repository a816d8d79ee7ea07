// The loop closed: what `learn` writes is what `score` and `run --profile` take, and with a result of
// the node (`--result`) the job's measured data-wait share sits beside the scorer's prediction: the
// scorer's own share where it predicts the step, else the scorer's slowest loader stage (read from
// `nodeaudit score`'s own JSON) against this job's compute, whose arithmetic data_wait_check_test.cpp
// checks against hand-set figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "tests/harness/learn/learn_test_util.hpp"
#include "tests/support/uring_gate.hpp"

namespace nodeaudit::learn::test {
namespace {

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string fixture_result(const std::string& name) { return std::string(NODEAUDIT_FIXTURES) + "/results/" + name; }

class LearnLoop : public LearnCli {
 protected:
  proc::ProcessResult cli(const std::vector<std::string>& args) {
    std::vector<std::string> argv{NODEAUDIT_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return proc::run_process(argv);
  }

  nlohmann::json score_json(const std::string& result) {
    const auto r = cli({"score", result, "--profile", profile_path(), "--format", "json"});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    return nlohmann::json::parse(r.out);
  }

  // The scorer cannot predict the step without a GPU figure: the check sets its slowest loader stage
  // against this job's compute (its arithmetic is tested with hand-set figures in
  // data_wait_check_test.cpp); here, end to end, that it did so with the scorer's stage and this job's
  // own compute, and gave a share.
  static void expect_loader_prediction(const nlohmann::json& assessment, const nlohmann::json& info, const nlohmann::json& check) {
    EXPECT_TRUE(assessment["step"].contains("not_judged")) << "no GPU figure in the node result: " << assessment["step"].dump();
    std::string slowest;
    double slowest_s = 0;
    for (const auto& res : assessment["resources"])
      if ((res["resource"] == "storage" || res["resource"] == "cpu_decode" || res["resource"] == "host_to_device") &&
          res.value("time_per_step_s", 0.0) >= slowest_s)
        slowest = res["resource"], slowest_s = res.value("time_per_step_s", 0.0);
    ASSERT_FALSE(slowest.empty()) << assessment["resources"].dump();
    const std::string basis = check["basis"];
    EXPECT_EQ(basis.rfind("scorer's loader model from this node's figures: " + slowest + " ", 0), 0u) << basis;
    const double compute_ms = info["step_time_s"].get<double>() * (1 - info["shares"]["data_wait"].get<double>()) * 1e3;
    EXPECT_NE(basis.find(fmt::format("against this job's measured compute {:.3g} ms per step", compute_ms)), std::string::npos) << basis;
    const double share = check["predicted_share"].get<double>();
    EXPECT_GE(share, 0.0);
    EXPECT_LT(share, 1.0);
  }

  proc::ProcessResult learn_cnn(const std::string& node_result, const std::vector<std::string>& job_flags = {}) {
    const std::string images = dir_ + "/images";
    if (!std::filesystem::exists(images)) {
      EXPECT_EQ(run_python({script("make_jpegs.py"), images, "24", "32"}), 0);
    }
    return learn({"--warmup", "1", "--steps", "3", "--result", node_result, "--md", dir_ + "/summary.md"}, std::vector<std::string>{script("train_cnn.py"), images} + job_flags);
  }
};

// A node result with storage and decode figures and no GPU (cpu-only.json): the scorer cannot
// predict this node's step (no GEMM figure), so its loader time per step from those figures is set
// against the compute this job measured per step, and the line says so.
TEST_F(LearnLoop, DataWaitBesideTheScorersLoaderTimeOnANodeWithoutAGpu) {
  TORCH_OR_SKIP();
  const std::string node = fixture_result("cpu-only.json");
  const auto r = learn_cnn(node);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json info = learn_entry()["info"];
  const nlohmann::json check = info["data_wait_check"];
  ASSERT_TRUE(check.is_object()) << info.dump();
  EXPECT_DOUBLE_EQ(check["measured_share"].get<double>(), info["shares"]["data_wait"].get<double>());
  EXPECT_EQ(check["scorer_step"], false);
  EXPECT_EQ(check["node_result"], node);

  expect_loader_prediction(score_json(node), info, check);

  EXPECT_NE(r.out.find("data wait             measured "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% (this job) / predicted "), std::string::npos) << r.out;
  EXPECT_NE(read_text(dir_ + "/summary.md").find("| data wait | measured "), std::string::npos);
  // The job ran on the CPU: no GPU figure, each said not measured with why (no GPU here; on a GPU
  // node, no compute context of the job's on any GPU).
  EXPECT_EQ(info["gpu"]["telemetry_not_measured"].get<std::string>().rfind("not measured: ", 0), 0u) << info["gpu"].dump();
  EXPECT_EQ(info["gpu"]["peak_allocated_not_measured"].get<std::string>().rfind("not measured: ", 0), 0u) << info["gpu"].dump();
  EXPECT_NE(r.out.find("  GPU                   not measured: "), std::string::npos) << r.out;
}

// A node result with a GPU (balanced.json, GEMM figures for bf16 and fp16; the job under AMP in
// bf16 so that its compute dtype has one): the scorer's own predicted data-wait share of the step.
// Then the learned files in the commands the summary names: `score` judges the learned result on 8
// H100s, and `run --profile` takes the learned profile.
TEST_F(LearnLoop, DataWaitBesideTheScorersStepAndTheLearnedFilesInScoreAndRun) {
  TORCH_OR_SKIP();
  const std::string node = fixture_result("balanced.json");
  const auto r = learn_cnn(node, {"--amp"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json check = learn_entry()["info"]["data_wait_check"];
  EXPECT_EQ(check["scorer_step"], true) << check.dump();
  const nlohmann::json assessment = score_json(node);
  ASSERT_TRUE(assessment["step"].contains("data_wait_share")) << assessment["step"].dump();
  EXPECT_DOUBLE_EQ(check["predicted_share"].get<double>(), assessment["step"]["data_wait_share"].get<double>());
  EXPECT_NE(r.out.find("predicted "), std::string::npos);
  EXPECT_NE(r.out.find("(scorer, from this node's figures)"), std::string::npos) << r.out;

  EXPECT_NE(r.out.find("  nodeaudit score " + result_path() + " --profile " + profile_path() + " --target-gpus h100x8\n"), std::string::npos) << r.out;
  const auto scored = cli({"score", result_path(), "--profile", profile_path(), "--target-gpus", "h100x8", "--format", "json"});
  ASSERT_TRUE(scored.exit_code == 0 || scored.exit_code == 1) << scored.err << scored.out;
  const nlohmann::json on_h100 = nlohmann::json::parse(scored.out);
  EXPECT_EQ(on_h100["gpus"], 8);
  EXPECT_TRUE(on_h100["step"].contains("time_s")) << "the step is predicted for 8 H100s: " << on_h100["step"].dump();
  EXPECT_NE(on_h100["overall"]["verdict"], "NOT_JUDGED");

  const std::string run_out = dir_ + "/run.json";
  const auto ran = cli({"run", "--profile", profile_path(), "--only", "host.config", "--out", run_out});
  ASSERT_TRUE(ran.exit_code == 0 || ran.exit_code == 1) << ran.err << ran.out;
  const nlohmann::json doc = nlohmann::json::parse(read_text(run_out));
  EXPECT_EQ(doc["assessment"]["profile_path"], std::filesystem::canonical(profile_path()).string()) << doc.dump().substr(0, 2000);
}

// --audit: the node's probes for the learned profile run after the job, into the learn result, and
// the prediction is made from them. The GPT job reads random memmap slices and decodes nothing:
// storage.dataset measured in --data-dir, host.decode left out by the profile, the GPU probes
// skipped with their reason where there is no GPU.
TEST_F(LearnLoop, AuditRunsTheNodesProbesForTheLearnedProfileIntoTheResult) {
  TORCH_OR_SKIP();
  if (const std::string refusal = nodeaudit::test::io_uring_refusal(); !refusal.empty() && !nodeaudit::test::io_uring_expected())
    GTEST_SKIP() << refusal;
  const std::string tokens = write_token_file(65536);
  const std::string data = dir_ + "/data";
  std::filesystem::create_directory(data);
  const auto r = learn({"--warmup", "1", "--steps", "3", "--audit", "--data-dir", data}, {script("train_gpt.py"), tokens});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json doc = nlohmann::json::parse(read_text(result_path()));
  std::map<std::string, nlohmann::json> probes;
  for (const auto& p : doc["probes"]) probes[p["id"]] = p;
  ASSERT_TRUE(probes.count("storage.dataset")) << doc["probes"].dump().substr(0, 2000);
  EXPECT_EQ(probes["storage.dataset"]["status"], "ok") << probes["storage.dataset"].dump().substr(0, 2000);
  EXPECT_EQ(probes["host.decode"]["status"], "skipped");
  EXPECT_EQ(probes.count("gpu.gemm"), 1u);
  EXPECT_EQ(probes.count("gpu.pcie"), 1u);
  EXPECT_TRUE(std::filesystem::is_empty(data)) << "the storage probe's generated files are gone";

  const nlohmann::json info = doc["probes"][0]["info"];
  const nlohmann::json check = info["data_wait_check"];
  EXPECT_EQ(check["node_result"], result_path() + " (learn --audit)");
  if (probes["gpu.gemm"]["status"] != "ok") {
    expect_loader_prediction(score_json(result_path()), info, check);
  } else {
    EXPECT_DOUBLE_EQ(check["predicted_share"].get<double>(), score_json(result_path())["step"]["data_wait_share"].get<double>());
  }
}

}  // namespace
}  // namespace nodeaudit::learn::test
