#include "harness/learn/learn_module.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/core/errors.hpp"

namespace nodeaudit::learn {

namespace fs = std::filesystem;

JobFolder::JobFolder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "nodeaudit-learn-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw UsageError("learn", "cannot make a folder for the job's records in " + fs::path(pattern).parent_path().string() +
                                  ": " + std::strerror(errno) + " (set TMPDIR to a writable folder)");
  root_ = pattern;
  module_dir_ = root_ + "/module";
  records_dir_ = root_ + "/records";
  fs::create_directory(module_dir_);
  fs::create_directory(records_dir_);
  for (const ModuleFile& file : module_files()) {
    std::ofstream out(fs::path(module_dir_) / file.name);
    out << file.text;
    if (!out) throw UsageError("learn", "cannot write the injected module into " + module_dir_);
  }
}

JobFolder::~JobFolder() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

}  // namespace nodeaudit::learn
