// `learn --data-dir-copy DIR`: the job run from its own data directory and from a copy of it under
// DIR (local NVMe against a network share), interleaved like any --vary setting. The copy goes into
// DIR/nodeaudit-copy-<pid>, a folder carrying nodeaudit's owner marker (core/owned_dir.hpp): a
// copy left by a learn that was killed is removed by the next learn given the same DIR. The data directory
// is the one directory the job's command names (an argument, or the value of --opt=VALUE); a
// command naming none or several is refused, with the ones found. The copy goes to DIR/<its name>,
// which must not exist (nothing is overwritten) and must fit in DIR's free space. Afterwards, and on
// an error or Ctrl-C, exactly what the copy created is removed: the files it wrote, then its
// directories when they are empty (anything the job itself wrote there stays, and so do they).
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/learn/learn_run.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/owned_dir.hpp"

namespace nodeaudit::learn {

namespace fs = std::filesystem;

namespace {

// The directory a command word names: the word itself, or the value of --opt=VALUE.
std::string named_directory(const std::string& word) {
  std::string candidate = word;
  const auto eq = word.find('=');
  if (word.rfind("-", 0) == 0 && eq != std::string::npos) candidate = word.substr(eq + 1);
  std::error_code ec;
  if (candidate.empty() || candidate == "." || candidate == "/" || !fs::is_directory(candidate, ec)) return "";
  return candidate;
}

}  // namespace

DataDirCopy::DataDirCopy(const std::vector<std::string>& command, const std::string& dir) : command_(command) {
  std::vector<std::string> found;
  for (std::size_t i = 1; i < command.size(); ++i)
    if (const std::string d = named_directory(command[i]); !d.empty()) {
      found.push_back(d);
      word_ = i;
      original_ = d;
    }
  const std::string what = "--data-dir-copy " + dir;
  if (found.size() != 1)
    throw UsageError(what, found.empty() ? "the job's command names no directory; --data-dir-copy copies the one data directory the command names"
                                         : fmt::format("the job's command names {} directories ({}); --data-dir-copy needs exactly one", found.size(),
                                                       fmt::join(found, ", ")));
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(what, "is not a directory; give an existing directory to copy the data into");
  const fs::path source = fs::weakly_canonical(original_, ec);
  dir_ = dir;
  owned_name_ = fmt::format("nodeaudit-copy-{}", getpid());
  copy_ = (fs::path(dir) / owned_name_ / source.filename()).string();
  if (fs::exists(copy_, ec) || fs::is_symlink(copy_, ec)) throw UsageError(what, copy_ + " already exists; nodeaudit never overwrites (choose another DIR)");
  const fs::path target = fs::weakly_canonical(copy_, ec);
  if (target.string().rfind(source.string() + "/", 0) == 0) throw UsageError(what, "is inside the data directory " + original_);
  for (const auto& entry : fs::recursive_directory_iterator(original_, ec))
    if (entry.is_regular_file(ec)) bytes_ += static_cast<double>(entry.file_size(ec));
  const auto space = fs::space(dir, ec);
  if (!ec && bytes_ * 1.05 > static_cast<double>(space.available))
    throw UsageError(what, fmt::format("needs {:.3g} GB for the copy, {:.3g} GB free there", bytes_ / 1e9, space.available / 1e9));
}

void DataDirCopy::make() {
  for (const auto& left : remove_abandoned_dirs(dir_))
    std::fprintf(stderr, "nodeaudit: removed %s: a data copy left by a nodeaudit learn that is gone\n", left.c_str());
  std::string error;
  owned_ = make_owned_dir_named(dir_, owned_name_, error);
  if (owned_.empty()) throw UsageError("--data-dir-copy " + dir_, error);
  fs::create_directory(copy_);
  created_.push_back(copy_);
  for (auto it = fs::recursive_directory_iterator(original_); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path to = fs::path(copy_) / fs::relative(it->path(), original_);
    if (it->is_symlink()) fs::copy_symlink(it->path(), to);
    else if (it->is_directory()) fs::create_directory(to);
    else if (it->is_regular_file()) fs::copy_file(it->path(), to);
    else continue;  // sockets, fifos, devices: not data
    created_.push_back(to.string());
  }
}

DataDirCopy::~DataDirCopy() {
  std::error_code ec;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ec);  // a directory only when empty
  if (owned_.empty()) return;
  disown_dir(owned_);
  fs::remove(owned_, ec);  // only when empty: what the job wrote there stays
}

std::vector<std::string> DataDirCopy::command_at(const std::string& place) const {
  std::vector<std::string> command = command_;
  const std::string& word = command[word_];
  const auto eq = word.find('=');
  command[word_] = word.rfind("-", 0) == 0 && eq != std::string::npos ? word.substr(0, eq + 1) + place : place;
  return command;
}

}  // namespace nodeaudit::learn
