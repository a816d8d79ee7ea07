// pipeline.step through the real CLI: bad input exits 2 with one line naming the value, and the
// default run (--emulate-compute auto) on a machine without a GPU emulates compute and says why,
// leaving nothing behind in the data directory. On a GPU machine the default run uses the GPUs
// and the second check is skipped (scripts/gpu-check.sh runs it there).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/cli_expect.hpp"
#include "tests/support/uring_gate.hpp"

namespace nodeaudit {
namespace {

void expect_bad_input(const std::vector<std::string>& args, const std::string& named) {
  proc::expect_one_line_usage_error(proc::run_nodeaudit(args), named);
}

TEST(PipelineCli, BadInputExitsTwoNamingTheValue) {
  const std::string dir = proc::make_temp_dir("pipeline-cli");
  const std::string not_a_result = dir + "/not-a-result.json";
  std::ofstream(not_a_result) << "{}";
  expect_bad_input({"probe", "pipeline.step", "--emulate-compute", "v100"},
                   "--emulate-compute v100: unknown GPU; accepted: auto, h100");
  expect_bad_input({"probe", "pipeline.step", "--comm-result", dir + "/missing.json"},
                   "--comm-result " + dir + "/missing.json: cannot be read");
  expect_bad_input({"probe", "pipeline.step", "--comm-result", not_a_result}, "no measured comm.allreduce");
  expect_bad_input({"probe", "pipeline.step", "--workload", "no-such-profile"}, "--workload no-such-profile: no such shipped profile");
  expect_bad_input({"probe", "pipeline.step", "--steps", "1"}, "--steps 1: must be 0");
  EXPECT_EQ(proc::files_in(dir), std::vector<std::string>{not_a_result});  // nothing else written
  std::filesystem::remove_all(dir);
}

// A GPU device node (/dev/nvidia0, or /dev/nvidia3 in a container given GPU 3): the environment's
// own word on whether GPUs can run here, not the probe's.
bool gpu_device_node_here() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos)
      return true;
  }
  return false;
}

TEST(PipelineCli, DefaultRunWithoutAGpuEmulatesComputeAndSaysWhy) {
  if (gpu_device_node_here()) GTEST_SKIP() << "a GPU device node is present here: the GPUs run (gpu_device_tests)";
  const std::string dir = proc::make_temp_dir("pipeline-cli");
  const proc::ProcessResult r =
      proc::run_nodeaudit({"probe", "pipeline.step", "--steps", "4", "--samples", "64", "--sample-size", "16KiB",
                           "--batch-size", "8", "--decode", "none", "--path", dir, "--format", "json"});
  const std::vector<std::string> left = proc::files_in(dir);
  std::filesystem::remove_all(dir);
  const nlohmann::json doc = proc::json_output(r);
  ASSERT_TRUE(doc.is_object());
  const nlohmann::json& probe = doc["probes"].at(0);
  if (probe["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + probe["reason"].get<std::string>());
  ASSERT_EQ(probe["status"], "ok") << r.out << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(left.empty());  // the generated data set is removed after the run
  EXPECT_EQ(probe["info"]["mode"], "emulated");
  EXPECT_EQ(probe["info"]["emulated_gpu"], "h100");
  std::string why;
  for (const auto& f : probe["findings"])
    if (f["code"] == "pipeline.emulated") why = f["message"];
  // The CUDA runtime's reason (or the missing driver) in a CUDA build; the missing toolkit in a
  // build without one.
  EXPECT_TRUE(why.find("no CUDA device") != std::string::npos || why.find("no NVIDIA driver") != std::string::npos ||
              why.find("no real-GPU path") != std::string::npos)
      << why;
  bool copy_stage = false;
  for (const auto& m : probe["metrics"]) copy_stage |= m["labels"].value("stage", "") == "host_to_device";
  EXPECT_FALSE(copy_stage);  // nothing is copied when compute is emulated: no figure
}

}  // namespace
}  // namespace nodeaudit
