// The bad inputs on real file systems and devices: a disk that fills up mid-generation
// (tmpfs out of inodes: ENOSPC; a file-size limit: EFBIG), a file system without O_DIRECT
// (ramfs), a block size the device cannot do under O_DIRECT (a loop device with 4 KiB sectors)
// and a read-only file system. Each: exit 2, one line naming the place, nothing left behind.
// The mounts and the loop device need root; without it those tests skip with the reason.
#include <fstream>

#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::expect_one_line_exit_two;
using test::probe_entry;
using test::run_cli;
using test::TempDir;

TEST(StorageBadInput, DiskFullMidGenerationExitsTwoAndLeavesNothing) {
  // Plenty of bytes (the free-space check passes) but 32 inodes: the 30-odd-th file fails ENOSPC.
  MOUNT_OR_SKIP(fs, "tmpfs", "size=64m,nr_inodes=32");
  const CliResult r = run_cli("probe storage.dataset --format json --path " + fs.path +
                              " --sample-size 4KiB --samples 200 --workers 1 --repetitions 1");
  expect_one_line_exit_two(r, "No space left on device");
  EXPECT_NE(r.out.find("cannot generate the data set"), std::string::npos) << r.out;
  EXPECT_EQ(fs.entries(), 0u);
}

TEST(StorageBadInput, FileSizeLimitMidGenerationExitsTwoAndLeavesNothing) {
  TempDir dir;
  // SIGXFSZ ignored, so the write fails with EFBIG instead of killing the process; 2 MiB is well
  // under the 16 MiB file.
  const CliResult r = run_cli("probe storage.read --format json --size 16MiB --runtime 0.2s --data-dir " + dir.path,
                              {.file_size_limit_bytes = 2ull << 20});
  expect_one_line_exit_two(r, "File too large");
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(StorageBadInput, NoODirectFileSystemFallsBackOrRefusesWhenAskedExplicitly) {
  MOUNT_OR_SKIP(fs, "ramfs", "");
  const std::string job = "probe storage.dataset --format json --sample-size 4KiB --samples 20 --workers 1 --repetitions 1 --path " + fs.path;
  expect_one_line_exit_two(run_cli(job + " --direct true"), "does not support O_DIRECT");
  EXPECT_EQ(fs.entries(), 0u);
  const CliResult fallback = run_cli(job);
  ASSERT_EQ(fallback.exit_code, 0) << fallback.out;
  const auto e = probe_entry(fallback);
  ASSERT_EQ(e["status"], "ok") << e.dump();
  ASSERT_EQ(e["findings"].size(), 1u) << e.dump();
  EXPECT_EQ(e["findings"][0]["severity"], "warn");
  EXPECT_EQ(e["findings"][0]["code"], "storage.direct_fallback");
  for (const auto& m : e["metrics"]) EXPECT_EQ(m["labels"]["cache"], "page") << m.dump();  // 80 KiB fits in RAM
  EXPECT_EQ(fs.entries(), 0u);
}

// A loop device over a sparse file, with 4 KiB logical sectors.
struct LoopDevice {
  std::string device, image, why;
  LoopDevice() {
    if (geteuid() != 0) {
      why = "needs root for losetup";
      return;
    }
    image = std::string(NODEAUDIT_IO_SCRATCH) + "/loop-4k.img";
    std::filesystem::create_directories(NODEAUDIT_IO_SCRATCH);
    std::filesystem::remove(image);
    std::ofstream(image).close();
    std::filesystem::resize_file(image, 16 << 20);
    const proc::ProcessResult r =
        proc::run_process({"losetup", "-f", "--show", "-b", "4096", image}, {.stderr_into_stdout = true});
    device = r.out.substr(0, r.out.find('\n'));
    if (r.exit_code != 0 || device.rfind("/dev/", 0) != 0) why = "losetup -b 4096: " + device, device.clear();
  }
  ~LoopDevice() {
    if (!device.empty()) (void)std::system(("losetup -d " + device).c_str());
    if (!image.empty()) std::filesystem::remove(image);
  }
};

TEST(StorageBadInput, BlockSizeNotAMultipleOfTheLogicalBlockSizeExitsTwo) {
  LoopDevice loop;
  if (loop.device.empty()) GTEST_SKIP() << loop.why;
  expect_one_line_exit_two(run_cli("probe storage.read --format json --block-size 2KiB --runtime 0.2s --path " + loop.device),
                           "--block-size 2048: must be a multiple of the logical block size (4096 bytes)");
  // The same device at a block size it can do is read (read-only) without complaint.
  const CliResult ok = run_cli("probe storage.read --format json --block-size 4KiB --runtime 0.2s --repetitions 1 --path " + loop.device);
  EXPECT_EQ(probe_entry(ok)["status"], "ok") << ok.out;
}

TEST(StorageBadInput, ReadOnlyFileSystemIsNotWritable) {
  MOUNT_OR_SKIP(fs, "tmpfs", "size=16m", MS_RDONLY);
  expect_one_line_exit_two(run_cli("probe storage.checkpoint --format json --size 1MiB --path " + fs.path),
                           "read-only file system");
  expect_one_line_exit_two(run_cli("probe storage.dataset --format json --samples 10 --path " + fs.path),
                           "read-only file system");
}

}  // namespace
}  // namespace nodeaudit::io
