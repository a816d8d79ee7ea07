// Audit levels: how long each probe may run.
#pragma once

#include <string>
#include <string_view>

namespace nodeaudit {

enum class Level { quick = 0, standard = 1, soak = 2 };

Level parse_level(std::string_view text);  // throws UsageError naming quick|standard|soak
std::string to_string(Level level);

// How many rounds `run` and `probe` measure each probe at this level when --rounds is not given.
// quick takes 2, the fewest that give a between-run spread, and splits its fixed time budget between
// them (level_shares_budget), so a buyer's first look costs only each probe's start-up once more
// (a process, its buffers, an untimed first step); standard and soak take 3
// (a median that one odd round cannot move), each round with the level's whole budget.
int default_rounds(Level level);
// True where the rounds split the level's time budget instead of each taking all of it.
bool level_shares_budget(Level level);

}  // namespace nodeaudit
