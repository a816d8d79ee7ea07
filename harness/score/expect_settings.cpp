#include "harness/score/expect_settings.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "harness/core/input_file.hpp"
#include "harness/score/expect_toml.hpp"
#include "harness/score/profile.hpp"
#include "harness/score/toml_section.hpp"

namespace nodeaudit::score {

namespace {

using detail::Bound;
using detail::Section;

// How far below its reference a figure may fall by default. 10% is gpu-fryer's rule for a GPU
// against the best of its node, and about what software versions move a MAMF or nccl-tests figure;
// FAIL past 20% for on-chip figures (GEMM, device memory), past 25% for figures that also depend on
// the platform (PCIe root ports, NVSwitch firmware, NCCL version).
ResolvedLimits builtin_limits(const std::string& figure) {
  const bool on_chip = figure == "gemm" || figure == "memory_copy";
  return {{10, builtin_limits_source}, {on_chip ? 20.0 : 25.0, builtin_limits_source}};
}

const std::vector<std::string> gemm_dtypes{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

std::string unit_of(const std::string& figure) {
  return figure == "gemm" ? "TFLOP/s" : "GB/s";
}

std::optional<SourcedLimit> read_limit(Section& s, const std::string& key, const std::string& source) {
  const toml::node* node = s.raw(key);
  const std::optional<double> pct = s.number(key, Bound::non_negative);
  if (!pct) return std::nullopt;
  if (*pct >= 100)
    s.fail(*node, fmt::format("'{}' in {} is {}; must be a percentage below the expected value, from 0 to under 100",
                              key, s.where(), *pct));
  return SourcedLimit{*pct, source};
}

SourcedValue user_value(const Section& s, const toml::node& node, const std::string& key, const std::string& source,
                        const std::string& unit) {
  if (!node.is_number()) {
    std::ostringstream got;
    if (node.is_string())
      got << '"' << node.as_string()->get() << '"';
    else
      got << "a " << node.type();
    s.fail(node, fmt::format("'{}' in {} must be a positive number ({}), got {}", key, s.where(), unit, got.str()));
  }
  const double value = *node.value<double>();
  if (!std::isfinite(value) || value <= 0)
    s.fail(node, fmt::format("'{}' in {} is {}; must be a positive number ({})", key, s.where(), value, unit));
  return {value, source, true, false};
}

// A value's source: "profile NAME [expect.gemm].h100", and the section's `source` text after a colon.
void read_model_values(Section& figure_section, const std::string& figure, const std::string& model_key,
                       const toml::node& node, const std::string& section_source, const std::string& cited,
                       FigureExpectation& out) {
  const GpuModel* model = find_gpu_model(model_key);
  const std::string source = section_source + "." + model_key + (cited.empty() ? "" : ": " + cited);
  if (figure != "gemm") {
    out.values[model->name][""] = user_value(figure_section, node, model_key, source, unit_of(figure));
    return;
  }
  if (!node.is_table())
    figure_section.fail(node, fmt::format("'{}' in {} must be a table of dtypes, e.g. {} = {{ bf16 = 780 }} (TFLOP/s)",
                                          model_key, figure_section.where(), model_key));
  Section dtypes(*node.as_table(), "expect." + figure + "." + model_key, figure_section.path());
  for (const std::string& dtype : gemm_dtypes)
    if (const toml::node* value = dtypes.raw(dtype))
      out.values[model->name][dtype] = user_value(dtypes, *value, dtype, source, "TFLOP/s");
  dtypes.finish();
}

FigureExpectation read_figure(Section& s, const std::string& figure, const std::string& origin) {
  const std::string source = fmt::format("{} [expect.{}]", origin, figure);
  FigureExpectation out;
  out.warn_below_pct = read_limit(s, "warn_below_pct", source);
  out.fail_below_pct = read_limit(s, "fail_below_pct", source);
  if (out.warn_below_pct && out.fail_below_pct && out.warn_below_pct->pct > out.fail_below_pct->pct)
    s.fail(*s.raw("warn_below_pct"), fmt::format("'warn_below_pct' {} in {} is above 'fail_below_pct' {}; the warn "
                                                 "limit must be at or below the fail limit",
                                                 out.warn_below_pct->pct, s.where(), out.fail_below_pct->pct));
  const std::string cited = s.text("source").value_or("");
  for (auto&& [key, node] : s.table()) {
    const std::string name(key.str());
    if (name == "warn_below_pct" || name == "fail_below_pct" || name == "source") continue;
    if (!find_gpu_model(name))
      detail::fail_at(s.path(), key.source().begin,
                      fmt::format("unknown key '{}' in {}; accepted: warn_below_pct, fail_below_pct, source, or a GPU "
                                  "model of the table ({})",
                                  name, s.where(), known_gpu_models()));
    read_model_values(s, figure, name, node, source, cited, out);
  }
  return out;
}

}  // namespace

ResolvedLimits resolve_limits(const ExpectSettings& settings, const std::string& figure) {
  ResolvedLimits limits = builtin_limits(figure);
  if (const auto it = settings.figures.find(figure); it != settings.figures.end()) {
    if (it->second.warn_below_pct) limits.warn = *it->second.warn_below_pct;
    if (it->second.fail_below_pct) limits.fail = *it->second.fail_below_pct;
  }
  return limits;
}

const SourcedValue* expected_override(const ExpectSettings& settings, const std::string& figure,
                                      const std::string& model, const std::string& key) {
  const auto it = settings.figures.find(figure);
  if (it == settings.figures.end()) return nullptr;
  const auto by_model = it->second.values.find(model);
  if (by_model == it->second.values.end()) return nullptr;
  const auto value = by_model->second.find(key);
  return value == by_model->second.end() ? nullptr : &value->second;
}

bool has_overrides_for_model(const ExpectSettings& settings, const std::string& model) {
  for (const auto& [figure, expectation] : settings.figures)
    if (expectation.values.count(model)) return true;
  return false;
}

ExpectSettings read_expect_table(const toml::table& expect, const std::string& path, const std::string& origin) {
  Section top(expect, "expect", path);
  ExpectSettings settings;
  for (const char* figure : expect_figures) {
    const toml::node* node = top.raw(figure);
    if (!node) continue;
    if (!node->is_table())
      top.fail(*node, fmt::format("'{}' in [expect] must be a table ([expect.{}])", figure, figure));
    Section section(*node->as_table(), std::string("expect.") + figure, path);
    settings.figures[figure] = read_figure(section, figure, origin);
  }
  top.finish();  // an unknown figure: "unknown key 'x' in [expect]; accepted: gemm, memory_copy, ..."
  return settings;
}

ExpectSettings layered(const ExpectSettings& lower, const ExpectSettings& higher) {
  ExpectSettings out = lower;
  for (const auto& [figure, expectation] : higher.figures) {
    FigureExpectation& merged = out.figures[figure];
    if (expectation.warn_below_pct) merged.warn_below_pct = expectation.warn_below_pct;
    if (expectation.fail_below_pct) merged.fail_below_pct = expectation.fail_below_pct;
    for (const auto& [model, values] : expectation.values)
      for (const auto& [key, value] : values) merged.values[model][key] = value;
  }
  return out;
}

void check_limits(const ExpectSettings& settings, const std::string& where) {
  for (const char* figure : expect_figures) {
    const ResolvedLimits limits = resolve_limits(settings, figure);
    if (limits.warn.pct > limits.fail.pct)
      throw UsageError(where,
                       fmt::format("[expect.{}] warn_below_pct {} ({}) is above fail_below_pct {} ({}); the "
                                   "warn limit must be at or below the fail limit",
                                   figure, limits.warn.pct, limits.warn.source, limits.fail.pct, limits.fail.source));
  }
}

ExpectSettings load_expect_file(const std::string& path) {
  const toml::table root = detail::parse_toml(read_input_file(path, "--expect " + path, max_profile_bytes), path);
  Section top(root, "", path);
  const toml::node* expect = top.raw("expect");
  top.finish();  // anything but [expect]: "unknown key 'x' in the top level; accepted: expect"
  if (!expect)
    top.fail_here(
        "no [expect] section; an --expect file holds [expect.<figure>] tables, figures: gemm, "
        "memory_copy, h2d_pinned, allreduce");
  if (!expect->is_table()) top.fail(*expect, "'expect' must be a table ([expect.<figure>])");
  return read_expect_table(*expect->as_table(), path, "--expect " + path);
}

void apply_expect_file(Profile& profile, const std::string& path) {
  profile.expect = layered(profile.expect, load_expect_file(path));
  check_limits(profile.expect, "--expect " + path);
}

}  // namespace nodeaudit::score
