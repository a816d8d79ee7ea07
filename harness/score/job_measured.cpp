#include "harness/score/job_measured.hpp"

#include <cmath>

#include <fmt/format.h>

#include "harness/core/errors.hpp"

namespace nodeaudit::score {

using nlohmann::json;

double JobMeasured::loader_cpu_s() const {
  // Without workers the loader runs inside the rank: its time there is the data wait.
  if (loader_workers == 0) return data_wait_s;
  return std::max(0.0, tree_cpu_s - ranks_cpu_s);
}

json to_json(const JobMeasured& m) {
  return {{"step_s", m.step_s},
          {"compute_s", m.compute_s},
          {"data_wait_s", m.data_wait_s},
          {"fetch_s", m.fetch_s},
          {"checkpoint_s", m.checkpoint_s},
          {"samples_per_step", m.samples_per_step},
          {"world_size", m.world_size},
          {"loader_workers", m.loader_workers},
          {"tree_cpu_s", m.tree_cpu_s},
          {"ranks_cpu_s", m.ranks_cpu_s},
          {"loader_cpu_s", m.loader_cpu_s()},
          {"cores_available", m.cores_available},
          {"gpu_model", m.gpu_model},
          {"all_reduce_bytes_per_step", m.all_reduce_bytes_per_step},
          {"resident_bytes", m.resident_bytes}};
}

namespace {

double number_in(const json& block, const char* key, double lo, double hi, const std::string& source) {
  const std::string what = fmt::format("{}: job_measured.{}", source, key);
  if (!block.contains(key) || !block[key].is_number())
    throw UsageError(what, "missing or not a number; the job result must come from `nodeaudit learn` of this version");
  const double value = block[key].get<double>();
  if (!std::isfinite(value) || value < lo || value > hi)
    throw UsageError(what + " " + fmt::format("{}", value), fmt::format("must be from {} to {}", lo, hi));
  return value;
}

}  // namespace

JobMeasured job_measured_from_json(const json& block, const std::string& source) {
  if (!block.is_object())
    throw UsageError(source, "holds no job_measured block in its learn.job entry; learn the job again with this nodeaudit (`nodeaudit learn -- COMMAND`)");
  constexpr double day_s = 86400, huge = 1e18;
  JobMeasured m;
  m.step_s = number_in(block, "step_s", 0, day_s, source);
  m.compute_s = number_in(block, "compute_s", 0, day_s, source);
  m.data_wait_s = number_in(block, "data_wait_s", 0, day_s, source);
  m.checkpoint_s = number_in(block, "checkpoint_s", 0, day_s, source);
  // A learn result written before fetch_s was measured: no floor for the data wait (0).
  if (block.contains("fetch_s")) m.fetch_s = number_in(block, "fetch_s", 0, day_s, source);
  m.samples_per_step = number_in(block, "samples_per_step", 0, huge, source);
  m.world_size = static_cast<int>(number_in(block, "world_size", 1, 1e6, source));
  m.loader_workers = static_cast<int>(number_in(block, "loader_workers", 0, 1e4, source));
  m.tree_cpu_s = number_in(block, "tree_cpu_s", 0, day_s * 1e4, source);
  m.ranks_cpu_s = number_in(block, "ranks_cpu_s", 0, day_s * 1e4, source);
  m.cores_available = number_in(block, "cores_available", 0, 1e5, source);
  m.all_reduce_bytes_per_step = number_in(block, "all_reduce_bytes_per_step", 0, huge, source);
  // A learn result written before the tree's memory was read: none known (0).
  if (block.contains("resident_bytes")) m.resident_bytes = number_in(block, "resident_bytes", 0, huge, source);
  if (block.contains("gpu_model") && block["gpu_model"].is_string()) m.gpu_model = block["gpu_model"].get<std::string>();
  if (!(m.step_s > 0)) throw UsageError(source + ": job_measured.step_s 0", "the job took no measured step; learn it again to completion");
  return m;
}

}  // namespace nodeaudit::score
