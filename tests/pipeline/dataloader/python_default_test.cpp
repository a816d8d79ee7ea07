// host.dataloader and pipeline.step --loader pytorch where the default interpreter (python3) is not
// on PATH, as in a container image without Python: a skip with the reason, so `run` goes on. A
// --python the user gave that is missing stays bad input (exit 2).
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tests/support/cli_process.hpp"

namespace nodeaudit {
namespace {

proc::ProcessResult probe_without_python_on_path(std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/env", "PATH=/nonexistent", NODEAUDIT_BINARY, "probe"});
  return proc::run_process(args);
}

TEST(PythonDefault, AMissingDefaultInterpreterIsASkipWithTheReason) {
  const auto r = probe_without_python_on_path({"host.dataloader", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto entry = nlohmann::json::parse(r.out)["probes"][0];
  EXPECT_EQ(entry["status"], "skipped");
  EXPECT_EQ(entry["reason"],
            "no Python interpreter: the default --python python3 is not on PATH; give --python with the "
            "interpreter of the training's environment");
}

TEST(PythonDefault, AMissingInterpreterTheUserGaveIsBadInput) {
  const auto r = probe_without_python_on_path({"host.dataloader", "--python", "python3"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("nodeaudit: host.dataloader: --python python3: not found on PATH", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace nodeaudit
