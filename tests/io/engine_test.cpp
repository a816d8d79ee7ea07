// The io_uring engine on real files: byte counts, contents, slices, whole-file loader coverage.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <numeric>

#include "harness/core/stats.hpp"
#include "io/dataset_loader.hpp"
#include "io/pattern.hpp"
#include "io/read_sources.hpp"
#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::TempDir;

std::unique_ptr<GeneratedData> make_file_set(const TempDir& dir, std::uint64_t count, std::uint64_t bytes, DatasetSpec& spec) {
  spec = DatasetSpec{"t", count, bytes, 77};
  GenerateResult g = generate_dataset(dir.path, spec, false, nullptr);
  EXPECT_TRUE(g.error.empty()) << g.error;
  return std::move(g.data);
}

class CountingSource : public BlockReadSource {
 public:
  using BlockReadSource::BlockReadSource;
  void completed(const IoUnit& u, const std::byte*, std::uint32_t bytes) override { seen[u.offset] += bytes; }
  std::map<std::uint64_t, std::uint64_t> seen;
};

void expect_pass_reads_file_once(bool random_order, bool direct) {
  TempDir dir;
  DatasetSpec spec;
  auto data = make_file_set(dir, 1, 8 << 20, spec);
  IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 4, .buffer_bytes = 64 << 10}));
  const int fd = open(data->files()[0].c_str(), O_RDONLY | (direct ? O_DIRECT : 0));
  ASSERT_GE(fd, 0);
  ring->use_files({fd});
  CountingSource source(Slice{0, (8 << 20) / (64 << 10)}, 64 << 10, random_order, 5);
  source.start_repetition((8 << 20) / (64 << 10));
  LatencyHistogram h;
  const LoopResult r = ring->run(source, {}, h);
  close(fd);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.bytes, 8u << 20);
  EXPECT_EQ(r.units, 128u);
  EXPECT_EQ(h.count(), 128u);
  EXPECT_EQ(source.seen.size(), 128u);  // every block once
  for (const auto& [offset, bytes] : source.seen) EXPECT_EQ(bytes, 64u << 10) << offset;
}

TEST(UringEngine, SequentialPassReadsEveryByteOnce) { expect_pass_reads_file_once(false, true); }
TEST(UringEngine, RandomPassReadsEveryBlockOnce) { expect_pass_reads_file_once(true, true); }
TEST(UringEngine, BufferedPassReadsEveryBlockOnce) { expect_pass_reads_file_once(true, false); }

TEST(UringEngine, DataReadBackMatchesDataWritten) {
  TempDir dir;
  DatasetSpec spec;
  auto data = make_file_set(dir, 1, 3 << 20, spec);
  IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 8, .buffer_bytes = 1 << 20}));
  const int fd = open(data->files()[0].c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0);
  ring->use_files({fd});
  VerifyingSource good(3, 1 << 20, file_seed(spec, 0));
  LatencyHistogram h;
  EXPECT_EQ(ring->run(good, {}, h).error, "");
  EXPECT_EQ(good.checked_bytes(), 3u << 20);
  EXPECT_EQ(good.mismatched_bytes(), 0u);
  VerifyingSource wrong_seed(1, 1 << 20, file_seed(spec, 0) + 1);  // a checker that would miss nothing
  EXPECT_EQ(ring->run(wrong_seed, {}, h).error, "");
  EXPECT_GT(wrong_seed.mismatched_bytes(), (1u << 20) * 9 / 10);
  close(fd);
}

TEST(UringEngine, ReadPastEndOfFileIsAShortReadError) {
  TempDir dir;
  DatasetSpec spec;
  auto data = make_file_set(dir, 1, 1 << 20, spec);
  IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 2, .buffer_bytes = 1 << 20}));
  const int fd = open(data->files()[0].c_str(), O_RDONLY);
  ring->use_files({fd});
  BlockReadSource source(Slice{0, 2}, 1 << 20, false, 0);  // the file has only one block
  source.start_repetition(2);
  LatencyHistogram h;
  const LoopResult r = ring->run(source, {}, h);
  close(fd);
  EXPECT_NE(r.error.find("short read"), std::string::npos) << r.error;
}

