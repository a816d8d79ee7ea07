#include "io/uring_engine.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "harness/node/container.hpp"
#include "io/uring_chain.hpp"

namespace nodeaudit::io {
namespace {

constexpr std::size_t huge_page_bytes = 2u << 20;

std::string errno_text(int negative_errno) { return std::strerror(-negative_errno); }

LatencyHistogram& window_histogram(LoopProgress& progress) {
  const unsigned window = progress.window ? progress.window->load(std::memory_order_relaxed) : 0;
  if (progress.window_latency.size() <= window) progress.window_latency.resize(window + 1);
  return progress.window_latency[window];
}

}  // namespace

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::unique_ptr<UringWorker> UringWorker::create(const EngineOptions& options, std::string& error) {
  std::unique_ptr<UringWorker> w(new UringWorker());
  w->options_ = options;
  io_uring_params params{};
  if (options.sqpoll) params.flags |= IORING_SETUP_SQPOLL, params.sq_thread_idle = 100;
  if (options.iopoll) params.flags |= IORING_SETUP_IOPOLL;
  // Whole-file units post three CQEs each; size the CQ so a full queue never overflows.
  params.flags |= IORING_SETUP_CQSIZE;
  params.cq_entries = 4 * options.queue_depth;
  const int rc = io_uring_queue_init_params(4 * options.queue_depth, &w->ring_, &params);
  if (rc < 0) {
    error = fmt::format("io_uring_queue_init (queue depth {}{}{}): {}", options.queue_depth,
                        options.sqpoll ? ", SQPOLL" : "", options.iopoll ? ", IOPOLL" : "", errno_text(rc));
    // Docker's and podman's default seccomp profiles refuse io_uring_setup; say how to allow it.
    if ((rc == -ENOSYS || rc == -EPERM) && detect_container().detected)
      error += "; in a container the default seccomp profile blocks io_uring: run it with --security-opt seccomp=unconfined "
               "(Kubernetes: securityContext.seccompProfile.type Unconfined)";
    return nullptr;
  }
  w->ring_ready_ = true;
  const std::size_t pool_bytes = options.buffer_bytes * options.queue_depth;
  // A pool of 2 MiB or more is 2 MiB-aligned and THP-advised: a 1 MiB buffer inside one huge
  // page is one physically contiguous segment, so the block layer does not split the read at the
  // device's segment limit (a virtio disk with max_segments 254 splits a 1 MiB read of 4 KiB
  // pages into two requests). Smaller pools (small blocks) gain nothing and keep 4 KiB pages.
  const bool huge = pool_bytes >= huge_page_bytes;
  const std::size_t align_bytes = huge ? huge_page_bytes : 4096;
  const std::size_t pool_alloc_bytes = (pool_bytes + align_bytes - 1) / align_bytes * align_bytes;
  w->buffer_pool_ = static_cast<std::byte*>(std::aligned_alloc(align_bytes, pool_alloc_bytes));
  if (!w->buffer_pool_) {
    error = fmt::format("cannot allocate {} bytes of I/O buffers", pool_bytes);
    return nullptr;
  }
  if (huge) madvise(w->buffer_pool_, pool_alloc_bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages still work
  std::memset(w->buffer_pool_, 0, pool_bytes);  // touch the pages before the timed region
  std::vector<iovec> iovecs(options.queue_depth);
  for (unsigned i = 0; i < options.queue_depth; ++i) iovecs[i] = {w->buffer_pool_ + i * options.buffer_bytes, options.buffer_bytes};
  // Registration can fail under a small RLIMIT_MEMLOCK; plain reads still work, only slower.
  w->fixed_buffers_ = io_uring_register_buffers(&w->ring_, iovecs.data(), options.queue_depth) == 0;
  w->slots_.resize(options.queue_depth);
  if (options.direct_slots > 0) {
    const int sparse = io_uring_register_files_sparse(&w->ring_, options.direct_slots);
    if (sparse < 0) {
      error = fmt::format("io_uring_register_files_sparse ({} slots): {}", options.direct_slots, errno_text(sparse));
      return nullptr;
    }
  }
  return w;
}

UringWorker::~UringWorker() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
  std::free(buffer_pool_);
}

void UringWorker::use_files(const std::vector<int>& fds) {
  fds_ = fds;
  if (fixed_files_) io_uring_unregister_files(&ring_);
  fixed_files_ = io_uring_register_files(&ring_, fds.data(), static_cast<unsigned>(fds.size())) == 0;
}

void UringWorker::prepare_whole_file(unsigned slot) {
  Slot& s = slots_[slot];
  std::byte* buffer = buffer_pool_ + slot * options_.buffer_bytes;
  s.cqes_pending = queue_whole_file_read(
      ring_, slot, {s.unit.path, s.unit.open_flags, buffer, s.unit.length, fixed_buffers_ ? static_cast<int>(slot) : -1});
}

void UringWorker::prepare(unsigned slot, UnitSource& source) {
  Slot& s = slots_[slot];
  if (s.unit.kind == UnitKind::whole_file_read) return prepare_whole_file(slot);
  std::byte* buffer = buffer_pool_ + slot * options_.buffer_bytes;
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  const int file = fixed_files_ ? s.unit.file : fds_[static_cast<std::size_t>(s.unit.file)];
  if (s.unit.kind == UnitKind::write) {
    source.fill(s.unit, buffer);
    if (fixed_buffers_) io_uring_prep_write_fixed(sqe, file, buffer, s.unit.length, s.unit.offset, static_cast<int>(slot));
    else io_uring_prep_write(sqe, file, buffer, s.unit.length, s.unit.offset);
  } else {
    if (fixed_buffers_) io_uring_prep_read_fixed(sqe, file, buffer, s.unit.length, s.unit.offset, static_cast<int>(slot));
    else io_uring_prep_read(sqe, file, buffer, s.unit.length, s.unit.offset);
  }
  if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, chain_tag(slot, ChainOp::io));
  s.cqes_pending = 1;
}

