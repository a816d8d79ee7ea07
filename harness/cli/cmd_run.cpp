// `nodeaudit run`: plan the probes, fingerprint the node, run each probe isolated under a deadline,
// rewrite the result file after every probe, print the table, and exit with the run's verdict.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <iostream>
#include <memory>

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
#include "workload_options.hpp"
#include "common.hpp"
#include "run_hooks.hpp"

namespace nodeaudit::cli {
namespace {

struct RunInvocation {
  CommonOptions common;
  std::string only, skip;
  std::string telemetry_out;
  std::vector<std::string> argv;
  RunExtras extras;
};

std::vector<const ProbeSpec*> plan_probes(const RunInvocation& inv) {
  const ProbeRegistry& registry = probe_registry();
  std::vector<std::string> ids;
  if (inv.only.empty()) {
    for (const ProbeSpec* s : registry.all())
      if (s->id.rfind("test.", 0) != 0) ids.push_back(s->id);  // test-only probes run only when named
  } else {
    ids = registry.match(inv.only);
  }
  std::vector<std::string> skipped = inv.skip.empty() ? std::vector<std::string>{} : registry.match(inv.skip);
  std::vector<const ProbeSpec*> plan;
  for (const auto& id : ids)
    if (std::find(skipped.begin(), skipped.end(), id) == skipped.end()) plan.push_back(registry.find(id));
  if (plan.empty()) throw UsageError("--only/--skip", "leave no probe to run");
  return plan;
}

// A live line rewritten in place on stderr, only when stderr is a terminal: the escape sequences
// must never reach a log file or a pipe, whatever stdout is.
ProgressFn progress_printer(bool live, const std::string& id, std::size_t index, std::size_t total) {
  if (!live) return {};
  return [=](double elapsed_s, double deadline_s) {
    std::fprintf(stderr, "\r[%zu/%zu] %-26s %7.1f s (deadline %.0f s)  ", index, total, id.c_str(), elapsed_s, deadline_s);
    std::fflush(stderr);
  };
}

// Under an MPI launcher every rank runs this command. Probes that join an MPI job run in this
// process (a child could not MPI_Init a second time for the next probe), each still under its own
// watchdogs; the others measure one node and are recorded as skipped. At least one planned probe
// must join the job, or the launch was a mistake.
void check_mpi_plan(const std::vector<const ProbeSpec*>& plan) {
  std::string not_built;
  for (const ProbeSpec* spec : plan) {
    if (spec->across_mpi_ranks && spec->body) return;
    if (spec->across_mpi_ranks && not_built.empty())
      not_built = spec->id + " is not built (" + spec->not_built_reason.value_or("?") + ")";
  }
  if (!not_built.empty())
    throw UsageError("run under an MPI launcher", not_built + ": this build cannot join an MPI job; rebuild with CUDA, NCCL and MPI");
  throw UsageError("run under an MPI launcher",
                   "none of the planned probes runs across MPI ranks; choose them with --only 'comm.*' (e.g. "
                   "comm.allreduce, comm.host-fabric), or run nodeaudit once per node without mpirun");
}

nlohmann::json run_probe_as_mpi_rank(const ProbeSpec& spec, const RunSettings& settings, const RunInvocation& inv,
                                     const std::atomic<bool>& interrupt, const ProbeContext::EntryKeeper& keeper) {
  if (!spec.across_mpi_ranks)
    return probe_entry(spec.id, Outcome::skipped("measures one node, not an MPI job: run `nodeaudit run` without mpirun for it"),
                       nlohmann::json::object(), 0, {}, {}, nlohmann::json::object());
  const ParamValues params = resolve_params(spec.params, probe_params_for(spec, inv.extras), settings.level);
  nlohmann::json entry =
      run_probe_in_process(spec, params, settings, interrupt, probe_deadline_s(spec, params, settings), keeper);
  entry["telemetry"] = {{"note", "not sampled: the probe ran inside an MPI rank"}};
  return entry;
}

// Rank 0's way to keep an MPI probe's figures so far (ProbeContext::keeper): when a peer dies the
// launcher kills every rank before the probe returns, so the result file is rewritten with the
// probe's entry as it stands after each completed step, and with its last words. Called from the
// rank's watchdog thread too: it works on its own copy of the document as it was when the probe began.
ProbeContext::EntryKeeper partial_entry_writer(nlohmann::json doc_so_far, std::string out_path) {
  return [doc_so_far = std::move(doc_so_far), out_path = std::move(out_path)](const nlohmann::json& entry) {
    nlohmann::json doc = doc_so_far;
    nlohmann::json kept = entry;
    kept["telemetry"] = {{"note", "not sampled: the probe ran inside an MPI rank"}};
    hoist_multinode(doc, kept);
    doc["probes"].push_back(std::move(kept));
    write_file_atomic(out_path, doc.dump(2) + "\n", false);
  };
}

// A probe's block as it ends; a skip reason already printed for an earlier probe is not repeated.
class SkipReasonsSaid {
 public:
  std::string render(const nlohmann::json& entry) {
    if (entry.value("status", "") != "skipped") return render_probe(entry);
    const std::string reason = entry.value("reason", "");
    const auto [first, inserted] = first_probe_for_.emplace(reason, entry.value("id", "?"));
    if (inserted) return render_probe(entry);
    nlohmann::json shortened = entry;
    shortened["reason"] = "(same reason as " + first->second + ")";
    return render_probe(shortened);
  }