TEST(UringEngine, WorkerSlicesCoverTheRegionWithoutOverlap) {
  std::uint64_t next = 0, blocks = 0;
  for (int w = 0; w < 3; ++w) {
    const Slice s = slice_for_worker(10 << 20, 1 << 20, 3, w);
    EXPECT_EQ(s.first_byte, next);
    next += s.blocks << 20, blocks += s.blocks;
  }
  EXPECT_EQ(blocks, 10u);
}

TEST(DatasetLoader, EveryEpochReadsEverySampleExactlyOnce) {
  TempDir dir;
  DatasetSpec spec;
  auto data = make_file_set(dir, 300, 110 << 10 | 123, spec);  // not a multiple of 4 KiB
  std::vector<std::unique_ptr<UringWorker>> rings;
  for (int i = 0; i < 3; ++i) {
    IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 4, .buffer_bytes = 116 << 10, .direct_slots = 4}));
    rings.push_back(std::move(ring));
  }
  for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
    const EpochPlan plan = make_epoch_plan(data->files(), 110 << 10 | 123, true, epoch);
    std::vector<std::atomic<std::uint32_t>> counts(300);
    const EpochResult r = run_epoch(rings, 3, plan, {}, &counts);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.samples, 300u);
    EXPECT_EQ(r.bytes, 300u * (110 << 10 | 123));
    for (std::size_t i = 0; i < counts.size(); ++i) EXPECT_EQ(counts[i].load(), 1u) << "sample " << i;
  }
  EXPECT_NE(make_epoch_plan(data->files(), 1, true, 0).order, make_epoch_plan(data->files(), 1, true, 1).order);
}

TEST(DatasetLoader, MissingSampleFileIsReportedByName) {
  TempDir dir;
  DatasetSpec spec;
  auto data = make_file_set(dir, 4, 4096, spec);
  unlink(data->files()[2].c_str());
  std::vector<std::unique_ptr<UringWorker>> rings;
  IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 2, .buffer_bytes = 4096, .direct_slots = 2}));
  rings.push_back(std::move(ring));
  const EpochResult r = run_epoch(rings, 1, make_epoch_plan(data->files(), 4096, false, 0), {}, nullptr);
  EXPECT_NE(r.error.find(data->files()[2]), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("No such file"), std::string::npos) << r.error;
}

TEST(DatasetLoader, KneeIsTheFewestWorkersWithinTenPercentOfTheBestRate) {
  EXPECT_EQ(knee_workers({1, 2, 4, 8, 16}, {100, 190, 300, 320, 330}), 4);  // 300 >= 0.9 x 330
  EXPECT_EQ(knee_workers({1, 2, 4}, {100, 105, 300}), 4);  // a flat first step does not hide the gain after it
  EXPECT_EQ(knee_workers({1, 2, 4}, {100, 200, 400}), 4);
  EXPECT_EQ(knee_workers({4, 1, 2}, {300, 100, 280}), 2);  // any order; 280 >= 0.9 x 300
  EXPECT_EQ(knee_workers({}, {}), 0);
}

TEST(Pattern, UnalignedRangesAgreeWithAlignedFill) {
  std::vector<std::byte> whole(100), part(37);
  fill_pattern(whole.data(), whole.size(), 9, 0);
  fill_pattern(part.data(), part.size(), 9, 13);
  EXPECT_EQ(std::memcmp(whole.data() + 13, part.data(), part.size()), 0);
  EXPECT_EQ(count_pattern_mismatches(part.data(), part.size(), 9, 13), 0u);
  part[5] = ~part[5];
  EXPECT_EQ(count_pattern_mismatches(part.data(), part.size(), 9, 13), 1u);
}

}  // namespace
}  // namespace nodeaudit::io
