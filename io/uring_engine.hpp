// The io_uring engine shared by the storage probes. One UringWorker per thread: its own ring, a
// fixed number of I/O units in flight (the queue depth), batched submission (all free slots are
// filled, then one io_uring_submit_and_wait) and batched completion (every ready CQE is reaped
// with one timestamp). Buffers are registered (read_fixed/write_fixed) when the kernel allows;
// files are registered, and whole-file units open and close through direct descriptors
// (openat_direct -> read_fixed -> close_direct, hard-linked), so a data-loader sample costs no
// extra syscalls. A pool of 2 MiB or more is 2 MiB-aligned and advised for transparent huge
// pages, so a buffer inside one huge page is physically contiguous and a large read is not split
// at the device's segment limit (THP may be off or memory fragmented: then 4 KiB pages are used).
// Latency = reap time - submit time of the unit, recorded in a LatencyHistogram.
//
// Pitfalls: IOPOLL needs O_DIRECT and a driver with poll queues, else reads fail with
// EOPNOTSUPP; SQPOLL spends a kernel thread per ring polling (its CPU is not in getrusage).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <liburing.h>

#include "io/latency_histogram.hpp"

namespace nodeaudit::io {

struct EngineOptions {
  unsigned queue_depth = 16;
  std::size_t buffer_bytes = 1 << 20;  // one buffer per slot; the largest unit length
  bool sqpoll = false;
  bool iopoll = false;
  unsigned direct_slots = 0;  // sparse direct-descriptor table for whole-file units (0 = none)
  // At most this many units per io_uring_enter (0 = every free slot at once). The kernel plugs a
  // submission of three or more I/Os: it holds the batch until all are prepared and merges
  // adjacent reads into one larger request. Measured on a virtio disk: 1 MiB sequential reads
  // went out as 4 MiB requests (0.25 requests per MiB in /proc/diskstats) and ran slower, and
  // 4 KiB random reads at QD32 had a higher median latency and fewer IOPS than with 2 here,
  // which keeps each read at its own size and dispatched at once, as fio's default submission.
  unsigned max_submit_batch = 0;
};

enum class UnitKind { read, write, whole_file_read };

// One unit of I/O. For read/write: a registered file index (or a plain fd when files could not be
// registered), offset and length. For whole_file_read: a path opened with `open_flags`, `length`
// bytes requested from offset 0 and exactly `expect` bytes must come back.
struct IoUnit {
  UnitKind kind = UnitKind::read;
  int file = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
  std::uint32_t expect = 0;
  const char* path = nullptr;
  int open_flags = 0;
  std::uint64_t tag = 0;  // for the source: which sample, which shard
};

// Hands the worker its next unit; sees write buffers before submission and read data after.
class UnitSource {
 public:
  virtual ~UnitSource() = default;
  virtual bool next(IoUnit& unit) = 0;
  virtual void fill(const IoUnit&, std::byte*) {}
  virtual void completed(const IoUnit&, const std::byte*, std::uint32_t) {}
};

// For measuring time windows while the queue stays full (no ramp-up or drain inside a window):
// after each completion batch the loop publishes its running totals, and records latencies into
// the histogram of the window that `window` names (the measuring thread advances it).
struct LoopProgress {
  std::atomic<std::uint64_t> bytes{0}, units{0};
  const std::atomic<unsigned>* window = nullptr;
  std::vector<LatencyHistogram> window_latency;  // grown by the worker; read after it returns
};

struct LoopLimits {
  std::chrono::steady_clock::time_point stop_at = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* stop_flag = nullptr;  // polled once per completion batch
  LoopProgress* progress = nullptr;              // optional; when set, `latency` of run() is unused
};

struct LoopResult {
  std::uint64_t bytes = 0;
  std::uint64_t units = 0;
  std::string error;  // first failure, with the path/offset and the errno text
};

class UringWorker {
 public:
  // Empty `error` on success; else why the ring could not be set up ("io_uring_queue_init: ...").
  static std::unique_ptr<UringWorker> create(const EngineOptions& options, std::string& error);
  ~UringWorker();
  UringWorker(const UringWorker&) = delete;
  UringWorker& operator=(const UringWorker&) = delete;

  // Registers files for read/write units (index = position); falls back to plain fds.
  void use_files(const std::vector<int>& fds);
  bool fixed_buffers() const { return fixed_buffers_; }
  bool fixed_files() const { return fixed_files_; }

  // Runs units from `source` until it is exhausted, a limit is hit or an I/O fails; in-flight
  // units are always drained. Latencies go into `latency`.
  LoopResult run(UnitSource& source, const LoopLimits& limits, LatencyHistogram& latency);
  // Submits one fsync per fd and waits for them all; returns the first error.
  std::string fsync_all(const std::vector<int>& fds);

 private:
  struct Slot {
    IoUnit unit;
    std::uint64_t submit_ns = 0;
    int cqes_pending = 0;
    std::int32_t read_result = 0;
  };
  UringWorker() = default;
  void prepare(unsigned slot, UnitSource& source);
  void stamp_submit(const std::vector<unsigned>& fresh, std::size_t& stamped, std::uint64_t now_ns);
  void prepare_whole_file(unsigned slot);
  // Returns false when the unit failed (error set).
  bool complete_cqe(io_uring_cqe* cqe, std::uint64_t now_ns, UnitSource& source, LoopResult& result,
                    LatencyHistogram& latency, std::vector<unsigned>& free_slots);

  io_uring ring_{};
  bool ring_ready_ = false;
  EngineOptions options_;
  std::byte* buffer_pool_ = nullptr;
  std::vector<Slot> slots_;
  std::vector<int> fds_;
  bool fixed_buffers_ = false;
  bool fixed_files_ = false;
};

std::uint64_t monotonic_ns();

}  // namespace nodeaudit::io
