// `nodeaudit learn [--steps N] [--warmup K] [--out-profile FILE.toml] [--out FILE.json] [--md FILE]
// -- COMMAND [ARGS...]`: run the user's own training command unchanged, with learn's Python module
// injected through PYTHONPATH (harness/learn), for K warm-up, N measured and one FLOP-counted
// optimizer step; then write the learned profile (TOML), the result (JSON) and a summary. With
// --result (a result of this node) or --audit (this node's probes for the learned profile, run after
// the job: cmd_learn_audit.cpp), the measured data wait is set beside the scorer's prediction.
// Exit codes: 0 learned; 1 the job died, hung or took too few steps (what was measured is kept);
// 2 bad input, a command that cannot start, or a job that fails before its first step; 130 Ctrl-C.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.hpp"
#include "harness/cli/common_options.hpp"
#include "harness/cli/learn_run.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/json_text.hpp"
#include "harness/core/output_place.hpp"
#include "harness/core/result.hpp"
#include "harness/core/units.hpp"
#include "harness/learn/data_wait_check.hpp"
#include "harness/learn/job_measurement.hpp"
#include "harness/learn/job_runner.hpp"
#include "harness/learn/learn_document.hpp"
#include "harness/learn/learn_module.hpp"
#include "harness/learn/learn_summary.hpp"
#include "harness/learn/learned_profile.hpp"
#include "harness/node/env.hpp"
#include "harness/node/nvml.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::cli {
namespace {

namespace fs = std::filesystem;

constexpr int max_steps = 10000;
constexpr int counted_steps = learn_counted_steps;

std::string script_stem(const std::vector<std::string>& command) {
  for (const auto& word : command) {
    const fs::path path(word);
    if (path.extension() == ".py" || path.extension() == ".sh") return path.stem().string();
  }
  return fs::path(command.front()).stem().string();
}

// The compute figure (gpu.gemm tflops) per dtype in a result: the slowest GPU's median (the step
// waits for it).
std::map<std::string, double> gemm_rates(const nlohmann::json& doc) {
  const score::ResourceFigure& compute = score::resource_figure::compute;
  std::map<std::string, double> rates;
  for (const auto& probe : doc["probes"]) {
    if (probe.value("id", "") != compute.probe || probe.value("status", "") != "ok") continue;
    for (const auto& m : probe.value("metrics", nlohmann::json::array())) {
      if (m.value("name", "") != compute.metric || !m.contains("median") || !m["median"].is_number()) continue;
      const std::string dtype = m.value("labels", nlohmann::json::object()).value("dtype", "");
      const double median = m["median"].get<double>();
      if (!rates.count(dtype) || median < rates[dtype]) rates[dtype] = median;
    }
  }
  return rates;
}

// A result of this node for --result: its GEMM rate (model_efficiency) and its storage, decode and
// host-to-device figures (the scorer's predicted data wait); it must hold at least one of them.
nlohmann::json node_result(const std::string& path) {
  namespace R = score::resource_figure;
  static const std::vector<std::string> used_probes{R::compute.probe,         R::host_to_device.probe,  R::storage_sequential.probe,
                                                    R::storage_samples.probe, R::checkpoint.probe,      R::native_decode.probe,
                                                    R::framework_loader.probe};
  nlohmann::json doc = load_result_file(path);
  for (const auto& probe : doc["probes"]) {
    const std::string id = probe.value("id", "");
    const bool used = std::find(used_probes.begin(), used_probes.end(), id) != used_probes.end();
    if (used && probe.value("status", "") == "ok") return doc;
  }
  throw UsageError("--result " + path, "holds no measured gpu.gemm, storage, host.decode, host.dataloader or gpu.pcie figure; run `nodeaudit run --out FILE` on this node first");
}

ValidLearn validate(const LearnOptions& o) {
  if (o.command.empty())
    throw UsageError("learn", "no command after `--`; give the training command as you run it, e.g. nodeaudit learn -- python train.py");
  ValidLearn v;
  v.steps = whole_number_in("--steps", o.steps, 1, max_steps);
  v.warmup = whole_number_in("--warmup", o.warmup, 0, max_steps);
  try {
    v.timeout_s = parse_duration_s(o.timeout);
  } catch (const UsageError& e) {
    throw UsageError("--timeout " + o.timeout, e.what());
  }
  if (!(v.timeout_s >= 1) || v.timeout_s > 24 * 3600) throw UsageError("--timeout " + o.timeout, "must be from 1s to 24h, e.g. 10m");
  v.timeout_text = o.timeout;
  try {
    v.grace_s = parse_duration_s(o.grace);
  } catch (const UsageError& e) {
    throw UsageError("--grace " + o.grace, e.what());
  }
  if (!(v.grace_s >= 1) || v.grace_s > 3600) throw UsageError("--grace " + o.grace, "must be from 1s to 1h, e.g. 30s");
  if (!o.vary.empty()) {
    v.vary = learn::parse_vary(o.vary);
    v.repeats = whole_number_in("--repeats", o.repeats, 1, 20);
  }
  validate_vary_options(o, v);
  if (!o.out_profile.empty()) refuse_existing("--out-profile", o.out_profile);
  if (!o.md.empty()) refuse_existing("--md", o.md);
  v.out = session::resolve_out_path(o.out, "results", host_name());
  v.profile_path = o.out_profile.empty() ? fs::path(v.out.path).replace_extension(".toml").string() : o.out_profile;
  // A name learn chose is claimed with its profile's at once (execute); a name the user gave is checked here.
  if (o.out_profile.empty() && !v.out.name_is_ours) refuse_existing("--out-profile", v.profile_path);
  v.md_path = o.md;
  if (o.audit && !o.result.empty())
    throw UsageError("--audit --result " + o.result, "give one: --audit measures this node's figures itself, --result reads them from a result");
  if (o.audit && !o.vary.empty()) throw UsageError("--audit", "not with --vary: audit the node once, with the learned profile of the value you keep");
  if (!o.data_dir.empty() && !o.audit) throw UsageError("--data-dir " + o.data_dir, "only with --audit (the storage probes' directory)");
  std::error_code ec;
  if (!o.data_dir.empty() && !fs::is_directory(o.data_dir, ec))  // checked before the job runs, not after
    throw UsageError("--data-dir " + o.data_dir, "is not an existing directory");
  if (!o.result.empty()) {
    v.node_result = node_result(o.result);
    v.gemm_tflops = gemm_rates(v.node_result);
  }
  v.command_text = shell_quoted(o.command);
  v.name = o.name.empty() ? "learned-" + script_stem(o.command) : o.name;
  return v;
}

std::vector<std::pair<std::string, double>> category_efficiencies() {
  std::map<std::string, std::vector<double>> by_category;
  for (const auto& name : score::shipped_profile_names()) {
    const score::Profile p = score::load_profile(name);
    by_category[score::to_string(p.category)].push_back(p.training.model_efficiency);
  }
  std::vector<std::pair<std::string, double>> out;
  for (auto& [category, values] : by_category) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    out.emplace_back(category, n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2);
  }
  return out;
}

