// Audit levels: how long each probe may run.
#pragma once

#include <string>
#include <string_view>

namespace nodeaudit {

enum class Level { quick = 0, standard = 1, soak = 2 };

Level parse_level(std::string_view text);  // throws UsageError naming quick|standard|soak
std::string to_string(Level level);

}  // namespace nodeaudit
