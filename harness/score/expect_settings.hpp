// Overrides of the expected-value grading (expected.hpp): per graded figure the warn and fail
// limits (percent below the expected value) and, optionally, expected values per GPU model. They
// come from a profile's [expect] section and from `--expect FILE` (a TOML file holding the same
// [expect] section); `--expect` wins over the profile, the profile over the built-in table, field
// by field, and every limit and value keeps the name of where it came from.
//
//   [expect.gemm]                 # gpu.gemm tflops, per dtype
//   warn_below_pct = 5
//   fail_below_pct = 15
//   source = "our acceptance runs, 2026-11"   # optional: cited beside the values below
//   h100 = { bf16 = 794 }         # TFLOP/s
//   [expect.memory_copy]          # gpu.memory-bandwidth bandwidth [kernel=copy], GB/s
//   [expect.h2d_pinned]           # gpu.pcie h2d_bandwidth [memory=pinned, mode=single], GB/s
//   [expect.allreduce]            # comm.allreduce busbw at the largest size measured, GB/s
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>

#include "harness/score/gpu_table.hpp"

namespace nodeaudit::score {

// The figure names of [expect.<figure>], in the order they are graded.
inline constexpr std::array<const char*, 4> expect_figures{"gemm", "memory_copy", "h2d_pinned", "allreduce"};

inline constexpr const char* builtin_limits_source = "built-in table";

struct SourcedLimit {
  double pct = 0;      // percent below the expected value
  std::string source;  // "built-in table", "profile NAME [expect.gemm]", "--expect FILE [expect.gemm]"
};

struct FigureExpectation {
  std::optional<SourcedLimit> warn_below_pct, fail_below_pct;  // unset: the next source down decides
  // Expected values: GPU model (the table's name) -> key -> value. The key is the dtype for gemm and
  // "" for the other figures.
  std::map<std::string, std::map<std::string, SourcedValue>> values;
};

struct ExpectSettings {
  std::map<std::string, FigureExpectation> figures;  // by expect_figures name
};

struct ResolvedLimits {
  SourcedLimit warn, fail;
};

// The limits a figure is graded with: the settings' own where given, else the built-in table's.
ResolvedLimits resolve_limits(const ExpectSettings& settings, const std::string& figure);
// A value set for this figure, GPU model and key, if any.
const SourcedValue* expected_override(const ExpectSettings& settings, const std::string& figure,
                                      const std::string& model, const std::string& key = "");
bool has_overrides_for_model(const ExpectSettings& settings, const std::string& model);

// `higher` over `lower`, field by field.
ExpectSettings layered(const ExpectSettings& lower, const ExpectSettings& higher);
// Every figure's resolved warn limit at or below its fail limit; else a UsageError naming both and
// where each came from.
void check_limits(const ExpectSettings& settings, const std::string& where);
// `--expect FILE`: a TOML file whose only top-level key is [expect].
ExpectSettings load_expect_file(const std::string& path);
// --expect FILE over the profile's own [expect], checked (check_limits): `run`, `score` and `report`
// call it before anything runs.
struct Profile;
void apply_expect_file(Profile& profile, const std::string& path);

}  // namespace nodeaudit::score