std::string quoted_lines(const std::vector<std::string>& lines, std::size_t count) {
  std::vector<std::string> last(lines.end() - static_cast<std::ptrdiff_t>(std::min(count, lines.size())), lines.end());
  return last.empty() ? "(it printed nothing)" : "its last lines: " + fmt::format("{}", fmt::join(last, " | "));
}

std::string how_it_ended(const learn::JobRun& run) {
  if (run.signal) return fmt::format("was killed by signal {}", run.signal);
  return fmt::format("exited with code {}", run.exit_code);
}

// Bad input the job itself shows before its first step: exit 2 with no result left behind.
void refuse_failed_start(const learn::JobRun& run, const ValidLearn& v) {
  const std::string what = "learn -- " + v.command_text;
  if (!run.start_error.empty()) throw UsageError(what, run.start_error + "; give a command on PATH or a path to an executable");
  if (!run.records.ranks.empty() || run.ended_by != "exited") return;
  if (!run.records.pythons_without_torch.empty())
    throw UsageError(what, fmt::format("the job's Python {} has no torch (import torch fails there); run the job with the Python of its training environment",
                                       run.records.pythons_without_torch.front()));
  if ((run.exit_code != 0 || run.signal) && !v.vary)  // under --vary, a value the job fails on is that value's result
    throw UsageError(what, fmt::format("the job {} before its first optimizer step; {}", how_it_ended(run), quoted_lines(run.last_lines, 3)));
}

// Why the run is not complete (status, reason); status "ok" when it is.
}  // namespace

void refuse_existing(const std::string& option, const std::string& path) { check_output_place(option, path); }

// Words as a POSIX shell reads them back: a word with anything the shell would expand or split is
// single-quoted, and a single quote inside it is written '\''.
std::string shell_quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    const bool plain = !w.empty() && w.find_first_of(" \t\n'\"\\$`;&|<>(){}*?[]~#") == std::string::npos;
    std::string quoted = "'";
    for (char c : w) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? w : quoted + "'");
  }
  return out;
}

