#include "fleet_load.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>

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

// One input read and summarized, or why it was skipped.
struct Loaded {
  std::optional<NodeSummary> summary;
  std::string skipped_reason;
};

Loaded load_one(const std::string& path) {
  try {
    const nlohmann::json doc = load_result_file(path);
    return {summarize_result(path, doc), ""};
  } catch (const UsageError& error) {
    return {std::nullopt, reason_of(error, path)};
  } catch (const std::exception& error) {  // valid against the schema, yet a field has an unexpected type
    return {std::nullopt, std::string("could not be read as a result: ") + error.what()};
  }
}

// Files are parsed on every core in chunks (parsing JSON is nearly all the time a fleet report
// takes); each chunk is added in input order, so the report does not depend on thread timing, and
// at most a chunk of parsed documents is alive at once.
void read_all(FleetInput& fleet, const std::vector<std::string>& paths) {
  constexpr std::size_t chunk = 64;
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  for (std::size_t begin = 0; begin < paths.size(); begin += chunk) {
    const std::size_t count = std::min(chunk, paths.size() - begin);
    std::vector<Loaded> loaded(count);
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
      for (std::size_t i = next++; i < count; i = next++) loaded[i] = load_one(paths[begin + i]);
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < std::min(threads, count); ++t) pool.emplace_back(work);
    work();
    for (auto& thread : pool) thread.join();
    for (std::size_t i = 0; i < count; ++i) {
      if (loaded[i].summary)
        add_summary(fleet, std::move(*loaded[i].summary));  // a node's second result: exit 2
      else
        fleet.skipped.push_back({paths[begin + i], loaded[i].skipped_reason});
    }
  }
}

}  // namespace

FleetInput load_fleet(const std::vector<std::string>& arguments) {
  FleetInput fleet;
  std::vector<std::string> paths;
  for (const auto& argument : arguments) {
    std::error_code ec;
    if (!fs::is_directory(argument, ec))
      paths.push_back(argument);
    else
      for (auto& path : json_files_in(argument, fleet)) paths.push_back(std::move(path));
  }
  const std::size_t files = paths.size();
  read_all(fleet, paths);
  if (fleet.nodes.empty())
    throw UsageError(fmt::format("report --fleet ({} file{})", files, files == 1 ? "" : "s"),
                     fleet.skipped.empty()
                         ? "no result given"
                         : fmt::format("no nodeaudit result among them; {} skipped, the first: {}: {}",
                                       fleet.skipped.size(), fleet.skipped.front().path, fleet.skipped.front().reason));
  return fleet;
}

}  // namespace nodeaudit::report
