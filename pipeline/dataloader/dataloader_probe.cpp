// host.dataloader — the CPU side of the input pipeline measured on the loader training jobs run:
// a real PyTorch DataLoader, in the Python the user's training uses (--python), over nodeaudit's
// generated samples for the profile (JPEG files for a profile that decodes JPEGs, raw sample files
// otherwise), with the profile's batch size, persistent workers and pin_memory, swept over
// num_workers (1, 2, 4, 8, 16 capped at this process's CPUs). host.decode's native libjpeg-turbo
// figure is the ceiling a loader could reach; this is what the framework reaches.
//
// The Python side is torch_loader_sweep.py, shipped beside this file and run as a child process in
// a process group of its own, ended at the probe's deadline (its workers with it). Its report is
// parsed strictly (loader_report.hpp): a line that is not what it should be fails the probe naming
// the line; points reported before a crash or a timeout are kept.
//
// Formula, per decoder and worker count: samples/s = batch x timed batches / wall seconds, the
// timed window starting after --warmup batches (workers started, prefetch queues full) and ending
// after the level's batches or max seconds; CPU per sample = CPU seconds of the main process and its
// workers over the window / samples. One window per point: n = 1, repeat the probe (--rounds) for
// a spread.
//
// Pitfalls: the first batches include worker start-up and imports (hence the warm-up); pin_memory
// without a CUDA device is not pinned (recorded); a DataLoader over fewer files than one batch per
// worker would stall, so the set holds at least (warm-up + batches) x batch files or 2,048.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/context.hpp"
#include "harness/core/process_group.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/units.hpp"
#include "harness/node/nvml.hpp"
#include "harness/score/profile.hpp"
#include "io/generated_data.hpp"
#include "io/storage_target.hpp"
#include "pipeline/dataloader/dataloader_paths.hpp"
#include "pipeline/dataloader/loader_child.hpp"
#include "pipeline/dataloader/loader_report.hpp"
#include "pipeline/samples/jpeg_samples.hpp"
#include "pipeline/samples/workload_profile.hpp"

