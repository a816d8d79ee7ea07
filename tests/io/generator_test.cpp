// Dataset generator: manifest, reuse with --keep-data, and cleanup on end, error and interrupt;
// the target checks that turn bad places into one-line reasons.
#include <signal.h>
#include <sys/resource.h>

#include <fstream>
#include <set>

#include "io/storage_target.hpp"
#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

TEST(Generator, CreatesFilesOfTheRightSizeAndRemovesThemAtTheEnd) {
  TempDir dir;
  {
    GenerateResult g = generate_dataset(dir.path, {"g", 5, 10000, 1}, false, nullptr);
    ASSERT_EQ(g.error, "");
    ASSERT_EQ(g.data->files().size(), 5u);
    for (const auto& f : g.data->files()) EXPECT_EQ(fs::file_size(f), 10000u);
    EXPECT_TRUE(fs::exists(fs::path(g.data->dir()) / "manifest.json"));
    EXPECT_EQ(dir.entries(), 1u);
  }
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(Generator, KeepDataReusesAMatchingDataSetAndRegeneratesOnMismatch) {
  TempDir dir;
  std::string first_dir;
  {
    GenerateResult g = generate_dataset(dir.path, {"k", 3, 4096, 1}, true, nullptr);
    ASSERT_EQ(g.error, "");
    EXPECT_FALSE(g.data->reused());
    first_dir = g.data->dir();
  }
  ASSERT_TRUE(fs::exists(first_dir));  // kept
  {
    GenerateResult again = generate_dataset(dir.path, {"k", 3, 4096, 1}, true, nullptr);
    EXPECT_TRUE(again.data->reused());
    EXPECT_EQ(again.data->dir(), first_dir);
  }
  fs::resize_file(fs::path(first_dir) / "f0000001.bin", 10);  // damaged: not reused
  GenerateResult fixed = generate_dataset(dir.path, {"k", 3, 4096, 1}, true, nullptr);
  ASSERT_EQ(fixed.error, "");
  EXPECT_FALSE(fixed.data->reused());
  EXPECT_EQ(fs::file_size(fs::path(first_dir) / "f0000001.bin"), 4096u);
}

TEST(Generator, InterruptRemovesWhatWasWritten) {
  TempDir dir;
  int polls = 0;
  GenerateResult g = generate_dataset(dir.path, {"i", 50, 8192, 1}, false, [&] { return ++polls > 20; });
  EXPECT_TRUE(g.interrupted);
  EXPECT_FALSE(g.data);
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(Generator, WriteErrorMidwayRemovesWhatWasWritten) {
  TempDir dir;
  // A file-size limit makes the third MiB fail with EFBIG, as a full disk fails with ENOSPC.
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 2 << 20;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  GenerateResult g = generate_dataset(dir.path, {"e", 1, 4 << 20, 1}, false, nullptr);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  EXPECT_NE(g.error.find("cannot generate the data set"), std::string::npos) << g.error;
  EXPECT_NE(g.error.find("offset 2097152"), std::string::npos) << g.error;
  EXPECT_TRUE(g.out_of_space);  // the place is too small: bad input, not a failed measurement
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(Generator, RefusesWhenFreeSpaceIsShortSayingHowMuch) {
  TempDir dir;
  GenerateResult g = generate_dataset(dir.path, {"big", 1u << 20, 1ull << 30, 1}, false, nullptr);  // 1 PiB
  EXPECT_NE(g.error.find("not enough free space: needs 1024.0 TiB, only "), std::string::npos) << g.error;
  EXPECT_TRUE(g.out_of_space);
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(StorageTarget, NeitherPathNorDataDirIsASkip) {
  const TargetOrReason t = resolve_target("", "", false);
  EXPECT_TRUE(t.skip);
  EXPECT_EQ(t.reason, "needs --path or --data-dir (a directory on the storage under test)");
}

TEST(StorageTarget, BadPlacesAreRefusedNamingTheValue) {
  TempDir dir;
  EXPECT_EQ(resolve_target(dir.path + "/nope", "", false).reason, "--path " + dir.path + "/nope: No such file or directory");
  std::ofstream(dir.path + "/file") << "x";
  EXPECT_NE(resolve_target(dir.path + "/file", "", true).reason.find("is a file"), std::string::npos);
  EXPECT_EQ(resolve_target(dir.path + "/file", "", false).target->kind, TargetKind::file);
  EXPECT_NE(resolve_target("/tmp", dir.path, true).reason.find("outside --data-dir"), std::string::npos);
  EXPECT_TRUE(resolve_target(dir.path, dir.path, true).target);
}

TEST(StorageTarget, BlockDeviceMayBeReadButNeverWritten) {
  const char* dev = nullptr;
  for (const char* d : {"/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/loop0"})
    if (fs::is_block_file(d)) dev = d;
  if (!dev) GTEST_SKIP() << "no block device node to test with";
  const TargetOrReason w = resolve_target(dev, "", true);
  EXPECT_NE(w.reason.find("is a block device"), std::string::npos) << w.reason;
  EXPECT_NE(w.reason.find("never writes to a block device"), std::string::npos) << w.reason;
}

TEST(StorageTarget, UnwritableDirectoryIsRefused) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: permission bits do not stop writes";
  TempDir dir;
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  const TargetOrReason t = resolve_target(dir.path, "", true);
  fs::permissions(dir.path, fs::perms::owner_all);
  EXPECT_NE(t.reason.find("not writable"), std::string::npos) << t.reason;
}

TEST(StorageTarget, CacheLabelFollowsDirectAndFreeRam) {
  EXPECT_STREQ(cache_label(true, 1 << 20), "none");
  EXPECT_STREQ(cache_label(false, 1 << 20), "page");
  EXPECT_STREQ(cache_label(false, ~0ull), "none");
}

}  // namespace
}  // namespace nodeaudit::io
