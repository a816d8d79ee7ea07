// learn's input checked before anything runs, so bad input costs no job run and changes nothing:
// the step window, the deadlines, --vary and its companions, the output places (never an existing
// file), --result (a result of this node that holds a figure learn reads) and --audit's --data-dir.
#include <algorithm>
#include <filesystem>

#include "harness/core/errors.hpp"
#include "harness/core/output_place.hpp"
#include "harness/core/result.hpp"
#include "harness/core/units.hpp"
#include "harness/learn/learn_run.hpp"
#include "harness/node/env.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::learn {
namespace {

namespace fs = std::filesystem;

constexpr int max_steps = 10000;

// The training script's name (the first word ending in .py or .sh; `env X=1 torchrun ... train.py`),
// else the command's own.
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

// A verdict compares the scatter between runs of each value with their difference: one run a value
// has no scatter, so --vary with one repeat could only print figures it cannot judge.
void refuse_one_repeat(const ValidLearn& v, const std::string& text) {
  if (v.vary && v.repeats < 2)
    throw UsageError("--repeats " + text, "a verdict needs at least 2 runs of each value (their scatter is what a difference is judged "
                                          "against); the default 3 calls a 10% change in a figure that scatters 2% between runs 4 times in 5");
}

}  // namespace

ValidLearn validate_learn(const LearnRequest& o) {
  if (o.command.empty())
    throw UsageError("learn", "no command after `--`; give the training command as you run it, e.g. nodeaudit learn -- python train.py");
  ValidLearn v;
  v.steps = session::whole_number_in("--steps", o.steps, 1, max_steps);
  v.warmup = session::whole_number_in("--warmup", o.warmup, 0, max_steps);
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
    v.vary = parse_vary(o.vary);
    v.repeats = session::whole_number_in("--repeats", o.repeats, 1, 20);
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

void validate_vary_options(const LearnRequest& o, ValidLearn& v) {
  const auto only_with_vary = [&](const std::string& option, const std::string& value) {
    if (!value.empty() && !v.vary) throw UsageError(option + " " + value, "only with --vary");
  };
  only_with_vary("--html", o.html);
  only_with_vary("--price-per-hour", o.price_per_hour);
  if (!o.html.empty()) refuse_existing("--html", o.html);
  v.html_path = o.html;
  if (!o.price_per_hour.empty()) {
    const std::optional<double> price = parse_finite_number(o.price_per_hour);
    if (!price || *price <= 0) throw UsageError("--price-per-hour " + o.price_per_hour, "expected a positive number in any currency (12, 12.5)");
    v.price_per_hour = price;
  }
  if (!o.target_gpus.empty()) score::parse_target_gpus(o.target_gpus);  // throws UsageError naming what is accepted
  v.target_gpus = o.target_gpus;
  if (o.data_dir_copy.empty()) return refuse_one_repeat(v, o.repeats);
  if (v.vary)
    throw UsageError("--data-dir-copy " + o.data_dir_copy, "not with --vary: one change at a time, and the data directory's place is this one");
  const DataDirCopy plan(o.command, o.data_dir_copy);  // checks the command and DIR; copies nothing yet
  v.vary = data_dir_setting(plan.original(), plan.copy());
  const auto repeats = session::parse_whole_number(o.repeats);
  if (!repeats || *repeats < 1 || *repeats > 20) throw UsageError("--repeats " + o.repeats, "must be a whole number from 1 to 20");
  v.repeats = *repeats;
  v.data_dir_copy = o.data_dir_copy;
  refuse_one_repeat(v, o.repeats);
}

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

}  // namespace nodeaudit::learn
