// storage.dataset — a training data loader over many small sample files (the ImageNet case).
//
// The generator writes `samples` files of `sample-size` under the data directory. For each worker
// count, each repetition is one epoch: a fresh random permutation, every sample read exactly once
// as a whole file (open, read, close — through io_uring, hard-linked), `queue-depth` samples in
// flight per worker. At the quick level the rounds split the samples: round r generates (or, with
// --keep-data, takes from the kept set) its consecutive part and each of its epochs reads that part
// once, so the rounds together write the set once and read every sample once per epoch.
//   samples_per_s = samples completed / epoch wall time;  bandwidth = bytes read / time / 1e9
//   latency_p50/p99 = per-sample time from submission of the open to completion of the close
//   knee_workers  = the fewest workers within 10% of the best samples/s (stats.hpp)
// Pitfalls: buffered reads of a data set that fits in free RAM measure the page cache
// (cache=page). O_DIRECT reads are rounded up to 4 KiB; a short read of the file's tail is
// expected and the exact file size must come back. The exactly-once check runs on every epoch.
// With read=mmap the samples are windows of one file of `file-size` bytes, read through a memory
// mapping as a Dataset over np.memmap reads them (mmap_windows.hpp): the page faults and the
// kernel's read-around, not the sample size, decide what the device reads. Each repetition reads
// windows in a fresh random order, from cold pages when --direct (the file's pages dropped and
// checked gone with mincore; cache=page when they could not be), for at most `samples` windows or
// the level's time per repetition, whichever comes first (a throttled device reads a few a second).
#include <algorithm>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "harness/core/context.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/units.hpp"
#include "io/dataset_loader.hpp"
#include "io/generated_data.hpp"
#include "io/mmap_windows.hpp"
#include "io/storage_params.hpp"
#include "io/storage_target.hpp"

