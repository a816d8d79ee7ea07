// One loader worker's io_uring for pipeline.step: whole sample files read straight into the batch
// buffer they belong to (io/uring_chain's openat_direct -> read -> close_direct chain, which the
// storage engine uses too), so no byte is copied between the read and the batch. The storage engine
// (io/uring_engine) reads into a pool of its own and hands each sample to a callback, which costs
// the pipeline a memcpy per sample; this ring registers the batch buffers themselves (read_fixed)
// when the kernel allows, and plain reads into the same memory otherwise.
//
// Reads keep flowing across batch boundaries: the source may hand out samples of the next batch
// while the last ones of the previous batch are still in flight, so a batch boundary does not drain
// the ring (storage.dataset never drains within an epoch either).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <liburing.h>

namespace nodeaudit::pipeline {

struct SampleRead {
  const char* path = nullptr;
  int open_flags = 0;
  std::byte* dest = nullptr;
  std::uint32_t capacity = 0;  // bytes requested; a file as long as this is an error when expect == 0
  std::uint32_t expect = 0;    // exact size that must come back; 0 = any size from 1 to capacity - 1
  int buffer_index = -1;       // registered buffer holding dest
  std::uint64_t tag = 0;       // for the source
};

enum class Supply { ready, later, done };

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  // Fills `read` (ready), has nothing until a batch completes (later; only when !may_block), or is
  // finished (done). `may_block` is true when no read is in flight, so waiting cannot deadlock.
  virtual Supply next(SampleRead& read, bool may_block) = 0;
  // Called once per sample after its close; returns false (with `error`) to stop the worker.
  virtual bool completed(const SampleRead& read, std::uint32_t bytes, std::string& error) = 0;
};

struct ReaderTotals {
  std::uint64_t samples = 0, bytes = 0;
  std::string error;  // first failure, naming the file
};

class BatchReader {
 public:
  // `buffers` are registered for read_fixed (buffer_index = position); registration may be refused
  // (RLIMIT_MEMLOCK, over 1 GiB each), then reads are plain. Empty `error` on success.
  static std::unique_ptr<BatchReader> create(unsigned depth, const std::vector<iovec>& buffers, std::string& error);
  ~BatchReader();
  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;
  bool fixed_buffers() const { return fixed_buffers_; }

  // Runs until the source is done, `stop` turns true or a read fails; in-flight reads are drained.
  ReaderTotals run(SampleSource& source, const std::atomic<bool>& stop);

 private:
  struct Slot {
    SampleRead read;
    int cqes_pending = 0;
    std::int32_t read_result = 0;
  };
  BatchReader() = default;
  void prepare(unsigned slot);
  void complete_cqe(io_uring_cqe* cqe, SampleSource& source, ReaderTotals& totals, std::vector<unsigned>& free_slots);

  io_uring ring_{};
  bool ring_ready_ = false;
  bool fixed_buffers_ = false;
  std::vector<Slot> slots_;
};

}  // namespace nodeaudit::pipeline
