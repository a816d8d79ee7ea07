// Reading a profile's or an --expect file's [expect] table (expect_settings.hpp).
#pragma once

#include <string>

#include <toml++/toml.h>

#include "harness/score/expect_settings.hpp"

namespace nodeaudit::score {

// `origin` names the table in sources ("profile NAME", "--expect FILE"); errors are UsageErrors at
// `path:line:column` naming the bad key or value and what is accepted.
ExpectSettings read_expect_table(const toml::table& expect, const std::string& path, const std::string& origin);

}  // namespace nodeaudit::score