namespace nodeaudit::dataloader {
namespace {

namespace fs = std::filesystem;

struct LevelShape {
  int batches;
  double max_seconds;
};

LevelShape level_shape(Level level) {
  switch (level) {
    case Level::quick: return {6, 20};
    case Level::standard: return {20, 60};
    case Level::soak: return {100, 300};
  }
  return {6, 20};
}

int cpus_for_this_process() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  return CPU_COUNT(&set);
}

// The files a run reads, made for it and removed after (unless --keep-data).
struct SampleSet {
  std::unique_ptr<io::GeneratedData> data;
  std::string kind;  // jpeg or raw
  double mean_bytes = 0;
  std::string error;
  bool interrupted = false;
};

SampleSet make_samples(ProbeContext& ctx, const score::Profile& profile, const std::string& parent, std::uint64_t files) {
  SampleSet set;
  const auto stop = [&] { return ctx.should_stop(); };
  if (profile.data.decode == score::DecodeKind::jpeg) {
    set.kind = "jpeg";
    pipeline::JpegSetSpec spec;
    spec.samples = files;
    spec.target_mean_bytes = static_cast<std::uint64_t>(std::max(4096.0, profile.data.sample_bytes));
    spec.encode_workers = cpus_for_this_process();
    pipeline::JpegSet jpegs = pipeline::generate_jpeg_set(parent, spec, ctx.settings().keep_data, stop);
    set.data = std::move(jpegs.data), set.error = jpegs.error, set.interrupted = jpegs.interrupted;
    set.mean_bytes = jpegs.mean_bytes;
    return set;
  }
  set.kind = "raw";
  io::DatasetSpec spec;
  spec.file_bytes = static_cast<std::uint64_t>(std::clamp(profile.data.sample_bytes, 1.0, 64.0 * (1 << 20)));
  spec.file_count = files;
  spec.name = fmt::format("dataloader-{}-x{}", spec.file_bytes, files);
  io::GenerateResult raw = io::generate_dataset(parent, spec, ctx.settings().keep_data, stop);
  set.data = std::move(raw.data), set.error = raw.error, set.interrupted = raw.interrupted;
  set.mean_bytes = static_cast<double>(spec.file_bytes);
  return set;
}

void record_points(ProbeContext& ctx, const LoaderReport& report, int gpus) {
  std::vector<std::string> decoders;
  for (const LoaderPoint& p : report.points) {
    if (std::find(decoders.begin(), decoders.end(), p.decoder) == decoders.end()) decoders.push_back(p.decoder);
    const Labels labels{{"decoder", p.decoder}, {"workers", std::to_string(p.workers)}};
    ctx.add_value("samples_per_s", unit::samples_per_s, Better::higher, p.samples_per_s(), labels);
    ctx.add_value("cpu_per_sample", unit::us, Better::lower, p.cpu_us_per_sample(), labels);
  }
  ctx.info()["decoders_measured"] = decoders;
  for (const std::string& decoder : decoders) {
    std::vector<LoaderPoint> mine;
    std::copy_if(report.points.begin(), report.points.end(), std::back_inserter(mine),
                 [&](const LoaderPoint& p) { return p.decoder == decoder; });
    const auto best = std::max_element(mine.begin(), mine.end(), [](const LoaderPoint& a, const LoaderPoint& b) {
      return a.samples_per_s() < b.samples_per_s();
    });
    const Labels labels{{"decoder", decoder}};
    ctx.add_value("knee_workers", unit::count, Better::lower, knee_workers(mine), labels);
    ctx.add_value("samples_per_s_best", unit::samples_per_s, Better::higher, best->samples_per_s(), labels);
    // As host.decode's per-core figure: the rate with the most workers run over those workers,
    // so the scorer can share a node's cores among its GPUs.
    const auto most = std::max_element(mine.begin(), mine.end(), [](const LoaderPoint& a, const LoaderPoint& b) {
      return a.workers < b.workers;
    });
    ctx.add_value("samples_per_s_per_worker", unit::samples_per_s, Better::higher, most->samples_per_s() / most->workers,
                  {{"decoder", decoder}, {"workers", std::to_string(most->workers)}});
    if (gpus > 0) ctx.add_value("samples_per_s_per_gpu", unit::samples_per_s, Better::higher, best->samples_per_s() / gpus, labels);
  }
}

Outcome measure_dataloader(ProbeContext& ctx) {
  const ParamValues& p = ctx.params();
  const std::string python = p.text("python");
  std::string python_path;
  if (auto bad = find_python(python, python_path)) {
    const PythonRefusal refusal = python_refusal(python, *bad, p.given("python"));
    return refusal.bad_input ? Outcome::bad_input(refusal.reason) : Outcome::skipped(refusal.reason);
  }
  std::vector<int> asked;
  if (auto bad = parse_worker_list(p.text("workers"), asked)) return Outcome::bad_input("--workers " + *bad);
  const std::string script = loader_script_path();
  if (!fs::exists(script)) return Outcome::failed(fmt::format("the loader script is missing: {} (reinstall nodeaudit)", script));
  score::Profile profile;
  try {
    profile = pipeline::workload_profile(ctx);
  } catch (const std::exception& e) {
    return Outcome::bad_input(e.what());
  }
  const int cpus = cpus_for_this_process();
  const WorkerPlan workers = plan_workers(asked, cpus);
  const LevelShape shape = level_shape(ctx.level());
  const int batch = p.integer("batch") > 0 ? static_cast<int>(p.integer("batch")) : profile.training.micro_batch_per_gpu;
  const int warmup = 2;
  const auto files = std::max<std::uint64_t>(static_cast<std::uint64_t>(p.integer("files")),
                                             static_cast<std::uint64_t>(warmup + shape.batches) * static_cast<std::uint64_t>(batch));
  ctx.info()["profile"] = profile.name;
  ctx.info()["python"] = python_path;
  ctx.info()["batch"] = batch;
  ctx.info()["workers"] = workers.counts;
  if (!workers.capped.empty()) ctx.info()["workers_capped"] = workers.capped;
  ctx.info()["formula"] = "samples/s = batch x timed batches / wall s after a warm-up of 2 batches; CPU per sample = CPU s "
                          "of the main process and its workers over the window / samples";

  ScratchDir scratch;
  if (scratch.path.empty()) return Outcome::failed(fmt::format("cannot make a scratch directory in {}", fs::temp_directory_path().string()));
  // Preflight: a Python without torch is a skip found in a second, before any sample is made.
  if (auto stop = preflight(python_path, script, scratch, std::min(120.0, ctx.seconds_left()), [&] { return ctx.cancelled(); }))
    return *stop;
  const std::string parent = ctx.settings().data_dir.empty() ? scratch.path : ctx.settings().data_dir;
  const SampleSet samples = make_samples(ctx, profile, parent, files);
  if (samples.interrupted) return Outcome::interrupted();
  if (!samples.error.empty()) return Outcome::failed("making the samples: " + samples.error);
  ctx.info()["samples"] = {{"kind", samples.kind}, {"files", files}, {"mean_bytes", std::round(samples.mean_bytes)},
                           {"dir", ctx.settings().data_dir.empty() ? "a scratch directory under " + fs::temp_directory_path().string()
                                                                   : samples.data->dir()}};
  const std::string list = scratch.path + "/files.txt", report_path = scratch.path + "/report.jsonl", log = scratch.path + "/loader.log";
  {
    std::ofstream out(list);
    for (const std::string& f : samples.data->files()) out << f << "\n";
  }
  const std::vector<std::string> args = {
      python_path, script, "--files", list, "--kind", samples.kind, "--decoders", p.text("decoders"),
      "--workers", fmt::format("{}", fmt::join(workers.counts, ",")), "--batch", std::to_string(batch),
      "--batches", std::to_string(shape.batches), "--warmup-batches", std::to_string(warmup),
      "--max-seconds", fmt::format("{}", shape.max_seconds), "--pin-memory", p.boolean("pin-memory") ? "1" : "0",
      "--out", report_path};
  const double timeout_s = std::max(5.0, ctx.seconds_left() - 5);
  const GroupEnd end = run_in_own_group(args, log, timeout_s, [&] { return ctx.cancelled(); });
  const ParsedReport parsed = parse_loader_report(read_text(report_path));
  if (!parsed.report.loader.empty()) ctx.info()["loader"] = parsed.report.loader;
  if (!parsed.report.notes.empty()) ctx.info()["decoder_notes"] = parsed.report.notes;
  Nvml nvml;
  record_points(ctx, parsed.report, nvml.device_count());
  if (parsed.report.unavailable && end.exit_code == 0 && parsed.error.empty())
    return Outcome::skipped(framework_missing(python_path, *parsed.report.unavailable));
  return outcome_of(end, parsed, python_path, read_text(log), timeout_s, "point");
}

ProbeSpec host_dataloader_spec() {
  ProbeSpec spec;
  spec.id = "host.dataloader";
  spec.description = "PyTorch DataLoader over generated samples for the profile: samples/s and CPU per sample per "
                     "num_workers, the knee, per decoder (PIL, torchvision.io)";
  spec.params = {
      ParamSpec{.name = "workload", .type = ParamType::text, .default_by_level = same_at_all_levels(""),
                .help = "Workload profile NAME or FILE whose samples and batch to load (--profile is the run-wide "
                        "option); empty = the run's --profile, else cv-resnet50-imagenet"},
      ParamSpec{.name = "python", .type = ParamType::text, .default_by_level = same_at_all_levels("python3"),
                .help = "The Python the training uses (a path, or a name on PATH); it must import torch and torchvision"},
      ParamSpec{.name = "workers", .type = ParamType::text, .default_by_level = same_at_all_levels("1,2,4,8,16"),
                .help = "num_workers values to sweep (1..1024), capped at this process's CPUs"},
      ParamSpec{.name = "batch", .type = ParamType::integer, .default_by_level = same_at_all_levels("0"),
                .help = "Batch size; 0 = the profile's micro_batch_per_gpu", .min = 0, .max = 65536},
      ParamSpec{.name = "decoders", .type = ParamType::choice, .default_by_level = same_at_all_levels("pil,torchvision"),
                .help = "JPEG decoders to measure (profiles that decode JPEGs)", .choices = {"pil", "torchvision", "pil,torchvision"}},
      ParamSpec{.name = "pin-memory", .type = ParamType::boolean, .default_by_level = same_at_all_levels("true"),
                .help = "DataLoader pin_memory (not pinned without a CUDA device; recorded)"},
      ParamSpec{.name = "files", .type = ParamType::integer, .default_by_level = {"2048", "8192", "32768"},
                .help = "Sample files to generate (at least (2 + timed batches) x batch)", .min = 1, .max = 10000000},
  };
  spec.body = measure_dataloader;
  spec.check_places = io::places_check(true, false);
  spec.deadline_s = [](const ParamValues&, Level level) {
    return level == Level::quick ? 600.0 : level == Level::standard ? 1800.0 : 7200.0;
  };
  return spec;
}

const ProbeRegistrar host_dataloader_registrar{host_dataloader_spec()};

}  // namespace
}  // namespace nodeaudit::dataloader
