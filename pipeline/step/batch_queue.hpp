// The prefetch queue between loader workers and the compute stage: `depth` batches that cycle
// free -> filled by a loader -> ready -> consumed by compute -> free. Each batch has a sample area
// (the files are read straight into it) and, when the loader decodes, a tensor area for the
// decoded samples. Buffers are page-aligned host memory, touched at construction so page faults
// stay out of the timed loop (on real GPUs the step device pins them, cudaHostRegister). close()
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

// A blocking queue of buffer slot indices; pop() returns nullopt once closed. FIFO keeps batches
// in the order they were filled; LIFO hands out the buffer freed last, which is still in the CPU
// caches, so a fast consumer cycles through a few warm buffers instead of every buffer in turn.
enum class SlotOrder { fifo, lifo };

class SlotQueue {
 public:
  explicit SlotQueue(SlotOrder order = SlotOrder::fifo) : order_(order) {}
  void push(std::size_t slot);
  std::optional<std::size_t> pop();
  // As pop(), but gives up (nullopt) when `give_up` turns true; polled every 50 ms while waiting.
  std::optional<std::size_t> pop(const std::function<bool()>& give_up);
  // Never waits: nullopt when nothing is queued (or closed).
  std::optional<std::size_t> try_pop();
  void close();

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::size_t take();  // with the lock held and a slot queued
  SlotOrder order_;
  std::deque<std::size_t> slots_;
  bool closed_ = false;
};

struct AlignedFree {
  void operator()(std::byte* p) const;
};

class BatchQueue {
 public:
  BatchQueue(std::size_t depth, std::size_t sample_area_bytes, std::size_t tensor_area_bytes = 0);
  std::byte* buffer(std::size_t slot) { return buffers_[slot].get(); }
  std::byte* tensors(std::size_t slot) { return tensors_.empty() ? nullptr : tensors_[slot].get(); }
  std::size_t sample_area_bytes() const { return sample_area_bytes_; }
  // The decoded tensors' bytes as asked (the allocation is rounded up to pages); 0 without decoding.
  std::size_t tensor_area_bytes() const { return tensor_area_bytes_; }
  std::size_t depth() const { return buffers_.size(); }
  SlotQueue& free_slots() { return free_; }
  SlotQueue& ready_slots() { return ready_; }
  void close() {
    free_.close();
    ready_.close();
  }

 private:
  std::vector<std::unique_ptr<std::byte, AlignedFree>> buffers_, tensors_;
  std::size_t sample_area_bytes_ = 0, tensor_area_bytes_ = 0;
  SlotQueue free_{SlotOrder::lifo}, ready_{SlotOrder::fifo};
};

}  // namespace nodeaudit::pipeline