// The training script's name (the first word ending in .py or .sh; `env X=1 torchrun ... train.py`),
// else the command's own.

OneRun run_learn_once(const LearnOptions& o, const ValidLearn& v, const std::map<std::string, std::string>& extra_env) {
  learn::JobFolder folder(v.claimed_out, job_end_waits(v));
  learn::JobSpec spec{o.command, {}, folder.module_dir(), folder.records_dir(), v.warmup + v.steps + counted_steps, v.warmup, v.steps, v.timeout_s, v.grace_s};
  spec.waits = job_end_waits(v);
  spec.env = {{"NODEAUDIT_LEARN_DIR", folder.records_dir()}, {"NODEAUDIT_LEARN_WARMUP", std::to_string(v.warmup)},
              {"NODEAUDIT_LEARN_STEPS", std::to_string(v.steps)}, {"NODEAUDIT_LEARN_FLOP_STEPS", std::to_string(counted_steps)}};
  for (const auto& [key, value] : extra_env) spec.env[key] = value;
  std::fprintf(stderr, "learn: running `%s` for %d optimizer steps (%d warm-up, %d measured, %d counted for FLOPs), at most %s; its output follows\n",
               v.command_text.c_str(), spec.window_steps, v.warmup, v.steps, counted_steps, format_duration(v.timeout_s).c_str());
  const std::atomic<bool>& interrupt = session::install_interrupt_handler();
  OneRun one;
  one.run = learn::run_job(spec, folder.guard(), [&] { return interrupt.load(); });
  if (!one.run.tree_end.signals.empty()) std::fprintf(stderr, "learn: %s\n", one.run.end_description.c_str());
  refuse_failed_start(one.run, v);
  one.job = learn::learn_from_records(one.run.records, {v.warmup, v.steps, counted_steps, category_efficiencies(), v.gemm_tflops, o.result});
  return one;
}

std::pair<std::string, std::string> learn_outcome(const learn::JobRun& run, const learn::LearnedJob& job, const ValidLearn& v) {
  const bool stopped = run.ended_by != "exited" && !run.tree_end.signals.empty();
  if (job.complete && !stopped) return {"ok", ""};
  if (job.complete) {
    // Every step was measured, but the job's own end (its finally and atexit code) was cut.
    const std::string cut = "all steps were measured, but " + run.end_description;
    if (run.ended_by == "interrupted") return {"interrupted", cut};
    if (run.ended_by == "timeout") return {"timeout", fmt::format("the deadline (--timeout {}) passed: {}", v.timeout_text, cut)};
    return {"failed", cut};
  }
  const std::string progress = job.steps_done == 0 ? "before its first optimizer step"
                                                   : fmt::format("on step {} of {} ({} finished)", job.steps_done + 1, job.steps_needed, job.steps_done);
  if (run.ended_by == "interrupted") return {"interrupted", "interrupted by signal " + progress + "; the job was stopped: " + run.signals_sent};
  if (run.ended_by == "timeout")
    return {"timeout", fmt::format("the deadline (--timeout {}) passed {}; the job was stopped: {}", v.timeout_text, progress, run.signals_sent)};
  if (job.steps_done == 0)
    return {"failed", fmt::format("the job {} without taking an optimizer step: learn needs a training loop that calls optimizer.step(); {}", how_it_ended(run),
                                  quoted_lines(run.last_lines, 3))};
  return {"failed", fmt::format("the job {} {}; {}", how_it_ended(run), progress, quoted_lines(run.last_lines, 3))};
}

