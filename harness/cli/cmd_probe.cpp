// `nodeaudit probe ID [--PARAM VALUE ..]`: runs one probe in this process. Each registered probe is
// a subcommand whose options come from its ParamSpecs, so `nodeaudit probe storage.read --help`
// lists exactly its parameters. `run` re-executes this command as the isolated child.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <unistd.h>

#include "../disturbance.hpp"
#include "../env.hpp"
#include "../errors.hpp"
#include "../mpi_env.hpp"
#include "../nvml.hpp"
#include "../registry.hpp"
#include "../result.hpp"
#include "../rounds.hpp"
#include "../runner.hpp"
#include "../slurm_step.hpp"
#include "../table.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace nodeaudit::cli {
namespace {

struct ProbeInvocation {
  CommonOptions common;
  std::map<std::string, std::string> texts;  // parameter name -> text as typed
  std::map<std::string, CLI::Option*> options;
  std::string child_out;  // internal: where the child writes its entry for `run`
  std::string settings_json;
  double deadline_s = 0;
};

std::string param_help(const ParamSpec& p) {
  const auto& d = p.default_by_level;
  const std::string defaults = (d[0] == d[1] && d[1] == d[2]) ? d[1] : fmt::format("quick {}, standard {}, soak {}", d[0], d[1], d[2]);
  return fmt::format("{} ({}; default {})", p.help, describe_accepted(p), defaults.empty() ? "none" : defaults);
}

// The probe measured `rounds` times in this process (stopping at the first round that is not ok),
// pooled by merge_rounds. With `judge_foreign_load` each round records the load of other processes;
// the runner of `run` judges its child from outside instead.
nlohmann::json run_rounds_in_process(const ProbeSpec& spec, const ParamValues& params, const RunSettings& settings,
                                     const std::atomic<bool>& cancel, double deadline_s, int rounds,
                                     bool judge_foreign_load, const ProbeContext::EntryKeeper& keeper) {
  std::vector<nlohmann::json> entries;
  for (int round = 0; round < rounds && (round == 0 || !cancel.load()); ++round) {
    const HostLoadReading before = read_host_load();
    RunSettings this_round = settings;
    if (rounds > 1) this_round.round_index = round;  // a child of `run` keeps the index `run` gave it
    nlohmann::json entry = run_probe_in_process(spec, params, this_round, cancel, deadline_s, keeper);
    if (judge_foreign_load) {
      entry["disturbance"] = judge_disturbance(before, read_host_load(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
      entry["disturbed"] = entry["disturbance"]["disturbed"];
    }
    const bool ok = entry.value("status", "") == "ok";
    entries.push_back(std::move(entry));
    if (!ok) break;
  }
  return merge_rounds(entries, rounds);
}

int execute(const ProbeSpec& spec, ProbeInvocation& inv) {
  std::map<std::string, std::string> given;
  for (const auto& [name, opt] : inv.options)
    if (opt->count() > 0) given[name] = inv.texts[name];
  const bool child = !inv.child_out.empty();
  RunSettings settings;
  std::unique_ptr<Nvml> nvml;
  if (child) {
    die_with_parent(inv.child_out, 1.2);
    settings = RunSettings::from_json(nlohmann::json::parse(inv.settings_json));
  } else {
    nvml = std::make_unique<Nvml>();
    settings = make_settings(inv.common, nvml->device_count(), nvml->why_unavailable());
  }
  const ParamValues params = resolve_params(spec.params, given, settings.level);
  // In an MPI job (mpirun -np N nodeaudit probe comm.allreduce) rank 0 writes and prints for all.
  const std::optional<int> mpi_rank = spec.across_mpi_ranks ? mpi_world_rank_from_env() : std::nullopt;
  if (const auto step = child ? std::nullopt : slurm_tasks_without_mpi(std::getenv))
    if (auto refusal = slurm_tasks_refusal(*step, spec.across_mpi_ranks)) throw UsageError("probe " + spec.id + " under srun", *refusal);
  // The child of `run` is one round (`run` repeats it); so is an MPI rank (see cmd_run.cpp).
  const int requested_rounds = child ? 1 : rounds_for(inv.common, settings.level);
  if (mpi_rank && !inv.common.rounds.empty() && requested_rounds > 1)
    throw UsageError("--rounds " + inv.common.rounds, "is not supported under an MPI launcher yet; run the MPI probes without it");
  const int rounds = mpi_rank ? 1 : requested_rounds;
  if (!child && level_shares_budget(settings.level)) settings.rounds_sharing_budget = rounds;
  const bool secondary_rank = mpi_rank && *mpi_rank > 0;
  if (mpi_rank && !spec.body) {
    if (secondary_rank) return exit_usage;
    throw UsageError(spec.id + " under an MPI launcher", "not built (" + spec.not_built_reason.value_or("?") +
                                                             "): this build cannot join an MPI job; rebuild with CUDA, NCCL and MPI");
  }
  std::optional<OutPath> out;
  if (!child && !secondary_rank && !inv.common.out.empty()) out = resolve_out_path(inv.common.out, "results", host_name());
  const std::atomic<bool>& cancel = install_interrupt_handler();
  const double deadline_s = inv.deadline_s > 0 ? inv.deadline_s : probe_deadline_s(spec, params, settings);
  const auto new_doc = [&] {
    return new_result_document(to_string(settings.level), "", {"nodeaudit", "probe", spec.id}, collect_env(settings.data_dir, *nvml));
  };
  // Rank 0 of an MPI job holds the result file from the start: when a peer dies the launcher kills
  // every rank before the probe returns, and the file keeps the figures completed before.
  nlohmann::json doc;
  std::string out_path;
  ProbeContext::EntryKeeper keeper;
  if (mpi_rank && out) {
    doc = new_doc();
    out_path = claim_out_file(*out, doc.dump(2) + "\n");
    keeper = [doc, out_path](const nlohmann::json& entry) {
      nlohmann::json partial = doc, kept = entry;
      hoist_multinode(partial, kept);
      partial["probes"].push_back(std::move(kept));
      write_file_atomic(out_path, partial.dump(2) + "\n", false);
    };
  }
  // Not judged inside an MPI job: the other ranks on this node are the job itself, not foreign load.
  nlohmann::json entry =
      run_rounds_in_process(spec, params, settings, cancel, deadline_s, rounds, !child && !mpi_rank, keeper);
  if (child) {
    write_child_entry(inv.child_out, entry.dump());
    return exit_ok;
  }
  const Status status = parse_status(entry["status"]);
  if (secondary_rank) {
    if (entry.value("input_error", false)) return exit_usage;
    if (status == Status::interrupted) return exit_interrupted;
    return status == Status::ok || status == Status::skipped ? exit_ok : exit_fail;
  }
  if (entry.value("input_error", false)) {
    if (!out_path.empty()) std::filesystem::remove(out_path);  // this run's own file: bad input leaves none
    throw UsageError(spec.id, entry.value("reason", "bad input"));
  }
  entry["telemetry"] = nlohmann::json::object();
  if (doc.is_null()) doc = new_doc();
  hoist_multinode(doc, entry);  // the job's hosts, ranks and GPUs: a top-level block
  doc["probes"].push_back(entry);
  doc["finished_at"] = utc_now_iso8601();
  if (!out_path.empty()) write_file_atomic(out_path, doc.dump(2) + "\n", false);
  else if (out) out_path = claim_out_file(*out, doc.dump(2) + "\n");
  if (inv.common.format == "json") std::cout << doc.dump(2) << "\n";
  else std::cout << render_probe(entry);
  // With --format json the entry's `disturbed` and `evidence` say it; stdout stays one document.
  if (inv.common.format != "json") std::cout << disturbance_warning(entry);
  if (!out_path.empty() && inv.common.format != "json")
    std::cout << "result written to " << out_path << where_written(mpi_rank) << "\n";
  if (status == Status::interrupted) return exit_interrupted;
  return status == Status::ok || status == Status::skipped ? exit_ok : exit_fail;
}

}  // namespace

void add_probe_command(CLI::App& root, Action& action) {
  CLI::App* probe = root.add_subcommand("probe", "Run one probe; every probe parameter is an option (probe ID --help)");
  probe->require_subcommand(1);
  for (const ProbeSpec* spec : probe_registry().all()) {
    CLI::App* sub = probe->add_subcommand(spec->id, spec->description);
    auto inv = std::make_shared<ProbeInvocation>();
    add_common_options(*sub, inv->common);
    sub->add_option("--child-out", inv->child_out)->group("");
    sub->add_option("--settings", inv->settings_json)->group("");
    sub->add_option("--deadline-s", inv->deadline_s)->group("");
    for (const ParamSpec& p : spec->params) inv->options[p.name] = sub->add_option("--" + p.name, inv->texts[p.name], param_help(p));
    sub->callback([&action, spec, inv] { action = [spec, inv] { return execute(*spec, *inv); }; });
  }
}

}  // namespace nodeaudit::cli
