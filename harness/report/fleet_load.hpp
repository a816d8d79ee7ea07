// Reading a fleet's results: each argument a result file or a directory (its *.json files, not
// recursive, in name order). A file that is not a readable nodeaudit.result/1 document is skipped
// with its reason and counted, never fatal while one result is left; two results of one node are
// refused naming both files. Documents are read one at a time and dropped once summarized.
#pragma once

#include <string>
#include <vector>

#include "fleet_model.hpp"

namespace nodeaudit::report {

// Throws UsageError when no result is left, or a node name is held by two files.
FleetInput load_fleet(const std::vector<std::string>& arguments);

}  // namespace nodeaudit::report
