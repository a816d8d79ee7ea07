// ProbeContext: everything a probe body may use, passed explicitly (no global state).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/level.hpp"
#include "harness/core/measure.hpp"
#include "harness/core/metric.hpp"
#include "harness/core/param.hpp"
#include "harness/core/probe.hpp"
#include "harness/core/step_demand.hpp"

namespace nodeaudit {

// Run-wide choices that every probe may read.
struct RunSettings {
  Level level = Level::quick;
  std::optional<std::vector<int>> gpus;  // --gpus; empty optional = all GPUs
  std::string data_dir;                  // --data-dir; empty = none given
  // The workload of the probes that emulate a training step (core/step_demand.hpp); empty for
  // the others.
  std::optional<StepDemand> step_demand;
  std::optional<int> repetitions;        // --repetitions overrides min/max repetitions
  bool keep_data = false;                // --keep-data
  // The quick level's work is fixed and split over its rounds: each round gets 1/N of the level's
  // time budget, repetitions (--repetitions included), runtime and images (1: the whole of it, as at
  // standard and soak, where rounds add time). round_index says which share this round is.
  int rounds_sharing_budget = 1;
  int round_index = 0;  // 0-based, < rounds_sharing_budget where the rounds share the work

  nlohmann::json to_json() const;
  static RunSettings from_json(const nlohmann::json& j);
};

// The level's default repetition policy (quick: short budget, standard: longer, soak: long).
RepeatPolicy default_policy(Level level);

class ProbeContext {
 public:
  ProbeContext(ParamValues params, RunSettings settings, const std::atomic<bool>* cancel_flag,
               std::chrono::steady_clock::time_point deadline);

  const ParamValues& params() const { return params_; }
  const RunSettings& settings() const { return settings_; }
  Level level() const { return settings_.level; }

  // True once Ctrl-C arrived or the deadline is near; long loops poll it and return early.
  bool should_stop() const;
  bool cancelled() const;
  double seconds_left() const;

  // The level's policy, with --repetitions applied, and this round's share of both.
  RepeatPolicy policy() const;
  // This round's share of a count the level fixes for the whole run (repetitions, images, epochs'
  // samples): `whole` split as evenly as whole numbers allow, the first rounds taking the remainder,
  // never below `at_least`. The whole count when the rounds do not share the work.
  std::int64_t round_share(std::int64_t whole, std::int64_t at_least = 1) const;
  // Where this round's share of `whole` starts when the rounds take consecutive parts of it (image
  // indices): the sum of the earlier rounds' shares, so the rounds together cover 0..whole-1.
  std::int64_t round_share_start(std::int64_t whole) const;
  // This round's share of a duration (a time-based probe's --runtime).
  double round_share_s(double whole_s) const;
  Measurement repeat(const RepeatPolicy& policy, const std::function<Work()>& body) const;

  // Records a metric whose samples are the per-repetition rates of `m`.
  void add_rate(const std::string& name, RateKind kind, const Measurement& m, Labels labels = {});
  void add_metric(Metric metric);
  // A single figure (n = 1): knee_workers, usable_bytes, ...
  void add_value(const std::string& name, const std::string& unit, Better better, double value, Labels labels = {});
  void add_finding(Severity severity, std::string code, std::string message);
  // Structured facts that are not figures ("best_shape", "filesystem").
  nlohmann::json& info() { return info_; }

  const std::vector<Metric>& metrics() const { return metrics_; }
  const std::vector<Finding>& findings() const { return findings_; }
  const nlohmann::json& info() const { return info_; }

  // For a probe whose process may be ended from outside before its body returns (an MPI rank: when
  // a peer dies the launcher kills it): the caller's way to keep the figures measured so far. The
  // probe builds its entry as it stands on its own thread (`entry_so_far`, the result file's probe
  // entry with `if_ended_now` as status) and may hand a copy to `keeper()` from any thread, which
  // writes it where the finished entry would go. No keeper: nothing is kept before the end.
  using EntryKeeper = std::function<void(const nlohmann::json& entry)>;
  using EntryBuilder = std::function<nlohmann::json(const Outcome& if_ended_now)>;
  void set_partial_keeper(EntryKeeper keeper, EntryBuilder builder);
  const EntryKeeper& keeper() const { return keeper_; }
  nlohmann::json entry_so_far(const Outcome& if_ended_now) const;

 private:
  ParamValues params_;
  RunSettings settings_;
  const std::atomic<bool>* cancel_flag_;
  std::chrono::steady_clock::time_point deadline_;
  std::vector<Metric> metrics_;
  std::vector<Finding> findings_;
  nlohmann::json info_ = nlohmann::json::object();
  EntryKeeper keeper_;
  EntryBuilder builder_;
};

}  // namespace nodeaudit
