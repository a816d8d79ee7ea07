// Wrong bytes on disk: a file changed by another process between writing and the check makes
// storage.read and storage.checkpoint fail with a finding that names the file, offset and count.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::probe_entry;
using test::run_cli;
using test::TempDir;

// Inverts `count` bytes of `path` at `offset` (so every one of them differs), syncs them and drops
// the file's cached pages, so an O_DIRECT read and a buffered one both see the new bytes.
void invert_bytes_on_disk(const std::string& path, std::uint64_t offset, std::size_t count) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  std::vector<unsigned char> bytes(count);
  ASSERT_EQ(pread(fd, bytes.data(), count, static_cast<off_t>(offset)), static_cast<ssize_t>(count));
  for (auto& b : bytes) b = static_cast<unsigned char>(~b);
  ASSERT_EQ(pwrite(fd, bytes.data(), count, static_cast<off_t>(offset)), static_cast<ssize_t>(count));
  ASSERT_EQ(fsync(fd), 0);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  close(fd);
}

std::set<std::string> metric_names(const nlohmann::json& entry) {
  std::set<std::string> names;
  for (const auto& m : entry["metrics"]) names.insert(m["name"]);
  return names;
}

std::vector<nlohmann::json> findings_with_code(const nlohmann::json& entry, const std::string& code) {
  std::vector<nlohmann::json> found;
  for (const auto& f : entry["findings"])
    if (f["code"] == code) found.push_back(f);
  return found;
}

TEST(StorageVerify, ReadFailsNamingFileOffsetAndCountOfBytesChangedOnDisk) {
  TempDir dir;
  const std::string args = "probe storage.read --format json --keep-data --size 4MiB --block-size 64KiB --runtime 0.2s --repetitions 2 --data-dir " + dir.path;
  const CliResult first = run_cli(args);
  const auto clean = probe_entry(first);
  if (clean["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + clean["reason"].get<std::string>());
  ASSERT_EQ(clean["status"], "ok") << first.out;
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const std::string file = clean["info"]["file"];

  // 100 bytes from an offset that is neither block- nor word-aligned, in the second MiB.
  invert_bytes_on_disk(file, (1u << 20) + 37, 100);

  const CliResult second = run_cli(args);
  EXPECT_EQ(second.exit_code, 1) << second.out;
  const auto e = probe_entry(second);
  ASSERT_EQ(e["info"]["generated"]["reused"], true) << "the kept file must be read again, not regenerated: " << second.out;
  EXPECT_EQ(e["status"], "failed") << second.out;
  EXPECT_EQ(e["reason"], "verification failed: data read back differs from data written");
  const auto verify = findings_with_code(e, "storage.verify");
  ASSERT_EQ(verify.size(), 1u) << e["findings"].dump();
  EXPECT_EQ(verify[0]["severity"], "fail");
  EXPECT_EQ(verify[0]["message"], file + ": 100 of 4194304 bytes read back differ from what was written, the first at byte offset 1048613");
  EXPECT_EQ(metric_names(e), (std::set<std::string>{"bandwidth", "iops", "latency_p50", "latency_p99", "latency_max", "cpu_per_gb"}))
      << "the figures measured before the check are kept";
}

struct ChildRun {
  int exit_code = -1;
  std::string out;
};

// Runs test.checkpoint-tampered; once its last checkpoint is on disk, `tamper` gets the shard paths.
ChildRun run_tampered_checkpoint(const std::string& args, const std::string& handshake_dir,
                                 const std::function<void(const std::vector<std::string>&)>& tamper) {
  const std::string ready = handshake_dir + "/shards", out_file = handshake_dir + "/out";
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("NODEAUDIT_TEST_TAMPER_READY_FILE", ready.c_str(), 1);
    execl("/bin/sh", "sh", "-c", (std::string(NODEAUDIT_TESTBIN) + " " + args + " >" + out_file + " 2>&1").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for a state, not a time: the shard list appears, or the probe ends without reaching it.
  int status = 0;
  bool ended = false;
  while (!std::filesystem::exists(ready) && !ended) {
    ended = waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!ended) {
    std::vector<std::string> shards;
    std::ifstream in(ready);
    for (std::string line; std::getline(in, line);) shards.push_back(line);
    tamper(shards);
    std::ofstream(ready + ".done") << "go\n";
    waitpid(pid, &status, 0);
  }
  ChildRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(out_file);
  r.out.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

TEST(StorageVerify, CheckpointRestoreFailsNamingShardOffsetAndCountOfBytesChangedOnDisk) {
  TempDir dir, handshake;
  std::vector<std::string> shards;
  const ChildRun r = run_tampered_checkpoint(
      "probe test.checkpoint-tampered --format json --size 2MiB --shards 1 --block-size 64KiB --repetitions 1 --data-dir " + dir.path,
      handshake.path, [&](const std::vector<std::string>& paths) {
        shards = paths;
        ASSERT_EQ(paths.size(), 1u);
        invert_bytes_on_disk(paths[0], 65536 * 3 + 5, 4000);
      });
  const auto e = nlohmann::json::parse(r.out.substr(r.out.find('{')))["probes"][0];
  if (e["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + e["reason"].get<std::string>());
  ASSERT_EQ(shards.size(), 1u) << "the probe never reached its restore check: " << r.out;
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(e["status"], "failed") << r.out;
  EXPECT_EQ(e["reason"], "verification failed: checkpoint read back differs from what was written");
  const auto verify = findings_with_code(e, "storage.verify");
  ASSERT_EQ(verify.size(), 1u) << e["findings"].dump();
  EXPECT_EQ(verify[0]["severity"], "fail");
  EXPECT_EQ(verify[0]["message"], shards[0] + ": 4000 bytes of the 1-shard checkpoint read back differ from what was written, "
                                              "the first at byte offset 196613");
  EXPECT_EQ(metric_names(e), (std::set<std::string>{"write_bandwidth", "stall_s", "restore_bandwidth"}))
      << "the figures measured before the check are kept";
  EXPECT_EQ(dir.entries(), 0u) << "the shards are removed after a failed check too";
}

}  // namespace
}  // namespace nodeaudit::io
