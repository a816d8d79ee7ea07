#include "harness/core/registry.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/probe_catalogue.hpp"

namespace nodeaudit {
namespace {

[[noreturn]] void bad_spec(const std::string& id, const std::string& why) {
  std::fprintf(stderr, "nodeaudit: internal error: probe '%s' is declared wrongly: %s\n", id.c_str(), why.c_str());
  std::abort();
}

void validate_spec(const ProbeSpec& spec) {
  static const std::regex id_shape("[a-z][a-z0-9-]*\\.[a-z][a-z0-9-]*");
  if (!std::regex_match(spec.id, id_shape)) bad_spec(spec.id, "id must look like domain.name");
  if (spec.description.empty()) bad_spec(spec.id, "no description");
  if (!spec.body && !spec.not_built_reason) bad_spec(spec.id, "neither a body nor a not-built reason");
  const auto& reserved = reserved_option_names();
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    const ParamSpec& p = spec.params[i];
    if (std::find(reserved.begin(), reserved.end(), p.name) != reserved.end())
      bad_spec(spec.id, "parameter --" + p.name + " clashes with a run-wide option");
    for (std::size_t j = 0; j < i; ++j)
      if (spec.params[j].name == p.name) bad_spec(spec.id, "parameter --" + p.name + " declared twice");
    for (Level level : {Level::quick, Level::standard, Level::soak}) {
      try {
        parse_param(p, p.default_for(level));
      } catch (const UsageError& e) {
        bad_spec(spec.id, fmt::format("default of --{} at level {} does not parse: {}", p.name, to_string(level), e.what()));
      }
    }
  }
}

}  // namespace

ProbeSpec with_declared_figures(ProbeSpec spec) {
  if (!spec.meaning.empty() || !spec.figures.empty()) return spec;
  if (const ProbeFigures* declared = declared_probe(spec.id)) {
    spec.meaning = declared->meaning;
    spec.role = declared->role;
    spec.figures = declared->figures;
  }
  return spec;
}

void ProbeRegistry::add(ProbeSpec spec) {
  validate_spec(spec);
  if (find(spec.id) != nullptr) bad_spec(spec.id, "registered twice");
  specs_.push_back(std::move(spec));
}

const ProbeSpec* ProbeRegistry::find(const std::string& id) const {
  for (const auto& s : specs_)
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<const ProbeSpec*> ProbeRegistry::all() const {
  std::vector<const ProbeSpec*> out;
  for (const auto& s : specs_) out.push_back(&s);
  std::sort(out.begin(), out.end(), [](const ProbeSpec* a, const ProbeSpec* b) { return a->id < b->id; });
  return out;
}

std::vector<std::string> ProbeRegistry::match(const std::string& patterns) const {
  std::vector<std::string> matched;
  std::size_t start = 0;
  while (start <= patterns.size()) {
    const std::size_t comma = patterns.find(',', start);
    const std::string pattern = patterns.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!pattern.empty()) {
      bool any = false;
      for (const ProbeSpec* s : all()) {
        if (fnmatch(pattern.c_str(), s->id.c_str(), 0) == 0) {
          any = true;
          if (std::find(matched.begin(), matched.end(), s->id) == matched.end()) matched.push_back(s->id);
        }
      }
      if (!any) {
        std::vector<std::string> ids;
        for (const ProbeSpec* s : all()) ids.push_back(s->id);
        throw UsageError("probe '" + pattern + "'", fmt::format("matches no probe; known: {}", fmt::join(ids, ", ")));
      }
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return matched;
}

ProbeRegistry& probe_registry() {
  static ProbeRegistry registry;
  return registry;
}

namespace {
std::vector<EnvContributor>& contributors() {
  static std::vector<EnvContributor> list;
  return list;
}
}  // namespace

EnvContributorRegistrar::EnvContributorRegistrar(EnvContributor fn) { contributors().push_back(fn); }
const std::vector<EnvContributor>& env_contributors() { return contributors(); }

const std::vector<std::string>& reserved_option_names() {
  static const std::vector<std::string> names = {"level", "gpus", "data-dir", "format", "out", "repetitions",
                                                 "profile", "keep-data", "help", "child-out", "settings",
                                                 "telemetry-out"};
  return names;
}

}  // namespace nodeaudit
