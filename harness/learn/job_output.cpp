#include "harness/learn/job_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace nodeaudit::learn {

namespace {

constexpr std::size_t kept_lines = 40;
constexpr std::size_t longest_kept_line = 400;

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone (closed pipe): the job still runs to its end
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

OutputPump::OutputPump(int stdout_fd, int stderr_fd) : fds_{stdout_fd, stderr_fd} {
  for (int fd : fds_) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

OutputPump::~OutputPump() {
  for (int fd : fds_)
    if (fd >= 0) close(fd);
}

bool OutputPump::pump(int timeout_ms) {
  pollfd polled[2];
  int open = 0;
  for (int i = 0; i < 2; ++i) {
    polled[i] = {fds_[i], POLLIN, 0};
    if (fds_[i] >= 0) ++open;
  }
  if (open == 0) return false;
  if (poll(polled, 2, timeout_ms) <= 0) return true;
  char buffer[65536];
  for (int i = 0; i < 2; ++i) {
    if (fds_[i] < 0 || !(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = read(fds_[i], buffer, sizeof buffer);
    if (n > 0) {
      write_all(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buffer, static_cast<std::size_t>(n));
      keep(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      close(fds_[i]);
      fds_[i] = -1;
    }
  }
  return fds_[0] >= 0 || fds_[1] >= 0;
}

void OutputPump::keep(const char* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      lines_.push_back(partial_);
      partial_.clear();
      if (lines_.size() > kept_lines) lines_.pop_front();
    } else if (partial_.size() < longest_kept_line) {
      partial_ += data[i];
    }
  }
}

std::vector<std::string> OutputPump::last_lines(std::size_t count) const {
  std::vector<std::string> out(lines_.begin(), lines_.end());
  if (!partial_.empty()) out.push_back(partial_);
  while (!out.empty() && out.back().find_first_not_of(" \t\r") == std::string::npos) out.pop_back();
  if (out.size() > count) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(count));
  return out;
}

}  // namespace nodeaudit::learn
