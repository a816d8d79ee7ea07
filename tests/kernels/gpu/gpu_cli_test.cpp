// The GPU probes through the real CLI: bad parameters exit 2 with one line naming the value before
// any device is touched; on a machine without a GPU every probe is recorded as skipped with the
// CUDA runtime's reason (or the missing NVIDIA driver), or as not built in a build without CUDA (on a GPU machine that check is
// skipped and scripts/gpu-check.sh runs the probes).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/node/gpu_absence.hpp"
#include "tests/kernels/gpu/gpu_presence.hpp"
#include "tests/support/cli_expect.hpp"

namespace nodeaudit {
namespace {

void expect_bad_input(const std::vector<std::string>& args, const std::string& named) {
  proc::expect_one_line_usage_error(proc::run_nodeaudit(args), named);
}

// Parameter rules from the probes' declarations: checked in every build, with or without CUDA.
TEST(GpuCli, BadParametersExitTwoNamingTheValue) {
  expect_bad_input({"probe", "gpu.gemm", "--size", "1000"}, "--size 1000: must be an integer between 256 and 65536 and a multiple of 256");
  expect_bad_input({"probe", "gpu.stress", "--size", "0"}, "--size 0");
  expect_bad_input({"probe", "gpu.stress", "--duration", "0s"}, "--duration 0s");
  expect_bad_input({"probe", "gpu.stress", "--duration", "-5s"}, "--duration -5s");
  expect_bad_input({"probe", "gpu.stress", "--dtype", "int4"}, "--dtype int4");
  expect_bad_input({"probe", "gpu.pcie", "--transfer-size", "0"}, "--transfer-size 0");
  expect_bad_input({"probe", "gpu.memory-bandwidth", "--buffer-size", "1KiB"}, "--buffer-size 1KiB");
}

// Rules that need the probe bodies (a dtype list, --interval against --duration): CUDA builds only.
TEST(GpuCli, BodyChecksExitTwoBeforeTheDeviceCheck) {
  if (!NODEAUDIT_GPU_BODIES_BUILT) GTEST_SKIP() << "GPU probes not built in this build (no CUDA toolkit or NODEAUDIT_CUDA=OFF)";
  expect_bad_input({"probe", "gpu.stress", "--duration", "10s", "--interval", "30s"}, "--interval 30.0 s: must not exceed --duration 10.0 s");
  expect_bad_input({"probe", "gpu.gemm", "--dtypes", "bf16,int4"}, "int4");
}

TEST(GpuCli, WithoutAGpuEveryProbeIsSkippedWithTheRuntimesReason) {
  if (why_no_gpu().empty()) GTEST_SKIP() << "NVML lists a GPU here: the probes run (gpu_device_tests checks them)";
  const std::string dir = proc::make_temp_dir("gpu-cli");
  const proc::ProcessResult r =
      proc::run_nodeaudit({"run", "--only", "gpu.*", "--level", "quick", "--format", "json", "--out", dir + "/result.json"});
  std::filesystem::remove_all(dir);
  const nlohmann::json doc = proc::json_output(r);
  ASSERT_TRUE(doc.is_object());
  ASSERT_EQ(doc["probes"].size(), 7u) << r.out;
  for (const auto& probe : doc["probes"]) {
    const std::string status = probe["status"], reason = probe.value("reason", "");
    EXPECT_EQ(status, "skipped") << probe["id"];
    const std::string expected = !NODEAUDIT_GPU_BODIES_BUILT ? "not built (no CUDA toolkit)"
                                 : nvidia_driver_missing()   ? *nvidia_driver_missing()
                                                             : "no CUDA device (";
    EXPECT_EQ(reason.rfind(expected, 0), 0u) << probe["id"] << ": " << reason;
  }
}

}  // namespace
}  // namespace nodeaudit
