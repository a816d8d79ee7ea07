// Where host.dataloader's two outside pieces are: the user's Python and the shipped loader script.
#pragma once

#include <optional>
#include <string>

namespace nodeaudit::dataloader {

// `python` as given: a path (must exist and be executable) or a name looked up on PATH. Sets
// `path` to the file found; returns why it cannot be used, naming the value and what is accepted.
std::optional<std::string> find_python(const std::string& python, std::string& path);

// The probe's answer when find_python refused: a --python the user gave is bad input; the default
// interpreter missing from this machine (a container image without python3) is a skip, with why.
struct PythonRefusal {
  bool bad_input = false;
  std::string reason;
};
PythonRefusal python_refusal(const std::string& python, const std::string& why, bool python_given);

// torch_loader_sweep.py: NODEAUDIT_LOADER_SCRIPT when set, else beside the binary as installed
// (<prefix>/pipeline/dataloader/) or in the source tree the binary was built from.
std::string loader_script_path();

}  // namespace nodeaudit::dataloader
