// The rooms of the source tree and which others each may include, as the architecture's folder
// table says: the harness's measurement core depends on nothing else of ours, the node fingerprint
// only on the core, the applications downward, and a probe's room never on an application (session,
// CLI, reports, watch, learn). A new room must be added here with its arrows before it builds green.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The top-level folders that hold the code's rooms.
constexpr const char* code_tops[] = {"harness", "kernels", "io", "comm", "pipeline", "hostconfig"};

// Room -> the rooms its includes may reach (its own is always allowed). pipeline/ holds three rooms,
// one way: the step runs the framework loader's script (step -> dataloader), and both read the
// sample sets and the workload of pipeline/samples.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> table{
      {"harness/core", {}},
      {"harness/node", {"harness/core"}},
      {"harness/score", {"harness/core", "harness/node"}},
      {"harness/report", {"harness/core", "harness/node", "harness/score"}},
      {"harness/watch", {"harness/core", "harness/node", "harness/session"}},
      {"harness/learn", {"harness/core", "harness/node", "harness/score", "harness/report", "harness/watch", "harness/session"}},
      {"harness/session", {"harness/core", "harness/node", "harness/score", "harness/report"}},
      {"harness/cli",
       {"harness/core", "harness/node", "harness/score", "harness/report", "harness/watch", "harness/learn",
        "harness/session"}},
      {"kernels/host", {"harness/core", "harness/node"}},
      {"kernels/gpu", {"harness/core", "harness/node", "harness/score"}},
      {"hostconfig", {"harness/core", "harness/node", "kernels/host"}},
      {"io", {"harness/core", "harness/node"}},
      {"comm", {"harness/core", "harness/node", "kernels/gpu"}},
      {"pipeline/samples", {"harness/core", "harness/node", "harness/score", "io", "kernels/host"}},
      {"pipeline/dataloader", {"harness/core", "harness/node", "harness/score", "io", "kernels/host", "pipeline/samples"}},
      {"pipeline/step",
       {"harness/core", "harness/node", "harness/score", "io", "kernels/host", "kernels/gpu", "comm", "pipeline/samples",
        "pipeline/dataloader"}},
  };
  return table;
}

// The room a repository path belongs to: harness/, kernels/ and pipeline/ by their second level, the
// rest by their first. Empty for a path outside the code's rooms (tests, bench, the standard library).
std::string room_of(const std::string& path) {
  const auto slash = path.find('/');
  if (slash == std::string::npos) return "";
  const std::string top = path.substr(0, slash);
  if (top == "harness" || top == "kernels" || top == "pipeline") {
    const auto second = path.find('/', slash + 1);
    return second == std::string::npos ? "" : path.substr(0, second);
  }
  return std::find(std::begin(code_tops), std::end(code_tops), top) != std::end(code_tops) ? top : "";
}

struct Include {
  std::string file;  // repository path of the including file
  int line = 0;
  std::string target;  // the quoted include
};

std::vector<Include> project_includes() {
  static const std::regex quoted(R"(^\s*#\s*include\s+"([^"]+)\")");
  static const std::regex source(R"(\.(cpp|hpp|cu|cuh|h)$)");
  std::vector<Include> found;
  const fs::path root(NODEAUDIT_SOURCE_DIR);
  for (const char* top : code_tops) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file() || !std::regex_search(entry.path().filename().string(), source)) continue;
      std::ifstream in(entry.path());
      std::string text;
      for (int n = 1; std::getline(in, text); ++n) {
        std::smatch m;
        if (std::regex_search(text, m, quoted))
          found.push_back({fs::relative(entry.path(), root).string(), n, m[1].str()});
      }
    }
  }
  return found;
}

TEST(Rooms, EveryIncludeReachesOnlyARoomTheTableAllows) {
  const std::vector<Include> includes = project_includes();
  ASSERT_GT(includes.size(), 500u) << "the source tree was not found under " << NODEAUDIT_SOURCE_DIR;
  for (const Include& inc : includes) {
    const std::string from = room_of(inc.file), to = room_of(inc.target);
    if (to.empty() || to == from) continue;
    const auto rule = allowed().find(from);
    ASSERT_NE(rule, allowed().end()) << inc.file << " is in no room of the table";
    EXPECT_TRUE(rule->second.count(to)) << inc.file << ":" << inc.line << " includes " << inc.target << ": " << from
                                        << " may not depend on " << to;
  }
}

// A probe measures; the prediction beside its figures is added by the session after the
// measurement (harness/score/step_prediction.hpp). A probe room may read the scorer's data (a
// profile, the GPU table, a result's figures) but not include its entry points.
TEST(Rooms, NoProbeRoomCallsTheScorer) {
  const std::set<std::string> scorer_entry_points{"harness/score/score.hpp", "harness/score/model.hpp",
                                                  "harness/score/predict.hpp", "harness/score/step_prediction.hpp",
                                                  "harness/score/stages.hpp"};
  const std::vector<Include> includes = project_includes();
  for (const Include& inc : includes) {
    if (room_of(inc.file).rfind("harness/", 0) == 0) continue;
    EXPECT_FALSE(scorer_entry_points.count(inc.target))
        << inc.file << ":" << inc.line << " includes " << inc.target << ": a probe does not call the scorer";
  }
}

TEST(Rooms, EveryCodeFolderIsARoomOfTheTable) {
  const fs::path root(NODEAUDIT_SOURCE_DIR);
  for (const char* top : {"harness", "kernels", "pipeline"}) {
    for (const auto& entry : fs::directory_iterator(root / top)) {
      if (!entry.is_directory()) continue;
      const std::string room = std::string(top) + "/" + entry.path().filename().string();
      EXPECT_TRUE(allowed().count(room)) << room << " is a folder of code with no line in the table";
    }
  }
}

TEST(Rooms, NoCudaHeaderInTheHarness) {
  static const std::regex cuda(R"(^\s*#\s*include\s*[<"](cuda|cublas|nccl|nvml)[^>"]*[>"])");
  const fs::path root(NODEAUDIT_SOURCE_DIR);
  for (const auto& entry : fs::recursive_directory_iterator(root / "harness")) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::string text;
    for (int n = 1; std::getline(in, text); ++n)
      EXPECT_FALSE(std::regex_search(text, cuda)) << fs::relative(entry.path(), root).string() << ":" << n << ": " << text;
  }
}

}  // namespace