 private:
  std::map<std::string, std::string> first_probe_for_;  // reason -> the first probe skipped for it
};

// The entries each probe collected over the rounds. A probe that did not end ok in a round (skipped,
// failed, crashed, timed out) is not run again: its reason stands, and a timeout would only cost
// its deadline once more.
class RoundsOfRun {
 public:
  RoundsOfRun(std::size_t probes, int rounds) : entries_(probes), rounds_(rounds) {}

  void add(std::size_t probe, nlohmann::json entry) { entries_[probe].push_back(std::move(entry)); }
  bool finished(std::size_t probe) const {
    const auto& entries = entries_[probe];
    return static_cast<int>(entries.size()) >= rounds_ || (!entries.empty() && entries.back().value("status", "") != "ok");
  }
  nlohmann::json merged(std::size_t probe) const { return merge_rounds(entries_[probe], rounds_); }

  // The `probes` array in plan order: the probes measured so far; with `ended_by_interrupt` also
  // those never started, recorded as interrupted.
  nlohmann::json probes_block(const std::vector<const ProbeSpec*>& plan, bool ended_by_interrupt) const {
    nlohmann::json probes = nlohmann::json::array();
    for (std::size_t i = 0; i < plan.size(); ++i) {
      if (!entries_[i].empty()) probes.push_back(merged(i));
      else if (ended_by_interrupt)
        probes.push_back(probe_entry(plan[i]->id, Outcome{Status::interrupted, "not started: the run was interrupted"},
                                     nlohmann::json::object(), 0, {}, {}, nlohmann::json::object()));
    }
    return probes;
  }

