// What `run` prints, end to end: the env block once under `make audit`.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_expect.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::ProcessResult;
using nodeaudit::proc::run_process;

namespace {

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

class RunOutput : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("run-output"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

}  // namespace

// `make audit` = install, build, then `make audit-run`: the env block comes from `run` alone.
TEST_F(RunOutput, MakeAuditPrintsTheEnvBlockOnce) {
  const fs::path source = fs::path(NODEAUDIT_FIXTURES).parent_path().parent_path();
  const fs::path build = fs::path(NODEAUDIT_BINARY).parent_path();
  if (system("command -v make > /dev/null") != 0) GTEST_SKIP() << "make is not installed";
  const ProcessResult r = run_process({"/usr/bin/env", "make", "-s", "--no-print-directory", "-C", source.string(),
                                       "audit-run", "BUILD_DIR=" + build.string(), "DATA_DIR=" + dir_ + "/data",
                                       "OUT=" + dir_ + "/results/",
                                       "AUDIT_FLAGS=--only host.memory-bandwidth --repetitions 2"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(occurrences(r.out, "\nmemory    "), 1u) << r.out;
  EXPECT_EQ(nodeaudit::proc::files_in(dir_ + "/results").size(), 1u) << r.out;
}
