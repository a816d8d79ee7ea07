// `learn --vary SETTING=V1,V2,.. [--repeats R]`: first a probe run finds the job's own value of the
// setting (and refuses a DataLoader setting on a job that makes no DataLoader, before anything is
// measured); then one warm-up run of the job, discarded (the first run pays for a cold page cache,
// compiled kernels and a cold interpreter); then R blocks, each running every value once in a fresh
// random order, so neither slow drift of the node nor a fixed position in the block favours a value.
// Each value's figures with their spread and the verdict against the job's own setting, by the rule
// of harness/core/change_test.hpp. A value whose run fails is reported failed with its exit code and
// last lines, the others are kept (exit 1). The best value's learned profile is written beside the
// result.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "harness/learn/learn_run.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/units.hpp"
#include "harness/learn/cpu_confinement.hpp"
#include "harness/learn/learn_document.hpp"
#include "harness/learn/learned_profile.hpp"
#include "harness/learn/optimize_or_upgrade.hpp"
#include "harness/learn/vary.hpp"
#include "harness/score/score.hpp"
#include "harness/session/exit_codes.hpp"

namespace nodeaudit::learn {

namespace {

namespace fs = std::filesystem;

double median(const std::vector<double>& v) { return v.empty() ? 0 : median_or_nan(v); }

// Each of the job's GPUs by its median NVML utilization over the window, then their mean: one figure
// per run, so the repeats give it a spread like the others.
std::optional<double> gpu_util_pct(const JobLoad& load) {
  std::vector<double> per_gpu;
  for (const auto& g : load.gpus)
    if (!g.util_pct.empty()) per_gpu.push_back(median_or_nan(g.util_pct));
  if (per_gpu.empty()) return std::nullopt;
  double sum = 0;
  for (double u : per_gpu) sum += u;
  return sum / static_cast<double>(per_gpu.size());
}

std::optional<double> gpu_peak_bytes(const JobRun& run) {
  std::optional<double> peak;
  for (const auto& rank : run.records.ranks) {
    const auto gpu = rank.value("gpu", nlohmann::json());
    if (gpu.is_object() && gpu.value("peak_allocated_bytes", 0.0) > 0) peak = std::max(peak.value_or(0), gpu["peak_allocated_bytes"].get<double>());
  }
  return peak;
}

// The command that reproduces one run as learn measured it: plain `nodeaudit learn` with the same
// window, and the setting given the way --vary gives it (NODEAUDIT_LEARN_OVERRIDES, which the
// module reads in every process of the job, the environment variable itself, or the data
// directory's place in the command).
std::string reproduce_command(const ValidLearn& v, const std::string& value, const std::vector<std::string>& command) {
  std::vector<std::string> words;
  for (const auto& [name, text] : vary_environment(*v.vary, value)) words.push_back(name + "=" + text);
  for (const std::string& w : {std::string("nodeaudit"), std::string("learn"), std::string("--warmup"), std::to_string(v.warmup), std::string("--steps"),
                               std::to_string(v.steps), std::string("--timeout"), v.timeout_text, std::string("--")})
    words.push_back(w);
  std::string text = shell_quoted(words) + " " + shell_quoted(command);
  // NAME=VALUE before the command is an assignment only when NAME is not quoted.
  if (const auto eq = words.front().find('='); eq != std::string::npos && text.front() == '\'')
    text = words.front().substr(0, eq) + "='" + text.substr(eq + 2);
  return text;
}

VaryRun to_vary_run(const OneRun& one, const ValidLearn& v, const std::string& value, int repeat, const std::vector<std::string>& command) {
  VaryRun r;
  r.value = value;
  r.repeat = repeat;
  const auto [status, reason] = learn_outcome(one.run, one.job, v);
  r.ok = status == "ok";
  r.failure = reason;
  r.step_time_s = one.job.timing.step_time_s;
  r.samples_per_s = one.job.timing.samples_per_s;
  r.samples_per_step = one.job.timing.samples_per_step;
  r.data_wait_share = one.job.timing.shares.data_wait;
  const JobLoad load = job_load(one.run);
  if (!load.cpu_cores.empty()) r.cpu_cores = median(load.cpu_cores);
  r.gpu_peak_bytes = gpu_peak_bytes(one.run);
  r.gpu_util_pct = gpu_util_pct(load);
  if (one.job.complete) r.target_samples = one.job.fields.target_samples.value, r.target_samples_how = one.job.fields.target_samples.how;
  r.command = reproduce_command(v, value, command);
  return r;
}


struct VaryOrder {
  std::uint32_t seed = 0;
  std::vector<std::vector<std::string>> blocks;  // one per repeat: every value once
};

// A randomized block order: each repeat runs every value once, shuffled afresh. The seed is recorded
// in the result, so the order can be told and repeated.
VaryOrder random_order(const std::vector<std::string>& values, int repeats) {
  VaryOrder order;
  order.seed = std::random_device{}();
  std::mt19937 engine(order.seed);
  for (int r = 0; r < repeats; ++r) {
    std::vector<std::string> block = values;
    std::shuffle(block.begin(), block.end(), engine);
    order.blocks.push_back(std::move(block));
  }
  return order;
}

// One run of the job at the baseline value whose figures are thrown away: it warms the page cache,
// the compiler caches and the interpreter's files for every value alike. True when interrupted.
bool warm_up(const LearnRequest& o, const ValidLearn& v, const std::string& baseline, const DataDirCopy* copy) {
  std::fprintf(stderr, "learn --vary: %s=%s, warm-up run (not counted)\n", v.vary->name.c_str(), baseline.c_str());
  LearnRequest at_value = o;
  if (copy) at_value.command = copy->command_at(baseline);
  const OneRun one = run_learn_once(at_value, v, vary_environment(*v.vary, baseline));
  return !one.job.complete && one.run.ended_by == "interrupted";
}

}  // namespace

std::string optimize_or_upgrade_line(const OneRun& one, const ValidLearn& v, const nlohmann::json& doc, const std::string& profile_toml) {
  nlohmann::json assessment;
  const nlohmann::json gpus = doc.value("env", nlohmann::json::object()).value("gpus", nlohmann::json::array());
  if (!one.job.gpu && !v.target_gpus.empty()) {
    try {
      const score::TargetGpus target = score::parse_target_gpus(v.target_gpus);
      const score::Profile profile = score::parse_profile(profile_toml, v.profile_path);
      assessment = score::assess(profile, doc, {}, &target);
    } catch (const UsageError& e) {
      return std::string("optimize or upgrade: not judged (") + e.what() + ")";
    }
  }
  const UpgradeInputs in = upgrade_inputs(one.job, gpu_peak_bytes(one.run), gpus, assessment.is_null() ? nullptr : &assessment,
                                                        v.target_gpus, gpu_util_pct(job_load(one.run)));
  return optimize_or_upgrade(in);
}

namespace {

// --data-dir-copy: the job's data directory copied under DIR before the first run, said on stderr
// with its size and how long it took. Throws UsageError (what the copy wrote is removed).
std::unique_ptr<DataDirCopy> copy_data_dir(const LearnRequest& o, const ValidLearn& v) {
  auto copy = std::make_unique<DataDirCopy>(o.command, v.data_dir_copy);
  const auto copy_start = std::chrono::steady_clock::now();
  std::fprintf(stderr, "learn --data-dir-copy: copying %s (%.3g GB) to %s\n", copy->original().c_str(), copy->bytes() / 1e9, copy->copy().c_str());
  try {
    copy->make();
  } catch (const fs::filesystem_error& e) {
    throw UsageError("--data-dir-copy " + v.data_dir_copy, std::string("the copy failed: ") + e.what() + "; what it wrote is removed");
  }
  std::fprintf(stderr, "learn --data-dir-copy: copied in %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - copy_start).count());
  return copy;
}

struct VaryRuns {
  std::vector<VaryRun> runs;
  std::map<std::string, OneRun> complete_run;  // per value, its last complete run (for the profile)
  bool interrupted = false;
};

// The measured runs, block after block in `order`, each value's command at its place (the data
// copy, the CPU set); an interrupted run ends them.
void run_blocks(const LearnRequest& o, const ValidLearn& v, const VaryOrder& order, const DataDirCopy* copy, const CpuConfinement* confinement,
                VaryRuns& measured) {
  const VarySetting& setting = *v.vary;
  for (int repeat = 1; repeat <= v.repeats && !measured.interrupted; ++repeat) {
    for (const auto& value : order.blocks[repeat - 1]) {
      std::fprintf(stderr, "learn --vary: %s=%s, repeat %d of %d\n", setting.name.c_str(), value.c_str(), repeat, v.repeats);
      LearnRequest at_value = o;
      if (copy) at_value.command = copy->command_at(value);
      if (confinement) at_value.command = confinement->command_at(value, o.command);
      OneRun one = run_learn_once(at_value, v, vary_environment(setting, value));
      measured.runs.push_back(to_vary_run(one, v, value, repeat, at_value.command));
      if (one.job.complete) measured.complete_run[value] = std::move(one);
      else if (one.run.ended_by == "interrupted") measured.interrupted = true;
      if (measured.interrupted) break;
    }
  }
}

// The best value's learned profile, written beside the result, and its optimize-or-upgrade line.
void write_best_profile(VaryReport& report, const VaryRuns& measured, const ValidLearn& v, const nlohmann::json& doc) {
  if (!report.best || !measured.complete_run.count(*report.best)) return;
  const OneRun& best = measured.complete_run.at(*report.best);
  const std::string toml = learned_profile_toml(best.job, v.name, find_value(report, *report.best)->command);
  check_learned_profile(toml, v.profile_path);
  write_file_atomic(v.profile_path, toml, true);
  report.best_profile_path = v.profile_path;
  report.advice = optimize_or_upgrade_line(best, v, doc, toml);
}

}  // namespace

int learn_vary_session(const LearnRequest& o, const ValidLearn& v, const session::ResultFile& result, nlohmann::json doc) {
  const VarySetting& setting = *v.vary;
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CpuConfinement> confinement;  // made before anything runs: a bad value costs nothing
  if (setting.cpus()) confinement = std::make_unique<CpuConfinement>(setting.values);
  const VaryProbe probe = probe_own_setting(o, v);
  if (probe.interrupted) {
    result.discard();  // the result file claimed for this run holds nothing measured
    std::cerr << "nodeaudit: learn --vary: interrupted during the probe run; nothing was measured\n";
    return session::exit_interrupted;
  }
  const bool own_listed = probe.own_value && std::count(setting.values.begin(), setting.values.end(), *probe.own_value);
  const std::string baseline = own_listed ? *probe.own_value : setting.values.front();
  const std::unique_ptr<DataDirCopy> copy = setting.data_dir() ? copy_data_dir(o, v) : nullptr;
  VaryRuns measured;
  measured.interrupted = warm_up(o, v, baseline, copy.get());
  const VaryOrder order = random_order(setting.values, v.repeats);
  run_blocks(o, v, order, copy.get(), confinement.get(), measured);
  VaryReport report = summarize_vary(setting, v.repeats, measured.runs, baseline);
  report.own_value = probe.own_value;
  report.probe_s = probe.wall_s;
  report.price_per_hour = v.price_per_hour;
  write_best_profile(report, measured, v, doc);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json entry = vary_probe_entry(report, measured.runs, o.command, wall_s);
  entry["info"]["order_seed"] = order.seed;
  entry["info"]["warm_up"] = {{"value", baseline}, {"discarded", true}};
  std::string cpus_text;
  if (confinement) {
    cpus_text = "cpus confined by " + confinement->how() + "\n" + cpus_answer(report, measured.complete_run, v, doc);
    entry["info"]["confinement"] = confinement->how();
    entry["info"]["cpus_answer"] = cpus_text;
  }
  doc["probes"] = nlohmann::json::array({entry});
  doc["finished_at"] = utc_now_iso8601();
  result.write(doc);
  if (!v.md_path.empty()) write_file_atomic(v.md_path, render_vary_markdown(report, v.command_text), true);
  if (!v.html_path.empty()) write_file_atomic(v.html_path, render_vary_html(report, v.command_text), true);
  std::cout << render_vary(report, v.command_text) << cpus_text
            << (probe.wall_s > 0 ? fmt::format("probe run to find the job's own setting: {:.1f} s\n", probe.wall_s) : "")
            << (copy ? "the copy " + copy->copy() + " is removed now; its command above needs it made again\n" : "")
            << "result written to " << result.path() << "\n";
  if (measured.interrupted) return session::exit_interrupted;
  const bool failed = std::any_of(measured.runs.begin(), measured.runs.end(), [](const VaryRun& r) { return !r.ok; });
  if (failed) std::cerr << "nodeaudit: learn --vary: a run failed for at least one value (listed above); the others are kept\n";
  return failed ? session::exit_fail : session::exit_ok;
}

}  // namespace nodeaudit::learn
