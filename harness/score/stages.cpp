// One function per resource of the balance model (shared/ARCHITECTURE.md, "The balance model").
// Each takes the profile's demand per step and divides it by the capacity measured in the result.
#include "harness/score/stages.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/core/figure_info.hpp"
#include "harness/core/units.hpp"
#include "harness/score/label_selectors.hpp"
#include "harness/score/resource_probes.hpp"

namespace nodeaudit::score {

using nlohmann::json;
namespace R = resource_figure;

namespace {

Stage make_stage(std::string resource, std::string demand_unit, std::string capacity_unit) {
  Stage stage;
  stage.resource = std::move(resource);
  stage.demand_unit = std::move(demand_unit);
  stage.capacity_unit = std::move(capacity_unit);
  return stage;
}

Stage not_measured(Stage stage, std::string why) {
  stage.not_judged = std::move(why);
  return stage;
}

std::string missing_metric(const std::string& id, const std::string& name, const LabelFilter& filter) {
  return fmt::format("{} has no {}{} metric", id, name, describe_filter(filter));
}

// The stage's time at a measured rate (demand / rate); a rate that is missing or not positive leaves
// the stage not measured, naming the figure that was looked for.
Stage timed_at_rate(Stage stage, const std::optional<Figure>& rate, const std::string& id, const std::string& name,
                    const LabelFilter& filter) {
  if (!rate || rate->value <= 0) return not_measured(stage, missing_metric(id, name, filter));
  stage.capacity = rate->value;
  stage.capacity_metric = rate->source;
  stage.datasheet = rate->datasheet;
  stage.time_s = stage.demand / rate->value;
  return stage;
}

}  // namespace

StepShape step_shape(const Profile& profile, const EnvFigures& env) {
  StepShape shape;
  shape.gpus = env.gpus;
  shape.samples_per_gpu = profile.samples_per_step_per_gpu();
  shape.samples_per_node = shape.samples_per_gpu * std::max(env.gpus, 1);
  return shape;
}

// step FLOPs / (measured GEMM rate for the dtype x model efficiency), slowest GPU.
Stage compute_stage(const Profile& profile, const json& result, const StepShape& shape) {
  const ResourceFigure& used = R::compute;
  Stage stage = make_stage("compute", "TFLOP per GPU", figure_info(used.probe, used.metric).unit);
  stage.demand = shape.samples_per_gpu * profile.flops_per_sample() / 1e12;
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured()) return not_measured(stage, probe.why);
  const LabelFilter filter{{"dtype", profile.model.dtype}};
  const auto gemm = slowest_gpu(*probe.probe, used.probe, used.metric, filter);
  if (!gemm || gemm->value <= 0) return not_measured(stage, missing_metric(used.probe, used.metric, filter));
  stage.capacity = gemm->value;
  stage.capacity_metric = gemm->source;
  stage.datasheet = gemm->datasheet;
  stage.time_s = profile.compute_time_s(stage.demand, gemm->value);
  stage.note = fmt::format("at {:.0f}% model efficiency: {:.1f} TFLOP/s achieved",
                           profile.training.model_efficiency * 100, gemm->value * profile.training.model_efficiency);
  return stage;
}

// Bytes of GPU memory traffic not hidden behind GEMMs (decode-phase inference) / measured copy bandwidth.
Stage gpu_memory_bandwidth_stage(const Profile& profile, const json& result, const StepShape& shape) {
  const ResourceFigure& used = R::gpu_memory_bandwidth;
  Stage stage = make_stage("gpu_memory_bandwidth", "GB per GPU", figure_info(used.probe, used.metric).unit);
  stage.demand = shape.samples_per_gpu * profile.model.memory_traffic_bytes_per_sample / 1e9;
  if (profile.model.memory_traffic_bytes_per_sample <= 0) {
    stage.needed = false;
    stage.note = "not modelled (memory_traffic_bytes_per_sample = 0): GEMMs hide memory traffic";
    return stage;
  }
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured()) return not_measured(stage, probe.why);
  const LabelFilter& filter = label_selector::copy_kernel;
  const auto bandwidth = slowest_gpu(*probe.probe, used.probe, used.metric, filter);
  return timed_at_rate(stage, bandwidth, used.probe, used.metric, filter);
}

