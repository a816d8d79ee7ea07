#include "harness/core/context.hpp"

#include <algorithm>

#include "harness/core/result.hpp"

namespace nodeaudit {

nlohmann::json RunSettings::to_json() const {
  nlohmann::json j;
  j["level"] = to_string(level);
  j["gpus"] = gpus ? nlohmann::json(*gpus) : nlohmann::json(nullptr);
  j["data_dir"] = data_dir;
  j["repetitions"] = repetitions ? nlohmann::json(*repetitions) : nlohmann::json(nullptr);
  j["keep_data"] = keep_data;
  j["rounds_sharing_budget"] = rounds_sharing_budget;
  j["round_index"] = round_index;
  if (step_demand) j["step_demand"] = step_demand->to_json();
  return j;
}

RunSettings RunSettings::from_json(const nlohmann::json& j) {
  RunSettings s;
  s.level = parse_level(j.at("level").get<std::string>());
  if (!j.at("gpus").is_null()) s.gpus = j.at("gpus").get<std::vector<int>>();
  s.data_dir = j.at("data_dir").get<std::string>();
  if (!j.at("repetitions").is_null()) s.repetitions = j.at("repetitions").get<int>();
  s.keep_data = j.at("keep_data").get<bool>();
  s.rounds_sharing_budget = std::max(1, j.value("rounds_sharing_budget", 1));
  s.round_index = std::clamp(j.value("round_index", 0), 0, s.rounds_sharing_budget - 1);
  if (j.contains("step_demand")) s.step_demand = StepDemand::from_json(j.at("step_demand"));
  return s;
}

RepeatPolicy default_policy(Level level) {
  RepeatPolicy p;
  switch (level) {
    case Level::quick:
      p.warmup = 1, p.min_repetitions = 5, p.budget_s = 1.0;
      break;
    case Level::standard:
      p.warmup = 2, p.min_repetitions = 10, p.budget_s = 5.0;
      break;
    case Level::soak:
      p.warmup = 3, p.min_repetitions = 30, p.budget_s = 60.0, p.max_repetitions = 100000;
      break;
  }
  return p;
}

ProbeContext::ProbeContext(ParamValues params, RunSettings settings, const std::atomic<bool>* cancel_flag,
                           std::chrono::steady_clock::time_point deadline)
    : params_(std::move(params)), settings_(std::move(settings)), cancel_flag_(cancel_flag), deadline_(deadline) {}

void ProbeContext::set_partial_keeper(EntryKeeper keeper, EntryBuilder builder) {
  keeper_ = std::move(keeper);
  builder_ = std::move(builder);
}

nlohmann::json ProbeContext::entry_so_far(const Outcome& if_ended_now) const {
  if (builder_) return builder_(if_ended_now);
  return probe_entry({.outcome = if_ended_now,
                      .params = params_.to_json(),
                      .metrics = metrics_,
                      .findings = findings_,
                      .info = info_});
}

bool ProbeContext::cancelled() const { return cancel_flag_ != nullptr && cancel_flag_->load(); }

double ProbeContext::seconds_left() const {
  return std::chrono::duration<double>(deadline_ - std::chrono::steady_clock::now()).count();
}

// Stop a little before the hard deadline so the probe can still write what it measured.
bool ProbeContext::should_stop() const { return cancelled() || seconds_left() < 2.0; }

RepeatPolicy ProbeContext::policy() const {
  RepeatPolicy p = default_policy(settings_.level);
  // Each round its share of the budget and of the timed repetitions (5 at the quick level: 3 + 2
  // over two rounds), at least 2 so a round's median is not one repetition; each round still warms
  // up, since it is a process of its own. --repetitions is split the same way (at least 1 a round).
  p.budget_s = round_share_s(p.budget_s);
  p.min_repetitions = static_cast<int>(round_share(p.min_repetitions, 2));
  if (settings_.repetitions) {
    p.min_repetitions = static_cast<int>(round_share(*settings_.repetitions, 1));
    p.max_repetitions = p.min_repetitions;
  }
  return p;
}

std::int64_t ProbeContext::round_share(std::int64_t whole, std::int64_t at_least) const {
  const std::int64_t rounds = std::max(1, settings_.rounds_sharing_budget);
  const std::int64_t index = std::clamp<std::int64_t>(settings_.round_index, 0, rounds - 1);
  const std::int64_t share = whole / rounds + (index < whole % rounds ? 1 : 0);
  return std::max(at_least, share);
}

std::int64_t ProbeContext::round_share_start(std::int64_t whole) const {
  const std::int64_t rounds = std::max(1, settings_.rounds_sharing_budget);
  const std::int64_t index = std::clamp<std::int64_t>(settings_.round_index, 0, rounds - 1);
  const std::int64_t start = index * (whole / rounds) + std::min(index, whole % rounds);
  return std::clamp<std::int64_t>(start, 0, std::max<std::int64_t>(0, whole - 1));
}

double ProbeContext::round_share_s(double whole_s) const { return whole_s / std::max(1, settings_.rounds_sharing_budget); }

Measurement ProbeContext::repeat(const RepeatPolicy& policy, const std::function<Work()>& body) const {
  return run_repetitions(policy, body, [this] { return should_stop(); });
}

void ProbeContext::add_rate(const std::string& name, RateKind kind, const Measurement& m, Labels labels) {
  add_metric(Metric{name, rate_unit(kind), Better::higher, std::move(labels), rate_samples(m, kind)});
}

void ProbeContext::add_metric(Metric metric) {
  if (metric.samples.empty()) return;  // nothing measured, nothing printed
  metrics_.push_back(std::move(metric));
}

void ProbeContext::add_value(const std::string& name, const std::string& metric_unit, Better better, double value,
                             Labels labels) {
  add_metric(Metric{name, metric_unit, better, std::move(labels), {value}});
}

void ProbeContext::add_finding(Severity severity, std::string code, std::string message) {
  findings_.push_back(Finding{severity, std::move(code), std::move(message)});
}

}  // namespace nodeaudit
