#include "io/mmap_windows.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace nodeaudit::io {

MappedFile::MappedFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    error_ = fmt::format("cannot open {}: {}", path, std::strerror(errno));
    return;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size <= 0) {
    error_ = fmt::format("{} is empty or cannot be read", path);
    return;
  }
  bytes_ = static_cast<std::uint64_t>(st.st_size);
  void* addr = ::mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd_, 0);
  if (addr == MAP_FAILED) {
    error_ = fmt::format("cannot map {}: {}", path, std::strerror(errno));
    return;
  }
  addr_ = addr;
}

MappedFile::~MappedFile() {
  if (addr_) ::munmap(addr_, bytes_);
  if (fd_ >= 0) ::close(fd_);
}

double MappedFile::drop_cached_pages() {
  if (!addr_) return 1;
  // Dirty pages are not dropped: written back first (a file just generated may still be dirty).
  // The mapping's own references go next (MADV_DONTNEED), then the page cache's (fadvise).
  ::fdatasync(fd_);
  ::madvise(addr_, bytes_, MADV_DONTNEED);
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  return resident_share();
}

double MappedFile::resident_share() const {
  if (!addr_) return 1;
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::uint64_t pages = (bytes_ + static_cast<std::uint64_t>(page) - 1) / static_cast<std::uint64_t>(page);
  std::vector<unsigned char> resident(pages);
  if (::mincore(addr_, bytes_, resident.data()) != 0) return 1;
  std::uint64_t in_memory = 0;
  for (unsigned char r : resident) in_memory += r & 1;
  return static_cast<double>(in_memory) / static_cast<double>(pages);
}

WindowsResult read_windows(const MappedFile& file, std::uint64_t window_bytes, const std::vector<std::uint64_t>& order,
                           int workers, double time_limit_s) {
  std::atomic<std::size_t> cursor{0};
  std::atomic<bool> out_of_time{false};
  std::vector<WindowsResult> per_worker(static_cast<std::size_t>(workers));
  const auto start = std::chrono::steady_clock::now();
  const auto limit = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(time_limit_s));
  auto work = [&](WindowsResult& mine) {
    std::vector<unsigned char> copy(window_bytes);
    while (!out_of_time.load(std::memory_order_relaxed)) {
      const std::size_t next = cursor.fetch_add(1, std::memory_order_relaxed);
      if (next >= order.size()) break;
      const std::uint64_t offset = order[next] * window_bytes;
      if (offset >= file.bytes()) continue;  // a window past the file's end: nothing to read
      const std::uint64_t length = std::min(window_bytes, file.bytes() - offset);
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(copy.data(), file.data() + offset, length);
      const auto t1 = std::chrono::steady_clock::now();
      mine.latency.record(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
      mine.checksum += copy[0] + copy[length - 1];
      ++mine.windows, mine.bytes += length;
      if (t1 >= limit) out_of_time = true;
    }
  };
  std::vector<std::thread> threads;
  for (auto& mine : per_worker) threads.emplace_back(work, std::ref(mine));
  for (auto& t : threads) t.join();
  WindowsResult total;
  total.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& mine : per_worker) {
    total.windows += mine.windows, total.bytes += mine.bytes, total.checksum += mine.checksum;
    total.latency.merge(mine.latency);
  }
  return total;
}

}  // namespace nodeaudit::io
