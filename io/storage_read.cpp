// storage.read — sequential or random block reads through io_uring, like `fio --ioengine=io_uring`.
//
// Each worker thread has its own ring, its own descriptor and an equal slice of the region, read
// over and over (time-based, like fio --time_based); it keeps `queue-depth` reads of `block-size`
// in flight from before the warm-up window until after the last timed one. One repetition = one
// window of runtime / (repetitions + warm-up) wall time, with the queues full throughout; at the
// quick level each round gets runtime / rounds and its share of the repetitions.
//   bandwidth  = bytes of the reads completed in the window / window wall time / 1e9 (GB/s)
//   iops       = reads completed in the window / window wall time
//   latency_*  = reap time - submit time of each read (histogram, per window)
//   cpu_per_gb = process user+system CPU seconds in the window / (bytes / 1e9)
// Pitfalls: a buffered read of data that fits in free RAM measures the page cache, not the
// device: such figures carry cache=page. O_DIRECT (the default) needs block-size to be a multiple
// of the logical block size. Reads are submitted at most two per io_uring_enter, so the block
// layer neither merges adjacent reads past block-size nor holds a batch back (see EngineOptions).
// A file given with --path is only read; a directory gets a generated pattern file, checked byte
// for byte after the timed region.
#include <fcntl.h>
#include <unistd.h>


#include <fmt/format.h>

#include "harness/core/context.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/units.hpp"
#include "io/generated_data.hpp"
#include "io/read_sources.hpp"
#include "io/steady_windows.hpp"
#include "io/storage_params.hpp"
#include "io/storage_target.hpp"