namespace {

// Page cache when the dataset fits in free host memory, storage otherwise; falls back to the other
// kind (with a note) when only that one was measured.
std::optional<Figure> storage_figure(const json& probe, const std::string& id, const std::string& name,
                                     LabelFilter filter, bool fits_in_ram, std::string& note) {
  filter["cache"] = fits_in_ram ? "page" : "none";
  if (auto figure = best_series(probe, id, name, filter)) return figure;
  filter.erase("cache");
  auto figure = best_series(probe, id, name, filter);
  if (figure) {
    const std::string cache = figure->labels.value("cache", "");
    if (fits_in_ram && cache != "page")
      note = "dataset fits in free RAM but no page-cache figure was measured; storage rate used";
    if (!fits_in_ram && cache == "page")
      note = "only a page-cache figure was measured; the dataset does not fit in free RAM, so storage may be slower";
  }
  return figure;
}

}  // namespace

namespace {

// The page cache over a random-order data set larger than it, from a cold start: step by step, a read
// hits in the share of the data set cached so far; each miss adds `fill_bytes` (the sample and the
// kernel's read-around), less what of that was already there, until the cache holds `room_bytes`.
struct CacheWarmup {
  double mean_hit_share = 0;  // over the steps asked
  double end_share = 0;       // of the data set cached after them
  int steps_to_fill = 0;      // steps until 95% of the room is filled (0: not within 10^6 steps)
};

CacheWarmup cache_warmup(double dataset_bytes, double room_bytes, double fill_bytes, double samples_per_step,
                         const ColdRun& run) {
  CacheWarmup out;
  const double room = std::min(room_bytes, dataset_bytes);
  double cached = 0, hits = 0;
  const int last = run.warmup_steps + run.steps;
  for (int step = 1; step <= std::max(last, 1000000); ++step) {
    const double hit = cached / dataset_bytes;
    if (step > run.warmup_steps && step <= last) hits += hit;
    if (!out.steps_to_fill && cached >= 0.95 * room) out.steps_to_fill = step;
    if (step == last) out.end_share = hit;
    if (step >= last && out.steps_to_fill) break;
    const double misses = samples_per_step * (1 - hit);
    cached = std::min(room, cached + misses * fill_bytes * (1 - hit));
  }
  out.mean_hit_share = run.steps > 0 ? hits / run.steps : 0;
  return out;
}

}  // namespace

