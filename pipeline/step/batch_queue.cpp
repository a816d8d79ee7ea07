#include "pipeline/step/batch_queue.hpp"

#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace nodeaudit::pipeline {

void SlotQueue::push(std::size_t slot) {
  {
    std::lock_guard lock(mutex_);
    slots_.push_back(slot);
  }
  ready_.notify_one();
}

std::size_t SlotQueue::take() {
  const std::size_t slot = order_ == SlotOrder::fifo ? slots_.front() : slots_.back();
  if (order_ == SlotOrder::fifo)
    slots_.pop_front();
  else
    slots_.pop_back();
  return slot;
}

std::optional<std::size_t> SlotQueue::pop() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return closed_ || !slots_.empty(); });
  if (closed_) return std::nullopt;
  return take();
}

std::optional<std::size_t> SlotQueue::pop(const std::function<bool()>& give_up) {
  std::unique_lock lock(mutex_);
  while (!closed_ && slots_.empty()) {
    if (give_up()) return std::nullopt;
    ready_.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (closed_) return std::nullopt;
  return take();
}

std::optional<std::size_t> SlotQueue::try_pop() {
  std::lock_guard lock(mutex_);
  if (closed_ || slots_.empty()) return std::nullopt;
  return take();
}

void SlotQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

void AlignedFree::operator()(std::byte* p) const {
  std::free(p);
}

namespace {

// Batches of MiBs are written once per step by the page-cache copy; on 4 KiB pages every 4 KiB
// of a batch costs a TLB miss, so batches from 2 MiB up ask for transparent huge pages (THP in
// `madvise` mode honours this; `never` ignores it and nothing else changes).
std::unique_ptr<std::byte, AlignedFree> touched_pages(std::size_t bytes) {
  constexpr std::size_t huge_page = 2 << 20;
  const bool huge = bytes >= huge_page;
  if (huge) bytes = (bytes + huge_page - 1) / huge_page * huge_page;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(huge ? huge_page : 4096, bytes));
  if (!p) throw std::bad_alloc();
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a refusal leaves 4 KiB pages
  std::memset(p, 0, bytes);                    // touch the pages now, not inside the timed loop
  return std::unique_ptr<std::byte, AlignedFree>(p);
}

}  // namespace

BatchQueue::BatchQueue(std::size_t depth, std::size_t sample_area_bytes, std::size_t tensor_area_bytes)
    : sample_area_bytes_((sample_area_bytes + 4095) / 4096 * 4096), tensor_area_bytes_(tensor_area_bytes) {
  for (std::size_t i = 0; i < depth; ++i) {
    buffers_.push_back(touched_pages(sample_area_bytes_));
    if (tensor_area_bytes > 0) tensors_.push_back(touched_pages((tensor_area_bytes + 4095) / 4096 * 4096));
    free_.push(i);
  }
}

}  // namespace nodeaudit::pipeline
