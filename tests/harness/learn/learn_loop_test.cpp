// The loop closed: what `learn` writes is what `score`, `run --profile` and `predict` take, and with a
// result of the node (`--result`) the job's measured data-wait share sits beside the prediction. The
// prediction is read back from `nodeaudit predict` of the learn result on the same node, so the
// figure learn prints is the one model's, not a second one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

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

  // `nodeaudit predict` of this learn result on `node`: the cell the one model gives.
  nlohmann::json predicted_on(const std::string& node) {
    const auto r = cli({"predict", result_path(), node, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["cells"][0][0];
  }

  proc::ProcessResult learn_cnn(const std::string& node_result, const std::vector<std::string>& job_flags = {}) {
    const std::string images = dir_ + "/images";
    if (!std::filesystem::exists(images)) {
      EXPECT_EQ(run_python({script("make_jpegs.py"), images, "24", "32"}), 0);
    }
    return learn({"--warmup", "1", "--steps", "3", "--result", node_result, "--md", dir_ + "/summary.md"}, std::vector<std::string>{script("train_cnn.py"), images} + job_flags);
  }
};

// A node result with storage and decode figures and no GPU (cpu-only.json): the job's own compute
// and CPU carried to that node's cores and storage. learn's line and `nodeaudit predict` of the
// learn result give the same figure: one model, not two.
TEST_F(LearnLoop, DataWaitBesideThePredictionOnANodeWithoutAGpu) {
  TORCH_OR_SKIP();
  const std::string node = fixture_result("cpu-only.json");
  const auto r = learn_cnn(node);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json info = learn_entry()["info"];
  const nlohmann::json check = info["data_wait_check"];
  ASSERT_TRUE(check.is_object()) << info.dump();
  EXPECT_NEAR(check["measured_share"].get<double>(), info["shares"]["data_wait"].get<double>(), 1e-9);
  EXPECT_EQ(check["node_result"], node);
  // That node's CPU is another model and this node's per-core decode rate was not measured (no
  // --audit): the job's CPU time cannot be carried there, and both commands say so alike.
  EXPECT_TRUE(check["predicted_share"].is_null()) << check.dump();
  EXPECT_NE(check["basis"].get<std::string>().find("host.decode was not measured on both"), std::string::npos) << check.dump();
  const nlohmann::json cell = predicted_on(node);
  EXPECT_TRUE(cell["data_wait_share"].is_null()) << cell.dump();
  EXPECT_EQ(cell["not_judged"][0]["to_measure"], "nodeaudit run --only host.decode") << cell.dump();
  // What the job measured about itself travels in the result: its CPU split and its workers.
  const nlohmann::json measured = info["job_measured"];
  EXPECT_EQ(measured["loader_workers"], 2) << measured.dump();
  EXPECT_GT(measured["tree_cpu_s"].get<double>(), 0);
  EXPECT_GT(measured["ranks_cpu_s"].get<double>(), 0);
  EXPECT_EQ(measured["gpu_model"], "");
  // The tree's memory: a Python with torch imported holds well over 50 MB; the rank and its two
  // forked workers share most of theirs, counted once (proportional sizes), so well under 2 GB.
  EXPECT_GT(measured["resident_bytes"].get<double>(), 50e6) << measured.dump();
  EXPECT_LT(measured["resident_bytes"].get<double>(), 2e9) << measured.dump();

  EXPECT_NE(r.out.find("data wait             measured "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% (this job) / not judged: cpu ("), std::string::npos) << r.out;
  EXPECT_NE(read_text(dir_ + "/summary.md").find("| data wait | measured "), std::string::npos);
  // The job ran on the CPU: no GPU figure, each said not measured with why (no GPU here; on a GPU
  // node, no compute context of the job's on any GPU).
  EXPECT_EQ(info["gpu"]["telemetry_not_measured"].get<std::string>().rfind("not measured: ", 0), 0u) << info["gpu"].dump();
  EXPECT_EQ(info["gpu"]["peak_allocated_not_measured"].get<std::string>().rfind("not measured: ", 0), 0u) << info["gpu"].dump();
  EXPECT_NE(r.out.find("  GPU                   not measured: "), std::string::npos) << r.out;
}

// A node result with a GPU (balanced.json, GEMM figures for bf16 and fp16; the job under AMP in
// bf16 so that its compute dtype has one): the predicted data-wait share of the step there.
// Then the learned files in the commands the summary names: `score` judges the learned result on 8
// H100s, and `run --profile` takes the learned profile.
TEST_F(LearnLoop, DataWaitBesideThePredictionOnAGpuNodeAndTheLearnedFilesInScoreAndRun) {
  TORCH_OR_SKIP();
  const std::string node = fixture_result("balanced.json");
  const auto r = learn_cnn(node, {"--amp"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json check = learn_entry()["info"]["data_wait_check"];
  // The job ran without a GPU; on this node's GPUs its compute is its counted FLOPs at the GEMM rate.
  // The CPU side is another CPU model without this node's decode rate: not judged, in both commands.
  const nlohmann::json cell = predicted_on(node);
  EXPECT_EQ(check["predicted_share"].is_null(), cell["data_wait_share"].is_null()) << check.dump() << cell.dump();
  EXPECT_NE(cell["stages"][0]["note"].get<std::string>().find("the profile's counted FLOPs"), std::string::npos) << cell["stages"][0].dump();
  EXPECT_NE(r.out.find("% (this job) / not judged: cpu ("), std::string::npos) << r.out;

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
  // The job on its own node, from its own measurements and the figures the audit took: its compute
  // as measured, its CPU over this node's cores, its reads at the audited storage rate.
  ASSERT_TRUE(check["predicted_share"].is_number()) << check.dump();
  EXPECT_GE(check["predicted_share"].get<double>(), 0.0);
  EXPECT_LT(check["predicted_share"].get<double>(), 1.0);
  EXPECT_GE(check["predicted_step_s"].get<double>(), info["job_measured"]["compute_s"].get<double>()) << check.dump();
  // A PyTorch loader: the DataLoader probe ran in the job's own Python.
  ASSERT_EQ(probes.count("host.dataloader"), 1u) << "learn --audit runs host.dataloader for a PyTorch loader";
  EXPECT_EQ(probes["host.dataloader"]["reason"].get<std::string>().find("Python"), std::string::npos)
      << "it had the job's interpreter: " << probes["host.dataloader"].dump().substr(0, 1500);
}

}  // namespace
}  // namespace nodeaudit::learn::test