namespace nodeaudit::io {
namespace {

struct ReadSetup {
  std::string file;
  std::uint64_t region_bytes = 0;
  std::optional<std::uint64_t> pattern_seed;  // set when the file is ours
  std::unique_ptr<GeneratedData> generated;
};

struct ReadWorkers {
  std::vector<std::unique_ptr<UringWorker>> rings;
  std::vector<BlockReadSource> sources;
  std::vector<int> fds;
  ~ReadWorkers() {
    for (int fd : fds) close(fd);
  }
};

Outcome prepare_file(ProbeContext& ctx, const StorageTarget& target, ReadSetup& setup) {
  const std::uint64_t size = ctx.params().size_bytes("size");
  if (target.kind != TargetKind::directory) {
    setup.file = target.path;
    setup.region_bytes = ctx.params().given("size") ? std::min(size, target.size_bytes) : target.size_bytes;
    return Outcome::ok();
  }
  const DatasetSpec spec{fmt::format("read-{}", size), 1, size, 0x5eed};
  GenerateResult g = generate_dataset(target.path, spec, ctx.settings().keep_data, [&] { return ctx.should_stop(); });
  if (g.interrupted) return Outcome::interrupted();
  if (!g.error.empty()) return g.out_of_space ? Outcome::bad_input(g.error) : Outcome::failed(g.error);
  ctx.info()["generated"] = describe_generated(g);
  setup.file = g.data->files().front();
  setup.region_bytes = size;
  setup.pattern_seed = file_seed(spec, 0);
  setup.generated = std::move(g.data);
  return Outcome::ok();
}

Outcome open_workers(ProbeContext& ctx, const ReadSetup& setup, const DirectChoice& direct, ReadWorkers& w) {
  const auto& p = ctx.params();
  const int workers = static_cast<int>(p.integer("workers"));
  const auto block = static_cast<std::uint32_t>(p.size_bytes("block-size"));
  EngineOptions options{static_cast<unsigned>(p.integer("queue-depth")), block, p.boolean("sqpoll"), p.boolean("iopoll"), 0};
  // Unplugged submissions: each read reaches the device at --block-size and at once (see
  // EngineOptions::max_submit_batch).
  options.max_submit_batch = 2;
  for (int i = 0; i < workers; ++i) {
    const int fd = open(setup.file.c_str(), O_RDONLY | O_CLOEXEC | (direct.use_direct ? O_DIRECT : 0));
    if (fd < 0) return Outcome::failed(fmt::format("open {}: {}", setup.file, std::strerror(errno)));
    w.fds.push_back(fd);
    std::string error;
    auto ring = UringWorker::create(options, error);
    if (!ring) return Outcome::skipped(error);
    ring->use_files({fd});
    w.rings.push_back(std::move(ring));
    w.sources.emplace_back(slice_for_worker(setup.region_bytes, block, workers, i), block, p.text("pattern") == "rand",
                           0x1234u + static_cast<unsigned>(i));
  }
  ctx.info()["fixed_buffers"] = w.rings.front()->fixed_buffers();
  ctx.info()["fixed_files"] = w.rings.front()->fixed_files();
  return Outcome::ok();
}

struct RepetitionLog {
  std::vector<double> cpu_per_gb, p50_us, p99_us, max_us;
  LatencyHistogram pooled;
};

// Per-window latency percentiles, known once the workers have stopped.
void log_window_latencies(const SteadyWindows& windows, unsigned first_timed, unsigned windows_done, RepetitionLog& log) {
  for (unsigned k = first_timed; k < windows_done; ++k) {
    const LatencyHistogram h = windows.window_latency(k);
    if (h.count() == 0) continue;
    log.p50_us.push_back(h.percentile_ns(0.5) / 1e3);
    log.p99_us.push_back(h.percentile_ns(0.99) / 1e3);
    log.max_us.push_back(static_cast<double>(h.max_ns()) / 1e3);
    log.pooled.merge(h);
  }
}

// The workers keep their queues full from before the warm-up window until after the last timed
// one; each repetition is one window of `window_s`.
Measurement measure_windows(ProbeContext& ctx, ReadWorkers& w, const RepeatPolicy& policy, double window_s, RepetitionLog& log,
                            std::string& error) {
  std::vector<UnitSource*> sources;
  for (auto& s : w.sources) {
    s.start_repetition(UINT64_MAX);
    sources.push_back(&s);
  }
  SteadyWindows windows(w.rings, sources);
  unsigned windows_done = 0;
  const auto stop = [&] { return ctx.should_stop(); };
  const Measurement m = run_repetitions(
      policy,
      [&] {
        const Work work = windows.next_window(window_s, stop);
        if (windows_done++ >= static_cast<unsigned>(policy.warmup) && work.bytes > 0)
          log.cpu_per_gb.push_back(windows.last_window_cpu_s() / (work.bytes / 1e9));
        return work;
      },
      [&] { return ctx.should_stop() || windows.failed(); });
  windows.stop();
  error = windows.error();
  log_window_latencies(windows, static_cast<unsigned>(policy.warmup), windows_done, log);
  return m;
}

void record_read_metrics(ProbeContext& ctx, const Measurement& m, const RepetitionLog& log, const Labels& labels) {
  ctx.add_rate("bandwidth", RateKind::gb_per_s, m, labels);
  ctx.add_rate("iops", RateKind::ops_per_s, m, labels);
  ctx.add_metric(Metric{"latency_p50", unit::us, Better::lower, labels, log.p50_us});
  ctx.add_metric(Metric{"latency_p99", unit::us, Better::lower, labels, log.p99_us});
  ctx.add_metric(Metric{"latency_max", unit::us, Better::lower, labels, log.max_us});
  ctx.add_metric(Metric{"cpu_per_gb", unit::s_per_gb, Better::lower, labels, log.cpu_per_gb});
  ctx.info()["latency_pooled"] = latency_summary_json(log.pooled);
}

Outcome verify_generated(ProbeContext& ctx, const ReadSetup& setup, ReadWorkers& w) {
  if (!setup.pattern_seed) return Outcome::ok();
  const auto block = static_cast<std::uint32_t>(ctx.params().size_bytes("block-size"));
  VerifyingSource verify(std::min(setup.region_bytes, verify_limit_bytes) / block, block, *setup.pattern_seed);
  LatencyHistogram ignored;
  const LoopResult r = w.rings.front()->run(verify, {}, ignored);
  if (!r.error.empty()) return Outcome::failed("verification read: " + r.error);
  ctx.info()["verified_bytes"] = verify.checked_bytes();
  if (verify.mismatched_bytes() == 0) return Outcome::ok();
  ctx.add_finding(Severity::fail, "storage.verify",
                  fmt::format("{}: {} of {} bytes read back differ from what was written, the first at byte offset {}", setup.file,
                              verify.mismatched_bytes(), verify.checked_bytes(), verify.first_mismatch_offset().value_or(0)));
  return Outcome::failed("verification failed: data read back differs from data written");
}

Outcome measure_storage_read(ProbeContext& ctx) {
  const auto& p = ctx.params();
  TargetOrReason t = resolve_target(p.text("path"), ctx.settings().data_dir, false);
  if (!t.target) return t.skip ? Outcome::skipped(t.reason) : Outcome::bad_input(t.reason);
  const DirectChoice direct = choose_direct(ctx, *t.target);
  if (!direct.error.empty()) return Outcome::bad_input(direct.error);
  if (auto why = check_iopoll(p, direct); !why.empty()) return Outcome::bad_input(why);
  if (auto why = check_block_alignment(p, *t.target, direct); !why.empty()) return Outcome::bad_input(why);
  ReadSetup setup;
  if (Outcome o = prepare_file(ctx, *t.target, setup); o.status != Status::ok) return o;
  if (setup.region_bytes < p.size_bytes("block-size"))
    return Outcome::bad_input(fmt::format("{}: {} bytes is smaller than --block-size {}", setup.file, setup.region_bytes, p.size_bytes("block-size")));
  ReadWorkers w;
  if (Outcome o = open_workers(ctx, setup, direct, w); o.status != Status::ok) return o;
  RepeatPolicy policy = ctx.policy();
  const double runtime_s = ctx.round_share_s(p.duration_s("runtime"));  // the quick level splits it over its rounds
  policy.budget_s = runtime_s;
  const double window_s = runtime_s / (policy.min_repetitions + policy.warmup);
  RepetitionLog log;
  std::string error;
  const Measurement m = measure_windows(ctx, w, policy, window_s, log, error);
  if (!error.empty()) return Outcome::failed(error);
  const Labels labels{{"pattern", p.text("pattern")}, {"block_size", std::to_string(p.size_bytes("block-size"))},
                      {"workers", std::to_string(p.integer("workers"))}, {"cache", cache_label(direct.use_direct, setup.region_bytes)}};
  record_read_metrics(ctx, m, log, labels);
  ctx.info()["file"] = setup.file;
  ctx.info()["region_bytes"] = setup.region_bytes;
  if (m.cancelled) return Outcome::interrupted();
  return verify_generated(ctx, setup, w);
}

ProbeSpec storage_read_spec() {
  ProbeSpec spec;
  spec.id = "storage.read";
  spec.description = "Sequential or random block reads through io_uring (GB/s, IOPS, latency percentiles, CPU per GB)";
  spec.needs = {Need::io_uring};
  spec.params = {
      path_param("File or block device to read (read-only), or a directory to create a test file in; empty = --data-dir"),
      ParamSpec{.name = "pattern", .type = ParamType::choice, .default_by_level = same_at_all_levels("seq"),
                .help = "Access pattern", .choices = {"seq", "rand"}},
      block_size_param("1MiB"),
      queue_depth_param("16"),
      ParamSpec{.name = "workers", .type = ParamType::integer, .default_by_level = same_at_all_levels("1"),
                .help = "Worker threads, each with its own ring and slice of the file", .min = 1, .max = 256},
      direct_param(),
      ParamSpec{.name = "size", .type = ParamType::size, .default_by_level = {"256MiB", "4GiB", "16GiB"},
                .help = "Bytes of the region read (with a file: at most its size; default the whole file)", .min = 4096, .max = 1ull << 44},
      ParamSpec{.name = "runtime", .type = ParamType::duration, .default_by_level = {"3s", "30s", "300s"},
                .help = "Time budget for the timed repetitions (at the quick level, split evenly over the rounds)", .min = 0.1, .max = 86400},
      sqpoll_param(),
      iopoll_param(),
  };
  spec.body = measure_storage_read;
  spec.check_places = places_check(false);
  spec.deadline_s = [](const ParamValues& p, Level) {
    return 60 + 3 * p.duration_s("runtime") + static_cast<double>(p.size_bytes("size")) / 50e6;
  };
  return spec;
}

const ProbeRegistrar storage_read_registrar{storage_read_spec()};

}  // namespace
}  // namespace nodeaudit::io
