// The probe catalogue: every probe's declared figures (figures.hpp), gathered from the `figures.cpp`
// each probe folder compiles into this light library (cmake/ProbeLibrary.cmake). The registry gives
// each ProbeSpec its declarations from here, and the scorer and reporters look figures up here, so a
// new probe's figures are written once, in its own folder.
#pragma once

#include <string>
#include <vector>

#include "harness/core/figures.hpp"

namespace nodeaudit {

// Every declared probe, sorted by id.
const std::vector<ProbeFigures>& probe_catalogue();
// The probe's declarations; nullptr for a probe this build does not declare (a newer version's).
const ProbeFigures* declared_probe(const std::string& probe_id);
// The figure's declaration; nullptr when the probe or the figure is not declared.
const FigureSpec* declared_figure(const std::string& probe_id, const std::string& metric_name);
// The probe's one line; for an undeclared probe, a line that says only where the figures came from.
std::string probe_meaning(const std::string& probe_id);
bool is_configuration_audit(const std::string& probe_id);

}  // namespace nodeaudit
