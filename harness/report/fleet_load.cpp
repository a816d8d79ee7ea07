#include "harness/report/fleet_load.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"

namespace nodeaudit::report {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> json_files_in(const std::string& directory, FleetInput& fleet) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::error_code type_ec;
    if (entry.is_regular_file(type_ec)) files.push_back(entry.path().string());
    else  // a FIFO, socket or device named *.json: named, never opened (a FIFO would block the read)
      fleet.skipped.push_back({entry.path().string(), "is not a regular file (a FIFO, socket, device or directory); a result is a regular file"});
  }
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
  std::string started_at;  // ISO 8601 UTC: orders a node's runs as text
  std::string skipped_reason;
};

Loaded load_one(const std::string& path) {
  try {
    const nlohmann::json doc = load_result_file(path);
    return {summarize_result(path, doc), doc.value("started_at", ""), ""};
  } catch (const UsageError& error) {
    return {std::nullopt, "", reason_of(error, path)};
  } catch (const std::exception& error) {  // valid against the schema, yet a field has an unexpected type
    return {std::nullopt, "", std::string("could not be read as a result: ") + error.what()};
  }
}

// Files are parsed on every core in chunks (parsing JSON is nearly all the time a fleet report
// takes); each chunk is added in input order, so the report does not depend on thread timing, and
// at most a chunk of parsed documents is alive at once.
void read_all(FleetInput& fleet, const std::vector<std::string>& paths, std::vector<Loaded>& results) {
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
        results.push_back(std::move(loaded[i]));
      else
        fleet.skipped.push_back({paths[begin + i], loaded[i].skipped_reason});
    }
  }
}

// The newest run of each node is judged; the older ones are listed as left out, naming the newest.
void add_newest_runs(FleetInput& fleet, std::vector<Loaded>& results) {
  std::map<std::string, std::size_t> newest;  // node name -> results[]
  std::map<std::pair<std::string, std::string>, std::string> runs;  // (node, started_at) -> path
  for (std::size_t i = 0; i < results.size(); ++i) {
    const NodeSummary& summary = *results[i].summary;
    const auto [run, new_run] = runs.emplace(std::make_pair(summary.node.name, results[i].started_at), summary.node.path);
    if (!new_run)
      throw UsageError("node name '" + summary.node.name + "'", "held by both " + run->second + " and " + summary.node.path +
                                                                   ", runs that started at the same time (one run twice?); leave one out");
    const auto [it, first] = newest.emplace(summary.node.name, i);
    if (!first && results[i].started_at > results[it->second].started_at) it->second = i;
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const NodeSummary& summary = *results[i].summary;
    const Loaded& kept = results[newest[summary.node.name]];
    if (&kept == &results[i]) continue;
    fleet.skipped.push_back({summary.node.path, fmt::format("an older run of node {} (started {}); its newest run, {} (started {}), "
                                                            "is judged; --all-runs shows every run",
                                                            summary.node.name, results[i].started_at, kept.summary->node.path, kept.started_at)});
  }
  for (std::size_t i = 0; i < results.size(); ++i)
    if (newest[results[i].summary->node.name] == i) add_summary(fleet, std::move(*results[i].summary));
}

}  // namespace

FleetInput load_fleet(const std::vector<std::string>& arguments, bool all_runs) {
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
  std::vector<Loaded> results;
  read_all(fleet, paths, results);
  if (all_runs) {
    // Each run a row of its own, in time order within a node: the drift over time is read down the rows.
    std::stable_sort(results.begin(), results.end(), [](const Loaded& a, const Loaded& b) { return a.started_at < b.started_at; });
    for (auto& run : results) {
      run.summary->node.name += " @ " + run.started_at;
      add_summary(fleet, std::move(*run.summary));  // one node, one start time, two files: exit 2
    }
  } else {
    add_newest_runs(fleet, results);
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
