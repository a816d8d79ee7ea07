// The prefetch queue between loader workers and the compute stage: `depth` batch buffers that
// cycle free -> filled by a loader -> ready -> consumed by compute -> free. Buffers are plain
// page-aligned host memory (where a GPU exists they would be pinned, cudaHostAlloc). close()
// wakes every waiter so an error or a stop request ends both sides without a deadlock.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace nodeaudit::pipeline {

// A blocking FIFO of buffer slot indices; pop() returns nullopt once closed.
class SlotQueue {
 public:
  void push(std::size_t slot);
  std::optional<std::size_t> pop();
  // As pop(), but gives up (nullopt) when `give_up` turns true; polled every 50 ms while waiting.
  std::optional<std::size_t> pop(const std::function<bool()>& give_up);
  void close();

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::size_t> slots_;
  bool closed_ = false;
};

struct AlignedFree {
  void operator()(std::byte* p) const;
};

class BatchQueue {
 public:
  BatchQueue(std::size_t depth, std::size_t batch_bytes);
  std::byte* buffer(std::size_t slot) { return buffers_[slot].get(); }
  std::size_t depth() const { return buffers_.size(); }
  SlotQueue& free_slots() { return free_; }
  SlotQueue& ready_slots() { return ready_; }
  void close() {
    free_.close();
    ready_.close();
  }

 private:
  std::vector<std::unique_ptr<std::byte, AlignedFree>> buffers_;
  SlotQueue free_, ready_;
};

}  // namespace nodeaudit::pipeline
