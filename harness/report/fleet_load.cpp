#include "fleet_load.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "errors.hpp"
#include "result.hpp"

namespace nodeaudit::report {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> json_files_in(const std::string& directory, FleetInput& fleet) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec))
    if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) files.push_back(entry.path().string());
  if (ec)
    fleet.skipped.push_back({directory, "cannot be listed (" + ec.message() + ")"});
  else if (files.empty())
    fleet.skipped.push_back({directory, "is a directory with no .json file"});
  std::sort(files.begin(), files.end());
  return files;
}

// The loader's message without the path it starts with ("<path>: is empty; ...").
std::string reason_of(const UsageError& error, const std::string& path) {
  const std::string text = error.what();
  return text.rfind(path + ": ", 0) == 0 ? text.substr(path.size() + 2) : text;
}

void read_one(FleetInput& fleet, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = load_result_file(path);
  } catch (const UsageError& error) {
    fleet.skipped.push_back({path, reason_of(error, path)});
    return;
  }
  add_result(fleet, path, doc);  // a second result of the same node is the user's to resolve: exit 2
}

}  // namespace

FleetInput load_fleet(const std::vector<std::string>& arguments) {
  FleetInput fleet;
  std::size_t files = 0;
  for (const auto& argument : arguments) {
    std::error_code ec;
    if (fs::is_directory(argument, ec)) {
      for (const auto& path : json_files_in(argument, fleet)) ++files, read_one(fleet, path);
    } else {
      ++files;
      read_one(fleet, argument);
    }
  }
  if (fleet.nodes.empty())
    throw UsageError(fmt::format("report --fleet ({} file{})", files, files == 1 ? "" : "s"),
                     fleet.skipped.empty()
                         ? "no result given"
                         : fmt::format("no nodeaudit result among them; {} skipped, the first: {}: {}",
                                       fleet.skipped.size(), fleet.skipped.front().path, fleet.skipped.front().reason));
  return fleet;
}

}  // namespace nodeaudit::report
