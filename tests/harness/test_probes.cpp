// Test-only probes, linked only into nodeaudit-testbin: they crash, hang, fail, throw, exit early or
// run until interrupted, so the tests can check that `run` survives each and keeps the other figures.
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "harness/core/context.hpp"
#include "harness/core/registry.hpp"

namespace nodeaudit {
namespace {

// Probes that end on their own get a deadline no loaded (sanitizer) machine reaches: the deadline
// counts from the child's start, which under load can take seconds. Only test.hang needs it short.
ParamSpec deadline_param(const char* value = "60s") {
  return ParamSpec{.name = "deadline", .type = ParamType::duration, .default_by_level = same_at_all_levels(value),
                   .help = "Deadline the runner gives this probe", .min = 0.1, .max = 600};
}

double deadline_from_params(const ParamValues& p, Level) { return p.duration_s("deadline"); }

// Sleeps a fixed time per repetition so rates are exactly predictable: 1e6 ops in 10 ms.
Work fixed_work() {
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return Work{.ops = 1e6};
}

const ProbeRegistrar ok_probe{ProbeSpec{
    .id = "test.ok",
    .description = "test only: records one rate and one finding",
    .params = {deadline_param()},
    .body = [](ProbeContext& ctx) {
      const Measurement m = ctx.repeat(RepeatPolicy{.warmup = 0, .min_repetitions = 3, .max_repetitions = 3}, fixed_work);
      ctx.add_rate("rate", RateKind::ops_per_s, m, {{"kind", "sleep"}});
      ctx.add_finding(Severity::info, "test.note", "recorded");
      return Outcome::ok();
    },
    .deadline_s = deadline_from_params}};

const ProbeRegistrar crash_probe{ProbeSpec{
    .id = "test.crash",
    .description = "test only: dies of SIGSEGV",
    .params = {deadline_param()},
    .body = [](ProbeContext&) -> Outcome {
      std::raise(SIGSEGV);
      return Outcome::ok();
    },
    .deadline_s = deadline_from_params}};

const ProbeRegistrar hang_probe{ProbeSpec{
    .id = "test.hang",
    .description = "test only: never returns and ignores SIGINT",
    .params = {deadline_param("3s")},
    .body = [](ProbeContext&) -> Outcome {
      std::signal(SIGINT, SIG_IGN);
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    },
    .deadline_s = deadline_from_params}};

const ProbeRegistrar fail_probe{ProbeSpec{
    .id = "test.fail",
    .description = "test only: returns failed with a reason",
    .params = {deadline_param()},
    .body = [](ProbeContext&) { return Outcome::failed("asked to fail"); },
    .deadline_s = deadline_from_params}};

// The interrupt test needs to know a figure exists before it sends Ctrl-C: test.slow creates the file
// this variable names after its first figure is recorded.
constexpr const char* kSlowReadyFileEnv = "NODEAUDIT_TEST_SLOW_READY_FILE";

void announce_first_figure() {
  if (const char* path = std::getenv(kSlowReadyFileEnv); path && *path) std::ofstream{path} << "recorded\n";
}

const ProbeRegistrar slow_probe{ProbeSpec{
    .id = "test.slow",
    .description = "test only: repeats until interrupted, one figure per batch",
    .params = {deadline_param("60s")},
    .body = [](ProbeContext& ctx) {
      while (!ctx.should_stop()) {
        const Measurement m = ctx.repeat(RepeatPolicy{.warmup = 0, .min_repetitions = 2, .max_repetitions = 2}, fixed_work);
        ctx.add_rate("rate", RateKind::ops_per_s, m, {{"batch", std::to_string(ctx.metrics().size())}});
        if (ctx.metrics().size() == 1) announce_first_figure();
      }
      return ctx.cancelled() ? Outcome::interrupted() : Outcome::ok();
    },
    .deadline_s = deadline_from_params}};

const ProbeRegistrar throw_probe{ProbeSpec{
    .id = "test.throw",
    .description = "test only: records one rate, then its body throws",
    .params = {deadline_param()},
    .body = [](ProbeContext& ctx) -> Outcome {
      const Measurement m = ctx.repeat(RepeatPolicy{.warmup = 0, .min_repetitions = 2, .max_repetitions = 2}, fixed_work);
      ctx.add_rate("rate", RateKind::ops_per_s, m, {{"kind", "sleep"}});
      throw std::runtime_error("thrown after the first figure");
    },
    .deadline_s = deadline_from_params}};

const ProbeRegistrar exit_probe{ProbeSpec{
    .id = "test.exit",
    .description = "test only: its process exits with status 0 without writing a result",
    .params = {deadline_param()},
    .body = [](ProbeContext&) -> Outcome { std::_Exit(0); },
    .deadline_s = deadline_from_params}};

// test.deaf ignores Ctrl-C, and so does a helper process it starts; once both ignore it, it writes
// "<its pid> <helper pid>" to the file this variable names, so a test knows whom the kill must reach.
constexpr const char* kDeafReadyFileEnv = "NODEAUDIT_TEST_DEAF_READY_FILE";

const ProbeRegistrar deaf_probe{ProbeSpec{
    .id = "test.deaf",
    .description = "test only: it and a helper process ignore SIGINT until killed",
    .params = {deadline_param("300s")},
    .body = [](ProbeContext&) -> Outcome {
      std::signal(SIGINT, SIG_IGN);
      const pid_t helper = fork();
      if (helper == 0)
        while (true) pause();
      if (const char* path = std::getenv(kDeafReadyFileEnv); path && *path) {
        const std::string partial = std::string(path) + ".partial";
        std::ofstream{partial} << getpid() << ' ' << helper << '\n';
        std::rename(partial.c_str(), path);
      }
      while (true) pause();
    },
    .deadline_s = deadline_from_params}};

// test.sizes takes the two sizes `run --profile` sets from a profile, as the data-loader probes do,
// so a test can see in the result which values reached a probe.
ParamSpec size_param(const char* name, const char* help) {
  return ParamSpec{.name = name, .type = ParamType::size, .default_by_level = same_at_all_levels("4KiB"), .help = help,
                   .min = 1, .max = 1ull << 40};
}

const ProbeRegistrar sizes_probe{ProbeSpec{
    .id = "test.sizes",
    .description = "test only: takes a sample size and an image size and measures nothing",
    .params = {deadline_param(), size_param("sample-size", "Bytes per sample"), size_param("image-size", "Bytes per JPEG")},
    .body = [](ProbeContext&) { return Outcome::ok(); },
    .deadline_s = deadline_from_params}};

// test.hold lasts at least --hold, so the run's telemetry sampler (a row every 0.5 s after a first
// reading that only primes its counters) has rows to keep.
const ProbeRegistrar hold_probe{ProbeSpec{
    .id = "test.hold",
    .description = "test only: sleeps for --hold and measures nothing",
    .params = {deadline_param(), ParamSpec{.name = "hold", .type = ParamType::duration, .default_by_level = same_at_all_levels("1.5s"),
                                           .help = "How long the probe lasts", .min = 0.1, .max = 60}},
    .body = [](ProbeContext& ctx) {
      std::this_thread::sleep_for(std::chrono::duration<double>(ctx.params().duration_s("hold")));
      return Outcome::ok();
    },
    .deadline_s = deadline_from_params}};

const ProbeRegistrar bad_input_probe{ProbeSpec{
    .id = "test.bad-input",
    .description = "test only: refuses its input, as a probe given a place it cannot use does",
    .params = {deadline_param()},
    .body = [](ProbeContext&) { return Outcome::bad_input("--path /nowhere: asked to refuse"); },
    .deadline_s = deadline_from_params}};

// test.workload emulates a step the way pipeline.step does (it declares `workload`): it records the
// step demand the session handed it, so a test can see what reached the child beside its params.
const ProbeRegistrar workload_probe{ProbeSpec{
    .id = "test.workload",
    .description = "test only: records the step demand it was given and measures nothing",
    .params = {deadline_param(), ParamSpec{.name = "workload", .type = ParamType::text, .default_by_level = same_at_all_levels(""),
                                           .help = "Workload profile NAME or FILE"}},
    .body = [](ProbeContext& ctx) {
      const auto& demand = ctx.settings().step_demand;
      ctx.info()["step_demand"] = demand ? demand->to_json() : nlohmann::json(nullptr);
      return Outcome::ok();
    },
    .deadline_s = deadline_from_params}};

}  // namespace
}  // namespace nodeaudit
