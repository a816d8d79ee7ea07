// One line per probe saying what its figures mean, printed above each folded group of the report's
// full figures: what is measured, per what, and which way is good.
#pragma once

#include <string>

namespace nodeaudit::report {

// The probe's line; for a probe not in the table, a line that says only where the figures came from.
std::string probe_meaning(const std::string& probe_id);

}  // namespace nodeaudit::report
