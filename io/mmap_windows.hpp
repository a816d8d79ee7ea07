// Samples read as windows of one memory-mapped file, the way a Dataset over np.memmap reads them:
// each worker takes the next window index from one shared cursor and copies the window's bytes out
// of the mapping (as `tokens[a:b].astype(...)` does), so every miss is a page fault and the kernel's
// read-around decides how much the device reads for it. Nothing here issues a read call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/latency_histogram.hpp"

namespace nodeaudit::io {

class MappedFile {
 public:
  // Maps `path` read-only; error() says why when it could not.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& error() const { return error_; }
  std::uint64_t bytes() const { return bytes_; }
  const unsigned char* data() const { return static_cast<const unsigned char*>(addr_); }
  // Asks the kernel to drop the file's cached pages (written back first; the file is only read), so
  // the next windows come from the device. Returns the share of the file still resident after it
  // (mincore), which is what says whether the reads that follow are cold.
  double drop_cached_pages();
  // The share of the file's pages in memory now (mincore); 1 when it cannot be read.
  double resident_share() const;

 private:
  int fd_ = -1;
  void* addr_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::string error_;
};

struct WindowsResult {
  std::uint64_t windows = 0, bytes = 0;
  double elapsed_s = 0;
  std::uint64_t checksum = 0;  // the bytes' sum, so the copies cannot be optimized away
  LatencyHistogram latency;    // per window: first byte touched to last byte copied
};

// Reads windows `order[0..]` (window i = bytes [i * window_bytes, (i + 1) * window_bytes)) with
// `workers` threads until every window is read or `time_limit_s` has passed since the start.
WindowsResult read_windows(const MappedFile& file, std::uint64_t window_bytes, const std::vector<std::uint64_t>& order,
                           int workers, double time_limit_s);

}  // namespace nodeaudit::io