 private:
  std::vector<std::vector<nlohmann::json>> entries_;
  int rounds_;
};

nlohmann::json with_probes(nlohmann::json doc, nlohmann::json probes) {
  doc["probes"] = std::move(probes);
  return doc;
}

int finish_code(const nlohmann::json& doc, bool interrupted, int assessment_code) {
  if (interrupted) return exit_interrupted;
  for (const auto& p : doc["probes"])
    if (p.value("input_error", false)) return exit_usage;
  for (const auto& p : doc["probes"]) {
    const std::string status = p.value("status", "");
    if (status == "failed" || status == "crashed" || status == "timeout") return exit_fail;
  }
  return assessment_code;
}

// Every place a planned probe would use (--data-dir, --path), judged before the first probe runs:
// a bad one is the same one line `probe` says, not a failure found after other probes measured.
void check_places_up_front(const std::vector<const ProbeSpec*>& plan, const RunSettings& settings, const RunInvocation& inv) {
  for (const ProbeSpec* spec : plan) {
    if (!spec->check_places || !spec->body || left_out_by_profile(*spec, inv.extras, !inv.only.empty())) continue;
    const ParamValues params = resolve_params(spec->params, probe_params_for(*spec, inv.extras), settings.level);
    if (const std::string why = spec->check_places(params, settings); !why.empty()) throw UsageError(spec->id, why);
  }
}

int execute(RunInvocation& inv) {
  // First of all: a Ctrl-C while the environment is collected still ends with a result file and 130.
  const std::atomic<bool>& interrupt = install_interrupt_handler();
  const std::vector<const ProbeSpec*> plan = plan_probes(inv);
  const std::optional<int> mpi_rank = mpi_world_rank_from_env();
  if (mpi_rank) check_mpi_plan(plan);
  if (const auto step = slurm_tasks_without_mpi(std::getenv)) {
    const bool plans_mpi_probe = std::any_of(plan.begin(), plan.end(), [](const ProbeSpec* s) { return s->across_mpi_ranks; });
    if (auto refusal = slurm_tasks_refusal(*step, plans_mpi_probe)) throw UsageError("run under srun", *refusal);
  }
  const bool writes = !mpi_rank || *mpi_rank == 0;  // rank 0 alone writes and prints for the job
  Nvml nvml;
  const RunSettings settings = make_settings(inv.common, nvml.device_count(), nvml.why_unavailable());
  // Under MPI every rank would have to agree on each round of each probe (a rank whose round failed
  // stops repeating it while the others wait in a collective): one round there, for now.
  const int rounds = mpi_rank ? 1 : rounds_for(inv.common, settings.level);
  if (mpi_rank && !inv.common.rounds.empty() && rounds_for(inv.common, settings.level) > 1)
    throw UsageError("--rounds " + inv.common.rounds, "is not supported under an MPI launcher yet; run the MPI probes without it");
  if (mpi_rank && *mpi_rank == 0 && inv.common.rounds.empty() && default_rounds(settings.level) > 1)
    std::fprintf(stderr, "nodeaudit: note: one round per probe under an MPI launcher (the ranks cannot repeat a probe "
                         "together yet): this result carries no between-run spread of its own\n");
  RunSettings run_settings = settings;
  if (level_shares_budget(settings.level)) run_settings.rounds_sharing_budget = rounds;
  run_settings.profile_path = prepare_run_extras(inv.common.profile, inv.extras);
  const OutPath out = writes ? resolve_out_path(inv.common.out, "results", host_name()) : OutPath{};
  if (writes && !inv.telemetry_out.empty() && std::filesystem::exists(inv.telemetry_out))
    throw UsageError("--telemetry-out " + inv.telemetry_out, "already exists; nodeaudit never overwrites a file");
  check_places_up_front(plan, run_settings, inv);
  if (writes) remove_abandoned_scratch(settings.data_dir);
  const bool json_out = inv.common.format == "json";
  // Under an MPI launcher stdout/stderr may be terminals the launcher forwards into a log: no live line.
  const bool live = writes && !json_out && !mpi_rank && stderr_is_tty();
  std::FILE* log = json_out ? stderr : stdout;

  nlohmann::json doc = new_result_document(to_string(settings.level), inv.common.profile, inv.argv,
                                           writes ? collect_env(settings.data_dir, nvml) : nlohmann::json::object());
  if (writes && !json_out) std::fputs(render_env(doc["env"]).c_str(), log);
  // Claims the name; later writes replace this run's own file.
  const std::string out_path = writes ? claim_out_file(out, doc.dump(2) + "\n") : "";

  SkipReasonsSaid live_reasons;
  IsolationOptions iso{self_exe_path(), run_settings, &nvml, 0.5, inv.telemetry_out, 5.0};
  RoundsOfRun rounds_of_run(plan.size(), rounds);
  for (int round = 0; round < rounds; ++round) {
    iso.settings.round_index = round;
    const std::vector<std::size_t> order = round_order(plan.size(), round);
    for (std::size_t step = 0; step < order.size() && !interrupt.load(); ++step) {
      const std::size_t i = order[step];
      if (rounds_of_run.finished(i)) continue;
      const ProbeSpec& spec = *plan[i];
      if (writes && !live && !json_out) {
        const std::string round_text = rounds > 1 ? fmt::format("[round {}/{}] ", round + 1, rounds) : "";
        std::fprintf(log, "%s[%zu/%zu] %s ...\n", round_text.c_str(), step + 1, plan.size(), spec.id.c_str());
        std::fflush(log);  // progress shows as it happens when the output goes to a file or a pipe
      }
      const std::optional<std::string> left_out = left_out_by_profile(spec, inv.extras, !inv.only.empty());
      nlohmann::json entry =
          left_out ? probe_entry(spec.id, Outcome::skipped(*left_out), nlohmann::json::object(), 0, {}, {},
                                 nlohmann::json::object())
          : mpi_rank ? run_probe_as_mpi_rank(spec, run_settings, inv, interrupt,
                                             writes ? partial_entry_writer(with_probes(doc, rounds_of_run.probes_block(plan, false)), out_path)
                                                    : ProbeContext::EntryKeeper{})
                     : run_probe_isolated(spec, probe_params_for(spec, inv.extras), iso, interrupt,
                                          progress_printer(live, spec.id, step + 1, plan.size()));
      if (live) std::fputs("\r\033[K", stderr);
      hoist_multinode(doc, entry);
      rounds_of_run.add(i, std::move(entry));
      // Each probe's block is printed once, when its last round ends; the summary does not repeat it.
      if (writes && rounds_of_run.finished(i)) {
        const nlohmann::json merged = rounds_of_run.merged(i);
        if (!json_out) std::fputs(live_reasons.render(merged).c_str(), log);
        std::fputs(disturbance_warning(merged).c_str(), log);
        std::fflush(log);
      }
      doc["probes"] = rounds_of_run.probes_block(plan, false);
      if (writes) write_file_atomic(out_path, doc.dump(2) + "\n", false);
    }
  }
  if (interrupt.load()) doc["probes"] = rounds_of_run.probes_block(plan, true);
  doc["finished_at"] = utc_now_iso8601();
  const int assessment_code = writes ? assess_run(doc, inv.extras) : exit_ok;
  if (!writes) return finish_code(doc, interrupt.load(), assessment_code);
  write_file_atomic(out_path, doc.dump(2) + "\n", false);
  write_run_side_outputs(doc, inv.extras);
  if (json_out) std::cout << doc.dump(2) << "\n";
  else
    std::fputs(("\n" + render_skip_groups(group_skipped(doc), "") + render_status_counts(doc) +
                render_run_assessment(doc) + "result written to " + out_path + where_written(mpi_rank) + "\n" +
                render_run_summary(doc))
                   .c_str(),
               log);
  return finish_code(doc, interrupt.load(), assessment_code);
}

}  // namespace

void add_run_command(CLI::App& root, Action& action) {
  CLI::App* run = root.add_subcommand("run", "Run the audit: every built probe (or --only), isolated, into one result file");
  auto inv = std::make_shared<RunInvocation>();
  add_common_options(*run, inv->common);
  add_profile_option(*run, inv->common.profile);
  run->add_option("--only", inv->only, "Comma-separated probe ids or globs to run, e.g. 'gpu.*,storage.read'");
  run->add_option("--skip", inv->skip, "Comma-separated probe ids or globs to leave out");
  run->add_option("--telemetry-out", inv->telemetry_out, "Also keep the telemetry series as CSV in this file");
  add_run_extras(*run, inv->extras);
  run->callback([&action, inv] {
    inv->argv = own_command_line();
    action = [inv] { return execute(*inv); };
  });
}

}  // namespace nodeaudit::cli
