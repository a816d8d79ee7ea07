#include "harness/core/deadline.hpp"

#include <algorithm>

namespace nodeaudit {
namespace {

double level_deadline_s(const ProbeSpec& spec, const ParamValues& params, Level level) {
  if (spec.deadline_s) return spec.deadline_s(params, level);
  switch (level) {
    case Level::quick: return 120;
    case Level::standard: return 900;
    case Level::soak: return 4 * 3600;
  }
  return 120;
}

}  // namespace

double probe_deadline_s(const ProbeSpec& spec, const ParamValues& params, const RunSettings& settings) {
  return deadline_for_repetitions(level_deadline_s(spec, params, settings.level), settings);
}

double deadline_for_repetitions(double at_level, const RunSettings& settings) {
  // Deadlines are sized for the level's repetitions; asking for more grows them in proportion.
  const int level_reps = std::max(1, default_policy(settings.level).min_repetitions);
  if (!settings.repetitions || *settings.repetitions <= level_reps) return at_level;
  return at_level * *settings.repetitions / level_reps;
}

}  // namespace nodeaudit
