// A seeded random mutator over the result and profile fixtures: flipped bytes, numbers out of
// range (1e999, 1e308, 2^64), stray brackets, cut and doubled ranges. Each mutant is read by the
// code paths score, report and compare use, in this process (many per second) and through the real
// binary (fewer); some mutants must get past parsing, so the judging code is exercised too: nothing may abort or raise a sanitizer report, and every refusal is a one-line
// `nodeaudit: ...` with exit 2. Bounded in time (NODEAUDIT_FUZZ_SECONDS, default 3 per test); a
// failure names the seed and keeps the input that caused it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/report/compare.hpp"
#include "harness/report/compare_render.hpp"
#include "harness/report/report_markdown.hpp"
#include "harness/report/report_model.hpp"
#include "harness/score/score.hpp"
#include "tests/support/cli_expect.hpp"

namespace nodeaudit {
namespace {

namespace fs = std::filesystem;

double budget_s() {
  const char* text = std::getenv("NODEAUDIT_FUZZ_SECONDS");
  const double s = text ? std::atof(text) : 3.0;
  return s > 0 ? s : 3.0;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> fixtures(const std::string& dir, const std::string& extension) {
  std::vector<std::string> texts;
  for (const auto& entry : fs::directory_iterator(fs::path(NODEAUDIT_FIXTURES) / dir))
    if (entry.path().extension() == extension) texts.push_back(read_text(entry.path()));
  std::sort(texts.begin(), texts.end());
  return texts;
}

const std::vector<std::string> json_tokens = {"1e999",
                                              "-1e999",
                                              "1e308",
                                              "-1e308",
                                              "18446744073709551616",
                                              "-9223372036854775809",
                                              "NaN",
                                              "null",
                                              "\"\"",
                                              "[",
                                              "]",
                                              "{",
                                              "}",
                                              ",",
                                              ":",
                                              "-0",
                                              "0",
                                              "true",
                                              "\"\\ud800\"",
                                              "[[[[[[[[[[",
                                              "1e-400",
                                              "\"x\""};
const std::vector<std::string> toml_tokens = {
    "1e308", "1e999", "inf",     "nan",         "-1",     "0",          "99999999999999999999", "\"",  "[",
    "]",     "=",     "\n[x]\n", "\n[model]\n", "1e-400", "\"1e308B\"", "\"99999999EiB\"",      "-inf"};

// One to four mutations of `text`, drawn from `rng`.
std::string mutate(std::string text, std::mt19937_64& rng, const std::vector<std::string>& tokens) {
  const auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  const int count = 1 + static_cast<int>(rng() % 4);
  for (int m = 0; m < count && !text.empty(); ++m) {
    const std::size_t at = pick(text.size());
    switch (rng() % 6) {
      case 0: text[at] = static_cast<char>(rng() % 256); break;
      case 1: text.insert(at, tokens[pick(tokens.size())]); break;
      case 2: text.erase(at, 1 + pick(64)); break;
      case 3: text.insert(at, text.substr(pick(text.size()), 1 + pick(256))); break;
      case 4: text.resize(at); break;
      default: {  // a number replaced by one out of range
        const std::size_t digit = text.find_first_of("0123456789", at);
        if (digit == std::string::npos) break;
        const std::size_t end = text.find_first_not_of("0123456789.eE+-", digit);
        text.replace(digit, end == std::string::npos ? std::string::npos : end - digit, tokens[pick(6)]);
      }
    }
  }
  return text;
}

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "nodeaudit-fuzz-test-XXXXXX").string();
    dir = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = dir / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
};

// What main does with an input: reads it, and on a refusal the only exceptions that reach main's
// one-line handler are UsageError and nlohmann's own. Anything else escaping is a defect.
void read_result_as_the_commands_do(const std::string& path, const score::Profile& profile, const nlohmann::json& baseline) {
  const nlohmann::json doc = load_result_file(path);
  score::render_assessment(score::assess(profile, doc, {}, nullptr));
  const report::Report built = report::build_report({{"node", path, doc, std::nullopt}}, &profile, false);
  report::render_report_markdown(built);
  // compare, both ways round: the mutant as the candidate and as the baseline.
  report::render_compare_markdown(report::compare_results(baseline, doc, {}));
  report::render_compare_junit(report::compare_results(doc, baseline, {}));
}

TEST(FuzzInputs, MutatedResultsAreReadOrRefusedInProcess) {
  const auto results = fixtures("results", ".json");
  ASSERT_FALSE(results.empty());
  const score::Profile profile = score::load_profile("llm-finetune-7b");
  const nlohmann::json baseline = load_result_file(std::string(NODEAUDIT_FIXTURES) + "/compare/baseline.json");
  Scratch scratch;
  std::mt19937_64 rng(20261206);
  const auto start = std::chrono::steady_clock::now();
  int tried = 0, refused = 0;
  for (; std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget_s(); ++tried) {
    const std::string text = mutate(results[static_cast<std::size_t>(tried) % results.size()], rng, json_tokens);
    const std::string path = scratch.write("result.json", text);
    try {
      read_result_as_the_commands_do(path, profile, baseline);
    } catch (const UsageError&) {
      ++refused;
    } catch (const nlohmann::json::exception&) {
      ++refused;
    } catch (const std::exception& e) {
      const std::string kept =
          (fs::temp_directory_path() / fmt::format("nodeaudit-fuzz-result-{}.json", tried)).string();
      std::ofstream(kept, std::ios::binary) << text;
      FAIL() << "mutant " << tried << " (kept in " << kept << ") escaped as " << e.what();
    }
  }
  std::cout << tried << " mutated results, " << refused << " refused\n";
  EXPECT_GT(tried, 10) << "too few mutants in the time given";
  // A mutator whose every mutant the parser refuses tests the parser only: some must be read and
  // judged (a number out of range inside a well-formed document is read).
  EXPECT_GT(tried - refused, 0) << "no mutant got past parsing";
}

TEST(FuzzInputs, MutatedProfilesAreReadOrRefusedInProcess) {
  const auto profiles = fixtures("profiles", ".toml");
  ASSERT_FALSE(profiles.empty());
  const nlohmann::json result = load_result_file(std::string(NODEAUDIT_FIXTURES) + "/results/balanced.json");
  Scratch scratch;
  std::mt19937_64 rng(6122026);
  const auto start = std::chrono::steady_clock::now();
  int tried = 0, refused = 0;
  for (; std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget_s(); ++tried) {
    const std::string text = mutate(profiles[static_cast<std::size_t>(tried) % profiles.size()], rng, toml_tokens);
    const std::string path = scratch.write("profile.toml", text);
    try {
      const score::Profile profile = score::load_profile(path);
      const std::string shown = score::render_assessment(score::assess(profile, result, {}, nullptr));
      EXPECT_EQ(shown.find("nan"), std::string::npos) << "mutant " << tried << ":\n" << text << "\n" << shown;
      EXPECT_EQ(shown.find("inf "), std::string::npos) << "mutant " << tried << ":\n" << text << "\n" << shown;
    } catch (const UsageError&) {
      ++refused;
    } catch (const std::exception& e) {
      FAIL() << "mutant " << tried << " escaped as " << e.what() << ":\n" << text;
    }
    if (HasFailure()) break;
  }
  std::cout << tried << " mutated profiles, " << refused << " refused\n";
  EXPECT_GT(tried, 10) << "too few mutants in the time given";
  EXPECT_GT(tried - refused, 0) << "no mutant got past parsing";
}

// The real binary: exit 0 or 1 (read, judged), or 2 with one line; never a signal, never a
// sanitizer's report.
void expect_read_or_refused(const proc::ProcessResult& r, const std::string& what) {
  ASSERT_GE(r.exit_code, 0) << what << " ended by a signal: " << r.err;
  EXPECT_LE(r.exit_code, 2) << what << ": " << r.err;
  EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << what << ": " << r.err;
  EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << what << ": " << r.err;
  if (r.exit_code == 2) {
    EXPECT_EQ(r.err.rfind("nodeaudit: ", 0), 0u) << what << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  }
}

TEST(FuzzInputs, MutatedInputsThroughTheCommandsExitTwoWithOneLine) {
  const auto results = fixtures("results", ".json");
  const auto profiles = fixtures("profiles", ".toml");
  const std::string baseline = std::string(NODEAUDIT_FIXTURES) + "/compare/baseline.json";
  const std::string balanced = std::string(NODEAUDIT_FIXTURES) + "/results/balanced.json";
  Scratch scratch;
  std::mt19937_64 rng(424242);
  const auto start = std::chrono::steady_clock::now();
  int tried = 0;
  for (; std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget_s() && !HasFailure();
       ++tried) {
    const std::string result =
        scratch.write("r.json", mutate(results[static_cast<std::size_t>(tried) % results.size()], rng, json_tokens));
    const std::string profile =
        scratch.write("p.toml", mutate(profiles[static_cast<std::size_t>(tried) % profiles.size()], rng, toml_tokens));
    const std::string seed = fmt::format("mutant {} of seed 424242", tried);
    switch (tried % 4) {
      case 0:
        expect_read_or_refused(proc::run_nodeaudit({"score", result, "--profile", "llm-finetune-7b"}), "score " + seed);
        break;
      case 1: expect_read_or_refused(proc::run_nodeaudit({"compare", baseline, result}), "compare " + seed); break;
      case 2: expect_read_or_refused(proc::run_nodeaudit({"report", result}), "report " + seed); break;
      default:
        expect_read_or_refused(proc::run_nodeaudit({"score", balanced, "--profile", profile}),
                               "score --profile " + seed);
    }
  }
  EXPECT_GT(tried, 4) << "too few mutants in the time given";
}

}  // namespace
}  // namespace nodeaudit
