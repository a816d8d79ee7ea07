// One run of the user's job as learn measures it: the job started with learn's module injected
// (its records folder, the step window in the environment), held until it ends or is ended, and
// its records turned into the learned job. Bad input the job itself shows before its first step
// (no such command, no torch) is refused as bad input; any other end is the run's outcome, said as
// a status and a reason.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/errors.hpp"
#include "harness/core/units.hpp"
#include "harness/learn/learn_module.hpp"
#include "harness/learn/learn_run.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::learn {
namespace {

constexpr int counted_steps = learn_counted_steps;

std::vector<std::pair<std::string, double>> category_efficiencies() {
  std::map<std::string, std::vector<double>> by_category;
  for (const auto& name : score::shipped_profile_names()) {
    const score::Profile p = score::load_profile(name);
    by_category[score::to_string(p.category)].push_back(p.training.model_efficiency);
  }
  std::vector<std::pair<std::string, double>> out;
  for (auto& [category, values] : by_category) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    out.emplace_back(category, n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2);
  }
  return out;
}

std::string quoted_lines(const std::vector<std::string>& lines, std::size_t count) {
  std::vector<std::string> last(lines.end() - static_cast<std::ptrdiff_t>(std::min(count, lines.size())), lines.end());
  return last.empty() ? "(it printed nothing)" : "its last lines: " + fmt::format("{}", fmt::join(last, " | "));
}

std::string how_it_ended(const JobRun& run) {
  if (run.signal) return fmt::format("was killed by signal {}", run.signal);
  return fmt::format("exited with code {}", run.exit_code);
}

// Bad input the job itself shows before its first step: exit 2 with no result left behind.
void refuse_failed_start(const JobRun& run, const ValidLearn& v) {
  const std::string what = "learn -- " + v.command_text;
  if (!run.start_error.empty()) throw UsageError(what, run.start_error + "; give a command on PATH or a path to an executable");
  if (!run.records.ranks.empty() || run.ended_by != "exited") return;
  if (!run.records.pythons_without_torch.empty())
    throw UsageError(what, fmt::format("the job's Python {} has no torch (import torch fails there); run the job with the Python of its training environment",
                                       run.records.pythons_without_torch.front()));
  if ((run.exit_code != 0 || run.signal) && !v.vary)  // under --vary, a value the job fails on is that value's result
    throw UsageError(what, fmt::format("the job {} before its first optimizer step; {}", how_it_ended(run), quoted_lines(run.last_lines, 3)));
}

}  // namespace

OneRun run_learn_once(const LearnRequest& o, const ValidLearn& v, const std::map<std::string, std::string>& extra_env) {
  JobFolder folder(v.claimed_out, job_end_waits(v));
  JobSpec spec{o.command, {}, folder.module_dir(), folder.records_dir(), v.warmup + v.steps + counted_steps, v.warmup, v.steps, v.timeout_s, v.grace_s};
  spec.waits = job_end_waits(v);
  spec.env = {{"NODEAUDIT_LEARN_DIR", folder.records_dir()}, {"NODEAUDIT_LEARN_WARMUP", std::to_string(v.warmup)},
              {"NODEAUDIT_LEARN_STEPS", std::to_string(v.steps)}, {"NODEAUDIT_LEARN_FLOP_STEPS", std::to_string(counted_steps)}};
  for (const auto& [key, value] : extra_env) spec.env[key] = value;
  std::fprintf(stderr, "learn: running `%s` for %d optimizer steps (%d warm-up, %d measured, %d counted for FLOPs), at most %s; its output follows\n",
               v.command_text.c_str(), spec.window_steps, v.warmup, v.steps, counted_steps, format_duration(v.timeout_s).c_str());
  const std::atomic<bool>& interrupt = session::install_interrupt_handler();
  OneRun one;
  one.run = run_job(spec, folder.guard(), [&] { return interrupt.load(); });
  if (!one.run.tree_end.signals.empty()) std::fprintf(stderr, "learn: %s\n", one.run.end_description.c_str());
  refuse_failed_start(one.run, v);
  one.job = learn_from_records(one.run.records, {v.warmup, v.steps, counted_steps, category_efficiencies(), v.gemm_tflops, o.result});
  return one;
}

std::pair<std::string, std::string> learn_outcome(const JobRun& run, const LearnedJob& job, const ValidLearn& v) {
  const bool stopped = run.ended_by != "exited" && !run.tree_end.signals.empty();
  if (job.complete && !stopped) return {"ok", ""};
  if (job.complete) {
    // Every step was measured, but the job's own end (its finally and atexit code) was cut.
    const std::string cut = "all steps were measured, but " + run.end_description;
    if (run.ended_by == "interrupted") return {"interrupted", cut};
    if (run.ended_by == "timeout") return {"timeout", fmt::format("the deadline (--timeout {}) passed: {}", v.timeout_text, cut)};
    return {"failed", cut};
  }
  const std::string progress = job.steps_done == 0 ? "before its first optimizer step"
                                                   : fmt::format("on step {} of {} ({} finished)", job.steps_done + 1, job.steps_needed, job.steps_done);
  if (run.ended_by == "interrupted") return {"interrupted", "interrupted by signal " + progress + "; the job was stopped: " + run.signals_sent};
  if (run.ended_by == "timeout")
    return {"timeout", fmt::format("the deadline (--timeout {}) passed {}; the job was stopped: {}", v.timeout_text, progress, run.signals_sent)};
  if (job.steps_done == 0)
    return {"failed", fmt::format("the job {} without taking an optimizer step: learn needs a training loop that calls optimizer.step(); {}", how_it_ended(run),
                                  quoted_lines(run.last_lines, 3))};
  return {"failed", fmt::format("the job {} {}; {}", how_it_ended(run), progress, quoted_lines(run.last_lines, 3))};
}

}  // namespace nodeaudit::learn
