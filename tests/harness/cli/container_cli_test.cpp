// `env` and `run` about containers, end to end: env.container with the cgroup limits, a container
// named by its marker, and a missing results volume stopping the run before anything is measured.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::expect_one_line_usage_error;
using nodeaudit::proc::files_in;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::run_process;

namespace {

TEST(ContainerCli, EnvRecordsContainerAndUsableFigures) {
  const auto r = run_process({NODEAUDIT_BINARY, "env", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto env = nlohmann::json::parse(r.out);
  ASSERT_TRUE(env.contains("container")) << r.out;
  const auto& c = env["container"];
  EXPECT_TRUE(c["detected"].is_boolean());
  EXPECT_TRUE(c["evidence"].is_array());
  EXPECT_TRUE(c["cpu_limit"].is_null() || c["cpu_limit"].get<double>() > 0) << c;
  EXPECT_GE(c["usable_cores"].get<int>(), 1);
  EXPECT_LE(c["usable_cores"].get<int>(), env["host"]["cores"].get<int>());
  EXPECT_LE(c["usable_ram_bytes"].get<double>(), env["host"]["ram_total_bytes"].get<double>());
  EXPECT_GT(c["usable_ram_bytes"].get<double>(), 0);
}

// Podman sets container=podman in a container's environment; here it stands in for a real one.
TEST(ContainerCli, EnvNamesTheContainerItRunsIn) {
  const auto r = run_process({"/usr/bin/env", "container=podman", NODEAUDIT_BINARY, "env"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("container podman (container=podman is set"), std::string::npos) << r.out;
  const auto j = run_process({"/usr/bin/env", "container=podman", NODEAUDIT_BINARY, "env", "--format", "json"});
  const auto env = nlohmann::json::parse(j.out);
  EXPECT_EQ(env["container"]["detected"], true);
  EXPECT_EQ(env["container"]["runtime"], "podman");
}

TEST(ContainerCli, MissingResultsVolumeStopsBeforeMeasuring) {
  const std::string dir = make_temp_dir("container-cli");
  const std::string missing = dir + "/results/";
  const auto r = run_process({"/usr/bin/env", "container=podman", NODEAUDIT_BINARY, "run", "--only", "host.config", "--out", missing});
  expect_one_line_usage_error(r, "directory does not exist; in a container, mount a results volume there (-v HOST_DIR:" + missing + ")");
  EXPECT_EQ(r.out.find("host.config"), std::string::npos) << "nothing is measured before the error: " << r.out;
  EXPECT_TRUE(files_in(dir).empty());
  fs::remove_all(dir);
}

}  // namespace
