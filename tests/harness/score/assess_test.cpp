// The balance model on recorded results (tests/fixtures/results) scored with the round-number
// profile tests/fixtures/profiles/balance-test.toml. The hand calculation every test starts from:
//   8 GPUs, 4 samples per GPU per step, 1 TFLOP per sample, efficiency 0.5, slowest GEMM 500 TFLOP/s
//   compute        = 4 TFLOP / (500 x 0.5 TFLOP/s)                   = 0.016 s
//   communication  = 2 GB gradients x 2 x 7/8 = 3.5 GB / 500 GB/s    = 0.007 s, half overlapped: 0.0035 s
//   storage        = 32 samples / 4000 samples/s x (1 - 0.09)        = 0.00728 s
//                    (the 10 TB data set read in random order, 900 GB of it held by the page cache
//                    once the run is under way: 9% of the reads hit it)
//   cpu decode     = 4 images / 1000 images/s per GPU                = 0.004 s
//   host-to-device = 4 MB / 20 GB/s                                  = 0.0002 s
//   step           = max(0.016 + 0.0035, loaders)                    = 0.0195 s
//   memory         = 16 GB model state + 4 x 1 GB activations = 20 GB of 40 GB usable
#include <gtest/gtest.h>

#include <cmath>

#include <fstream>

#include "harness/score/score.hpp"
#include "tests/support/fixtures.hpp"

namespace ns = nodeaudit::score;
using nlohmann::json;

namespace {

json load_fixture(const std::string& name) { return nodeaudit::test_files::fixture_json("results/" + name + ".json"); }

const ns::Profile& test_profile() {
  static const ns::Profile profile = ns::load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
  return profile;
}

json score(const std::string& fixture, const ns::CostOptions& cost = {}) {
  return ns::assess(test_profile(), load_fixture(fixture), cost);
}

std::string verdict(const json& assessment, const std::string& rule) {
  for (const json& entry : assessment["rules"])
    if (entry["rule"] == rule) return entry["verdict"];
  return "absent";
}

const json& resource(const json& assessment, const std::string& name) {
  for (const json& entry : assessment["resources"])
    if (entry["resource"] == name) return entry;
  throw std::runtime_error("no resource " + name);
}

}  // namespace

TEST(Assess, BalancedNodePassesEveryRule) {
  const json a = score("balanced");
  EXPECT_NEAR(a["step"]["time_s"].get<double>(), 0.0195, 1e-12);
  EXPECT_NEAR(a["step"]["gpu_utilization"].get<double>(), 0.016 / 0.0195, 1e-12);      // 82.05%
  EXPECT_NEAR(a["step"]["exposed_comm_share"].get<double>(), 0.0035 / 0.0195, 1e-12);  // 17.9%
  EXPECT_DOUBLE_EQ(a["step"]["data_wait_share"].get<double>(), 0);
  EXPECT_NEAR(resource(a, "storage")["time_per_step_s"].get<double>(), 0.008 * 0.91, 1e-12);
  EXPECT_NEAR(resource(a, "cpu_decode")["time_per_step_s"].get<double>(), 0.004, 1e-12);
  EXPECT_NEAR(resource(a, "host_to_device")["time_per_step_s"].get<double>(), 0.0002, 1e-12);
  EXPECT_EQ(resource(a, "compute")["capacity"]["metric"], "gpu.gemm tflops [dtype=bf16] median, min of 8 GPUs");
  EXPECT_NEAR(a["memory"]["headroom_pct"].get<double>(), 50, 1e-9);
  EXPECT_NEAR(a["uniformity"]["spread"].get<double>(), 10.0 / 510, 1e-12);  // (510 - 500) / 510
  EXPECT_NEAR(a["host"]["cpu_cores_per_gpu"].get<double>(), 8, 1e-12);
  for (const json& rule : a["rules"]) EXPECT_EQ(rule["verdict"], "PASS") << rule["text"];
  EXPECT_EQ(a["overall"]["verdict"], "PASS");
  EXPECT_EQ(a["overall"]["complete"], true);
  EXPECT_EQ(a["bottleneck"]["resource"], "compute");
  // 82% utilization is below the 85% that would justify faster GPUs.
  EXPECT_EQ(a["upgrade"]["verdict"], "optimize before buying");
  EXPECT_EQ(ns::exit_code_for(a), 0);
  EXPECT_TRUE(a["cost"].is_null());
}

