// The pieces of host.decode that are not the probe itself: which worker counts to measure, the
// worker group the stages run on, and one repetition of each stage on one worker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/host/jpeg_codec.hpp"
#include "kernels/host/synthetic_jpeg.hpp"
#include "kernels/host/train_transform.hpp"

namespace nodeaudit::host {

struct WorkerPlan {
  std::vector<int> counts;         // ascending, distinct, each in 1..cpus
  std::vector<std::string> notes;  // one per request that was capped
  std::string error;               // non-empty when the request makes no sense
};

// `requested` {0} means 1, 2, 4, ... below `cpus`, then `cpus`. A count above `cpus` is capped to
// `cpus` with a note: more workers than CPUs would measure time-slicing, not cores.
WorkerPlan plan_worker_counts(const std::vector<std::int64_t>& requested, int cpus);

// A group of workers that run one step together; the probe uses pinned threads (PinnedWorkers).
class Workers {
 public:
  virtual ~Workers() = default;
  virtual int size() const = 0;
  virtual void run(const std::function<void(int)>& step) = 0;
  // One line per worker that could not be pinned to its CPU (it then runs unpinned).
  virtual const std::vector<std::string>& pin_errors() const = 0;
};

std::unique_ptr<Workers> make_pinned_workers(int count);

enum class Stage { decode, augment, full };
const char* to_string(Stage stage);
inline constexpr Stage all_stages[] = {Stage::decode, Stage::augment, Stage::full};

// What one worker keeps between repetitions: its decoder, buffers and random stream.
struct WorkerState {
  WorkerState(int crop_size, std::uint64_t seed) : transform(crop_size, seed) {}
  JpegDecoder decoder;
  RgbImage decoded;
  TrainTransform transform;
  double checksum = 0;  // one output value per image, so no stage can be optimised away
  std::uint64_t failures = 0;
  std::string first_error;
};

// The images every stage sees: the JPEGs, and a few of them decoded for the augment-only stage.
struct StageInputs {
  const Corpus* corpus = nullptr;
  std::vector<RgbImage> decoded_pool;
};

// Decodes the first `count` images of the corpus for the augment-only stage.
bool decode_pool(const Corpus& corpus, int count, std::vector<RgbImage>& pool, std::string& error);

// One repetition on worker `worker` of `workers`: `images` images (the corpus in order from a
// per-worker offset, wrapping) through `stage`.
void run_stage(Stage stage, const StageInputs& inputs, WorkerState& state, int worker, int workers, int images);

}  // namespace nodeaudit::host