Stage storage_stage(const Profile& profile, const json& result, const StepShape& shape, const EnvFigures& env,
                    const std::optional<ColdRun>& cold_run, double job_resident_bytes) {
  Stage stage = make_stage("storage", "GB per node", "GB/s");
  const double sample_bytes = profile.data.sample_bytes;
  stage.demand = shape.samples_per_node * sample_bytes / 1e9;
  // Free memory for the page cache: the host's available RAM, no more than a memory cgroup's limit.
  std::optional<double> free_ram = env.ram_available_bytes;
  if (free_ram && env.limited && env.ram_total_bytes) free_ram = std::min(*free_ram, *env.ram_total_bytes);
  // The job's own processes take their memory from the same RAM (and the same cgroup limit).
  if (free_ram && job_resident_bytes > 0) free_ram = std::max(0.0, *free_ram - job_resident_bytes);
  const bool fits = free_ram && profile.data.dataset_bytes <= *free_ram;
  const bool sequential = profile.data.access == AccessPattern::sequential_shards;
  const ResourceFigure& used = storage_figure_for(sequential);
  const std::string id = used.probe;
  const ProbeState probe = probe_state(result, id);
  if (!probe.measured()) return not_measured(stage, probe.why);
  if (sequential) {
    const auto bandwidth =
        storage_figure(*probe.probe, id, used.metric, label_selector::sequential_read, fits, stage.note);
    if (!bandwidth || bandwidth->value <= 0)
      return not_measured(stage, missing_metric(id, used.metric, label_selector::sequential_read));
    stage.capacity = stage.capacity_gbps = bandwidth->value;
    stage.capacity_metric = bandwidth->source;
    stage.time_s = stage.demand / bandwidth->value;
    return stage;
  }
  // A memmap job's windows are only measured by reading them through a mapping (read=mmap); a
  // whole-file figure says nothing of its page faults, nor the other way round.
  const bool memmap = profile.data.access == AccessPattern::memmap;
  const LabelFilter& filter = memmap ? label_selector::memory_mapped_windows : label_selector::whole_files_read;
  const auto rate = storage_figure(*probe.probe, id, used.metric, filter, fits, stage.note);
  if (!rate || rate->value <= 0) return not_measured(stage, missing_metric(id, used.metric, filter));
  stage.demand = shape.samples_per_node;
  stage.demand_unit = "samples per node";
  stage.capacity = rate->value;
  stage.capacity_unit = figure_info(used.probe, used.metric).unit;
  stage.capacity_metric = rate->source;
  stage.capacity_gbps = rate->value * sample_bytes / 1e9;
  stage.time_s = shape.samples_per_node / rate->value;
  // A data set larger than the page cache, read in random order, is partly served from it once the
  // run is under way: the cache holds room/data set of it, and a uniformly random read finds its
  // sample there that often. Only the rest costs the storage's cold rate (a streamed shard order
  // cycles through the cache and finds nothing: not applied there).
  const bool cold_figure = rate->labels.value("cache", "") == "none";
  if (!fits && free_ram && cold_figure && profile.data.dataset_bytes > 0) {
    const double dataset = profile.data.dataset_bytes;
    const double steady = std::clamp(*free_ram / dataset, 0.0, 0.99);
    // What the cache gains per miss: a mapped window brings the kernel's read-around with it (measured
    // by --read mmap from a cold start); a file read whole brings the file.
    std::optional<double> fill_bytes;
    std::string fill_source = "the sample's bytes";
    if (!memmap) fill_bytes = sample_bytes;
    else if (const auto fill =
                 best_series(*probe.probe, id, "cache_fill_per_sample", label_selector::memory_mapped_windows_cold);
             fill && fill->value > 0)
      fill_bytes = fill->value, fill_source = fill->source;
    const std::string held = fmt::format("{:.3g} GB of {:.3g} GB{}", *free_ram / 1e9, dataset / 1e9,
                                         job_resident_bytes > 0 ? fmt::format(", the job's own processes holding {:.3g} GB beside it", job_resident_bytes / 1e9) : "");
    double cached = steady;
    std::string share_note;
    if (cold_run && fill_bytes) {
      const CacheWarmup w = cache_warmup(dataset, *free_ram, *fill_bytes, shape.samples_per_node, *cold_run);
      cached = w.mean_hit_share;
      share_note = fmt::format("steps {}-{} from a cold page cache: it serves {:.0f}% of the random reads over them, "
                               "filling to {:.0f}% of the data set by their end ({:.0f}% once full: {}; {} cached a miss, {})",
                               cold_run->warmup_steps + 1, cold_run->warmup_steps + cold_run->steps, 100 * cached,
                               100 * w.end_share, 100 * steady, held, format_bytes(*fill_bytes), fill_source);
    } else {
      share_note = fmt::format("the page cache holds {:.0f}% of the data set ({}) once the run is under way: "
                               "that share of the random reads hits it, the rest are read from storage", 100 * steady, held);
      if (fill_bytes) {
        const CacheWarmup w = cache_warmup(dataset, *free_ram, *fill_bytes, shape.samples_per_node, ColdRun{0, 1});
        share_note += w.steps_to_fill ? fmt::format(" (from a cold cache it fills in about {} steps, {} a miss)", w.steps_to_fill, format_bytes(*fill_bytes))
                                      : " (from a cold cache it takes over 10^6 steps to fill)";
      } else if (cold_run) {
        share_note += "; the cold start asked for is not judged: no storage.dataset cache_fill_per_sample [read=mmap, cache=none] figure "
                      "(nodeaudit run --only storage.dataset --profile JOB measures it)";
      }
    }
    // The storage's demand is the reads that miss; its capacity stays the figure measured.
    stage.demand *= 1 - cached;
    stage.time_s *= 1 - cached;
    stage.note = fmt::format("{}{}{}", stage.note, stage.note.empty() ? "" : "; ", share_note);
  }
  if (const auto knee = best_series(*probe.probe, id, "knee_workers", filter)) stage.knee_workers = knee->value;
  return stage;
}

