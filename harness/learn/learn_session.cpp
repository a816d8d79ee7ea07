// `nodeaudit learn`: the request checked, the result file claimed through the session's writer,
// then one measured run of the job (or --vary's runs: learn_vary_session.cpp); what was measured is
// kept in the result at once, before anything that may refuse (the profile's check, its name,
// --audit), and the learned profile, the summary and the data-wait check against this node follow.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/json_text.hpp"
#include "harness/core/result.hpp"
#include "harness/learn/data_wait_check.hpp"
#include "harness/learn/job_measurement.hpp"
#include "harness/learn/learn_document.hpp"
#include "harness/learn/learn_run.hpp"
#include "harness/learn/learn_summary.hpp"
#include "harness/learn/learned_profile.hpp"
#include "harness/node/env.hpp"
#include "harness/node/nvml.hpp"
#include "harness/score/score.hpp"
#include "harness/session/exit_codes.hpp"

namespace nodeaudit::learn {
namespace {

namespace fs = std::filesystem;

// The measured data-wait share beside the prediction model's from this node's figures: a result
// (--result), or the probes --audit ran (`audited`, appended to the learn result).
std::optional<DataWaitCheck> data_wait_against_node(const LearnRequest& o, const ValidLearn& v, const score::JobMeasured& measured,
                                                           const std::string& profile_path, const nlohmann::json& doc,
                                                           const nlohmann::json& audited, const std::string& out_path) {
  if ((o.result.empty() && !o.audit) || profile_path.empty() || !(measured.step_s > 0)) return std::nullopt;
  const score::Profile profile = score::load_profile_file(profile_path);
  if (!o.audit) return check_data_wait(measured, profile, doc, v.node_result, o.result);
  nlohmann::json node = doc;
  node["probes"] = audited;
  return check_data_wait(measured, profile, node, node, out_path + " (learn --audit)");
}

std::string no_flops_reason() {
  return "PyTorch's FLOP counter counted no FLOPs in the counted step (the model's arithmetic runs outside torch operators, e.g. in numpy); "
         "a profile needs flops_per_sample: write it into a copy of a shipped profile by hand";
}

// The learned profile, checked as `profiles show` reads it and written under a name that is new; its text.
std::string write_learned_profile(const OneRun& one, const ValidLearn& v) {
  if (one.job.fields.flops_per_sample.value <= 0) throw UsageError("flops_per_sample", "not measured: " + no_flops_reason());
  // TOML holds UTF-8 only: a script or path named in another encoding keeps its bytes as \xHH.
  const std::string toml = learned_profile_toml(one.job, escape_invalid_utf8(v.name), escape_invalid_utf8(v.command_text));
  check_learned_profile(toml, v.profile_path);
  write_file_atomic(v.profile_path, toml, true);
  return toml;
}

// The learn entry as it stands, written at once: what was measured is on disk before anything
// that may refuse (the profile's check, its name, --audit).
void keep_measured(nlohmann::json& doc, const session::ResultFile& result, const OneRun& one, const ValidLearn& v,
                   const LearnRunInfo& info, const nlohmann::json& audited) {
  nlohmann::json entry = learn_probe_entry(one.job, one.run, info);
  entry["info"]["job_end"] = {{"ended_by", one.run.ended_by},       {"signals", one.run.tree_end.signals},
                              {"how", one.run.end_description},     {"held_by", one.run.held_by},
                              {"grace_s", v.grace_s},               {"sigterm_wait_s", learn_sigterm_wait_s}};
  if (one.job.fields.flops_per_sample.value <= 0 && entry["info"].contains("learned"))
    entry["info"]["learned"]["flops_per_sample"] = {{"value", nullptr}, {"how", "not measured: " + no_flops_reason()}};
  doc["probes"] = nlohmann::json::array({entry});
  for (const auto& e : audited) doc["probes"].push_back(e);
  doc["finished_at"] = utc_now_iso8601();
  result.write(doc);
}

// The learned profile of a complete run written, and its optimize-or-upgrade line returned; for an
// incomplete run, or a profile that cannot be written, why there is none (in `paths`, and in
// `status` and `reason` for a run that was otherwise ok).
std::string write_profile_of_run(const OneRun& one, const ValidLearn& v, const nlohmann::json& doc, SummaryPaths& paths, std::string& status,
                                 std::string& reason, std::string& toml) {
  const LearnedJob& job = one.job;
  if (!job.complete) {
    paths.no_profile_reason = fmt::format("a profile needs all {} optimizer steps ({} warm-up, {} measured, {} counted for FLOPs) on every rank; the job took {}",
                                          job.steps_needed, v.warmup, v.steps, learn_counted_steps, job.steps_done);
    return "";
  }
  try {
    toml = write_learned_profile(one, v);
    paths.profile_path = v.profile_path;
    return optimize_or_upgrade_line(one, v, doc, toml);
  } catch (const std::exception& e) {
    paths.no_profile_reason = e.what();
    if (status == "ok") status = "failed", reason = std::string("the steps were measured and kept, but no profile was written: ") + e.what();
  }
  return "";
}

// After the one run: the entry kept, the profile written, this node audited (--audit) and its
// predicted data wait set beside the measured one, the entry kept again, the summary printed.
int finish_learn(const LearnRequest& o, const ValidLearn& v, const session::ResultFile& result, nlohmann::json& doc, const OneRun& one) {
  const JobRun& run = one.run;
  const LearnedJob& job = one.job;
  auto [status, reason] = learn_outcome(run, job, v);
  SummaryPaths paths{v.command_text, result.path(), "", ""};
  const score::JobMeasured measured = job_measured(job, run, job_load(run), doc["env"]);
  LearnRunInfo info{o.command, v.timeout_s, status, reason, "", nlohmann::json()};
  if (job.complete) info.job_measured = score::to_json(measured);
  keep_measured(doc, result, one, v, info, nlohmann::json::array());
  std::string toml;
  const std::string advice = write_profile_of_run(one, v, doc, paths, status, reason, toml);  // optimize or upgrade
  nlohmann::json audited = nlohmann::json::array();
  if (o.audit && !paths.profile_path.empty()) {
    const std::string job_python = run.records.ranks.empty() ? "" : run.records.ranks.front().value("python", "");
    audited = audit_node_for_profile(v.profile_path, o.data_dir, job_python, session::install_interrupt_handler());
  }
  paths.data_wait = data_wait_against_node(o, v, measured, paths.profile_path, doc, audited, result.path());
  info = {o.command, v.timeout_s, status, reason, paths.profile_path, paths.data_wait ? to_json(*paths.data_wait) : nlohmann::json()};
  if (job.complete) info.job_measured = score::to_json(measured);
  info.profile_toml = toml;
  keep_measured(doc, result, one, v, info, audited);
  const JobLoad load = job_load(run);
  if (!v.md_path.empty()) write_file_atomic(v.md_path, render_learn_markdown(job, load, paths), true);
  std::cout << render_learn_summary(job, load, paths) << (advice.empty() ? "" : advice + "\n");
  if (status != "ok") std::cerr << "nodeaudit: learn: " << reason << "\n";
  if (status == "interrupted") return session::exit_interrupted;
  return status == "ok" ? session::exit_ok : session::exit_fail;
}

}  // namespace

int learn_session(const LearnRequest& o) {
  session::install_interrupt_handler();  // SIGINT, SIGTERM and SIGHUP from here on: a clean end
  ValidLearn v = validate_learn(o);
  // After the input is accepted: bad input changes nothing. Learn's folders (and run's scratch) left
  // by a process that is gone.
  session::remove_abandoned_scratch("");
  Nvml nvml;
  nlohmann::json doc = new_result_document("quick", "", o.argv, collect_env("", nvml));
  // One stem for the result and the profile: a name whose .toml exists is taken too.
  const session::ResultFile result(v.out, doc, 1, o.out_profile.empty() ? ".toml" : "");
  if (o.out_profile.empty()) v.profile_path = fs::path(result.path()).replace_extension(".toml").string();
  v.claimed_out = result.path();
  // Bad input the job shows once the file is claimed (a command that cannot start): the file holds
  // nothing measured and goes.
  OneRun one;
  try {
    if (v.vary) return learn_vary_session(o, v, result, doc);
    one = run_learn_once(o, v, {});
  } catch (const UsageError&) {
    result.discard();
    throw;
  }
  return finish_learn(o, v, result, doc, one);
}

}  // namespace nodeaudit::learn
