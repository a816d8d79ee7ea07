// learn's Python module (harness/learn/python), compiled into the binary, and the private folder
// it is written into for one job: <folder>/module (first on the job's PYTHONPATH) and
// <folder>/records (where every process of the job writes what it saw).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/learn/job_guard.hpp"

namespace nodeaudit::learn {

struct ModuleFile {
  const char* name;
  const char* text;
};
const std::vector<ModuleFile>& module_files();  // generated: learn_module_text.cpp

// A folder made for one job under $TMPDIR or /tmp, carrying nodeaudit's owner marker
// (core/owned_dir.hpp: the next nodeaudit removes it when its owner is gone), with the job's
// guard (job_guard.hpp: the held process tree and the guardian that outlives a killed learn).
// Removed with everything in it when this object goes away, after the tree has ended: the job's
// records are read before that. `result_path`: the result learn claimed, removed by the guardian
// while it holds nothing measured.
class JobFolder {
 public:
  explicit JobFolder(const std::string& result_path = "", const TreeEndWaits& waits = {});
  ~JobFolder();
  JobFolder(const JobFolder&) = delete;
  JobFolder& operator=(const JobFolder&) = delete;
  const std::string& module_dir() const { return module_dir_; }
  const std::string& records_dir() const { return records_dir_; }
  JobGuard& guard() { return *guard_; }

 private:
  std::string root_, module_dir_, records_dir_;
  std::unique_ptr<JobGuard> guard_;
};

}  // namespace nodeaudit::learn