namespace {

// A decode capacity in images/s per GPU and where it came from, or why there is none.
struct DecodeFigure {
  double per_gpu = 0;
  std::string source;
  std::string why;
};

// The rate of every core shared among the GPUs, or the per-core rate x the cores of one GPU.
DecodeFigure per_gpu_figure(const json& probe, const std::string& id, const std::string& per_gpu_name,
                            const std::string& per_core_name, const LabelFilter& filter, const StepShape& shape,
                            const EnvFigures& env) {
  DecodeFigure figure;
  if (const auto per_gpu = best_series(probe, id, per_gpu_name, filter)) {
    figure.per_gpu = per_gpu->value, figure.source = per_gpu->source;
  } else if (const auto per_core = best_series(probe, id, per_core_name, filter); per_core && env.cores && shape.gpus > 0) {
    const double cores_per_gpu = *env.cores / shape.gpus;
    figure.per_gpu = per_core->value * cores_per_gpu;
    figure.source = fmt::format("{} x {:.1f} cores per GPU", per_core->source, cores_per_gpu);
  } else {
    figure.why = shape.gpus > 0 ? missing_metric(id, per_gpu_name, filter) : id + ": no GPUs to share the cores among";
  }
  if (figure.per_gpu <= 0 && figure.why.empty()) figure.why = id + " measured 0 samples/s";
  return figure;
}

DecodeFigure native_decode(const json& result, const StepShape& shape, const EnvFigures& env) {
  const ProbeState probe = probe_state(result, R::native_decode.probe);
  if (!probe.measured()) return {0, "", probe.why};
  return per_gpu_figure(*probe.probe, R::native_decode.probe, R::native_decode.metric, R::native_decode_per_core.metric,
                        label_selector::full_decode_stage, shape, env);
}

// The DataLoader training scripts run: torchvision's ImageNet recipe decodes with PIL.
DecodeFigure framework_loader(const json& result, const StepShape& shape, const EnvFigures& env) {
  const ProbeState probe = probe_state(result, R::framework_loader.probe);
  if (!probe.measured()) return {0, "", probe.why};
  return per_gpu_figure(*probe.probe, R::framework_loader.probe, R::framework_loader.metric,
                        R::framework_loader_per_worker.metric, label_selector::pil_decoder, shape, env);
}

}  // namespace

// samples per step / decode rate of the cores available to one GPU: the framework loader's when
// the profile's loader is pytorch and it was measured, else the native decoder's (an upper bound
// for a framework loader, and said so).
Stage cpu_decode_stage(const Profile& profile, const json& result, const StepShape& shape, const EnvFigures& env) {
  Stage stage = make_stage("cpu_decode", "images per GPU", "images/s per GPU");
  stage.demand = shape.samples_per_gpu;
  if (profile.data.decode == DecodeKind::none) {
    stage.needed = false;
    stage.note = "no CPU decode (decode = none)";
    return stage;
  }
  const DecodeFigure native = native_decode(result, shape, env);
  DecodeFigure used = native;
  if (profile.data.loader == LoaderKind::pytorch) {
    const DecodeFigure framework = framework_loader(result, shape, env);
    if (framework.per_gpu > 0) {
      used = framework;
      if (native.per_gpu > 0) {
        stage.native_capacity = native.per_gpu;
        stage.note = fmt::format("measured on the framework loader (PyTorch DataLoader + PIL); the native decoder reaches "
                                 "{:.0f} images/s per GPU ({})", native.per_gpu, native.source);
      } else {
        stage.note = "measured on the framework loader (PyTorch DataLoader + PIL)";
      }
    } else if (native.per_gpu > 0) {
      stage.note = fmt::format("upper bound: native decoder; the framework loader was not measured ({})", framework.why);
      stage.upper_bound = fmt::format("upper bound: the native decoder's rate; the PyTorch DataLoader was not measured "
                                      "({})",
                                      framework.why);
    }
  }
  if (used.per_gpu <= 0) return not_measured(stage, used.why);
  stage.capacity = used.per_gpu;
  stage.capacity_metric = used.source;
  stage.time_s = stage.demand / stage.capacity;
  return stage;
}

// bytes per step / pinned H2D rate with all GPUs copying at once, slowest GPU.
Stage host_to_device_stage(const Profile& profile, const json& result, const StepShape& shape) {
  Stage stage = make_stage("host_to_device", "GB per GPU", "GB/s per GPU");
  stage.demand = shape.samples_per_gpu * profile.data.device_bytes_per_sample / 1e9;
  if (profile.data.device_bytes_per_sample <= 0) {
    stage.needed = false;
    stage.note = "no host-to-device copies (device_bytes_per_sample = 0)";
    return stage;
  }
  const ResourceFigure& used = R::host_to_device;
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured()) return not_measured(stage, probe.why);
  LabelFilter filter = label_selector::pinned_all_gpus_at_once;
  auto bandwidth = slowest_gpu(*probe.probe, used.probe, used.metric, filter);
  if (!bandwidth) {
    filter = label_selector::pinned_one_gpu_at_a_time;
    bandwidth = slowest_gpu(*probe.probe, used.probe, used.metric, filter);
    if (bandwidth) stage.note = "no concurrent-copy figure; one-GPU-at-a-time rate used (optimistic)";
  }
  return timed_at_rate(stage, bandwidth, used.probe, used.metric, filter);
}

