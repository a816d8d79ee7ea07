// The GPU probes on a real GPU, through the real CLI: each one measures, its figures are positive and
// carry their units, and its own verification passes. Whether a GPU is here is decided by NVML
// (`nodeaudit env`), not by the probes, so a probe that wrongly skips or fails on a GPU machine is a
// test failure; where NVML lists no GPU the tests skip with NVML's reason. Small sizes keep the
// whole file to well under a minute on one GPU; nothing here depends on how fast the GPU is.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/kernels/gpu/gpu_presence.hpp"
#include "tests/support/cli_expect.hpp"
#include "tests/support/uring_gate.hpp"

namespace nodeaudit {
namespace {

#define SKIP_WITHOUT_GPU()                                  \
  do {                                                      \
    if (const std::string why = why_no_gpu(); !why.empty()) \
      GTEST_SKIP() << why;                                  \
  } while (0)

// Runs one probe and returns its entry in the result, whatever its status; the run itself must end
// (exit 0, or 1 when the probe was not ok) with one probe entry.
nlohmann::json run_probe_entry(std::vector<std::string> args) {
  const std::string dir = proc::make_temp_dir("gpu-device");
  args.insert(args.begin(), "probe");
  for (const char* extra : {"--format", "json", "--out"}) args.emplace_back(extra);
  args.push_back(dir + "/result.json");
  const proc::ProcessResult r = proc::run_nodeaudit(args);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "exit " << r.exit_code << ": " << r.err;
  const nlohmann::json doc = proc::json_output(r);
  if (!doc.is_object() || doc["probes"].size() != 1) {
    ADD_FAILURE() << "one probe expected in: " << r.out;
    return nlohmann::json::object();
  }
  return doc["probes"][0];
}

// A probe entry that measured: status ok and no failed finding.
nlohmann::json expect_measured(nlohmann::json probe) {
  EXPECT_EQ(probe.value("status", ""), "ok") << probe.value("reason", "");
  for (const auto& f : probe.value("findings", nlohmann::json::array()))
    EXPECT_NE(f.value("severity", ""), "fail") << f.value("code", "") << ": " << f.value("message", "");
  return probe;
}

nlohmann::json run_probe(const std::vector<std::string>& args) { return expect_measured(run_probe_entry(args)); }

// The median of every metric named `name` whose labels include `labels`; fails when there is none.
std::vector<double> medians(const nlohmann::json& probe, const std::string& name, const nlohmann::json& labels, const std::string& unit) {
  std::vector<double> out;
  for (const auto& m : probe.value("metrics", nlohmann::json::array())) {
    if (m.value("name", "") != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels.items()) match = match && m["labels"].value(k, "") == v.get<std::string>();
    if (!match) continue;
    EXPECT_EQ(m.value("unit", ""), unit) << name;
    out.push_back(m.value("median", 0.0));
  }
  EXPECT_FALSE(out.empty()) << "no " << name << " " << labels.dump() << " in " << probe.value("id", "");
  return out;
}

void expect_all_positive(const std::vector<double>& values, const std::string& what) {
  for (double v : values) EXPECT_GT(v, 0) << what;
}

TEST(GpuDevice, GemmMeasuresAndVerifiesBf16) {
  SKIP_WITHOUT_GPU();
  const auto probe = run_probe({"gpu.gemm", "--dtypes", "bf16", "--size", "2048"});
  expect_all_positive(medians(probe, "tflops", {{"dtype", "bf16"}}, "TFLOP/s"), "bf16 TFLOP/s");
  EXPECT_TRUE(probe["info"]["best_shape"].contains("bf16")) << probe["info"].dump();
}

TEST(GpuDevice, MemoryBandwidthCopiesAndCheckedTriad) {
  SKIP_WITHOUT_GPU();
  const auto probe = run_probe({"gpu.memory-bandwidth", "--buffer-size", "256MiB"});
  expect_all_positive(medians(probe, "bandwidth", {{"kernel", "copy"}}, "GB/s"), "copy GB/s");
  expect_all_positive(medians(probe, "bandwidth", {{"kernel", "triad"}}, "GB/s"), "triad GB/s");
}

TEST(GpuDevice, PcieCopiesBothWaysPinnedAndPageable) {
  SKIP_WITHOUT_GPU();
  const auto probe = run_probe({"gpu.pcie", "--transfer-size", "64MiB"});
  for (const char* memory : {"pinned", "pageable"}) {
    expect_all_positive(medians(probe, "h2d_bandwidth", {{"memory", memory}}, "GB/s"), std::string("h2d ") + memory);
    expect_all_positive(medians(probe, "d2h_bandwidth", {{"memory", memory}}, "GB/s"), std::string("d2h ") + memory);
  }
}

TEST(GpuDevice, CapacityEdgeIsWithinTheCardsMemory) {
  SKIP_WITHOUT_GPU();
  const auto probe = run_probe({"gpu.memory-capacity"});
  const auto usable = medians(probe, "usable_bytes", nlohmann::json::object(), "bytes");
  const auto total = medians(probe, "total_bytes", nlohmann::json::object(), "bytes");
  ASSERT_EQ(usable.size(), total.size());
  for (std::size_t g = 0; g < usable.size(); ++g) {
    EXPECT_GT(usable[g], 0);
    EXPECT_LE(usable[g], total[g]);
  }
}

TEST(GpuDevice, IntegrityAndConfigAndStressRun) {
  SKIP_WITHOUT_GPU();
  run_probe({"gpu.memory-integrity", "--passes", "1", "--duration", "5s"});
  run_probe({"gpu.config"});
  const auto stress = run_probe({"gpu.stress", "--duration", "6s", "--interval", "3s", "--size", "2048"});
  EXPECT_FALSE(stress.value("metrics", nlohmann::json::array()).empty());
}

TEST(GpuDevice, TrainingStepRunsOnTheGpuWithPinnedCopies) {
  SKIP_WITHOUT_GPU();
  const std::string data = proc::make_temp_dir("gpu-device-step");
  const std::vector<std::string> step{"pipeline.step", "--workload", "cv-resnet50-imagenet", "--path", data,
                                      "--steps", "6", "--samples", "512", "--checkpoint", "off"};
  // The step reads its batches through io_uring: where the kernel or a container's seccomp profile
  // refuses it, the probe skips, and so does this test (a failure under NODEAUDIT_EXPECT_IO_URING=1).
  const nlohmann::json entry = run_probe_entry(step);
  std::filesystem::remove_all(data);
  if (entry.value("status", "") == "skipped")
    SKIP_ONLY_IF_IO_URING_REFUSED("pipeline.step skipped: " + entry.value("reason", std::string("?")));
  const auto probe = expect_measured(entry);
  EXPECT_EQ(probe["info"].value("mode", ""), "real GPUs") << probe["info"].dump();
  EXPECT_EQ(probe["info"].value("batch_buffers_pinned", ""), "yes (cudaHostRegister)");
  expect_all_positive(medians(probe, "host_to_device_bandwidth", nlohmann::json::object(), "GB/s"), "step H2D GB/s");
  expect_all_positive(medians(probe, "au", nlohmann::json::object(), "%"), "AU");
  EXPECT_GT(probe["info"].value("gemm_tflops_per_gpu", 0.0), 0);
}

}  // namespace
}  // namespace nodeaudit
