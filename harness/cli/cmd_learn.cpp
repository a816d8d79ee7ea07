// `nodeaudit learn [--steps N] [--warmup K] [--out-profile FILE.toml] [--out FILE.json] [--md FILE]
// -- COMMAND [ARGS...]`: the options of learn (with --vary, --data-dir-copy and --audit), declared
// for the parser; learning the job is harness/learn's (learn/learn_session.hpp: it starts in
// learn_session).
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/learn/learn_session.hpp"
#include "harness/session/run_options.hpp"

namespace nodeaudit::cli {

void add_learn_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand("learn", "Run your own training command for a few steps and write the profile it demands");
  auto o = std::make_shared<learn::LearnRequest>();
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
    action = [o] { return learn::learn_session(*o); };
  });
}

}  // namespace nodeaudit::cli
