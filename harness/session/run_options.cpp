#include "harness/session/run_options.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/output_place.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/owned_dir.hpp"
#include "harness/core/result.hpp"
#include "harness/node/container.hpp"
#include "harness/node/env.hpp"

namespace nodeaudit::session {

namespace {

std::vector<int> parse_gpu_list(const std::string& text, int gpus_on_node, const std::string& why_no_gpu) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int index = -1;
    try {
      std::size_t used = 0;
      index = std::stoi(item, &used);
      if (used != item.size()) index = -1;
    } catch (const std::exception&) {
      index = -1;
    }
    if (index < 0) throw UsageError("--gpus " + text, "expected comma-separated GPU indices such as 0,1");
    if (index >= gpus_on_node) {
      const std::string have = gpus_on_node == 0 ? "this node has no GPU (" + why_no_gpu + ")"
                                                 : fmt::format("this node has GPUs 0-{}", gpus_on_node - 1);
      throw UsageError(fmt::format("--gpus {}", text), fmt::format("GPU {} does not exist; {}", index, have));
    }
    out.push_back(index);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::optional<int> parse_whole_number(const std::string& text) {
  try {
    std::size_t used = 0;
    const int n = std::stoi(text, &used);
    if (used == text.size()) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

int whole_number_in(const std::string& option, const std::string& text, int lo, int hi) {
  const auto value = parse_whole_number(text);
  if (!value || *value < lo || *value > hi)
    throw UsageError(option + " " + text, fmt::format("must be a whole number from {} to {}", lo, hi));
  return *value;
}

int rounds_for(const CommonOptions& o, Level level) {
  if (o.rounds.empty()) return default_rounds(level);
  const int n = parse_whole_number(o.rounds).value_or(0);
  if (n < 1 || n > 100) throw UsageError("--rounds " + o.rounds, "must be a whole number from 1 to 100");
  return n;
}

RunSettings make_settings(const CommonOptions& o, int gpus_on_node, const std::string& why_no_gpu) {
  RunSettings s;
  s.level = parse_level(o.level);
  if (o.format != "table" && o.format != "json") throw UsageError("--format " + o.format, "expected table or json");
  if (!o.repetitions.empty()) {
    const int n = parse_whole_number(o.repetitions).value_or(0);
    if (n < 1 || n > 1000000) throw UsageError("--repetitions " + o.repetitions, "must be a whole number from 1 to 1000000");
    s.repetitions = n;
  }
  if (!o.gpus.empty()) s.gpus = parse_gpu_list(o.gpus, gpus_on_node, why_no_gpu);
  if (!o.data_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(o.data_dir, ec))
      throw UsageError("--data-dir " + o.data_dir, "is not an existing directory");
    s.data_dir = std::filesystem::absolute(o.data_dir).lexically_normal().string();
  }
  s.keep_data = o.keep_data;
  return s;
}

namespace {

// In a container a results directory that is missing is most often a volume that was not mounted.
std::string missing_dir_hint(const std::string& dir, const ContainerInfo& container) {
  if (!container.detected) return "give an existing directory";
  return fmt::format("in a container, mount a results volume there (-v HOST_DIR:{}) or give an existing directory", dir);
}

// Results written to the container's own layer vanish with the container; said before measuring.
void warn_if_on_container_layer(const std::string& dir, const ContainerInfo& container) {
  if (container.detected && on_container_layer(dir))
    std::fprintf(stderr, "nodeaudit: warning: results go to %s on the container's own writable layer and are lost with the container; "
                         "mount a volume (-v HOST_DIR:/results) and give --out /results/\n", dir.c_str());
}

}  // namespace

OutPath resolve_out_path(const std::string& out, const std::string& default_dir, const std::string& host) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const ContainerInfo container = detect_container();
  if (out.empty()) {
    const bool existed = fs::is_directory(default_dir, ec);
    fs::create_directories(default_dir, ec);
    if (ec) throw UsageError(default_dir, "cannot create the results directory: " + ec.message());
    warn_if_on_container_layer(default_dir, container);
    return {(fs::path(default_dir) / default_result_name(host)).string(), true, !existed};
  }
  if (fs::is_directory(out, ec)) {
    warn_if_on_container_layer(out, container);
    return {(fs::path(out) / default_result_name(host)).string(), true};
  }
  if (out.back() == '/') throw UsageError("--out " + out, "directory does not exist; " + missing_dir_hint(out, container));
  const fs::path parent = fs::path(out).has_parent_path() ? fs::path(out).parent_path() : fs::path(".");
  if (fs::exists(parent, ec) && !fs::is_directory(parent, ec))
    throw UsageError("--out " + out, parent.string() + " is a file, not a directory; give a directory, or a new file name in an existing directory");
  if (!fs::is_directory(parent, ec))
    throw UsageError("--out " + out, "directory " + parent.string() + " does not exist; " + missing_dir_hint(parent.string(), container));
  check_output_place("--out", out);  // exists, a symbolic link, a directory not writable
  warn_if_on_container_layer(parent.string(), container);
  return {out, false};
}

std::string claim_out_file(const OutPath& out, const std::string& content, const std::string& sibling_extension) {
  if (!out.name_is_ours) {
    write_file_atomic(out.path, content, true);
    return out.path;
  }
  const std::filesystem::path first(out.path);
  const std::string stem = (first.parent_path() / first.stem()).string();
  // A bound, so a directory full of one second's results still ends in a clear error.
  constexpr int kMaxSuffix = 1000;
  for (int suffix = 1; suffix <= kMaxSuffix; ++suffix) {
    const std::string candidate = suffix == 1 ? out.path : fmt::format("{}-{}{}", stem, suffix, first.extension().string());
    std::error_code ec;
    if (!sibling_extension.empty() && std::filesystem::exists(std::filesystem::path(candidate).replace_extension(sibling_extension), ec)) continue;
    if (write_new_file_atomic(candidate, content)) return candidate;
  }
  throw UsageError(out.path, fmt::format("this name and {} numbered variants already exist; give another --out", kMaxSuffix - 1));
}

std::string self_exe_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("nodeaudit") : p.string();
}

namespace {
std::atomic<bool> interrupt_flag{false};
extern "C" void on_interrupt(int) { interrupt_flag.store(true); }
}  // namespace

const std::atomic<bool>& install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // a hang-up (the ssh session dropped) ends the run as Ctrl-C does
  return interrupt_flag;
}

std::string where_written(const std::optional<int>& mpi_rank) {
  return mpi_rank ? " on " + host_name() + " (rank 0's host)" : "";
}

void hoist_multinode(nlohmann::json& doc, nlohmann::json& entry) {
  if (!entry.contains("info") || !entry["info"].contains("multinode")) return;
  doc["multinode"] = entry["info"]["multinode"];
  entry["info"].erase("multinode");
}

void remove_abandoned_scratch(const std::string& data_dir) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::vector<std::string> places{tmpdir && *tmpdir ? tmpdir : "/tmp"};
  if (!data_dir.empty()) places.push_back(data_dir);
  for (const auto& place : places)
    for (const auto& dir : remove_abandoned_dirs(place))
      std::fprintf(stderr, "nodeaudit: removed %s: scratch data left by a nodeaudit process that is gone\n", dir.c_str());
}

bool stdout_is_tty() { return isatty(STDOUT_FILENO) != 0; }
bool stderr_is_tty() { return isatty(STDERR_FILENO) != 0; }

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  if (!args.empty()) args.front() = std::filesystem::path(args.front()).filename().string();
  return args;
}

}  // namespace nodeaudit::session
