#include "pipeline/dataloader/loader_child.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace nodeaudit::dataloader {

namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
  std::string tmpl = (fs::temp_directory_path() / "nodeaudit-dataloader-XXXXXX").string();
  if (mkdtemp(tmpl.data())) path = tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!path.empty()) fs::remove_all(path, ec);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_lines(const std::string& text, std::size_t max_chars) {
  std::string tail = text.size() > max_chars ? "..." + text.substr(text.size() - max_chars) : text;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail;
}

std::string framework_missing(const std::string& python_path, const std::string& unavailable) {
  return fmt::format("{} cannot import the framework ({}); install torch and torchvision in the Python the training uses "
                     "and give it with --python",
                     python_path, unavailable);
}

std::optional<Outcome> preflight(const std::string& python_path, const std::string& script, const ScratchDir& scratch,
                                 double timeout_s, const std::function<bool()>& cancelled, nlohmann::json* loader) {
  const std::string check_path = scratch.path + "/check.jsonl", check_log = scratch.path + "/check.log";
  const GroupEnd end = run_in_own_group({python_path, script, "--check", "--out", check_path}, check_log, timeout_s, cancelled);
  const ParsedReport check = parse_loader_report(read_text(check_path));
  if (check.report.unavailable && end.exit_code == 0 && check.error.empty())
    return Outcome::skipped(framework_missing(python_path, *check.report.unavailable));
  if (end.exit_code == 0 && check.error.empty() && check.report.loader.empty())
    return Outcome::failed(fmt::format("the loader's preflight ({} {} --check) reported nothing: {}", python_path, script,
                                       last_lines(read_text(check_log), 600)));
  if (check.report.loader.empty() || end.exit_code != 0)
    return outcome_of(end, check, python_path, read_text(check_log), timeout_s, "point");
  if (loader) *loader = check.report.loader;
  return std::nullopt;
}

Outcome outcome_of(const GroupEnd& end, const ParsedReport& parsed, const std::string& python, const std::string& log,
                   double timeout_s, const std::string& what) {
  const std::string tail = last_lines(log, 600);
  const std::size_t kept = parsed.report.points.size() + parsed.report.steps.size();
  const std::string where = kept == 0 ? fmt::format("before its first {}", what) : fmt::format("after {} {}(s), kept", kept, what);
  if (!end.started) return Outcome::failed(end.start_error);
  if (end.interrupted) return Outcome::interrupted();
  if (end.timed_out)
    return Outcome{Status::timeout, fmt::format("the loader ({}) did not finish within {:.0f} s {}; killed it and its "
                                                "workers. Its output: {}",
                                                python, timeout_s, where, tail)};
  if (!parsed.error.empty()) return Outcome::failed(parsed.error);
  if (end.signal) return Outcome::failed(fmt::format("the loader ({}) was killed by signal {} {}: {}", python, end.signal, where, tail));
  if (end.exit_code != 0)
    return Outcome::failed(fmt::format("the loader ({}) exited with code {} {}: {}", python, end.exit_code, where, tail));
  if (parsed.report.unavailable) return Outcome::ok();  // skipped by the caller
  if (!parsed.report.done) return Outcome::failed(fmt::format("the loader's report ended without \"done\" {}: {}", where, tail));
  return Outcome::ok();
}

}  // namespace nodeaudit::dataloader