namespace nodeaudit::io {
namespace {

struct EpochLog {
  std::vector<double> p50_us, p99_us;
  std::string error;
  std::uint64_t samples_missed = 0;
};

// The samples of the data set one round's epochs read: all of them, or at the quick level the
// round's consecutive part, so the rounds together read every sample once per epoch.
struct EpochPart {
  std::uint64_t start = 0, samples = 0;
};

Work one_epoch(const std::vector<std::unique_ptr<UringWorker>>& rings, int workers, const GeneratedData& data,
               std::uint32_t sample_bytes, bool direct, std::uint64_t epoch, bool timed, EpochPart part, EpochLog& log) {
  EpochPlan plan = make_epoch_plan(data.files(), sample_bytes, direct, 0xda7a + epoch);
  // A fresh permutation of the part's samples.
  std::erase_if(plan.order, [&](std::uint32_t index) { return index < part.start || index >= part.start + part.samples; });
  std::vector<std::atomic<std::uint32_t>> counts(data.files().size());
  const auto start = std::chrono::steady_clock::now();
  EpochResult r = run_epoch(rings, workers, plan, {}, &counts);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (log.error.empty() && !r.error.empty()) log.error = r.error;
  // Exactly once for the samples of this part, never for the others.
  std::vector<std::uint32_t> expected(counts.size(), 0);
  for (std::uint32_t index : plan.order) expected[index] = 1;
  for (std::size_t i = 0; i < counts.size(); ++i) log.samples_missed += counts[i].load() != expected[i];
  if (timed) {
    log.p50_us.push_back(r.latency.percentile_ns(0.5) / 1e3);
    log.p99_us.push_back(r.latency.percentile_ns(0.99) / 1e3);
  }
  // Elapsed covers only the loader, not the exactly-once bookkeeping above.
  return Work{.bytes = static_cast<double>(r.bytes), .ops = static_cast<double>(r.samples), .elapsed_s = elapsed};
}

struct DatasetRun {
  ProbeContext& ctx;
  const GeneratedData& data;
  std::uint32_t sample_bytes;
  bool direct;
  std::string cache;
  EpochPart part;
};

// Returns the median samples/s for `workers`, or a negative value after a failure (log.error).
double measure_worker_count(DatasetRun& run, const std::vector<std::unique_ptr<UringWorker>>& rings, int workers, EpochLog& log) {
  std::uint64_t epoch = 0;
  const RepeatPolicy policy = run.ctx.policy();
  const Measurement m = run_repetitions(
      policy,
      [&] {
        const bool timed = epoch >= static_cast<std::uint64_t>(policy.warmup);
        return one_epoch(rings, workers, run.data, run.sample_bytes, run.direct, epoch++, timed, run.part, log);
      },
      [&] { return run.ctx.should_stop() || !log.error.empty(); });
  if (!log.error.empty()) return -1;
  const Labels labels{{"workers", std::to_string(workers)}, {"cache", run.cache}};
  run.ctx.add_metric(Metric{"samples_per_s", unit::samples_per_s, Better::higher, labels, rate_samples(m, RateKind::ops_per_s)});
  run.ctx.add_rate("bandwidth", RateKind::gb_per_s, m, labels);
  run.ctx.add_metric(Metric{"latency_p50", unit::us, Better::lower, labels, log.p50_us});
  run.ctx.add_metric(Metric{"latency_p99", unit::us, Better::lower, labels, log.p99_us});
  if (m.cancelled) return -2;
  const auto rates = rate_samples(m, RateKind::ops_per_s);
  return rates.empty() ? 0 : percentile(rates, 0.5);
}

Outcome run_loader(DatasetRun& run, const std::vector<std::int64_t>& worker_counts) {
  const auto& p = run.ctx.params();
  const auto max_workers = *std::max_element(worker_counts.begin(), worker_counts.end());
  const auto qd = static_cast<unsigned>(p.integer("queue-depth"));
  const EngineOptions options{qd, round_up(run.sample_bytes, 4096), p.boolean("sqpoll"), false, qd};
  std::vector<std::unique_ptr<UringWorker>> rings;
  for (std::int64_t i = 0; i < max_workers; ++i) {
    std::string error;
    rings.push_back(UringWorker::create(options, error));
    if (!rings.back()) return Outcome::skipped(error);
  }
  std::vector<double> medians;
  for (std::int64_t workers : worker_counts) {
    EpochLog log;
    const double median = measure_worker_count(run, rings, static_cast<int>(workers), log);
    if (median == -1) return Outcome::failed(log.error);
    if (log.samples_missed > 0) {
      run.ctx.add_finding(Severity::fail, "storage.dataset_coverage",
                          fmt::format("{} samples were not read exactly once per epoch with {} workers", log.samples_missed, workers));
      return Outcome::failed("loader did not read every sample exactly once per epoch");
    }
    if (median == -2) return Outcome::interrupted();
    medians.push_back(median);
  }
  run.ctx.add_value("knee_workers", unit::count, Better::lower, knee_workers(worker_counts, medians), {{"cache", run.cache}});
  return Outcome::ok();
}

// A random order of the file's windows: all of them shuffled when there are at most `count`, else
// `count` drawn at random (a shuffled index's first `count`, without holding a million indices).
std::vector<std::uint64_t> window_order(std::uint64_t windows, std::uint64_t count, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::uint64_t> order;
  if (windows <= count) {
    order.resize(windows);
    std::iota(order.begin(), order.end(), 0ull);
    std::shuffle(order.begin(), order.end(), random);
    return order;
  }
  std::uniform_int_distribution<std::uint64_t> pick(0, windows - 1);
  for (std::uint64_t i = 0; i < count; ++i) order.push_back(pick(random));
  return order;
}

double mmap_time_per_repetition_s(Level level) { return level == Level::soak ? 60 : level == Level::standard ? 10 : 2; }

// read=mmap: windows of one generated file through a mapping, per worker count.
Outcome measure_mmap_windows(ProbeContext& ctx, const StorageTarget& target) {
  const auto& p = ctx.params();
  const std::uint64_t window = p.size_bytes("sample-size");
  const std::uint64_t samples = static_cast<std::uint64_t>(p.integer("samples"));
  const std::uint64_t file_bytes = p.size_bytes("file-size") > 0 ? p.size_bytes("file-size") : window * samples;
  if (file_bytes < window)
    return Outcome::bad_input(fmt::format("--file-size {} is smaller than one --sample-size window ({} bytes)", file_bytes, window));
  const DatasetSpec spec{fmt::format("dataset-mmap-{}", file_bytes), 1, file_bytes, 0xda7a5e7};
  GenerateResult g = generate_dataset(target.path, spec, ctx.settings().keep_data, [&] { return ctx.should_stop(); });
  if (g.interrupted) return Outcome::interrupted();
  if (!g.error.empty()) return g.out_of_space ? Outcome::bad_input(g.error) : Outcome::failed(g.error);
  ctx.info()["generated"] = describe_generated(g);
  ctx.info()["generated"]["bytes"] = file_bytes;
  MappedFile file(g.data->files().front());
  if (!file.error().empty()) return Outcome::failed(file.error());
  const std::uint64_t windows_in_file = file_bytes / window;
  const bool drop = p.boolean("direct");
  const double time_limit_s = mmap_time_per_repetition_s(ctx.level());
  std::vector<double> medians;
  const auto worker_counts = p.int_list("workers");
  for (std::int64_t workers : worker_counts) {
    std::uint64_t repetition = 0;
    std::vector<double> p50_us, p99_us, resident_after_drop, cache_fill_bytes;
    const Measurement m = run_repetitions(
        ctx.policy(),
        [&] {
          const std::vector<std::uint64_t> order = window_order(windows_in_file, samples, 0x3a9 + (repetition++ << 8) + static_cast<std::uint64_t>(workers));
          if (drop) resident_after_drop.push_back(file.drop_cached_pages());
          const WindowsResult r = read_windows(file, window, order, static_cast<int>(workers), time_limit_s);
          // What the page cache gained per window read from a cold start: the window and the kernel's
          // read-around of each fault. A job over a file larger than the cache fills it at this rate.
          if (drop && r.windows > 0)
            cache_fill_bytes.push_back(std::max(0.0, file.resident_share() - resident_after_drop.back()) *
                                       static_cast<double>(file_bytes) / static_cast<double>(r.windows));
          p50_us.push_back(r.latency.percentile_ns(0.5) / 1e3);
          p99_us.push_back(r.latency.percentile_ns(0.99) / 1e3);
          return Work{.bytes = static_cast<double>(r.bytes), .ops = static_cast<double>(r.windows), .elapsed_s = r.elapsed_s};
        },
        [&] { return ctx.should_stop(); });
    // Cold only when the drop left (almost) nothing of the file in memory.
    const bool cold = drop && !resident_after_drop.empty() && percentile(resident_after_drop, 1.0) < 0.05;
    const Labels labels{{"workers", std::to_string(workers)}, {"cache", cold ? "none" : cache_label(false, file_bytes)}, {"read", "mmap"}};
    ctx.add_metric(Metric{"samples_per_s", unit::samples_per_s, Better::higher, labels, rate_samples(m, RateKind::ops_per_s)});
    ctx.add_rate("bandwidth", RateKind::gb_per_s, m, labels);
    ctx.add_metric(Metric{"latency_p50", unit::us, Better::lower, labels, p50_us});
    ctx.add_metric(Metric{"latency_p99", unit::us, Better::lower, labels, p99_us});
    if (cold) ctx.add_metric(Metric{"cache_fill_per_sample", unit::bytes, Better::lower, labels, cache_fill_bytes});
    if (drop && !cold)
      ctx.add_finding(Severity::warn, "storage.dataset_not_cold",
                      fmt::format("the file's pages stayed in memory after being dropped ({:.0f}% resident): the windows were read from the page cache",
                                  100 * percentile(resident_after_drop, 1.0)));
    if (m.cancelled) return Outcome::interrupted();
    const auto rates = rate_samples(m, RateKind::ops_per_s);
    medians.push_back(rates.empty() ? 0 : percentile(rates, 0.5));
  }
  ctx.add_value("knee_workers", unit::count, Better::lower, knee_workers(worker_counts, medians), {{"read", "mmap"}});
  return Outcome::ok();
}

Outcome measure_storage_dataset(ProbeContext& ctx) {
  const auto& p = ctx.params();
  TargetOrReason t = resolve_target(p.text("path"), ctx.settings().data_dir, true);
  if (!t.target) return t.skip ? Outcome::skipped(t.reason) : Outcome::bad_input(t.reason);
  if (p.text("read") == "mmap") return measure_mmap_windows(ctx, *t.target);
  const DirectChoice direct = choose_direct(ctx, *t.target);
  if (!direct.error.empty()) return Outcome::bad_input(direct.error);
  const auto sample_bytes = static_cast<std::uint32_t>(p.size_bytes("sample-size"));
  const auto samples = static_cast<std::uint64_t>(p.integer("samples"));
  // This round's consecutive part of the samples (all of them unless the rounds share the level's
  // work). A scratch data set holds only that part, with the same bytes the whole set has there
  // (file i of the part is file start + i of the set), so the rounds together write the set once;
  // a kept set (--keep-data) is the whole one, reused by later runs, and the round reads its part.
  EpochPart part{static_cast<std::uint64_t>(ctx.round_share_start(static_cast<std::int64_t>(samples))),
                 static_cast<std::uint64_t>(ctx.round_share(static_cast<std::int64_t>(samples)))};
  const bool part_only = part.samples != samples && !ctx.settings().keep_data;
  const std::uint64_t seed = 0xda7a5e7;
  const DatasetSpec spec = part_only
                               ? DatasetSpec{fmt::format("dataset-{}x{}-from{}", sample_bytes, part.samples, part.start), part.samples,
                                             sample_bytes, seed + (part.start << 40)}
                               : DatasetSpec{fmt::format("dataset-{}x{}", sample_bytes, samples), samples, sample_bytes, seed};
  GenerateResult g = generate_dataset(t.target->path, spec, ctx.settings().keep_data, [&] { return ctx.should_stop(); });
  if (g.interrupted) return Outcome::interrupted();
  if (!g.error.empty()) return g.out_of_space ? Outcome::bad_input(g.error) : Outcome::failed(g.error);
  ctx.info()["generated"] = describe_generated(g);
  ctx.info()["generated"]["bytes"] = spec.file_count * sample_bytes;
  if (part.samples != samples) ctx.info()["samples_this_round"] = {{"first", part.start}, {"count", part.samples}, {"of", samples}};
  if (part_only) part.start = 0;  // the generated files are the part
  // Cached or not by what a round reads again epoch after epoch: its part.
  DatasetRun run{ctx, *g.data, sample_bytes, direct.use_direct, cache_label(direct.use_direct, part.samples * sample_bytes), part};
  return run_loader(run, p.int_list("workers"));
}

ProbeSpec storage_dataset_spec() {
  ProbeSpec spec;
  spec.id = "storage.dataset";
  spec.description = "Training-style loader over many small files: samples/s per worker count and the knee";
  spec.needs = {Need::io_uring};
  spec.params = {
      path_param("Directory to create the sample files in (on the storage under test); empty = --data-dir"),
      ParamSpec{.name = "sample-size", .type = ParamType::size, .default_by_level = same_at_all_levels("110KiB"),
                .help = "Bytes per sample file", .min = 1, .max = 64 << 20},
      ParamSpec{.name = "samples", .type = ParamType::integer, .default_by_level = {"2000", "20000", "100000"},
                .help = "Sample files in the data set (one epoch reads each once)", .min = 1, .max = 10'000'000},
      ParamSpec{.name = "workers", .type = ParamType::int_list, .default_by_level = same_at_all_levels("1,2,4,8,16"),
                .help = "Loader worker counts to compare", .min = 1, .max = 256},
      queue_depth_param("8"),
      direct_param(),
      sqpoll_param(),
      ParamSpec{.name = "read", .type = ParamType::choice, .default_by_level = same_at_all_levels("file"),
                .help = "How a sample is read: file = one whole file per sample through io_uring; mmap = a window of one "
                        "memory-mapped file, as a Dataset over np.memmap reads it",
                .choices = {"file", "mmap"}},
      ParamSpec{.name = "file-size", .type = ParamType::size, .default_by_level = same_at_all_levels("0"),
                .help = "With read=mmap: bytes of the mapped file (the data set); 0 = samples x sample-size", .min = 0,
                .max = 1ll << 40},
  };
  spec.body = measure_storage_dataset;
  spec.check_places = places_check(true);
  spec.deadline_s = [](const ParamValues& p, Level level) {
    const double window_bytes = static_cast<double>(p.integer("samples")) * static_cast<double>(p.size_bytes("sample-size"));
    const bool mmap = p.text("read") == "mmap";
    const double bytes = mmap && p.size_bytes("file-size") > 0 ? static_cast<double>(p.size_bytes("file-size")) : window_bytes;
    const double per_count = level == Level::soak ? 600 : level == Level::standard ? 120 : 30;
    return 60 + bytes / 20e6 + per_count * static_cast<double>(p.int_list("workers").size());
  };
  return spec;
}

const ProbeRegistrar storage_dataset_registrar{storage_dataset_spec()};

}  // namespace
}  // namespace nodeaudit::io
