// The timing and model side of learn_from_records; the data side is in learned_data.cpp.
#include "harness/learn/learned_job.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/learn/learned_detail.hpp"

namespace nodeaudit::learn {

using nlohmann::json;

namespace detail {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<json> steps_in_phase(const json& rank, const std::string& phase) {
  std::vector<json> out;
  for (const auto& s : rank.value("timeline", json::array()))
    if (s.value("phase", "") == phase) out.push_back(s);
  return out;
}

// Samples one rank took in a step: the DataLoader's batches when it used one, else the model's
// top-level input rows x backward calls.
double step_samples(const json& step, double micro_batch) {
  const double from_batches = step.value("batch_samples", 0.0);
  return from_batches > 0 ? from_batches : micro_batch * step.value("backward_calls", 0.0);
}

}  // namespace detail

namespace {

using namespace detail;

void learn_timing(const json& lead, const LearnedProfileFields& f, int world_size, LearnedTiming& t) {
  double total = 0, wait = 0, backward = 0, optimizer = 0, checkpoint = 0, samples = 0;
  for (const auto& s : steps_in_phase(lead, "measured")) {
    const double d = s.value("duration_s", 0.0);
    t.measured_step_s.push_back(d);
    total += d;
    wait += s.value("data_wait_s", 0.0);
    backward += s.value("backward_s", 0.0);
    optimizer += s.value("optimizer_s", 0.0);
    checkpoint += s.value("checkpoint_s", 0.0);
    samples += step_samples(s, f.micro_batch.value);
    t.data_wait_share_per_step.push_back(d > 0 ? s.value("data_wait_s", 0.0) / d : 0);
  }
  if (t.measured_step_s.empty() || total <= 0) return;
  t.step_time_s = median_of(t.measured_step_s);
  t.samples_per_step = samples / static_cast<double>(t.measured_step_s.size());
  t.samples_per_s = samples * world_size / total;
  t.shares = {wait / total, backward / total, optimizer / total, checkpoint / total, 0};
  t.shares.other = std::max(0.0, 1 - t.shares.data_wait - t.shares.backward - t.shares.optimizer - t.shares.checkpoint);
}

// Sums over the optimizers the lead rank stepped.
struct OptimizerTotals {
  double parameters = 0, trainable = 0, param_bytes = 0, grad_bytes = 0, grad_elements = 0, state_bytes = 0;
  std::vector<std::string> classes, grad_dtypes;
};

OptimizerTotals optimizer_totals(const json& lead) {
  OptimizerTotals o;
  for (const auto& opt : lead.value("optimizers", json::array())) {
    o.parameters += opt.value("parameters", 0.0);
    o.trainable += opt.value("trainable_parameters", 0.0);
    o.param_bytes += opt.value("param_bytes", 0.0);
    o.grad_bytes += opt.value("grad_bytes", 0.0);
    o.grad_elements += opt.value("grad_elements", 0.0);
    o.state_bytes += opt.value("state_bytes", 0.0);
    o.classes.push_back(opt.value("class", "?"));
    for (const auto& d : opt.value("grad_dtypes", json::array())) o.grad_dtypes.push_back(d.get<std::string>());
  }
  return o;
}

std::string profile_optimizer(const OptimizerTotals& o) {
  for (const auto& c : o.classes)
    if (c == "Adam" || c == "AdamW" || c == "FusedAdam") return "adamw";
  for (const auto& c : o.classes)
    if (c == "SGD") return "sgd";
  return o.state_bytes >= 1.5 * o.param_bytes ? "adamw" : "sgd";
}

void learn_parameters(const json& lead, LearnedProfileFields& f) {
  const OptimizerTotals o = optimizer_totals(lead);
  const std::string classes = fmt::format("{}", fmt::join(o.classes, " + "));
  const json counted = lead.value("counted", json::object());
  const double model_parameters = counted.value("model_parameters", 0.0);
  if (model_parameters >= o.trainable && model_parameters > 0)
    f.parameters = {model_parameters, "measured: the parameters of the modules the job called at top level"};
  else
    f.parameters = {o.trainable, "measured: the optimizer's param groups (no top-level module seen)"};
  f.trainable_parameters = {o.trainable, fmt::format("measured: parameters with requires_grad in the {} param groups", classes)};
  f.optimizer = {profile_optimizer(o), fmt::format("measured: {} (this field only sets the default below, which is given)", classes)};
  if (o.trainable > 0)
    f.bytes_per_parameter = {(o.param_bytes + o.grad_bytes + o.state_bytes) / o.trainable,
                             fmt::format("measured: weights {:.0f} + gradients {:.0f} + optimizer state {:.0f} bytes allocated after the first step, per trainable parameter",
                                         o.param_bytes, o.grad_bytes, o.state_bytes)};
  if (o.grad_elements > 0)
    f.gradient_bytes_per_parameter = {o.grad_bytes / o.grad_elements,
                                      fmt::format("measured: the gradients' dtype ({})", fmt::join(o.grad_dtypes, ", "))};
}

void learn_batch_shape(const json& lead, LearnedProfileFields& f, std::vector<std::string>& notes) {
  const auto measured = steps_in_phase(lead, "measured");
  std::vector<double> calls, rows_per_batch;
  for (const auto& s : measured) {
    calls.push_back(s.value("backward_calls", 0.0));
    if (s.value("batches", 0.0) > 0) rows_per_batch.push_back(s.value("batch_samples", 0.0) / s.value("batches", 1.0));
  }
  const double accumulation = std::max(1.0, std::round(median_of(calls)));
  f.accumulation = {accumulation, "measured: backward calls per optimizer step (median of the measured steps)"};
  const json inputs = lead.value("counted", json::object()).value("model_inputs", json::array());
  if (!rows_per_batch.empty() && median_of(rows_per_batch) > 0) {
    f.micro_batch = {median_of(rows_per_batch), "measured: rows of the DataLoader's batches"};
  } else if (!inputs.empty() && !inputs[0]["shape"].empty()) {
    f.micro_batch = {inputs[0]["shape"][0].get<double>(), "measured: leading dimension of the model's top-level input"};
  } else {
    f.micro_batch = {1, "assumption: neither a DataLoader batch nor the model's input was seen"};
    notes.push_back("micro-batch not seen (no DataLoader batch, no top-level module call in the counted step): 1 assumed");
  }
  if (!inputs.empty() && inputs[0]["shape"].size() == 2 && inputs[0].value("dtype", "").find("int") != std::string::npos)
    f.tokens_per_sample = Learned{inputs[0]["shape"][1].get<double>(), "measured: the model's input is token ids, this many per row"};
}

std::string matmul_dtype(const json& counted, bool gpu) {
  std::string best = "fp32";
  long most = -1;
  const json dtypes = counted.value("matmul_dtypes", json::object());
  for (const auto& [dtype, calls] : dtypes.items())
    if (calls.get<long>() > most) most = calls.get<long>(), best = dtype;
  if (best == "fp32" && gpu && counted.value("tf32", false)) return "tf32";
  return best;
}

void learn_compute(const json& lead, bool gpu, bool compiled, LearnedProfileFields& f, std::vector<std::string>& notes) {
  const json counted = lead.value("counted", json::object());
  if (counted.empty()) return;
  const auto steps = counted.value("steps", json::array({0, 0}));
  double samples = 0;
  for (const auto& s : steps_in_phase(lead, "counted")) samples += step_samples(s, f.micro_batch.value);
  const double flops = counted.value("flops", 0.0);
  if (samples > 0 && flops > 0)
    f.flops_per_sample = {flops / samples, fmt::format("measured: PyTorch's FLOP counter over step{} {} (forward, backward and optimizer), {:.4g} FLOP / {:.0f} samples",
                                                       steps[0] == steps[1] ? "" : "s", steps[0] == steps[1] ? fmt::format("{}", steps[0].get<int>()) : fmt::format("{}-{}", steps[0].get<int>(), steps[1].get<int>()), flops, samples)};
  else
    notes.push_back(compiled ? "no FLOPs counted: the torch.compile'd model runs compiled kernels the FLOP counter does not see"
                             : "no FLOPs counted in the counted step (no matmul or convolution ran through PyTorch's dispatcher)");
  const auto dtype_calls = counted.value("matmul_dtypes", json::object());
  f.dtype = {matmul_dtype(counted, gpu), dtype_calls.empty() ? "assumption: no matmul seen; fp32"
                                                              : fmt::format("measured: the dtype of the matmul and convolution inputs ({})", dtype_calls.dump())};
  const auto per_micro = counted.value("activation_bytes_per_micro_batch", json::array());
  double most = 0;
  for (const auto& b : per_micro) most = std::max(most, b.get<double>());
  const json gpu_info = lead.value("gpu", json());
  if (gpu && gpu_info.is_object()) {
    // Frozen parameters are resident too (weights only), at the trained weights' bytes per parameter.
    const OptimizerTotals o = optimizer_totals(lead);
    const double frozen = std::max(0.0, f.parameters.value - f.trainable_parameters.value);
    const double frozen_bytes = o.trainable > 0 ? frozen * o.param_bytes / o.trainable : 0;
    const double state = f.bytes_per_parameter.value * f.trainable_parameters.value + frozen_bytes;
    const double peak = gpu_info.value("peak_allocated_bytes", 0.0);
    f.activation_bytes_per_sample = {std::max(0.0, peak - state) / f.micro_batch.value,
                                     fmt::format("measured: peak allocated {:.4g} bytes minus model state {:.4g} (frozen weights {:.4g} of it), per sample of a micro-batch",
                                                 peak, state, frozen_bytes)};
  } else if (most > 0) {
    f.activation_bytes_per_sample = {most / f.micro_batch.value,
                                     "measured: autograd's saved tensors of the largest micro-batch in the counted step (CPU), per sample"};
  } else {
    f.activation_bytes_per_sample = {0, compiled ? "not measured: a torch.compile'd model's saved tensors are not hooked on a CPU" : "not measured: no saved tensors seen"};
  }
}

}  // namespace

LearnedJob learn_from_records(const JobRecords& records, const LearnInputs& inputs) {
  LearnedJob job;
  job.steps_needed = inputs.warmup + inputs.measured + inputs.counted;
  job.warmup = inputs.warmup, job.measured = inputs.measured, job.counted = inputs.counted;
  job.steps_done = records.steps_done();
  job.world_size = std::max(1, records.world_size());
  job.complete = !records.ranks.empty() && records.ranks_done() >= job.world_size;
  if (records.ranks.empty()) return job;
  const json& lead = records.ranks.front();
  const json dist = lead.value("distributed", json::object());
  job.distributed = dist.value("initialized", false);
  job.ddp = dist.value("ddp", false);
  job.backend = dist.value("backend", "");
  job.compiled = lead.value("compiled", false);
  job.gpu = lead.contains("gpu") && lead["gpu"].is_object();
  LearnedProfileFields& f = job.fields;
  learn_parameters(lead, f);
  learn_batch_shape(lead, f, job.notes);
  learn_compute(lead, job.gpu, job.compiled, f, job.notes);
  learn_timing(lead, f, job.world_size, job.timing);
  for (const auto& s : steps_in_phase(lead, "measured"))
    if (s.value("began_at", "") == "process start")
      job.notes.push_back(fmt::format("measured step {} began at the process's start (no DataLoader batch before it): the "
                                      "interpreter's start-up is in it; --warmup 1 or more leaves it out", s.value("step", 0)));
  learn_communication(lead, f, job);
  learn_data(records, f, job.notes);
  learn_training(records, inputs, job);
  return job;
}

}  // namespace nodeaudit::learn
