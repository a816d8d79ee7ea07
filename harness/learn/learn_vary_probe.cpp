// `learn --vary`'s probe run, before any measured run: the job started as it is (no setting
// changed), with NODEAUDIT_LEARN_PROBE=1, so the injected module ends it (SystemExit(0)) as soon as it
// makes its first DataLoader, or after its first optimizer step when it made none before. It costs
// the job's start-up (imports, data set and model construction), no training step when the job makes
// its DataLoader first. What it tells: whether the job makes a DataLoader at all, the job's own value
// of the setting (the baseline), and whether the DataLoader takes batch_size (not a batch_sampler).
// env:NAME needs no probe: the job's own value is this environment's.
#include <sched.h>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "harness/learn/learn_run.hpp"
#include "harness/core/errors.hpp"
#include "harness/learn/learn_module.hpp"

namespace nodeaudit::learn {

namespace {

std::string setting_text(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<long>());
  if (value.is_null()) return "none";
  return value.dump();
}

}  // namespace

VaryProbe probe_own_setting(const LearnRequest& o, const ValidLearn& v) {
  const VarySetting& setting = *v.vary;
  VaryProbe probe;
  if (setting.data_dir()) {
    probe.own_value = setting.values.front();
    return probe;
  }
  if (!setting.env_name.empty()) {
    if (const char* own = std::getenv(setting.env_name.c_str())) probe.own_value = own;
    return probe;
  }
  if (setting.cpus()) {  // unconfined, the job has every CPU learn may use
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) probe.own_value = std::to_string(CPU_COUNT(&set));
    return probe;
  }
  JobFolder folder;
  JobSpec spec{o.command, {}, folder.module_dir(), folder.records_dir(), 1, 0, 1, v.timeout_s, 10};
  spec.env = {{"NODEAUDIT_LEARN_DIR", folder.records_dir()}, {"NODEAUDIT_LEARN_WARMUP", "0"}, {"NODEAUDIT_LEARN_STEPS", "1"},
              {"NODEAUDIT_LEARN_FLOP_STEPS", "0"}, {"NODEAUDIT_LEARN_PROBE", "1"}};
  std::fprintf(stderr, "learn --vary: a probe run of `%s` to its first DataLoader, to see its own %s; its output follows\n",
               v.command_text.c_str(), setting.name.c_str());
  const std::atomic<bool>& interrupt = session::install_interrupt_handler();
  const JobRun run = run_job(spec, folder.guard(), [&] { return interrupt.load(); });
  probe.wall_s = run.wall_s;
  probe.interrupted = run.ended_by == "interrupted";
  if (probe.interrupted) return probe;
  const std::string what = "learn -- " + v.command_text;
  if (!run.start_error.empty()) throw UsageError(what, run.start_error + "; give a command on PATH or a path to an executable");
  if (!run.records.pythons_without_torch.empty())
    throw UsageError(what, fmt::format("the job's Python {} has no torch (import torch fails there); run the job with the Python of its training environment",
                                       run.records.pythons_without_torch.front()));
  nlohmann::json loader;
  for (const auto& rank : run.records.ranks)
    for (const auto& made : rank.value("dataloaders", nlohmann::json::array())) loader = made;
  if (loader.is_null()) {
    if (run.records.ranks.empty()) {
      std::string last;
      for (const auto& line : run.last_lines) last += (last.empty() ? "" : " | ") + line;
      const std::string ended = run.ended_by == "timeout" ? "passed the deadline (--timeout " + v.timeout_text + ")"
                                : run.signal           ? fmt::format("was killed by signal {}", run.signal)
                                                       : fmt::format("exited with code {}", run.exit_code);
      throw UsageError(what, fmt::format("the job {} before making a DataLoader or taking an optimizer step; its last lines: {}", ended,
                                         last.empty() ? "(none)" : last));
    }
    throw UsageError("--vary " + setting.name, "the job makes no torch DataLoader (none before its first optimizer step), so its " + setting.name +
                                                   " cannot be varied; env:NAME can (e.g. env:OMP_NUM_THREADS=1,4)");
  }
  if (setting.name == "batch_size" && loader.value("batch_size", nlohmann::json()).is_null())
    throw UsageError("--vary batch_size", "the job's DataLoader takes a batch_sampler, not batch_size, so batch_size cannot be varied there");
  probe.own_value = setting_text(loader.value(setting.name, nlohmann::json()));
  return probe;
}

}  // namespace nodeaudit::learn
