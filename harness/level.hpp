// Audit levels: how long each probe may run.
#pragma once

#include <string>
#include <string_view>

namespace nodeaudit {

enum class Level { quick = 0, standard = 1, soak = 2 };

Level parse_level(std::string_view text);  // throws UsageError naming quick|standard|soak
std::string to_string(Level level);

// How many rounds `run` and `probe` measure each probe at this level when --rounds is not given.
// quick stays at 1 (a buyer's first look must take minutes); standard and soak take 3, the fewest
// that give a between-run spread (and a median that one odd round cannot move).
int default_rounds(Level level);

}  // namespace nodeaudit
