#include "pipeline/step/batch_reader.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "io/uring_chain.hpp"

namespace nodeaudit::pipeline {
namespace {

std::string errno_text(int negative_errno) {
  return std::strerror(-negative_errno);
}

}  // namespace

std::unique_ptr<BatchReader> BatchReader::create(unsigned depth, const std::vector<iovec>& buffers,
                                                 std::string& error) {
  std::unique_ptr<BatchReader> r(new BatchReader());
  io_uring_params params{};
  // Each sample posts three CQEs (open, read, close); size the CQ so a full ring never overflows.
  params.flags |= IORING_SETUP_CQSIZE;
  params.cq_entries = 4 * depth;
  const int rc = io_uring_queue_init_params(4 * depth, &r->ring_, &params);
  if (rc < 0) {
    error = fmt::format("io_uring_queue_init (queue depth {}): {}", depth, errno_text(rc));
    return nullptr;
  }
  r->ring_ready_ = true;
  if (!buffers.empty())
    r->fixed_buffers_ =
        io_uring_register_buffers(&r->ring_, buffers.data(), static_cast<unsigned>(buffers.size())) == 0;
  const int sparse = io_uring_register_files_sparse(&r->ring_, depth);
  if (sparse < 0) {
    error = fmt::format("io_uring_register_files_sparse ({} slots): {}", depth, errno_text(sparse));
    return nullptr;
  }
  r->slots_.resize(depth);
  return r;
}

BatchReader::~BatchReader() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
}

void BatchReader::prepare(unsigned slot) {
  Slot& s = slots_[slot];
  const SampleRead& read = s.read;
  const int buffer = fixed_buffers_ ? read.buffer_index : -1;
  s.cqes_pending = io::queue_whole_file_read(ring_, slot, {read.path, read.open_flags, read.dest, read.capacity, buffer});
  s.read_result = 0;
}

void BatchReader::complete_cqe(io_uring_cqe* cqe, SampleSource& source, ReaderTotals& totals,
                               std::vector<unsigned>& free_slots) {
  const std::uint64_t data = io_uring_cqe_get_data64(cqe);
  const unsigned slot = io::tag_slot(data);
  const io::ChainOp op = io::tag_op(data);
  Slot& s = slots_[slot];
  if (cqe->res < 0 && totals.error.empty())
    totals.error = fmt::format("{} {}: {}", io::op_name(op, "read"), s.read.path, errno_text(cqe->res));
  if (op == io::ChainOp::io) s.read_result = cqe->res;
  if (--s.cqes_pending > 0) return;
  free_slots.push_back(slot);
  if (!totals.error.empty() || s.read_result < 0) return;
  const auto got = static_cast<std::uint32_t>(s.read_result);
  const bool size_ok = s.read.expect > 0 ? got == s.read.expect : got > 0 && got < s.read.capacity;
  if (!size_ok) {
    totals.error =
        s.read.expect > 0
            ? fmt::format("read {}: {} bytes came back, {} expected", s.read.path, got, s.read.expect)
            : fmt::format("read {}: {} bytes came back, expected 1 to {}", s.read.path, got, s.read.capacity - 1);
    return;
  }
  totals.bytes += got;
  ++totals.samples;
  std::string error;
  if (!source.completed(s.read, got, error)) totals.error = error;
}

ReaderTotals BatchReader::run(SampleSource& source, const std::atomic<bool>& stop) {
  ReaderTotals totals;
  std::vector<unsigned> free_slots;
  for (unsigned i = static_cast<unsigned>(slots_.size()); i-- > 0;) free_slots.push_back(i);
  unsigned in_flight = 0;
  bool draining = false;
  while (true) {
    while (!draining && !free_slots.empty()) {
      const unsigned slot = free_slots.back();
      const Supply supply = source.next(slots_[slot].read, in_flight == 0);
      if (supply == Supply::done) draining = true;
      if (supply != Supply::ready) break;
      free_slots.pop_back();
      prepare(slot);
      ++in_flight;
    }
    if (in_flight == 0) break;
    const int rc = io_uring_submit_and_wait(&ring_, 1);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY && totals.error.empty())
      totals.error = "io_uring_submit_and_wait: " + errno_text(rc);
    unsigned head = 0, seen = 0;
    io_uring_cqe* cqe = nullptr;
    const std::size_t free_before = free_slots.size();
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      complete_cqe(cqe, source, totals, free_slots);
    }
    io_uring_cq_advance(&ring_, seen);
    in_flight -= static_cast<unsigned>(free_slots.size() - free_before);
    if (!totals.error.empty() || stop.load(std::memory_order_relaxed)) draining = true;
    // A submit that failed outright left nothing in the kernel to wait for.
    if (rc < 0 && seen == 0 && !totals.error.empty()) break;
  }
  return totals;
}

}  // namespace nodeaudit::pipeline
