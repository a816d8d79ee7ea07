#include "harness/core/probe_catalogue.hpp"

#include <algorithm>

namespace nodeaudit {

// Written by cmake/ProbeLibrary.cmake: calls every probe folder's declaration function.
std::vector<ProbeFigures> all_declared_probe_figures();

const std::vector<ProbeFigures>& probe_catalogue() {
  static const std::vector<ProbeFigures> catalogue = [] {
    std::vector<ProbeFigures> all = all_declared_probe_figures();
    std::sort(all.begin(), all.end(), [](const ProbeFigures& a, const ProbeFigures& b) { return a.probe_id < b.probe_id; });
    return all;
  }();
  return catalogue;
}

const ProbeFigures* declared_probe(const std::string& probe_id) {
  const auto& catalogue = probe_catalogue();
  const auto it = std::lower_bound(catalogue.begin(), catalogue.end(), probe_id,
                                   [](const ProbeFigures& p, const std::string& id) { return p.probe_id < id; });
  return it != catalogue.end() && it->probe_id == probe_id ? &*it : nullptr;
}

const FigureSpec* declared_figure(const std::string& probe_id, const std::string& metric_name) {
  const ProbeFigures* probe = declared_probe(probe_id);
  if (!probe) return nullptr;
  const auto it = std::find_if(probe->figures.begin(), probe->figures.end(),
                               [&](const FigureSpec& f) { return f.name == metric_name; });
  return it != probe->figures.end() ? &*it : nullptr;
}

std::string probe_meaning(const std::string& probe_id) {
  const ProbeFigures* probe = declared_probe(probe_id);
  return probe ? probe->meaning : "Figures as " + probe_id + " recorded them (see results/SCHEMA.md).";
}

bool is_configuration_audit(const std::string& probe_id) {
  const ProbeFigures* probe = declared_probe(probe_id);
  return probe && probe->role == ProbeRole::configuration_audit;
}

}  // namespace nodeaudit
