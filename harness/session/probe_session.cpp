// `probe ID`: one probe in this process, for three callers: the user (rounds here, the result
// printed and written with --out), `run`'s isolated child (one round, the entry handed back through
// --child-out), and a rank of an MPI job (rank 0 writes and prints for the job).
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/core/table.hpp"
#include "harness/node/disturbance.hpp"
#include "harness/node/env.hpp"
#include "harness/node/mpi_env.hpp"
#include "harness/node/nvml.hpp"
#include "harness/node/slurm_step.hpp"
#include "harness/session/exit_codes.hpp"
#include "harness/session/session.hpp"

namespace nodeaudit::session {
namespace {

int probe_exit_code(Status status) {
  if (status == Status::interrupted) return exit_interrupted;
  return status == Status::ok || status == Status::skipped ? exit_ok : exit_fail;
}

// The settings of this probe: the ones `run` gave its child as they were, else the user's options
// checked here. `rounds` is set to the rounds measured in this process.
RunSettings probe_settings(const ProbeSpec& spec, const ProbeRequest& request, const std::optional<int>& mpi_rank,
                           std::unique_ptr<Nvml>& nvml, int& rounds) {
  const bool child = !request.child_out.empty();
  RunSettings settings;
  if (child) {
    die_with_parent(request.child_out, 1.2);
    settings = RunSettings::from_json(nlohmann::json::parse(request.settings_json));
  } else {
    nvml = std::make_unique<Nvml>();
    settings = make_settings(request.common, nvml->device_count(), nvml->why_unavailable());
  }
  // Checks every parameter before anything else is judged (resolved again where the probe runs).
  (void)resolve_params(spec.params, request.given, settings.level);
  if (const auto step = child ? std::nullopt : slurm_tasks_without_mpi(std::getenv))
    if (auto refusal = slurm_tasks_refusal(*step, spec.across_mpi_ranks))
      throw UsageError("probe " + spec.id + " under srun", *refusal);
  // The child of `run` is one round (`run` repeats it); so is an MPI rank (see run_session.cpp).
  const int requested_rounds = child ? 1 : rounds_for(request.common, settings.level);
  if (mpi_rank && !request.common.rounds.empty() && requested_rounds > 1)
    throw UsageError("--rounds " + request.common.rounds,
                     "is not supported under an MPI launcher yet; run the MPI probes without it");
  rounds = mpi_rank ? 1 : requested_rounds;
  if (!child && level_shares_budget(settings.level)) settings.rounds_sharing_budget = rounds;
  return settings;
}

// The user's probe ends here: its entry in the result document, written with --out (rank 0 of an
// MPI job has held the file from the start), and printed.
int finish_probe(Session& session, const ProbeSpec& spec, const ProbeRequest& request, nlohmann::json entry,
                 const std::optional<OutPath>& out, const std::function<nlohmann::json()>& new_doc) {
  if (entry.value("input_error", false)) {
    if (session.has_file()) std::filesystem::remove(session.out_path());  // this run's own file: bad input leaves none
    throw UsageError(spec.id, entry.value("reason", "bad input"));
  }
  const Status status = parse_status(entry["status"]);
  entry["telemetry"] = nlohmann::json::object();
  const bool opened = session.has_file() || !session.document().is_null();
  nlohmann::json doc = opened ? session.document() : new_doc();
  hoist_multinode(doc, entry);  // the job's hosts, ranks and GPUs: a top-level block
  doc["probes"].push_back(entry);
  doc["finished_at"] = utc_now_iso8601();
  if (session.has_file()) {
    session.document() = std::move(doc);
    session.keep();
  } else {
    session.open(std::move(doc), out);
  }
  const bool json_out = request.common.format == "json";
  if (json_out)
    std::cout << session.document().dump(2) << "\n";
  else
    std::cout << render_probe(entry);
  // With --format json the entry's `disturbed` and `evidence` say it; stdout stays one document.
  if (!json_out) std::cout << disturbance_warning(entry);
  if (session.has_file() && !json_out)
    std::cout << "result written to " << session.out_path() << where_written(session.mpi_rank()) << "\n";
  return probe_exit_code(status);
}

}  // namespace

int probe_session(const ProbeSpec& spec, const ProbeRequest& request) {
  const bool child = !request.child_out.empty();
  // In an MPI job (mpirun -np N nodeaudit probe comm.allreduce) rank 0 writes and prints for all.
  const std::optional<int> mpi_rank = spec.across_mpi_ranks ? mpi_world_rank_from_env() : std::nullopt;
  std::unique_ptr<Nvml> nvml;
  int rounds = 1;
  const RunSettings settings = probe_settings(spec, request, mpi_rank, nvml, rounds);
  const bool secondary_rank = mpi_rank && *mpi_rank > 0;
  if (mpi_rank && !spec.body) {
    if (secondary_rank) return exit_usage;
    throw UsageError(spec.id + " under an MPI launcher",
                     "not built (" + spec.not_built_reason.value_or("?") +
                         "): this build cannot join an MPI job; rebuild with CUDA, NCCL and MPI");
  }
  std::optional<OutPath> out;
  if (!child && !secondary_rank && !request.common.out.empty())
    out = resolve_out_path(request.common.out, "results", host_name());
  Session session(settings, mpi_rank, install_interrupt_handler(), nvml.get());
  // The child's demand came with its settings; the user's is --workload, else the default profile.
  if (!child && takes_step_demand(spec)) {
    const auto workload = request.given.find("workload");
    session.set_step_demand(
        probe_step_demand(spec.id, workload == request.given.end() ? "" : workload->second, RunExtras{}));
  }
  const auto new_doc = [&] {
    return new_result_document(to_string(settings.level), "", {"nodeaudit", "probe", spec.id},
                               collect_env(settings.data_dir, *nvml));
  };
  EntryRequest entry_request{request.given, {}, rounds, !child && !mpi_rank, request.deadline_s, {}};
  // Rank 0 of an MPI job holds the result file from the start: when a peer dies the launcher kills
  // every rank before the probe returns, and the file keeps the figures completed before.
  if (mpi_rank && out) {
    session.open(new_doc(), out);
    entry_request.keeper = session.partial_entry_writer(nlohmann::json::array(), false);
  }
  // Not judged inside an MPI job: the other ranks on this node are the job itself, not foreign load.
  nlohmann::json entry = session.run_entry(spec, Placement::in_process, entry_request);
  if (child) {
    write_child_entry(request.child_out, entry.dump());
    return exit_ok;
  }
  if (secondary_rank)
    return entry.value("input_error", false) ? exit_usage : probe_exit_code(parse_status(entry["status"]));
  return finish_probe(session, spec, request, std::move(entry), out, new_doc);
}

}  // namespace nodeaudit::session