bool UringWorker::complete_cqe(io_uring_cqe* cqe, std::uint64_t now_ns, UnitSource& source, LoopResult& result,
                               LatencyHistogram& latency, std::vector<unsigned>& free_slots) {
  const std::uint64_t data = io_uring_cqe_get_data64(cqe);
  const unsigned slot = tag_slot(data);
  const ChainOp op = tag_op(data);
  Slot& s = slots_[slot];
  const IoUnit& u = s.unit;
  const char* what = u.kind == UnitKind::write ? "write" : "read";
  if (cqe->res < 0 && result.error.empty()) {
    const char* name = op_name(op, what);
    result.error = u.path ? fmt::format("{} {}: {}", name, u.path, errno_text(cqe->res))
                          : fmt::format("{} of {} bytes at offset {}: {}", name, u.length, u.offset, errno_text(cqe->res));
  }
  if (op == ChainOp::io) s.read_result = cqe->res;
  if (--s.cqes_pending > 0) return result.error.empty();
  const std::uint32_t want = u.kind == UnitKind::whole_file_read ? u.expect : u.length;
  if (s.read_result >= 0 && static_cast<std::uint32_t>(s.read_result) != want && result.error.empty())
    result.error = u.path ? fmt::format("read {}: {} bytes came back, {} expected", u.path, s.read_result, want)
                          : fmt::format("short {} at offset {}: {} of {} bytes", what, u.offset, s.read_result, want);
  if (s.read_result > 0) {
    result.bytes += static_cast<std::uint64_t>(s.read_result);
    if (u.kind != UnitKind::write) source.completed(u, buffer_pool_ + slot * options_.buffer_bytes, static_cast<std::uint32_t>(s.read_result));
  }
  ++result.units;
  latency.record(now_ns - s.submit_ns);
  free_slots.push_back(slot);
  return result.error.empty();
}