TEST(Assess, StorageStarvedNodeNamesStorageAndTheKnee) {
  const json a = score("storage-starved");
  // storage: 32 samples / 800 samples/s x (1 - 0.09 from the page cache) = 0.0364 s > 0.0195 s on the GPU side.
  EXPECT_NEAR(a["step"]["time_s"].get<double>(), 0.0364, 1e-12);
  EXPECT_NEAR(a["step"]["gpu_utilization"].get<double>(), 0.016 / 0.0364, 1e-12);
  EXPECT_NEAR(a["step"]["data_wait_share"].get<double>(), (0.0364 - 0.0195) / 0.0364, 1e-12);  // 46.4%
  EXPECT_EQ(verdict(a, "utilization"), "FAIL");
  EXPECT_EQ(verdict(a, "data_wait"), "WARN");      // above 30%, not above 60%
  EXPECT_EQ(verdict(a, "communication"), "PASS");  // 0.0035 / 0.0364 = 9.6%
  EXPECT_EQ(a["overall"]["verdict"], "FAIL");
  EXPECT_EQ(a["bottleneck"]["resource"], "storage");
  // 800 samples/s x 1 MB = 0.8 GB/s; needed from storage: the 91% of 32 samples the page cache
  // misses, 29.12 MB / 0.0195 s = 1.49 GB/s (1,493 samples/s).
  EXPECT_EQ(
      a["bottleneck"]["text"],
      "storage: 800 MB/s of 1.49 GB/s needed (800 of 1,490 samples/s) — move hot data to local NVMe or raise loader "
      "workers (knee at 8)");
  EXPECT_EQ(ns::exit_code_for(a), 1);
}

TEST(Assess, NodeTwoGiBShortOfGpuMemoryFails) {
  const json a = score("memory-short");
  // usable = 20 GB - 2 GiB; peak 20 GB -> 20e9 / 17.85e9 = 112%.
  EXPECT_NEAR(a["memory"]["peak_share"].get<double>(), 20e9 / (20e9 - 2147483648.0), 1e-12);
  EXPECT_EQ(verdict(a, "memory_fit"), "FAIL");
  EXPECT_EQ(verdict(a, "utilization"), "PASS");
  EXPECT_EQ(a["overall"]["verdict"], "FAIL");
  EXPECT_EQ(a["bottleneck"]["resource"], "memory");
  EXPECT_NE(a["bottleneck"]["text"].get<std::string>().find("is 2 GiB more than the"), std::string::npos)
      << a["bottleneck"]["text"];
}

TEST(Assess, SlowAllReduceIsTheBottleneck) {
  const json a = score("slow-allreduce");
  // 3.5 GB / 50 GB/s = 0.07 s, half exposed: 0.035 s; step 0.016 + 0.035 = 0.051 s.
  EXPECT_NEAR(a["step"]["time_s"].get<double>(), 0.051, 1e-12);
  EXPECT_NEAR(a["step"]["gpu_utilization"].get<double>(), 0.016 / 0.051, 1e-12);     // 31.4%
  EXPECT_NEAR(a["step"]["exposed_comm_share"].get<double>(), 0.035 / 0.051, 1e-12);  // 68.6%
  EXPECT_EQ(verdict(a, "communication"), "FAIL");                                    // above twice 20%
  EXPECT_EQ(verdict(a, "data_wait"), "PASS");
  EXPECT_EQ(a["bottleneck"]["resource"], "communication");
  EXPECT_EQ(resource(a, "communication")["capacity"]["metric"],
            "comm.allreduce busbw [size=2147483648, gpus=8] median (nearest to 2000 MB of gradients)");
}

TEST(Assess, CpuStarvedNodeUsesPerCoreRateTimesCoresPerGpu) {
  const json a = score("cpu-starved");
  // 16 cores / 8 GPUs = 2 cores per GPU x 50 images/s per core = 100 images/s; 4 / 100 = 0.04 s.
  EXPECT_NEAR(resource(a, "cpu_decode")["capacity"]["value"].get<double>(), 100, 1e-9);
  EXPECT_NEAR(a["step"]["time_s"].get<double>(), 0.04, 1e-12);
  EXPECT_EQ(verdict(a, "cpu_cores"), "WARN");  // 2 per GPU: below 4, not below 2
  EXPECT_EQ(verdict(a, "utilization"), "FAIL");
  EXPECT_EQ(a["bottleneck"]["resource"], "cpu_decode");
  EXPECT_EQ(a["bottleneck"]["text"].get<std::string>().rfind("cpu_decode: 100 images/s per GPU of 205 needed", 0), 0u);
}

