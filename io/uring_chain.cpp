#include "io/uring_chain.hpp"

#include <fcntl.h>

namespace nodeaudit::io {
namespace {
constexpr std::uint64_t op_bits = 2;
}  // namespace

std::uint64_t chain_tag(unsigned slot, ChainOp op) {
  return (std::uint64_t{slot} << op_bits) | static_cast<std::uint64_t>(op);
}

unsigned tag_slot(std::uint64_t user_data) {
  return static_cast<unsigned>(user_data >> op_bits);
}

ChainOp tag_op(std::uint64_t user_data) {
  return static_cast<ChainOp>(user_data & ((1u << op_bits) - 1));
}

const char* op_name(ChainOp op, const char* io_name) {
  return op == ChainOp::open ? "open" : op == ChainOp::close ? "close" : io_name;
}

int queue_whole_file_read(io_uring& ring, unsigned slot, const WholeFileRead& read) {
  io_uring_sqe* open_sqe = io_uring_get_sqe(&ring);
  io_uring_prep_openat_direct(open_sqe, AT_FDCWD, read.path, read.open_flags, 0, slot);
  io_uring_sqe_set_data64(open_sqe, chain_tag(slot, ChainOp::open));
  open_sqe->flags |= IOSQE_IO_HARDLINK;
  io_uring_sqe* read_sqe = io_uring_get_sqe(&ring);
  if (read.buffer_index >= 0)
    io_uring_prep_read_fixed(read_sqe, static_cast<int>(slot), read.dest, read.length, 0, read.buffer_index);
  else
    io_uring_prep_read(read_sqe, static_cast<int>(slot), read.dest, read.length, 0);
  read_sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
  io_uring_sqe_set_data64(read_sqe, chain_tag(slot, ChainOp::io));
  io_uring_sqe* close_sqe = io_uring_get_sqe(&ring);
  io_uring_prep_close_direct(close_sqe, slot);
  io_uring_sqe_set_data64(close_sqe, chain_tag(slot, ChainOp::close));
  return 3;
}

}  // namespace nodeaudit::io
