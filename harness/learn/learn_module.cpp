#include "harness/learn/learn_module.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/core/errors.hpp"
#include "harness/core/owned_dir.hpp"

namespace nodeaudit::learn {

namespace fs = std::filesystem;

JobFolder::JobFolder(const std::string& result_path, const TreeEndWaits& waits) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string parent = tmp && *tmp ? tmp : "/tmp";
  std::string error;
  root_ = make_owned_dir(parent, "nodeaudit-learn", error);
  if (root_.empty()) throw UsageError("learn", "cannot make a folder for the job's records: " + error + " (set TMPDIR to a writable folder)");
  module_dir_ = root_ + "/module";
  records_dir_ = root_ + "/records";
  fs::create_directory(module_dir_);
  fs::create_directory(records_dir_);
  for (const ModuleFile& file : module_files()) {
    std::ofstream out(fs::path(module_dir_) / file.name);
    out << file.text;
    if (!out) throw UsageError("learn", "cannot write the injected module into " + module_dir_);
  }
  guard_ = std::make_unique<JobGuard>(root_, "NODEAUDIT_LEARN_DIR=" + records_dir_, result_path, waits);
}

JobFolder::~JobFolder() {
  guard_.reset();  // the tree is ended (by learn, or else by the guardian) before its folder goes
  std::error_code ec;
  fs::remove_all(root_, ec);
}

}  // namespace nodeaudit::learn
