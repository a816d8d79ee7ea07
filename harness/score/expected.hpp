// Expected values: each measured GPU figure graded against what a healthy GPU of the same model
// reaches, the GPU table's published measurement (never a datasheet peak: every real GPU is below
// its peak, so a peak would grade nothing) or a value the profile or --expect FILE gives. Below by
// more than `warn_below_pct` is WARN, by more than `fail_below_pct` FAIL; both limits per figure
// come from the built-in table unless overridden (expect_settings.hpp), and say where they came
// from. A GPU model or figure with no reference is listed as not graded, with the model named.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/score/expect_settings.hpp"
#include "harness/score/verdict.hpp"

namespace nodeaudit::score {

struct Grade {
  std::string figure;  // "gpu.gemm tflops [dtype=bf16]"
  std::string gpu;     // "0".. for per-GPU figures; "node" for the all-reduce
  std::string model;   // the GPU table's model
  double measured = 0, expected = 0;
  std::string unit;
  std::string source;      // of the expected value
  double below_pct = 0;    // (expected - measured) / expected x 100; negative when above
  double warn_below_pct = 0, fail_below_pct = 0;
  Verdict verdict = Verdict::pass;
  std::string warn_source, fail_source;  // where each limit came from (expect_settings.hpp)
};

struct Grading {
  std::vector<Grade> grades;
  std::vector<std::string> not_graded;  // "GPU 0 (NVIDIA L4): no reference for this model"
  std::map<std::string, ResolvedLimits> limits;  // of each figure graded, by [expect.<figure>] name
};

// Grades the measured GPU figures of a result (never an --target-gpus overlay); `settings` (a
// profile's [expect] under --expect FILE) override the table's limits and values.
Grading grade_expected(const nlohmann::json& result, const ExpectSettings& settings = {});
nlohmann::json to_json(const Grading& grading);
// The `expected_values` rule: the worst grade, naming the furthest-below figure; std::nullopt when
// the node has no GPU of a model the table holds (nothing to grade is not a rule's failure).
std::optional<Rule> expected_values_rule(const Grading& grading);

}  // namespace nodeaudit::score
