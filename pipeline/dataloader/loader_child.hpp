// Running torch_loader_sweep.py as a child process, shared by host.dataloader (the worker sweep)
// and pipeline.step --loader pytorch (training steps): a private scratch directory, the preflight
// that skips a Python without the framework before any sample is made, and what the child's end
// and its report mean for the probe.
#pragma once

#include <optional>
#include <string>

#include "harness/core/probe.hpp"
#include "harness/core/process_group.hpp"
#include "pipeline/dataloader/loader_report.hpp"

namespace nodeaudit::dataloader {

// A private working directory (the file list, the report, the child's log) removed at the end.
struct ScratchDir {
  std::string path;  // empty when it could not be made
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

std::string read_text(const std::string& path);
// The end of a log for a reason: at most `max_chars`, trailing blank lines dropped.
std::string last_lines(const std::string& text, std::size_t max_chars);

// "<python> cannot import the framework (...); install torch and torchvision ... --python".
std::string framework_missing(const std::string& python_path, const std::string& unavailable);

// Runs `script --check`: nullopt when `python_path` imports torch and torchvision (`loader` gets
// the versions line); else the probe's outcome: skipped without the framework, failed when the
// child dies or says nothing.
std::optional<Outcome> preflight(const std::string& python_path, const std::string& script, const ScratchDir& scratch,
                                 double timeout_s, const std::function<bool()>& cancelled, nlohmann::json* loader = nullptr);

// What the child's end means: interrupted, timeout (killed with its workers), a report that did
// not parse, a signal or a non-zero exit (with the log's tail), a report without "done"; ok
// otherwise (an "unavailable" report too: the caller skips). `what` names the records kept
// ("point", "step").
Outcome outcome_of(const GroupEnd& end, const ParsedReport& parsed, const std::string& python, const std::string& log,
                   double timeout_s, const std::string& what);

}  // namespace nodeaudit::dataloader
