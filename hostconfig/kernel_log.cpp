// Non-blocking read of /dev/kmsg (see kernel_log.hpp).
#include "hostconfig/kernel_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace nodeaudit::host {

namespace {
// One /dev/kmsg record is at most about 8 KiB with its dictionary; a smaller buffer fails with EINVAL.
constexpr std::size_t record_buffer_bytes = 16 * 1024;
// The ring buffer is bounded (a few MiB at most), so this only guards against a file that grows
// while it is read.
constexpr std::size_t max_log_bytes = 64ull << 20;

std::string unreadable_hint(int error) {
  if (error == EPERM || error == EACCES)
    return " (kernel.dmesg_restrict, or a container without access to the host's kernel log)";
  return "";
}
}  // namespace

KernelLog read_kernel_log(const std::string& path) {
  KernelLog log;
  log.source = path;
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    log.why_unreadable = fmt::format("open {}: {}{}", path, std::strerror(error), unreadable_hint(error));
    return log;
  }
  std::string text;
  std::vector<char> buffer(record_buffer_bytes);
  for (;;) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      text.append(buffer.data(), static_cast<std::size_t>(n));  // a /dev/kmsg record ends in a newline
      if (text.size() > max_log_bytes) break;
      continue;
    }
    if (n == 0) break;                               // end of a regular file
    if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: a record was overwritten while reading; go on
    if (errno == EAGAIN) break;                      // /dev/kmsg: nothing more buffered now
    const int error = errno;
    close(fd);
    log.why_unreadable = fmt::format("read {}: {}{}", path, std::strerror(error), unreadable_hint(error));
    return log;
  }
  close(fd);
  // Lines that start with a space continue the record above (/dev/kmsg's KEY=value dictionary).
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    if (text[start] != ' ' && text[start] != '\n') ++log.records;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  log.text = std::move(text);
  return log;
}

}  // namespace nodeaudit::host