TEST(Assess, SkippedGpuProbesAreNotJudgedNeverPassed) {
  const json a = score("gpu-skipped");
  for (const char* rule : {"utilization", "memory_fit", "communication", "data_wait", "uniformity"})
    EXPECT_EQ(verdict(a, rule), "NOT_JUDGED") << rule;
  EXPECT_EQ(verdict(a, "host_ram"), "PASS");
  EXPECT_EQ(verdict(a, "cpu_cores"), "PASS");
  // Everything judged passed, but five rules could not be judged: WARN, not PASS.
  EXPECT_EQ(a["overall"]["verdict"], "WARN");
  EXPECT_EQ(a["overall"]["worst_judged"], "PASS");
  EXPECT_EQ(a["overall"]["not_judged"].size(), 5u);
  EXPECT_EQ(a["bottleneck"]["resource"], "not_judged");
  EXPECT_EQ(a["upgrade"]["verdict"], "not judged");
  for (const json& rule : a["rules"]) {
    if (rule["rule"] != "memory_fit") continue;
    // The skip reason is said once, in the assessment's skipped list, not on every line.
    EXPECT_EQ(rule["text"], "memory_fit: not judged (gpu.memory-capacity skipped)");
  }
  bool listed = false;
  for (const json& group : a["skipped"])
    for (const json& id : group["probes"])
      if (id == "gpu.memory-capacity") {
        listed = true;
        EXPECT_EQ(group["reason"],
                  "no CUDA device (cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version)");
      }
  EXPECT_TRUE(listed) << a["skipped"].dump();
  EXPECT_EQ(ns::exit_code_for(a), 0);
}

TEST(Assess, NoGpusAtAllIsNotJudgedOverall) {
  json result = load_fixture("gpu-skipped");
  result["env"]["gpus"] = json::array();
  result["env"]["gpu_status"] = "no NVIDIA driver (libnvidia-ml.so.1 not found)";
  const json a = ns::assess(test_profile(), result, {});
  EXPECT_EQ(a["overall"]["verdict"], "NOT_JUDGED");
  EXPECT_EQ(verdict(a, "host_ram"), "NOT_JUDGED");
}

TEST(Assess, UpgradeJustifiedWhenBusyFullAndNeverWaiting) {
  json result = load_fixture("balanced");
  // all-reduce 10x faster: 3.5 GB / 5000 GB/s = 0.0007 s, 0.00035 s exposed; usable 25 GB -> 80% full.
  for (json& probe : result["probes"]) {
    for (json& metric : probe["metrics"]) {
      if (probe["id"] == "comm.allreduce" && metric["name"] == "busbw")
        metric["median"] = metric["median"].get<double>() * 10;
      if (probe["id"] == "gpu.memory-capacity" && metric["name"] == "usable_bytes") metric["median"] = 25e9;
    }
  }
  const json a = ns::assess(test_profile(), result, {});
  EXPECT_NEAR(a["step"]["gpu_utilization"].get<double>(), 0.016 / 0.01635, 1e-12);  // 97.9%
  EXPECT_EQ(verdict(a, "memory_fit"), "PASS");                                      // exactly 80%
  EXPECT_EQ(a["upgrade"]["verdict"], "upgrade is justified");
}

TEST(Assess, RunCostFromThePredictedStep) {
  ns::CostOptions dear, cheap;
  dear.price_per_hour = 20;
  cheap.price_per_hour = 12;
  // balanced: 1e6 samples x 0.0195 s / 32 samples = 609.4 s = 0.16927 h; starved: 0.0364 s -> 0.31597 h.
  const json balanced = score("balanced", dear);
  const json starved = score("storage-starved", cheap);
  EXPECT_NEAR(balanced["cost"]["predicted_hours"].get<double>(), 1e6 * 0.0195 / 32 / 3600, 1e-12);
  EXPECT_NEAR(balanced["cost"]["run_cost"].get<double>(), 20 * 1e6 * 0.0195 / 32 / 3600, 1e-9);  // 3.385
  EXPECT_NEAR(starved["cost"]["run_cost"].get<double>(), 12 * 1e6 * 0.0364 / 32 / 3600, 1e-9);   // 3.792
  EXPECT_LT(balanced["cost"]["run_cost"].get<double>(), starved["cost"]["run_cost"].get<double>());
  EXPECT_EQ(balanced["cost"]["per_million_unit"], "samples");
}

