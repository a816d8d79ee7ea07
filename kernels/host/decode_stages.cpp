#include "kernels/host/decode_stages.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "kernels/host/thread_team.hpp"

namespace nodeaudit::host {
namespace {

class PinnedWorkers final : public Workers {
 public:
  explicit PinnedWorkers(int count) : team_(count) {}
  int size() const override { return team_.size(); }
  void run(const std::function<void(int)>& step) override { team_.run(step); }
  const std::vector<std::string>& pin_errors() const override { return team_.pin_errors(); }

 private:
  ThreadTeam team_;
};

}  // namespace

WorkerPlan plan_worker_counts(const std::vector<std::int64_t>& requested, int cpus) {
  WorkerPlan plan;
  std::set<int> counts;
  const bool automatic = requested.size() == 1 && requested[0] == 0;
  if (automatic) {
    for (int n = 1; n < cpus; n *= 2) counts.insert(n);
    counts.insert(cpus);
  }
  for (std::int64_t n : automatic ? std::vector<std::int64_t>{} : requested) {
    if (n <= 0) {
      plan.error = fmt::format("--workers {}: each count must be at least 1 (a lone 0 means 1, 2, 4, ... up to every CPU)", n);
      return plan;
    }
    if (n > cpus)
      plan.notes.push_back(fmt::format("--workers {} is more than the {} CPUs this process may use (sched_getaffinity); "
                                       "measured at {} workers instead, since extra threads would time-slice cores",
                                       n, cpus, cpus));
    counts.insert(static_cast<int>(std::min<std::int64_t>(n, cpus)));
  }
  plan.counts.assign(counts.begin(), counts.end());
  return plan;
}

std::unique_ptr<Workers> make_pinned_workers(int count) { return std::make_unique<PinnedWorkers>(count); }

const char* to_string(Stage stage) {
  switch (stage) {
    case Stage::decode: return "decode";
    case Stage::augment: return "augment";
    case Stage::full: return "full";
  }
  return "?";
}

bool decode_pool(const Corpus& corpus, int count, std::vector<RgbImage>& pool, std::string& error) {
  JpegDecoder decoder;
  pool.resize(static_cast<std::size_t>(std::min<std::size_t>(static_cast<std::size_t>(count), corpus.jpegs.size())));
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (!decoder.decode(corpus.jpegs[i], pool[i])) {
      error = fmt::format("image {}: {}", i, decoder.error());
      return false;
    }
  }
  return true;
}

void run_stage(Stage stage, const StageInputs& inputs, WorkerState& state, int worker, int workers, int images) {
  const auto& jpegs = inputs.corpus->jpegs;
  const std::size_t n = stage == Stage::augment ? inputs.decoded_pool.size() : jpegs.size();
  if (n == 0) return;
  // Workers start at spread-out offsets so they do not walk the same images in lock step.
  std::size_t index = static_cast<std::size_t>(worker) * n / static_cast<std::size_t>(workers);
  for (int i = 0; i < images; ++i, index = index + 1 == n ? 0 : index + 1) {
    if (stage == Stage::augment) {
      state.checksum += state.transform.apply(inputs.decoded_pool[index])[0];
      continue;
    }
    if (!state.decoder.decode(jpegs[index], state.decoded)) {
      if (state.failures++ == 0) state.first_error = fmt::format("image {}: {}", index, state.decoder.error());
      continue;
    }
    if (stage == Stage::full) state.checksum += state.transform.apply(state.decoded)[0];
    else state.checksum += state.decoded.pixels[0];
  }
}

}  // namespace nodeaudit::host
