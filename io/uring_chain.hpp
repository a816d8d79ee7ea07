// The io_uring pieces the storage engine (uring_engine) and pipeline.step's batch reader share:
// the user_data tag that names a slot and an operation, and the whole-file read as one chain
// (openat_direct into a fixed-file slot -> read from offset 0 -> close_direct).
#pragma once

#include <cstddef>
#include <cstdint>

#include <liburing.h>

namespace nodeaudit::io {

enum class ChainOp : std::uint64_t { io = 0, open = 1, close = 2 };

// user_data = slot << 2 | op
std::uint64_t chain_tag(unsigned slot, ChainOp op);
unsigned tag_slot(std::uint64_t user_data);
ChainOp tag_op(std::uint64_t user_data);
// "open", "close", or `io_name` ("read", "write") for the I/O itself: for error messages.
const char* op_name(ChainOp op, const char* io_name);

struct WholeFileRead {
  const char* path = nullptr;
  int open_flags = 0;
  std::byte* dest = nullptr;
  std::uint32_t length = 0;  // bytes asked for: at least the file's size, so one read takes it all
  int buffer_index = -1;     // registered buffer holding dest (read_fixed); -1 = plain read
};

// Queues the three linked SQEs for `read` in fixed-file slot `slot` (the ring must have room for
// three). The links are hard: a short read, expected whenever the length is rounded up, must not
// cancel the close. Returns the completions to expect (3).
int queue_whole_file_read(io_uring& ring, unsigned slot, const WholeFileRead& read);

}  // namespace nodeaudit::io
