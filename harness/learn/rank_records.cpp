#include "harness/learn/rank_records.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace nodeaudit::learn {

namespace fs = std::filesystem;

namespace {

std::optional<nlohmann::json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

long rank_key(const nlohmann::json& r) {
  const auto& dist = r.value("distributed", nlohmann::json::object());
  if (dist.value("initialized", false) && dist.contains("rank")) return dist["rank"].get<long>();
  if (r.contains("env_rank") && r["env_rank"].is_string()) {
    try {
      return std::stol(r["env_rank"].get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return 1000000L + r.value("pid", 0L);
}

void collect_problems(const nlohmann::json& record, std::vector<std::string>& problems) {
  const auto& loader = record.value("loader", nlohmann::json::object());
  if (loader.contains("problems"))
    for (const auto& p : loader["problems"])
      if (p.is_string() && std::find(problems.begin(), problems.end(), p.get<std::string>()) == problems.end())
        problems.push_back(p.get<std::string>());
}

// The rank's steps, one JSON line each in rank-PID.steps beside its record; a last line being
// written (no newline yet) is left for the next read.
void attach_steps(const fs::path& record_path, nlohmann::json& record) {
  fs::path steps_path = record_path;
  steps_path.replace_extension(".steps");
  std::ifstream in(steps_path);
  nlohmann::json timeline = nlohmann::json::array();
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline after it: not whole yet
    try {
      timeline.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception&) {
      break;
    }
  }
  record["timeline"] = timeline;
  record["steps_done"] = std::max<long>(record.value("steps_done", 0L), static_cast<long>(timeline.size()));
}

}  // namespace

JobRecords read_job_records(const std::string& records_dir) {
  JobRecords records;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(records_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;  // temp files end in .tmp*
    auto doc = read_json(entry.path());
    if (!doc || !doc->is_object()) continue;
    const std::string kind = doc->value("kind", "");
    collect_problems(*doc, records.problems);
    if (kind == "rank") {
      attach_steps(entry.path(), *doc);
      records.ranks.push_back(std::move(*doc));
    }
    else if (kind == "loader") records.loaders.push_back(std::move(*doc));
    else if (kind == "python") records.pythons_without_torch.push_back(doc->value("python", "python"));
  }
  std::sort(records.ranks.begin(), records.ranks.end(),
            [](const nlohmann::json& a, const nlohmann::json& b) { return rank_key(a) < rank_key(b); });
  return records;
}

int JobRecords::steps_done() const {
  if (ranks.empty()) return 0;
  int least = ranks.front().value("steps_done", 0);
  for (const auto& r : ranks) least = std::min(least, r.value("steps_done", 0));
  return least;
}

int JobRecords::ranks_done() const {
  return static_cast<int>(std::count_if(ranks.begin(), ranks.end(), [](const nlohmann::json& r) { return r.value("status", "") == "done"; }));
}

int JobRecords::world_size() const {
  int size = static_cast<int>(ranks.size());
  for (const auto& r : ranks) {
    const auto& dist = r.value("distributed", nlohmann::json::object());
    if (dist.value("initialized", false)) size = std::max(size, dist.value("world_size", 1));
  }
  return size;
}

}  // namespace nodeaudit::learn
