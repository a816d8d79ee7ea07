// The data, communication and training side of learn_from_records.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/learn/learned_detail.hpp"

namespace nodeaudit::learn::detail {

using nlohmann::json;

namespace {

struct LoaderTotals {
  double files = 0, bytes = 0, samples = 0;
  std::map<std::string, double> decoders;
  std::vector<json> memmaps;
};

LoaderTotals loader_totals(const JobRecords& records) {
  LoaderTotals t;
  auto add = [&](const json& record) {
    const json loader = record.value("loader", json::object());
    t.files += loader.value("files_opened", 0.0);
    t.bytes += loader.value("bytes_opened", 0.0);
    t.samples += loader.value("samples_fetched", 0.0);
    const json decoders = loader.value("decoders", json::object());
    for (const auto& [name, count] : decoders.items()) t.decoders[name] += count.get<double>();
    for (const auto& m : loader.value("memmaps", json::array()))
      if (std::none_of(t.memmaps.begin(), t.memmaps.end(), [&](const json& k) { return k["path"] == m["path"]; })) t.memmaps.push_back(m);
  };
  for (const auto& r : records.ranks) add(r);
  for (const auto& r : records.loaders) add(r);
  return t;
}

bool decodes_jpeg(const LoaderTotals& t, std::string& how) {
  double jpeg = 0, torchvision = 0;
  for (const auto& [name, count] : t.decoders) {
    if (name == "PIL:JPEG" || name == "PIL:MPO") jpeg += count;
    if (name.rfind("torchvision.io:", 0) == 0) torchvision += count;
  }
  if (jpeg > 0) how = fmt::format("measured: {:.0f} images opened by PIL as JPEG in the loader", jpeg);
  else if (torchvision > 0) how = fmt::format("measured: {:.0f} torchvision.io decode calls in the loader (JPEG assumed)", torchvision);
  else how = t.decoders.empty() ? "measured: no image decode seen in the loader" : fmt::format("measured: no JPEG decode seen ({})", json(t.decoders).dump());
  return jpeg > 0 || torchvision > 0;
}

double device_bytes(const json& lead, const LearnedProfileFields& f, std::string& how) {
  double bytes = 0, samples = 0;
  for (const auto& s : steps_in_phase(lead, "measured")) bytes += s.value("batch_bytes", 0.0), samples += s.value("batch_samples", 0.0);
  if (samples > 0) {
    how = "measured: bytes of the tensors in the DataLoader's batches, per sample";
    return bytes / samples;
  }
  const json inputs = lead.value("counted", json::object()).value("model_inputs", json::array());
  if (!inputs.empty() && f.micro_batch.value > 0) {
    how = "measured: bytes of the model's top-level input tensors, per sample";
    return inputs[0].value("bytes", 0.0) / f.micro_batch.value;
  }
  how = "assumption: no batch seen; the sample size";
  return f.sample_size.value;
}

}  // namespace

void learn_communication(const json& lead, const LearnedProfileFields& f, LearnedJob& job) {
  const json dist = lead.value("distributed", json::object());
  const double gradient_bytes = f.gradient_bytes_per_parameter.value * f.trainable_parameters.value;
  if (job.ddp) {
    job.all_reduce_bytes_per_step = gradient_bytes;
    job.all_reduce_how = "DistributedDataParallel: its reducer all-reduces every trainable gradient once per step (trainable parameters x gradient bytes)";
  } else if (dist.value("all_reduce_calls", 0) > 0 && job.steps_done > 0) {
    job.all_reduce_bytes_per_step = dist.value("all_reduce_bytes", 0.0) / job.steps_done;
    job.all_reduce_how = fmt::format("measured: {} torch.distributed.all_reduce calls over {} steps", dist.value("all_reduce_calls", 0), job.steps_done);
  } else {
    job.all_reduce_how = job.distributed ? "no gradient all-reduce seen (no DDP, no all_reduce call)" : "one process: no torch.distributed";
  }
}

void learn_data(const JobRecords& records, LearnedProfileFields& f, std::vector<std::string>& notes) {
  const json& lead = records.ranks.front();
  const LoaderTotals t = loader_totals(records);
  const json loaders = lead.value("dataloaders", json::array());
  const json dl = loaders.empty() ? json() : loaders[0];
  double dataset_samples = dl.is_object() && dl["dataset_len"].is_number() ? dl["dataset_len"].get<double>() : 0;
  if (t.files > 0 && t.samples > 0) {
    const double files_per_sample = t.files / t.samples;
    f.sample_size = {t.bytes / t.samples, fmt::format("measured: {:.0f} files opened in the loader's dataset fetches, {:.0f} bytes each on average, {:.2f} per sample",
                                                      t.files, t.bytes / t.files, files_per_sample)};
    f.access = files_per_sample >= 0.5 ? LearnedText{"small-files", "measured: a file opened per sample"}
                                       : LearnedText{"sequential-shards", fmt::format("measured: {:.2f} files opened per sample (shards)", files_per_sample)};
  } else if (!t.memmaps.empty() && f.tokens_per_sample) {
    const json& m = t.memmaps.front();
    f.sample_size = {f.tokens_per_sample->value * m.value("itemsize", 1.0),
                     fmt::format("measured: {:.0f} tokens per sample x {} bytes ({}) of the np.memmap", f.tokens_per_sample->value, m.value("itemsize", 1), m.value("dtype", "?"))};
    // learn sees the memmap being made, never the offsets the job reads it at: the order is assumed.
    f.access = {"memmap", fmt::format("measured: slices of np.memmap {}; their order is not observed (random windows assumed, the slower case)",
                                      m.value("path", "?"))};
    f.dataset_size = {m.value("file_bytes", 0.0), "measured: the np.memmap file's size"};
    dataset_samples = f.sample_size.value > 0 ? f.dataset_size.value / f.sample_size.value : 0;
  } else {
    std::string how;
    f.sample_size = {std::max(1.0, device_bytes(lead, f, how)), "assumption: no file read seen in the loader; the batch tensors' size per sample"};
    f.access = {"sequential-shards", "assumption: no file read seen in the loader"};
    notes.push_back("no file read seen in a dataset fetch nor an np.memmap: sample size and access are assumptions");
  }
  if (f.dataset_size.value <= 0) {
    if (dataset_samples > 0) f.dataset_size = {dataset_samples * f.sample_size.value, fmt::format("measured: len(dataset) {:.0f} x the sample size", dataset_samples)};
    else f.dataset_size = {f.sample_size.value * 1e6, "assumption: the data set's length was not seen; a million samples"};
  }
  std::string decode_how;
  f.decode = {decodes_jpeg(t, decode_how) ? "jpeg" : "none", decode_how};
  if (dl.is_object())
    f.loader = {"pytorch", fmt::format("measured: torch DataLoader, num_workers {}, prefetch_factor {}, pin_memory {}", dl.value("num_workers", 0),
                                       dl["prefetch_factor"].is_number() ? std::to_string(dl["prefetch_factor"].get<int>()) : "none", dl.value("pin_memory", false))};
  else
    f.loader = {"pytorch", "measured: no DataLoader; the training process's own Python code reads the data"};
  std::string device_how;
  const double device = device_bytes(lead, f, device_how);
  f.device_bytes_per_sample = {device, device_how};
  f.target_samples = {std::max(1.0, dataset_samples > 0 ? dataset_samples : f.dataset_size.value / f.sample_size.value),
                      "assumption: one pass over the data set; set the length of your run"};
}

void learn_training(const JobRecords& records, const LearnInputs& inputs, LearnedJob& job) {
  LearnedProfileFields& f = job.fields;
  if (f.decode.value == "jpeg" || f.access.value == "small-files")
    f.category = "data-throughput-intensive", f.category_how = "measured: " + (f.decode.value == "jpeg" ? std::string("JPEG decode in the loader") : "a file read per sample");
  else if (f.parameters.value > 0 && f.trainable_parameters.value < 0.1 * f.parameters.value)
    f.category = "memory-intensive", f.category_how = "measured: under 10% of the parameters are trainable";
  else
    f.category = "compute-intensive", f.category_how = "measured: no image decode, every parameter trained";
  double efficiency = 0.4;
  for (const auto& [category, value] : inputs.category_efficiency)
    if (category == f.category) efficiency = value;
  f.model_efficiency = {efficiency, fmt::format("default for the category: median of the shipped {} profiles; {}", f.category,
                                                job.gpu ? "measuring it needs this node's gpu.gemm figure (--result FILE)" : "not measurable without a GPU")};
  const auto gemm = inputs.gemm_tflops.find(f.dtype.value);
  if (job.gpu && gemm != inputs.gemm_tflops.end() && gemm->second > 0 && f.flops_per_sample.value > 0 && job.timing.samples_per_s > 0) {
    // Per GPU: each rank drives one GPU, so its FLOP rate is its samples/s share x FLOPs per sample.
    const double achieved = f.flops_per_sample.value * job.timing.samples_per_s / job.world_size;
    const double measured = achieved / (gemm->second * 1e12);
    f.model_efficiency = {std::min(1.0, measured),
                          fmt::format("measured: {:.4g} TFLOP/s per GPU (FLOPs per sample x samples/s per rank) over this node's gpu.gemm {:.4g} TFLOP/s [{}] in {}{}",
                                      achieved / 1e12, gemm->second, f.dtype.value, inputs.gemm_source, measured > 1 ? " (above 1: capped)" : "")};
  } else if (!inputs.gemm_tflops.empty() && !job.gpu) {
    f.model_efficiency.how += "; the job ran on the CPU, so --result's GEMM figure does not apply";
  }
  f.comm_overlap = job.ddp ? Learned{0.9, "assumption: DistributedDataParallel buckets the all-reduce behind backward (as the shipped profiles)"}
                           : Learned{0, job.distributed ? "measured: the job's all-reduce is not overlapped by DDP" : "one process: no gradient communication in this job"};
  std::vector<double> sizes, after;
  for (const auto& c : records.ranks.front().value("checkpoints", json::array()))
    if (c["bytes"].is_number()) sizes.push_back(c["bytes"].get<double>()), after.push_back(c.value("after_step", 0.0));
  if (!sizes.empty()) {
    f.checkpoint_size = Learned{median_of(sizes), fmt::format("measured: {} torch.save call(s), median size", sizes.size())};
    std::vector<double> gaps;
    for (std::size_t i = 1; i < after.size(); ++i) gaps.push_back(after[i] - after[i - 1]);
    const double steps_between = gaps.empty() ? std::max(1.0, after.front()) : median_of(gaps);
    f.checkpoint_interval_s = Learned{std::max(1.0, steps_between * job.timing.step_time_s),
                                      fmt::format("{}: every {:.0f} steps x the measured step time", gaps.empty() ? "assumption (one save seen)" : "measured", steps_between)};
  }
}

}  // namespace nodeaudit::learn::detail
