#include "pipeline/dataloader/dataloader_paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#ifndef NODEAUDIT_SOURCE_DIR
#define NODEAUDIT_SOURCE_DIR "."
#endif

namespace nodeaudit::dataloader {

namespace fs = std::filesystem;

namespace {

bool runnable(const fs::path& file) {
  std::error_code ec;
  return fs::is_regular_file(file, ec) && access(file.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_python(const std::string& python, std::string& path) {
  if (python.empty()) return std::string("--python '': expected a Python interpreter, a path or a name on PATH (python3)");
  if (python.find('/') != std::string::npos) {
    std::error_code ec;
    if (!fs::exists(python, ec)) return fmt::format("--python {}: no such file; expected a Python interpreter (a path or a name on PATH)", python);
    if (!runnable(python)) return fmt::format("--python {}: not an executable file; expected a Python interpreter", python);
    path = python;
    return std::nullopt;
  }
  const char* search = std::getenv("PATH");
  std::istringstream dirs(search ? search : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / python;
    if (runnable(candidate)) {
      path = candidate.string();
      return std::nullopt;
    }
  }
  return fmt::format("--python {}: not found on PATH; give the interpreter of the training's environment (a path or a name on PATH)", python);
}

PythonRefusal python_refusal(const std::string& python, const std::string& why, bool python_given) {
  if (python_given) return {true, why};
  return {false, fmt::format("no Python interpreter: the default --python {} is not on PATH; give --python with the "
                             "interpreter of the training's environment", python)};
}

std::string loader_script_path() {
  const char* name = "torch_loader_sweep.py";
  if (const char* given = std::getenv("NODEAUDIT_LOADER_SCRIPT"); given && *given) return given;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const fs::path& dir : {exe.parent_path() / ".." / "pipeline" / "dataloader", exe.parent_path() / ".." / ".." / "pipeline" / "dataloader"})
      if (fs::is_regular_file(dir / name, ec)) return fs::weakly_canonical(dir / name, ec).string();
  return (fs::path(NODEAUDIT_SOURCE_DIR) / "pipeline" / "dataloader" / name).string();
}

}  // namespace nodeaudit::dataloader
