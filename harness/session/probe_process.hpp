// The processes one probe runs in. The parent side runs it in a child process (the same binary,
// `nodeaudit probe ID --child-out FILE`) under a deadline (core/deadline.hpp), with telemetry and
// foreign load sampled alongside in this process: a crash is recorded as `crashed (signal N)`, a hang
// is killed and recorded as `timeout`, and the caller goes on. The child side runs the probe body in
// its own process, ends with its parent, and writes its entry for the parent to read.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/context.hpp"
#include "harness/core/deadline.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit {

class Nvml;

struct IsolationOptions {
  std::string self_exe;             // path of this binary
  RunSettings settings;
  const Nvml* nvml = nullptr;       // for GPU telemetry; may be null
  double telemetry_interval_s = 0.5;
  std::string telemetry_csv;        // --telemetry-out; empty = keep no series
  double kill_grace_s = 5.0;        // after an interrupt, how long the child may take to save its figures
};

// Progress callback: elapsed seconds and the deadline, polled a few times a second.
using ProgressFn = std::function<void(double elapsed_s, double deadline_s)>;

// Returns the probe's result entry (results/SCHEMA.md `probes[]`). `interrupt` is polled: once it
// is set the child is asked to stop (SIGINT), given kill_grace_s, then killed.
nlohmann::json run_probe_isolated(const ProbeSpec& spec, const std::map<std::string, std::string>& param_texts,
                                  const IsolationOptions& options, const std::atomic<bool>& interrupt,
                                  const ProgressFn& progress);

// Child side: runs the probe body in this process and returns its entry (no telemetry).
// `cancel` is the flag the signal handler sets. `keeper`, when given, receives the entry as it
// stands whenever the probe keeps its figures so far (ProbeContext::keeper: MPI ranks).
nlohmann::json run_probe_in_process(const ProbeSpec& spec, const ParamValues& params, const RunSettings& settings,
                                    const std::atomic<bool>& cancel, double deadline_s,
                                    const ProbeContext::EntryKeeper& keeper = {});

// Child side of `run`: the child ends with the `run` that started it (the owner of `child_out`'s
// directory), on every way that process ends, kill -9 included: it is asked to stop (SIGUSR2 as
// the parent-death signal, turned into SIGTERM, so the probe removes its data) and, past
// `grace_s`, ends regardless.
void die_with_parent(const std::string& child_out, double grace_s);
// Writes the child's entry, or, when its parent is gone, removes the parent's scratch directory.
void write_child_entry(const std::string& child_out, const std::string& text);

}  // namespace nodeaudit
