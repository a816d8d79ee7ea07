// Steady-state windows: the workers keep reading across window boundaries and every completed
// read lands in exactly one window or in the final drain; a failed worker or a stop request ends
// a window early.
#include <fcntl.h>
#include <unistd.h>

#include "io/read_sources.hpp"
#include "io/steady_windows.hpp"
#include "tests/io/io_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::TempDir;

constexpr std::uint32_t block_bytes = 64 << 10;

struct OpenFile {
  int fd = -1;
  explicit OpenFile(const std::string& path) : fd(open(path.c_str(), O_RDONLY | O_DIRECT)) {}
  ~OpenFile() {
    if (fd >= 0) close(fd);
  }
};

// Counts the units it hands out, so the total can be compared with what the windows saw.
class CountingBlocks : public BlockReadSource {
 public:
  using BlockReadSource::BlockReadSource;
  bool next(IoUnit& unit) override {
    const bool more = BlockReadSource::next(unit);
    handed_out += more;
    return more;
  }
  std::uint64_t handed_out = 0;
};

TEST(SteadyWindows, WindowsPartitionTheReadsWithoutRestartingTheWorkers) {
  TempDir dir;
  GenerateResult g = generate_dataset(dir.path, {"w", 1, 4 << 20, 3}, false, nullptr);
  ASSERT_EQ(g.error, "");
  OpenFile file(g.data->files()[0]);
  ASSERT_GE(file.fd, 0);
  std::vector<std::unique_ptr<UringWorker>> rings;
  std::vector<CountingBlocks> sources;
  sources.reserve(2);
  for (int i = 0; i < 2; ++i) {
    IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 4, .buffer_bytes = block_bytes}));
    ring->use_files({file.fd});
    rings.push_back(std::move(ring));
    sources.emplace_back(slice_for_worker(4 << 20, block_bytes, 2, i), block_bytes, false, 0);
    sources.back().start_repetition(UINT64_MAX);  // time-based: wraps around its slice
  }
  SteadyWindows windows(rings, {&sources[0], &sources[1]});
  double ops_in_windows = 0;
  for (int k = 0; k < 3; ++k) {
    const Work w = windows.next_window(0.05, nullptr);
    EXPECT_EQ(w.bytes, w.ops * block_bytes) << "window " << k;
    EXPECT_GT(*w.elapsed_s, 0) << "window " << k;
    ops_in_windows += w.ops;
  }
  windows.stop();
  EXPECT_EQ(windows.error(), "");
  std::uint64_t recorded = 0;
  for (unsigned k = 0; k <= 3; ++k) recorded += windows.window_latency(k).count();  // window 3: the drain
  // Every unit handed out completed once and was recorded once, across windows and the drain.
  EXPECT_EQ(recorded, sources[0].handed_out + sources[1].handed_out);
  EXPECT_LE(ops_in_windows, static_cast<double>(recorded));
}

TEST(SteadyWindows, AFailedWorkerEndsTheWindowAndReportsTheError) {
  TempDir dir;
  GenerateResult g = generate_dataset(dir.path, {"f", 1, 1 << 20, 3}, false, nullptr);
  ASSERT_EQ(g.error, "");
  OpenFile file(g.data->files()[0]);
  std::vector<std::unique_ptr<UringWorker>> rings;
  IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 2, .buffer_bytes = 1 << 20}));
  ring->use_files({file.fd});
  rings.push_back(std::move(ring));
  BlockReadSource past_end(Slice{0, 2}, 1 << 20, false, 0);  // the file has one block, not two
  past_end.start_repetition(UINT64_MAX);
  SteadyWindows windows(rings, {&past_end});
  windows.next_window(3600, nullptr);  // returns at the failure, not after an hour
  EXPECT_TRUE(windows.failed());
  windows.stop();
  EXPECT_NE(windows.error().find("short read"), std::string::npos) << windows.error();
}

TEST(SteadyWindows, AStopRequestEndsTheWindow) {
  TempDir dir;
  GenerateResult g = generate_dataset(dir.path, {"s", 1, 1 << 20, 3}, false, nullptr);
  ASSERT_EQ(g.error, "");
  OpenFile file(g.data->files()[0]);
  std::vector<std::unique_ptr<UringWorker>> rings;
  IO_RING_OR_SKIP(ring, (EngineOptions{.queue_depth = 2, .buffer_bytes = block_bytes}));
  ring->use_files({file.fd});
  rings.push_back(std::move(ring));
  BlockReadSource source(Slice{0, 16}, block_bytes, true, 1);
  source.start_repetition(UINT64_MAX);
  SteadyWindows windows(rings, {&source});
  int polls = 0;
  windows.next_window(3600, [&] { return ++polls > 2; });  // returns after the third poll
  windows.stop();
  EXPECT_EQ(windows.error(), "");
  EXPECT_GT(polls, 2);
}

}  // namespace
}  // namespace nodeaudit::io
