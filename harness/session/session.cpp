#include "harness/session/session.hpp"

#include <unistd.h>

#include "harness/core/result.hpp"
#include "harness/core/rounds.hpp"
#include "harness/node/disturbance.hpp"
#include "harness/score/step_prediction.hpp"

namespace nodeaudit::session {

namespace {
const char* const not_sampled_in_rank = "not sampled: the probe ran inside an MPI rank";
}  // namespace

Session::Session(RunSettings settings, std::optional<int> mpi_rank, const std::atomic<bool>& interrupt,
                 const Nvml* nvml, std::string telemetry_csv)
    : settings_(std::move(settings)),
      mpi_rank_(mpi_rank),
      interrupt_(interrupt),
      nvml_(nvml),
      telemetry_csv_(std::move(telemetry_csv)) {}

void Session::open(nlohmann::json doc, const std::optional<OutPath>& out) {
  doc_ = std::move(doc);
  if (out) result_file_ = ResultFile(*out, doc_, 2);
}

void Session::keep() const {
  result_file_.write(doc_);
}

ProbeContext::EntryKeeper Session::partial_entry_writer(nlohmann::json probes_so_far, bool note_telemetry) const {
  if (!result_file_.has_file()) return {};
  nlohmann::json doc_so_far = doc_;
  doc_so_far["probes"] = std::move(probes_so_far);
  return [doc_so_far = std::move(doc_so_far), result_file = result_file_, note_telemetry](const nlohmann::json& entry) {
    nlohmann::json doc = doc_so_far;
    nlohmann::json kept = entry;
    if (note_telemetry) kept["telemetry"] = {{"note", not_sampled_in_rank}};
    hoist_multinode(doc, kept);
    doc["probes"].push_back(std::move(kept));
    result_file.write(doc);
  };
}

RunSettings Session::settings_for(const ProbeSpec& spec) const {
  RunSettings settings = settings_;
  if (step_demand_ && takes_step_demand(spec)) settings.step_demand = step_demand_;
  return settings;
}

nlohmann::json Session::run_entry(const ProbeSpec& spec, Placement placement, const EntryRequest& request) const {
  switch (placement) {
    case Placement::child: return entry_in_child(spec, request);
    case Placement::in_process: return entry_in_process(spec, request);
    case Placement::mpi_rank: return entry_as_mpi_rank(spec, request);
  }
  return entry_in_process(spec, request);
}

nlohmann::json Session::entry_in_child(const ProbeSpec& spec, const EntryRequest& request) const {
  const IsolationOptions isolation{self_exe_path(), settings_for(spec), nvml_, 0.5, telemetry_csv_, 5.0};
  return run_probe_isolated(spec, request.param_texts, isolation, interrupt_, request.progress);
}

// The probe measured `rounds` times in this process (stopping at the first round that is not ok),
// pooled by merge_rounds. With `judge_foreign_load` each round records the load of other processes;
// a child of `run` is judged from outside by its parent instead.
nlohmann::json Session::entry_in_process(const ProbeSpec& spec, const EntryRequest& request) const {
  const RunSettings settings = settings_for(spec);
  const ParamValues params = resolve_params(spec.params, request.param_texts, settings.level);
  const double deadline_s = request.deadline_s > 0 ? request.deadline_s : probe_deadline_s(spec, params, settings);
  std::vector<nlohmann::json> entries;
  for (int round = 0; round < request.rounds && (round == 0 || !interrupt_.load()); ++round) {
    const HostLoadReading before = read_host_load();
    RunSettings this_round = settings;
    if (request.rounds > 1) this_round.round_index = round;  // a child of `run` keeps the index `run` gave it
    nlohmann::json entry = run_probe_in_process(spec, params, this_round, interrupt_, deadline_s, request.keeper);
    score::add_step_prediction(entry);  // after the measurement: a probe never calls the scorer
    if (request.judge_foreign_load) {
      entry["disturbance"] =
          judge_disturbance(before, read_host_load(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
      entry["disturbed"] = entry["disturbance"]["disturbed"];
    }
    const bool ok = entry.value("status", "") == "ok";
    entries.push_back(std::move(entry));
    if (!ok) break;
  }
  return merge_rounds(entries, request.rounds);
}

// Under an MPI launcher every rank runs the plan. Probes that join an MPI job run in this process
// (a child could not MPI_Init a second time for the next probe), each still under its own
// watchdogs; the others measure one node and are recorded as skipped.
nlohmann::json Session::entry_as_mpi_rank(const ProbeSpec& spec, const EntryRequest& request) const {
  if (!spec.across_mpi_ranks)
    return probe_entry(
        {.id = spec.id,
         .outcome = Outcome::skipped("measures one node, not an MPI job: run `nodeaudit run` without mpirun for it")});
  const RunSettings settings = settings_for(spec);
  const ParamValues params = resolve_params(spec.params, request.param_texts, settings.level);
  nlohmann::json entry = run_probe_in_process(spec, params, settings, interrupt_,
                                              probe_deadline_s(spec, params, settings), request.keeper);
  entry["telemetry"] = {{"note", not_sampled_in_rank}};
  return entry;
}

}  // namespace nodeaudit::session