TEST(Assess, EveryShippedProfileScoresEveryFixture) {
  for (const std::string& name : ns::shipped_profile_names()) {
    const ns::Profile profile = ns::load_profile(name);
    for (const char* fixture :
         {"balanced", "storage-starved", "memory-short", "slow-allreduce", "cpu-starved", "gpu-skipped"}) {
      ns::CostOptions cost;
      cost.price_per_hour = 10;
      const json a = ns::assess(profile, load_fixture(fixture), cost);
      const std::string where = name + " on " + fixture;
      EXPECT_EQ(a["profile"], name);
      // Every verdict line names its rule and either its figure and threshold or why it was not judged;
      // the overall verdict is the worst judged one, WARN when some could not be judged, NOT_JUDGED when none.
      bool any_fail = false, any_warn = false, all_unjudged = true;
      json unjudged = json::array();
      for (const json& rule : a["rules"]) {
        const std::string verdict = rule["verdict"];
        ASSERT_TRUE(verdict == "PASS" || verdict == "WARN" || verdict == "FAIL" || verdict == "NOT_JUDGED") << where << ": " << rule.dump();
        EXPECT_FALSE(rule["rule"].get<std::string>().empty()) << where;
        if (verdict == "NOT_JUDGED") {
          EXPECT_FALSE(rule.value("reason", "").empty()) << where << ": " << rule.dump();
          unjudged.push_back(rule["rule"]);
          continue;
        }
        all_unjudged = false;
        any_fail |= verdict == "FAIL";
        any_warn |= verdict == "WARN";
        EXPECT_TRUE(rule.contains("figure") && rule["figure"].is_number()) << where << ": " << rule.dump();
        EXPECT_TRUE(rule.contains("threshold") && rule["threshold"].is_number()) << where << ": " << rule.dump();
      }
      const std::string expected = any_fail ? "FAIL" : all_unjudged ? "NOT_JUDGED" : (any_warn || !unjudged.empty()) ? "WARN" : "PASS";
      EXPECT_EQ(a["overall"]["verdict"], expected) << where << ": " << a["overall"].dump();
      EXPECT_EQ(a["overall"]["not_judged"], unjudged) << where;
      EXPECT_EQ(ns::exit_code_for(a), expected == "FAIL" ? 1 : 0) << where;
      // Priced: a positive, finite run cost, or the reason there is none.
      const json& run_cost = a["cost"];
      if (run_cost.contains("not_judged")) EXPECT_FALSE(run_cost["not_judged"].get<std::string>().empty()) << where;
      else EXPECT_TRUE(run_cost["run_cost"].is_number() && std::isfinite(run_cost["run_cost"].get<double>()) && run_cost["run_cost"].get<double>() > 0)
          << where << ": " << run_cost.dump();
      EXPECT_FALSE(a["bottleneck"]["text"].get<std::string>().empty());
      EXPECT_FALSE(ns::render_assessment(a).empty());
    }
  }
}

