// The job's stdout and stderr pass through to nodeaudit's own, byte for byte, as they come; the last
// lines of both are kept so an early exit can be named with what the job said last.
#pragma once

#include <deque>
#include <string>
#include <vector>

namespace nodeaudit::learn {

class OutputPump {
 public:
  // Takes the read ends of the job's stdout and stderr pipes (made non-blocking here).
  OutputPump(int stdout_fd, int stderr_fd);
  ~OutputPump();
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;
  // Waits up to timeout_ms for output and forwards what there is; false once both pipes are closed.
  bool pump(int timeout_ms);
  std::vector<std::string> last_lines(std::size_t count) const;

 private:
  void keep(const char* data, std::size_t size);
  int fds_[2];
  std::string partial_;
  std::deque<std::string> lines_;
};

}  // namespace nodeaudit::learn
