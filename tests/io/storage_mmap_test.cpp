// storage.dataset --read mmap: windows of one mapped file, as a Dataset over np.memmap reads them.
// The reader is checked byte for byte against a file written here; the probe through the CLI.
#include <fstream>
#include <numeric>
#include <set>

#include "io/mmap_windows.hpp"
#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::probe_entry;
using test::run_cli;
using test::TempDir;

// A file whose byte i is (i * 7 + 3) mod 251, so each window's first and last bytes are known.
std::string write_pattern_file(const std::string& dir, std::uint64_t bytes) {
  const std::string path = dir + "/windows.bin";
  std::ofstream out(path, std::ios::binary);
  for (std::uint64_t i = 0; i < bytes; ++i) out.put(static_cast<char>((i * 7 + 3) % 251));
  return path;
}

unsigned byte_at(std::uint64_t i) { return static_cast<unsigned>((i * 7 + 3) % 251); }

TEST(MmapWindows, ReadsEachWindowOfTheOrderOnceWithItsOwnBytesTheLastOneShort) {
  TempDir dir;
  const std::uint64_t window = 3000, bytes = 10 * window + 1234;  // 10 whole windows and a short 11th
  const MappedFile file(write_pattern_file(dir.path, bytes));
  ASSERT_EQ(file.error(), "");
  ASSERT_EQ(file.bytes(), bytes);
  const std::vector<std::uint64_t> order{10, 0, 7, 3, 3};
  const WindowsResult r = read_windows(file, window, order, 2, 60);
  EXPECT_EQ(r.windows, order.size());
  EXPECT_EQ(r.bytes, 4 * window + 1234);
  std::uint64_t expected = 0;
  for (std::uint64_t w : order) {
    const std::uint64_t first = w * window, last = std::min(bytes, first + window) - 1;
    expected += byte_at(first) + byte_at(last);
  }
  EXPECT_EQ(r.checksum, expected);
  EXPECT_EQ(r.latency.count(), order.size());
  EXPECT_GT(r.elapsed_s, 0);
}

TEST(MmapWindows, StopsAtTheTimeLimitWithWhatWasRead) {
  TempDir dir;
  const MappedFile file(write_pattern_file(dir.path, 1 << 20));
  ASSERT_EQ(file.error(), "");
  // A million reads of the same window cannot finish in a millisecond; the first window always completes.
  const std::vector<std::uint64_t> order(1'000'000, 1);
  const WindowsResult r = read_windows(file, 4096, order, 1, 0.001);
  EXPECT_GE(r.windows, 1u);
  EXPECT_LT(r.windows, order.size());
}

TEST(MmapWindows, DroppingTheCachedPagesLeavesAFileOnDiskColdAndSaysSo) {
  TempDir dir;
  MappedFile file(write_pattern_file(dir.path, 8 << 20));
  ASSERT_EQ(file.error(), "");
  std::vector<std::uint64_t> all(2048);
  std::iota(all.begin(), all.end(), 0ull);
  read_windows(file, 4096, all, 1, 60);  // every page touched: resident
  const double resident = file.drop_cached_pages();
  EXPECT_GE(resident, 0.0);
  EXPECT_LT(resident, 0.05) << "the scratch directory is on a disk (build tree), whose clean pages can be dropped";
}

TEST(MmapWindows, TheResidentShareCountsThePagesTheWindowsBroughtIn) {
  TempDir dir;
  MappedFile file(write_pattern_file(dir.path, 8 << 20));
  ASSERT_EQ(file.error(), "");
  ASSERT_LT(file.drop_cached_pages(), 0.05);
  // 16 windows of one page, 16 pages apart: at least those 16 pages are in memory afterwards.
  std::vector<std::uint64_t> order;
  for (std::uint64_t i = 0; i < 16; ++i) order.push_back(i * 16);
  read_windows(file, 4096, order, 1, 60);
  EXPECT_GE(file.resident_share() * (8 << 20), 16.0 * 4096);
  // A window past the file's end is skipped, not read out of bounds.
  const WindowsResult past = read_windows(file, 4096, {1u << 20}, 1, 60);
  EXPECT_EQ(past.bytes, 0u);
}

TEST(MmapWindows, AMissingFileSaysWhy) {
  const MappedFile file("/nonexistent/windows.bin");
  EXPECT_NE(file.error().find("/nonexistent/windows.bin"), std::string::npos) << file.error();
}

TEST(StorageDatasetMmap, RecordsWindowsPerSecondPerWorkerCountLabelledMmapAndLeavesNothing) {
  TempDir dir;
  const CliResult r = run_cli("probe storage.dataset --format json --read mmap --sample-size 2KiB --file-size 8MiB --samples 300 "
                              "--workers 1,2 --repetitions 2 --data-dir " + dir.path);
  const auto e = probe_entry(r);
  if (e["status"] == "skipped") SKIP_ONLY_IF_IO_URING_REFUSED("skipped: " + e["reason"].get<std::string>());
  ASSERT_EQ(e["status"], "ok") << e.dump();
  std::set<std::string> workers;
  for (const auto& m : e["metrics"]) {
    EXPECT_EQ(m["labels"]["read"], "mmap") << m.dump();
    if (m["name"] != "samples_per_s") continue;
    workers.insert(m["labels"]["workers"].get<std::string>());
    EXPECT_EQ(m["labels"]["cache"], "none") << "dropped before each repetition, on a disk";
    EXPECT_GT(m["median"].get<double>(), 0) << m.dump();
  }
  EXPECT_EQ(workers, (std::set<std::string>{"1", "2"}));
  // What the cache gained per 2 KiB window from a cold start: at least the 4 KiB page each touches,
  // at most the whole 8 MiB file over the windows read (one per worker count, as samples/s).
  std::set<std::string> fill_workers;
  for (const auto& m : e["metrics"]) {
    if (m["name"] != "cache_fill_per_sample") continue;
    fill_workers.insert(m["labels"]["workers"].get<std::string>());
    EXPECT_EQ(m["unit"], "bytes") << m.dump();
    EXPECT_GE(m["median"].get<double>(), 4096) << m.dump();
    EXPECT_LE(m["median"].get<double>(), 8 << 20) << m.dump();
  }
  EXPECT_EQ(fill_workers, workers);
  EXPECT_EQ(e["info"]["generated"]["bytes"], 8 << 20);
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(StorageDatasetMmap, AFileSmallerThanOneWindowIsBadInputNamingIt) {
  TempDir dir;
  const CliResult r = run_cli("probe storage.dataset --format json --read mmap --sample-size 64KiB --file-size 4KiB --data-dir " + dir.path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--file-size 4096"), std::string::npos) << r.out;
  EXPECT_EQ(dir.entries(), 0u);
}

}  // namespace
}  // namespace nodeaudit::io
