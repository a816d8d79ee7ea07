// `run`: plan the probes, fingerprint the node, run each probe isolated under a deadline (or as an
// MPI rank), rewrite the result file after every probe, print the table, and exit with the run's
// verdict. The walk is session.hpp's header.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "harness/core/output_place.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/result.hpp"
#include "harness/core/rounds.hpp"
#include "harness/core/table.hpp"
#include "harness/node/disturbance.hpp"
#include "harness/node/env.hpp"
#include "harness/node/mpi_env.hpp"
#include "harness/node/nvml.hpp"
#include "harness/node/slurm_step.hpp"
#include "harness/report/history.hpp"
#include "harness/session/exit_codes.hpp"
#include "harness/session/profile_probes.hpp"
#include "harness/session/session.hpp"

namespace nodeaudit::session {
namespace {

// What a run measures: the planned probes and whether this process is a rank of an MPI job.
struct RunPlan {
  std::vector<const ProbeSpec*> probes;  // in the order the registry lists them
  std::optional<int> mpi_rank;           // this process's rank when an MPI launcher started it
  // True when a planned probe emulates a step and so needs the step demand.
  bool takes_step_demand() const;
};

// The entries each probe collected over the rounds. A probe that did not end ok in a round (skipped,
// failed, crashed, timed out) is not run again: its reason stands, and a timeout would only cost
// its deadline once more.
class RoundsOfRun {
 public:
  RoundsOfRun(std::size_t probes, int rounds) : entries_(probes), rounds_(rounds) {}

  void add(std::size_t probe, nlohmann::json entry) { entries_[probe].push_back(std::move(entry)); }
  bool finished(std::size_t probe) const;
  nlohmann::json merged(std::size_t probe) const;
  // The `probes` array in plan order: the probes measured so far; with `ended_by_interrupt` also
  // those never started, recorded as interrupted.
  nlohmann::json probes_block(const std::vector<const ProbeSpec*>& plan, bool ended_by_interrupt) const;

