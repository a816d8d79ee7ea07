// BatchReader reads whole files straight into the caller's buffers (registered or not): every
// byte lands at its sample's place, a file of the wrong size is an error naming it, and reads
// keep flowing when the source hands out samples while others are in flight.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdlib>
#include <filesystem>

#include "io/generated_data.hpp"
#include "io/pattern.hpp"
#include "pipeline/step/batch_reader.hpp"
#include "tests/support/uring_gate.hpp"

namespace nodeaudit::pipeline {
namespace {

struct Files {
  std::string dir;
  std::unique_ptr<io::GeneratedData> data;
  Files(std::uint64_t count, std::uint64_t bytes) {
    std::filesystem::create_directories(NODEAUDIT_PIPELINE_SCRATCH);
    std::string tmpl = std::string(NODEAUDIT_PIPELINE_SCRATCH) + "/reader-XXXXXX";
    dir = mkdtemp(tmpl.data()) ? tmpl : std::string();
    io::GenerateResult g = io::generate_dataset(dir, {"r", count, bytes, 11}, false, [] { return false; });
    EXPECT_EQ(g.error, "");
    data = std::move(g.data);
  }
  ~Files() {
    data.reset();
    io::remove_tree_quietly(dir);
  }
};

// Sample i goes to slot i of one buffer; `completed` records what came back.
class IndexedSource : public SampleSource {
 public:
  IndexedSource(const std::vector<std::string>& files, std::byte* buffer, std::uint32_t stride, std::uint32_t expect)
      : files_(files), buffer_(buffer), stride_(stride), expect_(expect), lengths_(files.size(), 0) {}
  Supply next(SampleRead& read, bool) override {
    if (next_ >= files_.size()) return Supply::done;
    read.path = files_[next_].c_str();
    read.open_flags = O_RDONLY;
    read.dest = buffer_ + next_ * stride_;
    read.capacity = stride_;
    read.expect = expect_;
    read.buffer_index = 0;
    read.tag = next_++;
    return Supply::ready;
  }
  bool completed(const SampleRead& read, std::uint32_t bytes, std::string&) override {
    lengths_[read.tag] = bytes;
    return true;
  }
  const std::vector<std::uint32_t>& lengths() const { return lengths_; }

 private:
  const std::vector<std::string>& files_;
  std::byte* buffer_;
  std::uint32_t stride_, expect_;
  std::size_t next_ = 0;
  std::vector<std::uint32_t> lengths_;
};

struct Buffer {
  std::byte* data;
  std::size_t bytes;
  explicit Buffer(std::size_t n) : data(static_cast<std::byte*>(std::aligned_alloc(4096, n))), bytes(n) {}
  ~Buffer() { std::free(data); }
};

TEST(BatchReader, EveryFileLandsAtItsSamplesPlaceInTheBatch) {
  const std::uint64_t file_bytes = 10000;  // not a multiple of 4 KiB: the read comes back short
  Files files(40, file_bytes);
  const std::uint32_t stride = 12288;
  Buffer batch(40 * stride);
  std::string error;
  auto reader = BatchReader::create(8, {{batch.data, batch.bytes}}, error);
  if (!reader) SKIP_ONLY_IF_IO_URING_REFUSED("BatchReader::create: " + error);
  IndexedSource source(files.data->files(), batch.data, stride, file_bytes);
  const std::atomic<bool> stop{false};
  const ReaderTotals totals = reader->run(source, stop);
  ASSERT_EQ(totals.error, "");
  EXPECT_EQ(totals.samples, 40u);
  EXPECT_EQ(totals.bytes, 40 * file_bytes);
  for (std::size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(source.lengths()[i], file_bytes);
    EXPECT_EQ(io::count_pattern_mismatches(batch.data + i * stride, file_bytes,
                                           io::file_seed({"r", 40, file_bytes, 11}, i), 0),
              0u)
        << "sample " << i;
  }
}

TEST(BatchReader, AFileOfTheWrongSizeIsAnErrorNamingIt) {
  Files files(6, 8192);
  ASSERT_EQ(truncate(files.data->files()[3].c_str(), 100), 0);
  Buffer batch(6 * 8192);
  std::string error;
  auto reader = BatchReader::create(2, {{batch.data, batch.bytes}}, error);
  if (!reader) SKIP_ONLY_IF_IO_URING_REFUSED("BatchReader::create: " + error);
  IndexedSource source(files.data->files(), batch.data, 8192, 8192);
  const std::atomic<bool> stop{false};
  const ReaderTotals totals = reader->run(source, stop);
  EXPECT_NE(totals.error.find(files.data->files()[3]), std::string::npos) << totals.error;
  EXPECT_NE(totals.error.find("100 bytes came back, 8192 expected"), std::string::npos) << totals.error;
}

TEST(BatchReader, AnySizeModeRefusesAFileThatFillsTheWholeSlot) {
  // With expect == 0 (JPEGs of varying size) a file as long as the slot may be longer still.
  Files files(2, 4096);
  Buffer batch(2 * 4096);
  std::string error;
  auto reader = BatchReader::create(2, {}, error);  // no registered buffers: plain reads
  if (!reader) SKIP_ONLY_IF_IO_URING_REFUSED("BatchReader::create: " + error);
  IndexedSource source(files.data->files(), batch.data, 4096, 0);
  const std::atomic<bool> stop{false};
  EXPECT_NE(reader->run(source, stop).error.find("expected 1 to 4095"), std::string::npos);
}

}  // namespace
}  // namespace nodeaudit::pipeline
