#include "pipeline/step/checkpoint_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace nodeaudit::pipeline {

const char* to_string(CheckpointMode mode) {
  switch (mode) {
    case CheckpointMode::sync: return "sync";
    case CheckpointMode::async: return "async";
    case CheckpointMode::off: return "off";
  }
  return "?";
}

std::optional<CheckpointMode> parse_checkpoint_mode(const std::string& text) {
  for (CheckpointMode mode : {CheckpointMode::sync, CheckpointMode::async, CheckpointMode::off})
    if (text == to_string(mode)) return mode;
  return std::nullopt;
}

std::string write_checkpoint_file(const std::string& path, double bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fmt::format("checkpoint {}: open: {}", path, std::strerror(errno));
  std::vector<std::byte> chunk(1 << 20, std::byte{0x5a});
  auto left = static_cast<std::uint64_t>(bytes);
  std::string error;
  while (left > 0 && error.empty()) {
    const std::size_t n = std::min<std::uint64_t>(left, chunk.size());
    const ssize_t w = write(fd, chunk.data(), n);
    if (w <= 0) error = fmt::format("checkpoint {}: write: {}", path, w < 0 ? std::strerror(errno) : "no progress");
    left -= w > 0 ? static_cast<std::uint64_t>(w) : 0;
  }
  if (error.empty() && fdatasync(fd) != 0)
    error = fmt::format("checkpoint {}: fdatasync: {}", path, std::strerror(errno));
  close(fd);
  return error;
}

CheckpointWriter::CheckpointWriter(CheckpointMode mode, std::string path) : mode_(mode), path_(std::move(path)) {
  if (mode_ == CheckpointMode::async) writer_ = std::thread([this] { writer_loop(); });
}

CheckpointWriter::~CheckpointWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void CheckpointWriter::writer_loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || pending_bytes_.has_value(); });
    if (!pending_bytes_) return;  // stopping with nothing queued
    const double bytes = *pending_bytes_;
    pending_bytes_.reset();
    busy_ = true;
    lock.unlock();
    const std::string error = write_checkpoint_file(path_, bytes);
    lock.lock();
    busy_ = false;
    if (error.empty())
      ++written_;
    else if (error_.empty())
      error_ = error;
    changed_.notify_all();
  }
}

std::string CheckpointWriter::save(double bytes) {
  if (mode_ == CheckpointMode::off) return "";
  if (mode_ == CheckpointMode::sync) {
    std::string error = write_checkpoint_file(path_, bytes);
    if (error.empty()) ++written_;
    return error;
  }
  std::unique_lock lock(mutex_);
  // One checkpoint in flight at a time: the next save waits for the previous (the stall).
  changed_.wait(lock, [&] { return !busy_ && !pending_bytes_.has_value(); });
  if (!error_.empty()) return error_;
  pending_bytes_ = bytes;
  changed_.notify_all();
  return "";
}

std::string CheckpointWriter::finish() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !busy_ && !pending_bytes_.has_value(); });
  return error_;
}

}  // namespace nodeaudit::pipeline
