// `learn --vary SETTING=V1,V2,.. [--repeats R]`: the job run once per value, values interleaved
// (V1 V2 .. V1 V2 ..) R times, so slow drift of the node (page cache, clocks, other load) falls on
// every value alike; each value's figures with their spread and the verdict against the first value.
// A value whose run fails is reported failed with its exit code and last lines, the others are kept
// (exit 1). A DataLoader setting on a job that makes no DataLoader is refused after the first run.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "../errors.hpp"
#include "../learn/learn_document.hpp"
#include "../learn/vary.hpp"
#include "../result.hpp"
#include "commands.hpp"
#include "learn_run.hpp"

namespace nodeaudit::cli {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

bool job_makes_a_dataloader(const learn::JobRun& run) {
  for (const auto& rank : run.records.ranks)
    if (!rank.value("dataloaders", nlohmann::json::array()).empty()) return true;
  return false;
}

learn::VaryRun to_vary_run(const OneRun& one, const ValidLearn& v, const std::string& value, int repeat) {
  learn::VaryRun r;
  r.value = value;
  r.repeat = repeat;
  const auto [status, reason] = learn_outcome(one.run, one.job, v);
  r.ok = status == "ok";
  r.failure = reason;
  r.step_time_s = one.job.timing.step_time_s;
  r.samples_per_s = one.job.timing.samples_per_s;
  r.data_wait_share = one.job.timing.shares.data_wait;
  const learn::JobLoad load = learn::job_load(one.run);
  if (!load.cpu_cores.empty()) r.cpu_cores = median(load.cpu_cores);
  return r;
}

}  // namespace

int execute_learn_vary(const LearnOptions& o, const ValidLearn& v, const std::string& out_path, nlohmann::json doc) {
  const learn::VarySetting& setting = *v.vary;
  std::vector<learn::VaryRun> runs;
  const auto start = std::chrono::steady_clock::now();
  bool interrupted = false;
  for (int repeat = 1; repeat <= v.repeats && !interrupted; ++repeat) {
    for (const auto& value : setting.values) {
      std::fprintf(stderr, "learn --vary: %s=%s, repeat %d of %d\n", setting.name.c_str(), value.c_str(), repeat, v.repeats);
      const OneRun one = run_learn_once(o, v, learn::vary_environment(setting, value));
      if (setting.needs_dataloader() && one.job.steps_done > 0 && !job_makes_a_dataloader(one.run))
        throw UsageError("--vary " + setting.name, "the job makes no torch DataLoader, so its " + setting.name +
                                                       " cannot be varied; env:NAME can (e.g. env:OMP_NUM_THREADS=1,4)");
      runs.push_back(to_vary_run(one, v, value, repeat));
      if (one.run.ended_by == "interrupted") {
        interrupted = true;
        break;
      }
    }
  }
  const learn::VaryReport report = learn::summarize_vary(setting, v.repeats, runs);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  doc["probes"] = nlohmann::json::array({learn::vary_probe_entry(report, runs, o.command, wall_s)});
  doc["finished_at"] = utc_now_iso8601();
  write_file_atomic(out_path, doc.dump(1) + "\n", false);
  if (!v.md_path.empty()) write_file_atomic(v.md_path, learn::render_vary_markdown(report, v.command_text), true);
  std::cout << learn::render_vary(report, v.command_text) << "result written to " << out_path << "\n";
  if (interrupted) return exit_interrupted;
  const bool failed = std::any_of(runs.begin(), runs.end(), [](const learn::VaryRun& r) { return !r.ok; });
  if (failed) std::cerr << "nodeaudit: learn --vary: a run failed for at least one value (listed above); the others are kept\n";
  return failed ? exit_fail : exit_ok;
}

}  // namespace nodeaudit::cli
