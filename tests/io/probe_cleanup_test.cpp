// A probe killed with kill -9 leaves no data behind (its parent removes the scratch directories
// that name it as owner), a `run` killed with kill -9 takes its probe child with it within 2 s with
// nothing left in the data dir or the temporary directory, and a later run removes the scratch of
// a nodeaudit process that is gone, saying so. Real processes, real files, quick sizes.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "harness/core/owned_dir.hpp"
#include "tests/io/io_test_util.hpp"
#include "tests/support/cli_process.hpp"

namespace nodeaudit::io {
namespace {

using test::TempDir;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  return names;
}

bool has_entry_starting(const std::string& dir, const std::string& prefix) {
  for (const auto& name : entries(dir))
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

// The child of `parent` whose command line holds `needle` ("probe\0storage.dataset"), or 0.
pid_t child_of(pid_t parent, const std::string& needle) {
  for (const auto& name : entries("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_text("/proc/" + name + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) != 2 || ppid != parent) continue;
    if (read_text("/proc/" + name + "/cmdline").find(needle) != std::string::npos)
      return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

// No such process, or a zombie no one has reaped yet (it runs nothing and holds nothing).
bool gone(pid_t pid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return stat.empty() || close == std::string::npos || stat[close + 2] == 'Z';
}

template <typename Pred>
bool wait_until(double seconds, Pred pred) {
  const auto end = clock_type::now() + std::chrono::duration<double>(seconds);
  while (clock_type::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

struct KillCase {
  std::string probe;       // run --only this
  std::string data_entry;  // the probe's scratch directory, by the prefix of its name
  bool kill_parent = false;
};

struct KillOutcome {
  proc::ProcessResult run;
  bool data_seen = false;
  pid_t child = 0;
  double child_gone_after_s = -1;
};

// `run --only PROBE` with its own TMPDIR; as soon as the probe's data directory appears, kill -9
// the probe child (or the run itself).
KillOutcome kill_during(const KillCase& c, const std::string& data_dir, const std::string& tmp_dir,
                        const std::string& out) {
  KillOutcome k;
  proc::Trigger trigger;
  trigger.action = [&](pid_t run_pid) {
    k.data_seen = wait_until(120, [&] { return has_entry_starting(data_dir, c.data_entry); });
    k.child = child_of(run_pid, "probe");
    if (!k.data_seen || k.child == 0) return void(kill(run_pid, SIGKILL));
    kill(c.kill_parent ? run_pid : k.child, SIGKILL);
    if (!c.kill_parent) return;
    const auto killed_at = clock_type::now();
    if (wait_until(10, [&] { return gone(k.child); }))
      k.child_gone_after_s = std::chrono::duration<double>(clock_type::now() - killed_at).count();
  };
  k.run = proc::run_process({"/usr/bin/env", "TMPDIR=" + tmp_dir, NODEAUDIT_BINARY, "run", "--only", c.probe,
                             "--data-dir", data_dir, "--out", out, "--format", "json"},
                            trigger);
  return k;
}

void expect_nothing_left(const KillCase& c) {
  TempDir data;
  const std::string tmp = proc::make_temp_dir("tmpdir");
  const std::string out = tmp + "-result.json";
  const KillOutcome k = kill_during(c, data.path, tmp, out);
  if (!k.data_seen) {
    SKIP_ONLY_IF_IO_URING_REFUSED(c.probe + " made no data: " + k.run.out + k.run.err);
    FAIL() << c.probe << " never made its data directory: " << k.run.out << k.run.err;
  }
  ASSERT_NE(k.child, 0) << "no probe child found";
  if (c.kill_parent) {
    EXPECT_GE(k.child_gone_after_s, 0) << "the probe child outlived its killed parent by 10 s";
    EXPECT_LE(k.child_gone_after_s, 2.0) << "the probe child outlived its killed parent";
  } else {
    EXPECT_NE(k.run.out.find("\"status\": \"crashed\""), std::string::npos) << k.run.out;
    EXPECT_NE(k.run.out.find("\"removed_after_end\""), std::string::npos) << "the removal is recorded: " << k.run.out;
  }
  EXPECT_EQ(entries(data.path), std::vector<std::string>{}) << "left in the data dir";
  EXPECT_EQ(entries(tmp), std::vector<std::string>{}) << "left in TMPDIR";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::remove(out, ec);
}

TEST(ProbeCleanup, KillNineOfADatasetProbeLeavesNoData) {
  expect_nothing_left({"storage.dataset", "nodeaudit-dataset-", false});
}

TEST(ProbeCleanup, KillNineOfACheckpointProbeLeavesNoData) {
  expect_nothing_left({"storage.checkpoint", "nodeaudit-checkpoint-", false});
}

TEST(ProbeCleanup, KillNineOfRunTakesItsProbeAndItsDataWithinTwoSeconds) {
  expect_nothing_left({"storage.dataset", "nodeaudit-dataset-", true});
}

// Scratch made by a process that has ended (as after a power loss or kill -9 of both).
std::string scratch_of_ended_process(const std::string& parent) {
  const std::string note = parent + "/made-by-child";
  const pid_t pid = fork();
  if (pid == 0) {
    std::string error;
    const std::string dir = make_owned_dir(parent, "nodeaudit-dataset-110KiB-x4", error);
    std::ofstream(dir + "/f0000000.bin") << "data";
    std::ofstream(note) << dir;
    _exit(0);
  }
  waitpid(pid, nullptr, 0);
  const std::string dir = read_text(note);
  fs::remove(note);
  return dir;
}

TEST(ProbeCleanup, ALaterRunRemovesScratchWhoseOwnerIsGoneAndSaysSo) {
  TempDir data;
  const std::string stale = scratch_of_ended_process(data.path);
  ASSERT_TRUE(fs::exists(stale + "/f0000000.bin"));
  const std::string users = data.path + "/nodeaudit-dataset-mine";
  fs::create_directory(users);
  std::ofstream(users + "/keep.txt") << "mine";
  const std::string out = data.path + "/result.json";
  const auto r =
      proc::run_process({NODEAUDIT_BINARY, "run", "--only", "host.config", "--data-dir", data.path, "--out", out});
  EXPECT_NE(r.err.find("removed " + stale + ": scratch data left by a nodeaudit process that is gone"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(users + "/keep.txt")) << "no owner marker: not nodeaudit's";
}

}  // namespace
}  // namespace nodeaudit::io
