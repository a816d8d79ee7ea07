// The kernel log, read without blocking: /dev/kmsg opened O_NONBLOCK and read one record per
// read() until EAGAIN (the end of what is buffered now), so a probe never waits for new messages.
// What it holds starts at the oldest record still in the kernel's ring buffer, not at boot.
#pragma once

#include <optional>
#include <string>

namespace nodeaudit::host {

struct KernelLog {
  std::string source;               // the path read ("/dev/kmsg", or a recorded file in tests)
  std::optional<std::string> text;  // the records, one per line; empty when it could not be read
  std::string why_unreadable;       // "open /dev/kmsg: Operation not permitted (...)" when text is empty
  long records = 0;                 // log records read (continuation lines not counted)
};

// Reads `path` to its current end. A regular file (a recorded log) is read to end of file.
KernelLog read_kernel_log(const std::string& path);

}  // namespace nodeaudit::host
