// Shared by learn's CLI tests: a fixture with a scratch folder, the real nodeaudit binary run on a
// real training script in the torch venv (tests/harness/learn/*.py), and readers of what it wrote.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/pipeline/dataloader/torch_test_util.hpp"
#include "tests/support/cli_process.hpp"

namespace nodeaudit::learn::test {

using nodeaudit::io::test::torch_python;

inline std::string script(const std::string& name) { return std::string(NODEAUDIT_TEST_DATA) + "/" + name; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The `key = value` lines of a learned profile whose comment does not say how the value was obtained:
// no "  # " after the value, or fewer than two words of letters after it ("#", "# -" and "# 1" say
// nothing). Headers, comments and the name and description lines are not fields.
inline std::vector<std::string> lines_without_explanation(const std::string& profile) {
  std::vector<std::string> out;
  std::istringstream lines(profile);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '[' || line.rfind("name =", 0) == 0 || line.rfind("description =", 0) == 0) continue;
    const auto mark = line.find("  # ");
    int words = 0;
    if (mark != std::string::npos) {
      std::istringstream comment(line.substr(mark + 4));
      for (std::string word; comment >> word;)
        words += std::any_of(word.begin(), word.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }) ? 1 : 0;
    }
    if (words < 2) out.push_back(line);
  }
  return out;
}

class LearnCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = proc::make_temp_dir("learn"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string result_path() const { return dir_ + "/result.json"; }
  std::string profile_path() const { return dir_ + "/profile.toml"; }
  std::string profile_text() const { return read_text(profile_path()); }

  // nodeaudit learn FLAGS --out DIR/result.json --out-profile DIR/profile.toml -- env OMP_NUM_THREADS=1
  // PYTHON ARGS: one thread per job keeps the 2-core test machine's jobs quick and steady.
  proc::ProcessResult learn(const std::vector<std::string>& flags, const std::vector<std::string>& python_args,
                            const std::vector<std::string>& launcher = {}) {
    std::vector<std::string> argv{NODEAUDIT_BINARY, "learn", "--out", result_path(), "--out-profile", profile_path()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "env", "OMP_NUM_THREADS=1"});
    if (launcher.empty()) argv.push_back(torch_python());
    argv.insert(argv.end(), launcher.begin(), launcher.end());
    argv.insert(argv.end(), python_args.begin(), python_args.end());
    return proc::run_process(argv);
  }

  int run_python(const std::vector<std::string>& args) {
    std::vector<std::string> argv{torch_python()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = proc::run_process(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code;
  }

  int run_cli_exit(const std::vector<std::string>& args) {
    std::vector<std::string> argv{NODEAUDIT_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = proc::run_process(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return r.exit_code;
  }

  // Random uint16 tokens below 256, as the GPT script reads them.
  std::string write_token_file(std::size_t tokens) {
    const std::string path = dir_ + "/tokens.bin";
    std::mt19937 rng(1);
    std::vector<std::uint16_t> data(tokens);
    for (auto& t : data) t = static_cast<std::uint16_t>(rng() % 256);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 2));
    return path;
  }

  nlohmann::json learn_entry() const {
    const auto doc = nlohmann::json::parse(read_text(result_path()));
    EXPECT_EQ(doc["probes"].size(), 1u);
    return doc["probes"][0];
  }

  static nlohmann::json metric(const nlohmann::json& entry, const std::string& name) {
    for (const auto& m : entry["metrics"])
      if (m["name"] == name) return m;
    ADD_FAILURE() << "no metric " << name << " in " << entry["metrics"].dump();
    return nlohmann::json::object();
  }

  // Every `key = value` line of the learned profile says how the value was obtained.
  void expect_every_field_commented() const {
    const std::string text = profile_text();
    EXPECT_NE(text.find(" = "), std::string::npos) << "no field at all: " << text;
    for (const auto& line : lines_without_explanation(text)) ADD_FAILURE() << "no explanation: " << line;
  }

  // Processes whose command line names this test's folder: the job's, once learn has ended, must be none.
  std::vector<int> processes_in_folder() const {
    std::vector<int> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
      const std::string cmdline = read_text(entry.path().string() + "/cmdline");
      if (cmdline.find(dir_) != std::string::npos) found.push_back(std::stoi(name));
    }
    return found;
  }

  std::string dir_;
};

}  // namespace nodeaudit::learn::test
