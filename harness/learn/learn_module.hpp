// learn's Python module (harness/learn/python), compiled into the binary, and the private folder
// it is written into for one job: <folder>/module (first on the job's PYTHONPATH) and
// <folder>/records (where every process of the job writes what it saw).
#pragma once

#include <string>
#include <vector>

namespace nodeaudit::learn {

struct ModuleFile {
  const char* name;
  const char* text;
};
const std::vector<ModuleFile>& module_files();  // generated: learn_module_text.cpp

// A folder made for one job (mkdtemp under $TMPDIR or /tmp), removed with everything in it when
// this object goes away: the job's records are read before that.
class JobFolder {
 public:
  JobFolder();
  ~JobFolder();
  JobFolder(const JobFolder&) = delete;
  JobFolder& operator=(const JobFolder&) = delete;
  const std::string& module_dir() const { return module_dir_; }
  const std::string& records_dir() const { return records_dir_; }

 private:
  std::string root_, module_dir_, records_dir_;
};

}  // namespace nodeaudit::learn