namespace {

// The measured data-wait share beside the prediction model's from this node's figures: a result
// (--result), or the probes --audit ran (`audited`, appended to the learn result).
std::optional<learn::DataWaitCheck> data_wait_against_node(const LearnOptions& o, const ValidLearn& v, const score::JobMeasured& measured,
                                                           const std::string& profile_path, const nlohmann::json& doc,
                                                           const nlohmann::json& audited, const std::string& out_path) {
  if ((o.result.empty() && !o.audit) || profile_path.empty() || !(measured.step_s > 0)) return std::nullopt;
  const score::Profile profile = score::load_profile_file(profile_path);
  if (!o.audit) return learn::check_data_wait(measured, profile, doc, v.node_result, o.result);
  nlohmann::json node = doc;
  node["probes"] = audited;
  return learn::check_data_wait(measured, profile, node, node, out_path + " (learn --audit)");
}

std::string no_flops_reason() {
  return "PyTorch's FLOP counter counted no FLOPs in the counted step (the model's arithmetic runs outside torch operators, e.g. in numpy); "
         "a profile needs flops_per_sample: write it into a copy of a shipped profile by hand";
}

// The learned profile, checked as `profiles show` reads it and written under a name that is new; its text.
std::string write_learned_profile(const OneRun& one, const ValidLearn& v) {
  if (one.job.fields.flops_per_sample.value <= 0) throw UsageError("flops_per_sample", "not measured: " + no_flops_reason());
  // TOML holds UTF-8 only: a script or path named in another encoding keeps its bytes as \xHH.
  const std::string toml = learn::learned_profile_toml(one.job, escape_invalid_utf8(v.name), escape_invalid_utf8(v.command_text));
  learn::check_learned_profile(toml, v.profile_path);
  write_file_atomic(v.profile_path, toml, true);
  return toml;
}

// The learn entry as it stands, written at once: what was measured is on disk before anything
// that may refuse (the profile's check, its name, --audit).
void keep_measured(nlohmann::json& doc, const std::string& out_path, const OneRun& one, const LearnOptions& o, const ValidLearn& v,
                   const learn::LearnRunInfo& info, const nlohmann::json& audited) {
  nlohmann::json entry = learn::learn_probe_entry(one.job, one.run, info);
  entry["info"]["job_end"] = {{"ended_by", one.run.ended_by},       {"signals", one.run.tree_end.signals},
                              {"how", one.run.end_description},     {"held_by", one.run.held_by},
                              {"grace_s", v.grace_s},               {"sigterm_wait_s", learn_sigterm_wait_s}};
  if (one.job.fields.flops_per_sample.value <= 0 && entry["info"].contains("learned"))
    entry["info"]["learned"]["flops_per_sample"] = {{"value", nullptr}, {"how", "not measured: " + no_flops_reason()}};
  doc["probes"] = nlohmann::json::array({entry});
  for (const auto& e : audited) doc["probes"].push_back(e);
  doc["finished_at"] = utc_now_iso8601();
  (void)o;
  write_file_atomic(out_path, json_text(doc, 1) + "\n", false);
}

int execute(const LearnOptions& o) {
  session::install_interrupt_handler();  // SIGINT, SIGTERM and SIGHUP from here on: a clean end
  ValidLearn v = validate(o);
  // After the input is accepted: bad input changes nothing. Learn's folders (and run's scratch) left
  // by a process that is gone.
  session::remove_abandoned_scratch("");
  Nvml nvml;
  nlohmann::json doc = new_result_document("quick", "", o.argv, collect_env("", nvml));
  // One stem for the result and the profile: a name whose .toml exists is taken too.
  const std::string out_path = session::claim_out_file(v.out, json_text(doc, 1) + "\n", o.out_profile.empty() ? ".toml" : "");
  if (o.out_profile.empty()) v.profile_path = fs::path(out_path).replace_extension(".toml").string();
  v.claimed_out = out_path;
  auto discard_claimed = [&] {
    std::error_code ec;
    fs::remove(out_path, ec);  // the result file we claimed holds nothing measured
    if (v.out.made_dir) fs::remove(fs::path(out_path).parent_path(), ec);  // only when empty
  };
  if (v.vary) {
    try {
      return execute_learn_vary(o, v, out_path, doc);
    } catch (const UsageError&) {
      discard_claimed();
      throw;
    }
  }
  OneRun one;
  try {
    one = run_learn_once(o, v, {});
  } catch (const UsageError&) {
    discard_claimed();
    throw;
  }
  const learn::JobRun& run = one.run;
  const learn::LearnedJob& job = one.job;
  auto [status, reason] = learn_outcome(run, job, v);
  learn::SummaryPaths paths{v.command_text, out_path, "", ""};
  const score::JobMeasured measured = learn::job_measured(job, run, learn::job_load(run), doc["env"]);
  learn::LearnRunInfo info{o.command, v.timeout_s, status, reason, "", nlohmann::json()};
  if (job.complete) info.job_measured = score::to_json(measured);
  keep_measured(doc, out_path, one, o, v, info, nlohmann::json::array());
  std::string advice;  // optimize or upgrade, for a complete run
  std::string toml;
  if (job.complete) {
    try {
      toml = write_learned_profile(one, v);
      paths.profile_path = v.profile_path;
      advice = optimize_or_upgrade_line(one, v, doc, toml);
    } catch (const std::exception& e) {
      paths.no_profile_reason = e.what();
      if (status == "ok") status = "failed", reason = std::string("the steps were measured and kept, but no profile was written: ") + e.what();
    }
  } else {
    paths.no_profile_reason = fmt::format("a profile needs all {} optimizer steps ({} warm-up, {} measured, {} counted for FLOPs) on every rank; the job took {}",
                                          job.steps_needed, v.warmup, v.steps, counted_steps, job.steps_done);
  }
  nlohmann::json audited = nlohmann::json::array();
  if (o.audit && !paths.profile_path.empty()) {
    const std::string job_python = run.records.ranks.empty() ? "" : run.records.ranks.front().value("python", "");
    audited = audit_node_for_profile(v.profile_path, o.data_dir, job_python, session::install_interrupt_handler());
  }
  paths.data_wait = data_wait_against_node(o, v, measured, paths.profile_path, doc, audited, out_path);
  info = {o.command, v.timeout_s, status, reason, paths.profile_path, paths.data_wait ? learn::to_json(*paths.data_wait) : nlohmann::json()};
  if (job.complete) info.job_measured = score::to_json(measured);
  info.profile_toml = toml;
  keep_measured(doc, out_path, one, o, v, info, audited);
  const learn::JobLoad load = learn::job_load(run);
  if (!v.md_path.empty()) write_file_atomic(v.md_path, learn::render_learn_markdown(job, load, paths), true);
  std::cout << learn::render_learn_summary(job, load, paths) << (advice.empty() ? "" : advice + "\n");
  if (status != "ok") std::cerr << "nodeaudit: learn: " << reason << "\n";
  if (status == "interrupted") return exit_interrupted;
  return status == "ok" ? exit_ok : exit_fail;
}

}  // namespace

