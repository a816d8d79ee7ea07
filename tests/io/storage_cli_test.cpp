// The storage probes through the CLI: bad input exits 2 via the harness; probe-level bad places
// exit 2 with a one-line reason too, no path is a skip, a run leaves nothing behind, Ctrl-C cleans up.
#include <algorithm>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::probe_entry;
using test::run_cli;
using test::TempDir;

TEST(StorageCli, OutOfBoundsParametersExitTwoNamingTheValue) {
  for (const char* bad : {"--queue-depth 0", "--queue-depth 4097", "--workers 0", "--block-size 3000"}) {
    const CliResult r = run_cli(std::string("probe storage.read --path /nonexistent ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find(std::string(bad).substr(0, std::string(bad).find(' '))), std::string::npos) << r.out;
  }
  EXPECT_EQ(run_cli("probe storage.dataset --workers 1,0,4").exit_code, 2);
  EXPECT_EQ(run_cli("probe storage.read --data-dir /nonexistent-dir").exit_code, 2);
}

TEST(StorageCli, NoPathAndNoDataDirIsASkip) {
  const CliResult r = run_cli("probe storage.read --format json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto e = probe_entry(r);
  EXPECT_EQ(e["status"], "skipped");
  EXPECT_EQ(e["reason"], "needs --path or --data-dir (a directory on the storage under test)");
}

TEST(StorageCli, ProbeLevelBadPlacesExitTwoWithOneLineReason) {
  TempDir dir;
  const CliResult missing = run_cli("probe storage.read --format json --path " + dir.path + "/missing");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.out, "nodeaudit: storage.read: --path " + dir.path + "/missing: No such file or directory\n");
  if (std::filesystem::is_block_file("/dev/vda")) {
    const CliResult blk = run_cli("probe storage.checkpoint --format json --path /dev/vda");
    EXPECT_EQ(blk.exit_code, 2);
    EXPECT_NE(blk.out.find("never writes to a block device"), std::string::npos) << blk.out;
    // The training-step emulator writes its samples through the same place check: bad input too.
    const CliResult step = run_cli("probe pipeline.step --format json --path /dev/vda");
    EXPECT_EQ(step.exit_code, 2) << step.out;
    EXPECT_NE(step.out.find("never writes to a block device"), std::string::npos) << step.out;
  }
  const CliResult full = run_cli("probe storage.checkpoint --format json --size 16TiB --data-dir " + dir.path);
  EXPECT_EQ(full.exit_code, 2);
  EXPECT_NE(full.out.find("not enough free space"), std::string::npos) << full.out;
  EXPECT_EQ(std::count(full.out.begin(), full.out.end(), '\n'), 1) << full.out;
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(StorageCli, ReadRunRecordsContractMetricsAndLeavesNothingBehind) {
  TempDir dir;
  const CliResult r = run_cli("probe storage.read --format json --size 4MiB --block-size 64KiB --runtime 0.2s --repetitions 2 --data-dir " + dir.path);
  const auto e = probe_entry(r);
  if (e["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + e["reason"].get<std::string>());
  ASSERT_EQ(e["status"], "ok") << e.dump();
  std::set<std::string> names;
  for (const auto& m : e["metrics"]) {
    names.insert(m["name"]);
    EXPECT_EQ(m["labels"]["cache"], "none");
    EXPECT_EQ(m["labels"]["pattern"], "seq");
    EXPECT_EQ(m["labels"]["block_size"], "65536");
  }
  EXPECT_EQ(names, (std::set<std::string>{"bandwidth", "iops", "latency_p50", "latency_p99", "latency_max", "cpu_per_gb"}));
  EXPECT_EQ(e["info"]["verified_bytes"], 4 << 20);
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(StorageCli, InterruptDuringGenerationRemovesTheDataSet) {
  TempDir dir;
  // 100,000 files of 4 KiB: the generator checks for about 400 MiB free. Far more files than can be
  // written between seeing the data set's directory and stopping the process below.
  constexpr std::uint64_t samples = 100000, needed_bytes = samples * 4096 + (1u << 20);
  struct statvfs fs_stat {};
  ASSERT_EQ(statvfs(dir.path.c_str(), &fs_stat), 0);
  if (static_cast<std::uint64_t>(fs_stat.f_bavail) * fs_stat.f_frsize < needed_bytes + (64u << 20))
    GTEST_SKIP() << "needs about " << (needed_bytes >> 20) << " MiB free in " << dir.path;
  const pid_t pid = fork();
  if (pid == 0) {
    execl(NODEAUDIT_BINARY, NODEAUDIT_BINARY, "probe", "storage.dataset", "--sample-size", "4KiB", "--samples",
          std::to_string(samples).c_str(), "--data-dir", dir.path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for a state, not a time: the data set's directory appears, or the probe ends first.
  int status = 0;
  bool ended = false;
  while (dir.entries() == 0 && !ended) {
    ended = waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(ended) << "the probe ended before generating (exit " << WEXITSTATUS(status) << ")";
  // Stopped, the generation cannot finish while the test looks: Ctrl-C then lands mid-generation.
  kill(pid, SIGSTOP);
  waitpid(pid, &status, WUNTRACED);
  ASSERT_EQ(dir.entries(), 1u);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path))
    ASSERT_FALSE(std::filesystem::exists(entry.path() / "manifest.json")) << "generation had already finished";
  kill(pid, SIGINT);
  kill(pid, SIGCONT);
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "status " << status;
  EXPECT_EQ(dir.entries(), 0u);
}

}  // namespace
}  // namespace nodeaudit::io
