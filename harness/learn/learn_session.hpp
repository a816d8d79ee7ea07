// `nodeaudit learn` as the user typed it, and the one call that runs it: the user's own training
// command run unchanged with learn's Python module injected, for K warm-up, N measured and one
// FLOP-counted optimizer step; then the learned profile (TOML), the result (JSON, kept through the
// session's result writer) and a summary. With --vary the job is run once per value of one setting
// (learn_vary_session.cpp); with --audit this node's probes for the learned profile run after the
// job (learn_audit.cpp). harness/cli/cmd_learn.cpp declares the options.
// Exit codes: 0 learned; 1 the job died, hung or took too few steps (what was measured is kept);
// 2 bad input, a command that cannot start, or a job that fails before its first step; 130 Ctrl-C.
#pragma once

#include <string>
#include <vector>

namespace nodeaudit::learn {

struct LearnRequest {
  std::string steps = "20", warmup = "5", timeout = "10m", grace = "10s";
  std::string out, out_profile, md, name;
  std::string vary, repeats = "3";
  std::string html, price_per_hour, target_gpus;  // with --vary
  std::string data_dir_copy;
  std::string result;    // a nodeaudit result of this node holding gpu.gemm
  bool audit = false;    // --audit: run this node's probes for the learned profile after the job
  std::string data_dir;  // --data-dir, with --audit: a directory on the storage under test
  std::vector<std::string> command;
  std::vector<std::string> argv;
};

// Returns the process's exit code; throws UsageError on bad input.
int learn_session(const LearnRequest& request);

// The words as one shell command line that reads back as the same words.
std::string shell_quoted(const std::vector<std::string>& words);

}  // namespace nodeaudit::learn