 private:
  std::vector<std::vector<nlohmann::json>> entries_;
  int rounds_;
};

std::vector<const ProbeSpec*> planned_probes(const std::string& only, const std::string& skip) {
  const ProbeRegistry& registry = probe_registry();
  std::vector<std::string> ids;
  if (only.empty()) {
    for (const ProbeSpec* s : registry.all())
      if (s->id.rfind("test.", 0) != 0) ids.push_back(s->id);  // test-only probes run only when named
  } else {
    ids = registry.match(only);
  }
  std::vector<std::string> skipped = skip.empty() ? std::vector<std::string>{} : registry.match(skip);
  std::vector<const ProbeSpec*> plan;
  for (const auto& id : ids)
    if (std::find(skipped.begin(), skipped.end(), id) == skipped.end()) plan.push_back(registry.find(id));
  if (plan.empty()) throw UsageError("--only/--skip", "leave no probe to run");
  return plan;
}

// Under an MPI launcher every rank runs this command, and only the probes that join an MPI job
// measure there (Session::run_entry, Placement::mpi_rank). At least one planned probe must join
// the job, or the launch was a mistake.
void check_mpi_plan(const std::vector<const ProbeSpec*>& plan) {
  std::string not_built;
  for (const ProbeSpec* spec : plan) {
    if (spec->across_mpi_ranks && spec->body) return;
    if (spec->across_mpi_ranks && not_built.empty())
      not_built = spec->id + " is not built (" + spec->not_built_reason.value_or("?") + ")";
  }
  if (!not_built.empty())
    throw UsageError("run under an MPI launcher",
                     not_built + ": this build cannot join an MPI job; rebuild with CUDA, NCCL and MPI");
  throw UsageError("run under an MPI launcher",
                   "none of the planned probes runs across MPI ranks; choose them with --only 'comm.*' (e.g. "
                   "comm.allreduce, comm.host-fabric), or run nodeaudit once per node without mpirun");
}

bool RunPlan::takes_step_demand() const {
  return std::any_of(probes.begin(), probes.end(), [](const ProbeSpec* s) { return session::takes_step_demand(*s); });
}

// The probes --only/--skip leave (every built one but the test-only probes when --only is empty),
// checked against the launcher that started this process (mpirun, srun). Throws UsageError.
RunPlan plan_run(const std::string& only, const std::string& skip) {
  RunPlan plan;
  plan.probes = planned_probes(only, skip);
  plan.mpi_rank = mpi_world_rank_from_env();
  if (plan.mpi_rank) check_mpi_plan(plan.probes);
  if (const auto step = slurm_tasks_without_mpi(std::getenv)) {
    const bool plans_mpi_probe =
        std::any_of(plan.probes.begin(), plan.probes.end(), [](const ProbeSpec* s) { return s->across_mpi_ranks; });
    if (auto refusal = slurm_tasks_refusal(*step, plans_mpi_probe)) throw UsageError("run under srun", *refusal);
  }
  return plan;
}

// Every place a planned probe would use (--data-dir, --path), judged before the first probe runs:
// a bad one is the same one line `probe` says, not a failure found after other probes measured.
void check_places_up_front(const RunPlan& plan, const RunSettings& settings, const RunExtras& extras, bool only_given) {
  for (const ProbeSpec* spec : plan.probes) {
    if (!spec->check_places || !spec->body || left_out_by_profile(*spec, extras, only_given)) continue;
    const ParamValues params = resolve_params(spec->params, probe_params_for(*spec, extras), settings.level);
    if (const std::string why = spec->check_places(params, settings); !why.empty()) throw UsageError(spec->id, why);
  }
}

bool RoundsOfRun::finished(std::size_t probe) const {
  const auto& entries = entries_[probe];
  return static_cast<int>(entries.size()) >= rounds_ ||
         (!entries.empty() && entries.back().value("status", "") != "ok");
}

nlohmann::json RoundsOfRun::merged(std::size_t probe) const {
  return merge_rounds(entries_[probe], rounds_);
}

nlohmann::json RoundsOfRun::probes_block(const std::vector<const ProbeSpec*>& plan, bool ended_by_interrupt) const {
  nlohmann::json probes = nlohmann::json::array();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (!entries_[i].empty())
      probes.push_back(merged(i));
    else if (ended_by_interrupt)
      probes.push_back(probe_entry(
          {.id = plan[i]->id, .outcome = Outcome{Status::interrupted, "not started: the run was interrupted"}}));
  }
  return probes;
}

// A live line rewritten in place on stderr, only when stderr is a terminal: the escape sequences
// must never reach a log file or a pipe, whatever stdout is.
ProgressFn progress_printer(bool live, const std::string& id, std::size_t index, std::size_t total) {
  if (!live) return {};
  return [=](double elapsed_s, double deadline_s) {
    std::fprintf(stderr, "\r[%zu/%zu] %-26s %7.1f s (deadline %.0f s)  ", index, total, id.c_str(), elapsed_s,
                 deadline_s);
    std::fflush(stderr);
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

// What the run prints, and where: the table (stdout, or stderr beside --format json) and, on a
// terminal, the live progress line.
struct RunPrinter {
  bool writes = false;
  bool json_out = false;
  bool live = false;
  std::FILE* log = stdout;
  SkipReasonsSaid reasons;
};

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

// The settings checked, the rounds decided, the profile parsed once (with the step demand it
// implies for the probes that emulate a step), and every place the plan would use judged: all
// before the first probe runs, so bad input costs no measuring time.
RunSettings open_settings(RunRequest& request, const RunPlan& plan, const Nvml& nvml, int& rounds) {
  const RunSettings settings = make_settings(request.common, nvml.device_count(), nvml.why_unavailable());
  // Under MPI every rank would have to agree on each round of each probe (a rank whose round failed
  // stops repeating it while the others wait in a collective): one round there, for now.
  rounds = plan.mpi_rank ? 1 : rounds_for(request.common, settings.level);
  if (plan.mpi_rank && !request.common.rounds.empty() && rounds_for(request.common, settings.level) > 1)
    throw UsageError("--rounds " + request.common.rounds,
                     "is not supported under an MPI launcher yet; run the MPI probes without it");
  if (plan.mpi_rank && *plan.mpi_rank == 0 && request.common.rounds.empty() && default_rounds(settings.level) > 1)
    std::fprintf(stderr,
                 "nodeaudit: note: one round per probe under an MPI launcher (the ranks cannot repeat a probe "
                 "together yet): this result carries no between-run spread of its own\n");
  RunSettings run_settings = settings;
  if (level_shares_budget(settings.level)) run_settings.rounds_sharing_budget = rounds;
  prepare_run_extras(request.common.profile, request.extras);
  return run_settings;
}

// One probe of one round: its entry, printed when its last round ends, kept in the result file.
void run_step(Session& session, const RunPlan& plan, const RunRequest& request, RoundsOfRun& rounds_of_run,
              RunPrinter& printer, std::size_t step, std::size_t i, int round, int rounds) {
  const ProbeSpec& spec = *plan.probes[i];
  if (printer.writes && !printer.live && !printer.json_out) {
    const std::string round_text = rounds > 1 ? fmt::format("[round {}/{}] ", round + 1, rounds) : "";
    std::fprintf(printer.log, "%s[%zu/%zu] %s ...\n", round_text.c_str(), step + 1, plan.probes.size(),
                 spec.id.c_str());
    std::fflush(printer.log);  // progress shows as it happens when the output goes to a file or a pipe
  }
  EntryRequest entry_request;
  entry_request.param_texts = probe_params_for(spec, request.extras);
  nlohmann::json entry;
  if (auto skipped = entry_left_out_by_profile(spec, request.extras, !request.only.empty())) {
    entry = std::move(*skipped);
  } else if (plan.mpi_rank) {
    entry_request.keeper = session.partial_entry_writer(rounds_of_run.probes_block(plan.probes, false), true);
    entry = session.run_entry(spec, Placement::mpi_rank, entry_request);
  } else {
    entry_request.progress = progress_printer(printer.live, spec.id, step + 1, plan.probes.size());
    entry = session.run_entry(spec, Placement::child, entry_request);
  }
  if (printer.live) std::fputs("\r\033[K", stderr);
  hoist_multinode(session.document(), entry);
  rounds_of_run.add(i, std::move(entry));
  // Each probe's block is printed once, when its last round ends; the summary does not repeat it.
  if (printer.writes && rounds_of_run.finished(i)) {
    const nlohmann::json merged = rounds_of_run.merged(i);
    if (!printer.json_out) std::fputs(printer.reasons.render(merged).c_str(), printer.log);
    std::fputs(disturbance_warning(merged).c_str(), printer.log);
    std::fflush(printer.log);
  }
  session.document()["probes"] = rounds_of_run.probes_block(plan.probes, false);
  if (printer.writes) session.keep();
}

// The end of a run: the probes never started recorded as interrupted, the assessment, the last
// write of the result file, the side outputs and the summary; returns the exit code.
int finish_run(Session& session, const RunPlan& plan, const RunRequest& request, const RoundsOfRun& rounds_of_run,
               const RunPrinter& printer) {
  nlohmann::json& doc = session.document();
  if (session.interrupted()) doc["probes"] = rounds_of_run.probes_block(plan.probes, true);
  doc["finished_at"] = utc_now_iso8601();
  const int assessment_code = printer.writes ? assess_run(doc, request.extras) : exit_ok;
  if (!printer.writes) return finish_code(doc, session.interrupted(), assessment_code);
  session.keep();
  write_run_side_outputs(doc, request.extras);
  if (printer.json_out)
    std::cout << doc.dump(2) << "\n";
  else
    std::fputs(
        ("\n" + render_skip_groups(group_skipped(doc), "") + render_status_counts(doc) + render_run_assessment(doc) +
         "result written to " + session.out_path() + where_written(plan.mpi_rank) + "\n" + render_run_summary(doc) +
         report::history_line(doc, session.out_path()))
            .c_str(),
        printer.log);
  return finish_code(doc, session.interrupted(), assessment_code);
}

}  // namespace

int run_session(RunRequest& request) {
  // First of all: a Ctrl-C while the environment is collected still ends with a result file and 130.
  const std::atomic<bool>& interrupt = install_interrupt_handler();
  const RunPlan plan = plan_run(request.only, request.skip);
  Nvml nvml;
  int rounds = 1;
  const RunSettings settings = open_settings(request, plan, nvml, rounds);
  RunPrinter printer;
  printer.writes = !plan.mpi_rank || *plan.mpi_rank == 0;  // rank 0 alone writes and prints for the job
  const std::optional<OutPath> out =
      printer.writes ? std::optional<OutPath>(resolve_out_path(request.common.out, "results", host_name()))
                     : std::nullopt;
  if (printer.writes && !request.telemetry_out.empty()) check_output_place("--telemetry-out", request.telemetry_out);
  check_places_up_front(plan, settings, request.extras, !request.only.empty());
  if (printer.writes) remove_abandoned_scratch(settings.data_dir);
  printer.json_out = request.common.format == "json";
  // Under an MPI launcher stdout/stderr may be terminals the launcher forwards into a log: no live line.
  printer.live = printer.writes && !printer.json_out && !plan.mpi_rank && stderr_is_tty();
  printer.log = printer.json_out ? stderr : stdout;

  Session session(settings, plan.mpi_rank, interrupt, &nvml, request.telemetry_out);
  if (plan.takes_step_demand()) session.set_step_demand(run_step_demand(request.extras));
  nlohmann::json doc =
      new_result_document(to_string(settings.level), request.common.profile, request.argv,
                          printer.writes ? collect_env(settings.data_dir, nvml) : nlohmann::json::object());
  if (printer.writes && !printer.json_out) std::fputs(render_env(doc["env"]).c_str(), printer.log);
  // Claims the name; later writes replace this run's own file.
  session.open(std::move(doc), out);

  RoundsOfRun rounds_of_run(plan.probes.size(), rounds);
  for (int round = 0; round < rounds; ++round) {
    session.set_round(round);
    const std::vector<std::size_t> order = round_order(plan.probes.size(), round);
    for (std::size_t step = 0; step < order.size() && !session.interrupted(); ++step)
      if (!rounds_of_run.finished(order[step]))
        run_step(session, plan, request, rounds_of_run, printer, step, order[step], round, rounds);
  }
  return finish_run(session, plan, request, rounds_of_run, printer);
}

}  // namespace nodeaudit::session
