#include "harness/core/level.hpp"

#include "harness/core/errors.hpp"

namespace nodeaudit {

Level parse_level(std::string_view text) {
  if (text == "quick") return Level::quick;
  if (text == "standard") return Level::standard;
  if (text == "soak") return Level::soak;
  throw UsageError("--level " + std::string(text), "expected quick, standard or soak");
}

std::string to_string(Level level) {
  switch (level) {
    case Level::quick: return "quick";
    case Level::standard: return "standard";
    case Level::soak: return "soak";
  }
  return "quick";
}

int default_rounds(Level level) { return level == Level::quick ? 2 : 3; }

bool level_shares_budget(Level level) { return level == Level::quick; }

}  // namespace nodeaudit