namespace {

// The all-reduce series measured at the message size nearest (in ratio) to `bytes`, among the runs
// over `gpus` GPUs when the result labels them.
const json* nearest_allreduce(const json& probe, double bytes, int gpus) {
  auto series = select_metrics(probe, R::communication.metric, {{"gpus", std::to_string(gpus)}});
  if (series.empty()) series = select_metrics(probe, R::communication.metric, {});
  const json* nearest = nullptr;
  double best_distance = 0;
  for (const json* metric : series) {
    const std::string size = label_of(*metric, "size");
    if (size == "any") return metric;  // a bound that holds at every size (--target-gpus without a curve)
    double size_bytes = 0;
    try {
      size_bytes = std::stod(size);
    } catch (const std::exception&) {
      continue;
    }
    if (size_bytes <= 0) continue;
    const double distance = std::fabs(std::log(size_bytes / bytes));
    if (!nearest || distance < best_distance) {
      nearest = metric;
      best_distance = distance;
    }
  }
  return nearest;
}

}  // namespace

// gradient bytes x bus factor / all-reduce bus bandwidth at that size; the profile's overlap share
// is hidden behind compute. Full sharding moves 1.5x an all-reduce per micro-batch (all-gather of the
// weights for forward and backward, reduce-scatter of the gradients), at about all-reduce busbw.
Stage communication_stage(const Profile& profile, const json& result, const StepShape& shape) {
  Stage stage = make_stage("communication", "GB on the bus per GPU", "GB/s busbw");
  const double gradient_bytes = profile.gradient_bytes();
  if (shape.gpus == 0) return not_measured(stage, "no GPUs in env.gpus");
  if (shape.gpus == 1 || gradient_bytes <= 0) {
    stage.needed = false;
    stage.note =
        shape.gpus == 1 ? "one GPU: no gradient all-reduce" : "no trainable parameters: no gradient all-reduce";
    return stage;
  }
  const double gpus = shape.gpus;
  const double collectives =
      profile.training.sharding == Sharding::full ? 1.5 * profile.training.gradient_accumulation : 1.0;
  stage.demand = gradient_bytes * 2 * (gpus - 1) / gpus * collectives / 1e9;
  const ResourceFigure& used = R::communication;
  const ProbeState probe = probe_state(result, used.probe);
  if (!probe.measured()) return not_measured(stage, probe.why);
  const json* nearest = nearest_allreduce(*probe.probe, gradient_bytes, shape.gpus);
  if (!nearest || metric_median(*nearest) <= 0)
    return not_measured(stage, fmt::format("{} has no {} [size] metric", used.probe, used.metric));
  stage.capacity = metric_median(*nearest);
  stage.capacity_metric = fmt::format("{} {} [size={}, gpus={}] median (nearest to {:.0f} MB of gradients)", used.probe,
                                      used.metric, label_of(*nearest, "size"), label_of(*nearest, "gpus"), gradient_bytes / 1e6);
  if (is_datasheet(*probe.probe)) {
    const std::string size = label_of(*nearest, "size");
    stage.capacity_metric =
        size == "any" ? fmt::format("{}, a bound at any size", datasheet_source(*probe.probe, *nearest))
                      : fmt::format("{}, at {} B (nearest to {:.0f} MB of gradients)",
                                    datasheet_source(*probe.probe, *nearest), size, gradient_bytes / 1e6);
    stage.datasheet = true;
  }
  stage.time_s = stage.demand / stage.capacity;
  stage.exposed_time_s = stage.time_s * (1 - profile.training.comm_overlap);
  stage.note = fmt::format("{:.0f}% overlapped with compute", profile.training.comm_overlap * 100);
  return stage;
}

json to_json(const Stage& stage, double step_time_s) {
  json out{{"resource", stage.resource}, {"needed", stage.needed}};
  out["demand"] = {{"value", stage.demand}, {"unit", stage.demand_unit}};
  if (!stage.note.empty()) out["note"] = stage.note;
  if (!stage.needed) return out;
  if (stage.not_judged) {
    out["not_judged"] = *stage.not_judged;
    return out;
  }
  out["capacity"] = {{"value", stage.capacity}, {"unit", stage.capacity_unit}, {"metric", stage.capacity_metric}};
  if (stage.datasheet) out["capacity"]["basis"] = gpu_table_label;
  if (stage.upper_bound) out["capacity"]["basis"] = *stage.upper_bound;
  out["time_per_step_s"] = stage.time_s;
  if (stage.resource == "communication") out["exposed_time_per_step_s"] = stage.exposed_time_s;
  if (step_time_s > 0)
    out["share_of_step"] = (stage.resource == "communication" ? stage.exposed_time_s : stage.time_s) / step_time_s;
  if (stage.knee_workers) out["knee_workers"] = *stage.knee_workers;
  return out;
}

}  // namespace nodeaudit::score