void add_learn_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand("learn", "Run your own training command for a few steps and write the profile it demands");
  auto o = std::make_shared<LearnOptions>();
  cmd->add_option("--steps", o->steps, "Measured optimizer steps (1 to 10000)")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Warm-up optimizer steps before them, not measured")->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "Deadline for the whole job, e.g. 10m; it is stopped past it")->capture_default_str();
  cmd->add_option("--grace", o->grace, "How long the job may take to end by itself after its last step, and after SIGINT, before learn sends SIGTERM (then SIGKILL 5 s later)")->capture_default_str();
  cmd->add_option("--out", o->out, "Result file or directory (default results/)");
  cmd->add_option("--out-profile", o->out_profile, "Profile TOML to write (default: the result's name with .toml); never overwritten");
  cmd->add_option("--md", o->md, "Also write the summary as Markdown to this file");
  cmd->add_option("--result", o->result, "A result of this node (nodeaudit run): model_efficiency is measured against its gpu.gemm rate when the job runs on a GPU, and the measured data wait is shown beside the scorer's prediction from its storage and decode figures");
  cmd->add_flag("--audit", o->audit, "After the job, run this node's probes its data wait rests on (GEMM, host-to-device, storage, CPU decode) into the result, and show the scorer's prediction beside the measured data wait");
  cmd->add_option("--data-dir", o->data_dir, "With --audit: a directory on the storage under test, for the storage probe");
  cmd->add_option("--name", o->name, "The learned profile's name (default learned-<script name>)");
  cmd->add_option("--vary", o->vary, "Run once per value of one setting, interleaved: num_workers, pin_memory, prefetch_factor, persistent_workers, batch_size (every DataLoader's) or env:NAME; e.g. num_workers=2,4,8");
  cmd->add_option("--repeats", o->repeats, "With --vary: runs per value (2 to 20; a verdict needs the scatter of at least 2)")->capture_default_str();
  cmd->add_option("--data-dir-copy", o->data_dir_copy, "Run the job from its data directory (the one its command names) and from a copy under DIR, interleaved; the copy is removed after")->type_name("DIR");
  cmd->add_option("--html", o->html, "With --vary: also write the report as HTML with a chart of step time per value");
  cmd->add_option("--price-per-hour", o->price_per_hour, "With --vary: hourly price of the node, to cost one run to the target samples before and after");
  cmd->add_option("--target-gpus", o->target_gpus, "On a node without a GPU: judge optimize-or-upgrade on these GPUs, e.g. h100x8");
  cmd->add_option("command", o->command, "-- COMMAND [ARGS...]: the training command, as you run it");
  cmd->callback([&action, o] {
    o->argv = session::own_command_line();
    action = [o] { return execute(*o); };
  });
}

}  // namespace nodeaudit::cli
