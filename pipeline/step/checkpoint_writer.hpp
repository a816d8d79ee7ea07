// Checkpoints of pipeline.step, in one of three modes:
//   sync  — the compute stage writes the checkpoint and fdatasyncs it before the next step, as a
//           plain torch.save does; the whole write is a stall of the training step.
//   async — the compute stage hands the checkpoint to a writer thread and goes on, as
//           torch.distributed.checkpoint.async_save does; it stalls only when the previous
//           checkpoint is still being written when the next one is due. The device-to-host
//           snapshot copy that precedes an async save on a GPU is not emulated.
//   off   — no checkpoints.
// Either way the stall is the checkpoint stage's time, measured on the compute stage.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace nodeaudit::pipeline {

enum class CheckpointMode { sync, async, off };
const char* to_string(CheckpointMode mode);
std::optional<CheckpointMode> parse_checkpoint_mode(const std::string& text);

// Writes `bytes` to `path` and makes them durable; empty on success, else the failing call.
std::string write_checkpoint_file(const std::string& path, double bytes);

class CheckpointWriter {
 public:
  CheckpointWriter(CheckpointMode mode, std::string path);
  ~CheckpointWriter();  // waits for a checkpoint in progress
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Writes (sync) or starts (async) one checkpoint; returns the first error seen so far.
  std::string save(double bytes);
  // Waits for a checkpoint in progress; returns the first error seen.
  std::string finish();
  int written() const { return written_; }

 private:
  void writer_loop();

  CheckpointMode mode_;
  std::string path_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<double> pending_bytes_;
  bool busy_ = false, stopping_ = false;
  int written_ = 0;
  std::string error_;
  std::thread writer_;
};

}  // namespace nodeaudit::pipeline