TEST(Assess, SingleGpuNodeHasNoCommunication) {
  json result = load_fixture("balanced");
  result["env"]["gpus"] = json::array({result["env"]["gpus"][0]});
  const json a = ns::assess(test_profile(), result, {});
  EXPECT_EQ(resource(a, "communication")["needed"], false);
  // step = compute 0.016 s (storage 4 / 4000 = 0.001 s); utilization 100%.
  EXPECT_NEAR(a["step"]["gpu_utilization"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(verdict(a, "communication"), "PASS");
}

TEST(Assess, LatencyProfileWithoutGpuMemoryBandwidthIsNotJudged) {
  const json a = ns::assess(ns::load_profile("llm-inference-batch"), load_fixture("balanced"), {});
  EXPECT_EQ(verdict(a, "utilization"), "NOT_JUDGED");  // gpu.memory-bandwidth not run
  EXPECT_EQ(verdict(a, "step_time"), "PASS");
  EXPECT_NE(a["overall"]["verdict"], "PASS");
}

namespace nodeaudit::score {
namespace {

// A run inside a container limited to 4 CPUs and 64 GB: the host's 64 cores and 1 TB are not what
// the training job gets, and the rules say whose figures they judged.
TEST(AssessContainer, CoresAndRamAreTheContainersLimitsWhenRecorded) {
  nlohmann::json result = test_files::fixture_json("results/balanced.json");
  result["env"]["container"] = {{"detected", true}, {"usable_cores", 4}, {"usable_ram_bytes", 64e9}};
  const Profile profile = load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
  const nlohmann::json a = assess(profile, result, CostOptions{});
  EXPECT_DOUBLE_EQ(a["host"]["cpu_cores"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(a["host"]["ram_total_bytes"].get<double>(), 64e9);
  EXPECT_TRUE(a["host"].contains("limited_by"));
  for (const auto& rule : a["rules"])
    if (rule["rule"] == "host_ram" || rule["rule"] == "cpu_cores") {
      EXPECT_NE(rule["text"].get<std::string>().find("container/cgroup limit"), std::string::npos) << rule["text"];
    }
}

}  // namespace
}  // namespace nodeaudit::score

namespace {

// cpu-starved with a host.dataloader entry: PIL at 2 workers (the largest run) 40 samples/s, so
// 20 per worker; torchvision.io faster. No GPU-shared figure: per worker x 2 cores per GPU.
json with_framework_loader(json result) {
  const auto value = [](const std::string& name, json labels, double v) {
    return json{{"name", name}, {"unit", "samples/s"}, {"better", "higher"}, {"labels", labels}, {"n", 1},
                {"median", v}, {"mean", v}, {"min", v}, {"max", v}, {"samples", {v}}};
  };
  result["probes"].push_back(json{
      {"id", "host.dataloader"}, {"status", "ok"}, {"reason", ""}, {"params", json::object()}, {"duration_s", 30.0},
      {"metrics",
       {value("samples_per_s_per_worker", {{"decoder", "pil"}, {"workers", "2"}}, 20),
        value("samples_per_s_per_worker", {{"decoder", "torchvision"}, {"workers", "2"}}, 35)}},
      {"findings", json::array()}, {"info", json::object()}});
  return result;
}

}  // namespace

TEST(AssessLoader, TheFrameworkLoaderSetsCpuDecodeAndTheNativeDecoderIsTheHeadroom) {
  const json a = ns::assess(test_profile(), with_framework_loader(load_fixture("cpu-starved")), {});
  const json& decode = resource(a, "cpu_decode");
  EXPECT_NEAR(decode["capacity"]["value"].get<double>(), 40, 1e-9);  // 20 per worker x 2 cores per GPU
  EXPECT_NE(decode["capacity"]["metric"].get<std::string>().find("host.dataloader samples_per_s_per_worker"), std::string::npos)
      << decode.dump(1);
  EXPECT_NE(decode.value("note", "").find("the native decoder reaches 100 images/s per GPU"), std::string::npos) << decode.dump(1);
  EXPECT_EQ(a["bottleneck"]["resource"], "cpu_decode");
  EXPECT_EQ(a["bottleneck"]["text"].get<std::string>().rfind(
                "cpu_decode: PyTorch+PIL reaches 40 images/s per GPU of 205 needed; the native decoder reaches 100: a "
                "faster decode path (torchvision.io, DALI, Pillow-SIMD) is worth up to 2.5x before buying cores",
                0),
            0u)
      << a["bottleneck"].dump(1);
}

TEST(AssessLoader, WithoutTheFrameworkLoaderTheNativeFigureIsUsedAndLabelledAnUpperBound) {
  const json a = score("cpu-starved");
  const json& decode = resource(a, "cpu_decode");
  EXPECT_NEAR(decode["capacity"]["value"].get<double>(), 100, 1e-9);
  EXPECT_EQ(decode.value("note", "").rfind("upper bound: native decoder; the framework loader was not measured (host.dataloader", 0), 0u)
      << decode.dump(1);
}

TEST(AssessLoader, ANativeLoaderProfileUsesTheNativeDecoderWithoutTheLabel) {
  ns::Profile native = test_profile();
  native.data.loader = ns::LoaderKind::native;
  const json a = ns::assess(native, with_framework_loader(load_fixture("cpu-starved")), {});
  const json& decode = resource(a, "cpu_decode");
  EXPECT_NEAR(decode["capacity"]["value"].get<double>(), 100, 1e-9);
  EXPECT_FALSE(decode.contains("note")) << decode.dump(1);
}

TEST(AssessLoader, AnUnknownLoaderNameIsRefusedNamingTheAcceptedOnes) {
  std::string text = nodeaudit::test_files::fixture_text("profiles/balance-test.toml");
  const auto data = text.find("[data]\n");
  ASSERT_NE(data, std::string::npos);
  text.insert(data + 7, "loader = \"jax\"\n");
  const std::string path = ::testing::TempDir() + "/loader-jax.toml";
  std::ofstream(path) << text;
  try {
    ns::load_profile(path);
    FAIL() << "a profile with loader = \"jax\" loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("'loader' in [data] is 'jax'; accepted: pytorch, native"), std::string::npos) << e.what();
  }
}
