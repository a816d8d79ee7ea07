// What `run` prints, end to end: the env block once under `make audit`, each probe's block once,
// no terminal escape sequences where stderr is not a terminal (a log, a pipe, an MPI launcher's
// forwarding), and an option `run` does not take named in order with where it belongs.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/cli_expect.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::expect_one_line_usage_error;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::ProcessResult;
using nodeaudit::proc::run_process;

namespace {

using nodeaudit::test::find_on_path;
using nodeaudit::test::occurrences;

bool has_terminal_control(const std::string& text) {
  return text.find('\r') != std::string::npos || text.find("\033[") != std::string::npos;
}

// Runs argv with stdout on a pseudo-terminal and stderr into a file: what a terminal user who
// logs stderr, or an MPI launcher's forwarding, gives the process. Returns what reached stderr.
std::string stderr_with_stdout_on_a_terminal(const std::vector<std::string>& args, const std::string& err_path,
                                             int& exit_code) {
  int terminal = -1, child_side = -1;
  if (openpty(&terminal, &child_side, nullptr, nullptr, nullptr) != 0) return "openpty failed";
  const pid_t pid = fork();
  if (pid == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(child_side, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(child_side);
  char buffer[4096];
  while (read(terminal, buffer, sizeof buffer) > 0) {
  }  // drained until the child closes its side, so it never blocks on a full terminal
  close(terminal);
  int status = 0;
  waitpid(pid, &status, 0);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  return {std::istreambuf_iterator<char>(in), {}};
}

class RunOutput : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("run-output"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

}  // namespace

TEST_F(RunOutput, IntoFilesEachProbeBlockIsPrintedOnceWithoutEscapes) {
  const ProcessResult r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok,test.fail", "--out", dir_});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // test.fail fails
  EXPECT_FALSE(has_terminal_control(r.out)) << r.out;
  EXPECT_FALSE(has_terminal_control(r.err)) << r.err;
  EXPECT_EQ(occurrences(r.out, "rate [kind=sleep]"), 1u) << r.out;
  EXPECT_EQ(occurrences(r.out, "asked to fail"), 1u) << r.out;
  EXPECT_EQ(occurrences(r.out, "probes: 1 failed, 1 ok"), 1u) << r.out;
}

TEST_F(RunOutput, StderrThatIsNotATerminalGetsNoLiveLine) {
  int exit_code = -1;
  const std::string err = stderr_with_stdout_on_a_terminal(
      {NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--out", dir_}, dir_ + "/stderr.txt", exit_code);
  EXPECT_EQ(exit_code, 0) << err;
  EXPECT_FALSE(has_terminal_control(err)) << "escape sequences reached a file: " << err;
}

TEST_F(RunOutput, AProbeParameterGivenToRunNamesItsProbeAndHowToPassIt) {
  const ProcessResult r = run_process({NODEAUDIT_BINARY, "run", "--rank-timeout", "10s", "--out", dir_});
  expect_one_line_usage_error(r, "run --rank-timeout: not a run option but a parameter of probe comm.host-fabric");
  EXPECT_NE(r.err.find("nodeaudit probe comm.host-fabric --rank-timeout 10s"), std::string::npos) << r.err;
  EXPECT_TRUE(nodeaudit::proc::files_in(dir_).empty());
}

TEST_F(RunOutput, AnUnknownOptionIsNamedInTheOrderGiven) {
  const ProcessResult r = run_process({NODEAUDIT_BINARY, "run", "--bogus", "10s", "--out", dir_});
  expect_one_line_usage_error(r, "run --bogus: unknown option");
  EXPECT_EQ(r.err.find("10s --bogus"), std::string::npos) << r.err;
  const ProcessResult stray = run_process({NODEAUDIT_BINARY, "run", "extra", "--out", dir_});
  expect_one_line_usage_error(stray, "run extra: unexpected argument");
}

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
