// The watch's walk: the request checked before anything is sampled, the result file claimed through
// the session's writer, the series collected (rewritten into the result every minute, and at the
// end), then the diagnosis printed.
#include "harness/watch/watch_session.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/core/units.hpp"
#include "harness/node/env.hpp"
#include "harness/node/nvml.hpp"
#include "harness/session/exit_codes.hpp"
#include "harness/session/result_file.hpp"
#include "harness/session/run_options.hpp"
#include "harness/watch/classify.hpp"
#include "harness/watch/process_stats.hpp"
#include "harness/watch/sampler.hpp"
#include "harness/watch/watch_document.hpp"

namespace nodeaudit::watch {
namespace {

constexpr double max_duration_s = 30 * 24 * 3600.0;
constexpr double min_interval_s = 0.1;  // NVML refreshes utilization every 1/6 s to 1 s
constexpr double max_samples = 200000;  // about 2 days at 1 s; the whole series is kept in memory
constexpr double rewrite_every_s = 60;

double parse_option_duration(const std::string& option, const std::string& text) {
  try {
    return parse_duration_s(text);
  } catch (const UsageError& e) {
    throw UsageError(option + " " + text, std::string(e.what()));
  }
}

struct ValidWatch {
  double duration_s = 0, interval_s = 0;
  std::optional<int> pid;
};

ValidWatch validate(const WatchRequest& o) {
  ValidWatch v;
  v.duration_s = parse_option_duration("--duration", o.duration);
  v.interval_s = parse_option_duration("--interval", o.interval);
  if (!(v.duration_s > 0) || v.duration_s > max_duration_s)
    throw UsageError("--duration " + o.duration, "must be more than 0 and at most 30 days, e.g. 30m");
  // A --duration shorter than the default interval is the duration's fault: the user gave no --interval.
  if (!o.interval_given && v.interval_s > v.duration_s)
    throw UsageError("--duration " + o.duration, fmt::format("is shorter than the time between samples (--interval {} by default); "
                                                             "give a --duration of at least {}, or a shorter --interval (at least 100ms)",
                                                             o.interval, o.interval));
  if (!(v.interval_s >= min_interval_s) || v.interval_s > v.duration_s)
    throw UsageError("--interval " + o.interval, fmt::format("must be at least 100ms and no longer than --duration ({})", o.duration));
  if (v.duration_s / v.interval_s > max_samples)
    throw UsageError(fmt::format("--duration {} --interval {}", o.duration, o.interval),
                     fmt::format("would keep {:.0f} samples, at most {:.0f}; use a longer --interval", v.duration_s / v.interval_s, max_samples));
  if (!o.pid.empty()) {
    const int pid = session::parse_whole_number(o.pid).value_or(0);
    if (pid <= 0) throw UsageError("--pid " + o.pid, "expected a process id (a whole number above 0)");
    if (!process_exists(pid)) throw UsageError("--pid " + o.pid, "no such process (or /proc/" + o.pid + "/stat is not readable)");
    v.pid = pid;
  }
  return v;
}

void write_result(nlohmann::json& doc, const session::ResultFile& result, const WatchSeries& series, const WatchRun& run) {
  const Diagnosis diagnosis = diagnose(series);
  doc["probes"] = nlohmann::json::array({watch_probe_entry(series, diagnosis, run)});
  result.write(doc);
}

}  // namespace

int watch_session(const WatchRequest& o) {
  const ValidWatch v = validate(o);
  const session::OutPath out = session::resolve_out_path(o.out, "results", host_name());
  Nvml nvml;
  nlohmann::json doc = new_result_document("quick", "", o.argv, collect_env("", nvml));
  const session::ResultFile result(out, doc, 1);  // later writes replace it

  WatchSampler sampler(&nvml, v.pid);
  WatchSeries series;
  series.interval_s = v.interval_s;
  sampler.describe(series);
  const bool tty = session::stdout_is_tty();
  std::fprintf(stderr, "watching %s%s for %s every %s; Ctrl-C stops early and still writes the diagnosis\n",
               series.gpus.empty() ? ("the host only (" + series.gpu_note + ")").c_str()
                                   : fmt::format("{} GPU(s) and the host", series.gpus.size()).c_str(),
               v.pid ? fmt::format(", process {}", *v.pid).c_str() : "", format_duration(v.duration_s).c_str(),
               format_duration(v.interval_s).c_str());
  WatchRun run{v.duration_s, v.interval_s, v.pid, "", 0};
  double last_write_s = 0;
  const std::atomic<bool>& interrupt = session::install_interrupt_handler();
  const std::string ended = collect(sampler, series, v.duration_s, interrupt, [&](const WatchSeries& s) {
    if (tty) std::fprintf(stderr, "\r%s\033[K", status_line(s, v.duration_s).c_str());
    if (!s.t_s.empty() && s.t_s.back() - last_write_s >= rewrite_every_s) {
      last_write_s = s.t_s.back();
      run.ended_by = "in progress";
      run.wall_s = last_write_s;
      write_result(doc, result, s, run);
    }
  });
  if (tty) std::fputs("\r\033[K", stderr);
  run.ended_by = ended;
  run.wall_s = series.t_s.empty() ? 0 : series.t_s.back();
  doc["finished_at"] = utc_now_iso8601();
  write_result(doc, result, series, run);
  std::cout << render_diagnosis(diagnose(series)) << "result written to " << result.path() << "\n";
  return ended == "interrupted" ? session::exit_interrupted : session::exit_ok;
}


}  // namespace nodeaudit::watch
