#include "harness/learn/job_measurement.hpp"

#include <algorithm>
#include <numeric>

#include "harness/score/stages.hpp"

namespace nodeaudit::learn {

using nlohmann::json;

namespace {

double mean_of(const std::vector<double>& values) {
  return values.empty() ? 0 : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// The mean of `key` over a rank's measured steps.
double measured_mean(const json& rank, const char* key) {
  std::vector<double> values;
  for (const auto& s : rank.value("timeline", json::array()))
    if (s.value("phase", "") == "measured") values.push_back(s.value(key, 0.0));
  return mean_of(values);
}

int loader_workers(const json& lead) {
  int workers = 0;  // the training DataLoader: the one with the most workers the lead rank made
  for (const auto& dl : lead.value("dataloaders", json::array()))
    if (dl.is_object() && dl["num_workers"].is_number_integer()) workers = std::max(workers, dl["num_workers"].get<int>());
  return workers;
}

}  // namespace

score::JobMeasured job_measured(const LearnedJob& job, const JobRun& run, const JobLoad& load, const json& env) {
  score::JobMeasured m;
  if (run.records.ranks.empty()) return m;
  const json& lead = run.records.ranks.front();
  m.step_s = measured_mean(lead, "duration_s");
  m.data_wait_s = measured_mean(lead, "data_wait_s");
  m.checkpoint_s = measured_mean(lead, "checkpoint_s");
  m.fetch_s = std::min(m.data_wait_s, measured_mean(lead, "fetch_cpu_s"));
  m.compute_s = std::max(0.0, m.step_s - m.data_wait_s - m.checkpoint_s);
  m.world_size = std::max(job.world_size, 1);
  m.samples_per_step = job.timing.samples_per_step * m.world_size;
  m.loader_workers = loader_workers(lead);
  for (const auto& rank : run.records.ranks) m.ranks_cpu_s += measured_mean(rank, "main_cpu_s");
  m.tree_cpu_s = mean_of(load.cpu_cores) * m.step_s;
  m.cores_available = score::job_cores(json{{"env", env}}).value_or(0);
  if (env.contains("gpus") && env["gpus"].is_array() && !env["gpus"].empty() && job.gpu)
    m.gpu_model = env["gpus"][0].value("name", "");
  m.all_reduce_bytes_per_step = job.all_reduce_bytes_per_step;
  if (!load.resident_bytes.empty()) m.resident_bytes = *std::max_element(load.resident_bytes.begin(), load.resident_bytes.end());
  return m;
}

}  // namespace nodeaudit::learn