void UringWorker::stamp_submit(const std::vector<unsigned>& fresh, std::size_t& stamped, std::uint64_t now_ns) {
  for (; stamped < fresh.size(); ++stamped) slots_[fresh[stamped]].submit_ns = now_ns;
}

LoopResult UringWorker::run(UnitSource& source, const LoopLimits& limits, LatencyHistogram& latency) {
  LoopResult result;
  std::vector<unsigned> free_slots, fresh;
  for (unsigned i = options_.queue_depth; i-- > 0;) free_slots.push_back(i);
  fresh.reserve(options_.queue_depth);
  const std::uint64_t stop_ns = limits.stop_at == std::chrono::steady_clock::time_point::max()
                                    ? UINT64_MAX
                                    : static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(limits.stop_at.time_since_epoch()).count());
  bool draining = false;
  unsigned in_flight = 0;
  while (true) {
    fresh.clear();
    std::size_t stamped = 0;  // fresh slots already given their submit time
    while (!draining && !free_slots.empty()) {
      const unsigned slot = free_slots.back();
      if (!source.next(slots_[slot].unit)) {
        draining = true;
        break;
      }
      free_slots.pop_back();
      prepare(slot, source);
      fresh.push_back(slot);
      if (options_.max_submit_batch > 0 && fresh.size() - stamped == options_.max_submit_batch) {
        stamp_submit(fresh, stamped, monotonic_ns());
        io_uring_submit(&ring_);  // on failure the SQEs stay queued and go with the next call
      }
    }
    in_flight += static_cast<unsigned>(fresh.size());
    if (in_flight == 0) break;
    stamp_submit(fresh, stamped, monotonic_ns());
    const int rc = io_uring_submit_and_wait(&ring_, 1);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      if (result.error.empty()) result.error = "io_uring_submit_and_wait: " + errno_text(rc);
      draining = true;
      if (fresh.size() == in_flight) break;  // nothing reached the kernel: nothing to drain
    }
    const std::uint64_t now_ns = monotonic_ns();
    unsigned head = 0, seen = 0;
    io_uring_cqe* cqe = nullptr;
    const std::size_t free_before = free_slots.size();
    LatencyHistogram& batch_latency = limits.progress ? window_histogram(*limits.progress) : latency;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      if (!complete_cqe(cqe, now_ns, source, result, batch_latency, free_slots)) draining = true;
    }
    io_uring_cq_advance(&ring_, seen);
    in_flight -= static_cast<unsigned>(free_slots.size() - free_before);
    if (limits.progress) {
      limits.progress->bytes.store(result.bytes, std::memory_order_relaxed);
      limits.progress->units.store(result.units, std::memory_order_relaxed);
    }
    if (now_ns >= stop_ns || (limits.stop_flag && limits.stop_flag->load(std::memory_order_relaxed))) draining = true;
  }
  return result;
}

std::string UringWorker::fsync_all(const std::vector<int>& fds) {
  for (std::size_t i = 0; i < fds.size(); ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (!sqe) {
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    io_uring_prep_fsync(sqe, fds[i], 0);
    io_uring_sqe_set_data64(sqe, i);
  }
  std::string error;
  io_uring_submit(&ring_);
  for (std::size_t done = 0; done < fds.size(); ++done) {
    io_uring_cqe* cqe = nullptr;
    const int rc = io_uring_wait_cqe(&ring_, &cqe);
    if (rc < 0) return "io_uring_wait_cqe (fsync): " + errno_text(rc);
    if (cqe->res < 0 && error.empty()) error = fmt::format("fsync of file {}: {}", io_uring_cqe_get_data64(cqe), errno_text(cqe->res));
    io_uring_cqe_seen(&ring_, cqe);
  }
  return error;
}

}  // namespace nodeaudit::io
