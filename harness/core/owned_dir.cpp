#include "harness/core/owned_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace nodeaudit {
namespace fs = std::filesystem;
namespace {

constexpr const char* owner_schema = "nodeaudit.owner/1";
constexpr std::size_t max_marker_bytes = 4096;

struct Owner {
  long long pid = 0;
  unsigned long long start_ticks = 0;  // /proc/PID/stat field 22: tells a reused pid apart
  std::string boot_id;
  std::string pid_namespace;
};

// Start time and state of a live process; nullopt when there is none with that pid.
struct ProcessStart {
  unsigned long long start_ticks = 0;
  char state = '?';
};
std::optional<ProcessStart> process_start(long long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  // The command name is in parentheses and may hold spaces: fields are counted after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  ProcessStart s;
  rest >> s.state;
  std::string field;
  for (int i = 4; i < 22 && rest >> field; ++i) {
  }
  if (!(rest >> s.start_ticks)) return std::nullopt;
  return s;
}

// Tells a pid of this boot from the same number before a reboot.
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

std::string pid_namespace_of_self() {
  std::error_code ec;
  const auto target = fs::read_symlink("/proc/self/ns/pid", ec);
  return ec ? std::string() : target.string();
}

Owner this_process() {
  Owner o;
  o.pid = getpid();
  if (auto s = process_start(o.pid)) o.start_ticks = s->start_ticks;
  o.boot_id = boot_id();
  o.pid_namespace = pid_namespace_of_self();
  return o;
}

nlohmann::json to_json(const Owner& o) {
  return {{"schema", owner_schema},
          {"pid", o.pid},
          {"start_ticks", o.start_ticks},
          {"boot_id", o.boot_id},
          {"pid_namespace", o.pid_namespace}};
}

// The marker as nodeaudit wrote it, or nullopt for anything else (missing, a symlink, too large,
// another schema, fields of the wrong type).
std::optional<Owner> read_marker(const std::string& dir) {
  const std::string path = (fs::path(dir) / owner_marker_name).string();
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > static_cast<off_t>(max_marker_bytes))
    return std::nullopt;
  std::ifstream in(path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object() || j.value("schema", "") != owner_schema) return std::nullopt;
    Owner o;
    o.pid = j.at("pid").get<long long>();
    o.start_ticks = j.at("start_ticks").get<unsigned long long>();
    o.boot_id = j.at("boot_id").get<std::string>();
    o.pid_namespace = j.at("pid_namespace").get<std::string>();
    if (o.pid <= 0 || o.boot_id.empty()) return std::nullopt;
    return o;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool owner_is_gone(const Owner& o) {
  const Owner self = this_process();
  if (o.boot_id != self.boot_id) return true;  // every process of an earlier boot is gone
  // Another pid namespace (a container sharing the place): its pids mean nothing here.
  if (o.pid_namespace != self.pid_namespace) return false;
  const auto now = process_start(o.pid);
  return !now || now->start_ticks != o.start_ticks || now->state == 'Z';
}

bool is_real_directory(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

namespace {

// The directories this process made (for remove_dirs_made_here): the one place kept per process,
// as a process's end is per process.
std::mutex made_here_mutex;
std::vector<std::string>& made_here() {
  static std::vector<std::string> dirs;
  return dirs;
}

// Writes the marker into `dir` (just made); removes `dir` again when that fails.
std::string mark_new_dir(const std::string& dir, std::string& error) {
  {
    std::lock_guard<std::mutex> lock(made_here_mutex);
    made_here().push_back(dir);
  }
  const std::string marker = (fs::path(dir) / owner_marker_name).string();
  std::ofstream out(marker);
  out << to_json(this_process()).dump() << "\n";
  out.close();
  if (!out) {
    error = fmt::format("write {}: {}", marker, std::strerror(errno));
    std::error_code ec;
    fs::remove(marker, ec);
    fs::remove(dir, ec);
    return {};
  }
  return dir;
}

// Removes `dir` while another thread may be removing it too (the probe's own removal): an entry
// the other took first is not an error, as it would end std::filesystem::remove_all early; symbolic
// links are removed, never followed.
void remove_tree_beside_another_remover(const std::string& dir) {
  // A pass that removes nothing (the other remover took every entry first, or a writer not yet
  // stopped adds more) is retried: the tree is given up only after 50 such passes in a row, 20 ms
  // apart.
  for (int idle_passes = 0; idle_passes < 50 && is_real_directory(dir);) {
    bool progress = false;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string path = it->path().string();
      if (is_real_directory(path)) remove_tree_beside_another_remover(path);
      if (unlink(path.c_str()) == 0 || rmdir(path.c_str()) == 0) progress = true;
    }
    if (rmdir(dir.c_str()) == 0) progress = true;
    idle_passes = progress ? 0 : idle_passes + 1;
    if (!progress) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::string make_owned_dir(const std::string& parent, const std::string& stem, std::string& error) {
  std::string dir = (fs::path(parent) / (stem + "-XXXXXX")).string();
  if (!mkdtemp(dir.data())) {
    error = fmt::format("create a directory in {}: {}", parent, std::strerror(errno));
    return {};
  }
  return mark_new_dir(dir, error);
}

std::string make_owned_dir_named(const std::string& parent, const std::string& name, std::string& error) {
  const std::string dir = (fs::path(parent) / name).string();
  if (mkdir(dir.c_str(), 0700) != 0) {
    error = fmt::format("create {}: {}", dir, std::strerror(errno));
    return {};
  }
  return mark_new_dir(dir, error);
}

void remove_dirs_made_here() {
  // One removal at a time: the child's main thread, ending, waits here for its reaper thread to
  // finish instead of ending the process in the middle of the reaper's removal.
  static std::mutex removing;
  std::lock_guard<std::mutex> one_at_a_time(removing);
  std::vector<std::string> dirs;
  {
    std::lock_guard<std::mutex> lock(made_here_mutex);
    dirs = made_here();
  }
  for (const auto& dir : dirs) {
    // No marker is asked for: the probe's own removal may have taken it already. A directory
    // disowned for --keep-data left this list then.
    remove_tree_beside_another_remover(dir);
  }
}

std::optional<long long> owner_pid(const std::string& dir) {
  const auto owner = read_marker(dir);
  return owner ? std::optional<long long>(owner->pid) : std::nullopt;
}

void disown_dir(const std::string& dir) {
  std::error_code ec;
  if (read_marker(dir)) fs::remove(fs::path(dir) / owner_marker_name, ec);
  std::lock_guard<std::mutex> lock(made_here_mutex);
  auto& dirs = made_here();
  dirs.erase(std::remove(dirs.begin(), dirs.end(), dir), dirs.end());
}

bool is_abandoned_dir(const std::string& dir) {
  if (!is_real_directory(dir)) return false;
  const auto owner = read_marker(dir);
  return owner && owner_is_gone(*owner);
}

bool remove_if_abandoned(const std::string& dir) {
  if (!is_abandoned_dir(dir)) return false;
  std::error_code ec;
  fs::remove_all(dir, ec);  // never follows a symlink inside; removes the link itself
  return !ec;
}

bool remove_if_owned_by(const std::string& dir, long long pid) {
  const auto owner = is_real_directory(dir) ? read_marker(dir) : std::nullopt;
  if (!owner || owner->pid != pid) return false;
  std::error_code ec;
  fs::remove_all(dir, ec);
  return !ec;
}

namespace {

bool not_before(const struct timespec& t, const struct timespec& since) {
  return t.tv_sec > since.tv_sec || (t.tv_sec == since.tv_sec && t.tv_nsec >= since.tv_nsec);
}

// Nothing in `dir`, or only a marker file that does not read as one.
bool holds_no_data(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != owner_marker_name || it->is_symlink(ec) || !it->is_regular_file(ec)) return false;
  return !ec && !read_marker(dir);
}

std::vector<std::string> unfinished_candidates(const std::string& parent, const struct timespec& since) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string path = it->path().string();
    struct stat st {};
    if (it->path().filename().string().rfind("nodeaudit-", 0) != 0 || lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (not_before(st.st_ctim, since) && holds_no_data(path)) found.push_back(path);
  }
  return found;
}

}  // namespace

std::vector<std::string> remove_unfinished_dirs(const std::string& parent, const struct timespec& since) {
  const std::vector<std::string> first = unfinished_candidates(parent, since);
  if (first.empty()) return {};
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<std::string> removed;
  for (const auto& dir : unfinished_candidates(parent, since)) {
    if (std::find(first.begin(), first.end(), dir) == first.end()) continue;
    std::error_code ec;
    fs::remove(fs::path(dir) / owner_marker_name, ec);
    if (rmdir(dir.c_str()) == 0) removed.push_back(dir);
  }
  return removed;
}

std::vector<std::string> remove_abandoned_dirs(const std::string& parent) {
  std::vector<std::string> candidates, removed;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("nodeaudit-", 0) == 0) candidates.push_back(it->path().string());
  for (const auto& dir : candidates)
    if (remove_if_abandoned(dir)) removed.push_back(dir);
  return removed;
}

}  // namespace nodeaudit
